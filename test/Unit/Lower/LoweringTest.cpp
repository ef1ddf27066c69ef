//===- LoweringTest.cpp - Lowering small graphs ---------------------------===//
//
// Small core graphs written in the text form are lowered and run by the loop
// interpreter; their outputs must match the reference interpreter's on the
// same inputs. Other tests look at the shape of the loop graph: which values
// were realized, which views stayed index rewrites.
//
//===----------------------------------------------------------------------===//
#include "LowerTestUtil.h"

#include "gc/IR/Verifier.h"
#include "gc/Interp/Interpreter.h"
#include "gc/Interp/LoopInterpreter.h"
#include "gc/Lower/Lowering.h"
#include "gc/Interp/ReferenceCall.h"
#include "gc/Parser/Parser.h"

#include <algorithm>

namespace gc {
namespace {

/// A graph @forward of the given inputs, body lines and returned values.
std::string moduleText(const std::string &inputs, const std::string &body,
                       const std::string &returns) {
  return "module level(core) {\n  graph @forward(" + inputs + ") {\n" + body + "    return " +
         returns + "\n  }\n}\n";
}

std::unique_ptr<Module> parse(const std::string &text) {
  Expected<std::unique_ptr<Module>> m = parseModule(text, "test.gcir");
  EXPECT_TRUE(static_cast<bool>(m)) << (m ? "" : m.error().message());
  return m ? m.take() : nullptr;
}

/// Deterministic values in [-2, 2] (integers in [-3, 3], bools alternate
/// irregularly), so that every test sees the same inputs.
Tensor sample(DType dtype, Shape sizes, uint64_t seed) {
  Tensor t = Tensor::zeros(dtype, std::move(sizes));
  uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (int64_t i = 0; i < t.numel(); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    double u = static_cast<double>(state >> 11) / static_cast<double>(1ull << 53);
    if (isFloatingPoint(dtype))
      t.storeDouble(i, 4 * u - 2);
    else if (dtype == DType::Bool)
      t.storeInt(i, u < 0.5);
    else
      t.storeInt(i, static_cast<int64_t>(7 * u) - 3);
  }
  return t;
}

const LoopGraph &lowered(Module &m, const LowerOptions &options = {},
                         LowerReport *reportOut = nullptr) {
  Expected<LowerReport> report = lowerModule(m, options);
  EXPECT_TRUE(static_cast<bool>(report)) << (report ? "" : report.error().message());
  if (report && reportOut)
    *reportOut = *report;
  return *m.loopGraphs().at(0);
}

/// Lowers `text` and checks the loop interpreter against the reference
/// interpreter on `inputs`; returns the loop graph's module for inspection.
std::unique_ptr<Module> checkAgainstReference(const std::string &text,
                                              const std::vector<Tensor> &inputs,
                                              const LowerOptions &options = {}) {
  std::unique_ptr<Module> ref = parse(text);
  if (!ref)
    return nullptr;
  Expected<RunResult> want = runGraph(*ref, *ref->graphs()[0], inputs, {});
  EXPECT_TRUE(static_cast<bool>(want)) << (want ? "" : want.error().message());
  std::unique_ptr<Module> m = parse(text);
  Expected<LowerReport> report = lowerModule(*m, options);
  EXPECT_TRUE(static_cast<bool>(report)) << (report ? "" : report.error().message());
  if (!want || !report)
    return nullptr;
  Error invalid = verifyModule(*m);
  EXPECT_FALSE(invalid) << invalid.message();
  Expected<std::vector<Tensor>> got = runLoopGraph(*m, *m->loopGraphs()[0], inputs, {});
  EXPECT_TRUE(static_cast<bool>(got)) << (got ? "" : got.error().message());
  if (got)
    test::expectClose(*got, want->outputs, 1e-6, text);
  return m;
}

size_t countNodes(const LoopGraph &g, LoopNode::Kind kind) {
  return std::count_if(g.nodes.begin(), g.nodes.end(),
                       [&](const LoopNode &n) { return n.kind == kind; });
}

bool indexHasDivMod(const LoopGraph &g) {
  for (const LoopNode &n : g.nodes)
    for (const BodyOp &op : n.body.ops)
      if (op.index && (op.index->str().find("floordiv") != std::string::npos ||
                       op.index->str().find("mod") != std::string::npos))
        return true;
  return false;
}

// Numeric checks, one family at a time ---------------------------------------

TEST(LoweringTest, BinaryOpsPromoteAsTorch) {
  std::string text = moduleText(
      "%x: f32[2, 3] user_input(\"x\"), %y: i64[3] user_input(\"y\"), "
      "%z: i32[2, 1] user_input(\"z\")",
      "    %a = aten.add.Tensor(self=%x, other=%y, alpha=2) : f32[2, 3]\n"
      "    %b = aten.div.Tensor(self=%y, other=%z) : f32[2, 3]\n"
      "    %c = aten.mul.Tensor(self=%z, other=3) : i32[2, 1]\n"
      "    %d = aten.sub.Tensor(self=%c, other=0.5) : f32[2, 1]\n"
      "    %e = aten.div.Tensor_mode(self=%y, other=%z; rounding_mode=\"floor\") : i64[2, 3]\n"
      "    %f = aten.remainder.Tensor(self=%x, other=0.75) : f32[2, 3]\n"
      "    %g = aten.pow.Tensor_Scalar(self=%x, exponent=3.0) : f32[2, 3]\n"
      "    %h = aten.maximum.default(self=%x, other=%d) : f32[2, 3]\n"
      "    %k = aten.minimum.default(self=%y, other=%z) : i64[2, 3]\n",
      "%a user_output, %b user_output, %d user_output, %e user_output, %f user_output, "
      "%g user_output, %h user_output, %k user_output");
  Tensor z = sample(DType::Int32, {2, 1}, 3);
  z.storeInt(0, 2);
  z.storeInt(1, -3);
  checkAgainstReference(text, {sample(DType::Float32, {2, 3}, 1), sample(DType::Int64, {3}, 2), z});
}

TEST(LoweringTest, ComparisonsLogicalAndWhere) {
  std::string text = moduleText(
      "%x: f32[4, 3] user_input(\"x\"), %y: i64[3] user_input(\"y\"), "
      "%m: bool[4, 1] user_input(\"m\")",
      "    %a = aten.gt.Tensor(self=%x, other=%y) : bool[4, 3]\n"
      "    %b = aten.le.Scalar(self=%y, other=0) : bool[3]\n"
      "    %c = aten.bitwise_and.Tensor(self=%a, other=%m) : bool[4, 3]\n"
      "    %d = aten.bitwise_not.default(self=%c) : bool[4, 3]\n"
      "    %e = aten.logical_or.default(self=%b, other=%m) : bool[4, 3]\n"
      "    %f = aten.where.self(condition=%d, self=%x, other=-1.5) : f32[4, 3]\n"
      "    %g = aten.eq.Scalar(self=%x, other=-inf) : bool[4, 3]\n"
      "    %h = aten.ne.Tensor(self=%y, other=%m) : bool[4, 3]\n",
      "%c user_output, %e user_output, %f user_output, %g user_output, %h user_output");
  checkAgainstReference(text, {sample(DType::Float32, {4, 3}, 4), sample(DType::Int64, {3}, 5),
                               sample(DType::Bool, {4, 1}, 6)});
}

TEST(LoweringTest, UnaryOps) {
  std::string body;
  std::string returns;
  const char *ops[] = {"exp", "log", "sqrt", "rsqrt", "tanh", "erf", "sigmoid", "neg", "abs",
                       "floor", "sin", "reciprocal"};
  for (const char *op : ops) {
    body += std::string("    %") + op + " = aten." + op + ".default(self=%p) : f32[3, 5]\n";
    returns += std::string(returns.empty() ? "" : ", ") + "%" + op + " user_output";
  }
  body = "    %p = aten.abs.default(self=%x) : f32[3, 5]\n" + body +
         "    %i = aten.exp.default(self=%n) : f32[3]\n"
         "    %j = aten.neg.default(self=%n) : i64[3]\n"
         "    %k = aten.clamp.default(self=%x, min=-0.5, max=1.0) : f32[3, 5]\n"
         "    %l = aten._to_copy.default(self=%x; dtype=dtype(i32)) : i32[3, 5]\n";
  returns += ", %i user_output, %j user_output, %k user_output, %l user_output";
  checkAgainstReference(moduleText("%x: f32[3, 5] user_input(\"x\"), %n: i64[3] user_input(\"n\")",
                                   body, returns),
                        {sample(DType::Float32, {3, 5}, 7), sample(DType::Int64, {3}, 8)});
}

TEST(LoweringTest, FullAndArange) {
  std::string text = moduleText(
      "%x: f32[4] user_input(\"x\")",
      "    %f = aten.full.default(size=ints[], fill_value=0.5; dtype=dtype(f32), "
      "device=device(cpu)) : f32[]\n"
      "    %a = aten.arange.start_step(start=2, end=10, step=2; dtype=dtype(i64), "
      "device=device(cpu)) : i64[4]\n"
      "    %b = aten.arange.start_step(start=0.5, end=2.5, step=0.5; dtype=dtype(f32), "
      "device=device(cpu)) : f32[4]\n"
      "    %c = aten.mul.Tensor(self=%x, other=%f) : f32[4]\n"
      "    %d = aten.add.Tensor(self=%c, other=%a) : f32[4]\n"
      "    %e = aten.add.Tensor(self=%d, other=%b) : f32[4]\n",
      "%e user_output, %a user_output");
  checkAgainstReference(text, {sample(DType::Float32, {4}, 9)});
}

TEST(LoweringTest, Reductions) {
  std::string text = moduleText(
      "%x: f32[3, 4, 5] user_input(\"x\"), %n: i32[3, 4] user_input(\"n\"), "
      "%b: bool[3, 4] user_input(\"b\")",
      "    %s = aten.sum.dim_IntList(self=%x, dim=[0, 2], keepdim=true) : f32[1, 4, 1]\n"
      "    %t = aten.sum.dim_IntList(self=%n, dim=[-1]) : i64[3]\n"
      "    %u = aten.amax.default(self=%x, dim=[1]) : f32[3, 5]\n"
      "    %v = aten.amin.default(self=%x, dim=[1, 2], keepdim=true) : f32[3, 1, 1]\n"
      "    %w = aten.prod.dim_int(self=%x, dim=2) : f32[3, 4]\n"
      "    %y = aten.argmax.default(self=%x, dim=1, keepdim=true) : i64[3, 1, 5]\n"
      "    %z = aten.argmin.default(self=%x) : i64[]\n"
      "    %q = aten.any.dim(self=%b, dim=1) : bool[3]\n"
      "    %r = aten.sum.default(self=%x) : f32[]\n",
      "%s user_output, %t user_output, %u user_output, %v user_output, %w user_output, "
      "%y user_output, %z user_output, %q user_output, %r user_output");
  std::unique_ptr<Module> m = checkAgainstReference(
      text, {sample(DType::Float32, {3, 4, 5}, 10), sample(DType::Int32, {3, 4}, 11),
             sample(DType::Bool, {3, 4}, 12)});
  ASSERT_TRUE(m);
  EXPECT_EQ(countNodes(*m->loopGraphs()[0], LoopNode::Kind::Reduction), 9u);
}

TEST(LoweringTest, ViewsAreIndexRewrites) {
  std::string text = moduleText(
      "%x: f32[2, 3, 4] user_input(\"x\")",
      "    %p = aten.permute.default(self=%x, dims=[2, 0, 1]) : f32[4, 2, 3]{strides=[1, 12, 4]}\n"
      "    %e = aten.exp.default(self=%p) : f32[4, 2, 3]\n"
      "    %v = aten.view.default(self=%e, size=[8, 3]) : f32[8, 3]\n"
      "    %s = aten.slice.Tensor(self=%v, dim=0, start=1, end=8, step=2) : f32[4, 3]{strides=[6, 1], storage_offset=3}\n"
      "    %t = aten.select.int(self=%s, dim=1, index=-1) : f32[4]{strides=[6], storage_offset=5}\n"
      "    %u = aten.unsqueeze.default(self=%t, dim=0) : f32[1, 4]\n"
      "    %w = aten.expand.default(self=%u, size=[3, -1]) : f32[3, 4]{strides=[0, 1]}\n"
      "    %q = aten.squeeze.dims(self=%u, dim=[0]) : f32[4]\n"
      "    %a = aten.add.Tensor(self=%w, other=%q) : f32[3, 4]\n",
      "%a user_output");
  std::unique_ptr<Module> m = checkAgainstReference(text, {sample(DType::Float32, {2, 3, 4}, 13)});
  ASSERT_TRUE(m);
  // exp is read through the views only once: one node computes everything.
  EXPECT_EQ(m->loopGraphs()[0]->nodes.size(), 1u);
}

TEST(LoweringTest, PermuteViewChainIsOneAffineNode) {
  std::string text = moduleText(
      "%x: f32[2, 3, 4] user_input(\"x\")",
      "    %p = aten.permute.default(self=%x, dims=[2, 0, 1]) : f32[4, 2, 3]{strides=[1, 12, 4]}\n"
      "    %v = aten.view.default(self=%p, size=[4, 6]) : f32[4, 6]{strides=[1, 4]}\n"
      "    %a = aten.add.Tensor(self=%v, other=1.0) : f32[4, 6]\n",
      "%a user_output");
  std::unique_ptr<Module> m = checkAgainstReference(text, {sample(DType::Float32, {2, 3, 4}, 14)});
  ASSERT_TRUE(m);
  const LoopGraph &g = *m->loopGraphs()[0];
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].kind, LoopNode::Kind::Pointwise);
  EXPECT_FALSE(indexHasDivMod(g));
  const BodyOp &load = g.nodes[0].body.ops[0];
  ASSERT_EQ(load.kind, BodyOp::Kind::Load);
  EXPECT_EQ(load.index, *m->syms().parse("i0 + 4*i1"));
}

