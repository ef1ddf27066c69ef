//===- FlatBufferIO.cpp - The binary graph file ---------------------------===//
//
// The layout is formats/graph.fbs. Writing walks the module in one fixed
// order, so the bytes depend only on the module. Reading trusts nothing:
// FlatBuffers' verifier checks that every table, vector and string lies in
// the buffer, and the reader then checks what the verifier cannot (indices,
// enum values, canonical expressions, definition before use) before it
// rebuilds the module through the IR's own API.
//
//===----------------------------------------------------------------------===//

#include "gc/Bytecode/FlatBufferIO.h"

#include "gc/Bytecode/graph_generated.h"

#include <cstring>
#include <unordered_map>

namespace gc {

namespace {

// The file's enums mirror the IR's value for value, so conversions are casts.
template <typename A, typename B> constexpr bool same(A a, B b) {
  return static_cast<int>(a) == static_cast<int>(b);
}
static_assert(same(fb::Level::Aten, Level::Aten) &&
              same(fb::Level::Core, Level::Core) &&
              same(fb::Level::Joint, Level::Joint) &&
              same(fb::Level::Partitioned, Level::Partitioned) &&
              same(fb::Level::Loops, Level::Loops) &&
              same(fb::Level::Kernels, Level::Kernels) &&
              same(fb::Level::MAX, Level::Kernels));
static_assert(same(fb::SymKind::Const, SymExpr::Kind::Const) &&
              same(fb::SymKind::Symbol, SymExpr::Kind::Symbol) &&
              same(fb::SymKind::Add, SymExpr::Kind::Add) &&
              same(fb::SymKind::Mul, SymExpr::Kind::Mul) &&
              same(fb::SymKind::FloorDiv, SymExpr::Kind::FloorDiv) &&
              same(fb::SymKind::Mod, SymExpr::Kind::Mod) &&
              same(fb::SymKind::Min, SymExpr::Kind::Min) &&
              same(fb::SymKind::Max, SymExpr::Kind::Max) &&
              same(fb::SymKind::MAX, SymExpr::Kind::Max));
static_assert(same(fb::DType::Bool, DType::Bool) &&
              same(fb::DType::UInt8, DType::UInt8) &&
              same(fb::DType::Int8, DType::Int8) &&
              same(fb::DType::Int16, DType::Int16) &&
              same(fb::DType::Int32, DType::Int32) &&
              same(fb::DType::Int64, DType::Int64) &&
              same(fb::DType::Float16, DType::Float16) &&
              same(fb::DType::BFloat16, DType::BFloat16) &&
              same(fb::DType::Float32, DType::Float32) &&
              same(fb::DType::Float64, DType::Float64) &&
              same(fb::DType::MAX, kNumDTypes - 1));
static_assert(same(fb::DeviceKind::CPU, DeviceKind::CPU) &&
              same(fb::DeviceKind::CUDA, DeviceKind::CUDA) &&
              same(fb::DeviceKind::Meta, DeviceKind::Meta) &&
              same(fb::DeviceKind::MAX, DeviceKind::Meta));
static_assert(same(fb::ValueKind::Tensor, Type::Kind::Tensor) &&
              same(fb::ValueKind::SymInt, Type::Kind::SymInt) &&
              same(fb::ValueKind::SymFloat, Type::Kind::SymFloat) &&
              same(fb::ValueKind::SymBool, Type::Kind::SymBool) &&
              same(fb::ValueKind::MAX, Type::Kind::SymBool));
static_assert(same(fb::ArgKind::None, ArgKind::None) &&
              same(fb::ArgKind::Tensor, ArgKind::Tensor) &&
              same(fb::ArgKind::Tensors, ArgKind::Tensors) &&
              same(fb::ArgKind::OptionalTensors, ArgKind::OptionalTensors) &&
              same(fb::ArgKind::Int, ArgKind::Int) &&
              same(fb::ArgKind::Ints, ArgKind::Ints) &&
              same(fb::ArgKind::Float, ArgKind::Float) &&
              same(fb::ArgKind::Floats, ArgKind::Floats) &&
              same(fb::ArgKind::Bool, ArgKind::Bool) &&
              same(fb::ArgKind::Bools, ArgKind::Bools) &&
              same(fb::ArgKind::String, ArgKind::String) &&
              same(fb::ArgKind::Strings, ArgKind::Strings) &&
              same(fb::ArgKind::SymInt, ArgKind::SymInt) &&
              same(fb::ArgKind::SymInts, ArgKind::SymInts) &&
              same(fb::ArgKind::SymFloat, ArgKind::SymFloat) &&
              same(fb::ArgKind::SymBool, ArgKind::SymBool) &&
              same(fb::ArgKind::ScalarType, ArgKind::ScalarType) &&
              same(fb::ArgKind::MemoryFormat, ArgKind::MemoryFormat) &&
              same(fb::ArgKind::Layout, ArgKind::Layout) &&
              same(fb::ArgKind::Device, ArgKind::Device) &&
              same(fb::ArgKind::MAX, ArgKind::Device));
static_assert(same(fb::ResultForm::Single, ResultForm::Single) &&
              same(fb::ResultForm::Tuple, ResultForm::Tuple) &&
              same(fb::ResultForm::List, ResultForm::List) &&
              same(fb::ResultForm::MAX, ResultForm::List));
static_assert(same(fb::InputKind::UserInput, InputKind::UserInput) &&
              same(fb::InputKind::Parameter, InputKind::Parameter) &&
              same(fb::InputKind::Buffer, InputKind::Buffer) &&
              same(fb::InputKind::Constant, InputKind::Constant) &&
              same(fb::InputKind::Token, InputKind::Token) &&
              same(fb::InputKind::MAX, InputKind::Token));
static_assert(
    same(fb::OutputKind::UserOutput, OutputKind::UserOutput) &&
    same(fb::OutputKind::LossOutput, OutputKind::LossOutput) &&
    same(fb::OutputKind::BufferMutation, OutputKind::BufferMutation) &&
    same(fb::OutputKind::UserInputMutation, OutputKind::UserInputMutation) &&
    same(fb::OutputKind::ParameterMutation, OutputKind::ParameterMutation) &&
    same(fb::OutputKind::GradientToParameter,
         OutputKind::GradientToParameter) &&
    same(fb::OutputKind::GradientToUserInput,
         OutputKind::GradientToUserInput) &&
    same(fb::OutputKind::Token, OutputKind::Token) &&
    same(fb::OutputKind::MAX, OutputKind::Token));
static_assert(same(fb::WeightSourceKind::Archive, WeightSource::Kind::Archive) &&
              same(fb::WeightSourceKind::Blob, WeightSource::Kind::Blob) &&
              same(fb::WeightSourceKind::MAX, WeightSource::Kind::Blob));

/// Index written for "no value" / "no expression".
constexpr int32_t kNone = -1;

/// Expressions deeper than this are refused on reading, so that the
/// recursive walks over expressions (printing, comparing, writing) cannot
/// exhaust the stack on a hostile file. Real sizes are a few levels deep.
constexpr unsigned kMaxExprDepth = 512;

template <typename To, typename From> To convert(From e) {
  return static_cast<To>(static_cast<std::underlying_type_t<From>>(e));
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

class ModuleWriter {
public:
  explicit ModuleWriter(const Module &m) : module_(m) {}

  std::string write() {
    collectExpressions();
    auto symbols = writeSymbols();
    auto expressions = writeExpressions();
    std::vector<flatbuffers::Offset<fb::Graph>> graphs;
    for (const auto &g : module_.graphs())
      graphs.push_back(writeGraph(*g));
    std::vector<flatbuffers::Offset<fb::WeightSource>> sources;
    for (const WeightSource &s : module_.weightSources())
      sources.push_back(fb::CreateWeightSource(
          fbb_, convert<fb::WeightSourceKind>(s.kind), str(s.path)));
    std::vector<flatbuffers::Offset<fb::Weight>> weights;
    for (const Weight &w : module_.weights()) {
      auto name = str(w.name);
      auto type = writeTensorType(w.type);
      weights.push_back(fb::CreateWeight(fbb_, name, type, w.source, w.offset,
                                         w.bytes, str(w.sha256)));
    }
    fb::FormatVersion version(kFormatMajor, kFormatMinor);
    auto producer = str(module_.producer());
    auto graphsVec = vec(graphs);
    auto sourcesVec = vec(sources);
    auto weightsVec = vec(weights);
    auto root = fb::CreateModule(
        fbb_, &version, convert<fb::Level>(module_.level()), producer,
        symbols, expressions, graphsVec, sourcesVec, weightsVec);
    fb::FinishModuleBuffer(fbb_, root);
    return std::string(reinterpret_cast<const char *>(fbb_.GetBufferPointer()),
                       fbb_.GetSize());
  }

private:
  // No call below has two arguments that add to the buffer: C++ leaves the
  // order of evaluating arguments open, and the bytes must not depend on the
  // compiler.

  // Empty strings and vectors are left out; readers take absent as empty.
  flatbuffers::Offset<flatbuffers::String> str(const std::string &s) {
    return s.empty() ? 0 : fbb_.CreateString(s.data(), s.size());
  }
  template <typename T>
  flatbuffers::Offset<flatbuffers::Vector<T>> vec(const std::vector<T> &v) {
    return v.empty() ? 0 : fbb_.CreateVector(v);
  }

  /// Numbers every expression the module uses, in post-order of first use,
  /// so that operands come before their users.
  void collectExpressions() {
    auto visitType = [this](const TensorType &t) {
      for (const SymExpr *e : t.sizes)
        visit(e);
      for (const SymExpr *e : t.strides)
        visit(e);
      visit(t.storageOffset);
    };
    for (const auto &g : module_.graphs()) {
      for (const Value *v : g->inputs())
        if (v->type().isTensor())
          visitType(v->type().tensor);
      for (const auto &n : g->nodes())
        for (const Value *v : n->results())
          if (v->type().isTensor())
            visitType(v->type().tensor);
    }
    for (const Weight &w : module_.weights())
      visitType(w.type);
  }

  void visit(const SymExpr *e) {
    if (!e || exprIndex_.count(e))
      return;
    for (const SymExpr *op : e->operands())
      visit(op);
    exprIndex_.emplace(e, static_cast<int32_t>(exprs_.size()));
    exprs_.push_back(e);
  }

  int32_t exprIndex(const SymExpr *e) const {
    return e ? exprIndex_.at(e) : kNone;
  }

  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Symbol>>>
  writeSymbols() {
    std::vector<flatbuffers::Offset<fb::Symbol>> symbols;
    for (const auto &[name, range] : module_.syms().ranges())
      symbols.push_back(
          fb::CreateSymbol(fbb_, str(name), range.min, range.max));
    return vec(symbols);
  }

  flatbuffers::Offset<
      flatbuffers::Vector<flatbuffers::Offset<fb::SymExprNode>>>
  writeExpressions() {
    std::vector<flatbuffers::Offset<fb::SymExprNode>> nodes;
    std::vector<uint32_t> operands;
    for (const SymExpr *e : exprs_) {
      operands.clear();
      for (const SymExpr *op : e->operands())
        operands.push_back(static_cast<uint32_t>(exprIndex_.at(op)));
      auto symbol = e->isSymbol() ? str(e->symbolName()) : 0;
      nodes.push_back(fb::CreateSymExprNode(
          fbb_, convert<fb::SymKind>(e->kind()),
          e->isConst() ? e->constant() : 0, symbol, vec(operands)));
    }
    return vec(nodes);
  }

  flatbuffers::Offset<fb::TensorType> writeTensorType(const TensorType &t) {
    std::vector<int32_t> sizes, strides;
    for (const SymExpr *e : t.sizes)
      sizes.push_back(exprIndex(e));
    for (const SymExpr *e : t.strides)
      strides.push_back(exprIndex(e));
    auto sizesVec = vec(sizes);
    auto stridesVec = vec(strides);
    fb::Device device(convert<fb::DeviceKind>(t.device.kind), t.device.index);
    return fb::CreateTensorType(fbb_, convert<fb::DType>(t.dtype), &device,
                                sizesVec, stridesVec,
                                exprIndex(t.storageOffset), t.requiresGrad);
  }

  flatbuffers::Offset<fb::Value> writeValue(const Value &v) {
    valueIndex_.emplace(&v, static_cast<int32_t>(valueIndex_.size()));
    auto name = str(v.name());
    // Only a tensor's type has contents; a scalar's `tensor` is unused.
    auto tensor = v.type().isTensor() ? writeTensorType(v.type().tensor) : 0;
    return fb::CreateValue(fbb_, name, convert<fb::ValueKind>(v.type().kind),
                           tensor);
  }

  /// The index of a value of the graph being written. The module must
  /// verify (verifyModule), so every value used is one of the graph's.
  int32_t valueIndex(const Value *v) const {
    if (!v)
      return kNone;
    auto it = valueIndex_.find(v);
    assert(it != valueIndex_.end() && "a value from outside the graph");
    return it == valueIndex_.end() ? kNone : it->second;
  }

  flatbuffers::Offset<fb::Arg> writeArg(const Arg &a) {
    std::vector<int32_t> values;
    for (const Value *v : a.values)
      values.push_back(valueIndex(v));
    auto valuesVec = vec(values);
    auto ints = vec(a.ints);
    auto floats = vec(a.floats);
    auto strings =
        a.strings.empty() ? 0 : fbb_.CreateVectorOfStrings(a.strings);
    fb::Device device(convert<fb::DeviceKind>(a.device.kind), a.device.index);
    bool hasDevice = a.device != gc::Device();
    return fb::CreateArg(fbb_, convert<fb::ArgKind>(a.kind), valuesVec, ints,
                         floats, strings, hasDevice ? &device : nullptr);
  }

  flatbuffers::Offset<fb::Node> writeNode(const Node &n) {
    std::vector<flatbuffers::Offset<fb::NamedArg>> args;
    for (const NamedArg &a : n.args()) {
      auto name = str(a.name);
      auto value = writeArg(a.value);
      args.push_back(fb::CreateNamedArg(fbb_, name, a.keywordOnly, value));
    }
    std::vector<uint32_t> results;
    for (const Value *v : n.results())
      results.push_back(static_cast<uint32_t>(valueIndex(v)));
    auto op = str(n.op());
    auto argsVec = vec(args);
    return fb::CreateNode(fbb_, op, convert<fb::ResultForm>(n.resultForm()),
                          argsVec, vec(results));
  }

  flatbuffers::Offset<fb::Graph> writeGraph(const Graph &g) {
    valueIndex_.clear();
    std::vector<flatbuffers::Offset<fb::Value>> values;
    for (const Value *v : g.inputs())
      values.push_back(writeValue(*v));
    for (const auto &n : g.nodes())
      for (const Value *v : n->results())
        values.push_back(writeValue(*v));

    std::vector<flatbuffers::Offset<fb::InputSpec>> inputs;
    for (const InputSpec &s : g.inputSpecs())
      inputs.push_back(fb::CreateInputSpec(
          fbb_, convert<fb::InputKind>(s.kind), str(s.target), s.persistent));
    std::vector<flatbuffers::Offset<fb::Node>> nodes;
    for (const auto &n : g.nodes())
      nodes.push_back(writeNode(*n));
    std::vector<flatbuffers::Offset<fb::Output>> outputs;
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      const OutputSpec &spec = g.outputSpecs()[i];
      // One string per statement: argument order is unspecified in C++.
      auto target = str(spec.target);
      auto aliasOf = str(spec.aliasOf);
      outputs.push_back(fb::CreateOutput(fbb_, valueIndex(g.outputs()[i]),
                                         convert<fb::OutputKind>(spec.kind), target, aliasOf));
    }
    auto name = str(g.name());
    auto valuesVec = vec(values);
    auto inputsVec = vec(inputs);
    auto nodesVec = vec(nodes);
    return fb::CreateGraph(fbb_, name, valuesVec, inputsVec, nodesVec,
                           vec(outputs));
  }

  const Module &module_;
  flatbuffers::FlatBufferBuilder fbb_;
  /// Expressions in table order, and each one's index. The map only
  /// answers lookups; it never decides an order.
  std::vector<const SymExpr *> exprs_;
  std::unordered_map<const SymExpr *, int32_t> exprIndex_;
  /// Values of the graph being written, by index.
  std::unordered_map<const Value *, int32_t> valueIndex_;
};

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

template <typename E> bool inRange(E e) {
  return static_cast<unsigned>(e) <= static_cast<unsigned>(E::MAX);
}

std::string readString(const flatbuffers::String *s) {
  return s ? s->str() : std::string();
}

/// Reads a vector of 8-byte scalars. The verifier aligns vectors to 4
/// bytes only, so a hostile file can misplace one; copy bytewise.
template <typename T>
std::vector<T> readWideScalars(const flatbuffers::Vector<T> *v) {
  std::vector<T> out(v ? v->size() : 0);
  for (size_t i = 0; i < out.size(); ++i) {
    T x;
    std::memcpy(&x, v->Data() + i * sizeof(T), sizeof(T));
    out[i] = flatbuffers::EndianScalar(x);
  }
  return out;
}

/// Symbol names must print and parse back in the text form.
bool isValidSymbolName(std::string_view name) {
  auto identStart = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (name.empty() || !identStart(name[0]))
    return false;
  for (char c : name)
    if (!identStart(c) && !(c >= '0' && c <= '9'))
      return false;
  return name != "floordiv" && name != "mod" && name != "min" &&
         name != "max";
}

/// Rebuilds a module from a verified buffer. Inner functions return errors
/// without the file name; read() puts it in front.
class ModuleReader {
public:
  explicit ModuleReader(const fb::Module &root) : root_(root) {}

