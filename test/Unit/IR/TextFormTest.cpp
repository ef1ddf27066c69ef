//===- TextFormTest.cpp - Printing and parsing the module text form -------===//
//
// Modules built in C++ must survive print -> parse with every field intact,
// and the reprinted text must be the same bytes. Bad inputs must give one
// "file:line:col: message" error.
//
//===----------------------------------------------------------------------===//

#include "gc/IR/Printer.h"
#include "gc/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace gc {
namespace {

//===----------------------------------------------------------------------===//
// Field-by-field comparison across two modules. Expressions live in different
// contexts, so they compare structurally; values compare by name and place.
//===----------------------------------------------------------------------===//

void expectExprEq(const SymExpr *a, const SymExpr *b, const std::string &where) {
  ASSERT_TRUE(a && b) << where;
  EXPECT_EQ(SymExpr::compare(a, b), 0)
      << where << ": " << a->str() << " vs " << b->str();
}

void expectExprsEq(const std::vector<const SymExpr *> &a,
                   const std::vector<const SymExpr *> &b,
                   const std::string &where) {
  ASSERT_EQ(a.size(), b.size()) << where;
  for (size_t i = 0; i < a.size(); ++i)
    expectExprEq(a[i], b[i], where + "[" + std::to_string(i) + "]");
}

void expectTensorTypeEq(const TensorType &a, const TensorType &b,
                        const std::string &where) {
  EXPECT_EQ(a.dtype, b.dtype) << where;
  EXPECT_EQ(a.device, b.device) << where;
  EXPECT_EQ(a.requiresGrad, b.requiresGrad) << where;
  expectExprsEq(a.sizes, b.sizes, where + " sizes");
  expectExprsEq(a.strides, b.strides, where + " strides");
  expectExprEq(a.storageOffset, b.storageOffset, where + " offset");
}

void expectTypeEq(const Type &a, const Type &b, const std::string &where) {
  ASSERT_EQ(a.kind, b.kind) << where;
  if (a.isTensor())
    expectTensorTypeEq(a.tensor, b.tensor, where);
}

void expectValueEq(const Value *a, const Value *b, const std::string &where) {
  ASSERT_EQ(a == nullptr, b == nullptr) << where;
  if (!a)
    return;
  EXPECT_EQ(a->name(), b->name()) << where;
  EXPECT_EQ(a->resultIndex(), b->resultIndex()) << where;
  EXPECT_EQ(a->definingNode() == nullptr, b->definingNode() == nullptr) << where;
}

void expectFloatsEq(const std::vector<double> &a, const std::vector<double> &b,
                    const std::string &where) {
  ASSERT_EQ(a.size(), b.size()) << where;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i])) {
      EXPECT_TRUE(std::isnan(b[i])) << where;
      continue;
    }
    // Bitwise, so that -0.0 stays -0.0.
    EXPECT_EQ(std::memcmp(&a[i], &b[i], sizeof(double)), 0)
        << where << ": " << a[i] << " vs " << b[i];
  }
}

void expectArgEq(const Arg &a, const Arg &b, const std::string &where) {
  ASSERT_EQ(a.kind, b.kind) << where;
  ASSERT_EQ(a.values.size(), b.values.size()) << where;
  for (size_t i = 0; i < a.values.size(); ++i)
    expectValueEq(a.values[i], b.values[i], where);
  EXPECT_EQ(a.ints, b.ints) << where;
  expectFloatsEq(a.floats, b.floats, where);
  EXPECT_EQ(a.strings, b.strings) << where;
  EXPECT_EQ(a.device, b.device) << where;
}

void expectGraphEq(const Graph &a, const Graph &b) {
  std::string where = "graph @" + a.name();
  EXPECT_EQ(a.name(), b.name());
  ASSERT_EQ(a.inputs().size(), b.inputs().size()) << where;
  for (size_t i = 0; i < a.inputs().size(); ++i) {
    expectValueEq(a.inputs()[i], b.inputs()[i], where);
    expectTypeEq(a.inputs()[i]->type(), b.inputs()[i]->type(),
                 where + " input " + a.inputs()[i]->name());
  }
  EXPECT_EQ(a.inputSpecs(), b.inputSpecs()) << where;
  ASSERT_EQ(a.nodes().size(), b.nodes().size()) << where;
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    const Node &na = *a.nodes()[i], &nb = *b.nodes()[i];
    std::string nw = where + " node " + std::to_string(i) + " " + opString(na.op());
    EXPECT_EQ(na.op(), nb.op()) << nw;
    EXPECT_EQ(na.resultForm(), nb.resultForm()) << nw;
    ASSERT_EQ(na.args().size(), nb.args().size()) << nw;
    for (size_t j = 0; j < na.args().size(); ++j) {
      const NamedArg &x = na.args()[j], &y = nb.args()[j];
      EXPECT_EQ(x.name, y.name) << nw;
      EXPECT_EQ(x.keywordOnly, y.keywordOnly) << nw << " " << x.name;
      expectArgEq(x.value, y.value, nw + " arg " + x.name);
    }
    ASSERT_EQ(na.results().size(), nb.results().size()) << nw;
    for (size_t j = 0; j < na.results().size(); ++j) {
      expectValueEq(na.results()[j], nb.results()[j], nw);
      EXPECT_EQ(nb.results()[j]->definingNode(), &nb) << nw;
      expectTypeEq(na.results()[j]->type(), nb.results()[j]->type(), nw);
    }
  }
  ASSERT_EQ(a.outputs().size(), b.outputs().size()) << where;
  for (size_t i = 0; i < a.outputs().size(); ++i)
    expectValueEq(a.outputs()[i], b.outputs()[i], where + " output");
  EXPECT_EQ(a.outputSpecs(), b.outputSpecs()) << where;
}

