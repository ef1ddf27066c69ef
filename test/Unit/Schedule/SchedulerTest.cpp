//===- SchedulerTest.cpp - Tests of fusion and loop rewriting -------------===//

#include "gc/Schedule/Scheduler.h"

#include <gtest/gtest.h>

using namespace gc;

namespace {

/// Builds a body op by op; each call returns the new value's index.
struct BodyBuilder {
  explicit BodyBuilder(SymContext &ctx) : ctx(ctx) {}

  uint32_t load(uint32_t buffer, std::string_view index, DType dtype = DType::Float32) {
    BodyOp op;
    op.kind = BodyOp::Kind::Load;
    op.dtype = dtype;
    op.buffer = buffer;
    op.index = *ctx.parse(index);
    return push(op);
  }
  uint32_t cast(uint32_t value, DType dtype) {
    return push(BodyOp{.kind = BodyOp::Kind::Cast, .dtype = dtype, .operands = {value}});
  }
  uint32_t constant(double v) {
    BodyOp op;
    op.kind = BodyOp::Kind::Const;
    op.constant = v;
    return push(op);
  }
  uint32_t compute(ScalarOp f, std::vector<uint32_t> operands) {
    BodyOp op;
    op.kind = BodyOp::Kind::Compute;
    op.op = f;
    op.operands = std::move(operands);
    return push(op);
  }
  uint32_t push(BodyOp op) {
    body.ops.push_back(std::move(op));
    body.result = static_cast<uint32_t>(body.ops.size() - 1);
    return body.result;
  }

  SymContext &ctx;
  Body body;
};

class SchedulerTest : public ::testing::Test {
protected:
  SchedulerTest() { graph.name = "g"; }

  const SymExpr *e(std::string_view text) { return *ctx.parse(text); }
  std::vector<const SymExpr *> exprs(std::vector<std::string> texts) {
    std::vector<const SymExpr *> out;
    for (const std::string &t : texts)
      out.push_back(e(t));
    return out;
  }

  /// A dense row-major buffer.
  uint32_t buffer(std::string name, BufferKind kind,
                  std::vector<std::string> sizes) {
    Buffer b;
    b.name = std::move(name);
    b.kind = kind;
    b.sizes = exprs(sizes);
    b.strides = contiguousStrides(ctx, b.sizes);
    graph.buffers.push_back(std::move(b));
    return static_cast<uint32_t>(graph.buffers.size() - 1);
  }
  uint32_t temp(std::vector<std::string> sizes) {
    return buffer("t" + std::to_string(graph.buffers.size()),
                  BufferKind::Intermediate, std::move(sizes));
  }

  uint32_t pointwise(std::vector<std::string> ranges, uint32_t out,
                     std::string_view store, const BodyBuilder &b) {
    LoopNode n;
    n.kind = LoopNode::Kind::Pointwise;
    n.name = "n" + std::to_string(graph.nodes.size());
    n.ranges = exprs(ranges);
    n.output = out;
    n.storeIndex = e(store);
    n.body = b.body;
    graph.nodes.push_back(std::move(n));
    return static_cast<uint32_t>(graph.nodes.size() - 1);
  }
  uint32_t reduction(std::vector<std::string> ranges,
                     std::vector<std::string> reduced, ReduceKind kind,
                     uint32_t out, std::string_view store,
                     const BodyBuilder &b) {
    uint32_t n = pointwise(std::move(ranges), out, store, b);
    graph.nodes[n].kind = LoopNode::Kind::Reduction;
    graph.nodes[n].reductionRanges = exprs(reduced);
    graph.nodes[n].reduce = kind;
    return n;
  }
  /// An mm of inputs x [32, 16] and w [16, 64] into a new temp; returns it.
  uint32_t matmul32x64() {
    uint32_t x = buffer("x", BufferKind::Input, {"32", "16"});
    uint32_t w = buffer("w", BufferKind::Input, {"16", "64"});
    uint32_t m = temp({"32", "64"});
    externNode(ops::aten_mm_default, {x, w}, m);
    return m;
  }
  BufferView view(uint32_t buffer) {
    BufferView v;
    v.buffer = buffer;
    v.type.dtype = graph.buffers[buffer].dtype;
    v.type.sizes = graph.buffers[buffer].sizes;
    v.type.strides = graph.buffers[buffer].strides;
    v.type.storageOffset = ctx.constant(0);
    return v;
  }
  uint32_t externNode(OpId op, std::vector<uint32_t> inputs,
                      uint32_t out) {
    LoopNode n;
    n.kind = LoopNode::Kind::Extern;
    n.name = "n" + std::to_string(graph.nodes.size());
    n.op = std::move(op);
    for (uint32_t b : inputs)
      n.inputs.push_back(view(b));
    n.outputs.push_back(view(out));
    graph.nodes.push_back(std::move(n));
    return static_cast<uint32_t>(graph.nodes.size() - 1);
  }

  void schedule(ScheduleOptions options = {}) {
    Error err = scheduleGraph(ctx, graph, options);
    ASSERT_FALSE(err) << err.message();
  }
  void scheduleFor(TargetDevice device) {
    ScheduleOptions options;
    options.device = device;
    schedule(options);
  }
  /// An empty graph again, for a test that builds one per device.
  void startGraph() {
    graph = LoopGraph{};
    graph.name = "g";
  }
  std::vector<uint32_t> kernelNodes(size_t k) {
    return graph.plan.kernels.at(k).nodes;
  }
  std::vector<std::string> strs(const std::vector<const SymExpr *> &es) {
    std::vector<std::string> out;
    for (const SymExpr *x : es)
      out.push_back(x->str());
    return out;
  }
  BodyBuilder body() { return BodyBuilder(ctx); }

