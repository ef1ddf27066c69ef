// The work the plan carries per step (gc/Plan/StepWork.h), the profile that
// adds it up over runs, and the roofline report set against given peaks.
#include "LoopGraphMaker.h"

#include "gc/Plan/StepWork.h"
#include "gc/Runtime/Roofline.h"

#include <gtest/gtest.h>

namespace gc::test {
namespace {

/// A kernel step of one node over `ranges` (and `reductionRanges`), whose
/// body loads each of `loads` and applies `ops` float additions to them.
void addKernel(LoopGraphMaker &g, LoopNode::Kind kind, const Exprs &ranges,
               const Exprs &reductionRanges, std::vector<uint32_t> loads, size_t ops,
               uint32_t output) {
  LoopNode n;
  n.kind = kind;
  n.name = "n" + std::to_string(g.graph.nodes.size());
  n.ranges = ranges;
  n.reductionRanges = reductionRanges;
  for (uint32_t b : loads) {
    BodyOp load;
    load.kind = BodyOp::Kind::Load;
    load.buffer = b;
    load.index = g.k(0);
    n.body.ops.push_back(load);
  }
  for (size_t i = 0; i < ops; ++i) {
    BodyOp add;
    add.kind = BodyOp::Kind::Compute;
    add.op = ScalarOp::Add;
    add.operands = {0, static_cast<uint32_t>(n.body.ops.size() - 1)};
    n.body.ops.push_back(add);
  }
  n.body.result = static_cast<uint32_t>(n.body.ops.size() - 1);
  n.output = output;
  n.storeIndex = g.k(0);
  g.graph.nodes.push_back(std::move(n));
  g.graph.plan.kernels.push_back(
      {"k" + std::to_string(g.graph.plan.kernels.size()),
       {static_cast<uint32_t>(g.graph.nodes.size() - 1)}});
  g.graph.plan.steps.push_back(
      {PlanStep::Kind::Kernel, static_cast<uint32_t>(g.graph.plan.kernels.size() - 1)});
}

int64_t flopsOf(const LoopGraphMaker &g, size_t step) {
  return stepWork(g.graph, g.graph.plan.steps[step]).flops.constant().value_or(-1);
}
int64_t bytesOf(const LoopGraphMaker &g, size_t step) {
  return stepWork(g.graph, g.graph.plan.steps[step]).bytes.constant().value_or(-1);
}

TEST(StepWork, MatrixProductIsTwoMNK) {
  LoopGraphMaker g;
  uint32_t a = g.input("a", DType::Float32, g.ks({6, 5})), b = g.input("b", DType::Float32, g.ks({5, 7}));
  uint32_t out = g.buffer("out", BufferKind::Output, DType::Float32, g.ks({6, 7}));
  g.callNode(LoopNode::Kind::Extern, ops::aten_mm_default, {g.whole(a), g.whole(b)}, {g.whole(out)});
  EXPECT_EQ(flopsOf(g, 0), 2 * 6 * 7 * 5);
  EXPECT_EQ(bytesOf(g, 0), 4 * (6 * 5 + 5 * 7 + 6 * 7));
}

/// query [2, 3, 5, 8] (L = 5, E = 8), key [2, 3, 7, 8] (S = 7), value
/// [2, 3, 7, 4]: each of the 2 x 3 x 5 result rows takes 7 x 8 multiply-adds
/// for its scores and 7 x 4 for the scores times the values.
TEST(StepWork, AttentionCountsBothProducts) {
  LoopGraphMaker g;
  uint32_t q = g.input("q", DType::Float32, g.ks({2, 3, 5, 8}));
  uint32_t k = g.input("k", DType::Float32, g.ks({2, 3, 7, 8}));
  uint32_t v = g.input("v", DType::Float32, g.ks({2, 3, 7, 4}));
  uint32_t out = g.buffer("out", BufferKind::Output, DType::Float32, g.ks({2, 3, 5, 4}));
  g.callNode(LoopNode::Kind::Extern, ops::aten_scaled_dot_product_attention_default,
             {g.whole(q), g.whole(k), g.whole(v)}, {g.whole(out)});
  EXPECT_EQ(flopsOf(g, 0), 2 * (2 * 3 * 5) * 7 * (8 + 4));
}

TEST(StepWork, PostOpsAddOneOperationPerOutputElement) {
  LoopGraphMaker g;
  uint32_t a = g.input("a", DType::Float32, g.ks({2, 3})), b = g.input("b", DType::Float32, g.ks({3, 4}));
  uint32_t bias = g.input("bias", DType::Float32, g.ks({4}));
  uint32_t out = g.buffer("out", BufferKind::Output, DType::Float32, g.ks({2, 4}));
  LoopNode &n = g.callNode(LoopNode::Kind::Extern, ops::aten_mm_default,
                           {g.whole(a), g.whole(b), g.whole(bias)}, {g.whole(out)});
  n.postOps = {{PostOp::Kind::AddBias, 2}, {PostOp::Kind::Relu, 0}};
  EXPECT_EQ(flopsOf(g, 0), 2 * 2 * 4 * 3 + 2 * 2 * 4);
  EXPECT_EQ(bytesOf(g, 0), 4 * (2 * 3 + 3 * 4 + 4 + 2 * 4));
}

TEST(StepWork, GatedPairCountsBothProducts) {
  LoopGraphMaker g;
  uint32_t a = g.input("a", DType::Float32, g.ks({2, 3})), w = g.input("w", DType::Float32, g.ks({3, 4}));
  uint32_t u = g.input("u", DType::Float32, g.ks({3, 4}));
  uint32_t out = g.buffer("out", BufferKind::Output, DType::Float32, g.ks({2, 4}));
  LoopNode &n = g.callNode(LoopNode::Kind::Extern, ops::aten_mm_default,
                           {g.whole(a), g.whole(w), g.whole(u)}, {g.whole(out)});
  n.postOps = {{PostOp::Kind::GatedSilu, 2}};
  EXPECT_EQ(flopsOf(g, 0), 2 * (2 * 2 * 4 * 3) + 2 * 4);
  EXPECT_EQ(bytesOf(g, 0), 4 * (2 * 3 + 2 * 3 * 4 + 2 * 4));
}

TEST(StepWork, GroupedConvolutionCountsItsWindowPerGroup) {
  // N=2, Cin=4 in 2 groups, Cout=6, a 3x3 window, 8x8 in, 6x6 out.
  LoopGraphMaker g;
  uint32_t x = g.input("x", DType::Float32, g.ks({2, 4, 8, 8}));
  uint32_t w = g.input("w", DType::Float32, g.ks({6, 2, 3, 3}));
  uint32_t out = g.buffer("out", BufferKind::Output, DType::Float32, g.ks({2, 6, 6, 6}));
  g.callNode(LoopNode::Kind::Extern, ops::aten_convolution_default, {g.whole(x), g.whole(w)},
             {g.whole(out)});
  EXPECT_EQ(flopsOf(g, 0), 2 * 2 * 6 * 6 * 6 * (4 / 2) * 3 * 3);
  EXPECT_EQ(bytesOf(g, 0), 4 * (2 * 4 * 8 * 8 + 6 * 2 * 3 * 3 + 2 * 6 * 6 * 6));
}

TEST(StepWork, FallbackStepsMoveBytesButCountNoOperations) {
  LoopGraphMaker g;
  uint32_t x = g.input("x", DType::BFloat16, g.ks({10}));
  uint32_t out = g.buffer("out", BufferKind::Output, DType::BFloat16, g.ks({10}));
  g.callNode(LoopNode::Kind::Fallback, ops::aten_cumsum_default, {g.whole(x)}, {g.whole(out)});
  EXPECT_EQ(flopsOf(g, 0), 0);
  EXPECT_EQ(bytesOf(g, 0), 2 * (10 + 10));
}

TEST(StepWork, PointwiseKernelIsElementsTimesOperations) {
  LoopGraphMaker g;
  uint32_t a = g.input("a", DType::Float32, g.ks({3, 4})), b = g.input("b", DType::Float32, g.ks({4}));
  uint32_t out = g.buffer("out", BufferKind::Output, DType::Float32, g.ks({3, 4}));
  // a is loaded twice but moves once.
  addKernel(g, LoopNode::Kind::Pointwise, g.ks({3, 4}), {}, {a, b, a}, 3, out);
  EXPECT_EQ(flopsOf(g, 0), 3 * 4 * 3);
  EXPECT_EQ(bytesOf(g, 0), 4 * (12 + 4 + 12));
}

TEST(StepWork, ReductionCountsOneCombinePerInput) {
  LoopGraphMaker g;
  uint32_t x = g.input("x", DType::Float32, g.ks({5, 9}));
  uint32_t out = g.buffer("out", BufferKind::Output, DType::Float32, g.ks({5}));
  addKernel(g, LoopNode::Kind::Reduction, g.ks({5}), g.ks({9}), {x}, 0, out);
  EXPECT_EQ(flopsOf(g, 0), 5 * 9);
  EXPECT_EQ(bytesOf(g, 0), 4 * (5 * 9 + 5));
}

TEST(StepWork, SymbolicSizesStayInThePlanAndTheProfileAddsThemUp) {
  // mm of [s0, 8] by [8, 3]: the plan's program gives 2 * s0 * 3 * 8 for
  // the s0 of each run, and the profile sums the runs after the first,
  // whose one-time set-up it keeps apart.
  LoopGraphMaker g;
  const SymExpr *s0 = g.sym("s0");
  uint32_t a = g.input("a", DType::Float32, {s0, g.k(8)});
  uint32_t b = g.input("b", DType::Float32, g.ks({8, 3}));
  uint32_t out = g.buffer("out", BufferKind::Output, DType::Float32, {s0, g.k(3)});
  g.callNode(LoopNode::Kind::Extern, ops::aten_mm_default, {g.whole(a), g.whole(b)}, {g.whole(out)})
      .args = {tensorArg("self", 0), tensorArg("mat2", 1)};
  g.output("out", out, g.whole(out).type);
  EXPECT_FALSE(stepWork(g.graph, g.graph.plan.steps[0]).flops.constant());
  FakeLibrary lib;
  RuntimeOptions options;
  options.threads = 1;
  options.profile = true;
  auto exec = g.executor(lib, options);
  ASSERT_TRUE(bool(exec)) << exec.error().message();
  std::vector<float> bData = randomFloats(24, 1);
  for (int64_t rows : {2, 5, 7}) {
    std::vector<float> aData = randomFloats(rows * 8, 2), outData(rows * 3);
    std::vector<TensorRef> ins{ref(aData, {rows, 8}), ref(bData, {8, 3})};
    Error e = (*exec)->run(ins, std::vector<TensorRef>{ref(outData, {rows, 3})});
    ASSERT_FALSE(e) << e.message();
  }
  std::vector<StepProfile> profile = (*exec)->profile();
  ASSERT_EQ(profile.size(), 1u);
  EXPECT_EQ(profile[0].runs, 2);
  EXPECT_EQ(profile[0].flops, 2.0 * 3 * 8 * (5 + 7));
  EXPECT_EQ(profile[0].bytes, 4.0 * ((5 + 7) * 8 + 2 * 8 * 3 + (5 + 7) * 3));
  EXPECT_GT(profile[0].firstSeconds, 0);
}

TEST(Roofline, StepsAreSetAgainstThePeaksAndTheRidge) {
  MachinePeaks peaks{100e9, 10e9, "given"};
  // 1 GFLOP over 0.1 GB in 20 ms: 50 GFLOP/s, 5 GB/s, 10 FLOP/byte (the
  // ridge): compute; 0.1 GFLOP over 0.1 GB in 20 ms: memory.
  std::vector<StepProfile> steps{{"big", plan::StepKind::Extern, 2, 0.04, 0.02, 0, 0, 2e9, 0.2e9},
                                 {"small", plan::StepKind::Kernel, 2, 0.04, 0.02, 0, 0, 0.2e9, 0.2e9},
                                 {"call", plan::StepKind::Call, 2, 0.02, 0.01, 0, 0, 0, 0}};
  std::string report = rooflineReport(steps, peaks);
  EXPECT_NE(report.find("peaks: 100.0 GFLOP/s, 10.0 GB/s, ridge 10.00 FLOP/byte (given)"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("    0 big                                  50.00  50.0%      5.00  50.0%     10.00 compute\n"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("    1 small                                 5.00   5.0%      5.00  50.0%      1.00 memory\n"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("    2 call                                  0.00   0.0%      0.00   0.0%      0.00 -\n"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("roofline total: 1.1 GFLOP and 0.2 GB per run in 50 ms: 22.00 GFLOP/s "
                        "(22.0% of peak), 4.00 GB/s (40.0% of peak)"),
            std::string::npos)
      << report;
}

TEST(Roofline, TimeIsGroupedByModulePath) {
  MachinePeaks peaks{100e9, 10e9, "given"};
  std::vector<StepProfile> steps{{"a", plan::StepKind::Kernel, 1, 0.001},
                                 {"b", plan::StepKind::Kernel, 1, 0.004},
                                 {"c", plan::StepKind::Extern, 1, 0.002},
                                 {"d", plan::StepKind::Kernel, 1, 0.003}};
  steps[0].modulePath = steps[1].modulePath = "layers.0";
  steps[2].modulePath = "layers.1.fc";
  std::string report = rooflineReport(steps, peaks);
  auto row = [](std::string path, const char *rest) {
    return "  " + path + std::string(40 - path.size(), ' ') + rest + "\n";
  };
  // Most time first; a step without a path counts under the root.
  EXPECT_NE(report.find("by module: module path, steps, ms over the counted runs, share of the time\n" +
                        row("layers.0", "     2     5.0000  50.0%") +
                        row("(root)", "     1     3.0000  30.0%") +
                        row("layers.1.fc", "     1     2.0000  20.0%")),
            std::string::npos)
      << report;
  // Without any path the section is left out.
  for (StepProfile &p : steps)
    p.modulePath.clear();
  EXPECT_EQ(rooflineReport(steps, peaks).find("by module"), std::string::npos);
}

TEST(Roofline, GivenPeaksMustBeTwoPositiveNumbers) {
  EXPECT_TRUE(bool(parsePeaks("150,12.5", "--peaks")));
  EXPECT_EQ(parsePeaks("150,12.5", "--peaks")->bytesPerSecond, 12.5e9);
  for (const char *bad : {"", "150", "150,", ",3", "1,-2", "0,1", "a,b", "1,2,3", "1e3x,2"}) {
    Expected<MachinePeaks> p = parsePeaks(bad, "--peaks");
    ASSERT_FALSE(bool(p)) << bad;
    EXPECT_NE(p.error().message().find("--peaks: '"), std::string::npos) << p.error().message();
  }
}

TEST(Roofline, GpuPeaksComeFromTheDevicesAttributes) {
  CudaDevice h100;
  h100.arch = 90;
  h100.name = "H100";
  h100.multiprocessors = 132;
  h100.clockKHz = 1980000;
  h100.memoryClockKHz = 2619000;
  h100.memoryBusBits = 5120;
  Expected<MachinePeaks> fp32 = cudaPeaks(h100, DType::Float32, false);
  ASSERT_TRUE(bool(fp32));
  EXPECT_DOUBLE_EQ(fp32->flopsPerSecond, 132 * 1.98e9 * 256);
  EXPECT_DOUBLE_EQ(fp32->bytesPerSecond, 2 * 2.619e9 * 640);
  EXPECT_DOUBLE_EQ(cudaPeaks(h100, DType::BFloat16, false)->flopsPerSecond, 132 * 1.98e9 * 4096);
  EXPECT_DOUBLE_EQ(cudaPeaks(h100, DType::Float32, true)->flopsPerSecond, 132 * 1.98e9 * 2048);
  h100.arch = 61;
  Expected<MachinePeaks> unknown = cudaPeaks(h100, DType::Float32, false);
  ASSERT_FALSE(bool(unknown));
  EXPECT_NE(unknown.error().message().find("compute capability 6.1"), std::string::npos);
  h100.arch = 90;
  h100.clockKHz = 0; // a driver that no longer gives it
  Expected<MachinePeaks> noClock = cudaPeaks(h100, DType::Float32, false);
  ASSERT_FALSE(bool(noClock));
  EXPECT_NE(noClock.error().message().find("no clock rates"), std::string::npos);
}

TEST(Roofline, MeasuredCpuPeaksArePositive) {
  MachinePeaks p = measureCpuPeaks(1, "x86-64-v3");
  EXPECT_GT(p.flopsPerSecond, 1e8);
  EXPECT_GT(p.bytesPerSecond, 1e8);
  EXPECT_NE(p.source.find("measured: 1 thread,"), std::string::npos) << p.source;
}

} // namespace
} // namespace gc::test
