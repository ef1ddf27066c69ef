//===- Module.cpp - Module, graph, node and value -------------------------===//
#include "gc/IR/Module.h"

#include "gc/IR/LoopIR.h"
#include "gc/Support/EnumNames.h"

#include <array>
#include <cassert>
#include <unordered_map>

namespace gc {

const NamedArg *Node::arg(std::string_view name) const {
  for (const NamedArg &a : args_)
    if (a.name == name)
      return &a;
  return nullptr;
}

namespace {
constexpr std::array<std::string_view, 7> kInputKindNames = {
    "user_input", "parameter", "buffer", "constant", "token", "rng_seed", "rng_offset"};
constexpr std::array<std::string_view, 9> kOutputKindNames = {
    "user_output",        "loss_output",          "buffer_mutation",
    "user_input_mutation", "parameter_mutation",  "gradient_to_parameter",
    "gradient_to_user_input", "token", "saved_for_backward"};
} // namespace

std::string_view inputKindName(InputKind k) {
  return kInputKindNames[static_cast<size_t>(k)];
}
std::optional<InputKind> parseInputKind(std::string_view s) {
  return findName<InputKind>(kInputKindNames, s);
}
std::string_view outputKindName(OutputKind k) {
  return kOutputKindNames[static_cast<size_t>(k)];
}
std::optional<OutputKind> parseOutputKind(std::string_view s) {
  return findName<OutputKind>(kOutputKindNames, s);
}

Value *Graph::newValue(std::string name, Type type) {
  Value &v = values_.emplace_back();
  v.name_ = std::move(name);
  v.type_ = std::move(type);
  return &v;
}

Value *Graph::addInput(std::string name, Type type, InputSpec spec) {
  Value *v = newValue(std::move(name), std::move(type));
  inputs_.push_back(v);
  inputSpecs_.push_back(std::move(spec));
  return v;
}

Node *Graph::addNode(OpId op, std::vector<NamedArg> args,
                     std::vector<std::pair<std::string, Type>> results,
                     ResultForm form) {
  auto node = std::make_unique<Node>();
  node->op_ = op;
  node->args_ = std::move(args);
  node->form_ = form;
  for (auto &[name, type] : results) {
    Value *v = newValue(std::move(name), std::move(type));
    v->def_ = node.get();
    v->index_ = static_cast<unsigned>(node->results_.size());
    node->results_.push_back(v);
  }
  nodes_.push_back(std::move(node));
  return nodes_.back().get();
}

void Graph::addOutput(Value *v, OutputSpec spec) {
  outputs_.push_back(v);
  outputSpecs_.push_back(std::move(spec));
}

Module::Module() = default;
Module::~Module() = default;

namespace {

/// Copies one module into another. Expressions and values are pointers into
/// the source, so each is translated to its counterpart in the copy.
class ModuleCloner {
public:
  ModuleCloner(const Module &from, Module &to) : from_(from), to_(to) {}

  void run() {
    to_.setLevel(from_.level());
    to_.setProducer(from_.producer());
    if (from_.target())
      to_.setTarget(*from_.target());
    to_.setSourceBaseDir(from_.sourceBaseDir());
    for (const auto &[name, range] : from_.syms().ranges())
      to_.syms().setRange(name, range);
    to_.weightSources() = from_.weightSources();
    for (const Weight &w : from_.weights()) {
      Weight &copy = to_.weights().emplace_back(w);
      remap(copy.type);
    }
    to_.pendingBlob() = from_.pendingBlob();
    for (const auto &g : from_.graphs())
      cloneGraph(*g);
    for (const auto &g : from_.loopGraphs())
      cloneLoopGraph(*g);
  }

private:
  void remap(const SymExpr *&e) {
    if (!e)
      return;
    auto [it, fresh] = exprs_.try_emplace(e, nullptr);
    if (fresh)
      it->second = to_.syms().copyOf(e);
    e = it->second;
  }
  void remap(std::vector<const SymExpr *> &exprs) {
    for (const SymExpr *&e : exprs)
      remap(e);
  }
  void remap(TensorType &t) {
    remap(t.sizes);
    remap(t.strides);
    remap(t.storageOffset);
  }
  const SourceLoc *remap(const SourceLoc *l) { return l ? to_.locations().intern(*l) : nullptr; }
  Type copy(const Type &t) {
    Type out = t;
    remap(out.tensor);
    return out;
  }

