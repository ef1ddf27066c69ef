//===- FlatBufferIOTest.cpp - Tests of the binary graph file --------------===//
//
// Modules built in C++ must survive write -> read -> write with the same
// bytes and print the same; hostile buffers (truncated, corrupted, from a
// newer gc, with bad indices) must give an error that names the file.
//
//===----------------------------------------------------------------------===//

#include "gc/GraphFile/FileTables.h"
#include "gc/GraphFile/FlatBufferIO.h"
#include "gc/GraphFile/graph_generated.h"
#include "gc/IR/Printer.h"
#include "gc/IR/Verifier.h"

#include <flatbuffers/minireflect.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <set>

using namespace gc;

namespace {

std::span<const uint8_t> bytesOf(const std::string &s) {
  return {reinterpret_cast<const uint8_t *>(s.data()), s.size()};
}

std::string bufferOf(flatbuffers::FlatBufferBuilder &fbb) {
  return std::string(reinterpret_cast<const char *>(fbb.GetBufferPointer()),
                     fbb.GetSize());
}

Type tensorType(Module &m, DType dt, std::vector<const SymExpr *> sizes,
                Device device = {}) {
  TensorType t;
  t.dtype = dt;
  t.device = device;
  t.strides = contiguousStrides(m.syms(), sizes);
  t.sizes = std::move(sizes);
  t.storageOffset = m.syms().constant(0);
  return Type::makeTensor(std::move(t));
}

Arg argOf(ArgKind kind) {
  Arg a;
  a.kind = kind;
  return a;
}

/// A module with every ArgKind, every input and output kind, symbolic
/// sizes, several graphs, multi-result nodes, weights and their sources.
std::unique_ptr<Module> buildModule() {
  auto mp = std::make_unique<Module>();
  Module &m = *mp;
  SymContext &sc = m.syms();
  m.setLevel(Level::Joint);
  m.setProducer("torch 2.11.0");
  sc.setRange("s0", {2, 64});
  sc.setRange("s1", {1, SymRange::kUnbounded});
  const SymExpr *s0 = sc.symbol("s0"), *s1 = sc.symbol("s1");
  const SymExpr *eight = sc.constant(8);

  m.weightSources().push_back({WeightSource::Kind::Archive, "model.pt2"});
  m.weightSources().push_back({WeightSource::Kind::Blob, "sub/model.weights"});
  Weight w;
  w.name = "fc.weight";
  w.type = tensorType(m, DType::Float32, {eight, eight}).tensor;
  w.source = 0;
  w.offset = 4096;
  w.bytes = 256;
  w.sha256 = std::string(64, 'a');
  m.weights().push_back(w);
  Weight b = w;
  b.name = "bn.running_mean";
  b.type = tensorType(m, DType::BFloat16, {eight}, {DeviceKind::CUDA, 0}).tensor;
  b.type.requiresGrad = true;
  b.source = 1;
  b.offset = std::numeric_limits<uint64_t>::max();
  b.bytes = 16;
  m.weights().push_back(b);

  Graph &g = m.addGraph("forward");
  Value *x = g.addInput(
      "x",
      tensorType(m, DType::Float32, {sc.add(s0, sc.constant(1)), eight}),
      {InputKind::UserInput, "x", true});
  Value *fw = g.addInput("p_fc_weight", tensorType(m, DType::Float32, {eight, eight}),
                         {InputKind::Parameter, "fc.weight", true});
  Value *mean = g.addInput("b_mean",
                           tensorType(m, DType::BFloat16, {eight},
                                      {DeviceKind::CUDA, 0}),
                           {InputKind::Buffer, "bn.running_mean", false});
  g.addInput("c_lifted", tensorType(m, DType::Int64, {}),
             {InputKind::Constant, "lifted_tensor_0", true});
  g.addInput("token", tensorType(m, DType::Float32, {}),
             {InputKind::Token, "", true});
  Value *n = g.addInput("n", Type::makeScalar(Type::Kind::SymInt),
                        {InputKind::UserInput, "n", true});

  Node *size = g.addNode(ops::aten_sym_size_int,
                         {{"self", false, Arg::tensor(x)},
                          {"dim", false, Arg::integer(0)}},
                         {{"sym_size", Type::makeScalar(Type::Kind::SymInt)}});
  Value *sz = size->results()[0];
  Value *flt = g.addNode(ops::_operator_truediv, {{"a", false, Arg::tensor(sz)}},
                         {{"sym_float", Type::makeScalar(Type::Kind::SymFloat)}})
                   ->results()[0];
  Value *bl = g.addNode(ops::_operator_eq, {{"a", false, Arg::tensor(sz)}},
                        {{"sym_eq", Type::makeScalar(Type::Kind::SymBool)}})
                  ->results()[0];

  // Slicing a transposed view: non-contiguous strides and an offset.
  TensorType sliced = tensorType(m, DType::Float32, {s1, eight}).tensor;
  sliced.strides = {sc.constant(1), sc.mul(s0, s1)};
  sliced.storageOffset = sc.floorDiv(s0, sc.constant(2));
  Node *add = g.addNode(
      ops::aten_add_Tensor,
      {{"self", false, Arg::tensor(x)},
       {"other", false, Arg::tensor(fw)},
       {"alpha", true, Arg::integer(-3)}},
      {{"add", Type::makeTensor(sliced)}});
  Value *sum = add->results()[0];
  add->setLoc(m.locations().intern({"/src/model.py", 42, "forward", "layers.3.attn", "Attention"}));

  Node *split = g.addNode(
      ops::aten_split_Tensor,
      {{"self", false, Arg::tensor(sum)}, {"split_size", false, Arg::integer(4)}},
      {{"getitem", tensorType(m, DType::Float32, {sc.constant(4), eight})},
       {"getitem_1", tensorType(m, DType::Float32, {sc.constant(4), eight})}},
      ResultForm::List);
  Node *varMean = g.addNode(
      ops::aten_var_mean_correction, {{"self", false, Arg::tensor(sum)}},
      {{"var", tensorType(m, DType::Float32, {})},
       {"mean", tensorType(m, DType::Float32, {})}},
      ResultForm::Tuple);

  std::vector<NamedArg> all;
  all.push_back({"none", false, Arg::none()});
  all.push_back({"tensor", false, Arg::tensor(x)});
  Arg tensors = argOf(ArgKind::Tensors);
  tensors.values = {split->results()[0], split->results()[1]};
  all.push_back({"tensors", false, tensors});
  Arg optional = argOf(ArgKind::OptionalTensors);
  optional.values = {x, nullptr, mean};
  all.push_back({"optional", false, optional});
  all.push_back({"int", false, Arg::integer(std::numeric_limits<int64_t>::min())});
  all.push_back({"ints", false, Arg::integers({1, -2, 3})});
  all.push_back({"float", false, Arg::real(-0.0)});
  Arg floats = argOf(ArgKind::Floats);
  floats.floats = {1.5, std::nan(""), -INFINITY, 1e-300};
  all.push_back({"floats", false, floats});
  all.push_back({"bool", true, Arg::boolean(true)});
  Arg bools = argOf(ArgKind::Bools);
  bools.ints = {1, 0, 1};
  all.push_back({"bools", true, bools});
  all.push_back({"string", true, Arg::string("tanh")});
  Arg strings = argOf(ArgKind::Strings);
  strings.strings = {"a", "", std::string("nul\0byte", 8)};
  all.push_back({"strings", true, strings});
  Arg symIntValue = argOf(ArgKind::SymInt);
  symIntValue.values = {sz};
  symIntValue.ints = {0};
  all.push_back({"sym_int_value", false, symIntValue});
  Arg symIntConst = argOf(ArgKind::SymInt);
  symIntConst.values = {nullptr};
  symIntConst.ints = {7};
  all.push_back({"sym_int_const", false, symIntConst});
  Arg symInts = argOf(ArgKind::SymInts);
  symInts.values = {n, nullptr, sz};
  symInts.ints = {0, 5, 0};
  all.push_back({"sym_ints", false, symInts});
  Arg symFloat = argOf(ArgKind::SymFloat);
  symFloat.values = {flt};
  all.push_back({"sym_float", false, symFloat});
  Arg symBool = argOf(ArgKind::SymBool);
  symBool.values = {bl};
  all.push_back({"sym_bool", false, symBool});
  all.push_back({"dtype", true, Arg::scalarType(DType::BFloat16)});
  Arg format = argOf(ArgKind::MemoryFormat);
  format.ints = {static_cast<int64_t>(MemoryFormat::ChannelsLast)};
  all.push_back({"memory_format", true, format});
  Arg layout = argOf(ArgKind::Layout);
  layout.ints = {static_cast<int64_t>(Layout::Strided)};
  all.push_back({"layout", true, layout});
  Arg device = argOf(ArgKind::Device);
  device.device = {DeviceKind::CUDA, 1};
  all.push_back({"device", true, device});
  Arg meta = argOf(ArgKind::Device);
  meta.device = {DeviceKind::Meta, -1};
  all.push_back({"meta", true, meta});
  Value *every = g.addNode(ops::aten__assert_tensor_metadata_default, std::move(all),
                           {{"every", tensorType(m, DType::Float32, {s1})}})
                     ->results()[0];
  // A node without results.
  g.addNode(ops::aten__assert_scalar_default, {{"assert_msg", false, Arg::string("")}},
            {});

  g.addOutput(every, {OutputKind::UserOutput, ""});
  g.addOutput(varMean->results()[0], {OutputKind::LossOutput, ""});
  g.addOutput(varMean->results()[1], {OutputKind::BufferMutation, "bn.running_mean"});
  g.addOutput(sum, {OutputKind::UserInputMutation, "x"});
  g.addOutput(split->results()[0], {OutputKind::ParameterMutation, "fc.weight"});
  g.addOutput(split->results()[1], {OutputKind::GradientToParameter, "fc.weight"});
  g.addOutput(x, {OutputKind::GradientToUserInput, "x"});
  g.addOutput(sz, {OutputKind::Token, ""});

  Graph &bw = m.addGraph("backward");
  Value *t = bw.addInput("tangent", tensorType(m, DType::Float16, {s0, sc.mul(s0, s1)}),
                         {InputKind::UserInput, "tangent", true});
  Value *neg = bw.addNode(ops::aten_neg_default, {{"self", false, Arg::tensor(t)}},
                          {{"neg", t->type()}})
                   ->results()[0];
  // Another graph's node, at the same place: the file holds it once.
  neg->definingNode()->setLoc(add->loc());
  bw.addOutput(neg, {OutputKind::UserOutput, ""});
  return mp;
}

std::unique_ptr<Module> readOk(const std::string &bytes) {
  Expected<std::unique_ptr<Module>> m =
      readModuleFlatBuffer(bytesOf(bytes), "test.gcm");
  EXPECT_TRUE(bool(m)) << m.error().message();
  return m ? m.take() : nullptr;
}

std::string readError(const std::string &bytes) {
  Expected<std::unique_ptr<Module>> m =
      readModuleFlatBuffer(bytesOf(bytes), "test.gcm");
  EXPECT_FALSE(bool(m)) << "read a bad buffer";
  return m ? "" : m.error().message();
}

//===----------------------------------------------------------------------===//
// The field declarations against graph.fbs
//===----------------------------------------------------------------------===//

template <class M> struct Stored {
  static constexpr flatbuffers::ElementaryType type =
      std::is_same_v<M, bool>                                      ? flatbuffers::ET_BOOL
      : std::is_same_v<M, uint8_t> || (std::is_enum_v<M> && sizeof(M) == 1)
                                                                   ? flatbuffers::ET_UCHAR
      : std::is_same_v<M, int32_t> || std::is_same_v<M, const SymExpr *> ||
              std::is_same_v<M, Value *> || std::is_same_v<M, const SourceLoc *>
                                                                   ? flatbuffers::ET_INT
      : std::is_same_v<M, uint32_t>                                ? flatbuffers::ET_UINT
      : std::is_same_v<M, int64_t>                                 ? flatbuffers::ET_LONG
      : std::is_same_v<M, uint64_t>                                ? flatbuffers::ET_ULONG
      : std::is_same_v<M, double>                                  ? flatbuffers::ET_DOUBLE
      : std::is_same_v<M, std::string> || std::is_same_v<M, OpId> ? flatbuffers::ET_STRING
                                                                   : flatbuffers::ET_SEQUENCE;
  static constexpr bool repeated = false;
};
template <class M> struct Stored<std::vector<M>> : Stored<M> {
  static constexpr bool repeated = true;
};

/// The IR's values of E are the schema's, in the same order: the file stores
/// the number. The text names are the schema's in snake case, but dtypes.
template <class E> void expectSameEnum(const flatbuffers::TypeTable *table) {
  ASSERT_EQ(table->num_elems, EnumInfo<E>::count) << table->names[0];
  auto folded = [](std::string_view name) {
    std::string out;
    for (char c : name)
      if (c != '_')
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  for (size_t i = 0; !std::is_same_v<E, DType> && i < EnumInfo<E>::count; ++i)
    EXPECT_EQ(folded(EnumInfo<E>::name(static_cast<E>(i))), folded(table->names[i]));
}

/// T's declaration and its table in graph.fbs, as flatc reflects it, agree
/// field by field: name and position (so the FlatBuffers id), how the field
/// is stored, and for an enum how many values it has.
template <class T> void expectMatchesSchema(const flatbuffers::TypeTable *table) {
  constexpr size_t n = std::tuple_size_v<std::remove_cvref_t<decltype(kFields<T>)>>;
  ASSERT_EQ(table->num_elems, n) << table->names[0];
  forEachField<T>([&](size_t id, const auto &f) {
    using M = std::remove_cvref_t<decltype(std::declval<T &>().*f.member)>;
    using S = std::conditional_t<std::is_same_v<typename std::remove_cvref_t<decltype(f)>::Codec,
                                                Bytes>,
                                 std::vector<uint8_t>, M>;
    flatbuffers::TypeCode code = table->type_codes[id];
    EXPECT_EQ(table->names[id], f.name);
    EXPECT_EQ(code.base_type, Stored<S>::type) << f.name;
    EXPECT_EQ(bool(code.is_repeating), Stored<S>::repeated) << f.name;
    if constexpr (std::is_enum_v<M> && !std::is_same_v<M, OpId>)
      if (code.sequence_ref >= 0) // a scalar op is a plain ubyte
        expectSameEnum<M>(table->type_refs[code.sequence_ref]());
    return true;
  });
}

TEST(FlatBufferIOTest, DeclarationsMatchTheSchema) {
  expectMatchesSchema<TensorType>(fb::TensorTypeTypeTable());
  expectMatchesSchema<Arg>(fb::ArgTypeTable());
  expectMatchesSchema<NamedArg>(fb::NamedArgTypeTable());
  expectMatchesSchema<LoopArg>(fb::NamedArgTypeTable());
  expectMatchesSchema<InputSpec>(fb::InputSpecTypeTable());
  expectMatchesSchema<OutputSpec>(fb::OutputSpecTypeTable());
  expectMatchesSchema<WeightSource>(fb::WeightSourceTypeTable());
  expectMatchesSchema<Weight>(fb::WeightTypeTable());
  expectMatchesSchema<Target>(fb::TargetTypeTable());
  expectMatchesSchema<BodyOp>(fb::BodyOpTypeTable());
  expectMatchesSchema<Body>(fb::BodyTypeTable());
  expectMatchesSchema<Buffer>(fb::BufferTypeTable());
  expectMatchesSchema<BufferView>(fb::BufferViewTypeTable());
  expectMatchesSchema<PostOp>(fb::PostOpTypeTable());
  expectMatchesSchema<LoopNode>(fb::LoopNodeTypeTable());
  expectMatchesSchema<LoopBinding>(fb::LoopBindingTypeTable());
  expectMatchesSchema<KernelGroup>(fb::KernelGroupTypeTable());
  expectMatchesSchema<InplacePair>(fb::InplacePairTypeTable());
  expectMatchesSchema<PlanStep>(fb::PlanStepTypeTable());
  expectMatchesSchema<BufferPlacement>(fb::BufferPlacementTypeTable());
  expectMatchesSchema<Plan>(fb::PlanTypeTable());
  expectMatchesSchema<LoopGraph>(fb::LoopGraphTypeTable());
  expectMatchesSchema<FileSymbol>(fb::SymbolTypeTable());
  expectMatchesSchema<FileExpr>(fb::SymExprNodeTypeTable());
  expectMatchesSchema<FileValue>(fb::ValueTypeTable());
  expectMatchesSchema<FileNode>(fb::NodeTypeTable());
  expectMatchesSchema<FileOutput>(fb::OutputTypeTable());
  expectMatchesSchema<FileGraph>(fb::GraphTypeTable());
  expectMatchesSchema<SourceLoc>(fb::SourceLocationTypeTable());
  const flatbuffers::TypeTable *root = fb::ModuleTypeTable();
  ASSERT_EQ(root->num_elems, kModuleFields.size());
  for (size_t id = 0; id < kModuleFields.size(); ++id)
    EXPECT_EQ(root->names[id], kModuleFields[id]);
  // The enums the root and the device struct hold.
  expectSameEnum<Level>(fb::LevelTypeTable());
  expectSameEnum<DeviceKind>(fb::DeviceKindTypeTable());
  expectSameEnum<TargetDevice>(fb::TargetDeviceTypeTable());
  expectSameEnum<WeightsMode>(fb::WeightsModeTypeTable());
}

TEST(FlatBufferIOTest, RoundTripIsByteIdentical) {
  std::unique_ptr<Module> m = buildModule();
  std::string bytes = writeModuleFlatBuffer(*m);
  EXPECT_TRUE(isModuleFlatBuffer(bytesOf(bytes)));
  std::unique_ptr<Module> back = readOk(bytes);
  ASSERT_TRUE(back);
  EXPECT_EQ(writeModuleFlatBuffer(*back), bytes);
  EXPECT_EQ(printModule(*back), printModule(*m));
}

TEST(FlatBufferIOTest, ReadBackKeepsEveryField) {
  std::unique_ptr<Module> m = buildModule();
  std::unique_ptr<Module> back = readOk(writeModuleFlatBuffer(*m));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->level(), Level::Joint);
  EXPECT_EQ(back->producer(), "torch 2.11.0");
  EXPECT_EQ(back->syms().ranges(), m->syms().ranges());
  EXPECT_EQ(back->weightSources(), m->weightSources());
  ASSERT_EQ(back->weights().size(), 2u);
  const Weight &w = back->weights()[1];
  EXPECT_EQ(w.name, "bn.running_mean");
  EXPECT_EQ(w.offset, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(w.type.device, (Device{DeviceKind::CUDA, 0}));
  EXPECT_TRUE(w.type.requiresGrad);

  ASSERT_EQ(back->graphs().size(), 2u);
  const Graph &g = *back->graphs()[0];
  EXPECT_EQ(g.inputSpecs(), m->graphs()[0]->inputSpecs());
  EXPECT_EQ(g.outputSpecs(), m->graphs()[0]->outputSpecs());
  EXPECT_EQ(g.inputs()[0]->type().tensor.sizes[0]->str(), "s0 + 1");
  const Node &add = *g.nodes()[3];
  EXPECT_EQ(add.op(), ops::aten_add_Tensor);
  EXPECT_TRUE(add.args()[2].keywordOnly);
  EXPECT_EQ(add.results()[0]->type().tensor.strides[1]->str(), "s0*s1");
  EXPECT_EQ(add.results()[0]->type().tensor.storageOffset->str(),
            "floordiv(s0, 2)");
  ASSERT_TRUE(add.loc());
  EXPECT_EQ(*add.loc(), *m->graphs()[0]->nodes()[3]->loc());
  EXPECT_EQ(add.loc(), back->graphs()[1]->nodes()[0]->loc()); // interned once
  EXPECT_EQ(back->locations().size(), 1u);
  EXPECT_FALSE(g.nodes()[4]->loc());
  EXPECT_EQ(g.nodes()[4]->resultForm(), ResultForm::List);
  EXPECT_EQ(g.nodes()[5]->resultForm(), ResultForm::Tuple);
  EXPECT_EQ(g.nodes()[5]->results()[1]->resultIndex(), 1u);

  const Node &every = *g.nodes()[6];
  const Node &orig = *m->graphs()[0]->nodes()[6];
  ASSERT_EQ(every.args().size(), orig.args().size());
  for (size_t i = 0; i < every.args().size(); ++i) {
    const Arg &a = every.args()[i].value, &o = orig.args()[i].value;
    SCOPED_TRACE(orig.args()[i].name);
    EXPECT_EQ(a.kind, o.kind);
    ASSERT_EQ(a.values.size(), o.values.size());
    for (size_t k = 0; k < a.values.size(); ++k) {
      ASSERT_EQ(a.values[k] == nullptr, o.values[k] == nullptr);
      if (a.values[k]) {
        EXPECT_EQ(a.values[k]->name(), o.values[k]->name());
      }
    }
    EXPECT_EQ(a.ints, o.ints);
    ASSERT_EQ(a.floats.size(), o.floats.size());
    for (size_t k = 0; k < a.floats.size(); ++k)
      EXPECT_EQ(std::memcmp(&a.floats[k], &o.floats[k], sizeof(double)), 0);
    EXPECT_EQ(a.strings, o.strings);
    EXPECT_EQ(a.device, o.device);
  }
  // Values point into the graph they were read into.
  EXPECT_EQ(every.args()[1].value.values[0], g.inputs()[0]);
  EXPECT_EQ(g.outputs()[2], g.nodes()[5]->results()[1]);
}

TEST(FlatBufferIOTest, WritingIsDeterministic) {
  std::unique_ptr<Module> a = buildModule(), b = buildModule();
  std::string bytes = writeModuleFlatBuffer(*a);
  EXPECT_EQ(writeModuleFlatBuffer(*a), bytes);
  EXPECT_EQ(writeModuleFlatBuffer(*b), bytes);
}

TEST(FlatBufferIOTest, EmptyModule) {
  Module m;
  std::string bytes = writeModuleFlatBuffer(m);
  std::unique_ptr<Module> back = readOk(bytes);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->level(), Level::Aten);
  EXPECT_TRUE(back->graphs().empty());
  EXPECT_EQ(writeModuleFlatBuffer(*back), bytes);
}

TEST(FlatBufferIOTest, RejectsNegativeDeviceIndex) {
  // Found by graph-fuzzer: cpu with index -2 read, printed as "cpu" and
  // parsed back as cpu with no index, so the text did not round-trip.
  Module m;
  Graph &g = m.addGraph("forward");
  g.addInput("x", tensorType(m, DType::Float32, {m.syms().constant(2)}, {DeviceKind::CPU, -2}),
             {InputKind::UserInput, "x", true});
  EXPECT_NE(readError(writeModuleFlatBuffer(m)).find("device index -2 is negative"),
            std::string::npos);
}

TEST(FlatBufferIOTest, RejectsUnknownMemoryFormatAndLayout) {
  // Found by graph-fuzzer: memory format 160 read and verified, and printing
  // it indexed past the table of names. The verifier refuses it, as every
  // tool that reads a graph file runs it.
  for (ArgKind kind : {ArgKind::MemoryFormat, ArgKind::Layout}) {
    Module m;
    Graph &g = m.addGraph("forward");
    Value *x = g.addInput("x", tensorType(m, DType::Float32, {m.syms().constant(2)}),
                          {InputKind::UserInput, "x", true});
    Arg format = argOf(kind);
    format.ints = {160};
    Node *n = g.addNode(ops::aten_clone_default,
                        {{"self", false, Arg::tensor(x)}, {"memory_format", true, format}},
                        {{"y", x->type()}});
    g.addOutput(n->results()[0], {OutputKind::UserOutput, "", ""});
    std::string want = kind == ArgKind::Layout ? "is not a layout" : "is not a memory format";
    Error e = verifyModule(m);
    ASSERT_TRUE(e) << want;
    EXPECT_NE(e.message().find(want), std::string::npos) << e.message();
  }
}

TEST(FlatBufferIOTest, RejectsStridesOfAnotherRank) {
  // Found by graph-fuzzer: a weight of rank 0 with 2 strides read, and its
  // text did not parse.
  Module m;
  TensorType t = tensorType(m, DType::Float32, {m.syms().constant(2)}).tensor;
  t.strides.push_back(m.syms().constant(1));
  m.addGraph("forward").addInput("x", Type::makeTensor(t), {InputKind::UserInput, "x", true});
  // Reading builds what the file holds; the verifier, which every tool runs
  // on what it reads, refuses it.
  std::unique_ptr<Module> back = readOk(writeModuleFlatBuffer(m));
  ASSERT_TRUE(back);
  Error e = verifyModule(*back);
  EXPECT_TRUE(e);
  EXPECT_NE(e.message().find("%x has 1 sizes but 2 strides"), std::string::npos) << e.message();
}

TEST(FlatBufferIOTest, RejectsMissingStride) {
  // Found by graph-fuzzer: a stride of index -1 read as null, and printing
  // the module followed it.
  Module m;
  TensorType t = tensorType(m, DType::Float32, {m.syms().constant(2)}).tensor;
  t.strides = {nullptr};
  m.addGraph("forward").addInput("x", Type::makeTensor(t), {InputKind::UserInput, "x", true});
  EXPECT_NE(readError(writeModuleFlatBuffer(m)).find("graphs[0].values[0].tensor.strides[0]: expression index -1 is out of range"),
            std::string::npos);
}

TEST(FlatBufferIOTest, RejectsWrongIdentifier) {
  std::string bytes = writeModuleFlatBuffer(*buildModule());
  bytes[4] = 'X';
  EXPECT_FALSE(isModuleFlatBuffer(bytesOf(bytes)));
  EXPECT_EQ(readError(bytes), "'test.gcm': not a gc graph file");
  EXPECT_EQ(readError("GC"), "'test.gcm': not a gc graph file");
  EXPECT_EQ(readError(""), "'test.gcm': not a gc graph file");
}

void expectEveryTruncationRejected(const std::string &bytes) {
  for (size_t n = 0; n < bytes.size(); ++n) {
    // A fresh allocation per prefix, so that ASan sees reads past the end.
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + n);
    Expected<std::unique_ptr<Module>> m =
        readModuleFlatBuffer(prefix, "test.gcm");
    ASSERT_FALSE(bool(m)) << "a prefix of " << n << " of " << bytes.size()
                          << " bytes was read";
    EXPECT_EQ(m.error().message().rfind("'test.gcm': ", 0), 0u);
  }
}

