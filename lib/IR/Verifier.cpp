//===- Verifier.cpp - Structural checks -----------------------------------===//
#include "gc/IR/Verifier.h"

#include "gc/IR/Describe.h"
#include "gc/IR/ExternOps.h"
#include "gc/IR/Fields.h"
#include "gc/IR/KernelCode.h"
#include "gc/IR/LoopIR.h"
#include "gc/IR/Names.h"
#include "gc/IR/OpSchema.h"
#include "gc/IR/Printer.h"
#include "gc/IR/TargetOf.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>

namespace gc {

namespace {

/// What is wrong with a graph-level tensor type (a value's or a weight's),
/// phrased to follow its owner's name; nothing when it is well formed.
std::optional<std::string> tensorTypeProblem(const TensorType &t) {
  if (t.sizes.size() != t.strides.size())
    return "has " + std::to_string(t.sizes.size()) + " sizes but " +
           std::to_string(t.strides.size()) + " strides";
  if (!t.storageOffset)
    return std::string("has no storage offset");
  for (const SymExpr *e : t.sizes)
    if (!e || (e->isConst() && e->constant() < 0))
      return std::string("has an invalid size");
  for (const SymExpr *e : t.strides)
    if (!e)
      return std::string("has an invalid stride");
  return std::nullopt;
}

/// What is wrong with an argument that holds constants only (numbers,
/// strings, dtypes, formats, devices), or nothing: a graph node's and a
/// loop call's arguments hold them alike, and the printer indexes them
/// without looking.
std::optional<std::string> badConstant(const Arg &v) {
  auto count = [](size_t have, const char *what) -> std::optional<std::string> {
    if (have == 1)
      return std::nullopt;
    return "has " + std::to_string(have) + " " + what + ", expected 1";
  };
  auto isBool = [](int64_t b) { return b == 0 || b == 1; };
  // The file forms write only the fields a kind uses: anything else (a
  // none that carries integers) would be lost in the text form.
  using enum ArgKind;
  ArgKind k = v.kind;
  bool ints = k == Int || k == Ints || k == Bool || k == Bools || k == ScalarType ||
              k == MemoryFormat || k == Layout;
  bool floats = k == Float || k == Floats;
  bool strings = k == String || k == Strings || k == Graph;
  if (!v.values.empty() || (!ints && !v.ints.empty()) || (!floats && !v.floats.empty()) ||
      (!strings && !v.strings.empty()) || (k != ArgKind::Device && v.device != gc::Device{}))
    return "holds values its kind (" + std::string(EnumInfo<ArgKind>::name(k)) +
           ") does not use";
  switch (v.kind) {
  case ArgKind::Int:
    return count(v.ints.size(), "integers");
  case ArgKind::Bool:
    if (auto bad = count(v.ints.size(), "integers"))
      return bad;
    [[fallthrough]];
  case ArgKind::Bools:
    if (!std::all_of(v.ints.begin(), v.ints.end(), isBool))
      return "holds a non-boolean";
    return std::nullopt;
  case ArgKind::Float:
    return count(v.floats.size(), "floats");
  case ArgKind::String:
    return count(v.strings.size(), "strings");
  case ArgKind::Graph:
    if (auto bad = count(v.strings.size(), "strings"))
      return bad;
    if (!isValueName(v.strings[0]))
      return "'" + v.strings[0] + "' is not a valid graph name";
    return std::nullopt;
  case ArgKind::ScalarType:
    if (auto bad = count(v.ints.size(), "integers"))
      return bad;
    if (v.ints[0] < 0 || v.ints[0] >= kNumDTypes)
      return "is not a dtype";
    return std::nullopt;
  case ArgKind::MemoryFormat:
  case ArgKind::Layout: {
    if (auto bad = count(v.ints.size(), "integers"))
      return bad;
    bool layout = v.kind == ArgKind::Layout;
    if (v.ints[0] < 0 || v.ints[0] >= (layout ? kNumLayouts : kNumMemoryFormats))
      return layout ? "is not a layout" : "is not a memory format";
    return std::nullopt;
  }
  case ArgKind::None:
  case ArgKind::Ints:
  case ArgKind::Floats:
  case ArgKind::Strings:
  case ArgKind::Device:
    return std::nullopt;
  default:
    return "has an unknown kind";
  }
}

/// What is wrong with a generator input of kind `k` and type `t` (one that
/// is not a tensor: null), if anything: it must be an i64[], and a graph
/// has at most one input of each generator kind (`seen` collects them).
std::optional<std::string> generatorInputProblem(const TensorType *t, InputKind k,
                                                 std::set<InputKind> &seen) {
  if (!t || t->dtype != DType::Int64 || !t->sizes.empty())
    return "is the generator's " + std::string(inputKindName(k)) + ", which must be an i64[]";
  if (!seen.insert(k).second)
    return "is a second " + std::string(inputKindName(k)) + " input";
  return std::nullopt;
}

class GraphVerifier {
public:
  GraphVerifier(const Module &m, const Graph &g) : module_(m), graph_(g) {}