TEST(LoweringTest, ViewOfPermutedBufferUsesDivMod) {
  // The permuted input's dims 1 and 2 cannot merge into one stride.
  std::string text = moduleText(
      "%x: f32[2, 3, 4] user_input(\"x\")",
      "    %p = aten.permute.default(self=%x, dims=[0, 2, 1]) : f32[2, 4, 3]{strides=[12, 1, 4]}\n"
      "    %c = aten.clone.default(self=%p; memory_format=memory_format(contiguous)) : f32[2, 4, 3]\n"
      "    %v = aten.view.default(self=%c, size=[2, 12]) : f32[2, 12]\n"
      "    %a = aten.neg.default(self=%v) : f32[2, 12]\n",
      "%a user_output");
  std::unique_ptr<Module> m = checkAgainstReference(text, {sample(DType::Float32, {2, 3, 4}, 15)});
  ASSERT_TRUE(m);
  EXPECT_EQ(m->loopGraphs()[0]->nodes.size(), 1u);
  EXPECT_TRUE(indexHasDivMod(*m->loopGraphs()[0]));
}

TEST(LoweringTest, CatAndPadUseMaskedLoads) {
  std::string text = moduleText(
      "%x: f32[2, 3] user_input(\"x\"), %y: f32[2, 1] user_input(\"y\"), "
      "%z: i64[2, 2] user_input(\"z\")",
      "    %e = aten.exp.default(self=%y) : f32[2, 1]\n"
      "    %c = aten.cat.default(tensors=[%x, %e, %z], dim=1) : f32[2, 6]\n"
      "    %p = aten.constant_pad_nd.default(self=%x, pad=[2, 1, 1, 0], value=0.5) : f32[3, 6]\n",
      "%c user_output, %p user_output");
  std::unique_ptr<Module> m = checkAgainstReference(
      text, {sample(DType::Float32, {2, 3}, 16), sample(DType::Float32, {2, 1}, 17),
             sample(DType::Int64, {2, 2}, 18)});
  ASSERT_TRUE(m);
  bool masked = false;
  for (const LoopNode &n : m->loopGraphs()[0]->nodes)
    for (const BodyOp &op : n.body.ops)
      masked |= op.kind == BodyOp::Kind::Load && op.mask >= 0;
  EXPECT_TRUE(masked);
}