  Expected<std::unique_ptr<Module>> read() {
    module_ = std::make_unique<Module>();
    if (!inRange(root_.level()))
      return makeError() << "unknown level "
                         << static_cast<int>(root_.level());
    module_->setLevel(convert<Level>(root_.level()));
    module_->setProducer(readString(root_.producer()));
    GC_RETURN_IF_ERROR(readSymbols());
    GC_RETURN_IF_ERROR(readExpressions());
    if (const auto *sources = root_.weight_sources()) {
      for (const fb::WeightSource *s : *sources) {
        if (!inRange(s->kind()))
          return makeError() << "weight source "
                             << module_->weightSources().size()
                             << " has an unknown kind";
        module_->weightSources().push_back(
            {convert<WeightSource::Kind>(s->kind()), readString(s->path())});
      }
    }
    if (const auto *weights = root_.weights())
      for (const fb::Weight *w : *weights)
        GC_RETURN_IF_ERROR(readWeight(*w));
    if (const auto *graphs = root_.graphs())
      for (const fb::Graph *g : *graphs)
        GC_RETURN_IF_ERROR(readGraph(*g));
    return std::move(module_);
  }

private:
  Error readSymbols() {
    const auto *symbols = root_.symbols();
    if (!symbols)
      return Error::success();
    SymContext &ctx = module_->syms();
    for (const fb::Symbol *s : *symbols) {
      std::string name = readString(s->name());
      if (!isValidSymbolName(name))
        return makeError() << "invalid symbol name '" << name << "'";
      if (ctx.range(name))
        return makeError() << "symbol '" << name << "' is listed twice";
      ctx.setRange(name, {s->min(), s->max()});
    }
    return Error::success();
  }

