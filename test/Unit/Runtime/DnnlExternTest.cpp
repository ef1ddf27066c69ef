//===- DnnlExternTest.cpp - oneDNN extern steps against reference kernels -===//
#include "HalfBits.h"
#include "LoopGraphMaker.h"

#include "Cpu/DnnlExtern.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

using namespace gc;
using namespace gc::test;

namespace {

/// One extern node over user inputs, built either as an Extern step
/// (oneDNN) or as a Fallback step (the reference kernel).
struct ExternCase {
  OpId op;
  std::vector<std::vector<int64_t>> inputShapes;
  std::vector<int64_t> outShape;
  /// Adds views, args and post-ops to the node whose inputs are whole
  /// input buffers 0, 1, ...; may replace input views.
  std::function<void(LoopGraphMaker &, LoopNode &)> finish;
};

struct Built {
  LoopGraphMaker g;
  FakeLibrary lib;
  std::unique_ptr<Executor> exec;
};

std::unique_ptr<Built> build(const ExternCase &c, LoopNode::Kind kind) {
  auto b = std::make_unique<Built>();
  LoopGraphMaker &g = b->g;
  std::vector<BufferView> ins;
  for (size_t i = 0; i < c.inputShapes.size(); ++i)
    ins.push_back(g.whole(g.input("in" + std::to_string(i), DType::Float32, g.ks(c.inputShapes[i]))));
  uint32_t out = g.buffer("out", BufferKind::Output, DType::Float32, g.ks(c.outShape));
  LoopNode &n = g.callNode(kind, c.op, ins, {g.whole(out)});
  c.finish(g, n);
  g.output("out", out, g.whole(out).type);
  auto e = g.executor(b->lib, {2});
  EXPECT_TRUE(bool(e)) << (e ? "" : e.error().message());
  if (e)
    b->exec = e.take();
  return b;
}

std::vector<float> run(const ExternCase &c, LoopNode::Kind kind,
                       std::vector<std::vector<float>> &data) {
  std::unique_ptr<Built> b = build(c, kind);
  if (!b->exec)
    return {};
  std::vector<TensorRef> ins;
  for (size_t i = 0; i < data.size(); ++i)
    ins.push_back(ref(data[i], c.inputShapes[i]));
  int64_t n = 1;
  for (int64_t s : c.outShape)
    n *= s;
  std::vector<float> out(n, NAN);
  Error err = b->exec->run(ins, std::vector<TensorRef>{ref(out, c.outShape)});
  EXPECT_FALSE(err) << err.message();
  return out;
}

/// The graph's one node as oneDNN prepares it (null: the executor falls
/// back), its inputs marked `constant` as given, and its step.
std::unique_ptr<CpuCall> prepareNode(DnnlContext &ctx, const LoopGraphMaker &g,
                                     const std::vector<bool> &constant,
                                     const plan::OpStep **stepOut = nullptr,
                                     std::shared_ptr<const RuntimePlan> *planOut = nullptr) {
  const LoopNode &n = g.graph.nodes[0];
  // The views are static here: their layouts are their constants.
  auto layout = [](const TensorType &t) {
    StridedLayout l;
    for (const SymExpr *e : t.sizes)
      l.sizes.push_back(e->constant());
    for (const SymExpr *e : t.strides)
      l.strides.push_back(e->constant());
    l.offset = t.storageOffset->constant();
    return l;
  };
  std::vector<StridedLayout> ins, outs;
  for (const BufferView &v : n.inputs)
    ins.push_back(layout(v.type));
  outs.push_back(layout(n.outputs[0].type));
  Expected<std::shared_ptr<const RuntimePlan>> plan = g.runtimePlan();
  EXPECT_TRUE(bool(plan));
  if (!plan)
    return nullptr;
  const plan::OpStep &step = *(*plan)->root().graphs()->Get(0)->steps()->Get(0)->detail_as_OpStep();
  if (stepOut)
    *stepOut = &step;
  if (planOut)
    *planOut = *plan;
  return ctx.prepare(step, ins, outs, constant);
}

/// Whether oneDNN takes the graph's one node (rather than the executor
/// falling back).
bool dnnlTakes(const LoopGraphMaker &g) {
  DnnlContext ctx;
  return prepareNode(ctx, g, {}) != nullptr;
}
bool dnnlTakes(const ExternCase &c) { return dnnlTakes(build(c, LoopNode::Kind::Extern)->g); }

void expectMatchesReference(const ExternCase &c) {
  std::vector<std::vector<float>> data;
  for (size_t i = 0; i < c.inputShapes.size(); ++i) {
    int64_t n = 1;
    for (int64_t s : c.inputShapes[i])
      n *= s;
    data.push_back(randomFloats(n, 11 + i));
  }
  EXPECT_TRUE(dnnlTakes(c));
  std::vector<float> got = run(c, LoopNode::Kind::Extern, data);
  std::vector<float> want = run(c, LoopNode::Kind::Fallback, data);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-4 * std::abs(want[i]) + 1e-5) << "element " << i;
}