TEST(FlatBufferIOTest, RejectsEveryTruncation) {
  expectEveryTruncationRejected(writeModuleFlatBuffer(*buildModule()));
  Module empty;
  expectEveryTruncationRejected(writeModuleFlatBuffer(empty));
  Module small;
  small.setProducer("p");
  small.syms().setRange("abcde", {0, 1});
  expectEveryTruncationRejected(writeModuleFlatBuffer(small));
}

TEST(FlatBufferIOTest, SurvivesCorruption) {
  // Every single-byte corruption must give a module or an error, never a
  // crash (run under ASan/UBSan to make this strong).
  std::string bytes = writeModuleFlatBuffer(*buildModule());
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      std::vector<uint8_t> bad(bytes.begin(), bytes.end());
      bad[i] ^= flip;
      Expected<std::unique_ptr<Module>> m = readModuleFlatBuffer(bad, "x.gcm");
      if (m)
        writeModuleFlatBuffer(**m);
    }
  }
}

TEST(FlatBufferIOTest, ReadsUnalignedBytes) {
  std::string bytes = writeModuleFlatBuffer(*buildModule());
  std::vector<uint8_t> shifted(bytes.size() + 1);
  std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
  Expected<std::unique_ptr<Module>> m = readModuleFlatBuffer(
      std::span<const uint8_t>(shifted).subspan(1), "test.gcm");
  ASSERT_TRUE(bool(m)) << m.error().message();
  EXPECT_EQ(writeModuleFlatBuffer(**m), bytes);
}

