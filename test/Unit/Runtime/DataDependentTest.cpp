//===- DataDependentTest.cpp - Plans whose sizes the data decides ---------===//
//
// A fallback step computes nonzero's count u0 (an unbacked size), a kernel
// after it reads the count from its symbols: runs with counts of none, some
// and all, and the plans the executor refuses (a step reading u0 before it
// is bound, a u0 with no upper bound, a count outside u0's range).
//
//===----------------------------------------------------------------------===//
#include "LoopGraphMaker.h"

#include <gtest/gtest.h>

using namespace gc;
using namespace gc::test;

namespace {

constexpr int64_t kLength = 6;

/// y[i] = idx[i] + 1 for i in [begin, end); its buffers: idx, y.
void plusOneKernel(char *const *bufs, const int64_t *syms, int64_t begin, int64_t end) {
  auto *idx = reinterpret_cast<const int64_t *>(bufs[0]);
  auto *y = reinterpret_cast<int64_t *>(bufs[1]);
  EXPECT_LE(end, syms[0]);
  for (int64_t i = begin; i < end; ++i)
    y[i] = idx[i] + 1;
}

/// x: f32[6] -> nonzero(x) + 1, i64[u0, 1]: a fallback step then a kernel
/// over u0 rows (before it when `kernelFirst`: a corrupt plan).
struct NonzeroGraph : LoopGraphMaker {
  explicit NonzeroGraph(SymRange range = {0, kLength}, bool kernelFirst = false) {
    const SymExpr *u0 = sym("u0");
    module.syms().setRange("u0", range);
    uint32_t x = input("x", DType::Float32, ks({kLength}));
    uint32_t idx = buffer("idx", BufferKind::Intermediate, DType::Int64, {u0, k(1)});
    uint32_t y = buffer("y", BufferKind::Output, DType::Int64, {u0, k(1)});
    LoopNode add;
    add.name = "plus_one";
    add.ranges = {u0};
    add.output = y;
    add.body.ops.push_back({BodyOp::Kind::Load, DType::Int64, ScalarOp::Add, {}, idx});
    graph.nodes.push_back(add);
    graph.plan.kernels.push_back({"plus_one", {0}, {u0}});
    graph.plan.symbols = {"u0"};
    PlanStep kernel{PlanStep::Kind::Kernel, 0, {}, {}};
    if (kernelFirst)
      graph.plan.steps.push_back(kernel);
    LoopNode &n =
        callNode(LoopNode::Kind::Fallback, ops::aten_nonzero_default, {whole(x)}, {whole(idx)});
    n.args = {tensorArg("self", 0)};
    if (!kernelFirst)
      graph.plan.steps.push_back(kernel);
    output("y", y, whole(y).type);
    lib.fns["plus_one"] = plusOneKernel;
  }
  FakeLibrary lib;
};

/// Runs `g` on `x`; the output's true sizes and its first rows. The output
/// is given the room of u0's upper bound, `bound`.
Expected<std::pair<std::vector<int64_t>, std::vector<int64_t>>>
run(Executor &e, std::vector<float> x, int64_t bound = kLength) {
  std::vector<TensorRef> in{ref(x, {kLength})};
  Expected<std::vector<std::vector<int64_t>>> sizes = e.outputSizes(in);
  if (!sizes)
    return sizes.error();
  EXPECT_EQ((*sizes)[0], (std::vector<int64_t>{bound, 1})) << "room for the upper bound";
  std::vector<int64_t> out(kLength, -1);
  std::vector<TensorRef> outs{TensorRef{out.data(), DType::Int64, (*sizes)[0], {}}};
  GC_RETURN_IF_ERROR(e.run(in, outs));
  std::vector<int64_t> filled = e.lastOutputSizes()[0];
  out.resize(static_cast<size_t>(filled[0]));
  return std::pair{filled, out};
}

TEST(DataDependent, CountsOfNoneSomeAndAll) {
  NonzeroGraph g;
  auto e = g.executor(g.lib, {1});
  ASSERT_TRUE(bool(e)) << e.error().message();
  struct Case {
    std::vector<float> x;
    std::vector<int64_t> want; // nonzero's indices plus one
  };
  for (const Case &c : {Case{{0, 0, 0, 0, 0, 0}, {}}, Case{{0, 2, 0, -1, 0, 3}, {2, 4, 6}},
                        Case{{1, 2, 3, 4, 5, 6}, {1, 2, 3, 4, 5, 6}},
                        Case{{0, 0, 7, 0, 0, 0}, {3}}}) {
    auto r = run(**e, c.x);
    ASSERT_TRUE(bool(r)) << r.error().message();
    EXPECT_EQ(r->first, (std::vector<int64_t>{static_cast<int64_t>(c.want.size()), 1}));
    EXPECT_EQ(r->second, c.want);
  }
}

TEST(DataDependent, ACountOutsideItsRangeIsTheRunsError) {
  NonzeroGraph g({0, 2});
  auto e = g.executor(g.lib, {1});
  ASSERT_TRUE(bool(e)) << e.error().message();
  auto r = run(**e, {1, 1, 1, 0, 0, 0}, 2);
  ASSERT_FALSE(bool(r));
  EXPECT_EQ(r.error().message(), "node 'n1': result 0: dimension 0 is 3, outside the range "
                                 "[0, 2] torch.export recorded for u0");
}

TEST(DataDependent, AStepReadingTheCountBeforeItIsBoundIsRefused) {
  NonzeroGraph g({0, kLength}, /*kernelFirst=*/true);
  auto e = g.executor(g.lib, {1});
  ASSERT_FALSE(bool(e));
  EXPECT_EQ(e.error().message(),
            "kernel 'plus_one' reads size symbol u0 before any input or step binds it");
}

TEST(DataDependent, ACountWithNoUpperBoundIsRefused) {
  NonzeroGraph g({0, SymRange::kUnbounded});
  auto e = g.executor(g.lib, {1});
  ASSERT_FALSE(bool(e));
  EXPECT_EQ(e.error().message(),
            "node 'n1' computes size u0, which has no upper bound to plan its buffers at");
}

} // namespace