TEST(DnnlExtern, MatmulWithTransposedWeightBiasAndRelu) {
  // in1 holds the weight as [N, K]; mm reads it through a [K, N] view.
  int64_t m = 7, k = 13, n = 9;
  ExternCase c{ops::aten_mm_default, {{m, k}, {n, k}, {n}}, {m, n}, [&](LoopGraphMaker &g, LoopNode &node) {
                 node.inputs[1].type = g.view(DType::Float32, g.ks({k, n}), g.ks({1, k}));
                 node.args = {tensorArg("self", 0), tensorArg("mat2", 1)};
                 node.postOps = {{PostOp::Kind::AddBias, 2}, {PostOp::Kind::Relu, 0}};
               }};
  expectMatchesReference(c);

  // And the reference side itself, element by element.
  std::vector<std::vector<float>> data = {randomFloats(m * k, 1), randomFloats(n * k, 2),
                                          randomFloats(n, 3)};
  std::vector<float> got = run(c, LoopNode::Kind::Extern, data);
  ASSERT_EQ(got.size(), static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = data[2][j];
      for (int64_t p = 0; p < k; ++p)
        acc += double(data[0][i * k + p]) * data[1][j * k + p];
      EXPECT_NEAR(got[i * n + j], std::max(acc, 0.0), 1e-5) << i << "," << j;
    }
}

TEST(DnnlExtern, MatmulGelu) {
  for (PostOp::Kind gelu : {PostOp::Kind::GeluErf, PostOp::Kind::GeluTanh})
    expectMatchesReference({ops::aten_mm_default, {{5, 8}, {8, 6}}, {5, 6},
                            [&](LoopGraphMaker &, LoopNode &node) {
                              node.args = {tensorArg("self", 0), tensorArg("mat2", 1)};
                              node.postOps = {{gelu, 0}};
                            }});
}