void expectModuleEq(const Module &a, const Module &b) {
  EXPECT_EQ(a.level(), b.level());
  EXPECT_EQ(a.producer(), b.producer());
  EXPECT_EQ(a.syms().ranges(), b.syms().ranges());
  EXPECT_EQ(a.weightSources(), b.weightSources());
  ASSERT_EQ(a.weights().size(), b.weights().size());
  for (size_t i = 0; i < a.weights().size(); ++i) {
    const Weight &x = a.weights()[i], &y = b.weights()[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.source, y.source);
    EXPECT_EQ(x.offset, y.offset);
    EXPECT_EQ(x.bytes, y.bytes);
    EXPECT_EQ(x.sha256, y.sha256);
    expectTensorTypeEq(x.type, y.type, "weight " + x.name);
  }
  ASSERT_EQ(a.graphs().size(), b.graphs().size());
  for (size_t i = 0; i < a.graphs().size(); ++i)
    expectGraphEq(*a.graphs()[i], *b.graphs()[i]);
}

/// Prints `m`, parses the text, checks the result equals `m` field by field
/// and prints back to the same text. Returns the text.
std::string roundTrip(const Module &m) {
  std::string text = printModule(m);
  auto parsed = parseModule(text, "roundtrip.gcir");
  if (!parsed) {
    ADD_FAILURE() << parsed.error().message() << "\n" << text;
    return text;
  }
  expectModuleEq(m, **parsed);
  EXPECT_EQ(printModule(**parsed), text);
  return text;
}

//===----------------------------------------------------------------------===//
// Builders
//===----------------------------------------------------------------------===//

const SymExpr *c(Module &m, int64_t v) { return m.syms().constant(v); }

Type tensor(Module &m, DType dt, std::vector<const SymExpr *> sizes) {
  TensorType t;
  t.dtype = dt;
  t.strides = contiguousStrides(m.syms(), sizes);
  t.sizes = std::move(sizes);
  t.storageOffset = c(m, 0);
  return Type::makeTensor(std::move(t));
}

Type staticTensor(Module &m, DType dt, std::vector<int64_t> sizes) {
  std::vector<const SymExpr *> exprs;
  for (int64_t s : sizes)
    exprs.push_back(c(m, s));
  return tensor(m, dt, std::move(exprs));
}

NamedArg arg(std::string name, Arg value, bool keywordOnly = false) {
  return NamedArg{std::move(name), keywordOnly, std::move(value)};
}

Arg argOf(ArgKind kind) {
  Arg a;
  a.kind = kind;
  return a;
}

Arg symInt(Value *v, int64_t i) {
  Arg a = argOf(ArgKind::SymInt);
  a.values = {v};
  a.ints = {v ? 0 : i};
  return a;
}

Arg device(Device d) {
  Arg a = argOf(ArgKind::Device);
  a.device = d;
  return a;
}