TEST(LoweringTest, IndexGathersWithWrappedIndices) {
  std::string text = moduleText(
      "%w: f32[5, 3] parameter(\"w\"), %ids: i64[2, 4] user_input(\"ids\"), "
      "%r: i64[4, 1] user_input(\"r\"), %c: i64[3] user_input(\"c\")",
      "    %a = aten.index.Tensor(self=%w, indices=[%ids]) : f32[2, 4, 3]\n"
      "    %b = aten.index.Tensor(self=%w, indices=[%r, %c]) : f32[4, 3]\n",
      "%a user_output, %b user_output");
  Tensor ids = sample(DType::Int64, {2, 4}, 19), r = sample(DType::Int64, {4, 1}, 20),
         c = sample(DType::Int64, {3}, 21);
  for (int64_t i = 0; i < ids.numel(); ++i)
    ids.storeInt(i, (ids.loadInt(i) + 10) % 5 - (i % 3 == 0 ? 5 : 0));
  for (int64_t i = 0; i < c.numel(); ++i)
    c.storeInt(i, (c.loadInt(i) + 9) % 3 - 1);
  for (int64_t i = 0; i < r.numel(); ++i)
    r.storeInt(i, (r.loadInt(i) + 10) % 5);
  std::unique_ptr<Module> ref = parse(text);
  Tensor w = sample(DType::Float32, {5, 3}, 22);
  Expected<RunResult> want = runGraph(*ref, *ref->graphs()[0], {ids, r, c}, {{"w", w}});
  ASSERT_TRUE(static_cast<bool>(want)) << want.error().message();
  std::unique_ptr<Module> m = parse(text);
  const LoopGraph &g = lowered(*m);
  Expected<std::vector<Tensor>> got = runLoopGraph(*m, g, {ids, r, c}, {{"w", w}});
  ASSERT_TRUE(static_cast<bool>(got)) << got.error().message();
  test::expectClose(*got, want->outputs, 1e-6, "index");
  bool indirect = false;
  for (const LoopNode &n : g.nodes)
    for (const BodyOp &op : n.body.ops)
      indirect |= !op.indirect.empty();
  EXPECT_TRUE(indirect);
}