/// A bfloat16 product whose epilogue was widened (lib/Schedule/PostOps.cpp):
/// bfloat16 operands, a float32 bias, GELU, and a float32 or bfloat16
/// result. oneDNN takes it, and it and the reference kernel agree with the
/// float64 computation within the result's rounding (the reference rounds
/// the product to bfloat16 before its post-ops, so twice).
TEST(DnnlExtern, WidenedBfloat16ProductWithFloatBias) {
  const int64_t m = 6, k = 24, n = 10;
  for (DType stored : {DType::Float32, DType::BFloat16}) {
    std::vector<float> a = randomFloats(m * k, 1), w = randomFloats(k * n, 2),
                       bias = randomFloats(n, 3);
    std::vector<uint16_t> a16, w16;
    for (float &x : a)
      a16.push_back(toBf16(x)), x = fromBf16(a16.back());
    for (float &x : w)
      w16.push_back(toBf16(x)), x = fromBf16(w16.back());
    std::vector<float> results[2];
    for (LoopNode::Kind kind : {LoopNode::Kind::Extern, LoopNode::Kind::Fallback}) {
      LoopGraphMaker g;
      std::vector<BufferView> ins = {g.whole(g.input("a", DType::BFloat16, g.ks({m, k}))),
                                     g.whole(g.input("w", DType::BFloat16, g.ks({k, n}))),
                                     g.whole(g.input("bias", DType::Float32, g.ks({n})))};
      uint32_t out = g.buffer("out", BufferKind::Output, stored, g.ks({m, n}));
      LoopNode &node = g.callNode(kind, ops::aten_mm_default, ins, {g.whole(out)});
      node.args = {tensorArg("self", 0), tensorArg("mat2", 1)};
      node.postOps = {{PostOp::Kind::AddBias, 2}, {PostOp::Kind::GeluErf, 0}};
      g.output("out", out, g.whole(out).type);
      if (kind == LoopNode::Kind::Extern)
        EXPECT_TRUE(dnnlTakes(g)) << dtypeName(stored);
      FakeLibrary lib;
      auto exec = g.executor(lib, {2});
      ASSERT_TRUE(bool(exec)) << exec.error().message();
      std::vector<uint16_t> out16(m * n);
      std::vector<float> out32(m * n, NAN);
      TensorRef result = stored == DType::Float32
                             ? ref(out32, {m, n})
                             : TensorRef{out16.data(), DType::BFloat16, {m, n}, {}};
      Error err = (*exec)->run(std::vector<TensorRef>{{a16.data(), DType::BFloat16, {m, k}, {}},
                                                      {w16.data(), DType::BFloat16, {k, n}, {}},
                                                      ref(bias, {n})},
                               std::vector<TensorRef>{result});
      ASSERT_FALSE(err) << err.message();
      if (stored == DType::BFloat16)
        for (size_t i = 0; i < out16.size(); ++i)
          out32[i] = fromBf16(out16[i]);
      results[kind == LoopNode::Kind::Fallback] = out32;
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double x = bias[j];
        for (int64_t q = 0; q < k; ++q)
          x += double(a[i * k + q]) * w[q * n + j];
        x = 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
        for (int r = 0; r < 2; ++r)
          EXPECT_NEAR(results[r][i * n + j], x, 1.6e-2 * std::fabs(x) + 2e-2)
              << (r ? "reference " : "oneDNN ") << dtypeName(stored) << " at " << i << ", " << j;
      }
  }
}

/// A gated pair (GatedSilu, which gc folds for GPUs only): neither oneDNN
/// nor the CPU's few-row kernel computes one, so the step runs on the
/// fallback component, which computes silu(a w) * (a up).
TEST(DnnlExtern, GatedPairRunsOnTheFallback) {
  for (int64_t m : {1, 3}) {
    int64_t k = 11, n = 6;
    ExternCase c{ops::aten_mm_default, {{m, k}, {n, k}, {n, k}}, {m, n},
                 [&](LoopGraphMaker &g, LoopNode &node) {
                   for (int w : {1, 2})
                     node.inputs[w].type = g.view(DType::Float32, g.ks({k, n}), g.ks({1, k}));
                   node.args = {tensorArg("self", 0), tensorArg("mat2", 1)};
                   node.postOps = {{PostOp::Kind::GatedSilu, 2}};
                 }};
    EXPECT_FALSE(dnnlTakes(c));
    std::vector<std::vector<float>> data = {randomFloats(m * k, 1), randomFloats(n * k, 2),
                                            randomFloats(n * k, 3)};
    std::vector<float> got = run(c, LoopNode::Kind::Extern, data);
    ASSERT_EQ(got.size(), static_cast<size_t>(m * n));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double gate = 0, up = 0;
        for (int64_t p = 0; p < k; ++p) {
          gate += double(data[0][i * k + p]) * data[1][j * k + p];
          up += double(data[0][i * k + p]) * data[2][j * k + p];
        }
        EXPECT_NEAR(got[i * n + j], gate / (1 + std::exp(-gate)) * up, 1e-5) << i << "," << j;
      }
  }
}

