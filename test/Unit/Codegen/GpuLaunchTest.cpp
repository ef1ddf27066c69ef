//===- GpuLaunchTest.cpp - chooseGpuLaunches' rule, case by case ----------===//
#include "GpuLaunch.h"

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

TEST_F(GpuLaunchTest, SymbolicSpacesUseTheirUpperBoundForSeveralPointsAThread) {
  // A prefill's [s0, 8192] with s0 in [1, 2048] may be large: 4 points a
  // thread (the launch's grid keeps small runs spread over the GPU).
  module.syms().setRange("s0", {1, 2048});
  launch({sym("s0"), c(8192)}, {});
  graph.nodes[0].output = 1;
  chooseGpuLaunches(module, graph);
  EXPECT_EQ(graph.plan.kernels[0].pointsPerThread, 4u);
  module.syms().setRange("s0", {1, 31});
  chooseGpuLaunches(module, graph);
  EXPECT_EQ(graph.plan.kernels[0].pointsPerThread, 0u) << "at most 31 x 8192 points";
}

/// Rule 4's vectors: one pointwise node over `parallel` that loads `in` at
/// `load` and stores `out` at `store` (index texts over i0, i1, s0).
class GpuVectorTest : public ::testing::Test {
protected:
  Module module;
  LoopGraph graph;

  const SymExpr *e(std::string_view text) {
    Expected<const SymExpr *> parsed = module.syms().parse(text);
    EXPECT_TRUE(bool(parsed)) << text;
    return parsed ? *parsed : module.syms().constant(0);
  }

  uint32_t width(std::vector<std::string_view> parallel, DType in, std::string_view load,
                 DType out, std::string_view store) {
    module.syms().setRange("s0", {1, 2048});
    Buffer input, output;
    input.name = "x";
    input.dtype = in;
    output.name = "y";
    output.dtype = out;
    graph.buffers = {input, output};
    LoopNode node;
    node.kind = LoopNode::Kind::Pointwise;
    node.name = "n";
    for (std::string_view p : parallel)
      node.ranges.push_back(e(p));
    BodyOp op;
    op.kind = BodyOp::Kind::Load;
    op.dtype = in;
    op.buffer = 0;
    op.index = e(load);
    node.body.ops = {op};
    node.output = 1;
    node.storeIndex = e(store);
    graph.nodes = {node};
    KernelGroup group;
    group.name = "k";
    group.nodes = {0};
    group.parallelRanges = node.ranges;
    graph.plan.kernels = {group};
    chooseGpuLaunches(module, graph);
    return graph.plan.kernels[0].vectorWidth;
  }
};

TEST_F(GpuVectorTest, SixteenBytesOfTheWidestElement) {
  EXPECT_EQ(width({"8192*s0"}, DType::BFloat16, "i0", DType::BFloat16, "i0"), 8u);
  EXPECT_EQ(width({"s0", "8192"}, DType::BFloat16, "8192*i0 + i1", DType::BFloat16,
                  "8192*i0 + i1"),
            8u);
  EXPECT_EQ(width({"s0", "64"}, DType::Float32, "64*i0 + i1", DType::BFloat16, "64*i0 + i1"), 4u);
  EXPECT_EQ(width({"s0", "64"}, DType::Bool, "64*i0 + i1", DType::Bool, "64*i0 + i1"), 16u);
  EXPECT_EQ(width({"s0", "64"}, DType::Float64, "64*i0 + i1", DType::Float32, "64*i0 + i1"), 2u);
}

TEST_F(GpuVectorTest, HalvedUntilTheRowDividesIt) {
  EXPECT_EQ(width({"s0", "8190"}, DType::BFloat16, "8190*i0 + i1", DType::BFloat16,
                  "8190*i0 + i1"),
            2u);
  EXPECT_EQ(width({"s0", "4095"}, DType::BFloat16, "4095*i0 + i1", DType::BFloat16,
                  "4095*i0 + i1"),
            0u);
  // 4*s0 is a multiple of 4 whatever s0 is, not of 8.
  EXPECT_EQ(width({"4*s0"}, DType::BFloat16, "i0", DType::BFloat16, "i0"), 4u);
  EXPECT_EQ(width({"s0"}, DType::BFloat16, "i0", DType::BFloat16, "i0"), 0u);
}