TEST(LoweringTest, MaxPoolIsAMaxReduction) {
  std::string text = moduleText(
      "%x: f32[1, 2, 5, 5] user_input(\"x\")",
      "    %v, %i = aten.max_pool2d_with_indices.default(self=%x, kernel_size=[3, 3], "
      "stride=[2, 2], padding=[1, 1]) : (f32[1, 2, 3, 3], i64[1, 2, 3, 3])\n",
      "%v user_output");
  std::unique_ptr<Module> m = checkAgainstReference(text, {sample(DType::Float32, {1, 2, 5, 5}, 23)});
  ASSERT_TRUE(m);
  const LoopGraph &g = *m->loopGraphs()[0];
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].kind, LoopNode::Kind::Reduction);
  EXPECT_EQ(g.nodes[0].reduce, ReduceKind::Max);
}

TEST(LoweringTest, MaxPoolLowersItsIndices) {
  std::string text = moduleText(
      "%x: f32[1, 1, 4, 4] user_input(\"x\")",
      "    %v, %i = aten.max_pool2d_with_indices.default(self=%x, kernel_size=[2, 2], "
      "stride=[2, 2]) : (f32[1, 1, 2, 2], i64[1, 1, 2, 2])\n",
      "%v user_output, %i user_output");
  std::unique_ptr<Module> m = checkAgainstReference(text, {sample(DType::Float32, {1, 1, 4, 4}, 24)});
  ASSERT_TRUE(m);
  EXPECT_EQ(countNodes(*m->loopGraphs()[0], LoopNode::Kind::Fallback), 0u);
  // The window maximum and its position in the window, both reductions.
  EXPECT_EQ(countNodes(*m->loopGraphs()[0], LoopNode::Kind::Reduction), 2u);
}