/// An RMSNorm prologue (which gc folds for GPUs only), alone and with a
/// gated pair: neither oneDNN nor the CPU's few-row kernel computes one,
/// so the step runs on the fallback component, which normalises each left
/// row (a[m, k] g[k] / sqrt(mean_k a[m, k]^2 + eps)) before the product.
TEST(DnnlExtern, RmsNormPrologueRunsOnTheFallback) {
  for (bool gated : {false, true})
    for (int64_t m : {1, 3}) {
      int64_t k = 11, n = 6;
      double eps = 1e-5;
      std::vector<std::vector<int64_t>> shapes = {{m, k}, {n, k}, {k}};
      if (gated)
        shapes.push_back({n, k});
      ExternCase c{ops::aten_mm_default, shapes, {m, n}, [&](LoopGraphMaker &g, LoopNode &node) {
                     node.inputs[1].type = g.view(DType::Float32, g.ks({k, n}), g.ks({1, k}));
                     node.args = {tensorArg("self", 0), tensorArg("mat2", 1)};
                     node.rmsNorm = RmsNormPrologue{2, eps};
                     if (gated) {
                       node.inputs[3].type = node.inputs[1].type;
                       node.postOps = {{PostOp::Kind::GatedSilu, 3}};
                     }
                   }};
      EXPECT_FALSE(dnnlTakes(c));
      std::vector<std::vector<float>> data = {randomFloats(m * k, 1), randomFloats(n * k, 2),
                                              randomFloats(k, 3)};
      if (gated)
        data.push_back(randomFloats(n * k, 4));
      std::vector<float> got = run(c, LoopNode::Kind::Extern, data);
      ASSERT_EQ(got.size(), static_cast<size_t>(m * n));
      for (int64_t i = 0; i < m; ++i) {
        double squares = 0;
        for (int64_t p = 0; p < k; ++p)
          squares += double(data[0][i * k + p]) * data[0][i * k + p];
        double scale = 1 / std::sqrt(squares / k + eps);
        for (int64_t j = 0; j < n; ++j) {
          double x = 0, up = 0;
          for (int64_t p = 0; p < k; ++p) {
            double a = data[0][i * k + p] * scale * data[2][p];
            x += a * data[1][j * k + p];
            if (gated)
              up += a * data[3][j * k + p];
          }
          double want = gated ? x / (1 + std::exp(-x)) * up : x;
          EXPECT_NEAR(got[i * n + j], want, 1e-5) << gated << " " << i << "," << j;
        }
      }
    }
}

TEST(DnnlExtern, BatchedMatmulWithAdd) {
  expectMatchesReference({ops::aten_bmm_default, {{3, 4, 5}, {3, 5, 6}, {3, 4, 6}}, {3, 4, 6},
                          [](LoopGraphMaker &, LoopNode &node) {
                            node.args = {tensorArg("self", 0), tensorArg("mat2", 1)};
                            node.postOps = {{PostOp::Kind::Add, 2}};
                          }});
}

TEST(DnnlExtern, ConvolutionStridePaddingGroupsBiasRelu) {
  expectMatchesReference(
      {ops::aten_convolution_default, {{2, 4, 9, 9}, {6, 2, 3, 3}, {6}}, {2, 6, 5, 5},
       [](LoopGraphMaker &, LoopNode &node) {
         node.args = {tensorArg("input", 0),     tensorArg("weight", 1), tensorArg("bias", 2),
                      intsArg("stride", {2, 2}), intsArg("padding", {1, 1}),
                      intsArg("dilation", {1, 1}), boolArg("transposed", false),
                      intsArg("output_padding", {0, 0}), intArg("groups", 2)};
         node.postOps = {{PostOp::Kind::Relu, 0}};
       }});
}

TEST(DnnlExtern, DepthwiseConvolutionBiasSwish) {
  // SiLU as oneDNN's swish after a depthwise convolution, as in
  // efficientnet's blocks.
  ExternCase c{ops::aten_convolution_default, {{1, 4, 7, 7}, {4, 1, 3, 3}, {4}}, {1, 4, 7, 7},
               [](LoopGraphMaker &, LoopNode &node) {
                 node.args = {tensorArg("input", 0), tensorArg("weight", 1),
                              tensorArg("bias", 2), intsArg("stride", {1, 1}),
                              intsArg("padding", {1, 1}), intsArg("dilation", {1, 1}),
                              boolArg("transposed", false), intsArg("output_padding", {0, 0}),
                              intArg("groups", 4)};
                 node.postOps = {{PostOp::Kind::Swish, 0}};
               }};
  EXPECT_TRUE(dnnlTakes(c));
  expectMatchesReference(c);
}

TEST(DnnlExtern, ConvolutionDilatedWithoutBias1d) {
  expectMatchesReference({ops::aten_convolution_default, {{1, 3, 20}, {5, 3, 3}}, {1, 5, 16},
                          [](LoopGraphMaker &, LoopNode &node) {
                            LoopArg none{"bias", false, Arg::none()};
                            node.args = {tensorArg("input", 0), tensorArg("weight", 1), none,
                                         intsArg("stride", {1}), intsArg("padding", {0}),
                                         intsArg("dilation", {2}), boolArg("transposed", false),
                                         intsArg("output_padding", {0}), intArg("groups", 1)};
                          }});
}