  void cloneGraph(const Graph &g) {
    Graph &out = to_.addGraph(g.name());
    std::unordered_map<const Value *, Value *> values;
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      const Value *v = g.inputs()[i];
      values[v] = out.addInput(v->name(), copy(v->type()), g.inputSpecs()[i]);
    }
    for (const auto &n : g.nodes()) {
      std::vector<std::pair<std::string, Type>> results;
      for (const Value *v : n->results())
        results.emplace_back(v->name(), copy(v->type()));
      // Arguments are translated once every node is in: SSA order makes
      // that unnecessary for a verified graph, but a copy should not depend
      // on it.
      Node *node = out.addNode(n->op(), n->args(), std::move(results), n->resultForm());
      node->setLoc(remap(n->loc()));
      for (size_t i = 0; i < n->results().size(); ++i)
        values[n->results()[i]] = node->results()[i];
    }
    auto translate = [&values](const Value *v) -> Value * {
      if (!v)
        return nullptr; // an absent optional tensor or a constant SymInt
      auto it = values.find(v);
      assert(it != values.end() && "a value of another graph");
      return it->second;
    };
    for (const auto &n : out.nodes())
      for (NamedArg &a : n->args())
        for (Value *&v : a.value.values)
          v = translate(v);
    for (size_t i = 0; i < g.outputs().size(); ++i)
      out.addOutput(translate(g.outputs()[i]), g.outputSpecs()[i]);
  }

  void cloneLoopGraph(const LoopGraph &g) {
    LoopGraph &out = to_.addLoopGraph(g.name);
    out = g;
    for (Buffer &b : out.buffers) {
      remap(b.sizes);
      remap(b.strides);
    }
    for (LoopBinding &b : out.inputs)
      remap(b.type);
    for (LoopNode &n : out.nodes) {
      n.loc = remap(n.loc);
      remap(n.ranges);
      remap(n.reductionRanges);
      for (BodyOp &op : n.body.ops)
        remap(op.index);
      remap(n.storeIndex);
      for (BufferView &v : n.inputs)
        remap(v.type);
      for (BufferView &v : n.outputs)
        remap(v.type);
    }
    for (LoopBinding &b : out.outputs)
      remap(b.type);
    for (KernelGroup &k : out.plan.kernels)
      remap(k.parallelRanges);
  }

  const Module &from_;
  Module &to_;
  /// Lookups only, never iterated, so the copy does not depend on addresses.
  std::unordered_map<const SymExpr *, const SymExpr *> exprs_;
};

} // namespace

std::string_view weightsModeName(WeightsMode mode) {
  return mode == WeightsMode::External ? "external" : "embed";
}

std::optional<WeightsMode> parseWeightsMode(std::string_view name) {
  if (name == "embed")
    return WeightsMode::Embed;
  if (name == "external")
    return WeightsMode::External;
  return std::nullopt;
}

std::unique_ptr<Module> Module::clone() const {
  auto copy = std::make_unique<Module>();
  ModuleCloner(*this, *copy).run();
  return copy;
}

LoopGraph &Module::addLoopGraph(std::string name) {
  loopGraphs_.push_back(std::make_unique<LoopGraph>());
  loopGraphs_.back()->name = std::move(name);
  return *loopGraphs_.back();
}

LoopGraph *Module::loopGraph(std::string_view name) const {
  for (const auto &g : loopGraphs_)
    if (g->name == name)
      return g.get();
  return nullptr;
}

Graph &Module::addGraph(std::string name) {
  graphs_.push_back(std::make_unique<Graph>(std::move(name)));
  return *graphs_.back();
}

void Module::replaceGraph(const Graph &old, std::unique_ptr<Graph> g) {
  for (auto &slot : graphs_)
    if (slot.get() == &old) {
      slot = std::move(g);
      return;
    }
}

Graph *Module::graph(std::string_view name) const {
  for (const auto &g : graphs_)
    if (g->name() == name)
      return g.get();
  return nullptr;
}

const Weight *Module::weight(std::string_view name) const {
  for (const Weight &w : weights_)
    if (w.name == name)
      return &w;
  return nullptr;
}

} // namespace gc