TEST(LoweringTest, MatmulAndConvolutionAreExterns) {
  std::string text = moduleText(
      "%a: f32[3, 4] user_input(\"a\"), %b: f32[4, 2] user_input(\"b\"), "
      "%x: f32[2, 4, 3] user_input(\"x\"), %y: f32[2, 4, 5] user_input(\"y\"), "
      "%img: f32[1, 2, 5, 5] user_input(\"img\"), %k: f32[3, 2, 3, 3] user_input(\"k\"), "
      "%bias: f32[3] user_input(\"bias\")",
      "    %e = aten.exp.default(self=%a) : f32[3, 4]\n"
      "    %mm = aten.mm.default(self=%e, mat2=%b) : f32[3, 2]\n"
      "    %t = aten.permute.default(self=%y, dims=[0, 2, 1]) : f32[2, 5, 4]{strides=[20, 1, 5]}\n"
      "    %bmm = aten.bmm.default(self=%t, mat2=%x) : f32[2, 5, 3]\n"
      "    %conv = aten.convolution.default(input=%img, weight=%k, bias=%bias, stride=[1, 1], "
      "padding=[1, 1], dilation=[1, 1], transposed=false, output_padding=[0, 0], groups=1) "
      ": f32[1, 3, 5, 5]\n"
      "    %r = aten.add.Tensor(self=%conv, other=1.0) : f32[1, 3, 5, 5]\n",
      "%mm user_output, %bmm user_output, %r user_output");
  std::unique_ptr<Module> m = checkAgainstReference(
      text, {sample(DType::Float32, {3, 4}, 25), sample(DType::Float32, {4, 2}, 26),
             sample(DType::Float32, {2, 4, 3}, 27), sample(DType::Float32, {2, 4, 5}, 28),
             sample(DType::Float32, {1, 2, 5, 5}, 29), sample(DType::Float32, {3, 2, 3, 3}, 30),
             sample(DType::Float32, {3}, 31)});
  ASSERT_TRUE(m);
  const LoopGraph &g = *m->loopGraphs()[0];
  EXPECT_EQ(countNodes(g, LoopNode::Kind::Extern), 3u);
  for (const LoopNode &n : g.nodes)
    if (n.op == ops::aten_bmm_default) {
      // The permuted operand is read in place, as a strided view.
      ASSERT_EQ(n.inputs.size(), 2u);
      EXPECT_EQ(g.buffers[n.inputs[0].buffer].kind, BufferKind::Input);
      EXPECT_EQ(n.inputs[0].type.strides[1]->str(), "1");
    }
}