  Error run() {
    if (graph_.inputs().size() != graph_.inputSpecs().size() ||
        graph_.outputs().size() != graph_.outputSpecs().size())
      return fail() << "inputs or outputs do not line up with their specs";
    for (size_t i = 0; i < graph_.inputs().size(); ++i)
      GC_RETURN_IF_ERROR(checkInput(graph_.inputs()[i], graph_.inputSpecs()[i]));
    for (const auto &node : graph_.nodes())
      GC_RETURN_IF_ERROR(checkNode(*node));
    for (size_t i = 0; i < graph_.outputs().size(); ++i)
      GC_RETURN_IF_ERROR(checkOutput(graph_.outputs()[i], graph_.outputSpecs()[i]));
    return Error::success();
  }

private:
  ErrorBuilder fail() const {
    ErrorBuilder b;
    b << "graph @" << graph_.name() << ": ";
    return b;
  }
  ErrorBuilder failAt(const Node &n) const {
    ErrorBuilder b = fail();
    b << describeNode(n) << ": ";
    return b;
  }

  Error define(const Value *v) {
    if (!v)
      return fail() << "null value";
    if (!isValueName(v->name()))
      return fail() << "'" << v->name() << "' is not a valid value name";
    if (!names_.insert(v->name()).second)
      return fail() << "value %" << v->name() << " is defined twice";
    defined_.insert(v);
    return checkType(v);
  }

  Error checkType(const Value *v) const {
    const Type &t = v->type();
    if (!t.isTensor())
      return Error::success();
    if (std::optional<std::string> problem = tensorTypeProblem(t.tensor))
      return fail() << "%" << v->name() << " " << *problem;
    return Error::success();
  }

  Error checkInput(const Value *v, const InputSpec &spec) {
    GC_RETURN_IF_ERROR(define(v));
    if (isGeneratorInput(spec.kind))
      if (auto problem = generatorInputProblem(
              v->type().isTensor() ? &v->type().tensor : nullptr, spec.kind, generatorInputs_))
        return fail() << "input %" << v->name() << " " << *problem;
    bool needsWeight = spec.kind == InputKind::Parameter ||
                       spec.kind == InputKind::Buffer ||
                       spec.kind == InputKind::Constant;
    if (!needsWeight)
      return Error::success();
    const Weight *w = module_.weight(spec.target);
    if (!w)
      return fail() << "input %" << v->name() << " is " << inputKindName(spec.kind)
                    << " '" << spec.target << "', but the module has no weight of that name";
    if (!v->type().isTensor() || w->type.dtype != v->type().tensor.dtype ||
        w->type.sizes != v->type().tensor.sizes)
      return fail() << "input %" << v->name() << " does not match the type of weight '"
                    << spec.target << "'";
    return Error::success();
  }

  Error checkUse(const Node &n, const NamedArg &a, const Value *v,
                 bool nullable, std::optional<Type::Kind> kind) const {
    if (!v) {
      if (nullable)
        return Error::success();
      return failAt(n) << "argument '" << a.name << "' has a missing value";
    }
    if (!defined_.count(v))
      return failAt(n) << "argument '" << a.name << "' uses %" << v->name()
                       << " before it is defined";
    if (kind && v->type().kind != *kind)
      return failAt(n) << "argument '" << a.name << "' expects a "
                       << (*kind == Type::Kind::Tensor ? "tensor" : "symbolic scalar")
                       << ", but %" << v->name() << " is not one";
    return Error::success();
  }

  Error checkArg(const Node &n, const NamedArg &a) const {
    const Arg &v = a.value;
    auto count = [&](size_t have, size_t want, const char *what) -> Error {
      if (have != want)
        return failAt(n) << "argument '" << a.name << "' has " << have << " "
                         << what << ", expected " << want;
      return Error::success();
    };
    using K = Type::Kind;
    switch (v.kind) {
    case ArgKind::Tensor:
      GC_RETURN_IF_ERROR(count(v.values.size(), 1, "values"));
      return checkUse(n, a, v.values[0], false, K::Tensor);
    case ArgKind::Tensors:
    case ArgKind::OptionalTensors:
      for (const Value *x : v.values)
        GC_RETURN_IF_ERROR(checkUse(n, a, x, v.kind == ArgKind::OptionalTensors, K::Tensor));
      return Error::success();
    case ArgKind::SymInt:
    case ArgKind::SymInts:
      if (v.kind == ArgKind::SymInt)
        GC_RETURN_IF_ERROR(count(v.values.size(), 1, "values"));
      GC_RETURN_IF_ERROR(count(v.ints.size(), v.values.size(), "integers"));
      for (const Value *x : v.values)
        GC_RETURN_IF_ERROR(checkUse(n, a, x, true, K::SymInt));
      return Error::success();
    case ArgKind::SymFloat:
    case ArgKind::SymBool:
      GC_RETURN_IF_ERROR(count(v.values.size(), 1, "values"));
      return checkUse(n, a, v.values[0], false,
                      v.kind == ArgKind::SymFloat ? K::SymFloat : K::SymBool);
    default:
      if (std::optional<std::string> bad = badConstant(v))
        return failAt(n) << "argument '" << a.name << "' " << *bad;
      return Error::success();
    }
  }

