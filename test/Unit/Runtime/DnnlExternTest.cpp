//===- DnnlExternTest.cpp - oneDNN extern steps against reference kernels -===//
#include "LoopGraphMaker.h"

#include "Cpu/DnnlExtern.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

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

/// Whether oneDNN takes the node (rather than the executor falling back).
bool dnnlTakes(const ExternCase &c) {
  std::unique_ptr<Built> b = build(c, LoopNode::Kind::Extern);
  const LoopNode &n = b->g.graph.nodes[0];
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
  Expected<std::shared_ptr<const RuntimePlan>> plan = b->g.runtimePlan();
  EXPECT_TRUE(bool(plan));
  const plan::OpStep &step = *(*plan)->root().graphs()->Get(0)->steps()->Get(0)->detail_as_OpStep();
  DnnlContext ctx;
  return ctx.prepare(step, ins, outs, {}) != nullptr;
}

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

} // namespace
