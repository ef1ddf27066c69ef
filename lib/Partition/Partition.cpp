//===- Partition.cpp - Splitting a joint graph in two ---------------------===//
#include "gc/Partition/Partition.h"

#include "gc/IR/OpSchema.h"
#include "gc/Partition/CostModel.h"
#include "gc/Partition/MaxFlow.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace gc {

std::string_view partitionStrategyName(PartitionStrategy s) {
  return s == PartitionStrategy::MinCut ? "min-cut" : "save-all";
}

std::optional<PartitionStrategy> parsePartitionStrategy(std::string_view s) {
  for (PartitionStrategy p : {PartitionStrategy::MinCut, PartitionStrategy::SaveAll})
    if (partitionStrategyName(p) == s)
      return p;
  return std::nullopt;
}

bool isRecomputable(OpId op) { return hasTraits(op, kRecomputable); }

namespace {

bool isGradient(const OutputSpec &s) {
  return s.kind == OutputKind::GradientToParameter || s.kind == OutputKind::GradientToUserInput;
}

bool isTangent(const InputSpec &s) {
  return s.kind == InputKind::UserInput && s.target.starts_with("tangents_");
}

/// The tensors and scalars a node reads, in argument order.
std::vector<const Value *> operands(const Node &n) {
  std::vector<const Value *> out;
  for (const NamedArg &a : n.args())
    for (const Value *v : a.value.values)
      if (v)
        out.push_back(v);
  return out;
}

/// The joint graph's values numbered in graph order (inputs, then node
/// results), with what a partition needs to know of each.
class JointGraph {
public:
  explicit JointGraph(const Graph &g) : graph_(g) {
    for (size_t i = 0; i < g.inputs().size(); ++i)
      number(g.inputs()[i], isTangent(g.inputSpecs()[i]));
    for (const auto &n : g.nodes()) {
      bool dependent = false;
      for (const Value *v : operands(*n))
        dependent |= tangentDependent(index(v));
      for (const Value *r : n->results())
        number(r, dependent);
    }
    for (size_t i = 0; i < g.outputs().size(); ++i)
      (isGradient(g.outputSpecs()[i]) ? gradients_ : forwardOutputs_)
          .push_back(index(g.outputs()[i]));
    forwardNode_ = ancestorNodes(forwardOutputs_);
  }

  const Graph &graph() const { return graph_; }
  size_t numValues() const { return values_.size(); }
  const Value *value(size_t i) const { return values_[i]; }
  size_t index(const Value *v) const { return index_.at(v); }
  bool isInput(size_t i) const { return values_[i]->definingNode() == nullptr; }
  bool tangentDependent(size_t i) const { return tangentDependent_[i]; }
  /// Whether the forward graph computes value `i` anyway: a primal, or a
  /// result of a node the forward outputs need.
  bool inForward(size_t i) const {
    const Node *n = values_[i]->definingNode();
    return !n ? !tangentDependent_[i] : forwardNode_.count(n) > 0;
  }
  const std::vector<size_t> &forwardOutputs() const { return forwardOutputs_; }
  const std::vector<size_t> &gradients() const { return gradients_; }

  /// The nodes that `roots` are computed from, stopping at values `stop`
  /// says are given.
  template <typename Stop>
  std::set<const Node *> ancestorNodes(const std::vector<size_t> &roots, Stop stop) const {
    std::set<const Node *> seen;
    std::vector<size_t> stack(roots.begin(), roots.end());
    while (!stack.empty()) {
      size_t i = stack.back();
      stack.pop_back();
      const Node *n = values_[i]->definingNode();
      if (stop(i) || !n || !seen.insert(n).second)
        continue;
      for (const Value *v : operands(*n))
        stack.push_back(index(v));
    }
    return seen;
  }
  std::set<const Node *> ancestorNodes(const std::vector<size_t> &roots) const {
    return ancestorNodes(roots, [](size_t) { return false; });
  }

  /// `nodes` in graph order.
  std::vector<const Node *> inGraphOrder(const std::set<const Node *> &nodes) const {
    std::vector<const Node *> out;
    for (const auto &n : graph_.nodes())
      if (nodes.count(n.get()))
        out.push_back(n.get());
    return out;
  }

private:
  void number(const Value *v, bool tangentDependent) {
    index_.emplace(v, values_.size());
    values_.push_back(v);
    tangentDependent_.push_back(tangentDependent);
  }

