//===- PassUtils.cpp - Helpers shared by gc-opt's passes ------------------===//
#include "PassUtils.h"

#include "gc/IR/Describe.h"
#include "gc/IR/OpSchema.h"
#include "gc/Interp/Interpreter.h"
#include "gc/Interp/Kernel.h"
#include "gc/Support/SHA256.h"

#include <algorithm>
#include <unordered_map>

namespace gc {

namespace {

/// Weights are aligned in the blob as gc-import aligns them, so they can be
/// mapped and read in place.
constexpr size_t kBlobAlignment = 64;

/// The type of a new weight holding `t`'s values: its dtype, sizes and
/// device, contiguous from offset 0.
TensorType denseType(SymContext &syms, const TensorType &t) {
  TensorType out;
  out.dtype = t.dtype;
  out.device = t.device;
  out.sizes = t.sizes;
  out.strides = contiguousStrides(syms, out.sizes);
  out.storageOffset = syms.constant(0);
  return out;
}

/// Appends `t` (contiguous, of its own dtype) to the pending blob and
/// returns the weight that refers to it.
Weight addBlobWeight(Module &m, std::string name, const Tensor &t, const Device &device) {
  std::optional<Module::PendingBlob> &blob = m.pendingBlob();
  if (!blob) {
    m.weightSources().push_back({WeightSource::Kind::Blob, ""});
    blob = Module::PendingBlob{static_cast<uint32_t>(m.weightSources().size() - 1), {}};
  }
  Tensor dense = t.isContiguous() && t.offset() == 0 ? t : t.clone();
  size_t bytes = static_cast<size_t>(dense.numel()) * dtypeSize(dense.dtype());
  std::string_view data(reinterpret_cast<const char *>(dense.storage()->data()), bytes);
  blob->bytes.resize((blob->bytes.size() + kBlobAlignment - 1) / kBlobAlignment * kBlobAlignment,
                     '\0');
  Weight w;
  w.name = std::move(name);
  w.source = blob->source;
  w.offset = blob->bytes.size();
  w.bytes = bytes;
  w.sha256 = sha256Hex(data);
  blob->bytes.append(data);
  SymContext &syms = m.syms();
  TensorType type;
  type.dtype = dense.dtype();
  type.device = device;
  for (int64_t s : dense.sizes())
    type.sizes.push_back(syms.constant(s));
  w.type = denseType(syms, type);
  return w;
}

/// A weight name not yet in the module, from `hint`.
std::string uniqueWeightName(const Module &m, const std::string &hint) {
  if (!m.weight(hint))
    return hint;
  for (int i = 1;; ++i) {
    std::string name = hint + "_" + std::to_string(i);
    if (!m.weight(name))
      return name;
  }
}

/// Removes the weights that no graph input refers to any more.
void dropUnreferencedWeights(Module &m) {
  std::unordered_set<std::string> used;
  for (const auto &g : m.graphs())
    for (const InputSpec &s : g->inputSpecs())
      if (s.kind != InputKind::UserInput && s.kind != InputKind::Token &&
          !isGeneratorInput(s.kind))
        used.insert(s.target);
  std::erase_if(m.weights(), [&](const Weight &w) { return !used.count(w.name); });
}

bool isTensorArg(const Arg &a) {
  return a.kind == ArgKind::Tensor || a.kind == ArgKind::Tensors ||
         a.kind == ArgKind::OptionalTensors;
}

/// Whether `n` can be evaluated once its tensor arguments are known: it has
/// a kernel, is pure, and has no symbolic argument or result.
bool evaluable(const Node &n) {
  if (!referenceKernels().find(n.op()) || hasTraits(n.op(), kRandom) || writesInPlace(n.op()) ||
      n.results().empty())
    return false;
  for (const NamedArg &a : n.args())
    if (!isTensorArg(a.value))
      for (const Value *v : a.value.values)
        if (v)
          return false;
  for (const Value *r : n.results())
    if (!r->type().isTensor() || !staticBytes(r->type().tensor))
      return false;
  return true;
}

} // namespace

const Arg *argOf(const Node &n, std::string_view name) {
  const NamedArg *a = n.arg(name);
  return a && a->value.kind != ArgKind::None ? &a->value : nullptr;
}

std::optional<int64_t> intArg(const Node &n, std::string_view name) {
  const Arg *a = argOf(n, name);
  if (!a || a->ints.size() != 1 || (!a->values.empty() && a->values[0]))
    return std::nullopt;
  return a->ints[0];
}

Value *tensorArg(const Node &n, std::string_view name) {
  const Arg *a = argOf(n, name);
  return a && a->kind == ArgKind::Tensor ? a->values[0] : nullptr;
}

bool isContiguous(SymContext &syms, const TensorType &t) {
  const SymExpr *expected = syms.constant(1);
  for (size_t d = t.rank(); d-- > 0;) {
    if (t.sizes[d] != syms.constant(1) && t.strides[d] != expected)
      return false;
    expected = syms.mul(expected, t.sizes[d]);
  }
  return true;
}

bool writesInPlace(OpId op) {
  const std::vector<ArgDef> &args = opSchema(op).args;
  return std::any_of(args.begin(), args.end(), [](const ArgDef &a) { return a.mutated; });
}

Error requireFunctional(const Module &m, std::string_view pass) {
  for (const auto &g : m.graphs())
    for (const auto &n : g->nodes())
      if (writesInPlace(n->op()))
        return makeError() << "graph @" << g->name() << ", node "
                           << (n->results().empty() ? "" : "%" + n->results()[0]->name() + " ")
                           << "(" << n->op() << ") writes in place; " << pass
                           << " needs a functional graph: run functionalize first";
  return Error::success();
}

std::unordered_map<const Value *, int> countUses(const Graph &g) {
  std::unordered_map<const Value *, int> uses;
  for (const auto &n : g.nodes())
    for (const NamedArg &a : n->args())
      for (const Value *v : a.value.values)
        ++uses[v];
  for (const Value *v : g.outputs())
    ++uses[v];
  return uses;
}

bool isConstantInput(const Graph &g, const Value *v) {
  if (v->definingNode())
    return false;
  for (size_t i = 0; i < g.inputs().size(); ++i)
    if (g.inputs()[i] == v)
      return g.inputSpecs()[i].kind == InputKind::Constant;
  return false;
}

std::optional<int64_t> staticBytes(const TensorType &t) {
  int64_t n = dtypeSize(t.dtype);
  for (const SymExpr *s : t.sizes) {
    if (!s->isConst())
      return std::nullopt;
    n *= s->constant();
  }
  return n;
}

namespace {

/// Appends to `into` a copy of `n` whose value arguments are mapped by
/// `lookup` and whose results are named by `name`.
Expected<Node *> copyNode(Graph &into, const Node &n,
                          const std::function<Expected<Value *>(const Value *)> &lookup,
                          const std::function<std::string(const Value *)> &name) {
  std::vector<NamedArg> args = n.args();
  for (NamedArg &a : args)
    for (Value *&v : a.value.values)
      if (v) {
        Expected<Value *> nv = lookup(v);
        if (!nv)
          return nv.error();
        v = *nv;
      }
  std::vector<std::pair<std::string, Type>> results;
  for (const Value *r : n.results())
    results.emplace_back(name(r), r->type());
  Node *copy = into.addNode(n.op(), std::move(args), std::move(results), n.resultForm());
  copy->setLoc(n.loc());
  return copy;
}

} // namespace

Error rebuildGraph(Module &m, Graph &g, const GraphEdit &edit) {
  auto ng = std::make_unique<Graph>(g.name());
  std::unordered_map<const Value *, Value *> map;
  auto addAdded = [&] {
    for (const AddedInput &a : edit.added) {
      Value *v = ng->addInput(a.name, a.type, a.spec);
      if (a.replaces)
        map[a.replaces] = v;
    }
  };
  bool addedDone = false;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    std::optional<InputSpec> spec =
        edit.specs.empty() ? std::optional(g.inputSpecs()[i]) : edit.specs[i];
    if (!addedDone && g.inputSpecs()[i].kind == InputKind::UserInput) {
      addAdded();
      addedDone = true;
    }
    if (spec)
      map[g.inputs()[i]] = ng->addInput(g.inputs()[i]->name(), g.inputs()[i]->type(), *spec);
  }
  if (!addedDone)
    addAdded();
  auto lookup = [&](const Value *old) -> Expected<Value *> {
    auto it = map.find(old);
    if (it == map.end())
      return makeError() << "graph @" << g.name() << ": %" << old->name()
                         << " is still used but was removed";
    return it->second;
  };
  for (const auto &n : g.nodes()) {
    if (edit.removed.count(n.get()))
      continue;
    Expected<Node *> copy = copyNode(*ng, *n, lookup, [](const Value *r) { return r->name(); });
    if (!copy)
      return copy.error();
    for (size_t i = 0; i < (*copy)->results().size(); ++i)
      map[n->results()[i]] = (*copy)->results()[i];
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    if (edit.droppedOutputs.count(i))
      continue;
    Expected<Value *> v = lookup(g.outputs()[i]);
    if (!v)
      return v.error();
    ng->addOutput(*v, g.outputSpecs()[i]);
  }
  m.replaceGraph(g, std::move(ng));
  return Error::success();
}