TEST(LoweringTest, UnknownOpsFallBackOrFail) {
  std::string text = moduleText(
      "%x: f32[2, 5] user_input(\"x\"), %seed: i64[] user_input(\"seed\")",
      "    %e = aten.exp.default(self=%x) : f32[2, 5]\n"
      "    %r = gc.rand.default(size=[2, 5], seed=%seed, offset=%seed) : f32[2, 5]\n"
      "    %c = aten.mul.Tensor(self=%e, other=%r) : f32[2, 5]\n",
      "%c user_output");
  std::unique_ptr<Module> m = checkAgainstReference(
      text, {sample(DType::Float32, {2, 5}, 32), Tensor::zeros(DType::Int64, {})});
  ASSERT_TRUE(m);
  EXPECT_EQ(countNodes(*m->loopGraphs()[0], LoopNode::Kind::Fallback), 1u);

  std::unique_ptr<Module> again = parse(text);
  LowerReport report;
  lowered(*again, {}, &report);
  EXPECT_EQ(report.fallbacks, std::vector<std::string>{"node 'r': gc.rand.default"});

  std::unique_ptr<Module> strict = parse(text);
  LowerOptions options;
  options.noFallback = true;
  Expected<LowerReport> failed = lowerModule(*strict, options);
  ASSERT_FALSE(static_cast<bool>(failed));
  EXPECT_EQ(failed.error().message(),
            "graph 'forward': node 'r' (gc.rand.default): no lowering for "
            "gc.rand.default");
}

// Half precision lowers like float32: one pointwise node, whose body
// computes in float32; the f16 value rounds where the cast leaves f16.
TEST(LoweringTest, ReducedPrecisionLowers) {
  std::string text = moduleText(
      "%x: f16[2, 3] user_input(\"x\")",
      "    %a = aten.add.Tensor(self=%x, other=1.0) : f16[2, 3]\n"
      "    %b = aten._to_copy.default(self=%a; dtype=dtype(f32)) : f32[2, 3]\n"
      "    %c = aten.mul.Tensor(self=%b, other=2.0) : f32[2, 3]\n",
      "%c user_output");
  Tensor x = sample(DType::Float32, {2, 3}, 40).to(DType::Float16);
  std::unique_ptr<Module> m = checkAgainstReference(text, {x});
  ASSERT_TRUE(m);
  EXPECT_EQ(countNodes(*m->loopGraphs()[0], LoopNode::Kind::Fallback), 0u);
  EXPECT_EQ(countNodes(*m->loopGraphs()[0], LoopNode::Kind::Pointwise), 1u);
}

// Realization ----------------------------------------------------------------