/// A module that uses every construct of the text form.
std::unique_ptr<Module> buildRichModule() {
  auto mp = std::make_unique<Module>();
  Module &m = *mp;
  SymContext &sc = m.syms();
  m.setLevel(Level::Core);
  m.setProducer("torch 2.11.0+cu130 \"quoted\" \\ tab\t nl\n \x01 \xc3\xa9");
  sc.setRange("s0", {2, SymRange::kUnbounded});
  sc.setRange("s1", {1, 4096});
  sc.setRange("u0", {-5, 7});

  m.weightSources().push_back({WeightSource::Kind::Archive, "../corpus/mlp/model.pt2"});
  m.weightSources().push_back({WeightSource::Kind::Blob, "mlp.weights"});
  {
    Weight w;
    w.name = "l1.weight";
    w.type = staticTensor(m, DType::Float32, {256, 64}).tensor;
    w.source = 0;
    w.offset = 64;
    w.bytes = 65536;
    w.sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
    m.weights().push_back(w);
    Weight t;
    t.name = "l1.bias_t";
    t.type = staticTensor(m, DType::BFloat16, {4, 8}).tensor;
    t.type.strides = {c(m, 1), c(m, 4)};
    t.type.storageOffset = c(m, 3);
    t.type.device = {DeviceKind::CUDA, 0};
    t.type.requiresGrad = true;
    t.source = 1;
    t.offset = std::numeric_limits<uint64_t>::max();
    t.bytes = 0;
    m.weights().push_back(t);
  }

  const SymExpr *s0 = sc.symbol("s0");
  const SymExpr *s1 = sc.symbol("s1");
  Graph &g = m.addGraph("forward");
  Value *p = g.addInput("p_l1_weight", staticTensor(m, DType::Float32, {256, 64}),
                        {InputKind::Parameter, "l1.weight", true});
  Value *mean = g.addInput("b_mean", staticTensor(m, DType::Float32, {16}),
                           {InputKind::Buffer, "bn.running_mean", true});
  g.addInput("b_tmp", staticTensor(m, DType::Float32, {16}),
             {InputKind::Buffer, "bn.tmp", false});
  g.addInput("b_anon", staticTensor(m, DType::Float32, {16}),
             {InputKind::Buffer, "", false});
  g.addInput("c_lifted_tensor_0", staticTensor(m, DType::Int64, {}),
             {InputKind::Constant, "lifted_tensor_0", true});
  Value *tok = g.addInput("token", staticTensor(m, DType::Float32, {}),
                          {InputKind::Token, "", true});
  Value *x = g.addInput("x", tensor(m, DType::Float32, {s0, c(m, 64)}),
                        {InputKind::UserInput, "x", true});
  Value *n = g.addInput("n", Type::makeScalar(Type::Kind::SymInt),
                        {InputKind::UserInput, "n", true});
  Value *f = g.addInput("f", Type::makeScalar(Type::Kind::SymFloat),
                        {InputKind::UserInput, "f", true});
  Value *b = g.addInput("1b.x", Type::makeScalar(Type::Kind::SymBool),
                        {InputKind::UserInput, "b", true});

  // Tensor, None, keyword-only args; symbolic result sizes.
  Value *lin = g.addNode(ops::aten_linear_default,
                         {arg("input", Arg::tensor(x)), arg("weight", Arg::tensor(p)),
                          arg("bias", Arg::none())},
                         {{"linear", tensor(m, DType::Float32, {s0, c(m, 256)})}})
                   ->results()[0];
  // Only keyword-only args; the Device, ScalarType, Layout and Bool kinds.
  g.addNode(ops::aten_arange_default,
            {arg("end", Arg::integer(32)),
             arg("dtype", Arg::scalarType(DType::Int64), true),
             arg("layout", [] {
               Arg a = argOf(ArgKind::Layout);
               a.ints = {static_cast<int64_t>(Layout::Strided)};
               return a;
             }(), true),
             arg("device", device({DeviceKind::CUDA, 1}), true),
             arg("pin_memory", Arg::boolean(false), true)},
            {{"ar", staticTensor(m, DType::Int64, {32})}});
  g.addNode(ops::aten_empty_memory_format,
            {arg("size", Arg::integers({})),
             arg("dtype", Arg::none(), true),
             arg("device", device({}), true),
             arg("memory_format", [] {
               Arg a = argOf(ArgKind::MemoryFormat);
               a.ints = {static_cast<int64_t>(MemoryFormat::ChannelsLast)};
               return a;
             }(), true)},
            {{"e0", staticTensor(m, DType::Float32, {})}});
  g.addNode(ops::aten__to_copy_default,
            {arg("a", device({DeviceKind::CUDA, -1}), true),
             arg("b", device({DeviceKind::Meta, -1}), true),
             arg("c", device({DeviceKind::CPU, 0}), true)},
            {{"kw", staticTensor(m, DType::Float32, {1})}});

  // List results, tuple results, several forms and arities.
  Node *split = g.addNode(ops::aten_split_Tensor,
                          {arg("self", Arg::tensor(x)), arg("split_size", Arg::integer(2)),
                           arg("dim", Arg::integer(-1))},
                          {{"a", staticTensor(m, DType::Float32, {2, 64})},
                           {"b", staticTensor(m, DType::Float32, {2, 64})}},
                          ResultForm::List);
  g.addNode(ops::aten_unbind_int, {arg("self", Arg::tensor(split->results()[0]))},
            {{"u", staticTensor(m, DType::Float32, {64})}}, ResultForm::List);
  g.addNode(ops::aten_unbind_int, {}, {}, ResultForm::List);
  Node *pool = g.addNode(
      ops::aten_max_pool2d_with_indices_default,
      {arg("self", Arg::tensor(x)), arg("kernel_size", Arg::integers({2, 2})),
       arg("ceil_mode", Arg::boolean(true))},
      {{"mp", tensor(m, DType::Float32, {sc.floorDiv(s0, c(m, 2)), c(m, 32)})},
       {"mi", tensor(m, DType::Int64, {sc.floorDiv(s0, c(m, 2)), c(m, 32)})}},
      ResultForm::Tuple);
  g.addNode(ops::aten_sort_default, {arg("x", Arg::tensor(pool->results()[1]))},
            {{"t1", staticTensor(m, DType::Int64, {1})}}, ResultForm::Tuple);
  g.addNode(ops::aten_max_dim, {}, {}, ResultForm::Tuple);
  // A node with no results at all, and a Single node with two (not made by
  // torch, but the text form keeps it).
  g.addNode(ops::aten__assert_scalar_default,
            {arg("self", Arg::tensor(lin)), arg("assert_msg", Arg::string("oops"))}, {});
  g.addNode(ops::aten_sym_size_int, {},
            {{"q0", Type::makeScalar(Type::Kind::SymInt)},
             {"q1", Type::makeScalar(Type::Kind::SymFloat)}});

  // Every remaining argument kind, with empty lists.
  Arg tensors = argOf(ArgKind::Tensors);
  tensors.values = {x, lin};
  Arg opt = argOf(ArgKind::OptionalTensors);
  opt.values = {nullptr, x, nullptr};
  Arg floats = argOf(ArgKind::Floats);
  floats.floats = {1.0, 0.5, -0.0, 1e20, 1e-7, 3.0e300,
                   std::numeric_limits<double>::infinity(),
                   -std::numeric_limits<double>::infinity(), 0.1,
                   std::numeric_limits<double>::denorm_min()};
  Arg bools = argOf(ArgKind::Bools);
  bools.ints = {1, 0, 1};
  Arg strings = argOf(ArgKind::Strings);
  strings.strings = {"a", "", "\"\\\n\t\x7f\x1f"};
  Arg symInts = argOf(ArgKind::SymInts);
  symInts.values = {n, nullptr, nullptr};
  symInts.ints = {0, 3, -4};
  Arg symFloat = argOf(ArgKind::SymFloat);
  symFloat.values = {f};
  Arg symBool = argOf(ArgKind::SymBool);
  symBool.values = {b};
  Arg optEmpty = argOf(ArgKind::OptionalTensors);
  Arg symIntsEmpty = argOf(ArgKind::SymInts);

  g.addNode(ops::aten__assert_tensor_metadata_default,
            {arg("tensors", tensors),
             arg("tensors_empty", argOf(ArgKind::Tensors)),
             arg("opt", opt),
             arg("opt_empty", optEmpty),
             arg("int_min", Arg::integer(std::numeric_limits<int64_t>::min())),
             arg("int_max", Arg::integer(std::numeric_limits<int64_t>::max())),
             arg("ints", Arg::integers({1, -2, 3})),
             arg("ints_empty", Arg::integers({})),
             arg("f_one", Arg::real(1.0)),
             arg("f_neg", Arg::real(-2.5)),
             arg("f_inf", Arg::real(std::numeric_limits<double>::infinity())),
             arg("f_ninf", Arg::real(-std::numeric_limits<double>::infinity())),
             arg("f_nan", Arg::real(std::numeric_limits<double>::quiet_NaN())),
             arg("f_big", Arg::real(1e100)),
             arg("floats", floats),
             arg("floats_int_first", [] {
               Arg a = argOf(ArgKind::Floats);
               a.floats = {2.0, 0.25};
               return a;
             }()),
             arg("floats_nan_first", [] {
               Arg a = argOf(ArgKind::Floats);
               a.floats = {std::numeric_limits<double>::quiet_NaN(), 1.0};
               return a;
             }()),
             arg("floats_empty", argOf(ArgKind::Floats)),
             arg("bool", Arg::boolean(true)),
             arg("bools", bools),
             arg("bools_empty", argOf(ArgKind::Bools)),
             arg("string", Arg::string("with \"quotes\" and \\ and \x01")),
             arg("string_empty", Arg::string("")),
             arg("strings", strings),
             arg("strings_empty", argOf(ArgKind::Strings)),
             arg("symint_v", symInt(n, 0)),
             arg("symint_c", symInt(nullptr, -7)),
             arg("symints", symInts),
             arg("symints_empty", symIntsEmpty),
             arg("symfloat", symFloat),
             arg("symbool", symBool),
             arg("dtype", Arg::scalarType(DType::BFloat16)),
             arg("token", Arg::tensor(tok))},
            {{"every", tensor(m, DType::Float32, {s0})}});

  // Types: scalar tensor, symbolic sizes, non-contiguous strides, offsets,
  // devices, requires_grad, all at once.
  TensorType tt = tensor(m, DType::Float32, {c(m, 64), s0}).tensor;
  tt.strides = {c(m, 1), c(m, 64)};
  g.addNode(ops::aten_t_default, {arg("self", Arg::tensor(x))},
            {{"xt", Type::makeTensor(tt)}});
  TensorType all = tensor(m, DType::Float16,
                          {sc.add(sc.mul(c(m, 2), s0), c(m, 1)), s1,
                           sc.max(s1, c(m, 4))})
                       .tensor;
  all.strides = {sc.mul(s1, c(m, 3)), c(m, 1), c(m, 0)};
  all.storageOffset = sc.mod(s0, c(m, 7));
  all.device = {DeviceKind::CUDA, 0};
  all.requiresGrad = true;
  g.addNode(ops::aten_zeros_default, {}, {{"all", Type::makeTensor(all)}});
  TensorType onlyGrad = tensor(m, DType::Bool, {c(m, 0), c(m, 1), c(m, 5)}).tensor;
  onlyGrad.requiresGrad = true;
  TensorType onlyDev = tensor(m, DType::UInt8, {c(m, 3)}).tensor;
  onlyDev.device = {DeviceKind::CPU, 0};
  TensorType onlyOffset = tensor(m, DType::Int8, {c(m, 3)}).tensor;
  onlyOffset.storageOffset = c(m, -1);
  Node *types = g.addNode(
      ops::aten_full_default, {},
      {{"tg", Type::makeTensor(onlyGrad)},
       {"td", Type::makeTensor(onlyDev)},
       {"to", Type::makeTensor(onlyOffset)},
       {"ti16", staticTensor(m, DType::Int16, {2})},
       {"ti32", staticTensor(m, DType::Int32, {2})},
       {"tf64", staticTensor(m, DType::Float64, {2})}},
      ResultForm::Tuple);
  Value *newMean = g.addNode(ops::aten_add_Tensor,
                             {arg("self", Arg::tensor(mean)),
                              arg("other", Arg::tensor(mean)),
                              arg("alpha", Arg::integer(1), true)},
                             {{"new_mean", staticTensor(m, DType::Float32, {16})}})
                       ->results()[0];

  g.addOutput(lin, {OutputKind::UserOutput, ""});
  g.addOutput(types->results()[0], {OutputKind::LossOutput, ""});
  g.addOutput(newMean, {OutputKind::BufferMutation, "bn.running_mean"});
  g.addOutput(x, {OutputKind::UserInputMutation, "x"});
  g.addOutput(p, {OutputKind::ParameterMutation, "l1.weight"});
  g.addOutput(p, {OutputKind::GradientToParameter, "l1.weight"});
  g.addOutput(nullptr, {OutputKind::GradientToUserInput, "x"});
  g.addOutput(tok, {OutputKind::Token, ""});
  g.addOutput(nullptr, {OutputKind::UserOutput, ""});

  // A second graph with one input, and a third with nothing at all.
  Graph &bw = m.addGraph("backward");
  Value *t = bw.addInput("tangents_1", tensor(m, DType::Float32, {s0, c(m, 256)}),
                         {InputKind::UserInput, "tangents_1", true});
  bw.addOutput(t, {OutputKind::UserOutput, ""});
  m.addGraph("empty");
  return mp;
}