TEST(DnnlExtern, ConvolutionWithBiasPostOpAndAdd) {
  // A channels-last input view, the bias as a post-op, and a residual add.
  int64_t n = 2, c = 3, h = 6, w = 5;
  expectMatchesReference(
      {ops::aten_convolution_default, {{n, h, w, c}, {4, 3, 3, 3}, {4}, {n, 4, h, w}}, {n, 4, h, w},
       [=](LoopGraphMaker &g, LoopNode &node) {
         node.inputs[0].type =
             g.view(DType::Float32, g.ks({n, c, h, w}), g.ks({h * w * c, 1, w * c, c}));
         node.args = {tensorArg("input", 0),     tensorArg("weight", 1), {"bias", false, Arg::none()},
                      intsArg("stride", {1, 1}), intsArg("padding", {1, 1}),
                      intsArg("dilation", {1, 1}), boolArg("transposed", false),
                      intsArg("output_padding", {0, 0}), intArg("groups", 1)};
         node.postOps = {{PostOp::Kind::AddBias, 2}, {PostOp::Kind::Add, 3}};
       }});
}

TEST(DnnlExtern, EmptyProductFallsBackToTheReference) {
  // K = 0: oneDNN takes no empty tensor; the result is the bias alone.
  ExternCase c{ops::aten_mm_default, {{3, 0}, {0, 4}, {4}}, {3, 4},
               [](LoopGraphMaker &, LoopNode &node) {
                 node.args = {tensorArg("self", 0), tensorArg("mat2", 1)};
                 node.postOps = {{PostOp::Kind::AddBias, 2}};
               }};
  EXPECT_FALSE(dnnlTakes(c));
  std::vector<std::vector<float>> data = {{}, {}, randomFloats(4, 1)};
  std::vector<float> got = run(c, LoopNode::Kind::Extern, data);
  ASSERT_EQ(got.size(), 12u);
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(got[i], data[2][i % 4]) << i;
}

/// oneDNN 2.6's Winograd convolutions are AVX-512 code (avx512_core).
bool hasAvx512Core() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

/// A 3x3 convolution with bias and ReLU, padded to keep the size, as in
/// resnet's blocks; `target` is recorded on the module.
ExternCase conv3x3(int64_t c, int64_t k, int64_t hw, int64_t stride, Target target = {}) {
  int64_t out = (hw + 2 - 3) / stride + 1;
  return {ops::aten_convolution_default,
          {{1, c, hw, hw}, {k, c, 3, 3}, {k}},
          {1, k, out, out},
          [=](LoopGraphMaker &g, LoopNode &node) {
            g.module.setTarget(target);
            node.args = {tensorArg("input", 0), tensorArg("weight", 1), tensorArg("bias", 2),
                         intsArg("stride", {stride, stride}), intsArg("padding", {1, 1}),
                         intsArg("dilation", {1, 1}), boolArg("transposed", false),
                         intsArg("output_padding", {0, 0}), intArg("groups", 1)};
            node.postOps = {{PostOp::Kind::Relu, 0}};
          }};
}

bool isWinograd(const std::string &impl) { return impl.find("wino") != std::string::npos; }

/// The implementation oneDNN runs `c` with, its weights constant (or not).
std::string implementationOf(const ExternCase &c, bool constantWeights = true) {
  DnnlContext ctx;
  std::unique_ptr<CpuCall> call =
      prepareNode(ctx, build(c, LoopNode::Kind::Extern)->g, {false, constantWeights, false});
  EXPECT_TRUE(call);
  return call ? call->implementation() : "";
}