  /// Builds expression `node` from already built operands through the
  /// canonical builders; null if it is not canonical.
  Expected<const SymExpr *> buildExpr(const fb::SymExprNode &node,
                                      const std::vector<const SymExpr *> &ops) {
    SymContext &ctx = module_->syms();
    using Kind = SymExpr::Kind;
    Kind kind = convert<Kind>(node.kind());
    bool nary = kind == Kind::Add || kind == Kind::Mul || kind == Kind::Min ||
                kind == Kind::Max;
    bool binary = kind == Kind::FloorDiv || kind == Kind::Mod;
    size_t want = nary ? 2 : binary ? 2 : 0;
    if (nary ? ops.size() < want : ops.size() != want)
      return makeError() << "has " << ops.size() << " operands";
    switch (kind) {
    case Kind::Const:
      return ctx.constant(node.constant());
    case Kind::Symbol: {
      std::string name = readString(node.symbol());
      if (!isValidSymbolName(name))
        return makeError() << "has an invalid symbol name '" << name << "'";
      return ctx.symbol(name);
    }
    case Kind::FloorDiv:
      return ctx.floorDiv(ops[0], ops[1]);
    case Kind::Mod:
      return ctx.mod(ops[0], ops[1]);
    default:
      break;
    }
    // A canonical product has no sum among its factors. Checking first keeps
    // a hostile product of sums from expanding before it is refused.
    if (kind == Kind::Mul)
      for (const SymExpr *op : ops)
        if (op->kind() == Kind::Add)
          return makeError() << "is not in canonical form";
    // Combine pairwise: these are associative and commutative on the
    // canonical form, and pairs keep long sums O(n log n).
    std::vector<const SymExpr *> work = ops;
    while (work.size() > 1) {
      size_t n = 0;
      for (size_t i = 0; i + 1 < work.size(); i += 2) {
        const SymExpr *a = work[i], *b = work[i + 1];
        work[n++] = kind == Kind::Add   ? ctx.add(a, b)
                    : kind == Kind::Mul ? ctx.mul(a, b)
                    : kind == Kind::Min ? ctx.min(a, b)
                                        : ctx.max(a, b);
      }
      if (work.size() % 2)
        work[n++] = work.back();
      work.resize(n);
    }
    return work[0];
  }

