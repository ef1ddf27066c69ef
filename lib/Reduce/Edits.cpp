//===- Edits.cpp - The ways gc-reduce shrinks a module --------------------===//
#include "gc/Reduce/Edits.h"

#include "gc/Ops/GraphBuilder.h"
#include "gc/Ops/ShapeInference.h"

#include <map>
#include <optional>
#include <set>
#include <unordered_set>

namespace gc {

std::string_view editKindName(EditKind k) {
  switch (k) {
  case EditKind::CutToInput:
    return "cut nodes to inputs";
  case EditKind::CutToZeros:
    return "cut nodes to zeros";
  case EditKind::CutToOnes:
    return "cut nodes to ones";
  case EditKind::DropOutput:
    return "drop outputs";
  case EditKind::HoistOutput:
    return "hoist outputs";
  case EditKind::WeightToInput:
    return "weights to inputs";
  case EditKind::HalveSize:
    return "halve a size of every input";
  case EditKind::HalveDim:
    return "halve input sizes";
  }
  return "?";
}

namespace {

bool isWeightInput(InputKind k) {
  return k == InputKind::Parameter || k == InputKind::Buffer || k == InputKind::Constant;
}

bool allTensorResults(const Node &n) {
  if (n.results().empty())
    return false;
  for (const Value *v : n.results())
    if (!v->type().isTensor())
      return false;
  return true;
}

/// Static sizes, or nullopt if any size is symbolic.
std::optional<std::vector<int64_t>> staticSizes(const TensorType &t) {
  std::vector<int64_t> sizes;
  for (const SymExpr *e : t.sizes) {
    if (!e->isConst())
      return std::nullopt;
    sizes.push_back(e->constant());
  }
  return sizes;
}

/// The tensors a node reads, in argument order.
std::vector<const Value *> tensorOperands(const Node &n) {
  std::vector<const Value *> operands;
  for (const NamedArg &a : n.args())
    for (const Value *v : a.value.values)
      if (v && v->type().isTensor())
        operands.push_back(v);
  return operands;
}

/// Removes the weights no graph input names any more, then the sources no
/// weight lives in. A module whose weights a constant program computes is
/// left as it is: its weights are that graph's outputs, not inputs.
void pruneWeights(Module &m) {
  for (const WeightSource &s : m.weightSources())
    if (s.kind == WeightSource::Kind::Program)
      return;
  std::set<std::string> named;
  for (const auto &g : m.graphs())
    for (size_t i = 0; i < g->inputs().size(); ++i)
      if (isWeightInput(g->inputSpecs()[i].kind))
        named.insert(g->inputSpecs()[i].target);
  std::vector<Weight> kept;
  std::set<uint32_t> usedSources;
  if (m.pendingBlob())
    usedSources.insert(m.pendingBlob()->source);
  for (Weight &w : m.weights())
    if (named.count(w.name)) {
      usedSources.insert(w.source);
      kept.push_back(std::move(w));
    }
  std::vector<WeightSource> sources;
  std::map<uint32_t, uint32_t> renumber;
  for (uint32_t s : usedSources) {
    renumber[s] = static_cast<uint32_t>(sources.size());
    sources.push_back(m.weightSources()[s]);
  }
  for (Weight &w : kept)
    w.source = renumber[w.source];
  if (m.pendingBlob())
    m.pendingBlob()->source = renumber[m.pendingBlob()->source];
  m.weights() = std::move(kept);
  m.weightSources() = std::move(sources);
}

/// The edits of one candidate, by what they touch.
struct EditSet {
  std::vector<std::optional<EditKind>> cut; // per node: how it is cut, if it is
  std::vector<bool> drop;            // per output
  std::map<uint32_t, uint32_t> hoist; // output -> operand
  std::vector<bool> toUserInput;     // per input
  std::map<uint32_t, std::set<uint32_t>> halve; // input -> dims
  std::set<int64_t> halveSizes;
};

Expected<EditSet> classify(const Graph &g, std::span<const Edit> edits) {
  EditSet s;
  s.cut.assign(g.nodes().size(), std::nullopt);
  s.drop.assign(g.outputs().size(), false);
  s.toUserInput.assign(g.inputs().size(), false);
  for (const Edit &e : edits) {
    size_t limit = 0;
    switch (e.kind) {
    case EditKind::CutToInput:
    case EditKind::CutToZeros:
    case EditKind::CutToOnes:
      limit = g.nodes().size();
      break;
    case EditKind::DropOutput:
    case EditKind::HoistOutput:
      limit = g.outputs().size();
      break;
    case EditKind::WeightToInput:
    case EditKind::HalveDim:
      limit = g.inputs().size();
      break;
    case EditKind::HalveSize:
      limit = UINT32_MAX;
      break;
    }
    if (e.index >= limit)
      return makeError() << "edit '" << editKindName(e.kind) << "' names index " << e.index
                         << " of " << limit;
    switch (e.kind) {
    case EditKind::CutToInput:
    case EditKind::CutToZeros:
    case EditKind::CutToOnes:
      s.cut[e.index] = e.kind;
      break;
    case EditKind::DropOutput:
      s.drop[e.index] = true;
      break;
    case EditKind::HoistOutput:
      s.hoist[e.index] = e.dim;
      break;
    case EditKind::WeightToInput:
      s.toUserInput[e.index] = true;
      break;
    case EditKind::HalveDim: {
      const Type &t = g.inputs()[e.index]->type();
      if (!t.isTensor() || e.dim >= t.tensor.rank() || !t.tensor.sizes[e.dim]->isConst())
        return makeError() << "input " << e.index << " has no static dimension " << e.dim;
      s.halve[e.index].insert(e.dim);
      break;
    }
    case EditKind::HalveSize:
      s.halveSizes.insert(e.index);
      break;
    }
  }
  // A size halves for every user input that has it.
  for (size_t i = 0; i < g.inputs().size() && !s.halveSizes.empty(); ++i) {
    const Type &t = g.inputs()[i]->type();
    if (g.inputSpecs()[i].kind != InputKind::UserInput || !t.isTensor())
      continue;
    for (size_t d = 0; d < t.tensor.rank(); ++d)
      if (const SymExpr *e = t.tensor.sizes[d]; e->isConst() && s.halveSizes.count(e->constant()))
        s.halve[i].insert(d);
  }
  return s;
}

} // namespace

std::vector<Edit> proposeEdits(const Module &m, EditKind kind) {
  std::vector<Edit> edits;
  if (m.graphs().empty())
    return edits;
  const Graph &g = *m.graphs()[0];
  auto add = [&](size_t index, size_t dim = 0) {
    edits.push_back({kind, static_cast<uint32_t>(index), static_cast<uint32_t>(dim)});
  };
  switch (kind) {
  case EditKind::CutToInput:
  case EditKind::CutToZeros:
  case EditKind::CutToOnes:
    for (size_t i = 0; i < g.nodes().size(); ++i) {
      const Node &n = *g.nodes()[i];
      bool ok = allTensorResults(n);
      if (ok && kind != EditKind::CutToInput)
        for (const Value *v : n.results())
          ok = ok && staticSizes(v->type().tensor).has_value();
      if (ok)
        add(i);
    }
    break;
  case EditKind::DropOutput:
    if (g.outputs().size() > 1)
      for (size_t i = 0; i < g.outputs().size(); ++i)
        add(i);
    break;
  case EditKind::HoistOutput:
    for (size_t i = 0; i < g.outputs().size(); ++i)
      if (const Node *n = g.outputs()[i]->definingNode())
        for (size_t k = 0; k < tensorOperands(*n).size(); ++k)
          add(i, k);
    break;
  case EditKind::WeightToInput:
    for (size_t i = 0; i < g.inputs().size(); ++i)
      if (isWeightInput(g.inputSpecs()[i].kind))
        add(i);
    break;
  case EditKind::HalveSize: {
    std::set<int64_t> sizes;
    for (size_t i = 0; i < g.inputs().size(); ++i)
      if (g.inputSpecs()[i].kind == InputKind::UserInput && g.inputs()[i]->type().isTensor())
        for (const SymExpr *e : g.inputs()[i]->type().tensor.sizes)
          if (e->isConst() && e->constant() > 1 && e->constant() <= UINT32_MAX)
            sizes.insert(e->constant());
    for (int64_t size : sizes)
      add(static_cast<size_t>(size));
    break;
  }
  case EditKind::HalveDim:
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      const Type &t = g.inputs()[i]->type();
      if (g.inputSpecs()[i].kind != InputKind::UserInput || !t.isTensor())
        continue;
      for (size_t d = 0; d < t.tensor.rank(); ++d)
        if (const SymExpr *e = t.tensor.sizes[d]; e->isConst() && e->constant() > 1)
          add(i, d);
    }
    break;
  }
  return edits;
}