namespace {

/// For each result of a node of `folded` that is removed and that the kept
/// graph `used`: a new weight, named after it and made by `make`, which
/// `edit` adds as the constant input that replaces it.
void addFoldedConstants(Module &m, const Graph &g, const std::vector<const Node *> &folded,
                        const std::unordered_set<const Value *> &used, GraphEdit &edit,
                        const std::function<Weight(const Value *, std::string)> &make) {
  for (const Node *n : folded)
    for (const Value *r : n->results()) {
      if (!used.count(r) || !edit.removed.count(n))
        continue;
      Weight w = make(r, uniqueWeightName(m, "_folded." + g.name() + "." + r->name()));
      edit.added.push_back(
          {r->name(), Type::makeTensor(w.type), InputSpec{InputKind::Constant, w.name}, r});
      m.weights().push_back(std::move(w));
    }
}

/// Evaluates `folded` (in order) with the reference kernels; each result
/// that the kept graph `used` becomes a weight of the pending blob, added to
/// `edit` as a constant input.
Error evaluateFolds(Module &m, const Graph &g, const std::vector<const Node *> &folded,
                    const std::unordered_set<const Value *> &used, GraphEdit &edit,
                    std::map<std::string, int64_t> &stats) {
  std::vector<std::string> weightNames;
  for (const Node *n : folded)
    for (const NamedArg &a : n->args())
      if (isTensorArg(a.value))
        for (const Value *v : a.value.values)
          if (v && !v->definingNode())
            for (size_t i = 0; i < g.inputs().size(); ++i)
              if (g.inputs()[i] == v)
                weightNames.push_back(g.inputSpecs()[i].target);

  Expected<std::map<std::string, Tensor>> weights = loadWeights(m, weightNames);
  if (!weights)
    return weights.error().withContext("graph @" + g.name() + ": folding constants");
  std::unordered_map<const Value *, Tensor> tensors;
  for (size_t i = 0; i < g.inputs().size(); ++i)
    if (auto it = weights->find(g.inputSpecs()[i].target);
        g.inputSpecs()[i].kind == InputKind::Constant && it != weights->end())
      tensors[g.inputs()[i]] = it->second;
  const std::unordered_map<const Value *, int64_t> noSymInts;
  for (const Node *n : folded) {
    std::string where = "graph @" + g.name() + ", " + describeNode(*n);
    std::vector<Tensor> results;
    try {
      results = referenceKernels().find(n->op())->fn(OpCall(*n, tensors, noSymInts));
    } catch (const std::exception &e) {
      return makeError() << where << ": evaluating it at compile time failed: " << e.what();
    }
    if (results.size() != n->results().size())
      return makeError() << where << ": the kernel gave " << results.size()
                         << " results, the graph has " << n->results().size();
    for (size_t i = 0; i < results.size(); ++i) {
      const TensorType &want = n->results()[i]->type().tensor;
      std::vector<int64_t> sizes;
      for (const SymExpr *s : want.sizes)
        sizes.push_back(s->constant());
      if (results[i].dtype() != want.dtype || results[i].sizes() != sizes)
        return makeError() << where << ": evaluating it at compile time gave "
                           << dtypeName(results[i].dtype()) << shapeString(results[i].sizes())
                           << ", the graph says " << dtypeName(want.dtype) << shapeString(sizes);
      tensors[n->results()[i]] = results[i];
    }
    if (edit.removed.count(n))
      ++stats["nodes folded"];
  }

  addFoldedConstants(m, g, folded, used, edit, [&](const Value *r, std::string name) {
    ++stats["constants made"];
    return addBlobWeight(m, std::move(name), tensors.at(r), r->type().tensor.device);
  });
  return Error::success();
}

/// The module's Program weight source, if it has one: then folds are
/// computed at load time by the constant program rather than here.
std::optional<uint32_t> programSource(const Module &m) {
  for (uint32_t i = 0; i < m.weightSources().size(); ++i)
    if (m.weightSources()[i].kind == WeightSource::Kind::Program)
      return i;
  return std::nullopt;
}

/// Moves `folded` (in order) into the constant program (graph
/// @constant_program, made if missing) instead of evaluating them: each
/// result that the kept graph `used` becomes an output of that graph and a
/// weight of the Program source `program`, added to `edit` as a constant
/// input. The program reads the constants of `g` as its own constant
/// inputs, or, for a weight it computes itself, that output's value.
Error deferFolds(Module &m, const Graph &g, uint32_t program,
                 const std::vector<const Node *> &folded,
                 const std::unordered_set<const Value *> &used, GraphEdit &edit,
                 std::map<std::string, int64_t> &stats) {
  Graph *p = m.graph(kConstantProgramGraph);
  if (!p)
    p = &m.addGraph(std::string(kConstantProgramGraph));
  std::unordered_set<std::string> names;
  std::unordered_map<std::string, Value *> byTarget; // weight -> its value in the program
  for (size_t i = 0; i < p->inputs().size(); ++i) {
    names.insert(p->inputs()[i]->name());
    byTarget[p->inputSpecs()[i].target] = p->inputs()[i];
  }
  for (const auto &n : p->nodes())
    for (const Value *r : n->results())
      names.insert(r->name());
  for (size_t i = 0; i < p->outputs().size(); ++i)
    byTarget[p->outputSpecs()[i].target] = p->outputs()[i];
  auto fresh = [&](const std::string &hint) {
    std::string name = hint;
    for (int i = 1; names.count(name); ++i)
      name = hint + "_" + std::to_string(i);
    names.insert(name);
    return name;
  };

  std::unordered_map<const Value *, Value *> map; // g's values -> the program's
  auto lookup = [&](const Value *v) -> Expected<Value *> {
    if (auto it = map.find(v); it != map.end())
      return it->second;
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      if (g.inputs()[i] != v)
        continue;
      const InputSpec &spec = g.inputSpecs()[i];
      Value *&in = byTarget[spec.target];
      if (!in)
        in = p->addInput(fresh(v->name()), v->type(), InputSpec{InputKind::Constant, spec.target});
      return map[v] = in;
    }
    return makeError() << "graph @" << g.name() << ": %" << v->name()
                       << " is neither a constant nor a folded result";
  };
  for (const Node *n : folded) {
    Expected<Node *> copy =
        copyNode(*p, *n, lookup, [&](const Value *r) { return fresh(r->name()); });
    if (!copy)
      return copy.error();
    for (size_t i = 0; i < (*copy)->results().size(); ++i)
      map[n->results()[i]] = (*copy)->results()[i];
    if (edit.removed.count(n))
      ++stats["nodes deferred to the constant program"];
  }

