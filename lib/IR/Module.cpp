//===- Module.cpp - Module, graph, node and value -------------------------===//
#include "gc/IR/Module.h"
#include "gc/IR/LoopIR.h"

#include <array>

namespace gc {

const NamedArg *Node::arg(std::string_view name) const {
  for (const NamedArg &a : args_)
    if (a.name == name)
      return &a;
  return nullptr;
}

namespace {
constexpr std::array<std::string_view, 5> kInputKindNames = {
    "user_input", "parameter", "buffer", "constant", "token"};
constexpr std::array<std::string_view, 9> kOutputKindNames = {
    "user_output",        "loss_output",          "buffer_mutation",
    "user_input_mutation", "parameter_mutation",  "gradient_to_parameter",
    "gradient_to_user_input", "token", "saved_for_backward"};

template <typename E, size_t N>
std::optional<E> findName(const std::array<std::string_view, N> &names,
                          std::string_view s) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == s)
      return static_cast<E>(i);
  return std::nullopt;
}
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