TEST_F(GpuVectorTest, StoresMustStayAlignedLoadsNeedNot) {
  // A load one element into the row (x[:, 1:]) is loaded lane by lane.
  EXPECT_EQ(width({"s0", "4096"}, DType::BFloat16, "4097*i0 + i1 + 1", DType::BFloat16,
                  "4096*i0 + i1"),
            8u);
  // A store one element into its row is not a vector.
  EXPECT_EQ(width({"s0", "4096"}, DType::BFloat16, "4096*i0 + i1", DType::BFloat16,
                  "4097*i0 + i1 + 1"),
            0u);
  // Neither is a transposing store.
  EXPECT_EQ(width({"64", "64"}, DType::BFloat16, "64*i0 + i1", DType::BFloat16, "i0 + 64*i1"),
            0u);
}

TEST_F(GpuVectorTest, OnlyFlatPointwiseGroupsThatReadNothingTheyWrite) {
  EXPECT_EQ(width({"s0", "64"}, DType::BFloat16, "64*i0 + i1", DType::BFloat16, "64*i0 + i1"), 8u);
  // Reading the output (an in-place update of one buffer).
  graph.nodes[0].body.ops[0].buffer = 1;
  chooseGpuLaunches(module, graph);
  EXPECT_EQ(graph.plan.kernels[0].vectorWidth, 0u);
  // A loop of the node's own beyond the group's parallel range.
  width({"s0", "64"}, DType::BFloat16, "64*i0 + i1", DType::BFloat16, "64*i0 + i1");
  graph.plan.kernels[0].parallelRanges.pop_back();
  chooseGpuLaunches(module, graph);
  EXPECT_EQ(graph.plan.kernels[0].vectorWidth, 0u);
  EXPECT_EQ(graph.plan.kernels[0].pointsPerThread, 0u);
}

TEST_F(GpuVectorTest, LaneSteps) {
  auto step = [&](std::string_view index, uint32_t width) { return laneStep(e(index), "i1", width); };
  EXPECT_EQ(step("i1", 8), LaneStep::Aligned);
  EXPECT_EQ(step("8192*i0 + i1", 8), LaneStep::Aligned);
  EXPECT_EQ(step("4*i0 + i1", 8), LaneStep::Other) << "4*i0 is not a multiple of 8";
  EXPECT_EQ(step("4*i0 + i1", 4), LaneStep::Aligned);
  EXPECT_EQ(step("i1 + 1", 2), LaneStep::Other);
  EXPECT_EQ(step("2*i1", 2), LaneStep::Other);
  EXPECT_EQ(step("i0*s0 + i1", 2), LaneStep::Other) << "i0*s0 may be odd";
  EXPECT_EQ(step("8*i0*s0 + i1", 8), LaneStep::Aligned);
  EXPECT_EQ(step("64*t0 + i1", 8), LaneStep::Aligned) << "a gathered row";
  EXPECT_EQ(step("i0 + 7", 8), LaneStep::Same);
  // Heads of 16 split off a row of 64: within a vector of 8 the head is
  // the same and the position in it steps.
  EXPECT_EQ(step("floordiv(i1, 16)", 8), LaneStep::Same);
  EXPECT_EQ(step("16*i0 + 1024*floordiv(i1, 16) + mod(i1, 16)", 8), LaneStep::Aligned);
  EXPECT_EQ(step("mod(i1, 12)", 8), LaneStep::Other) << "a vector may cross 12";
  EXPECT_EQ(step("mod(i1, s0)", 8), LaneStep::Other);
  EXPECT_TRUE(isMultipleOf(e("8192*s0"), 8));
  EXPECT_TRUE(isMultipleOf(e("8*s0 + 16"), 8));
  EXPECT_FALSE(isMultipleOf(e("8*s0 + 4"), 8));
  EXPECT_FALSE(isMultipleOf(e("s0"), 2));
}