//===----------------------------------------------------------------------===//
// Hand-built buffers: what gc never writes, but a reader must refuse.
//===----------------------------------------------------------------------===//

std::string moduleWithVersion(uint32_t major, uint32_t minor) {
  flatbuffers::FlatBufferBuilder fbb;
  fb::FormatVersion version(major, minor);
  fb::FinishModuleBuffer(fbb, fb::CreateModule(fbb, &version));
  return bufferOf(fbb);
}

TEST(FlatBufferIOTest, ChecksTheVersion) {
  EXPECT_TRUE(readOk(moduleWithVersion(kFormatMajor, kFormatMinor)));
  std::string current =
      std::to_string(kFormatMajor) + "." + std::to_string(kFormatMinor);
  EXPECT_EQ(readError(moduleWithVersion(kFormatMajor + 1, 0)),
            "'test.gcm': graph file format version " +
                std::to_string(kFormatMajor + 1) +
                ".0 is newer than this gc supports (" + current +
                "); use a newer gc");
  EXPECT_EQ(readError(moduleWithVersion(kFormatMajor, kFormatMinor + 1)),
            "'test.gcm': graph file format version " +
                std::to_string(kFormatMajor) + "." +
                std::to_string(kFormatMinor + 1) +
                " is newer than this gc supports (" + current +
                "); use a newer gc");
  // Files of older minor versions (1.0, 1.1) still read.
  for (uint32_t minor = 0; minor < kFormatMinor; ++minor)
    EXPECT_TRUE(readOk(moduleWithVersion(kFormatMajor, minor)));
  EXPECT_EQ(readError(moduleWithVersion(0, 3)),
            "'test.gcm': graph file format version 0.3 is older than this gc "
            "supports (1.x)");

  flatbuffers::FlatBufferBuilder fbb;
  fb::FinishModuleBuffer(fbb, fb::CreateModule(fbb, nullptr));
  EXPECT_EQ(readError(bufferOf(fbb)),
            "'test.gcm': corrupt gc graph file (no format version)");
}

