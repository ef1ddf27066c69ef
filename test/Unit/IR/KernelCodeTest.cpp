//===- KernelCodeTest.cpp - Which kernel groups can share their code ------===//
//
// Two groups that run the same nodes on other buffers are one code; any
// difference the code generators read (a buffer's element type or layout,
// an in-place partner, the body) makes them two.
//
//===----------------------------------------------------------------------===//

#include "gc/IR/KernelCode.h"
#include "gc/IR/Module.h"

#include <gtest/gtest.h>

using namespace gc;

namespace {

/// Buffers a, b, x, y (f32[s0, 8]); node k writes exp(in_k) * in_k + other_k.
class Layers : public ::testing::Test {
protected:
  void SetUp() override {
    for (const char *name : {"a", "b", "x", "y", "u", "v"})
      g.buffers.push_back({name, BufferKind::Intermediate, DType::Float32,
                           {expr("s0"), expr("8")}, {expr("8"), expr("1")}, false});
    addLayer("first", kA, kU, kX);
    addLayer("second", kB, kV, kY);
    g.plan.kernels = {{"k0", {0}, {expr("s0")}}, {"k1", {1}, {expr("s0")}}};
    g.plan.steps = {{PlanStep::Kind::Kernel, 0, {}, {}}, {PlanStep::Kind::Kernel, 1, {}, {}}};
  }

  const SymExpr *expr(std::string_view text) { return *m.syms().parse(text); }

  void addLayer(const char *name, uint32_t in, uint32_t other, uint32_t out) {
    LoopNode n;
    n.kind = LoopNode::Kind::Pointwise;
    n.name = name;
    n.ranges = {expr("s0"), expr("8")};
    n.output = out;
    n.storeIndex = expr("8*i0 + i1");
    auto load = [&](uint32_t buffer) {
      BodyOp op;
      op.kind = BodyOp::Kind::Load;
      op.buffer = buffer;
      op.index = n.storeIndex;
      return op;
    };
    auto compute = [](ScalarOp s, std::vector<uint32_t> operands) {
      BodyOp op;
      op.kind = BodyOp::Kind::Compute;
      op.op = s;
      op.operands = std::move(operands);
      return op;
    };
    n.body.ops = {load(in), compute(ScalarOp::Exp, {0}), compute(ScalarOp::Mul, {1, 0}),
                  load(other), compute(ScalarOp::Add, {2, 3})};
    n.body.result = 4;
    g.nodes.push_back(n);
  }

  static constexpr uint32_t kA = 0, kB = 1, kX = 2, kY = 3, kU = 4, kV = 5;
  Module m;
  LoopGraph g;
};

TEST_F(Layers, BuffersInTheOrderTheEntryTakesThem) {
  EXPECT_EQ(kernelBuffers(g, g.plan.kernels[0]), (std::vector<uint32_t>{kA, kU, kX}));
  EXPECT_EQ(kernelBuffers(g, g.plan.kernels[1]), (std::vector<uint32_t>{kB, kV, kY}));
}

TEST_F(Layers, SameNodesOnOtherBuffersAreOneCode) {
  EXPECT_TRUE(sameKernelCode(g, 0, 1));
  g.plan.kernels[1].name = "k0";
  EXPECT_EQ(distinctKernels(g), std::vector<uint32_t>{0});
}

TEST_F(Layers, ABufferOfAnotherTypeOrLayoutIsAnotherCode) {
  g.buffers[kV].dtype = DType::Float16;
  EXPECT_FALSE(sameKernelCode(g, 0, 1));
  g.buffers[kV].dtype = DType::Float32;
  g.buffers[kY].strides = {expr("1"), expr("s0")};
  EXPECT_FALSE(sameKernelCode(g, 0, 1));
  g.buffers[kY].strides = g.buffers[kX].strides;
  g.buffers[kY].kind = BufferKind::Output;
  EXPECT_FALSE(sameKernelCode(g, 0, 1));
}

TEST_F(Layers, AnInPlacePartnerIsAnotherCode) {
  // In place, the output may alias its input: the code may not assume
  // otherwise.
  g.plan.steps[1].inplace = {{kY, kB}};
  EXPECT_FALSE(sameKernelCode(g, 0, 1));
  g.plan.steps[0].inplace = {{kX, kA}};
  EXPECT_TRUE(sameKernelCode(g, 0, 1));
}

TEST_F(Layers, ReadingOneBufferTwiceIsAnotherCode) {
  // The second layer reads its input where the first reads another buffer:
  // one argument fewer, so not the same entry.
  g.nodes[1].body.ops[3].buffer = kB;
  EXPECT_EQ(kernelBuffers(g, g.plan.kernels[1]), (std::vector<uint32_t>{kB, kY}));
  EXPECT_FALSE(sameKernelCode(g, 0, 1));
}

} // namespace