  Error readExpressions() {
    const auto *nodes = root_.expressions();
    if (!nodes)
      return Error::success();
    std::vector<unsigned> depth;
    std::vector<const SymExpr *> ops;
    for (uint32_t i = 0; i < nodes->size(); ++i) {
      const fb::SymExprNode &node = *nodes->Get(i);
      auto fail = [i]() {
        ErrorBuilder b;
        b << "expression " << i << " ";
        return b;
      };
      if (!inRange(node.kind()))
        return fail() << "has an unknown kind "
                      << static_cast<int>(node.kind());
      ops.clear();
      unsigned d = 0;
      if (const auto *operands = node.operands()) {
        for (uint32_t op : *operands) {
          if (op >= i)
            return fail() << "uses expression " << op
                          << ", which does not come before it";
          ops.push_back(exprs_[op]);
          d = std::max(d, depth[op]);
        }
      }
      if (d + 1 > kMaxExprDepth)
        return fail() << "is nested too deeply";
      Expected<const SymExpr *> e = buildExpr(node, ops);
      if (!e)
        return fail() << e.error().message();
      // The builders return what the file holds only if it was canonical.
      const SymExpr *built = *e;
      auto builtOps = built->operands();
      if (built->kind() != convert<SymExpr::Kind>(node.kind()) ||
          !std::equal(builtOps.begin(), builtOps.end(), ops.begin(),
                      ops.end()))
        return fail() << "is not in canonical form";
      exprs_.push_back(built);
      depth.push_back(d + 1);
    }
    return Error::success();
  }