Expected<std::unique_ptr<Module>> applyEdits(const Module &m, std::span<const Edit> edits) {
  if (m.graphs().empty())
    return makeError() << "the module has no graph to reduce";
  std::unique_ptr<Module> out = m.clone();
  const Graph &old = *out->graphs()[0];
  Expected<EditSet> set = classify(old, edits);
  if (!set)
    return set.error();

  // What stays: the outputs (hoisted ones read their node's operand), and
  // backwards from them what a kept node reads. A cut node reads nothing.
  std::vector<std::pair<const Value *, OutputSpec>> outputs;
  for (size_t j = 0; j < old.outputs().size(); ++j) {
    if (set->drop[j])
      continue;
    const Value *v = old.outputs()[j];
    OutputSpec spec = old.outputSpecs()[j];
    if (auto hoist = set->hoist.find(j); hoist != set->hoist.end()) {
      std::vector<const Value *> operands;
      if (v->definingNode())
        operands = tensorOperands(*v->definingNode());
      if (hoist->second >= operands.size())
        return makeError() << "output " << j << " has no operand " << hoist->second;
      v = operands[hoist->second];
      spec.aliasOf.clear();
    }
    outputs.emplace_back(v, std::move(spec));
  }
  if (outputs.empty())
    return makeError() << "no output left";
  std::unordered_set<const Value *> live;
  for (const auto &o : outputs)
    live.insert(o.first);
  std::vector<bool> nodeLive(old.nodes().size(), false);
  for (size_t i = old.nodes().size(); i-- > 0;) {
    const Node &n = *old.nodes()[i];
    for (const Value *r : n.results())
      nodeLive[i] = nodeLive[i] || live.count(r);
    if (nodeLive[i] && !set->cut[i])
      for (const NamedArg &a : n.args())
        for (const Value *v : a.value.values)
          if (v)
            live.insert(v);
  }

  auto graph = std::make_unique<Graph>(old.name());
  ValueMap map;
  SymContext &syms = out->syms();
  for (size_t i = 0; i < old.inputs().size(); ++i) {
    const Value *v = old.inputs()[i];
    if (!live.count(v))
      continue;
    Type type = v->type();
    InputSpec spec = old.inputSpecs()[i];
    if (auto halve = set->halve.find(i); halve != set->halve.end()) {
      for (uint32_t d : halve->second)
        type.tensor.sizes[d] = syms.constant((type.tensor.sizes[d]->constant() + 1) / 2);
      type.tensor.strides = contiguousStrides(syms, type.tensor.sizes);
    }
    if (set->toUserInput[i])
      spec = InputSpec{InputKind::UserInput, v->name(), true, ""};
    map[v] = graph->addInput(v->name(), type, spec);
  }
  GraphBuilder builder(*out, *graph);
  const bool reinfer = !set->halve.empty();
  for (size_t i = 0; i < old.nodes().size(); ++i) {
    if (!nodeLive[i])
      continue;
    const Node &n = *old.nodes()[i];
    if (set->cut[i] == EditKind::CutToInput) {
      for (const Value *r : n.results())
        map[r] = graph->addInput(r->name(), r->type(), InputSpec{InputKind::UserInput, r->name(), true, ""});
      continue;
    }
    if (set->cut[i]) {
      double fill = set->cut[i] == EditKind::CutToOnes ? 1.0 : 0.0;
      try {
        for (const Value *r : n.results())
          map[r] = builder.create1(ops::aten_full_default,
                                   {{"size", *staticSizes(r->type().tensor)},
                                    {"fill_value", fill},
                                    {"dtype", r->type().tensor.dtype}},
                                   r->name());
      } catch (const std::exception &e) {
        return makeError() << "node %" << n.results()[0]->name() << ": " << e.what();
      }
      continue;
    }
    std::vector<NamedArg> args = n.args();
    for (NamedArg &a : args)
      for (Value *&v : a.value.values)
        if (v)
          v = map.at(v);
    std::vector<std::pair<std::string, Type>> results;
    for (const Value *r : n.results())
      results.emplace_back(r->name(), r->type());
    if (reinfer) {
      Expected<std::vector<Type>> types = inferResultTypes(n.op(), args, syms, out.get());
      if (!types)
        return types.error().withContext("node %" + results[0].first);
      if (types->size() != results.size())
        return makeError() << "node %" << results[0].first << ": inferred " << types->size()
                           << " results, the node has " << results.size();
      for (size_t k = 0; k < results.size(); ++k)
        results[k].second = (*types)[k];
    }
    Node *copy =
        builder.createWithTypes(n.op(), std::move(args), std::move(results), n.resultForm());
    for (size_t k = 0; k < copy->results().size(); ++k)
      map[n.results()[k]] = copy->results()[k];
  }
  for (auto &[v, spec] : outputs)
    graph->addOutput(map.at(v), std::move(spec));
  out->replaceGraph(old, std::move(graph));
  pruneWeights(*out);
  return out;
}

ModuleSize moduleSize(const Module &m) {
  ModuleSize size;
  size.weights = m.weights().size();
  auto elements = [&](const Value *v) {
    if (!v->type().isTensor())
      return;
    int64_t n = 1;
    for (const SymExpr *e : v->type().tensor.sizes)
      n *= e->isConst() ? e->constant() : 1;
    size.elements += n;
  };
  for (const auto &g : m.graphs()) {
    size.nodes += g->nodes().size();
    size.inputs += g->inputs().size();
    size.outputs += g->outputs().size();
    for (const Value *v : g->inputs())
      elements(v);
    for (const auto &n : g->nodes())
      for (const Value *v : n->results())
        elements(v);
  }
  return size;
}

} // namespace gc