//===----------------------------------------------------------------------===//
// Round trips
//===----------------------------------------------------------------------===//

TEST(TextFormTest, RichModuleRoundTrips) {
  std::unique_ptr<Module> m = buildRichModule();
  std::string text = roundTrip(*m);
  // Spot checks of the syntax the parser relies on.
  EXPECT_NE(text.find("module level(core) producer(\"torch 2.11.0+cu130 "
                      "\\\"quoted\\\" \\\\ tab\\t nl\\n \\x01 \xc3\xa9\") {\n"),
            std::string::npos);
  EXPECT_NE(text.find("  symbol {name=\"s0\", min=2}\n  symbol {name=\"s1\", min=1, max=4096}\n"
                      "  symbol {name=\"u0\", min=-5, max=7}\n"),
            std::string::npos);
  EXPECT_NE(text.find("  weight {name=\"l1.bias_t\", type=bf16[4, 8]{device=cuda:0, strides=[1, 4], "
                      "storage_offset=3, requires_grad=true}, source=1, "
                      "offset=18446744073709551615}\n"),
            std::string::npos);
  EXPECT_NE(text.find("%b_tmp: f32[16] buffer(\"bn.tmp\"){persistent=false}"),
            std::string::npos);
  EXPECT_NE(text.find("%b_anon: f32[16] buffer{persistent=false}"),
            std::string::npos);
  EXPECT_NE(text.find("%token: f32[] token,"), std::string::npos);
  EXPECT_NE(text.find("%1b.x: sym_bool user_input(\"b\")) {\n"), std::string::npos);
  EXPECT_NE(text.find("aten.arange.default(end=32; dtype=dtype(i64), "
                      "layout=layout(strided), device=device(cuda:1), "
                      "pin_memory=false) : i64[32]\n"),
            std::string::npos);
  EXPECT_NE(text.find("= aten._to_copy.default(; a=device(cuda), "
                      "b=device(meta), c=device(cpu:0)) : f32[1]\n"),
            std::string::npos);
  EXPECT_NE(text.find("memory_format=memory_format(channels_last)"),
            std::string::npos);
  EXPECT_NE(text.find("%a, %b = aten.split.Tensor(self=%x, split_size=2, "
                      "dim=-1) : [f32[2, 64], f32[2, 64]]\n"),
            std::string::npos);
  EXPECT_NE(text.find(": [f32[64]]\n"), std::string::npos);
  EXPECT_NE(text.find("    aten.unbind.int() : []\n"), std::string::npos);
  EXPECT_NE(text.find(": (f32[floordiv(s0, 2), 32], i64[floordiv(s0, 2), 32])\n"),
            std::string::npos);
  EXPECT_NE(text.find(": (i64[1])\n"), std::string::npos);
  EXPECT_NE(text.find("    aten.max.dim() : ()\n"), std::string::npos);
  EXPECT_NE(text.find("    aten._assert_scalar.default(self=%linear, "
                      "assert_msg=\"oops\")\n"),
            std::string::npos);
  EXPECT_NE(text.find("%q0, %q1 = aten.sym_size.int() : sym_int, sym_float\n"),
            std::string::npos);
  EXPECT_NE(text.find("tensors=[%x, %linear], tensors_empty=tensors[], "
                      "opt=opt_tensors[none, %x, none], opt_empty=opt_tensors[], "
                      "int_min=-9223372036854775808, int_max=9223372036854775807, "
                      "ints=[1, -2, 3], ints_empty=ints[], f_one=1.0, f_neg=-2.5, "
                      "f_inf=inf, f_ninf=-inf, f_nan=nan, f_big=1e+100, "
                      "floats=[1.0, 0.5, -0.0, 1e+20, 1e-07, 3e+300, inf, -inf, "
                      "0.1, 5e-324], floats_int_first=[2.0, 0.25], "
                      "floats_nan_first=[nan, 1.0], floats_empty=floats[], "
                      "bool=true, bools=[true, false, true], bools_empty=bools[], "
                      "string=\"with \\\"quotes\\\" and \\\\ and \\x01\", "
                      "string_empty=\"\", strings=[\"a\", \"\", "
                      "\"\\\"\\\\\\n\\t\\x7f\\x1f\"], strings_empty=strings[], "
                      "symint_v=symint(%n), symint_c=symint(-7), "
                      "symints=symints[%n, 3, -4], symints_empty=symints[], "
                      "symfloat=symfloat(%f), symbool=symbool(%1b.x), "
                      "dtype=dtype(bf16), token=%token) : f32[s0]\n"),
            std::string::npos);
  EXPECT_NE(text.find("%xt = aten.t.default(self=%x) : f32[64, s0]{strides=[1, 64]}\n"),
            std::string::npos);
  EXPECT_NE(text.find(": f16[2*s0 + 1, s1, max(s1, 4)]{device=cuda:0, strides=[3*s1, 1, 0], "
                      "storage_offset=mod(s0, 7), requires_grad=true}\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(": (bool[0, 1, 5]{requires_grad=true}, u8[3]{device=cpu:0}, "
                      "i8[3]{storage_offset=-1}, i16[2], i32[2], f64[2])\n"),
            std::string::npos);
  EXPECT_NE(text.find("    return %linear user_output, %tg loss_output, "
                      "%new_mean buffer_mutation(\"bn.running_mean\"), "
                      "%x user_input_mutation(\"x\"), "
                      "%p_l1_weight parameter_mutation(\"l1.weight\"), "
                      "%p_l1_weight gradient_to_parameter(\"l1.weight\"), "
                      "none gradient_to_user_input(\"x\"), %token token, "
                      "none user_output\n  }\n"),
            std::string::npos);
  EXPECT_NE(text.find("  graph @backward(%tangents_1: f32[s0, 256] "
                      "user_input(\"tangents_1\")) {\n"
                      "    return %tangents_1 user_output\n  }\n"
                      "  graph @empty() {\n    return\n  }\n}\n"),
            std::string::npos);
}

TEST(TextFormTest, EmptyModule) {
  Module m;
  EXPECT_EQ(roundTrip(m), "module level(aten) {\n}\n");
}

TEST(TextFormTest, HandWrittenTextPrintsCanonically) {
  // Comments, free layout, explicit default fields and integer elements in a
  // float list are accepted; printing gives the canonical form.
  const char *text = R"(// a comment
module level(aten)producer("p"){ // trailing comment
  graph @forward(%x : f32[2,3]{device=cpu, strides=[3, 1], storage_offset=0} user_input("x"), %w: f32[3] parameter("w")) {
    %y = aten.mul.Tensor(self=%x, other=%w) : f32[ 2 , 3 ]
    %z = aten.t.default(a=[1.5, 2], b=floats[1, 2], c=symints[], d=[ "s" ]  ;  e=-inf) : f32[2, 3]
    return %z user_output
  }
  symbol {name="s0", max=10}
})";
  auto m = parseModule(text, "hand.gcir");
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(printModule(**m),
            "module level(aten) producer(\"p\") {\n"
            "  symbol {name=\"s0\", max=10}\n"
            "  graph @forward(%x: f32[2, 3] user_input(\"x\"),\n"
            "                 %w: f32[3] parameter(\"w\")) {\n"
            "    %y = aten.mul.Tensor(self=%x, other=%w) : f32[2, 3]\n"
            "    %z = aten.t.default(a=[1.5, 2.0], b=[1.0, 2.0], c=symints[], "
            "d=[\"s\"]; e=-inf) : f32[2, 3]\n"
            "    return %z user_output\n"
            "  }\n"
            "}\n");
  roundTrip(**m);
}