  Expected<const SymExpr *> expr(int32_t index, bool optional) const {
    if (index == kNone && optional)
      return static_cast<const SymExpr *>(nullptr);
    if (index < 0 || static_cast<size_t>(index) >= exprs_.size())
      return makeError() << "expression index " << index
                         << " is out of range (the file has " << exprs_.size()
                         << ")";
    return exprs_[index];
  }

  Error readTensorType(const fb::TensorType &t, TensorType &out) const {
    if (!inRange(t.dtype()))
      return makeError() << "unknown dtype " << static_cast<int>(t.dtype());
    out.dtype = convert<DType>(t.dtype());
    if (const fb::Device *d = t.device()) {
      if (!inRange(d->kind()))
        return makeError() << "unknown device kind "
                           << static_cast<int>(d->kind());
      out.device = {convert<DeviceKind>(d->kind()), d->index()};
    }
    auto readExprs = [this](const flatbuffers::Vector<int32_t> *in,
                            std::vector<const SymExpr *> &exprs,
                            const char *what) -> Error {
      if (!in)
        return Error::success();
      for (int32_t index : *in) {
        Expected<const SymExpr *> e = expr(index, /*optional=*/true);
        if (!e)
          return makeError() << what << " " << exprs.size() << ": "
                             << e.error().message();
        exprs.push_back(*e);
      }
      return Error::success();
    };
    GC_RETURN_IF_ERROR(readExprs(t.sizes(), out.sizes, "size"));
    GC_RETURN_IF_ERROR(readExprs(t.strides(), out.strides, "stride"));
    Expected<const SymExpr *> offset = expr(t.storage_offset(), true);
    if (!offset)
      return makeError() << "storage offset: " << offset.error().message();
    out.storageOffset = *offset;
    out.requiresGrad = t.requires_grad();
    return Error::success();
  }