TEST(FlatBufferIOTest, NewerVersionIsReportedEvenIfTheRestDoesNotVerify) {
  // A future major version may lay out the rest differently; the version
  // must still be read and named. Here `graphs` points past the end.
  std::string bytes = moduleWithVersion(7, 2);
  flatbuffers::FlatBufferBuilder fbb;
  fb::FormatVersion version(7, 2);
  auto graph = fb::CreateGraph(fbb, fbb.CreateString("g"));
  auto graphs = fbb.CreateVector(std::vector{graph});
  fb::FinishModuleBuffer(
      fbb, fb::CreateModule(fbb, &version, fb::Level::Aten, 0, 0, 0, graphs));
  std::string future = bufferOf(fbb);
  future.resize(future.size() - 8);
  EXPECT_NE(readError(future).find("version 7.2 is newer"), std::string::npos);
}

/// One graph with one input tensor of the given sizes (expression indices
/// into `exprs`), and one node with the given argument value indices.
std::string graphBuffer(std::vector<int32_t> argValues,
                        std::vector<uint32_t> results = {1},
                        std::vector<int32_t> sizes = {0},
                        int32_t output = 1, uint8_t dtype = 0) {
  flatbuffers::FlatBufferBuilder fbb;
  fb::FormatVersion version(kFormatMajor, kFormatMinor);
  std::vector<flatbuffers::Offset<fb::SymExprNode>> exprs = {
      fb::CreateSymExprNode(fbb, fb::SymKind::Const, 4)};
  auto exprVec = fbb.CreateVector(exprs);
  auto makeValue = [&](const char *name) {
    fb::Device device(fb::DeviceKind::CPU, -1);
    auto tt = fb::CreateTensorType(fbb, static_cast<fb::DType>(dtype), &device,
                                   fbb.CreateVector(sizes),
                                   fbb.CreateVector(std::vector<int32_t>{0}), 0);
    return fb::CreateValue(fbb, fbb.CreateString(name), fb::ValueKind::Tensor, tt);
  };
  std::vector<flatbuffers::Offset<fb::Value>> values = {makeValue("x"),
                                                        makeValue("y")};
  auto arg = fb::CreateArg(fbb, fb::ArgKind::Tensor, fbb.CreateVector(argValues));
  auto namedArg = fb::CreateNamedArg(fbb, fbb.CreateString("self"), false, arg);
  auto node = fb::CreateNode(fbb, fbb.CreateString("aten.neg.default"),
                             fb::ResultForm::Single,
                             fbb.CreateVector(std::vector{namedArg}),
                             fbb.CreateVector(results));
  auto input = fb::CreateInputSpec(fbb, fb::InputKind::UserInput,
                                   fbb.CreateString("x"));
  auto out = fb::CreateOutput(fbb, output);
  auto graph = fb::CreateGraph(
      fbb, fbb.CreateString("main"), fbb.CreateVector(values),
      fbb.CreateVector(std::vector{input}), fbb.CreateVector(std::vector{node}),
      fbb.CreateVector(std::vector{out}));
  fb::FinishModuleBuffer(
      fbb, fb::CreateModule(fbb, &version, fb::Level::Aten, 0, 0, exprVec,
                            fbb.CreateVector(std::vector{graph})));
  return bufferOf(fbb);
}