TEST(LoweringTest, ValueWithTwoUsersIsRealized) {
  std::string text = moduleText(
      "%x: f32[8] user_input(\"x\")",
      "    %a = aten.mul.Tensor(self=%x, other=2.0) : f32[8]\n"
      "    %b = aten.exp.default(self=%a) : f32[8]\n"
      "    %c = aten.add.Tensor(self=%b, other=1.0) : f32[8]\n"
      "    %d = aten.tanh.default(self=%c) : f32[8]\n"
      "    %u = aten.sub.Tensor(self=%d, other=%x) : f32[8]\n"
      "    %v = aten.mul.Tensor(self=%d, other=%x) : f32[8]\n",
      "%u user_output, %v user_output");
  std::unique_ptr<Module> m = checkAgainstReference(text, {sample(DType::Float32, {8}, 33)});
  ASSERT_TRUE(m);
  const LoopGraph &g = *m->loopGraphs()[0];
  EXPECT_EQ(countNodes(g, LoopNode::Kind::Pointwise), 3u);
  size_t intermediates = 0;
  for (const Buffer &b : g.buffers)
    if (b.kind == BufferKind::Intermediate) {
      ++intermediates;
      EXPECT_EQ(b.name, "d");
      EXPECT_TRUE(b.flexible);
    }
  EXPECT_EQ(intermediates, 1u);
}

TEST(LoweringTest, TrivialValuesAreNotRealized) {
  std::string text = moduleText(
      "%x: f32[8] user_input(\"x\")",
      "    %a = aten.neg.default(self=%x) : f32[8]\n"
      "    %u = aten.exp.default(self=%a) : f32[8]\n"
      "    %v = aten.sin.default(self=%a) : f32[8]\n",
      "%u user_output, %v user_output");
  std::unique_ptr<Module> m = checkAgainstReference(text, {sample(DType::Float32, {8}, 34)});
  ASSERT_TRUE(m);
  EXPECT_EQ(m->loopGraphs()[0]->nodes.size(), 2u);
}

TEST(LoweringTest, LargeBodiesAreRealized) {
  std::string body = "    %v0 = aten.exp.default(self=%x) : f32[4]\n";
  for (int i = 1; i <= 6; ++i)
    body += "    %v" + std::to_string(i) + " = aten.sin.default(self=%v" + std::to_string(i - 1) +
            ") : f32[4]\n";
  std::string text = moduleText("%x: f32[4] user_input(\"x\")", body, "%v6 user_output");
  LowerOptions options;
  options.maxInlineOps = 3;
  std::unique_ptr<Module> m = checkAgainstReference(text, {sample(DType::Float32, {4}, 35)}, options);
  ASSERT_TRUE(m);
  EXPECT_GT(m->loopGraphs()[0]->nodes.size(), 1u);
  for (const LoopNode &n : m->loopGraphs()[0]->nodes)
    EXPECT_LE(n.body.ops.size(), 5u);
}

TEST(LoweringTest, SoftmaxIsTwoReductionsAndOnePointwise) {
  std::string text = moduleText(
      "%x: f32[4, 6] user_input(\"x\")",
      "    %m = aten.amax.default(self=%x, dim=[-1], keepdim=true) : f32[4, 1]\n"
      "    %s = aten.sub.Tensor(self=%x, other=%m) : f32[4, 6]\n"
      "    %e = aten.exp.default(self=%s) : f32[4, 6]\n"
      "    %t = aten.sum.dim_IntList(self=%e, dim=[-1], keepdim=true) : f32[4, 1]\n"
      "    %d = aten.div.Tensor(self=%e, other=%t) : f32[4, 6]\n",
      "%d user_output");
  std::unique_ptr<Module> m = checkAgainstReference(text, {sample(DType::Float32, {4, 6}, 36)});
  ASSERT_TRUE(m);
  const LoopGraph &g = *m->loopGraphs()[0];
  EXPECT_EQ(countNodes(g, LoopNode::Kind::Reduction), 2u);
  EXPECT_EQ(countNodes(g, LoopNode::Kind::Pointwise), 1u);
  EXPECT_EQ(g.nodes.size(), 3u);
}

// Buffers and bindings -------------------------------------------------------

