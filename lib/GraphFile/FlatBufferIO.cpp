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

#include "gc/GraphFile/FlatBufferIO.h"

#include "gc/GraphFile/graph_generated.h"
#include "gc/IR/LoopIR.h"

#include <algorithm>
#include <climits>
#include <cmath>
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
    same(fb::OutputKind::SavedForBackward, OutputKind::SavedForBackward) &&
    same(fb::OutputKind::MAX, OutputKind::SavedForBackward));
static_assert(same(fb::WeightSourceKind::Archive, WeightSource::Kind::Archive) &&
              same(fb::WeightSourceKind::Blob, WeightSource::Kind::Blob) &&
              same(fb::WeightSourceKind::MAX, WeightSource::Kind::Blob));

static_assert(same(fb::BodyOpKind::Load, BodyOp::Kind::Load) &&
              same(fb::BodyOpKind::Const, BodyOp::Kind::Const) &&
              same(fb::BodyOpKind::Index, BodyOp::Kind::Index) &&
              same(fb::BodyOpKind::Compute, BodyOp::Kind::Compute) &&
              same(fb::BodyOpKind::Cast, BodyOp::Kind::Cast) &&
              same(fb::BodyOpKind::MAX, BodyOp::Kind::Cast));
static_assert(same(fb::ReduceKind::Sum, ReduceKind::Sum) &&
              same(fb::ReduceKind::Prod, ReduceKind::Prod) &&
              same(fb::ReduceKind::Max, ReduceKind::Max) &&
              same(fb::ReduceKind::Min, ReduceKind::Min) &&
              same(fb::ReduceKind::ArgMax, ReduceKind::ArgMax) &&
              same(fb::ReduceKind::ArgMin, ReduceKind::ArgMin) &&
              same(fb::ReduceKind::Any, ReduceKind::Any) &&
              same(fb::ReduceKind::MAX, ReduceKind::Any));
static_assert(same(fb::BufferKind::Input, BufferKind::Input) &&
              same(fb::BufferKind::Output, BufferKind::Output) &&
              same(fb::BufferKind::Intermediate, BufferKind::Intermediate) &&
              same(fb::BufferKind::MAX, BufferKind::Intermediate));
static_assert(same(fb::PostOpKind::AddBias, PostOp::Kind::AddBias) &&
              same(fb::PostOpKind::Add, PostOp::Kind::Add) &&
              same(fb::PostOpKind::Relu, PostOp::Kind::Relu) &&
              same(fb::PostOpKind::GeluErf, PostOp::Kind::GeluErf) &&
              same(fb::PostOpKind::GeluTanh, PostOp::Kind::GeluTanh) &&
              same(fb::PostOpKind::MAX, PostOp::Kind::GeluTanh));
static_assert(same(fb::LoopNodeKind::Pointwise, LoopNode::Kind::Pointwise) &&
              same(fb::LoopNodeKind::Reduction, LoopNode::Kind::Reduction) &&
              same(fb::LoopNodeKind::Extern, LoopNode::Kind::Extern) &&
              same(fb::LoopNodeKind::Fallback, LoopNode::Kind::Fallback) &&
              same(fb::LoopNodeKind::MAX, LoopNode::Kind::Fallback));