  const Graph &graph_;
  std::vector<const Value *> values_;
  std::unordered_map<const Value *, size_t> index_;
  std::vector<bool> tangentDependent_;
  std::vector<size_t> forwardOutputs_, gradients_;
  std::set<const Node *> forwardNode_;
};

/// The min-cut choice: which values may be saved at the lowest total cost
/// so that the backward can compute the rest. Each value v becomes an edge
/// v_in -> v_out whose capacity is its size in bytes; values flow from
/// their operands' v_out into their users' v_in. The source feeds the
/// primals and the results of forward nodes that must not be recomputed
/// (so the cut must come after them); every value the tangent-dependent
/// part of the backward reads drains into the sink. A cut v_in -> v_out
/// edge is a saved value. Every path from the source crosses one such
/// finite edge (the source feeds only v_in nodes), so the cut is finite.
std::vector<bool> minCutSavable(const JointGraph &j, const std::vector<uint64_t> &bytes) {
  size_t n = j.numValues();
  size_t source = 2 * n, sink = 2 * n + 1;
  auto in = [](size_t i) { return 2 * i; };
  auto out = [](size_t i) { return 2 * i + 1; };
  FlowNetwork net(2 * n + 2);
  for (size_t i = 0; i < n; ++i) {
    if (j.tangentDependent(i))
      continue;
    const Node *def = j.value(i)->definingNode();
    if (!def || (j.inForward(i) && !isRecomputable(def->op())))
      net.addEdge(source, in(i), FlowNetwork::kInfinite);
    net.addEdge(in(i), out(i), bytes[i]);
  }
  for (const auto &node : j.graph().nodes())
    for (const Value *operand : operands(*node)) {
      size_t u = j.index(operand);
      if (j.tangentDependent(u))
        continue;
      for (const Value *r : node->results()) {
        size_t ri = j.index(r);
        net.addEdge(out(u), j.tangentDependent(ri) ? sink : in(ri), FlowNetwork::kInfinite);
      }
    }
  for (size_t g : j.gradients())
    if (!j.tangentDependent(g))
      net.addEdge(out(g), sink, FlowNetwork::kInfinite);
  net.maxFlow(source, sink);
  std::vector<bool> side = net.sourceSide(source);
  std::vector<bool> savable(n, false);
  for (size_t i = 0; i < n; ++i)
    savable[i] = side[in(i)] && !side[out(i)];
  return savable;
}

} // namespace

Expected<PartitionPlan> planPartition(const Module &m, const Graph &joint,
                                      PartitionStrategy strategy) {
  JointGraph j(joint);
  for (size_t f : j.forwardOutputs())
    if (j.tangentDependent(f))
      return makeError() << "graph @" << joint.name() << ": forward output '%"
                         << j.value(f)->name() << "' depends on a tangent";
  std::vector<uint64_t> bytes(j.numValues(), 0);
  for (size_t i = 0; i < j.numValues(); ++i)
    if (!j.tangentDependent(i)) {
      Expected<uint64_t> b = valueBytes(m.syms(), *j.value(i));
      if (!b)
        return b.error().withContext("graph @" + joint.name());
      bytes[i] = *b;
    }

  std::vector<bool> savable(j.numValues(), false);
  if (strategy == PartitionStrategy::MinCut)
    savable = minCutSavable(j, bytes);
  else
    for (size_t i = 0; i < j.numValues(); ++i)
      savable[i] = j.inForward(i);

  // The backward computes the gradients from the tangents and what it is
  // given; a primal it reaches is always given (the cut saves every primal
  // whose value it lets through).
  std::vector<bool> saved(j.numValues(), false);
  auto given = [&](size_t i) {
    if (j.tangentDependent(i) && j.isInput(i))
      return true;
    if (savable[i] || j.isInput(i)) {
      saved[i] = true;
      return true;
    }
    return false;
  };
  PartitionPlan plan;
  plan.backwardNodes = j.inGraphOrder(j.ancestorNodes(j.gradients(), given));
  std::vector<size_t> forwardRoots = j.forwardOutputs();
  for (size_t i = 0; i < j.numValues(); ++i)
    if (saved[i]) {
      plan.saved.push_back(j.value(i));
      plan.savedBytes += bytes[i];
      forwardRoots.push_back(i);
    }
  plan.forwardNodes = j.inGraphOrder(j.ancestorNodes(forwardRoots));
  return plan;
}