  /// A decode step's cache write: k[4, 16] into cache[4, 64, 16] at the
  /// position pos[0], a scattering node over the position's 4 x 16 elements.
  /// Returns the cache's buffer.
  uint32_t addCacheWrite() {
    uint32_t cache = buffer("cache", BufferKind::Input, {"4", "64", "16"});
    uint32_t pos = buffer("pos", BufferKind::Input, {"1"});
    uint32_t k = buffer("k", BufferKind::Input, {"4", "16"});
    BodyBuilder b = body();
    b.load(pos, "0");
    b.load(k, "16*i0 + i1");
    uint32_t scatter = pointwise({"4", "16"}, cache, "1024*i0 + i1 + 16*t0", b);
    graph.nodes[scatter].storeIndirect = {0};
    return cache;
  }

  /// x[32, 16] times w[16, 64] into a temporary; a bias b[64] and an
  /// output y[32, 64] for its epilogue.
  struct MatmulBuffers {
    uint32_t result, bias, out;
  };
  MatmulBuffers matmulWithBias() {
    uint32_t x = buffer("x", BufferKind::Input, {"32", "16"});
    uint32_t w = buffer("w", BufferKind::Input, {"16", "64"});
    MatmulBuffers m{temp({"32", "64"}), buffer("b", BufferKind::Input, {"64"}),
                    buffer("y", BufferKind::Output, {"32", "64"})};
    externNode(ops::aten_mm_default, {x, w}, m.result);
    return m;
  }

  /// softmax over the rows of in[rows, cols] into out.
  void buildSoftmax(const std::string &rows, const std::string &cols,
                    uint32_t in, uint32_t out) {
    uint32_t mx = temp({rows}), sum = temp({rows});
    std::string at = "i0*" + cols + " + r0";
    BodyBuilder b1 = body();
    b1.load(in, at);
    reduction({rows}, {cols}, ReduceKind::Max, mx, "i0", b1);
    BodyBuilder b2 = body();
    b2.compute(ScalarOp::Exp, {b2.compute(ScalarOp::Sub, {b2.load(in, at),
                                                          b2.load(mx, "i0")})});
    reduction({rows}, {cols}, ReduceKind::Sum, sum, "i0", b2);
    BodyBuilder b3 = body();
    std::string rc = "i0*" + cols + " + i1";
    uint32_t ex = b3.compute(ScalarOp::Exp,
                             {b3.compute(ScalarOp::Sub, {b3.load(in, rc),
                                                         b3.load(mx, "i0")})});
    b3.compute(ScalarOp::Div, {ex, b3.load(sum, "i0")});
    pointwise({rows, cols}, out, rc, b3);
  }