TEST_F(GpuVectorTest, RotationHalvesAreTheSameForEveryLane) {
  // rotate_half over rows of 64: where i1 >= 32, x[i1 - 32], masked; with
  // the lanes' first i1 a multiple of the width and 32 one too, the mask
  // is the same for every lane and the masked load one vector.
  module.syms().setRange("s0", {1, 2048});
  Buffer x;
  x.name = "x";
  x.dtype = DType::BFloat16;
  x.sizes = {e("s0"), e("64")};
  graph.buffers = {x};
  auto body = [&](ScalarOp compare, double split, bool indexFirst) {
    Body b;
    BodyOp index, constant, test, load;
    index.kind = BodyOp::Kind::Index;
    index.dtype = DType::Int64;
    index.index = e("i1");
    constant.kind = BodyOp::Kind::Const;
    constant.dtype = DType::Int64;
    constant.constant = split;
    test.kind = BodyOp::Kind::Compute;
    test.dtype = DType::Bool;
    test.op = compare;
    test.operands = indexFirst ? std::vector<uint32_t>{0, 1} : std::vector<uint32_t>{1, 0};
    load.kind = BodyOp::Kind::Load;
    load.dtype = DType::BFloat16;
    load.index = e("64*i0 + i1 - 32");
    load.mask = 2;
    b.ops = {index, constant, test, load};
    b.result = 3;
    return bool(vectorLoads(graph, b, "i1", 8, module.syms().ranges())[3]);
  };
  EXPECT_TRUE(body(ScalarOp::Ge, 32, true));
  EXPECT_TRUE(body(ScalarOp::Lt, 32, true));
  EXPECT_TRUE(body(ScalarOp::Le, 32, false)) << "32 <= i1";
  EXPECT_TRUE(body(ScalarOp::Gt, 32, false)) << "32 > i1";
  EXPECT_FALSE(body(ScalarOp::Le, 32, true)) << "i1 <= 32 splits the vector at 32";
  EXPECT_FALSE(body(ScalarOp::Ge, 36, true)) << "36 is not a multiple of 8";
  // A buffer of fewer elements than a vector cannot take a masked-off one.
  graph.buffers[0].sizes = {e("4")};
  EXPECT_FALSE(body(ScalarOp::Ge, 32, true));
}

TEST_F(GpuVectorTest, BlockWideLoopsTakeVectorsToo) {
  // An RMSNorm's sum of squares over rows of 2048 bf16 and its scaling, in
  // a block per row (prefix: the one parallel range of rows).
  module.syms().setRange("s0", {1, 2048});
  Buffer x, out;
  x.name = "x";
  x.dtype = DType::BFloat16;
  out.name = "y";
  out.dtype = DType::BFloat16;
  graph.buffers = {x, out};
  auto node = [&](LoopNode::Kind kind, std::string_view inner, std::string_view load,
                  std::string_view store) {
    LoopNode n;
    n.kind = kind;
    n.ranges = {e("s0")};
    if (kind == LoopNode::Kind::Pointwise)
      n.ranges.push_back(e(inner));
    else
      n.reductionRanges = {e(inner)};
    BodyOp op;
    op.kind = BodyOp::Kind::Load;
    op.dtype = DType::BFloat16;
    op.index = e(load);
    n.body.ops = {op};
    n.output = 1;
    n.storeIndex = e(store);
    return n;
  };
  const auto reduction = LoopNode::Kind::Reduction, pointwise = LoopNode::Kind::Pointwise;
  auto width = [&](const LoopNode &n) { return innerVectorWidth(graph, n, 1, module.syms().ranges()); };
  EXPECT_EQ(width(node(reduction, "2048", "2048*i0 + r0", "i0")), 8u);
  EXPECT_EQ(width(node(reduction, "1000", "1000*i0 + r0", "i0")), 8u);
  EXPECT_EQ(width(node(reduction, "1001", "1001*i0 + r0", "i0")), 1u) << "odd rows";
  EXPECT_EQ(width(node(reduction, "2048", "i0 + s0*r0", "i0")), 1u) << "a column: no vector load";
  EXPECT_EQ(width(node(pointwise, "2048", "2048*i0 + i1", "2048*i0 + i1")), 8u);
  EXPECT_EQ(width(node(pointwise, "2048", "2049*i0 + i1 + 1", "2048*i0 + i1")), 8u);
  EXPECT_EQ(width(node(pointwise, "2048", "2048*i0 + i1", "2049*i0 + i1 + 1")), 1u)
      << "an unaligned store";
  LoopNode scan = node(reduction, "2048", "2048*i0 + r0", "2048*i0 + r0");
  scan.scan = true;
  EXPECT_EQ(width(scan), 1u);
}