TEST(FlatBufferIOTest, HandBuiltGraphReads) {
  std::unique_ptr<Module> m = readOk(graphBuffer({0}));
  ASSERT_TRUE(m);
  const Graph &g = *m->graphs()[0];
  EXPECT_EQ(g.nodes()[0]->args()[0].value.values[0], g.inputs()[0]);
  EXPECT_EQ(g.outputs()[0]->name(), "y");
  EXPECT_EQ(g.inputs()[0]->type().tensor.sizes[0]->constant(), 4);
}

TEST(FlatBufferIOTest, RejectsBadValueIndices) {
  EXPECT_EQ(readError(graphBuffer({5})),
            "'test.gcm': graphs[0].nodes[0].args[0].value.values[0]: value index 5 is not a "
            "value defined before the node");
  // A node may not use its own result.
  EXPECT_NE(readError(graphBuffer({1})).find("not a value defined before"),
            std::string::npos);
  EXPECT_NE(readError(graphBuffer({-2})).find("value index -2"),
            std::string::npos);
  EXPECT_EQ(readError(graphBuffer({0}, {0})),
            "'test.gcm': graphs[0]: node 0: result 0 is value 0, but the next value is 1 of 2");
  EXPECT_EQ(readError(graphBuffer({0}, {})),
            "'test.gcm': graphs[0]: 2 values, but inputs and nodes define 1");
  EXPECT_EQ(readError(graphBuffer({0}, {1}, {0}, 2)),
            "'test.gcm': graphs[0]: output 0 is value 2, which is out of range (the graph has 2)");
}