TEST(DnnlExtern, WinogradRule) {
  if (!hasAvx512Core())
    GTEST_SKIP() << "oneDNN has no Winograd convolution without AVX-512";
  // resnet's 3x3 shapes take it; an image's 3 channels, a stride of 2,
  // weights that are not constant and --conv-algorithm=direct do not.
  EXPECT_TRUE(isWinograd(implementationOf(conv3x3(64, 64, 14, 1))));
  EXPECT_TRUE(isWinograd(implementationOf(conv3x3(512, 512, 7, 1))));
  EXPECT_FALSE(isWinograd(implementationOf(conv3x3(3, 64, 14, 1))));
  EXPECT_FALSE(isWinograd(implementationOf(conv3x3(64, 32, 14, 1))));
  EXPECT_FALSE(isWinograd(implementationOf(conv3x3(64, 64, 14, 2))));
  EXPECT_FALSE(isWinograd(implementationOf(conv3x3(64, 64, 14, 1), false)));
  Target direct;
  direct.convAlgorithm = ConvAlgorithm::Direct;
  std::string impl = implementationOf(conv3x3(64, 64, 14, 1, direct));
  EXPECT_FALSE(impl.empty());
  EXPECT_FALSE(isWinograd(impl));
}

TEST(DnnlExtern, WinogradMatchesDirect) {
  if (!hasAvx512Core())
    GTEST_SKIP() << "oneDNN has no Winograd convolution without AVX-512";
  // Both algorithms on the same data: the results differ by float32
  // rounding alone (measured, utils/bench/winograd.cpp: both within 3e-6
  // of the largest result against float64), well inside 1e-5 of it.
  Target directTarget;
  directTarget.convAlgorithm = ConvAlgorithm::Direct;
  int64_t c = 128, hw = 10;
  std::vector<std::vector<float>> data = {randomFloats(c * hw * hw, 1),
                                          randomFloats(c * c * 9, 2), randomFloats(c, 3)};
  std::vector<float> results[2];
  for (int winograd : {0, 1}) {
    ExternCase ec = conv3x3(c, c, hw, 1, winograd ? Target{} : directTarget);
    std::unique_ptr<Built> b = build(ec, LoopNode::Kind::Extern);
    DnnlContext ctx;
    const plan::OpStep *step = nullptr;
    std::shared_ptr<const RuntimePlan> plan;
    std::unique_ptr<CpuCall> call = prepareNode(ctx, b->g, {false, true, false}, &step, &plan);
    ASSERT_TRUE(call);
    EXPECT_EQ(isWinograd(call->implementation()), bool(winograd)) << call->implementation();
    results[winograd].assign(c * hw * hw, NAN);
    std::vector<char *> buffers(8, nullptr);
    for (size_t i = 0; i < data.size(); ++i)
      buffers.at(step->inputs()->Get(i)->buffer()) = reinterpret_cast<char *>(data[i].data());
    buffers.at(step->outputs()->Get(0)->buffer()) =
        reinterpret_cast<char *>(results[winograd].data());
    Error err = call->run(ExternArgs{.hostBuffers = buffers.data()});
    ASSERT_FALSE(err) << err.message();
  }
  float largest = 0;
  for (float x : results[0])
    largest = std::max(largest, std::abs(x));
  ASSERT_GT(largest, 1.f);
  for (size_t i = 0; i < results[0].size(); ++i)
    ASSERT_NEAR(results[1][i], results[0][i], 1e-5 * largest) << "element " << i;
}

/// An int8 call (gc.qconvolution, gc.qlinear) on a uint8 input with a zero
/// point, int8 weights with a scale per output channel and a float32 bias,
/// run by oneDNN and by the reference kernel on the same data.
struct Int8Case {
  OpId op;
  std::vector<int64_t> inputShape, weightShape, outShape;
  DType out;                  ///< Float32, or Int8 requantized
  std::vector<LoopArg> shape; ///< the convolution's stride, padding, ...
};