TEST(LoweringTest, OutputsGetTheirOwnBuffers) {
  // An output that is an input, one returned twice, and one torch laid out
  // transposed.
  std::string text = moduleText(
      "%x: f32[2, 3] user_input(\"x\")",
      "    %a = aten.exp.default(self=%x) : f32[2, 3]\n"
      "    %p = aten.permute.default(self=%x, dims=[1, 0]) : f32[3, 2]{strides=[1, 3]}\n"
      "    %n = aten.neg.default(self=%p) : f32[3, 2]{strides=[1, 3]}\n",
      "%x user_output, %a user_output, %a user_output, %n user_output");
  std::unique_ptr<Module> m = checkAgainstReference(text, {sample(DType::Float32, {2, 3}, 37)});
  ASSERT_TRUE(m);
  const LoopGraph &g = *m->loopGraphs()[0];
  ASSERT_EQ(g.outputs.size(), 4u);
  std::vector<uint32_t> written;
  for (const LoopNode &n : g.nodes)
    written.push_back(n.output);
  for (const LoopBinding &b : g.outputs) {
    EXPECT_EQ(g.buffers[b.buffer].kind, BufferKind::Output);
    EXPECT_EQ(std::count(written.begin(), written.end(), b.buffer), 1);
  }
  EXPECT_NE(g.outputs[1].buffer, g.outputs[2].buffer);
  EXPECT_EQ(g.outputs[3].type.strides[0]->str(), "1");
  EXPECT_EQ(g.buffers[g.outputs[3].buffer].strides[1]->str(), "3");
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.buffers[g.inputs[0].buffer].kind, BufferKind::Input);
}

TEST(LoweringTest, SymbolicSizes) {
  std::string text =
      "module level(core) {\n  symbol {name=\"s0\", min=1, max=64}\n"
      "  graph @forward(%x: f32[s0, 4] user_input(\"x\")) {\n"
      "    %m = aten.amax.default(self=%x, dim=[-1], keepdim=true) : f32[s0, 1]\n"
      "    %s = aten.sub.Tensor(self=%x, other=%m) : f32[s0, 4]\n"
      "    %v = aten.unsqueeze.default(self=%s, dim=1) : f32[s0, 1, 4]\n"
      "    return %v user_output\n  }\n}\n";
  for (int64_t n : {1, 5})
    checkAgainstReference(text, {sample(DType::Float32, {n, 4}, 38)});
}

TEST(LoweringTest, ReferenceCallRunsAKernelOnViews) {
  SymContext sx;
  auto type = [&](Shape sizes, Shape strides, int64_t offset) {
    TensorType t;
    for (size_t d = 0; d < sizes.size(); ++d) {
      t.sizes.push_back(sx.constant(sizes[d]));
      t.strides.push_back(sx.constant(strides[d]));
    }
    t.storageOffset = sx.constant(offset);
    return t;
  };
  LoopNode node;
  node.kind = LoopNode::Kind::Extern;
  node.name = "mm";
  node.op = ops::aten_mm_default;
  node.inputs = {BufferView{0, type({2, 3}, {3, 1}, 0)}, BufferView{0, type({3, 2}, {1, 3}, 0)}};
  node.outputs = {BufferView{1, type({2, 2}, {2, 1}, 0)}};
  Arg self{ArgKind::Tensor, {}, {0}, {}, {}, {}}, mat2{ArgKind::Tensor, {}, {1}, {}, {}, {}};
  node.args = {LoopArg{"self", false, self}, LoopArg{"mat2", false, mat2}};
  Expected<ReferenceCall> call = ReferenceCall::create(node);
  ASSERT_TRUE(static_cast<bool>(call)) << call.error().message();
  Tensor a = sample(DType::Float32, {6}, 39);
  Tensor out = Tensor::zeros(DType::Float32, {4});
  std::vector<Tensor> outs{out.asStrided({2, 2}, {2, 1}, 0)};
  Error e = call->run({a.asStrided({2, 3}, {3, 1}, 0), a.asStrided({3, 2}, {1, 3}, 0)}, outs);
  ASSERT_FALSE(e) << e.message();
  // (A A^T)[0][1] = row 0 . row 1
  double want = 0;
  for (int k = 0; k < 3; ++k)
    want += a.loadDouble(k) * a.loadDouble(3 + k);
  EXPECT_NEAR(out.loadDouble(1), want, 1e-5);
}

TEST(LoweringTest, LoweredOpsListsTheCorpusOps) {
  std::vector<OpId> lowered = loweredOps();
  for (OpId op : {ops::aten_add_Tensor, ops::aten_index_Tensor, ops::aten_mm_default,
                  ops::aten_max_pool2d_with_indices_default, ops::aten_view_default})
    EXPECT_NE(std::find(lowered.begin(), lowered.end(), op), lowered.end()) << op;
  EXPECT_TRUE(std::is_sorted(lowered.begin(), lowered.end(),
                             [](OpId a, OpId b) { return opName(a) < opName(b); }));
}

} // namespace
} // namespace gc