static_assert(same(fb::PlanStepKind::Kernel, PlanStep::Kind::Kernel) &&
              same(fb::PlanStepKind::Extern, PlanStep::Kind::Extern) &&
              same(fb::PlanStepKind::Fallback, PlanStep::Kind::Fallback) &&
              same(fb::PlanStepKind::MAX, PlanStep::Kind::Fallback));

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
    std::vector<flatbuffers::Offset<fb::LoopGraph>> loopGraphs;
    for (const auto &g : module_.loopGraphs())
      loopGraphs.push_back(writeLoopGraph(*g));
    fb::FormatVersion version(kFormatMajor, kFormatMinor);
    auto producer = str(module_.producer());
    auto graphsVec = vec(graphs);
    auto sourcesVec = vec(sources);
    auto weightsVec = vec(weights);
    auto loopGraphsVec = vec(loopGraphs);
    auto root = fb::CreateModule(
        fbb_, &version, convert<fb::Level>(module_.level()), producer,
        symbols, expressions, graphsVec, sourcesVec, weightsVec, loopGraphsVec);
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
    for (const auto &g : module_.loopGraphs())
      collectLoopGraph(*g, visitType);
  }

  template <typename VisitType>
  void collectLoopGraph(const LoopGraph &g, const VisitType &visitType) {
    auto visitAll = [this](const std::vector<const SymExpr *> &exprs) {
      for (const SymExpr *e : exprs)
        visit(e);
    };
    for (const Buffer &b : g.buffers) {
      visitAll(b.sizes);
      visitAll(b.strides);
    }
    for (const LoopBinding &b : g.inputs)
      visitType(b.type);
    for (const LoopNode &n : g.nodes) {
      visitAll(n.ranges);
      visitAll(n.reductionRanges);
      for (const BodyOp &op : n.body.ops)
        visit(op.index);
      visit(n.storeIndex);
      for (const BufferView &v : n.inputs)
        visitType(v.type);
      for (const BufferView &v : n.outputs)
        visitType(v.type);
    }
    for (const LoopBinding &b : g.outputs)
      visitType(b.type);
    for (const KernelGroup &k : g.plan.kernels)
      visitAll(k.parallelRanges);
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
    auto op = str(opString(n.op()));
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

  //===--------------------------------------------------------------------===//
  // Loop graphs
  //===--------------------------------------------------------------------===//

  /// Indices of expressions that are never null in a valid module.
  flatbuffers::Offset<flatbuffers::Vector<uint32_t>>
  exprVec(const std::vector<const SymExpr *> &exprs) {
    std::vector<uint32_t> indices;
    for (const SymExpr *e : exprs)
      indices.push_back(static_cast<uint32_t>(exprIndex(e)));
    return vec(indices);
  }

  flatbuffers::Offset<fb::NamedArg> writeNamedArg(const std::string &name,
                                                  bool keywordOnly,
                                                  const Arg &value) {
    auto nameStr = str(name);
    auto arg = writeArg(value);
    return fb::CreateNamedArg(fbb_, nameStr, keywordOnly, arg);
  }

  flatbuffers::Offset<fb::Buffer> writeBuffer(const Buffer &b) {
    auto name = str(b.name);
    auto sizes = exprVec(b.sizes);
    auto strides = exprVec(b.strides);
    return fb::CreateBuffer(fbb_, name, convert<fb::BufferKind>(b.kind),
                            convert<fb::DType>(b.dtype), sizes, strides,
                            b.flexible);
  }

  flatbuffers::Offset<fb::LoopBinding> writeBinding(const LoopBinding &b) {
    auto name = str(b.name);
    auto type = writeTensorType(b.type);
    return fb::CreateLoopBinding(fbb_, name, b.buffer, type);
  }

  flatbuffers::Offset<fb::BufferView> writeView(const BufferView &v) {
    auto type = writeTensorType(v.type);
    return fb::CreateBufferView(fbb_, v.buffer, type);
  }

  flatbuffers::Offset<fb::Body> writeBody(const Body &body) {
    std::vector<flatbuffers::Offset<fb::BodyOp>> ops;
    for (const BodyOp &op : body.ops) {
      auto operands = vec(op.operands);
      auto indirect = vec(op.indirect);
      // -0.0 equals the default 0 and would be left out, losing its sign.
      fbb_.ForceDefaults(op.constant == 0 && std::signbit(op.constant));
      ops.push_back(fb::CreateBodyOp(
          fbb_, convert<fb::BodyOpKind>(op.kind), convert<fb::DType>(op.dtype),
          static_cast<uint8_t>(op.op), operands, op.buffer,
          exprIndex(op.index), indirect, op.mask, op.constant));
      fbb_.ForceDefaults(false);
    }
    auto opsVec = vec(ops);
    return fb::CreateBody(fbb_, opsVec, body.result);
  }

  flatbuffers::Offset<fb::LoopNode> writeLoopNode(const LoopNode &n) {
    auto name = str(n.name);
    auto ranges = exprVec(n.ranges);
    auto reductionRanges = exprVec(n.reductionRanges);
    auto body = writeBody(n.body);
    bool call = n.kind == LoopNode::Kind::Extern || n.kind == LoopNode::Kind::Fallback;
    auto op = str(call ? opString(n.op) : std::string());
    std::vector<flatbuffers::Offset<fb::NamedArg>> args;
    for (const LoopArg &a : n.args)
      args.push_back(writeNamedArg(a.name, a.keywordOnly, a.value));
    auto argsVec = vec(args);
    std::vector<flatbuffers::Offset<fb::BufferView>> inputs, outputs;
    for (const BufferView &v : n.inputs)
      inputs.push_back(writeView(v));
    for (const BufferView &v : n.outputs)
      outputs.push_back(writeView(v));
    auto inputsVec = vec(inputs);
    auto outputsVec = vec(outputs);
    std::vector<flatbuffers::Offset<fb::PostOp>> postOps;
    for (const PostOp &p : n.postOps)
      postOps.push_back(
          fb::CreatePostOp(fbb_, convert<fb::PostOpKind>(p.kind), p.input));
    auto postOpsVec = vec(postOps);
    auto origin = str(n.origin);
    return fb::CreateLoopNode(
        fbb_, convert<fb::LoopNodeKind>(n.kind), name, ranges, reductionRanges,
        convert<fb::ReduceKind>(n.reduce), body, n.output,
        exprIndex(n.storeIndex), op, argsVec, inputsVec, outputsVec,
        postOpsVec, origin);
  }

  flatbuffers::Offset<fb::Plan> writePlan(const Plan &p) {
    std::vector<flatbuffers::Offset<fb::KernelGroup>> kernels;
    for (const KernelGroup &k : p.kernels) {
      auto name = str(k.name);
      auto nodes = vec(k.nodes);
      auto ranges = exprVec(k.parallelRanges);
      kernels.push_back(fb::CreateKernelGroup(fbb_, name, nodes, ranges));
    }
    std::vector<flatbuffers::Offset<fb::PlanStep>> steps;
    std::vector<fb::InplacePair> pairs;
    for (const PlanStep &s : p.steps) {
      auto frees = vec(s.frees);
      pairs.clear();
      for (const InplacePair &ip : s.inplace)
        pairs.emplace_back(ip.output, ip.input);
      auto inplace = pairs.empty() ? 0 : fbb_.CreateVectorOfStructs(pairs);
      steps.push_back(fb::CreatePlanStep(
          fbb_, convert<fb::PlanStepKind>(s.kind), s.index, frees, inplace));
    }
    std::vector<flatbuffers::Offset<fb::BufferPlacement>> placements;
    for (const BufferPlacement &pl : p.placements)
      placements.push_back(
          fb::CreateBufferPlacement(fbb_, pl.buffer, pl.offset, pl.bytes));
    auto kernelsVec = vec(kernels);
    auto stepsVec = vec(steps);
    auto placementsVec = vec(placements);
    auto symbols = p.symbols.empty() ? 0 : fbb_.CreateVectorOfStrings(p.symbols);
    auto target = str(p.target);
    auto objectCode =
        p.objectCode.empty()
            ? 0
            : fbb_.CreateVector(
                  reinterpret_cast<const uint8_t *>(p.objectCode.data()),
                  p.objectCode.size());
    auto objectHash = str(p.objectHash);
    return fb::CreatePlan(fbb_, kernelsVec, stepsVec, placementsVec, symbols,
                          p.arenaBytes, p.intermediateBytes, target,
                          objectCode, objectHash);
  }

  flatbuffers::Offset<fb::LoopGraph> writeLoopGraph(const LoopGraph &g) {
    auto name = str(g.name);
    std::vector<flatbuffers::Offset<fb::Buffer>> buffers;
    for (const Buffer &b : g.buffers)
      buffers.push_back(writeBuffer(b));
    auto buffersVec = vec(buffers);
    std::vector<flatbuffers::Offset<fb::LoopBinding>> inputs, outputs;
    for (const LoopBinding &b : g.inputs)
      inputs.push_back(writeBinding(b));
    auto inputsVec = vec(inputs);
    std::vector<flatbuffers::Offset<fb::InputSpec>> inputSpecs;
    for (const InputSpec &s : g.inputSpecs)
      inputSpecs.push_back(fb::CreateInputSpec(
          fbb_, convert<fb::InputKind>(s.kind), str(s.target), s.persistent));
    auto inputSpecsVec = vec(inputSpecs);
    std::vector<flatbuffers::Offset<fb::LoopNode>> nodes;
    for (const LoopNode &n : g.nodes)
      nodes.push_back(writeLoopNode(n));
    auto nodesVec = vec(nodes);
    for (const LoopBinding &b : g.outputs)
      outputs.push_back(writeBinding(b));
    auto outputsVec = vec(outputs);
    std::vector<flatbuffers::Offset<fb::OutputSpec>> outputSpecs;
    for (const OutputSpec &s : g.outputSpecs) {
      auto target = str(s.target);
      auto aliasOf = str(s.aliasOf);
      outputSpecs.push_back(fb::CreateOutputSpec(
          fbb_, convert<fb::OutputKind>(s.kind), target, aliasOf));
    }
    auto outputSpecsVec = vec(outputSpecs);
    // An empty plan (the Loops level) is left out, like any default.
    auto plan = g.plan == Plan{} ? 0 : writePlan(g.plan);
    return fb::CreateLoopGraph(fbb_, name, buffersVec, inputsVec,
                               inputSpecsVec, nodesVec, outputsVec,
                               outputSpecsVec, plan);
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
    if (const auto *graphs = root_.loop_graphs())
      for (const fb::LoopGraph *g : *graphs)
        GC_RETURN_IF_ERROR(readLoopGraph(*g));
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

  /// An index is 0 or more, or -1 for none: the text form ("cpu",
  /// "cuda:1") has no way to hold another, so reading one would give a
  /// module whose text reads back different (found by graph-fuzzer).
  Error readDevice(const fb::Device &d, Device &out) const {
    if (!inRange(d.kind()))
      return makeError() << "unknown device kind " << static_cast<int>(d.kind());
    if (d.index() < -1)
      return makeError() << "device index " << d.index() << " is negative";
    out = {convert<DeviceKind>(d.kind()), d.index()};
    return Error::success();
  }

  Error readTensorType(const fb::TensorType &t, TensorType &out) const {
    if (!inRange(t.dtype()))
      return makeError() << "unknown dtype " << static_cast<int>(t.dtype());
    out.dtype = convert<DType>(t.dtype());
    if (const fb::Device *d = t.device())
      GC_RETURN_IF_ERROR(readDevice(*d, out.device));
    auto readExprs = [this](const flatbuffers::Vector<int32_t> *in,
                            std::vector<const SymExpr *> &exprs,
                            const char *what) -> Error {
      if (!in)
        return Error::success();
      // Every size and stride is an expression; none may be missing (the
      // printer would follow a null one: found by graph-fuzzer).
      for (int32_t index : *in) {
        Expected<const SymExpr *> e = expr(index, /*optional=*/false);
        if (!e)
          return makeError() << what << " " << exprs.size() << ": "
                             << e.error().message();
        exprs.push_back(*e);
      }
      return Error::success();
    };
    GC_RETURN_IF_ERROR(readExprs(t.sizes(), out.sizes, "size"));
    GC_RETURN_IF_ERROR(readExprs(t.strides(), out.strides, "stride"));
    // One stride per size, as the text form holds them (the parser refuses
    // others); found by graph-fuzzer on a weight of rank 0 with 2 strides.
    if (out.strides.size() != out.sizes.size())
      return makeError() << "a tensor type has " << out.sizes.size() << " sizes but "
                         << out.strides.size() << " strides";
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
    if (const fb::Device *d = a.device())
      GC_RETURN_IF_ERROR(readDevice(*d, out.device));
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
        std::optional<OpId> id = lookupOp(op);
        if (!id)
          return failNode() << "an op gc does not know (docs/ops.md lists those it does)";
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
        Node *node = graph.addNode(*id, std::move(args),
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

  //===--------------------------------------------------------------------===//
  // Loop graphs
  //===--------------------------------------------------------------------===//
  // Only what rebuilding needs is checked here (enums, expression indices);
  // buffer, node and operand indices stay indices, and the verifier checks
  // them, as it does for modules built in memory.

  Error readExprList(const flatbuffers::Vector<uint32_t> *in,
                     std::vector<const SymExpr *> &out,
                     std::string_view what) const {
    if (!in)
      return Error::success();
    for (uint32_t index : *in) {
      Expected<const SymExpr *> e =
          expr(static_cast<int32_t>(std::min<uint32_t>(index, INT32_MAX)),
               /*optional=*/false);
      if (!e)
        return makeError() << what << " " << out.size() << ": "
                           << e.error().message();
      out.push_back(*e);
    }
    return Error::success();
  }

  Error readOptionalExpr(int32_t index, const SymExpr *&out,
                         std::string_view what) const {
    Expected<const SymExpr *> e = expr(index, /*optional=*/true);
    if (!e)
      return makeError() << what << ": " << e.error().message();
    out = *e;
    return Error::success();
  }

  template <typename T>
  static std::vector<T> readScalars(const flatbuffers::Vector<T> *v) {
    return v ? std::vector<T>(v->begin(), v->end()) : std::vector<T>();
  }

  Error readBinding(const fb::LoopBinding &b, LoopBinding &out) const {
    out.name = readString(b.name());
    out.buffer = b.buffer();
    if (!b.type())
      return makeError() << "'" << out.name << "' has no type";
    if (Error e = readTensorType(*b.type(), out.type))
      return makeError() << "'" << out.name << "': " << e.message();
    return Error::success();
  }

  Error readView(const fb::BufferView &v, BufferView &out) const {
    out.buffer = v.buffer();
    if (!v.type())
      return makeError() << "has no type";
    return readTensorType(*v.type(), out.type);
  }

  Error readBody(const fb::Body &b, Body &out) const {
    out.result = b.result();
    const auto *ops = b.ops();
    if (!ops)
      return Error::success();
    for (uint32_t i = 0; i < ops->size(); ++i) {
      const fb::BodyOp &op = *ops->Get(i);
      auto fail = [i]() {
        ErrorBuilder e;
        e << "body operation " << i << ": ";
        return e;
      };
      if (!inRange(op.kind()) || !inRange(op.dtype()) || op.op() >= kNumScalarOps)
        return fail() << "unknown kind, dtype or scalar op";
      BodyOp &o = out.ops.emplace_back();
      o.kind = convert<BodyOp::Kind>(op.kind());
      o.dtype = convert<DType>(op.dtype());
      o.op = static_cast<ScalarOp>(op.op());
      o.operands = readScalars(op.operands());
      o.buffer = op.buffer();
      if (Error e = readOptionalExpr(op.index(), o.index, "index"))
        return fail() << e.message();
      o.indirect = readScalars(op.indirect());
      o.mask = op.mask();
      o.constant = op.constant();
    }
    return Error::success();
  }

  Error readLoopNode(const fb::LoopNode &n, LoopNode &out) const {
    if (!inRange(n.kind()) || !inRange(n.reduce()))
      return makeError() << "unknown kind or reduction";
    out.kind = convert<LoopNode::Kind>(n.kind());
    out.name = readString(n.name());
    GC_RETURN_IF_ERROR(readExprList(n.ranges(), out.ranges, "range"));
    GC_RETURN_IF_ERROR(readExprList(n.reduction_ranges(), out.reductionRanges,
                                    "reduction range"));
    out.reduce = convert<ReduceKind>(n.reduce());
    if (n.body())
      GC_RETURN_IF_ERROR(readBody(*n.body(), out.body));
    out.output = n.output();
    GC_RETURN_IF_ERROR(
        readOptionalExpr(n.store_index(), out.storeIndex, "store index"));
    if (out.kind == LoopNode::Kind::Extern || out.kind == LoopNode::Kind::Fallback) {
      std::string op = readString(n.op());
      std::optional<OpId> id = lookupOp(op);
      if (!id)
        return makeError() << "'" << op << "' is not an op gc knows";
      out.op = *id;
    }
    if (const auto *args = n.args()) {
      for (const fb::NamedArg *a : *args) {
        LoopArg &arg = out.args.emplace_back();
        arg.name = readString(a->name());
        arg.keywordOnly = a->keyword_only();
        if (!a->value())
          return makeError() << "argument '" << arg.name << "' has no value";
        // Loop arguments hold no values, so any value index is refused.
        if (Error e = readArg(*a->value(), {}, arg.value))
          return makeError() << "argument '" << arg.name
                             << "': " << e.message();
      }
    }
    auto readViews = [this](const auto *in, std::vector<BufferView> &views,
                            const char *what) -> Error {
      if (!in)
        return Error::success();
      for (const fb::BufferView *v : *in)
        if (Error e = readView(*v, views.emplace_back()))
          return makeError() << what << " " << views.size() - 1 << ": "
                             << e.message();
      return Error::success();
    };
    GC_RETURN_IF_ERROR(readViews(n.inputs(), out.inputs, "input"));
    GC_RETURN_IF_ERROR(readViews(n.outputs(), out.outputs, "output"));
    if (const auto *postOps = n.post_ops()) {
      for (const fb::PostOp *p : *postOps) {
        if (!inRange(p->kind()))
          return makeError() << "a post-op has an unknown kind";
        out.postOps.push_back({convert<PostOp::Kind>(p->kind()), p->input()});
      }
    }
    out.origin = readString(n.origin());
    return Error::success();
  }

  Error readPlan(const fb::Plan &p, Plan &out) const {
    if (const auto *kernels = p.kernels()) {
      for (const fb::KernelGroup *k : *kernels) {
        KernelGroup &kernel = out.kernels.emplace_back();
        kernel.name = readString(k->name());
        kernel.nodes = readScalars(k->nodes());
        if (Error e = readExprList(k->parallel_ranges(), kernel.parallelRanges,
                                   "parallel range"))
          return makeError() << "kernel '" << kernel.name
                             << "': " << e.message();
      }
    }
    if (const auto *steps = p.steps()) {
      for (const fb::PlanStep *s : *steps) {
        if (!inRange(s->kind()))
          return makeError() << "step " << out.steps.size()
                             << " has an unknown kind";
        PlanStep &step = out.steps.emplace_back();
        step.kind = convert<PlanStep::Kind>(s->kind());
        step.index = s->index();
        step.frees = readScalars(s->frees());
        if (const auto *inplace = s->inplace())
          for (const fb::InplacePair *ip : *inplace)
            step.inplace.push_back({ip->output(), ip->input()});
      }
    }
    if (const auto *placements = p.placements())
      for (const fb::BufferPlacement *pl : *placements)
        out.placements.push_back({pl->buffer(), pl->offset(), pl->bytes()});
    if (const auto *symbols = p.symbols())
      for (const flatbuffers::String *s : *symbols)
        out.symbols.push_back(readString(s));
    out.arenaBytes = p.arena_bytes();
    out.intermediateBytes = p.intermediate_bytes();
    out.target = readString(p.target());
    if (const auto *code = p.object_code())
      out.objectCode.assign(reinterpret_cast<const char *>(code->data()),
                            code->size());
    out.objectHash = readString(p.object_hash());
    return Error::success();
  }

  Error readLoopGraph(const fb::LoopGraph &g) {
    LoopGraph &graph = module_->addLoopGraph(readString(g.name()));
    auto fail = [&graph]() {
      ErrorBuilder b;
      b << "loop graph @" << graph.name << ": ";
      return b;
    };
    if (const auto *buffers = g.buffers()) {
      for (const fb::Buffer *b : *buffers) {
        Buffer &buffer = graph.buffers.emplace_back();
        buffer.name = readString(b->name());
        if (!inRange(b->kind()) || !inRange(b->dtype()))
          return fail() << "buffer %" << buffer.name
                        << " has an unknown kind or dtype";
        buffer.kind = convert<BufferKind>(b->kind());
        buffer.dtype = convert<DType>(b->dtype());
        if (Error e = readExprList(b->sizes(), buffer.sizes, "size"))
          return fail() << "buffer %" << buffer.name << ": " << e.message();
        if (Error e = readExprList(b->strides(), buffer.strides, "stride"))
          return fail() << "buffer %" << buffer.name << ": " << e.message();
        buffer.flexible = b->flexible();
      }
    }
    if (const auto *inputs = g.inputs())
      for (const fb::LoopBinding *b : *inputs)
        if (Error e = readBinding(*b, graph.inputs.emplace_back()))
          return fail() << "input " << e.message();
    if (const auto *specs = g.input_specs()) {
      for (const fb::InputSpec *s : *specs) {
        if (!inRange(s->kind()))
          return fail() << "an input spec has an unknown kind";
        graph.inputSpecs.push_back({convert<InputKind>(s->kind()),
                                    readString(s->target()), s->persistent()});
      }
    }
    if (const auto *nodes = g.nodes()) {
      for (uint32_t k = 0; k < nodes->size(); ++k) {
        LoopNode &node = graph.nodes.emplace_back();
        if (Error e = readLoopNode(*nodes->Get(k), node))
          return fail() << "node " << k << " ('" << node.name
                        << "'): " << e.message();
      }
    }
    if (const auto *outputs = g.outputs())
      for (const fb::LoopBinding *b : *outputs)
        if (Error e = readBinding(*b, graph.outputs.emplace_back()))
          return fail() << "output " << e.message();
    if (const auto *specs = g.output_specs()) {
      for (const fb::OutputSpec *s : *specs) {
        if (!inRange(s->kind()))
          return fail() << "an output spec has an unknown kind";
        graph.outputSpecs.push_back({convert<OutputKind>(s->kind()),
                                     readString(s->target()),
                                     readString(s->alias_of())});
      }
    }
    if (const fb::Plan *plan = g.plan())
      if (Error e = readPlan(*plan, graph.plan))
        return fail() << "plan: " << e.message();
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