  Error checkNode(const Node &n) {
    if (module_.level() >= Level::Loops)
      return failAt(n) << "op is not allowed at level " << levelName(module_.level());
    if (module_.level() != Level::Aten && !isCoreOp(n.op()) &&
        !runsWhole(n, targetOf(module_).device))
      return failAt(n) << "op is not in the core op set, which level "
                       << levelName(module_.level()) << " requires";
    std::set<std::string> argNames;
    for (const NamedArg &a : n.args()) {
      if (!isArgName(a.name))
        return failAt(n) << "'" << a.name << "' is not a valid argument name";
      if (!argNames.insert(a.name).second)
        return failAt(n) << "argument '" << a.name << "' is given twice";
      GC_RETURN_IF_ERROR(checkArg(n, a));
    }
    if (n.resultForm() == ResultForm::Single && n.results().size() > 1)
      return failAt(n) << "a single-result node defines " << n.results().size() << " values";
    for (const Value *r : n.results())
      GC_RETURN_IF_ERROR(define(r));
    if (callsGraphs(n.op()))
      return checkGraphCalls(n);
    return Error::success();
  }

  /// Tensors agree where a graph is called: same dtype and sizes. Strides
  /// may differ, as torch records each graph's own layouts.
  static bool sameShape(const Type &a, const Type &b) {
    if (a.kind != b.kind)
      return false;
    return !a.isTensor() || (a.tensor.dtype == b.tensor.dtype && a.tensor.sizes == b.tensor.sizes);
  }

  /// A graph argument names another graph of the module whose inputs take
  /// `operands` and whose outputs have the types of `results` (none: not
  /// checked here).
  Error checkCallee(const Node &n, std::string_view argName,
                    const std::vector<const Value *> &operands,
                    const std::vector<const Value *> *results) const {
    const NamedArg *a = n.arg(argName);
    if (!a || a->value.kind != ArgKind::Graph)
      return failAt(n) << "argument '" << argName << "' is not a graph";
    const std::string &name = a->value.strings[0];
    const Graph *callee = module_.graph(name);
    if (!callee)
      return failAt(n) << "argument '" << argName << "' names graph @" << name
                       << ", which the module does not have";
    // Callees come after their callers, as gc-import adds them, so that
    // calls cannot recurse.
    auto position = [&](const Graph *g) {
      const auto &all = module_.graphs();
      return std::find_if(all.begin(), all.end(), [&](const auto &p) { return p.get() == g; }) -
             all.begin();
    };
    if (position(callee) <= position(&graph_))
      return failAt(n) << "argument '" << argName << "' names graph @" << name
                       << ", which does not come after the graph that calls it";
    if (callee->inputs().size() != operands.size())
      return failAt(n) << "graph @" << name << " takes " << callee->inputs().size()
                       << " inputs, the node passes " << operands.size();
    for (size_t i = 0; i < operands.size(); ++i) {
      if (callee->inputSpecs()[i].kind != InputKind::UserInput)
        return failAt(n) << "graph @" << name << ": input %" << callee->inputs()[i]->name()
                         << " is a " << inputKindName(callee->inputSpecs()[i].kind)
                         << "; a called graph takes everything from its caller";
      if (!sameShape(callee->inputs()[i]->type(), operands[i]->type()))
        return failAt(n) << "graph @" << name << ": input %" << callee->inputs()[i]->name()
                         << " is " << printType(callee->inputs()[i]->type())
                         << ", the node passes %" << operands[i]->name() << " of type "
                         << printType(operands[i]->type());
    }
    if (!results)
      return Error::success();
    if (callee->outputs().size() != results->size())
      return failAt(n) << "graph @" << name << " returns " << callee->outputs().size()
                       << " values, the node has " << results->size() << " results";
    for (size_t i = 0; i < results->size(); ++i)
      if (!sameShape(callee->outputs()[i]->type(), (*results)[i]->type()))
        return failAt(n) << "graph @" << name << ": output " << i << " is "
                         << printType(callee->outputs()[i]->type()) << ", the node's result %"
                         << (*results)[i]->name() << " is "
                         << printType((*results)[i]->type());
    return Error::success();
  }

  static std::vector<const Value *> tensorsOf(const Node &n, std::string_view name) {
    const NamedArg *a = n.arg(name);
    if (!a || a->value.kind != ArgKind::Tensors)
      return {};
    return {a->value.values.begin(), a->value.values.end()};
  }