TEST(FlatBufferIOTest, RejectsBadExpressionIndicesAndEnums) {
  EXPECT_EQ(readError(graphBuffer({0}, {1}, {3})),
            "'test.gcm': graphs[0].values[0].tensor.sizes[0]: expression index 3 is out of range "
            "(the file has 1)");
  EXPECT_EQ(readError(graphBuffer({0}, {1}, {0}, 1, 200)),
            "'test.gcm': graphs[0].values[0].tensor.dtype: unknown value 200");
}

std::string exprBuffer(
    const std::function<void(flatbuffers::FlatBufferBuilder &,
                              std::vector<flatbuffers::Offset<fb::SymExprNode>> &)>
        &fill) {
  flatbuffers::FlatBufferBuilder fbb;
  fb::FormatVersion version(kFormatMajor, kFormatMinor);
  std::vector<flatbuffers::Offset<fb::SymExprNode>> exprs;
  fill(fbb, exprs);
  auto exprVec = fbb.CreateVector(exprs);
  fb::FinishModuleBuffer(
      fbb, fb::CreateModule(fbb, &version, fb::Level::Aten, 0, 0, exprVec));
  return bufferOf(fbb);
}

TEST(FlatBufferIOTest, RejectsBadExpressions) {
  using Nodes = std::vector<flatbuffers::Offset<fb::SymExprNode>>;
  auto sym = [](flatbuffers::FlatBufferBuilder &fbb, const char *name) {
    return fb::CreateSymExprNode(fbb, fb::SymKind::Symbol, 0,
                                 fbb.CreateString(name));
  };
  auto op = [](flatbuffers::FlatBufferBuilder &fbb, fb::SymKind kind,
               std::vector<uint32_t> ops) {
    return fb::CreateSymExprNode(fbb, kind, 0, 0, fbb.CreateVector(ops));
  };
  // Canonical: s0 + s1.
  EXPECT_TRUE(readOk(exprBuffer([&](auto &fbb, Nodes &n) {
    n = {sym(fbb, "s0"), sym(fbb, "s1"), op(fbb, fb::SymKind::Add, {0, 1})};
  })));
  EXPECT_EQ(readError(exprBuffer([&](auto &fbb, Nodes &n) {
              n = {sym(fbb, "s0"), sym(fbb, "s1"),
                   op(fbb, fb::SymKind::Add, {1, 0})};
            })),
            "'test.gcm': expression 2 is not in canonical form");
  EXPECT_EQ(readError(exprBuffer([&](auto &fbb, Nodes &n) {
              n = {sym(fbb, "s0"), op(fbb, fb::SymKind::Add, {0, 1})};
            })),
            "'test.gcm': expression 1 uses expression 1, which does not come "
            "before it");
  EXPECT_EQ(readError(exprBuffer([&](auto &fbb, Nodes &n) {
              n = {sym(fbb, "s0"), op(fbb, fb::SymKind::Mod, {0})};
            })),
            "'test.gcm': expression 1 has 1 operands");
  EXPECT_EQ(readError(exprBuffer([&](auto &fbb, Nodes &n) {
              n = {sym(fbb, "min")};
            })),
            "'test.gcm': expression 0 has an invalid symbol name 'min'");
  EXPECT_EQ(readError(exprBuffer([&](auto &fbb, Nodes &n) {
              n = {op(fbb, static_cast<fb::SymKind>(42), {})};
            })),
            "'test.gcm': expressions[0].kind: unknown value 42");
  // A product of sums is refused before it is expanded.
  EXPECT_EQ(readError(exprBuffer([&](auto &fbb, Nodes &n) {
              n = {sym(fbb, "s0"), sym(fbb, "s1"),
                   op(fbb, fb::SymKind::Add, {0, 1})};
              for (uint32_t i = 0; i < 40; ++i)
                n.push_back(op(fbb, fb::SymKind::Mul, {2, 2, 2, 2}));
            })),
            "'test.gcm': expression 3 is not in canonical form");
  // A chain deeper than any real size is refused: floordiv(..., s0).
  std::string deep = exprBuffer([&](auto &fbb, Nodes &n) {
    n = {sym(fbb, "s0")};
    for (uint32_t i = 0; i < 1000; ++i)
      n.push_back(op(fbb, fb::SymKind::FloorDiv, {i, 0}));
  });
  EXPECT_NE(readError(deep).find("is nested too deeply"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// Module::clone at the graph levels
//===----------------------------------------------------------------------===//

/// Copying an expression into its own context gives the same pointer; one of
/// another context would come back as a new one.
void expectOwnExpressions(Module &m) {
  auto own = [&m](const TensorType &t, const std::string &where) {
    for (const SymExpr *e : t.sizes)
      EXPECT_EQ(m.syms().copyOf(e), e) << where << " size " << e->str();
    for (const SymExpr *e : t.strides)
      EXPECT_EQ(m.syms().copyOf(e), e) << where << " stride " << e->str();
    if (t.storageOffset) {
      EXPECT_EQ(m.syms().copyOf(t.storageOffset), t.storageOffset) << where;
    }
  };
  for (const Weight &w : m.weights())
    own(w.type, w.name);
  for (const auto &g : m.graphs()) {
    for (const Value *v : g->inputs())
      own(v->type().tensor, v->name());
    for (const auto &n : g->nodes())
      for (const Value *v : n->results())
        own(v->type().tensor, v->name());
  }
}

/// Every value an argument or output names is one of `g`'s own.
void expectOwnValues(const Graph &g) {
  std::set<const Value *> values(g.inputs().begin(), g.inputs().end());
  for (const auto &n : g.nodes()) {
    for (const NamedArg &a : n->args())
      for (const Value *v : a.value.values)
        EXPECT_TRUE(!v || values.count(v)) << g.name() << ": argument " << a.name;
    for (const Value *v : n->results()) {
      EXPECT_EQ(v->definingNode(), n.get()) << v->name();
      values.insert(v);
    }
  }
  for (const Value *v : g.outputs())
    EXPECT_TRUE(values.count(v)) << g.name() << ": output " << v->name();
}

TEST(CloneTest, GraphLevelsCopyEveryField) {
  for (Level level : {Level::Aten, Level::Core, Level::Joint, Level::Partitioned}) {
    std::unique_ptr<Module> m = buildModule();
    m->setLevel(level);
    m->setSourceBaseDir("build/stages");
    m->pendingBlob() = Module::PendingBlob{1, std::string("\0\1\2", 3)};
    std::unique_ptr<Module> c = m->clone();
    EXPECT_EQ(printModule(*c), printModule(*m)) << levelName(level);
    EXPECT_EQ(writeModuleFlatBuffer(*c), writeModuleFlatBuffer(*m)) << levelName(level);
    EXPECT_EQ(c->level(), level);
    EXPECT_EQ(c->producer(), m->producer());
    EXPECT_EQ(c->sourceBaseDir(), "build/stages");
    EXPECT_EQ(c->syms().ranges(), m->syms().ranges());
    EXPECT_EQ(c->weightSources(), m->weightSources());
    ASSERT_TRUE(c->pendingBlob());
    EXPECT_EQ(c->pendingBlob()->source, 1u);
    EXPECT_EQ(c->pendingBlob()->bytes, std::string("\0\1\2", 3));
    expectOwnExpressions(*c);
    ASSERT_EQ(c->graphs().size(), m->graphs().size());
    for (size_t i = 0; i < c->graphs().size(); ++i) {
      expectOwnValues(*c->graphs()[i]);
      EXPECT_EQ(c->graphs()[i]->inputSpecs(), m->graphs()[i]->inputSpecs());
      EXPECT_EQ(c->graphs()[i]->outputSpecs(), m->graphs()[i]->outputSpecs());
    }
  }
}

TEST(CloneTest, EmptyModule) {
  Module m;
  std::unique_ptr<Module> c = m.clone();
  EXPECT_EQ(printModule(*c), printModule(m));
  EXPECT_EQ(writeModuleFlatBuffer(*c), writeModuleFlatBuffer(m));
  EXPECT_FALSE(c->pendingBlob());
}

TEST(CloneTest, ChangingTheCloneLeavesTheOriginal) {
  std::unique_ptr<Module> m = buildModule();
  std::string text = printModule(*m), bytes = writeModuleFlatBuffer(*m);
  std::unique_ptr<Module> c = m->clone();
  Graph &g = *c->graphs()[0];
  Value *x = g.inputs()[0];
  g.addNode(ops::aten_neg_default, {{"self", false, Arg::tensor(x)}}, {{"neg", x->type()}});
  x->type().tensor.sizes[0] = c->syms().symbol("s9");
  g.nodes()[1]->args()[0].value = Arg::tensor(x);
  g.outputSpec(0).target = "renamed";
  c->weights()[0].name = "renamed.weight";
  c->weightSources()[0].path = "other.pt2";
  c->syms().setRange("s9", {1, 3});
  c->addGraph("extra");
  c->setProducer("someone else");
  EXPECT_NE(printModule(*c), text);
  EXPECT_EQ(printModule(*m), text);
  EXPECT_EQ(writeModuleFlatBuffer(*m), bytes);
}

TEST(CloneTest, TheCloneOutlivesTheOriginal) {
  std::unique_ptr<Module> m = buildModule();
  std::string text = printModule(*m), bytes = writeModuleFlatBuffer(*m);
  std::unique_ptr<Module> c = m->clone();
  m.reset();
  EXPECT_EQ(printModule(*c), text);
  EXPECT_EQ(writeModuleFlatBuffer(*c), bytes);
}

TEST(CloneTest, CopiesSharedExpressionsOnce) {
  // Each level shares its operands with the next, so a copy that followed
  // every path would take 2^60 steps.
  Module m;
  SymContext &sc = m.syms();
  const SymExpr *e = sc.symbol("s0");
  for (int i = 0; i < 60; ++i)
    e = sc.floorDiv(sc.max(e, sc.symbol("s1")), sc.min(e, sc.symbol("s2")));
  Module other;
  const SymExpr *copy = other.syms().copyOf(e);
  // (Printing or comparing them would walk every path; the copy of the
  // graph modules above checks contents.)
  EXPECT_NE(copy, e);
  EXPECT_EQ(copy->kind(), SymExpr::Kind::FloorDiv);
  EXPECT_EQ(other.syms().copyOf(e), copy);
  EXPECT_EQ(other.syms().copyOf(copy), copy);
}

} // namespace