  SymContext ctx;
  LoopGraph graph;
};

TEST_F(SchedulerTest, SoftmaxIsOneKernel) {
  uint32_t in = buffer("x", BufferKind::Input, {"64", "100"});
  uint32_t out = buffer("y", BufferKind::Output, {"64", "100"});
  buildSoftmax("64", "100", in, out);
  schedule();
  ASSERT_EQ(graph.plan.kernels.size(), 1u);
  EXPECT_EQ(kernelNodes(0), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(strs(graph.plan.kernels[0].parallelRanges),
            (std::vector<std::string>{"64"}));
  EXPECT_EQ(graph.plan.kernels[0].name, "g_k0");
  ASSERT_EQ(graph.plan.steps.size(), 1u);
  EXPECT_EQ(graph.plan.steps[0].kind, PlanStep::Kind::Kernel);
  EXPECT_TRUE(graph.plan.symbols.empty());
}

/// Softmax as lowering leaves it for torch's amax and sum with keepdim on
/// a batch of one (Whisper's attention, [1, 6, 1500, 1500]): the reductions
/// run over [1, 6, 15, 1] and store through the unit loops' variables, the
/// division runs over [6, 15, 20] and reads them without. The unit loops
/// are dropped, so all three share the prefix [6, 15].
TEST_F(SchedulerTest, KeepdimSoftmaxOnABatchOfOneIsOneKernel) {
  uint32_t in = buffer("x", BufferKind::Input, {"1", "6", "15", "20"});
  uint32_t out = buffer("y", BufferKind::Output, {"6", "15", "20"});
  uint32_t mx = temp({"1", "6", "15", "1"}), sum = temp({"1", "6", "15", "1"});
  const char *stats = "90*i0 + 15*i1 + i2 + i3";
  BodyBuilder b1 = body();
  b1.load(in, "1800*i0 + 300*i1 + 20*i2 + r0");
  reduction({"1", "6", "15", "1"}, {"20"}, ReduceKind::Max, mx, stats, b1);
  BodyBuilder b2 = body();
  b2.compute(ScalarOp::Exp, {b2.compute(ScalarOp::Sub, {b2.load(in, "300*i1 + 20*i2 + r0"),
                                                        b2.load(mx, "15*i1 + i2")})});
  reduction({"1", "6", "15", "1"}, {"20"}, ReduceKind::Sum, sum, stats, b2);
  BodyBuilder b3 = body();
  uint32_t centered =
      b3.compute(ScalarOp::Sub, {b3.load(in, "300*i0 + 20*i1 + i2"), b3.load(mx, "15*i0 + i1")});
  uint32_t ex = b3.compute(ScalarOp::Exp, {centered});
  b3.compute(ScalarOp::Div, {ex, b3.load(sum, "15*i0 + i1")});
  pointwise({"6", "15", "20"}, out, "300*i0 + 20*i1 + i2", b3);
  schedule();
  ASSERT_EQ(graph.plan.kernels.size(), 1u);
  EXPECT_EQ(kernelNodes(0), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(strs(graph.plan.kernels[0].parallelRanges), (std::vector<std::string>{"90"}));
  EXPECT_EQ(graph.nodes[0].storeIndex->str(), "i0");
}

TEST_F(SchedulerTest, SymbolicSoftmaxAndSymbols) {
  ctx.setRange("s0", SymRange{2, SymRange::kUnbounded});
  ctx.setRange("s1", SymRange{2, SymRange::kUnbounded});
  uint32_t in = buffer("x", BufferKind::Input, {"s0", "s1"});
  uint32_t out = buffer("y", BufferKind::Output, {"s0", "s1"});
  buildSoftmax("s0", "s1", in, out);
  schedule();
  ASSERT_EQ(graph.plan.kernels.size(), 1u);
  EXPECT_EQ(strs(graph.plan.kernels[0].parallelRanges),
            (std::vector<std::string>{"s0"}));
  EXPECT_EQ(graph.plan.symbols, (std::vector<std::string>{"s0", "s1"}));
}

TEST_F(SchedulerTest, LayerNormIsAtMostTwoKernels) {
  uint32_t x = buffer("x", BufferKind::Input, {"128", "768"});
  uint32_t w = buffer("w", BufferKind::Input, {"768"});
  uint32_t y = buffer("y", BufferKind::Output, {"128", "768"});
  uint32_t mean = temp({"128"}), var = temp({"128"});
  BodyBuilder b1 = body();
  b1.load(x, "768*i0 + r0");
  reduction({"128"}, {"768"}, ReduceKind::Sum, mean, "i0", b1);
  BodyBuilder b2 = body();
  uint32_t d = b2.compute(ScalarOp::Sub, {b2.load(x, "768*i0 + r0"),
                                          b2.load(mean, "i0")});
  b2.compute(ScalarOp::Mul, {d, d});
  reduction({"128"}, {"768"}, ReduceKind::Sum, var, "i0", b2);
  BodyBuilder b3 = body();
  uint32_t c = b3.compute(ScalarOp::Sub, {b3.load(x, "768*i0 + i1"),
                                          b3.load(mean, "i0")});
  uint32_t n = b3.compute(ScalarOp::Mul,
                          {c, b3.compute(ScalarOp::Rsqrt, {b3.load(var, "i0")})});
  b3.compute(ScalarOp::Mul, {n, b3.load(w, "i1")});
  pointwise({"128", "768"}, y, "768*i0 + i1", b3);
  schedule();
  EXPECT_LE(graph.plan.kernels.size(), 2u);
  ASSERT_EQ(graph.plan.kernels.size(), 1u);
  EXPECT_EQ(strs(graph.plan.kernels[0].parallelRanges),
            (std::vector<std::string>{"128"}));
}

TEST_F(SchedulerTest, PointwiseChainIsOneCollapsedKernel) {
  uint32_t in = buffer("x", BufferKind::Input, {"4", "8", "16"});
  uint32_t a = temp({"4", "8", "16"}), b = temp({"4", "8", "16"});
  uint32_t out = buffer("y", BufferKind::Output, {"4", "8", "16"});
  std::string at = "128*i0 + 16*i1 + i2";
  std::vector<std::string> r = {"4", "8", "16"};
  uint32_t prev = in;
  for (uint32_t dst : {a, b, out}) {
    BodyBuilder bb = body();
    bb.compute(ScalarOp::Exp, {bb.load(prev, at)});
    pointwise(r, dst, at, bb);
    prev = dst;
  }
  schedule();
  ASSERT_EQ(graph.plan.kernels.size(), 1u);
  EXPECT_EQ(kernelNodes(0), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(strs(graph.plan.kernels[0].parallelRanges),
            (std::vector<std::string>{"512"}));
  for (const LoopNode &n : graph.nodes) {
    EXPECT_EQ(strs(n.ranges), (std::vector<std::string>{"512"}));
    EXPECT_EQ(n.storeIndex->str(), "i0");
    EXPECT_EQ(n.body.ops[0].index->str(), "i0");
  }
}

TEST_F(SchedulerTest, TransposedReadPreventsFusion) {
  uint32_t in = buffer("x", BufferKind::Input, {"32", "64"});
  uint32_t a = temp({"32", "64"});
  uint32_t out = buffer("y", BufferKind::Output, {"64", "32"});
  BodyBuilder b1 = body();
  b1.compute(ScalarOp::Exp, {b1.load(in, "64*i0 + i1")});
  pointwise({"32", "64"}, a, "64*i0 + i1", b1);
  BodyBuilder b2 = body();
  b2.compute(ScalarOp::Neg, {b2.load(a, "i0 + 64*i1")});
  pointwise({"64", "32"}, out, "32*i0 + i1", b2);
  schedule();
  ASSERT_EQ(graph.plan.kernels.size(), 2u);
  EXPECT_EQ(kernelNodes(0), (std::vector<uint32_t>{0}));
  EXPECT_EQ(kernelNodes(1), (std::vector<uint32_t>{1}));
}

TEST_F(SchedulerTest, ContiguousFourDimCollapsesToOneLoop) {
  uint32_t in = buffer("x", BufferKind::Input, {"2", "3", "4", "5"});
  uint32_t out = buffer("y", BufferKind::Output, {"2", "3", "4", "5"});
  std::string at = "60*i0 + 20*i1 + 5*i2 + i3";
  BodyBuilder b = body();
  b.compute(ScalarOp::Abs,
            {b.load(in, at)});
  pointwise({"2", "3", "4", "5"}, out, at, b);
  schedule();
  EXPECT_EQ(strs(graph.nodes[0].ranges), (std::vector<std::string>{"120"}));
  EXPECT_EQ(graph.nodes[0].storeIndex->str(), "i0");
  EXPECT_EQ(strs(graph.plan.kernels[0].parallelRanges),
            (std::vector<std::string>{"120"}));
}

TEST_F(SchedulerTest, BroadcastLoadBlocksCollapse) {
  uint32_t in = buffer("x", BufferKind::Input, {"8", "16"});
  uint32_t bias = buffer("b", BufferKind::Input, {"16"});
  uint32_t out = buffer("y", BufferKind::Output, {"8", "16"});
  BodyBuilder b = body();
  b.compute(ScalarOp::Add, {b.load(in, "16*i0 + i1"), b.load(bias, "i1")});
  pointwise({"8", "16"}, out, "16*i0 + i1", b);
  schedule();
  EXPECT_EQ(strs(graph.nodes[0].ranges), (std::vector<std::string>{"8", "16"}));
}

TEST_F(SchedulerTest, TransposedStoreIsReordered) {
  uint32_t in = buffer("x", BufferKind::Input, {"4", "8"});
  uint32_t out = buffer("y", BufferKind::Output, {"8", "4"});
  BodyBuilder b = body();
  b.compute(ScalarOp::Exp, {b.load(in, "8*i0 + i1")});
  pointwise({"4", "8"}, out, "i0 + 4*i1", b);
  schedule();
  const LoopNode &n = graph.nodes[0];
  EXPECT_EQ(strs(n.ranges), (std::vector<std::string>{"8", "4"}));
  EXPECT_EQ(n.storeIndex->str(), "4*i0 + i1");
  EXPECT_EQ(n.body.ops[0].index->str(), "i0 + 8*i1");
}

TEST_F(SchedulerTest, ReductionKeepsReducedLoopsAndCollapsesThem) {
  uint32_t in = buffer("x", BufferKind::Input, {"16", "4", "8"});
  uint32_t out = buffer("y", BufferKind::Output, {"16"});
  BodyBuilder b = body();
  b.load(in, "32*i0 + 8*r0 + r1");
  reduction({"16"}, {"4", "8"}, ReduceKind::Sum, out, "i0", b);
  schedule();
  const LoopNode &n = graph.nodes[0];
  EXPECT_EQ(strs(n.ranges), (std::vector<std::string>{"16"}));
  EXPECT_EQ(strs(n.reductionRanges), (std::vector<std::string>{"32"}));
  EXPECT_EQ(n.body.ops[0].index->str(), "32*i0 + r0");
}

TEST_F(SchedulerTest, HorizontalFusionOfSiblings) {
  uint32_t in = buffer("x", BufferKind::Input, {"256", "64"});
  uint32_t o1 = buffer("y1", BufferKind::Output, {"256", "64"});
  uint32_t o2 = buffer("y2", BufferKind::Output, {"256", "64"});
  for (uint32_t out : {o1, o2}) {
    BodyBuilder b = body();
    b.compute(out == o1 ? ScalarOp::Exp : ScalarOp::Neg,
              {b.load(in, "64*i0 + i1")});
    pointwise({"256", "64"}, out, "64*i0 + i1", b);
  }
  schedule();
  ASSERT_EQ(graph.plan.kernels.size(), 1u);
  EXPECT_EQ(kernelNodes(0), (std::vector<uint32_t>{0, 1}));
}

TEST_F(SchedulerTest, SiblingsWithTooLittleSharedWorkStayApart) {
  uint32_t in = buffer("x", BufferKind::Input, {"1", "4096"});
  uint32_t in2 = buffer("x2", BufferKind::Input, {"1", "300"});
  uint32_t o1 = buffer("y1", BufferKind::Output, {"1", "4096"});
  uint32_t o2 = buffer("y2", BufferKind::Output, {"1", "300"});
  BodyBuilder b1 = body();
  b1.compute(ScalarOp::Exp, {b1.load(in, "i1")});
  pointwise({"1", "4096"}, o1, "i1", b1);
  BodyBuilder b2 = body();
  b2.compute(ScalarOp::Exp, {b2.load(in2, "i1")});
  pointwise({"1", "300"}, o2, "i1", b2);
  schedule();
  EXPECT_EQ(graph.plan.kernels.size(), 2u);
}

TEST_F(SchedulerTest, OrderIsPreservedAroundExtern) {
  uint32_t in = buffer("x", BufferKind::Input, {"64", "64"});
  uint32_t w = buffer("w", BufferKind::Input, {"64", "64"});
  uint32_t a = temp({"64", "64"}), m = temp({"64", "64"});
  uint32_t out = buffer("y", BufferKind::Output, {"64", "64"});
  BodyBuilder b1 = body();
  b1.compute(ScalarOp::Exp, {b1.load(in, "64*i0 + i1")});
  pointwise({"64", "64"}, a, "64*i0 + i1", b1);
  externNode(ops::aten_mm_default, {a, w}, m);
  BodyBuilder b2 = body();
  b2.compute(ScalarOp::Mul, {b2.load(m, "64*i0 + i1"), b2.load(a, "64*i0 + i1")});
  pointwise({"64", "64"}, out, "64*i0 + i1", b2);
  schedule();
  ASSERT_EQ(graph.plan.steps.size(), 3u);
  EXPECT_EQ(graph.plan.steps[0].kind, PlanStep::Kind::Kernel);
  EXPECT_EQ(graph.plan.steps[1].kind, PlanStep::Kind::Extern);
  EXPECT_EQ(graph.plan.steps[1].index, 1u);
  EXPECT_EQ(graph.plan.steps[2].kind, PlanStep::Kind::Kernel);
  EXPECT_EQ(kernelNodes(0), (std::vector<uint32_t>{0}));
  EXPECT_EQ(kernelNodes(1), (std::vector<uint32_t>{2}));
  EXPECT_EQ(graph.plan.kernels[1].name, "g_k1");
}

TEST_F(SchedulerTest, IndependentNodeMovesPastExtern) {
  uint32_t in = buffer("x", BufferKind::Input, {"64", "64"});
  uint32_t w = buffer("w", BufferKind::Input, {"64", "64"});
  uint32_t a = temp({"64", "64"});
  uint32_t m = buffer("m", BufferKind::Output, {"64", "64"});
  uint32_t o2 = buffer("y2", BufferKind::Output, {"64", "64"});
  BodyBuilder b1 = body();
  b1.compute(ScalarOp::Exp, {b1.load(in, "64*i0 + i1")});
  pointwise({"64", "64"}, a, "64*i0 + i1", b1);
  externNode(ops::aten_mm_default, {a, w}, m);
  BodyBuilder b2 = body();
  b2.compute(ScalarOp::Neg, {b2.load(in, "64*i0 + i1")});
  pointwise({"64", "64"}, o2, "64*i0 + i1", b2);
  schedule();
  ASSERT_EQ(graph.plan.steps.size(), 2u);
  EXPECT_EQ(kernelNodes(0), (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(graph.plan.steps[1].kind, PlanStep::Kind::Extern);
}

TEST_F(SchedulerTest, ScatterSharesAKernelOnlyOnTheGpu) {
  for (TargetDevice device : {TargetDevice::CPU, TargetDevice::CUDA}) {
    startGraph();
    addCacheWrite();
    uint32_t q = buffer("q", BufferKind::Input, {"8", "16"});
    uint32_t out = buffer("y", BufferKind::Output, {"8", "16"});
    BodyBuilder b2 = body();
    b2.compute(ScalarOp::Neg, {b2.load(q, "16*i0 + i1")});
    pointwise({"8", "16"}, out, "16*i0 + i1", b2);
    scheduleFor(device);
    if (device == TargetDevice::CUDA) {
      // One block runs both: no common prefix, few points.
      ASSERT_EQ(graph.plan.kernels.size(), 1u);
      EXPECT_EQ(kernelNodes(0), (std::vector<uint32_t>{0, 1}));
      EXPECT_TRUE(graph.plan.kernels[0].parallelRanges.empty());
    } else {
      ASSERT_EQ(graph.plan.kernels.size(), 2u);
      EXPECT_EQ(kernelNodes(0), (std::vector<uint32_t>{0}));
      EXPECT_TRUE(graph.plan.kernels[0].parallelRanges.empty());
    }
  }
}

TEST_F(SchedulerTest, NothingReadsAScatterInItsKernel) {
  uint32_t cache = addCacheWrite();
  uint32_t out = buffer("y", BufferKind::Output, {"4", "16"});
  // Reads the first row of the cache, which the scatter may have written.
  BodyBuilder b2 = body();
  b2.compute(ScalarOp::Neg, {b2.load(cache, "1024*i0 + i1")});
  pointwise({"4", "16"}, out, "16*i0 + i1", b2);
  scheduleFor(TargetDevice::CUDA);
  ASSERT_EQ(graph.plan.kernels.size(), 2u);
  EXPECT_EQ(kernelNodes(0), (std::vector<uint32_t>{0}));
  EXPECT_EQ(kernelNodes(1), (std::vector<uint32_t>{1}));
}

/// Row sums of x [R, 16] and x minus each row's sum, the sums' loops
/// [8, 8] where R is 64 (as a pooling's are) so that no prefix is common to
/// both nodes. One GPU block may run both when there is one row: with 64
/// it would combine the 64 sums one after another, so each node gets a
/// kernel of its own.
TEST_F(SchedulerTest, OneBlockTakesReductionsOfFewRowsOnly) {
  for (bool manyRows : {false, true}) {
    startGraph();
    std::string rows = manyRows ? "64" : "1";
    uint32_t in = buffer("x", BufferKind::Input, {rows, "16"});
    uint32_t sum = temp({rows});
    uint32_t out = buffer("y", BufferKind::Output, {rows, "16"});
    BodyBuilder b1 = body();
    if (manyRows) {
      b1.load(in, "128*i0 + 16*i1 + r0");
      reduction({"8", "8"}, {"16"}, ReduceKind::Sum, sum, "8*i0 + i1", b1);
    } else {
      b1.load(in, "r0");
      reduction({"1"}, {"16"}, ReduceKind::Sum, sum, "i0", b1);
    }
    BodyBuilder b2 = body();
    b2.compute(ScalarOp::Sub, {b2.load(in, "16*i0 + i1"), b2.load(sum, "i0")});
    pointwise({rows, "16"}, out, "16*i0 + i1", b2);
    scheduleFor(TargetDevice::CUDA);
    ASSERT_EQ(graph.plan.kernels.size(), manyRows ? 2u : 1u) << rows << " rows";
    if (!manyRows) {
      EXPECT_TRUE(graph.plan.kernels[0].parallelRanges.empty());
    }
  }
}

/// Forty independent nodes over the same rows (a load-time program's
/// folded batch norms): one kernel on the CPU, kernels of at most 32 nodes
/// on a GPU, where ptxas's time grows faster than a kernel's length.
TEST_F(SchedulerTest, GpuKernelsHoldAtMost32Nodes) {
  for (TargetDevice device : {TargetDevice::CPU, TargetDevice::CUDA}) {
    startGraph();
    for (int i = 0; i < 40; ++i) {
      uint32_t in = buffer("x" + std::to_string(i), BufferKind::Input, {"128", "64"});
      uint32_t out = buffer("y" + std::to_string(i), BufferKind::Output, {"128", "64"});
      BodyBuilder b = body();
      b.compute(ScalarOp::Neg, {b.load(in, "64*i0 + i1")});
      pointwise({"128", "64"}, out, "64*i0 + i1", b);
    }
    scheduleFor(device);
    if (device == TargetDevice::CPU) {
      EXPECT_EQ(graph.plan.kernels.size(), 1u);
    } else {
      ASSERT_EQ(graph.plan.kernels.size(), 2u);
      EXPECT_EQ(kernelNodes(0).size(), 32u);
      EXPECT_EQ(kernelNodes(1).size(), 8u);
    }
  }
}

TEST_F(SchedulerTest, InplaceCandidateForDyingInput) {
  uint32_t in = buffer("x", BufferKind::Input, {"64", "64"});
  uint32_t a = temp({"64", "64"}), b = temp({"64", "64"});
  uint32_t out = buffer("y", BufferKind::Output, {"64", "64"});
  std::string at = "64*i0 + i1";
  BodyBuilder b1 = body();
  b1.compute(ScalarOp::Neg, {b1.load(in, at)});
  pointwise({"64", "64"}, a, at, b1);
  BodyBuilder b2 = body();
  b2.compute(ScalarOp::Exp, {b2.load(a, at)});
  pointwise({"64", "64"}, b, at, b2);
  BodyBuilder b3 = body();
  b3.compute(ScalarOp::Add, {b3.load(b, at), b3.load(in, at)});
  pointwise({"64", "64"}, out, at, b3);
  schedule();
  ASSERT_EQ(graph.plan.steps.size(), 1u);
  EXPECT_EQ(graph.plan.steps[0].inplace,
            (std::vector<InplacePair>{{b, a}}));
}

TEST_F(SchedulerTest, NoInplaceWhenReadElsewhere) {
  uint32_t in = buffer("x", BufferKind::Input, {"64", "64"});
  uint32_t a = temp({"64", "64"}), b = temp({"64", "64"});
  uint32_t out = buffer("y", BufferKind::Output, {"64", "64"});
  BodyBuilder b1 = body();
  b1.compute(ScalarOp::Neg, {b1.load(in, "64*i0 + i1")});
  pointwise({"64", "64"}, a, "64*i0 + i1", b1);
  BodyBuilder b2 = body();
  b2.compute(ScalarOp::Add, {b2.load(a, "64*i0 + i1"), b2.load(a, "64*i0")});
  pointwise({"64", "64"}, b, "64*i0 + i1", b2);
  BodyBuilder b3 = body();
  b3.compute(ScalarOp::Exp, {b3.load(b, "64*i0 + i1")});
  pointwise({"64", "64"}, out, "64*i0 + i1", b3);
  schedule();
  for (const PlanStep &s : graph.plan.steps)
    for (const InplacePair &p : s.inplace)
      EXPECT_NE(p.input, a);
}

/// Column sums of a row-major [3136, 96] matrix (a mean over the positions
/// of a channels-last tensor): on a CPU, a zero fill and a node adding row
/// after row, its channels innermost; on a GPU, still a reduction.
TEST_F(SchedulerTest, StridedSumAccumulatesRowByRowOnTheCpu) {
  for (TargetDevice device : {TargetDevice::CPU, TargetDevice::CUDA}) {
    startGraph();
    uint32_t in = buffer("x", BufferKind::Input, {"3136", "96"});
    uint32_t sum = temp({"96"});
    uint32_t out = buffer("y", BufferKind::Output, {"96"});
    BodyBuilder b1 = body();
    b1.load(in, "i0 + 96*r0");
    reduction({"96"}, {"3136"}, ReduceKind::Sum, sum, "i0", b1);
    BodyBuilder b2 = body();
    b2.compute(ScalarOp::Exp, {b2.load(sum, "i0")});
    pointwise({"96"}, out, "i0", b2);
    scheduleFor(device);
    if (device == TargetDevice::CUDA) {
      EXPECT_EQ(graph.nodes[0].kind, LoopNode::Kind::Reduction);
      continue;
    }
    ASSERT_EQ(graph.nodes.size(), 3u);
    EXPECT_EQ(graph.nodes[0].kind, LoopNode::Kind::Pointwise);
    EXPECT_EQ(graph.nodes[0].output, sum);
    const LoopNode &acc = graph.nodes[1];
    EXPECT_EQ(acc.kind, LoopNode::Kind::Pointwise);
    EXPECT_EQ(acc.combine, StoreCombine::Add);
    EXPECT_EQ(strs(acc.ranges), (std::vector<std::string>{"3136", "96"}));
    EXPECT_EQ(acc.storeIndex->str(), "i1");
    EXPECT_EQ(acc.body.ops[0].index->str(), "96*i0 + i1");
  }
}

TEST_F(SchedulerTest, NoFuseGivesOneKernelPerNode) {
  uint32_t in = buffer("x", BufferKind::Input, {"64", "100"});
  uint32_t out = buffer("y", BufferKind::Output, {"64", "100"});
  buildSoftmax("64", "100", in, out);
  ScheduleOptions options;
  options.fuse = false;
  schedule(options);
  ASSERT_EQ(graph.plan.kernels.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(kernelNodes(k), (std::vector<uint32_t>{uint32_t(k)}));
    EXPECT_EQ(graph.plan.kernels[k].name, "g_k" + std::to_string(k));
  }
  EXPECT_EQ(strs(graph.plan.kernels[2].parallelRanges),
            (std::vector<std::string>{"64", "100"}));
}

TEST_F(SchedulerTest, MatmulBiasReluBecomesPostOps) {
  auto [m, bias, out] = matmulWithBias();
  BodyBuilder b = body();
  uint32_t sum = b.compute(ScalarOp::Add, {b.load(m, "64*i0 + i1"),
                                           b.load(bias, "i1")});
  b.compute(ScalarOp::Maximum, {sum, b.constant(0)});
  pointwise({"32", "64"}, out, "64*i0 + i1", b);
  schedule();
  ASSERT_EQ(graph.plan.steps.size(), 1u);
  EXPECT_EQ(graph.plan.steps[0].kind, PlanStep::Kind::Extern);
  EXPECT_TRUE(graph.plan.kernels.empty());
  ASSERT_EQ(graph.nodes.size(), 1u) << "the folded epilogue is gone";
  const LoopNode &mm = graph.nodes[0];
  ASSERT_EQ(mm.postOps.size(), 2u);
  EXPECT_EQ(mm.postOps[0].kind, PostOp::Kind::AddBias);
  EXPECT_EQ(mm.postOps[1].kind, PostOp::Kind::Relu);
  EXPECT_EQ(mm.inputs.at(mm.postOps[0].input).buffer, bias);
  EXPECT_EQ(mm.outputs[0].buffer, out);
}

/// mm, then relu, then + residual: oneDNN applies any chain, cuBLASLt only
/// adds before its activation, so on a GPU the relu folds and the add stays.
TEST_F(SchedulerTest, GpuFoldsOnlyWhatCublasLtApplies) {
  for (TargetDevice device : {TargetDevice::CPU, TargetDevice::CUDA}) {
    startGraph();
    uint32_t x = buffer("x", BufferKind::Input, {"32", "16"});
    uint32_t w = buffer("w", BufferKind::Input, {"16", "64"});
    uint32_t res = buffer("r", BufferKind::Input, {"32", "64"});
    uint32_t m = temp({"32", "64"});
    uint32_t a = temp({"32", "64"});
    uint32_t out = buffer("y", BufferKind::Output, {"32", "64"});
    externNode(ops::aten_mm_default, {x, w}, m);
    BodyBuilder b1 = body();
    b1.compute(ScalarOp::Maximum, {b1.load(m, "64*i0 + i1"), b1.constant(0)});
    pointwise({"32", "64"}, a, "64*i0 + i1", b1);
    BodyBuilder b2 = body();
    b2.compute(ScalarOp::Add, {b2.load(a, "64*i0 + i1"), b2.load(res, "64*i0 + i1")});
    pointwise({"32", "64"}, out, "64*i0 + i1", b2);
    scheduleFor(device);
    const LoopNode &mm = graph.nodes[0];
    if (device == TargetDevice::CPU) {
      ASSERT_EQ(mm.postOps.size(), 2u);
      EXPECT_EQ(mm.postOps[1].kind, PostOp::Kind::Add);
    } else {
      ASSERT_EQ(mm.postOps.size(), 1u);
      EXPECT_EQ(mm.postOps[0].kind, PostOp::Kind::Relu);
      EXPECT_EQ(graph.plan.steps.size(), 2u) << "the add runs as a kernel";
    }
  }
}

/// mm, then x * sigmoid(x): a kernel on every device (gc's SiLU is
/// cheaper than oneDNN's swish post-op; cuBLASLt has no such epilogue).
TEST_F(SchedulerTest, SiluStaysAKernel) {
  for (TargetDevice device : {TargetDevice::CPU, TargetDevice::CUDA}) {
    startGraph();
    uint32_t m = matmul32x64();
    uint32_t out = buffer("y", BufferKind::Output, {"32", "64"});
    BodyBuilder b = body();
    uint32_t v = b.load(m, "64*i0 + i1");
    b.compute(ScalarOp::Mul, {b.compute(ScalarOp::Sigmoid, {v}), v});
    pointwise({"32", "64"}, out, "64*i0 + i1", b);
    scheduleFor(device);
    EXPECT_TRUE(graph.nodes[0].postOps.empty());
    EXPECT_EQ(graph.plan.steps.size(), 2u) << "the SiLU runs as a kernel";
  }
}

/// x * sigmoid(y) is a gate, not a SiLU: it stays a kernel.
TEST_F(SchedulerTest, SigmoidOfAnotherValueIsNotSwish) {
  uint32_t m = matmul32x64();
  uint32_t g = buffer("g", BufferKind::Input, {"32", "64"});
  uint32_t out = buffer("y", BufferKind::Output, {"32", "64"});
  BodyBuilder b = body();
  b.compute(ScalarOp::Mul, {b.load(m, "64*i0 + i1"),
                            b.compute(ScalarOp::Sigmoid, {b.load(g, "64*i0 + i1")})});
  pointwise({"32", "64"}, out, "64*i0 + i1", b);
  schedule();
  EXPECT_TRUE(graph.nodes[0].postOps.empty());
  EXPECT_EQ(graph.plan.steps.size(), 2u);
}

TEST_F(SchedulerTest, EpilogueWithOtherWorkIsNotFolded) {
  uint32_t x = buffer("x", BufferKind::Input, {"32", "16"});
  uint32_t w = buffer("w", BufferKind::Input, {"16", "64"});
  uint32_t m = temp({"32", "64"});
  uint32_t out = buffer("y", BufferKind::Output, {"32", "64"});
  externNode(ops::aten_mm_default, {x, w}, m);
  BodyBuilder b = body();
  b.compute(ScalarOp::Exp, {b.load(m, "64*i0 + i1")});
  pointwise({"32", "64"}, out, "64*i0 + i1", b);
  ScheduleOptions options;
  schedule(options);
  EXPECT_TRUE(graph.nodes[0].postOps.empty());
  ASSERT_EQ(graph.plan.steps.size(), 2u);
  EXPECT_EQ(graph.nodes[0].outputs[0].buffer, m);
}

/// BERT's and GPT-2's feed-forward: mm, bias, then GELU as torch decomposes
/// it, 0.5 v (1 + erf(v / sqrt 2)) or with tanh; both fold into the extern.
/// A GELU with another constant (here 0.6 for 1/sqrt 2) is not one.
TEST_F(SchedulerTest, MatmulBiasGeluBecomesPostOps) {
  for (int form = 0; form < 3; ++form) {
    graph = LoopGraph();
    graph.name = "g";
    auto [m, bias, out] = matmulWithBias();
    BodyBuilder b = body();
    uint32_t v = b.compute(ScalarOp::Add, {b.load(m, "64*i0 + i1"), b.load(bias, "i1")});
    uint32_t half = b.compute(ScalarOp::Mul, {v, b.constant(0.5)});
    uint32_t f;
    if (form == 1) {
      uint32_t cube = b.compute(ScalarOp::Pow, {v, b.constant(3.0)});
      uint32_t sum =
          b.compute(ScalarOp::Add, {v, b.compute(ScalarOp::Mul, {cube, b.constant(0.044715)})});
      f = b.compute(ScalarOp::Tanh,
                    {b.compute(ScalarOp::Mul, {sum, b.constant(0.7978845608028654)})});
    } else {
      double scale = form == 0 ? 0.7071067811865476 : 0.6;
      f = b.compute(ScalarOp::Erf, {b.compute(ScalarOp::Mul, {v, b.constant(scale)})});
    }
    b.compute(ScalarOp::Mul, {half, b.compute(ScalarOp::Add, {f, b.constant(1.0)})});
    pointwise({"32", "64"}, out, "64*i0 + i1", b);
    schedule();
    const LoopNode &mm = graph.nodes[0];
    if (form == 2) {
      EXPECT_TRUE(mm.postOps.empty());
      EXPECT_EQ(graph.nodes.size(), 2u);
      continue;
    }
    ASSERT_EQ(graph.nodes.size(), 1u) << "form " << form;
    ASSERT_EQ(mm.postOps.size(), 2u);
    EXPECT_EQ(mm.postOps[0].kind, PostOp::Kind::AddBias);
    EXPECT_EQ(mm.postOps[1].kind, form == 0 ? PostOp::Kind::GeluErf : PostOp::Kind::GeluTanh);
    EXPECT_EQ(mm.outputs[0].buffer, out);
  }
}

/// --precision=bf16 leaves a bfloat16 product whose epilogue widens it:
/// cast to float32, add a float32 bias, ReLU, then store float32 or cast
/// back. On the CPU that chain folds (oneDNN applies post-ops to float32
/// sums); a widened chain of adds alone stays a kernel (measured slower
/// folded: bert_base, docs/PERFORMANCE.md), and a GPU folds none of it.
TEST_F(SchedulerTest, WidenedEpilogueOfA16BitProductFoldsOnTheCpu) {
  for (TargetDevice device : {TargetDevice::CPU, TargetDevice::CUDA})
    for (DType stored : {DType::BFloat16, DType::Float32})
      for (bool relu : {true, false}) {
        startGraph();
        uint32_t x = buffer("x", BufferKind::Input, {"32", "16"});
        uint32_t w = buffer("w", BufferKind::Input, {"16", "64"});
        uint32_t m = temp({"32", "64"});
        for (uint32_t b : {x, w, m})
          graph.buffers[b].dtype = DType::BFloat16;
        uint32_t bias = buffer("bias", BufferKind::Input, {"64"});
        uint32_t out = buffer("y", BufferKind::Output, {"32", "64"});
        graph.buffers[out].dtype = stored;
        externNode(ops::aten_mm_default, {x, w}, m);
        BodyBuilder b = body();
        uint32_t v = b.compute(ScalarOp::Add, {b.cast(b.load(m, "64*i0 + i1", DType::BFloat16),
                                                      DType::Float32),
                                               b.load(bias, "i1")});
        if (relu)
          v = b.compute(ScalarOp::Maximum, {v, b.constant(0)});
        if (stored != DType::Float32)
          b.cast(v, stored);
        pointwise({"32", "64"}, out, "64*i0 + i1", b);
        scheduleFor(device);
        const LoopNode &mm = graph.nodes[0];
        std::string label = std::string(device == TargetDevice::CPU ? "cpu" : "cuda") +
                            (relu ? " relu " : " bias ") + std::string(dtypeName(stored));
        if (device == TargetDevice::CUDA || !relu) {
          EXPECT_TRUE(mm.postOps.empty()) << label;
          EXPECT_EQ(graph.plan.steps.size(), 2u) << label;
          continue;
        }
        ASSERT_EQ(graph.nodes.size(), 1u) << label;
        ASSERT_EQ(mm.postOps.size(), 2u) << label;
        EXPECT_EQ(mm.postOps[0].kind, PostOp::Kind::AddBias);
        EXPECT_EQ(mm.inputs.at(mm.postOps[0].input).type.dtype, DType::Float32);
        EXPECT_EQ(mm.postOps[1].kind, PostOp::Kind::Relu);
        EXPECT_EQ(mm.outputs[0].buffer, out);
        EXPECT_EQ(mm.outputs[0].type.dtype, stored) << label;
      }
}

/// GPT-2's logits: a matrix product reshaped into the user output. The copy
/// goes: the extern writes the output through its own [32, 64] view.
TEST_F(SchedulerTest, ReshapeCopyOfAnExternIntoAnOutputIsFolded) {
  uint32_t x = buffer("x", BufferKind::Input, {"32", "16"});
  uint32_t w = buffer("w", BufferKind::Input, {"16", "64"});
  uint32_t m = temp({"32", "64"});
  uint32_t out = buffer("y", BufferKind::Output, {"1", "32", "64"});
  externNode(ops::aten_mm_default, {x, w}, m);
  BodyBuilder b = body();
  b.load(m, "i0");
  pointwise({"2048"}, out, "i0", b);
  schedule();
  ASSERT_EQ(graph.nodes.size(), 1u);
  EXPECT_TRUE(graph.nodes[0].postOps.empty());
  EXPECT_EQ(graph.nodes[0].outputs[0].buffer, out);
  EXPECT_EQ(strs(graph.nodes[0].outputs[0].type.sizes), (std::vector<std::string>{"32", "64"}));
}

/// A copy into part of a larger buffer stays: the extern would write all of
/// its result there.
TEST_F(SchedulerTest, CopyIntoPartOfABufferIsNotFolded) {
  uint32_t x = buffer("x", BufferKind::Input, {"32", "16"});
  uint32_t w = buffer("w", BufferKind::Input, {"16", "64"});
  uint32_t m = temp({"32", "64"});
  uint32_t out = buffer("y", BufferKind::Output, {"4096"});
  externNode(ops::aten_mm_default, {x, w}, m);
  BodyBuilder b = body();
  b.load(m, "i0");
  pointwise({"2048"}, out, "i0", b);
  schedule();
  ASSERT_EQ(graph.nodes.size(), 2u);
  EXPECT_EQ(graph.nodes[0].outputs[0].buffer, m);
}

TEST_F(SchedulerTest, PostOpsCanBeTurnedOff) {
  uint32_t x = buffer("x", BufferKind::Input, {"32", "16"});
  uint32_t w = buffer("w", BufferKind::Input, {"16", "64"});
  uint32_t m = temp({"32", "64"});
  uint32_t out = buffer("y", BufferKind::Output, {"32", "64"});
  externNode(ops::aten_mm_default, {x, w}, m);
  BodyBuilder b = body();
  b.compute(ScalarOp::Maximum, {b.load(m, "64*i0 + i1"), b.constant(0)});
  pointwise({"32", "64"}, out, "64*i0 + i1", b);
  ScheduleOptions options;
  options.externPostOps = false;
  schedule(options);
  EXPECT_TRUE(graph.nodes[0].postOps.empty());
  EXPECT_EQ(graph.plan.steps.size(), 2u);
}

TEST_F(SchedulerTest, Deterministic) {
  uint32_t in = buffer("x", BufferKind::Input, {"64", "100"});
  uint32_t out = buffer("y", BufferKind::Output, {"64", "100"});
  buildSoftmax("64", "100", in, out);
  LoopGraph copy = graph;
  schedule();
  Error err = scheduleGraph(ctx, copy, {});
  ASSERT_FALSE(err);
  EXPECT_EQ(graph.plan, copy.plan);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    EXPECT_EQ(graph.nodes[n].ranges, copy.nodes[n].ranges);
    EXPECT_EQ(graph.nodes[n].reductionRanges, copy.nodes[n].reductionRanges);
    EXPECT_EQ(graph.nodes[n].storeIndex, copy.nodes[n].storeIndex);
    EXPECT_EQ(graph.nodes[n].body, copy.nodes[n].body);
  }
}

} // namespace