std::vector<float> runInt8(const Int8Case &c, LoopNode::Kind kind, bool expectDnnl) {
  LoopGraphMaker g;
  int64_t outChannels = c.weightShape[0];
  std::vector<BufferView> ins = {g.whole(g.input("x", DType::UInt8, g.ks(c.inputShape))),
                                 g.whole(g.input("w", DType::Int8, g.ks(c.weightShape))),
                                 g.whole(g.input("b", DType::Float32, g.ks({outChannels})))};
  uint32_t out = g.buffer("out", BufferKind::Output, c.out, g.ks(c.outShape));
  LoopNode &n = g.callNode(kind, c.op, ins, {g.whole(out)});
  Arg scales{ArgKind::Floats, {}, {}, {}, {}, {}};
  for (int64_t o = 0; o < outChannels; ++o)
    scales.floats.push_back(0.004 * (1 + o % 3));
  n.args = {tensorArg("input", 0), {"input_scale", false, Arg::real(0.05)},
            intArg("input_zero_point", 7), tensorArg("weight", 1), {"weight_scales", false, scales},
            tensorArg("bias", 2)};
  n.args.insert(n.args.end(), c.shape.begin(), c.shape.end());
  n.args.push_back(boolArg("relu", true));
  if (c.out != DType::Float32) {
    n.args.push_back({"output_scale", false, Arg::real(0.03)});
    n.args.push_back(intArg("output_zero_point", -5));
    n.args.push_back({"output_dtype", false, Arg::scalarType(c.out)});
  }
  g.output("out", out, g.whole(out).type);
  EXPECT_EQ(dnnlTakes(g), expectDnnl);
  FakeLibrary lib;
  auto e = g.executor(lib, {2});
  EXPECT_TRUE(bool(e)) << (e ? "" : e.error().message());
  if (!e)
    return {};

  auto numel = [](const std::vector<int64_t> &shape) {
    int64_t n = 1;
    for (int64_t s : shape)
      n *= s;
    return n;
  };
  std::mt19937 gen(5);
  std::vector<uint8_t> x(numel(c.inputShape));
  std::vector<int8_t> w(numel(c.weightShape));
  for (uint8_t &v : x)
    v = static_cast<uint8_t>(gen() % 256);
  for (int8_t &v : w)
    v = static_cast<int8_t>(static_cast<int>(gen() % 255) - 127);
  std::vector<float> bias = randomFloats(outChannels, 3);
  std::vector<TensorRef> args = {{x.data(), DType::UInt8, c.inputShape, {}},
                                 {w.data(), DType::Int8, c.weightShape, {}},
                                 ref(bias, {outChannels})};
  std::vector<float> result(numel(c.outShape));
  std::vector<int8_t> quantized(result.size());
  TensorRef res = c.out == DType::Float32 ? ref(result, c.outShape)
                                          : TensorRef{quantized.data(), c.out, c.outShape, {}};
  Error err = (*e)->run(args, std::vector<TensorRef>{res});
  EXPECT_FALSE(err) << err.message();
  if (c.out != DType::Float32)
    std::copy(quantized.begin(), quantized.end(), result.begin());
  return result;
}

/// oneDNN's result against the reference kernel's: float32 within 1e-4 of
/// the result's magnitude (both sum exact integer products, then scale), a
/// requantized one within one step (a product on the rounding boundary may
/// round either way after float32 scaling).
void expectInt8MatchesReference(const Int8Case &c) {
  std::vector<float> got = runInt8(c, LoopNode::Kind::Extern, true);
  std::vector<float> want = runInt8(c, LoopNode::Kind::Fallback, false);
  ASSERT_EQ(got.size(), want.size());
  float magnitude = 0;
  for (float v : want)
    magnitude = std::max(magnitude, std::abs(v));
  ASSERT_GT(magnitude, 0.f);
  float tolerance = c.out == DType::Float32 ? 1e-4f * magnitude : 1.f;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tolerance) << "element " << i;
}

TEST(DnnlExtern, Int8GroupedConvolutionRequantized) {
  // Per-channel scales over grouped weights ([g, O/g, ...] to oneDNN) and
  // both zero points: oneDNN 2's output scales and oneDNN 3's run-time
  // weight scales and zero points must give the same numbers.
  expectInt8MatchesReference({ops::gc_qconvolution_default,
                              {2, 4, 7, 7},
                              {6, 2, 3, 3},
                              {2, 6, 4, 4},
                              DType::Int8,
                              {intsArg("stride", {2, 2}), intsArg("padding", {1, 1}),
                               intsArg("dilation", {1, 1}), intArg("groups", 2)}});
}

TEST(DnnlExtern, Int8LinearOn3dInputToFloat) {
  // A linear's [N, K] weights on a [B, M, K] input, float32 out.
  expectInt8MatchesReference(
      {ops::gc_qlinear_default, {2, 3, 16}, {5, 16}, {2, 3, 5}, DType::Float32, {}});
}

} // namespace