  /// cond and while_loop: each graph they call takes their operands and
  /// returns what they return.
  Error checkGraphCalls(const Node &n) const {
    std::vector<const Value *> results(n.results().begin(), n.results().end());
    if (n.op() == ops::higher_order_cond) {
      const NamedArg *pred = n.arg("pred");
      if (!pred || pred->value.kind != ArgKind::Tensor ||
          pred->value.values[0]->type().tensor.dtype != DType::Bool ||
          pred->value.values[0]->type().tensor.rank() != 0)
        return failAt(n) << "argument 'pred' is not a 0-dim bool tensor";
      std::vector<const Value *> operands = tensorsOf(n, "operands");
      GC_RETURN_IF_ERROR(checkCallee(n, "true_fn", operands, &results));
      return checkCallee(n, "false_fn", operands, &results);
    }
    if (n.op() == ops::higher_order_while_loop) {
      std::vector<const Value *> carried = tensorsOf(n, "carried_inputs");
      std::vector<const Value *> operands = carried;
      for (const Value *v : tensorsOf(n, "additional_inputs"))
        operands.push_back(v);
      if (carried.size() != results.size())
        return failAt(n) << "carries " << carried.size() << " values but has "
                         << results.size() << " results";
      for (size_t i = 0; i < carried.size(); ++i)
        if (!sameShape(carried[i]->type(), results[i]->type()))
          return failAt(n) << "result %" << results[i]->name() << " is "
                           << printType(results[i]->type()) << ", its carried input %"
                           << carried[i]->name() << " is " << printType(carried[i]->type());
      GC_RETURN_IF_ERROR(checkCallee(n, "cond_fn", operands, nullptr));
      const Graph &condFn = *module_.graph(n.arg("cond_fn")->value.strings[0]);
      if (condFn.outputs().size() != 1 || !condFn.outputs()[0]->type().isTensor() ||
          condFn.outputs()[0]->type().tensor.dtype != DType::Bool ||
          condFn.outputs()[0]->type().tensor.rank() != 0)
        return failAt(n) << "graph @" << condFn.name()
                         << " does not return one 0-dim bool tensor";
      return checkCallee(n, "body_fn", operands, &results);
    }
    return failAt(n) << "the verifier does not know how this op calls graphs";
  }

  const Value *findInput(InputKind kind, const std::string &target) const {
    for (size_t i = 0; i < graph_.inputs().size(); ++i)
      if (graph_.inputSpecs()[i].kind == kind && graph_.inputSpecs()[i].target == target)
        return graph_.inputs()[i];
    return nullptr;
  }

  Error checkOutput(const Value *v, const OutputSpec &spec) const {
    if (!v || !defined_.count(v))
      return fail() << "an output is not a value of this graph";
    std::optional<InputKind> mutated;
    if (spec.kind == OutputKind::BufferMutation)
      mutated = InputKind::Buffer;
    else if (spec.kind == OutputKind::UserInputMutation)
      mutated = InputKind::UserInput;
    else if (spec.kind == OutputKind::ParameterMutation)
      mutated = InputKind::Parameter;
    if (!spec.aliasOf.empty()) {
      bool isInput = false;
      for (const Value *in : graph_.inputs())
        isInput |= in->name() == spec.aliasOf;
      if (!isInput)
        return fail() << "output %" << v->name() << " aliases %" << spec.aliasOf
                      << ", which is not an input of the graph";
    }
    if (mutated && !findInput(*mutated, spec.target))
      return fail() << "output %" << v->name() << " is a " << outputKindName(spec.kind)
                    << " of '" << spec.target << "', which is not a "
                    << inputKindName(*mutated) << " input";
    return Error::success();
  }

  const Module &module_;
  const Graph &graph_;
  std::set<InputKind> generatorInputs_;
  std::unordered_set<const Value *> defined_;
  std::unordered_set<std::string> names_;
};

/// The loop variables an expression may use: i0..i(n-1), r0..r(m-1),
/// t0..t(k-1). Any other symbol is a size symbol and always allowed.
struct LoopVars {
  size_t ranges = 0;
  size_t reductions = 0;
  size_t indirect = 0;
};

/// The first symbol of `e` that is a loop variable outside `vars`, or null.
const SymExpr *strayLoopVar(const SymExpr *e, const LoopVars &vars) {
  if (e->isSymbol()) {
    const std::string &name = e->symbolName();
    if (name.size() < 2 || name.find_first_not_of("0123456789", 1) != std::string::npos)
      return nullptr;
    size_t limit = name[0] == 'i'   ? vars.ranges
                   : name[0] == 'r' ? vars.reductions
                   : name[0] == 't' ? vars.indirect
                                    : SIZE_MAX;
    if (limit == SIZE_MAX)
      return nullptr;
    // Digits beyond what a size_t holds are out of range anyway.
    bool inRange = name.size() <= 10 && std::stoull(name.substr(1)) < limit;
    return inRange ? nullptr : e;
  }
  for (const SymExpr *op : e->operands())
    if (const SymExpr *stray = strayLoopVar(op, vars))
      return stray;
  return nullptr;
}

template <class M>
concept RecordList = std::is_same_v<M, std::vector<typename M::value_type>> && Structured<typename M::value_type>;

/// Checks every buffer reference below `v` (each field coded BufferRef in
/// gc/IR/Fields.h, in any record or list of records) against the graph's
/// `buffers`; errors name the field's path, as the binary reader's do.
template <class T> Error checkBufferRefs(const T &v, size_t buffers, const std::string &path) {
  Error e = Error::success();
  auto check = [&](uint32_t b, const std::string &at) -> Error {
    if (b >= buffers)
      return makeError() << at << " refers to buffer " << b << ", but the graph has " << buffers;
    return Error::success();
  };
  forEachField<T>([&](size_t, const auto &f) {
    const auto &m = v.*f.member;
    using M = std::remove_cvref_t<decltype(m)>;
    std::string at = path + (path.empty() ? "" : ".") + std::string(f.name);
    auto item = [&](size_t i) { return at + "[" + std::to_string(i) + "]"; };
    if constexpr (std::is_same_v<typename std::remove_cvref_t<decltype(f)>::Codec, BufferRef>) {
      if constexpr (std::is_same_v<M, uint32_t>)
        e = check(m, at);
      else
        for (size_t i = 0; !e && i < m.size(); ++i)
          e = check(m[i], item(i));
    } else if constexpr (Structured<M>) {
      e = checkBufferRefs(m, buffers, at);
    } else if constexpr (RecordList<M>) {
      for (size_t i = 0; !e && i < m.size(); ++i)
        e = checkBufferRefs(m[i], buffers, item(i));
    }
    return !e;
  });
  return e;
}

class LoopGraphVerifier {
public:
  LoopGraphVerifier(const Module &m, const LoopGraph &g) : module_(m), graph_(g) {}