TEST(TextFormTest, ParsedArgsHoldOnlyMeaningfulFields) {
  const char *text = R"(module level(aten) {
  graph @g(%x: f32[2] user_input("x"), %n: sym_int user_input("n")) {
    %y = aten.t.default(a=%x, b=3, c=symint(%n), d=symint(4), e=device(cuda:2), f=dtype(f16), g=none) : f32[2]
    return %y user_output
  }
})";
  auto m = parseModule(text, "t.gcir");
  ASSERT_TRUE(m) << m.error().message();
  const Graph &g = *(*m)->graphs()[0];
  const auto &args = g.nodes()[0]->args();
  Value *x = g.inputs()[0], *n = g.inputs()[1];
  expectArgEq(args[0].value, Arg::tensor(x), "a");
  expectArgEq(args[1].value, Arg::integer(3), "b");
  expectArgEq(args[2].value, symInt(n, 0), "c");
  expectArgEq(args[3].value, symInt(nullptr, 4), "d");
  expectArgEq(args[4].value, device({DeviceKind::CUDA, 2}), "e");
  expectArgEq(args[5].value, Arg::scalarType(DType::Float16), "f");
  expectArgEq(args[6].value, Arg::none(), "g");
  // Defaults are filled in as an importer fills them.
  const TensorType &t = g.inputs()[0]->type().tensor;
  EXPECT_EQ(t.strides, contiguousStrides((*m)->syms(), t.sizes));
  EXPECT_EQ(t.storageOffset, (*m)->syms().constant(0));
  EXPECT_EQ(g.nodes()[0]->results()[0]->definingNode(), g.nodes()[0].get());
}

