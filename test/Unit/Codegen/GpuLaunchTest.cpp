//===- GpuLaunchTest.cpp - chooseGpuLaunches' rule, case by case ----------===//
#include "gc/Codegen/GpuKernelEmitter.h"

#include <gtest/gtest.h>

using namespace gc;

namespace {

/// One kernel group of one node over `parallel`, a reduction over `reduced`
/// (none if empty) whose load walks memory along `contiguous` ("r0" for a
/// row, "i0" for a column); the node has loops of its own, `inner`, beyond
/// the group's parallel ranges.
class GpuLaunchTest : public ::testing::Test {
protected:
  Module module;
  LoopGraph graph;

  const SymExpr *c(int64_t v) { return module.syms().constant(v); }
  const SymExpr *sym(const std::string &name) { return module.syms().symbol(name); }

  const KernelGroup &launch(std::vector<const SymExpr *> parallel,
                            std::vector<const SymExpr *> reduced,
                            const std::string &contiguous = "r0",
                            std::vector<const SymExpr *> inner = {}) {
    LoopNode node;
    node.kind = reduced.empty() ? LoopNode::Kind::Pointwise : LoopNode::Kind::Reduction;
    node.name = "n";
    node.ranges = parallel;
    node.ranges.insert(node.ranges.end(), inner.begin(), inner.end());
    node.reductionRanges = reduced;
    BodyOp load;
    load.kind = BodyOp::Kind::Load;
    load.index = module.syms().add(sym(contiguous), module.syms().mul(c(100000), sym("i1")));
    node.body.ops = {load};
    node.storeIndex = sym("i0");
    graph.nodes = {node};
    KernelGroup group;
    group.name = "k";
    group.nodes = {0};
    group.parallelRanges = parallel;
    graph.plan.kernels = {group};
    chooseGpuLaunches(module, graph);
    return graph.plan.kernels[0];
  }
};

TEST_F(GpuLaunchTest, PointwiseRunsAThreadPerPoint) {
  const KernelGroup &k = launch({c(1 << 20)}, {});
  EXPECT_EQ(k.mapping, GpuMapping::ThreadPerPoint);
  EXPECT_EQ(k.blockThreads, 256u);
}

TEST_F(GpuLaunchTest, ShortReductionsRunAThreadPerPoint) {
  EXPECT_EQ(launch({c(64)}, {c(63)}).mapping, GpuMapping::ThreadPerPoint);
}

TEST_F(GpuLaunchTest, BlockSizeGrowsWithTheRow) {
  EXPECT_EQ(launch({c(64)}, {c(64)}).blockThreads, 128u);
  EXPECT_EQ(launch({c(64)}, {c(1025)}).blockThreads, 256u);
  EXPECT_EQ(launch({c(64)}, {c(4096)}).blockThreads, 512u);
  const KernelGroup &k = launch({c(64)}, {c(32), c(1000)});
  EXPECT_EQ(k.mapping, GpuMapping::BlockPerPoint);
  EXPECT_EQ(k.blockThreads, 1024u);
}

TEST_F(GpuLaunchTest, SymbolicRowsUseTheirBound) {
  module.syms().setRange("s0", {1, 2048});
  EXPECT_EQ(launch({c(64)}, {sym("s0")}).blockThreads, 256u);
  // Without an upper bound the row counts as long.
  const KernelGroup &k = launch({c(64)}, {sym("s1")});
  EXPECT_EQ(k.mapping, GpuMapping::BlockPerPoint);
  EXPECT_EQ(k.blockThreads, 1024u);
  // A symbol bounded below 64 keeps a thread per point.
  module.syms().setRange("s2", {1, 32});
  EXPECT_EQ(launch({c(8)}, {sym("s2")}).mapping, GpuMapping::ThreadPerPoint);
}

TEST_F(GpuLaunchTest, FewBlocksGiveEachThreadTwoElements) {
  // Under 64 rows, a block per row leaves most SMs idle, so its threads
  // take 2 elements each rather than 8.
  EXPECT_EQ(launch({c(63)}, {c(1025)}).blockThreads, 1024u);
  EXPECT_EQ(launch({c(8)}, {c(512)}).blockThreads, 256u);
  EXPECT_EQ(launch({c(64)}, {c(1025)}).blockThreads, 256u);
  // One point (a decode step's RMSNorm): its pointwise member's inner loop
  // counts too.
  const KernelGroup &k = launch({}, {}, "r0", {c(2048)});
  EXPECT_EQ(k.mapping, GpuMapping::BlockPerPoint);
  EXPECT_EQ(k.blockThreads, 1024u);
}

TEST_F(GpuLaunchTest, ManyShortRowsRunAThreadPerPoint) {
  EXPECT_EQ(launch({c(1 << 20)}, {c(1024)}).mapping, GpuMapping::ThreadPerPoint);
  EXPECT_EQ(launch({c(1 << 20)}, {c(1025)}).mapping, GpuMapping::BlockPerPoint);
  // A symbolic space is huge only when its lower bound says so.
  module.syms().setRange("s0", {1, int64_t(1) << 30});
  EXPECT_EQ(launch({sym("s0")}, {c(256)}).mapping, GpuMapping::BlockPerPoint);
}

TEST_F(GpuLaunchTest, ColumnsRunAThreadPerPoint) {
  EXPECT_EQ(launch({c(4096)}, {c(1000)}, "i0").mapping, GpuMapping::ThreadPerPoint);
  // Too few columns to fill the GPU with threads.
  EXPECT_EQ(launch({c(4095)}, {c(1000)}, "i0").mapping, GpuMapping::BlockPerPoint);
  EXPECT_EQ(launch({c(4096)}, {c(1000)}, "r0").mapping, GpuMapping::BlockPerPoint);
}

} // namespace

namespace {

TEST_F(GpuLaunchTest, LargePointwiseRunsFourPointsAThread) {
  // The fixture's node reads buffer 0; it writes buffer 1.
  auto rerun = [&](uint32_t output) {
    graph.nodes[0].output = output;
    chooseGpuLaunches(module, graph);
    return graph.plan.kernels[0].pointsPerThread;
  };
  launch({c(1 << 18)}, {});
  EXPECT_EQ(rerun(1), 4u);
  EXPECT_EQ(rerun(0), 0u) << "it reads what it writes";
  launch({c((1 << 18) - 1)}, {});
  EXPECT_EQ(rerun(1), 0u) << "too few points";
  launch({c(1 << 20)}, {c(16)});
  EXPECT_EQ(rerun(1), 0u) << "a reduction";
  EXPECT_EQ(graph.plan.kernels[0].mapping, GpuMapping::ThreadPerPoint);
}

} // namespace

TEST_F(GpuLaunchTest, FewRowsOfPointwiseInnerLoopsRunABlockPerPoint) {
  // softmax's normalization fused with the next node over 24 x 128 rows of
  // 128: the block's threads share each row.
  const KernelGroup &k = launch({c(3072)}, {}, "r0", {c(128)});
  EXPECT_EQ(k.mapping, GpuMapping::BlockPerPoint);
  EXPECT_EQ(k.blockThreads, 128u);
  // Rows shorter than a warp, or enough of them to fill the GPU with
  // threads: a thread per point.
  EXPECT_EQ(launch({c(3072)}, {}, "r0", {c(16)}).mapping, GpuMapping::ThreadPerPoint);
  EXPECT_EQ(launch({c(1 << 18)}, {}, "r0", {c(128)}).mapping, GpuMapping::ThreadPerPoint);
}