  Error readWeight(const fb::Weight &w) {
    Weight weight;
    weight.name = readString(w.name());
    auto fail = [&weight]() {
      ErrorBuilder b;
      b << "weight '" << weight.name << "': ";
      return b;
    };
    if (!w.type())
      return fail() << "no type";
    if (Error e = readTensorType(*w.type(), weight.type))
      return fail() << e.message();
    if (w.source() >= module_->weightSources().size())
      return fail() << "source index " << w.source()
                    << " is out of range (the file has "
                    << module_->weightSources().size() << ")";
    weight.source = w.source();
    weight.offset = w.offset();
    weight.bytes = w.bytes();
    weight.sha256 = readString(w.sha256());
    module_->weights().push_back(std::move(weight));
    return Error::success();
  }

  /// The name and type of value `index` of the graph.
  Error readValue(const fb::Value &v, size_t index, std::string &name,
                  Type &type) const {
    name = readString(v.name());
    auto fail = [&]() {
      ErrorBuilder b;
      b << "value " << index << " (%" << name << "): ";
      return b;
    };
    if (!inRange(v.kind()))
      return fail() << "unknown kind " << static_cast<int>(v.kind());
    type.kind = convert<Type::Kind>(v.kind());
    if (type.isTensor() != (v.tensor() != nullptr))
      return fail() << (type.isTensor() ? "a tensor without a tensor type"
                                        : "a scalar with a tensor type");
    if (v.tensor())
      if (Error e = readTensorType(*v.tensor(), type.tensor))
        return fail() << e.message();
    return Error::success();
  }