TEST(TextFormTest, PrintType) {
  Module m;
  SymContext &sc = m.syms();
  EXPECT_EQ(printType(staticTensor(m, DType::Float32, {})), "f32[]");
  EXPECT_EQ(printType(tensor(m, DType::Int64, {sc.symbol("s0"), c(m, 3)})),
            "i64[s0, 3]");
  Type t = staticTensor(m, DType::Float32, {2, 3});
  t.tensor.strides = {c(m, 1), c(m, 2)};
  EXPECT_EQ(printType(t), "f32[2, 3]{strides=[1, 2]}");
  // Size-1 dimensions keep torch's contiguous strides.
  EXPECT_EQ(printType(staticTensor(m, DType::Float32, {1, 0, 4})), "f32[1, 0, 4]");
  EXPECT_EQ(printType(Type::makeScalar(Type::Kind::SymInt)), "sym_int");
  EXPECT_EQ(printType(Type::makeScalar(Type::Kind::SymFloat)), "sym_float");
  EXPECT_EQ(printType(Type::makeScalar(Type::Kind::SymBool)), "sym_bool");
}

TEST(TextFormTest, MutatedTextFailsCleanlyOrReprintsStably) {
  // Damaged text must give an error, never a crash; text that still parses
  // must print to a fixed point.
  std::string text = printModule(*buildRichModule());
  static constexpr char kAlphabet[] = "%@()[]{},;:=\"\\-.0123456789 \nafinsx";
  uint64_t seed = 12345;
  auto next = [&seed](uint64_t n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % n;
  };
  int parsed = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string mutated = text;
    for (int edits = 1 + next(3); edits > 0; --edits) {
      size_t at = next(mutated.size());
      switch (next(3)) {
      case 0:
        mutated.erase(at, 1 + next(4));
        break;
      case 1:
        mutated.insert(at, 1, kAlphabet[next(sizeof(kAlphabet) - 1)]);
        break;
      default:
        mutated[at] = kAlphabet[next(sizeof(kAlphabet) - 1)];
        break;
      }
    }
    auto m = parseModule(mutated, "m.gcir");
    if (!m) {
      EXPECT_EQ(m.error().message().rfind("m.gcir:", 0), 0u);
      continue;
    }
    ++parsed;
    std::string once = printModule(**m);
    auto again = parseModule(once, "m.gcir");
    ASSERT_TRUE(again) << again.error().message() << "\n" << once;
    EXPECT_EQ(printModule(**again), once);
  }
  // Some edits (in strings, names, numbers) leave valid text.
  EXPECT_GT(parsed, 0);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

