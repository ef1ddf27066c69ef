//===- PartitionTest.cpp - What the partitions save and recompute ---------===//
#include "gc/Partition/CostModel.h"
#include "gc/Partition/Partition.h"

#include "gc/IR/Printer.h"
#include "gc/Parser/Parser.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace gc {
namespace {

std::unique_ptr<Module> parse(const std::string &text) {
  Expected<std::unique_ptr<Module>> m = parseModule(text, "test.gcir");
  EXPECT_TRUE(m) << m.error().message();
  return m ? m.take() : nullptr;
}

std::vector<std::string> names(const std::vector<const Value *> &values) {
  std::vector<std::string> out;
  for (const Value *v : values)
    out.push_back(v->name());
  return out;
}

std::vector<std::string> ops(const std::vector<const Node *> &nodes) {
  std::vector<std::string> out;
  for (const Node *n : nodes)
    out.push_back(n->results()[0]->name());
  return out;
}

bool contains(const std::vector<std::string> &v, const std::string &s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

PartitionPlan plan(const Module &m, PartitionStrategy s) {
  Expected<PartitionPlan> p = planPartition(m, *m.graph("joint"), s);
  EXPECT_TRUE(p) << p.error().message();
  return p ? p.take() : PartitionPlan{};
}

// out = exp(exp(exp(x @ w))) * 2: the backward of each exp needs its
// result, so save-all keeps the three results; min-cut keeps the matrix
// product and recomputes the cheap pointwise chain from it.
const char *kPointwiseChain = R"(module level(joint) {
  graph @joint(%x: f32[4, 8] user_input("x"), %w: f32[8, 8] user_input("w"),
               %tangents_0: f32[4, 8] user_input("tangents_0")) {
    %mm = aten.mm.default(self=%x, mat2=%w) : f32[4, 8]
    %e1 = aten.exp.default(self=%mm) : f32[4, 8]
    %e2 = aten.exp.default(self=%e1) : f32[4, 8]
    %e3 = aten.exp.default(self=%e2) : f32[4, 8]
    %out = aten.mul.Tensor(self=%e3, other=2.0) : f32[4, 8]
    %g3 = aten.mul.Tensor(self=%tangents_0, other=2.0) : f32[4, 8]
    %g2 = aten.mul.Tensor(self=%g3, other=%e3) : f32[4, 8]
    %g1 = aten.mul.Tensor(self=%g2, other=%e2) : f32[4, 8]
    %g0 = aten.mul.Tensor(self=%g1, other=%e1) : f32[4, 8]
    %xt = aten.permute.default(self=%x, dims=[1, 0]) : f32[8, 4]{strides=[1, 8]}
    %gw = aten.mm.default(self=%xt, mat2=%g0) : f32[8, 8]
    return %out user_output, %gw gradient_to_user_input("w")
  }
})";

TEST(PartitionTest, CheapPointwiseChainIsRecomputed) {
  std::unique_ptr<Module> m = parse(kPointwiseChain);
  PartitionPlan all = plan(*m, PartitionStrategy::SaveAll);
  EXPECT_EQ(names(all.saved), (std::vector<std::string>{"x", "e1", "e2", "e3"}));
  EXPECT_EQ(all.savedBytes, 4u * 128);
  PartitionPlan cut = plan(*m, PartitionStrategy::MinCut);
  EXPECT_EQ(names(cut.saved), (std::vector<std::string>{"x", "mm"}));
  EXPECT_EQ(cut.savedBytes, 2u * 128);
  std::vector<std::string> backward = ops(cut.backwardNodes);
  EXPECT_TRUE(contains(backward, "e1") && contains(backward, "e2") && contains(backward, "e3"));
  EXPECT_FALSE(contains(backward, "mm"));
}

// x is [2, 1] and w is [1, 8], so saving both (40 bytes) would be cheaper
// than saving their [2, 8] product (64 bytes); but a matrix product is
// never recomputed.
TEST(PartitionTest, MatrixProductIsSaved) {
  std::unique_ptr<Module> m = parse(R"(module level(joint) {
  graph @joint(%x: f32[2, 1] user_input("x"), %w: f32[1, 8] user_input("w"),
               %tangents_0: f32[2, 8] user_input("tangents_0")) {
    %mm = aten.mm.default(self=%x, mat2=%w) : f32[2, 8]
    %e = aten.exp.default(self=%mm) : f32[2, 8]
    %g = aten.mul.Tensor(self=%tangents_0, other=%e) : f32[2, 8]
    %xt = aten.permute.default(self=%x, dims=[1, 0]) : f32[1, 2]
    %gw = aten.mm.default(self=%xt, mat2=%g) : f32[1, 8]
    return %e user_output, %gw gradient_to_user_input("w")
  }
})");
  PartitionPlan cut = plan(*m, PartitionStrategy::MinCut);
  EXPECT_EQ(names(cut.saved), (std::vector<std::string>{"x", "mm"}));
  EXPECT_EQ(ops(cut.backwardNodes), (std::vector<std::string>{"e", "g", "xt", "gw"}));
}