  addFoldedConstants(m, g, folded, used, edit, [&](const Value *r, std::string name) {
    Weight w;
    w.name = std::move(name);
    w.type = denseType(m.syms(), r->type().tensor);
    w.source = program;
    w.bytes = static_cast<uint64_t>(*staticBytes(w.type));
    p->addOutput(map.at(r), OutputSpec{OutputKind::UserOutput, w.name});
    ++stats["constants computed at load time"];
    return w;
  });
  return Error::success();
}

} // namespace

Error foldConstants(Module &m, Graph &g, const std::function<bool(const Node &)> &shouldFold,
                    std::map<std::string, int64_t> &stats) {
  // Which nodes fold: decided in order, since a folded result is a constant
  // for the nodes after it.
  if (g.name() == kConstantProgramGraph)
    return Error::success(); // its nodes are computed at load time already
  std::unordered_set<const Value *> constant;
  for (size_t i = 0; i < g.inputs().size(); ++i)
    if (g.inputSpecs()[i].kind == InputKind::Constant)
      constant.insert(g.inputs()[i]);
  GraphEdit edit;
  std::vector<const Node *> folded;
  for (const auto &n : g.nodes()) {
    if (!evaluable(*n) || !shouldFold(*n))
      continue;
    bool allConstant = true;
    for (const NamedArg &a : n->args())
      if (isTensorArg(a.value))
        for (const Value *v : a.value.values)
          allConstant &= !v || constant.count(v) > 0;
    if (!allConstant)
      continue;
    folded.push_back(n.get());
    edit.removed.insert(n.get());
    constant.insert(n->results().begin(), n->results().end());
  }
  if (folded.empty())
    return Error::success();

  // What the kept graph still uses. A node without tensor arguments (full,
  // arange) that it uses stays: as a constant it would cost as much, and
  // cse could no longer merge it.
  std::unordered_set<const Value *> used(g.outputs().begin(), g.outputs().end());
  for (const auto &n : g.nodes())
    if (!edit.removed.count(n.get()))
      for (const NamedArg &a : n->args())
        used.insert(a.value.values.begin(), a.value.values.end());
  for (const Node *n : folded) {
    bool source = std::none_of(n->args().begin(), n->args().end(),
                               [](const NamedArg &a) { return isTensorArg(a.value); });
    if (source && std::any_of(n->results().begin(), n->results().end(),
                              [&](const Value *r) { return used.count(r) > 0; }))
      edit.removed.erase(n);
  }
  if (edit.removed.empty())
    return Error::success();
  std::optional<uint32_t> program = programSource(m);
  GC_RETURN_IF_ERROR(program ? deferFolds(m, g, *program, folded, used, edit, stats)
                             : evaluateFolds(m, g, folded, used, edit, stats));
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    bool drop = g.inputSpecs()[i].kind == InputKind::Constant && !used.count(g.inputs()[i]);
    edit.specs.push_back(drop ? std::nullopt : std::optional(g.inputSpecs()[i]));
    if (drop)
      ++stats["constant inputs dropped"];
  }
  GC_RETURN_IF_ERROR(rebuildGraph(m, g, edit));
  dropUnreferencedWeights(m);
  return Error::success();
}

Error pruneConstantProgram(Module &m, std::map<std::string, int64_t> &stats) {
  Graph *p = m.graph(kConstantProgramGraph);
  if (!p)
    return Error::success();
  std::unordered_set<std::string> read;
  for (const auto &g : m.graphs())
    if (g.get() != p)
      for (const InputSpec &s : g->inputSpecs())
        read.insert(s.target);
  GraphEdit edit;
  for (size_t i = 0; i < p->outputs().size(); ++i)
    if (!read.count(p->outputSpecs()[i].target))
      edit.droppedOutputs.insert(i);
  if (edit.droppedOutputs.empty())
    return Error::success();
  stats["constant program outputs dropped"] += edit.droppedOutputs.size();
  GC_RETURN_IF_ERROR(rebuildGraph(m, *p, edit));
  dropUnreferencedWeights(m);
  return Error::success();
}

} // namespace gc