struct BadInput {
  const char *text;
  const char *error;
};

class TextFormErrorTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(TextFormErrorTest, ReportsLocation) {
  auto m = parseModule(GetParam().text, "t.gcir");
  ASSERT_FALSE(m) << GetParam().text;
  EXPECT_EQ(m.error().message(), GetParam().error);
}

// Each text starts with a newline so that line numbers match the layout.
const BadInput kBadInputs[] = {
    {"", "t.gcir:1:1: expected 'module'"},
    {"\nmodule level(aten) {\n", "t.gcir:3:1: expected 'target', 'symbol', 'source', "
                                 "'weight', 'graph', 'loops' or '}'"},
    {"\nmodule level(atem) {}", "t.gcir:2:14: unknown level 'atem'"},
    {"\nmodule level(aten) {} x", "t.gcir:2:23: expected end of file"},
    {R"(
module level(aten) {
  graph @g(%x: f32[2] user_input("x")) {
    %a = aten.neg.default(self=%y) : f32[2]
    return %a user_output
  }
})",
     "t.gcir:4:32: use of undefined value '%y'"},
    {R"(
module level(aten) {
  graph @g(%x: f33[2] user_input("x")) {
    return
  }
})",
     "t.gcir:3:16: unknown dtype 'f33'"},
    {R"(
module level(aten) {
  graph @g(%a: f32[2] user_input("x")) {
    %a = aten.neg.default(self=%a) : f32[2]
    return
  }
})",
     "t.gcir:4:5: redefinition of value '%a'"},
    {R"(
module level(aten) {
  graph @g(%x: f32[2] user_input("x") {
    return
  }
})",
     "t.gcir:3:39: expected ')'"},
    {R"(
module level(aten) {
  graph @g(%x: f32[2] user_inpt("x")) {
    return
  }
})",
     "t.gcir:3:23: unknown input kind 'user_inpt'"},
    {R"(
module level(aten) {
  graph @g(%x: f32[2] user_input("x")) {
    return %x user
  }
})",
     "t.gcir:4:15: unknown output kind 'user'"},
    {R"(
module level(aten) {
  graph @g(%x: f32[2, s0 +] user_input("x")) {
    return
  }
})",
     "t.gcir:3:23: invalid expression 's0 +': at column 5: expected an "
     "expression, got the end of the expression"},
    {R"(
module level(aten) {
  graph @g(%x: f32[2]{strides=[1, 1]} user_input("x")) {
    return
  }
})",
     "t.gcir:3:31: expected 1 strides, got 2"},
    {R"(
module level(aten) {
  graph @g(%x: f32[2,] user_input("x")) {
    return
  }
})",
     "t.gcir:3:22: expected expression"},
    {R"(
module level(aten) {
  graph @g(%x: f32[2, 3]{strides=[1]} user_input("x")) {
    return
  }
})",
     "t.gcir:3:34: expected 2 strides, got 1"},
    {R"(
module level(aten) {
  graph @g(%x: f32[2]{color=red} user_input("x")) {
    return
  }
})",
     "t.gcir:3:23: unknown field 'color'"},
    {R"(
module level(aten) {
  graph @g(%x: f32[2]{device=gpu} user_input("x")) {
    return
  }
})",
     "t.gcir:3:30: unknown device 'gpu'"},
    {R"(
module level(aten) {
  graph @g() {
    %a = aten.t.default(x=[]) : f32[2]
    return
  }
})",
     "t.gcir:4:27: an empty list needs its kind, as in 'ints[]' or 'tensors[]'"},
    {R"(
module level(aten) {
  graph @g() {
    %a = aten.t.default(x=[1, 2.5]) : f32[2]
    return
  }
})",
     "t.gcir:4:31: expected integer"},
    {R"(
module level(aten) {
  graph @g() {
    %a = aten.t.default(x=1, x=2) : f32[2]
    return
  }
})",
     "t.gcir:4:30: duplicate argument 'x'"},
    {R"(
module level(aten) {
  graph @g() {
    %a = aten.t.default(x=dtype(f33)) : f32[2]
    return
  }
})",
     "t.gcir:4:33: unknown dtype 'f33'"},
    {R"(
module level(aten) {
  graph @g() {
    %a = aten.t.default(x=layout(round)) : f32[2]
    return
  }
})",
     "t.gcir:4:34: unknown layout 'round'"},
    {R"(
module level(aten) {
  graph @g() {
    %a = aten.t.default(x=blue) : f32[2]
    return
  }
})",
     "t.gcir:4:27: expected argument value, got 'blue'"},
    {R"(
module level(aten) {
  graph @g() {
    %a, %b = aten.t.default() : f32[2]
    return
  }
})",
     "t.gcir:4:31: 2 result name(s) but 1 type(s)"},
    {R"(
module level(aten) {
  graph @g() {
    %a = aten.t.default()
    return
  }
})",
     "t.gcir:5:5: expected ':' and result types"},
    {R"(
module level(aten) {
  graph @g() {
    %a = aten.t.default(s="abc
  }
})",
     "t.gcir:4:27: unterminated string"},
    {R"(
module level(aten) {
  graph @g() {
    %a = aten.t.default(s="a\qc") : f32[2]
  }
})",
     "t.gcir:4:29: invalid escape sequence in string"},
    {R"(
module level(aten) {
  graph @g() {
    %a = aten.t.default(i=99999999999999999999) : f32[2]
  }
})",
     "t.gcir:4:27: number out of range"},
    {R"(
module level(aten) {
  graph @g() {
    %a = aten.t.default(a=1; b=2; c=3) : f32[2]
  }
})",
     "t.gcir:4:33: expected ',' or ')'"},
    {R"(
module level(aten) {
  graph @g() {
    return
  }
  graph @g() {
    return
  }
})",
     "t.gcir:6:9: redefinition of graph '@g'"},
    {R"(
module level(aten) {
  symbol {name="s0", min=1, max=4}
  symbol {name="s0", min=1}
})",
     "t.gcir:4:16: redefinition of symbol 's0'"},
    {R"(
module level(aten) {
  weight {name="w", type=sym_int}
})",
     "t.gcir:3:26: expected a tensor type"},
    {R"(
module level(aten) {
  weight {name="w", type=f32[2], source=-1}
})",
     "t.gcir:3:41: expected unsigned integer"},
    {R"(
module level(aten) {
  source {kind=tarball, path="x"}
})",
     "t.gcir:3:16: unknown kind 'tarball'"},
    {R"(
module level(aten) {
  graph @g() {
    %a = aten.t.default() : f32[2]
  }
})",
     "t.gcir:5:3: expected node or 'return'"},
};

INSTANTIATE_TEST_SUITE_P(BadInputs, TextFormErrorTest,
                         ::testing::ValuesIn(kBadInputs));

} // namespace
} // namespace gc