  /// Errors name the graph, and the node where there is one.
  Error run() const { return checkGraph().withContext("loop graph @" + graph_.name); }

private:
  Error checkGraph() const {
    std::unordered_set<std::string> names;
    for (const Buffer &b : graph_.buffers) {
      if (!isValueName(b.name))
        return fail() << "buffer '" << b.name << "' does not have a valid name";
      if (!names.insert(b.name).second)
        return fail() << "buffer %" << b.name << " is defined twice";
      if (b.sizes.size() != b.strides.size())
        return fail() << "buffer %" << b.name << " has " << b.sizes.size() << " sizes but "
                      << b.strides.size() << " strides";
      GC_RETURN_IF_ERROR(checkExprs(b.sizes, {}, "buffer %" + b.name + " size"));
      GC_RETURN_IF_ERROR(checkExprs(b.strides, {}, "buffer %" + b.name + " stride"));
    }
    GC_RETURN_IF_ERROR(checkBufferRefs(graph_, graph_.buffers.size(), ""));
    if (graph_.inputs.size() != graph_.inputSpecs.size() ||
        graph_.outputs.size() != graph_.outputSpecs.size())
      return fail() << "inputs or outputs do not line up with their specs";
    std::set<InputKind> generatorInputs;
    for (size_t i = 0; i < graph_.inputs.size(); ++i)
      GC_RETURN_IF_ERROR(checkInput(graph_.inputs[i], graph_.inputSpecs[i], generatorInputs));
    names.clear();
    for (const LoopNode &n : graph_.nodes) {
      if (!names.insert(n.name).second)
        return fail() << "node '" << n.name << "' is defined twice";
      GC_RETURN_IF_ERROR(checkNode(n));
    }
    for (const LoopBinding &b : graph_.outputs)
      GC_RETURN_IF_ERROR(checkBinding(b, "output"));
    if (module_.level() == Level::Loops) {
      if (graph_.plan != Plan{})
        return fail() << "a plan is not allowed at level loops";
      return Error::success();
    }
    return checkPlan();
  }

  static ErrorBuilder fail() { return makeError(); }
  static ErrorBuilder failAt(const LoopNode &n) {
    ErrorBuilder b;
    b << describeNode(n) << ": ";
    return b;
  }

  static Error checkExprs(const std::vector<const SymExpr *> &exprs, const LoopVars &vars,
                          const std::string &what) {
    for (const SymExpr *e : exprs)
      GC_RETURN_IF_ERROR(checkExpr(e, vars, what));
    return Error::success();
  }

  static Error checkExpr(const SymExpr *e, const LoopVars &vars, const std::string &what) {
    if (!e)
      return makeError() << what << " is missing";
    if (const SymExpr *stray = strayLoopVar(e, vars))
      return makeError() << what << " '" << e->str() << "' uses " << stray->symbolName()
                         << ", which is not a loop variable there";
    return Error::success();
  }

  static Error checkType(const TensorType &t, const std::string &what) {
    if (t.sizes.size() != t.strides.size() || !t.storageOffset)
      return makeError() << what << " has an incomplete type";
    GC_RETURN_IF_ERROR(checkExprs(t.sizes, {}, what + " size"));
    return checkExprs(t.strides, {}, what + " stride");
  }

  Error checkBinding(const LoopBinding &b, std::string_view what) const {
    return checkType(b.type, std::string(what) + " '" + b.name + "'");
  }