  Error readArg(const fb::Arg &a, const std::vector<Value *> &defined,
                Arg &out) const {
    if (!inRange(a.kind()))
      return makeError() << "unknown kind " << static_cast<int>(a.kind());
    out.kind = convert<ArgKind>(a.kind());
    if (const auto *values = a.values()) {
      for (int32_t index : *values) {
        if (index == kNone) {
          out.values.push_back(nullptr);
          continue;
        }
        if (index < 0 || static_cast<size_t>(index) >= defined.size())
          return makeError() << "value index " << index
                             << " is not a value defined before the node";
        out.values.push_back(defined[index]);
      }
    }
    out.ints = readWideScalars(a.ints());
    out.floats = readWideScalars(a.floats());
    if (const auto *strings = a.strings())
      for (const flatbuffers::String *s : *strings)
        out.strings.push_back(readString(s));
    if (const fb::Device *d = a.device()) {
      if (!inRange(d->kind()))
        return makeError() << "unknown device kind "
                           << static_cast<int>(d->kind());
      out.device = {convert<DeviceKind>(d->kind()), d->index()};
    }
    return Error::success();
  }

  Error readGraph(const fb::Graph &g) {
    std::string graphName = readString(g.name());
    auto fail = [&graphName]() {
      ErrorBuilder b;
      b << "graph @" << graphName << ": ";
      return b;
    };
    Graph &graph = module_->addGraph(graphName);
    const auto *values = g.values();
    size_t numValues = values ? values->size() : 0;
    // Values in definition order; arguments and outputs index this.
    std::vector<Value *> defined;

    if (const auto *inputs = g.inputs()) {
      if (inputs->size() > numValues)
        return fail() << inputs->size() << " inputs but only " << numValues
                      << " values";
      for (uint32_t i = 0; i < inputs->size(); ++i) {
        const fb::InputSpec &s = *inputs->Get(i);
        if (!inRange(s.kind()))
          return fail() << "input " << i << " has an unknown kind "
                        << static_cast<int>(s.kind());
        std::string name;
        Type type;
        if (Error e = readValue(*values->Get(i), i, name, type))
          return fail() << e.message();
        defined.push_back(graph.addInput(
            std::move(name), std::move(type),
            {convert<InputKind>(s.kind()), readString(s.target()),
             s.persistent()}));
      }
    }

    if (const auto *nodes = g.nodes()) {
      for (uint32_t k = 0; k < nodes->size(); ++k) {
        const fb::Node &n = *nodes->Get(k);
        std::string op = readString(n.op());
        auto failNode = [&]() {
          ErrorBuilder b = fail();
          b << "node " << k << " (" << op << "): ";
          return b;
        };
        if (!inRange(n.form()))
          return failNode() << "unknown result form "
                            << static_cast<int>(n.form());
        std::vector<NamedArg> args;
        if (const auto *fbArgs = n.args()) {
          for (const fb::NamedArg *a : *fbArgs) {
            NamedArg &arg = args.emplace_back();
            arg.name = readString(a->name());
            arg.keywordOnly = a->keyword_only();
            if (!a->value())
              return failNode() << "argument '" << arg.name << "' has no value";
            if (Error e = readArg(*a->value(), defined, arg.value))
              return failNode() << "argument '" << arg.name
                                << "': " << e.message();
          }
        }
        std::vector<std::pair<std::string, Type>> results;
        if (const auto *fbResults = n.results()) {
          for (uint32_t index : *fbResults) {
            size_t next = defined.size() + results.size();
            if (index != next || index >= numValues)
              return failNode() << "result " << results.size() << " is value "
                                << index << ", but the next value is " << next
                                << " of " << numValues;
            auto &[name, type] = results.emplace_back();
            if (Error e = readValue(*values->Get(index), index, name, type))
              return failNode() << e.message();
          }
        }
        Node *node = graph.addNode(std::move(op), std::move(args),
                                   std::move(results),
                                   convert<ResultForm>(n.form()));
        defined.insert(defined.end(), node->results().begin(),
                       node->results().end());
      }
    }
    if (defined.size() != numValues)
      return fail() << numValues << " values, but inputs and nodes define "
                    << defined.size();

    if (const auto *outputs = g.outputs()) {
      for (uint32_t i = 0; i < outputs->size(); ++i) {
        const fb::Output &o = *outputs->Get(i);
        if (!inRange(o.kind()))
          return fail() << "output " << i << " has an unknown kind "
                        << static_cast<int>(o.kind());
        if (o.value() < 0 || static_cast<size_t>(o.value()) >= numValues)
          return fail() << "output " << i << " is value " << o.value()
                        << ", which is out of range (the graph has "
                        << numValues << ")";
        graph.addOutput(defined[o.value()], {convert<OutputKind>(o.kind()),
                                             readString(o.target()),
                                             readString(o.alias_of())});
      }
    }
    return Error::success();
  }