// The backward needs the random numbers themselves; recomputing them from
// the seed and offset would be cheaper, but a random op never runs twice.
TEST(PartitionTest, RandomOpIsNeverRecomputed) {
  std::unique_ptr<Module> m = parse(R"(module level(joint) {
  graph @joint(%x: f32[64] user_input("x"), %seed: i64[] user_input("seed"),
               %tangents_0: f32[64] user_input("tangents_0")) {
    %r = gc.rand.default(size=[64], seed=%seed, offset=%seed) : f32[64]
    %out = aten.mul.Tensor(self=%x, other=%r) : f32[64]
    %gx = aten.mul.Tensor(self=%tangents_0, other=%r) : f32[64]
    return %out user_output, %gx gradient_to_user_input("x")
  }
})");
  PartitionPlan cut = plan(*m, PartitionStrategy::MinCut);
  EXPECT_EQ(names(cut.saved), (std::vector<std::string>{"r"}));
  EXPECT_EQ(ops(cut.backwardNodes), (std::vector<std::string>{"gx"}));
}

// A value no forward output needs and no tangent feeds (the ones of a
// structurally constant factor) is computed in the backward, not saved.
TEST(PartitionTest, BackwardOnlyValueIsComputedInBackward) {
  std::unique_ptr<Module> m = parse(R"(module level(joint) {
  graph @joint(%x: f32[16] user_input("x"), %tangents_0: f32[16] user_input("tangents_0")) {
    %out = aten.mul.Tensor(self=%x, other=3.0) : f32[16]
    %ones = aten.full.default(size=[16], fill_value=3.0) : f32[16]
    %gx = aten.mul.Tensor(self=%tangents_0, other=%ones) : f32[16]
    return %out user_output, %gx gradient_to_user_input("x")
  }
})");
  for (PartitionStrategy s : {PartitionStrategy::MinCut, PartitionStrategy::SaveAll}) {
    PartitionPlan p = plan(*m, s);
    EXPECT_TRUE(p.saved.empty());
    EXPECT_EQ(ops(p.forwardNodes), (std::vector<std::string>{"out"}));
    EXPECT_EQ(ops(p.backwardNodes), (std::vector<std::string>{"ones", "gx"}));
  }
}

TEST(PartitionTest, SymbolicSizesCostTheirHint) {
  std::unique_ptr<Module> m = parse(R"(module level(joint) {
  symbol {name="s0", min=2}
  symbol {name="s1", min=4096}
  symbol {name="s2", min=1, max=16}
  graph @joint(%a: f32[s0, 8] user_input("a"), %b: f16[s1] user_input("b"),
               %c: i64[s2, s0] user_input("c"), %d: f32[s3] user_input("d")) {
    return %a user_output
  }
})");
  const Graph &g = *m->graph("joint");
  auto bytes = [&](size_t i) {
    Expected<uint64_t> b = valueBytes(m->syms(), *g.inputs()[i]);
    EXPECT_TRUE(b);
    return b ? *b : 0;
  };
  EXPECT_EQ(bytes(0), 1024u * 8 * 4); // unbounded above: 1024
  EXPECT_EQ(bytes(1), 4096u * 2);     // at least 4096: its minimum
  EXPECT_EQ(bytes(2), 16u * 1024 * 8); // at most 16: its maximum
  EXPECT_EQ(bytes(3), 1024u * 4);     // no range: 1024
}

// The matrix product's [s0, 4] result is saved; its bytes come from s0's
// hint, which its range moves.
TEST(PartitionTest, SavedBytesUseTheHints) {
  auto savedBytes = [](const std::string &range) {
    std::unique_ptr<Module> m = parse(R"(module level(joint) {
  symbol {name="s0", )" + range + R"(}
  graph @joint(%x: f32[s0, 8] user_input("x"), %w: f32[8, 4] user_input("w"),
               %tangents_0: f32[s0, 4] user_input("tangents_0")) {
    %mm = aten.mm.default(self=%x, mat2=%w) : f32[s0, 4]
    %e = aten.exp.default(self=%mm) : f32[s0, 4]
    %gmm = aten.mul.Tensor(self=%tangents_0, other=%e) : f32[s0, 4]
    %wt = aten.permute.default(self=%w, dims=[1, 0]) : f32[4, 8]{strides=[1, 4]}
    %gx = aten.mm.default(self=%gmm, mat2=%wt) : f32[s0, 8]
    return %e user_output, %gx gradient_to_user_input("x")
  }
})");
    PartitionPlan p = plan(*m, PartitionStrategy::MinCut);
    EXPECT_EQ(names(p.saved), (std::vector<std::string>{"w", "mm"}));
    return p.savedBytes;
  };
  EXPECT_EQ(savedBytes("min=2"), 8u * 4 * 4 + 1024u * 4 * 4);
  EXPECT_EQ(savedBytes("min=1, max=3"), 8u * 4 * 4 + 3u * 4 * 4);
}

TEST(PartitionTest, ApplyIsDeterministic) {
  std::string printed[2];
  for (std::string &text : printed) {
    std::unique_ptr<Module> m = parse(kPointwiseChain);
    PartitionPlan p = plan(*m, PartitionStrategy::MinCut);
    Error e = applyPartition(*m, p);
    ASSERT_FALSE(e) << e.message();
    EXPECT_EQ(m->level(), Level::Partitioned);
    ASSERT_TRUE(m->graph("forward") && m->graph("backward"));
    text = printModule(*m);
  }
  EXPECT_EQ(printed[0], printed[1]);
}

} // namespace
} // namespace gc