  Error checkInput(const LoopBinding &b, const InputSpec &spec,
                   std::set<InputKind> &generatorInputs) const {
    GC_RETURN_IF_ERROR(checkBinding(b, "input"));
    if (isGeneratorInput(spec.kind))
      if (auto problem = generatorInputProblem(&b.type, spec.kind, generatorInputs))
        return fail() << "input '" << b.name << "' " << *problem;
    bool needsWeight = spec.kind == InputKind::Parameter || spec.kind == InputKind::Buffer ||
                       spec.kind == InputKind::Constant;
    if (needsWeight && !module_.weight(spec.target))
      return fail() << "input '" << b.name << "' is " << inputKindName(spec.kind) << " '"
                    << spec.target << "', but the module has no weight of that name";
    return Error::success();
  }

  /// Whether input buffer `b` is a mutated buffer's input that its
  /// buffer_mutation output is bound to as well: nodes may then write it
  /// (a KV cache updated where it lies).
  bool updatedInPlace(uint32_t b) const {
    for (size_t o = 0; o < graph_.outputs.size() && o < graph_.outputSpecs.size(); ++o) {
      const OutputSpec &out = graph_.outputSpecs[o];
      if (graph_.outputs[o].buffer != b || out.kind != OutputKind::BufferMutation)
        continue;
      for (size_t i = 0; i < graph_.inputs.size() && i < graph_.inputSpecs.size(); ++i)
        if (graph_.inputs[i].buffer == b && graph_.inputSpecs[i].kind == InputKind::Buffer &&
            graph_.inputSpecs[i].target == out.target)
          return true;
    }
    return false;
  }

  Error checkNode(const LoopNode &n) const {
    bool loops = n.kind == LoopNode::Kind::Pointwise || n.kind == LoopNode::Kind::Reduction;
    if (!loops)
      return checkCall(n);
    if (n.kind == LoopNode::Kind::Pointwise && !n.reductionRanges.empty())
      return failAt(n) << "a pointwise node has reduction ranges";
    if (Error e = checkExprs(n.ranges, {}, "range"))
      return failAt(n) << e.message();
    if (Error e = checkExprs(n.reductionRanges, {}, "reduction range"))
      return failAt(n) << e.message();
    const Buffer &out = graph_.buffers[n.output];
    if (out.kind == BufferKind::Input && !updatedInPlace(n.output))
      return failAt(n) << "it writes input buffer %" << out.name;
    if (n.scan && (n.kind != LoopNode::Kind::Reduction || n.reductionRanges.size() != 1 ||
                   (n.reduce != ReduceKind::Sum && n.reduce != ReduceKind::Prod)))
      return failAt(n) << "a scan is a sum or prod reduction over one loop";
    if (scatters(n) && n.kind != LoopNode::Kind::Pointwise)
      return failAt(n) << "only a pointwise node has a scattering store";
    for (uint32_t x : n.storeIndirect)
      if (x >= n.body.ops.size())
        return failAt(n) << "indirect store index %" << x << " is not a body operation";
    if (Error e = checkExpr(n.storeIndex,
                            {n.ranges.size(), n.scan ? 1u : 0u, n.storeIndirect.size()},
                            "store index"))
      return failAt(n) << e.message();
    return checkBody(n);
  }

  Error checkBody(const LoopNode &n) const {
    const std::vector<BodyOp> &ops = n.body.ops;
    if (n.body.result >= ops.size())
      return failAt(n) << "the body's result is operation " << n.body.result << " of "
                       << ops.size();
    for (size_t i = 0; i < ops.size(); ++i) {
      const BodyOp &op = ops[i];
      auto failOp = [&]() {
        ErrorBuilder b = failAt(n);
        b << "body operation %" << i << ": ";
        return b;
      };
      for (uint32_t x : op.operands)
        if (x >= i)
          return failOp() << "operand %" << x << " is not defined before it";
      for (uint32_t x : op.indirect)
        if (x >= i)
          return failOp() << "indirect index %" << x << " is not defined before it";
      if (op.mask < -1 || op.mask >= static_cast<int64_t>(i))
        return failOp() << "mask %" << op.mask << " is not defined before it";
      size_t want = 0;
      switch (op.kind) {
      case BodyOp::Kind::Compute:
        want = scalarOpArity(op.op);
        break;
      case BodyOp::Kind::Cast:
        want = 1;
        break;
      default:
        break;
      }
      if (op.operands.size() != want)
        return failOp() << "has " << op.operands.size() << " operands, expected " << want;
      if (op.kind != BodyOp::Kind::Load && (!op.indirect.empty() || op.mask != -1))
        return failOp() << "only a load has indirect indices or a mask";
      if (op.kind != BodyOp::Kind::Load && op.kind != BodyOp::Kind::Index)
        continue;
      LoopVars vars{n.ranges.size(), n.reductionRanges.size(), op.indirect.size()};
      if (Error e = checkExpr(op.index, vars, "index"))
        return failOp() << e.message();
    }
    return Error::success();
  }