  const fb::Module &root_;
  std::unique_ptr<Module> module_;
  /// The expression table, by index.
  std::vector<const SymExpr *> exprs_;
};

/// Checks the format version, reading only the root table's version field
/// (verified on its own), so that a newer file is told apart from a corrupt
/// one even if the rest of its layout changed.
Error checkVersion(const uint8_t *data, size_t size) {
  flatbuffers::Verifier verifier(data, size);
  flatbuffers::uoffset_t rootOffset = verifier.VerifyOffset(0);
  if (!rootOffset)
    return makeError() << "corrupt gc graph file (bad root offset)";
  const auto *root =
      reinterpret_cast<const flatbuffers::Table *>(data + rootOffset);
  if (!root->VerifyTableStart(verifier) ||
      !root->VerifyField<fb::FormatVersion>(verifier, fb::Module::VT_VERSION,
                                            alignof(fb::FormatVersion)))
    return makeError() << "corrupt gc graph file (bad root table)";
  const auto *version =
      root->GetStruct<const fb::FormatVersion *>(fb::Module::VT_VERSION);
  if (!version)
    return makeError() << "corrupt gc graph file (no format version)";
  uint32_t major = version->major_version(), minor = version->minor_version();
  if (major > kFormatMajor || (major == kFormatMajor && minor > kFormatMinor))
    return makeError() << "graph file format version " << major << "."
                       << minor << " is newer than this gc supports ("
                       << kFormatMajor << "." << kFormatMinor
                       << "); use a newer gc";
  if (major < kFormatMajor)
    return makeError() << "graph file format version " << major << "."
                       << minor << " is older than this gc supports ("
                       << kFormatMajor << ".x)";
  return Error::success();
}

Expected<std::unique_ptr<Module>> readVerified(const uint8_t *data,
                                               size_t size) {
  GC_RETURN_IF_ERROR(checkVersion(data, size));
  flatbuffers::Verifier::Options options;
  // A table takes at least 4 bytes, so a file written by gc never has more
  // tables than this; the bound stops a hostile file of shared tables from
  // making verification quadratic.
  options.max_tables = static_cast<flatbuffers::uoffset_t>(size / 4 + 1);
  flatbuffers::Verifier verifier(data, size, options);
  if (!fb::VerifyModuleBuffer(verifier))
    return makeError() << "corrupt gc graph file (its structure does not "
                          "verify)";
  return ModuleReader(*fb::GetModule(data)).read();
}

} // namespace

std::string writeModuleFlatBuffer(const Module &m) {
  return ModuleWriter(m).write();
}

bool isModuleFlatBuffer(std::span<const uint8_t> bytes) {
  return bytes.size() >= 2 * sizeof(flatbuffers::uoffset_t) &&
         flatbuffers::BufferHasIdentifier(bytes.data(), kFileIdentifier);
}

Expected<std::unique_ptr<Module>>
readModuleFlatBuffer(std::span<const uint8_t> bytes, std::string_view fileName) {
  std::string prefix = "'" + std::string(fileName) + "'";
  if (!isModuleFlatBuffer(bytes))
    return makeError() << prefix << ": not a gc graph file";
  if (bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE)
    return makeError() << prefix << ": too large for a gc graph file";
  // FlatBuffers pads a finished buffer to a multiple of its alignment, and
  // the padding is the one part of a file the verifier does not cover; this
  // catches a file cut within it.
  if (bytes.size() % sizeof(flatbuffers::uoffset_t) != 0)
    return makeError() << prefix << ": truncated gc graph file";
  // FlatBuffers reads scalars in place; give it an 8-byte aligned copy if
  // the caller's bytes are not aligned (mapped files and heap buffers are).
  std::vector<uint64_t> aligned;
  const uint8_t *data = bytes.data();
  if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) != 0) {
    aligned.resize((bytes.size() + 7) / 8);
    std::memcpy(aligned.data(), bytes.data(), bytes.size());
    data = reinterpret_cast<const uint8_t *>(aligned.data());
  }
  Expected<std::unique_ptr<Module>> m = readVerified(data, bytes.size());
  if (!m)
    return m.error().withContext(prefix);
  return m;
}

} // namespace gc
