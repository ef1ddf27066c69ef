//===- Verifier.cpp - Structural checks -----------------------------------===//
#include "gc/IR/Verifier.h"

#include "gc/IR/Names.h"
#include "gc/IR/OpSchema.h"

#include <set>
#include <unordered_set>

namespace gc {

namespace {

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
    if (!n.results().empty())
      b << "node %" << n.results()[0]->name() << " (" << n.op() << "): ";
    else
      b << "node " << n.op() << ": ";
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
    const TensorType &tt = t.tensor;
    if (tt.sizes.size() != tt.strides.size())
      return fail() << "%" << v->name() << " has " << tt.sizes.size()
                    << " sizes but " << tt.strides.size() << " strides";
    if (!tt.storageOffset)
      return fail() << "%" << v->name() << " has no storage offset";
    for (const SymExpr *e : tt.sizes)
      if (!e || (e->isConst() && e->constant() < 0))
        return fail() << "%" << v->name() << " has an invalid size";
    return Error::success();
  }

  Error checkInput(const Value *v, const InputSpec &spec) {
    GC_RETURN_IF_ERROR(define(v));
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
    case ArgKind::None:
      return Error::success();
    case ArgKind::Tensor:
      GC_RETURN_IF_ERROR(count(v.values.size(), 1, "values"));
      return checkUse(n, a, v.values[0], false, K::Tensor);
    case ArgKind::Tensors:
    case ArgKind::OptionalTensors:
      for (const Value *x : v.values)
        GC_RETURN_IF_ERROR(checkUse(n, a, x, v.kind == ArgKind::OptionalTensors, K::Tensor));
      return Error::success();
    case ArgKind::Int:
      return count(v.ints.size(), 1, "integers");
    case ArgKind::Bool:
      GC_RETURN_IF_ERROR(count(v.ints.size(), 1, "integers"));
      [[fallthrough]];
    case ArgKind::Bools:
      for (int64_t b : v.ints)
        if (b != 0 && b != 1)
          return failAt(n) << "argument '" << a.name << "' holds a non-boolean";
      return Error::success();
    case ArgKind::Ints:
      return Error::success();
    case ArgKind::Float:
      return count(v.floats.size(), 1, "floats");
    case ArgKind::Floats:
      return Error::success();
    case ArgKind::String:
      return count(v.strings.size(), 1, "strings");
    case ArgKind::Strings:
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
    case ArgKind::ScalarType:
      GC_RETURN_IF_ERROR(count(v.ints.size(), 1, "integers"));
      if (v.ints[0] < 0 || v.ints[0] >= kNumDTypes)
        return failAt(n) << "argument '" << a.name << "' is not a dtype";
      return Error::success();
    case ArgKind::MemoryFormat:
    case ArgKind::Layout:
      return count(v.ints.size(), 1, "integers");
    case ArgKind::Device:
      return Error::success();
    }
    return failAt(n) << "argument '" << a.name << "' has an unknown kind";
  }

  Error checkNode(const Node &n) {
    if (!isOpName(n.op()))
      return fail() << "'" << n.op() << "' is not a valid op name";
    if (module_.level() >= Level::Loops)
      return failAt(n) << "op is not allowed at level " << levelName(module_.level());
    if (module_.level() != Level::Aten && !isCoreOp(n.op()))
      return failAt(n) << "op is not in the core op set, which level "
                       << levelName(module_.level()) << " requires";
    std::set<std::string> argNames;
    for (const NamedArg &a : n.args()) {
      if (!argNames.insert(a.name).second)
        return failAt(n) << "argument '" << a.name << "' is given twice";
      GC_RETURN_IF_ERROR(checkArg(n, a));
    }
    if (n.resultForm() == ResultForm::Single && n.results().size() > 1)
      return failAt(n) << "a single-result node defines " << n.results().size() << " values";
    for (const Value *r : n.results())
      GC_RETURN_IF_ERROR(define(r));
    return Error::success();
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
  std::unordered_set<const Value *> defined_;
  std::unordered_set<std::string> names_;
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
  }
  std::set<std::string> graphNames;
  for (const auto &g : m.graphs()) {
    if (!isValueName(g->name()))
      return makeError() << "'" << g->name() << "' is not a valid graph name";
    if (!graphNames.insert(g->name()).second)
      return makeError() << "graph @" << g->name() << " is defined twice";
    GC_RETURN_IF_ERROR(GraphVerifier(m, *g).run());
  }
  return Error::success();
}

} // namespace gc