  Error checkCall(const LoopNode &n) const {
    if (n.kind != LoopNode::Kind::Extern && !n.postOps.empty())
      return failAt(n) << "only an extern node has post-ops";
    if ((n.kind == LoopNode::Kind::Call) != callsGraphs(n.op))
      return failAt(n) << (n.kind == LoopNode::Kind::Call ? "a call node's op calls no graphs"
                                                          : "only a call node may call graphs");
    for (const std::vector<BufferView> *views : {&n.inputs, &n.outputs})
      for (size_t i = 0; i < views->size(); ++i) {
        std::string what = (views == &n.inputs ? "input " : "output ") + std::to_string(i);
        if (Error e = checkType((*views)[i].type, what))
          return failAt(n) << e.message();
      }
    std::set<std::string> argNames;
    for (const LoopArg &a : n.args) {
      if (!isArgName(a.name))
        return failAt(n) << "'" << a.name << "' is not a valid argument name";
      if (!argNames.insert(a.name).second)
        return failAt(n) << "argument '" << a.name << "' is given twice";
      const Arg &v = a.value;
      if (!v.values.empty() || v.kind == ArgKind::SymFloat || v.kind == ArgKind::SymBool)
        return failAt(n) << "argument '" << a.name << "' refers to a graph value";
      if ((v.kind == ArgKind::Graph) != (n.kind == LoopNode::Kind::Call &&
                                         opSchema(n.op).arg(a.name) &&
                                         opSchema(n.op).arg(a.name)->type == "Graph"))
        return failAt(n) << "argument '" << a.name << "' "
                         << (v.kind == ArgKind::Graph ? "names a graph, which only a call node's graph argument may"
                                                      : "of a call node is not a graph");
      if (v.kind == ArgKind::Graph && !v.strings.empty()) {
        const auto &all = module_.loopGraphs();
        auto at = [&](auto pred) { return std::find_if(all.begin(), all.end(), pred) - all.begin(); };
        auto callee = at([&](const auto &g) { return g->name == v.strings[0]; });
        if (callee == static_cast<ptrdiff_t>(all.size()))
          return failAt(n) << "argument '" << a.name << "' names graph @" << v.strings[0]
                           << ", which the module does not have";
        if (callee <= at([&](const auto &g) { return g.get() == &graph_; }))
          return failAt(n) << "argument '" << a.name << "' names graph @" << v.strings[0]
                           << ", which does not come after the graph that calls it";
      }
      bool tensors = v.kind == ArgKind::Tensor || v.kind == ArgKind::Tensors ||
                     v.kind == ArgKind::OptionalTensors;
      if (v.kind == ArgKind::Tensor && v.ints.size() != 1)
        return failAt(n) << "argument '" << a.name << "' has " << v.ints.size()
                         << " inputs, expected 1";
      if (!tensors && v.kind != ArgKind::SymInt && v.kind != ArgKind::SymInts)
        if (std::optional<std::string> bad = badConstant(v))
          return failAt(n) << "argument '" << a.name << "' " << *bad;
      int64_t lowest = v.kind == ArgKind::OptionalTensors ? -1 : 0;
      for (size_t i = 0; tensors && i < v.ints.size(); ++i)
        if (v.ints[i] < lowest || v.ints[i] >= static_cast<int64_t>(n.inputs.size()))
          return failAt(n) << "argument '" << a.name << "' names input " << v.ints[i]
                           << " of " << n.inputs.size();
    }
    for (const PostOp &p : n.postOps) {
      if (p.input >= n.inputs.size() &&
          (p.kind == PostOp::Kind::AddBias || p.kind == PostOp::Kind::Add ||
           p.kind == PostOp::Kind::GatedSilu))
        return failAt(n) << "a post-op names input " << p.input << " of " << n.inputs.size();
      if (p.kind != PostOp::Kind::GatedSilu)
        continue;
      std::optional<ProductOperands> product = productOperands(n);
      if (!product || n.postOps.size() != 1)
        return failAt(n) << "a gated_silu post-op must be a matrix product's only post-op";
      const TensorType &w = n.inputs[product->weights].type, &u = n.inputs[p.input].type;
      if (u.dtype != w.dtype || u.sizes != w.sizes || u.strides != w.strides)
        return failAt(n) << "a gated_silu post-op's weight (input " << p.input
                         << ") is laid out unlike the product's (input " << product->weights
                         << ")";
    }
    if (const std::optional<RmsNormPrologue> &norm = n.rmsNorm) {
      std::optional<ProductOperands> product = productOperands(n);
      if (!product)
        return failAt(n) << "an rms_norm prologue on " << opName(n.op)
                         << ", which is no matrix product";
      if (norm->weight >= n.inputs.size())
        return failAt(n) << "the rms_norm prologue names input " << norm->weight << " of "
                         << n.inputs.size();
      const TensorType &a = n.inputs[product->src].type, &g = n.inputs[norm->weight].type;
      if (g.rank() != 1 || a.rank() == 0 || g.sizes[0] != a.sizes.back() ||
          g.dtype != a.dtype || !(g.strides[0]->isConst() && g.strides[0]->constant() == 1))
        return failAt(n) << "the rms_norm prologue's weight (input " << norm->weight
                         << ") must be one " << dtypeName(a.dtype)
                         << " value per element of a left row, with unit stride";
      if (!(norm->eps >= 0) || !std::isfinite(norm->eps))
        return failAt(n) << "the rms_norm prologue's eps must be finite and non-negative";
    }
    return Error::success();
  }