namespace {

/// Copies joint-graph nodes into one of the new graphs, mapping values.
class GraphCopier {
public:
  explicit GraphCopier(Graph &dst) : dst_(dst) {}

  void addInput(const Value &old, std::string name, Type type, InputSpec spec) {
    names_.insert(name);
    map_[&old] = dst_.addInput(std::move(name), std::move(type), std::move(spec));
  }

  void copyNode(const Node &n) {
    std::vector<NamedArg> args = n.args();
    for (NamedArg &a : args)
      for (Value *&v : a.value.values)
        if (v)
          v = map_.at(v);
    std::vector<std::pair<std::string, Type>> results;
    for (const Value *r : n.results())
      results.emplace_back(freshName(r->name()), r->type());
    Node *copy = dst_.addNode(n.op(), std::move(args), std::move(results), n.resultForm());
    copy->setLoc(n.loc());
    // A result that is already an input (saved, while the node is
    // recomputed for another result) keeps the input.
    for (size_t i = 0; i < n.results().size(); ++i)
      map_.emplace(n.results()[i], copy->results()[i]);
  }

  void addOutput(const Value &old, OutputSpec spec) { dst_.addOutput(map_.at(&old), spec); }

private:
  std::string freshName(const std::string &hint) {
    std::string name = hint;
    for (unsigned k = 1; !names_.insert(name).second; ++k)
      name = hint + "_recomputed" + (k > 1 ? std::to_string(k) : "");
    return name;
  }

  Graph &dst_;
  std::unordered_map<const Value *, Value *> map_;
  std::set<std::string> names_;
};

/// A saved value reaches the backward graph through the caller as a tensor of
/// its own, so there it is contiguous, whatever view of what storage it was
/// in the forward graph.
Type asPassedBack(SymContext &syms, Type t) {
  if (t.isTensor()) {
    t.tensor.strides = contiguousStrides(syms, t.tensor.sizes);
    t.tensor.storageOffset = syms.constant(0);
  }
  return t;
}

} // namespace

Error applyPartition(Module &m, const PartitionPlan &plan) {
  if (m.level() != Level::Joint)
    return makeError() << "gc-partition needs a module of level joint, not "
                       << levelName(m.level());
  const Graph *joint = m.graph("joint");
  if (!joint)
    return makeError() << "the module has no graph @joint";

  auto forward = std::make_unique<Graph>("forward");
  GraphCopier fw(*forward);
  Graph &backward = m.addGraph("backward");
  GraphCopier bw(backward);
  for (size_t i = 0; i < joint->inputs().size(); ++i)
    if (!isTangent(joint->inputSpecs()[i]))
      fw.addInput(*joint->inputs()[i], joint->inputs()[i]->name(), joint->inputs()[i]->type(),
                  joint->inputSpecs()[i]);
  for (const Node *n : plan.forwardNodes)
    fw.copyNode(*n);
  for (size_t i = 0; i < joint->outputs().size(); ++i)
    if (!isGradient(joint->outputSpecs()[i]))
      fw.addOutput(*joint->outputs()[i], joint->outputSpecs()[i]);
  for (const Value *v : plan.saved) {
    fw.addOutput(*v, OutputSpec{OutputKind::SavedForBackward, v->name(), ""});
    bw.addInput(*v, v->name(), asPassedBack(m.syms(), v->type()),
                InputSpec{InputKind::UserInput, "saved:" + v->name(), true});
  }
  for (size_t i = 0; i < joint->inputs().size(); ++i)
    if (isTangent(joint->inputSpecs()[i]))
      bw.addInput(*joint->inputs()[i], joint->inputs()[i]->name(), joint->inputs()[i]->type(),
                  joint->inputSpecs()[i]);
  for (const Node *n : plan.backwardNodes)
    bw.copyNode(*n);
  for (size_t i = 0; i < joint->outputs().size(); ++i)
    if (isGradient(joint->outputSpecs()[i]))
      bw.addOutput(*joint->outputs()[i], joint->outputSpecs()[i]);

  m.replaceGraph(*joint, std::move(forward));
  m.setLevel(Level::Partitioned);
  return Error::success();
}

} // namespace gc