  Error checkPlan() const {
    const Plan &p = graph_.plan;
    std::vector<unsigned> kernelsOf(graph_.nodes.size(), 0);
    for (const KernelGroup &k : p.kernels) {
      for (uint32_t node : k.nodes) {
        if (node >= graph_.nodes.size())
          return fail() << "kernel '" << k.name << "' names node " << node << ", but the graph has "
                        << graph_.nodes.size();
        const LoopNode &n = graph_.nodes[node];
        if (n.kind != LoopNode::Kind::Pointwise && n.kind != LoopNode::Kind::Reduction)
          return fail() << "kernel '" << k.name << "' holds node '" << n.name
                        << "', which is not a pointwise or reduction node";
        ++kernelsOf[node];
      }
      GC_RETURN_IF_ERROR(checkExprs(k.parallelRanges, {}, "kernel '" + k.name + "' range"));
    }
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      const LoopNode &n = graph_.nodes[i];
      bool loops = n.kind == LoopNode::Kind::Pointwise || n.kind == LoopNode::Kind::Reduction;
      if (loops && kernelsOf[i] != 1)
        return failAt(n) << "it is in " << kernelsOf[i] << " kernels, expected exactly 1";
    }
    for (size_t i = 0; i < p.steps.size(); ++i) {
      const PlanStep &s = p.steps[i];
      std::string what = "step " + std::to_string(i);
      if (s.kind == PlanStep::Kind::Kernel) {
        if (s.index >= p.kernels.size())
          return fail() << what << " runs kernel " << s.index << ", but the plan has "
                        << p.kernels.size();
      } else {
        LoopNode::Kind want = s.kind == PlanStep::Kind::Extern   ? LoopNode::Kind::Extern
                              : s.kind == PlanStep::Kind::Fallback ? LoopNode::Kind::Fallback
                                                                   : LoopNode::Kind::Call;
        if (s.index >= graph_.nodes.size() || graph_.nodes[s.index].kind != want)
          return fail() << what << " runs node " << s.index << ", which is not "
                        << (want == LoopNode::Kind::Extern ? "an " : "a ")
                        << EnumInfo<LoopNode::Kind>::name(want) << " node of the graph";
      }
    }
    // Groups of one name share one compiled function.
    std::map<std::string_view, uint32_t> first;
    for (uint32_t k = 0; k < p.kernels.size(); ++k) {
      auto [it, isNew] = first.try_emplace(p.kernels[k].name, k);
      if (!isNew && !sameKernelCode(graph_, it->second, k))
        return fail() << "kernels " << it->second << " and " << k << " share the name '"
                      << p.kernels[k].name << "' but do not run the same code";
    }
    return Error::success();
  }

  const Module &module_;
  const LoopGraph &graph_;
};

} // namespace

Error verifyModule(const Module &m) {
  for (const auto &[name, range] : m.syms().ranges()) {
    if (!isSymbolName(name))
      return makeError() << "'" << name << "' is not a valid symbol name";
    if (range.min > range.max)
      return makeError() << "symbol " << name << " has an empty range";
  }
  std::set<std::string> names;
  for (const Weight &w : m.weights()) {
    if (!names.insert(w.name).second)
      return makeError() << "weight '" << w.name << "' is defined twice";
    if (w.source >= m.weightSources().size())
      return makeError() << "weight '" << w.name << "' names source " << w.source
                         << ", but the module has " << m.weightSources().size();
    if (std::optional<std::string> problem = tensorTypeProblem(w.type))
      return makeError() << "weight '" << w.name << "' " << *problem;
  }
  std::set<std::string> graphNames;
  for (const auto &g : m.graphs()) {
    if (!isValueName(g->name()))
      return makeError() << "'" << g->name() << "' is not a valid graph name";
    if (!graphNames.insert(g->name()).second)
      return makeError() << "graph @" << g->name() << " is defined twice";
    GC_RETURN_IF_ERROR(GraphVerifier(m, *g).run());
  }
  bool loopLevel = m.level() == Level::Loops || m.level() == Level::Kernels;
  if (loopLevel && !m.graphs().empty())
    return makeError() << "a module of level " << levelName(m.level())
                       << " holds loop graphs, not graphs";
  if (!loopLevel && !m.loopGraphs().empty())
    return makeError() << "a module of level " << levelName(m.level())
                       << " cannot hold loop graphs";
  for (const auto &g : m.loopGraphs()) {
    if (!isValueName(g->name))
      return makeError() << "'" << g->name << "' is not a valid graph name";
    if (!graphNames.insert(g->name).second)
      return makeError() << "graph @" << g->name << " is defined twice";
    GC_RETURN_IF_ERROR(LoopGraphVerifier(m, *g).run());
  }
  return Error::success();
}

} // namespace gc
