//===- GraphBuilder.h - Building and rewriting graphs -----------*- C++ -*-===//
//
// Passes rewrite a graph by rebuilding it: rewriteGraph copies the inputs,
// hands each node to a callback that either emits replacement nodes through
// a GraphBuilder or keeps the node, and maps the outputs. Result types of
// new nodes come from the shape functions, so a rewrite never computes a
// type by hand.
//
//===----------------------------------------------------------------------===//
#ifndef GC_OPS_GRAPHBUILDER_H
#define GC_OPS_GRAPHBUILDER_H

#include "gc/IR/ArgReader.h"
#include "gc/IR/Module.h"

#include <functional>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace gc {

/// What rewrite code throws when it cannot go on; rewriteGraph turns it into
/// an Error naming the node.
struct RewriteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] void rewriteFail(const std::string &message);

/// An argument for a new node, converted from what rewrite code has at hand.
struct ArgValue {
  ArgValue(Value *v) : arg(v ? Arg::tensor(v) : Arg::none()) {}
  ArgValue(int v) : arg(Arg::integer(v)) {}
  ArgValue(int64_t v) : arg(Arg::integer(v)) {}
  ArgValue(double v) : arg(Arg::real(v)) {}
  ArgValue(bool v) : arg(Arg::boolean(v)) {}
  ArgValue(DType t) : arg(Arg::scalarType(t)) {}
  ArgValue(std::vector<int64_t> v) : arg(Arg::integers(std::move(v))) {}
  ArgValue(std::initializer_list<int64_t> v) : arg(Arg::integers(v)) {}
  ArgValue(const char *s) : arg(Arg::string(s)) {}
  ArgValue(std::vector<Value *> vs);
  ArgValue(Arg a) : arg(std::move(a)) {}
  static ArgValue none() { return ArgValue(Arg::none()); }
  Arg arg;
};

using ValueMap = std::unordered_map<const Value *, Value *>;

class GraphBuilder {
public:
  GraphBuilder(Module &m, Graph &g);

  Module &module() { return module_; }
  SymContext &syms() { return module_.syms(); }
  Graph &graph() { return graph_; }

  /// Appends a call of `op`. Arguments are given by schema name in any
  /// order; they are stored in schema order with the schema's keyword-only
  /// flags. Result types come from the shape functions; result names are
  /// made unique from `nameHint` (default: the op's base name).
  std::vector<Value *> create(OpId op,
                              std::vector<std::pair<std::string, ArgValue>> args,
                              std::string_view nameHint = {});
  /// create() for ops with exactly one result.
  Value *create1(OpId op, std::vector<std::pair<std::string, ArgValue>> args,
                 std::string_view nameHint = {});
  /// Appends a node with explicit result types (for copying nodes).
  Node *createWithTypes(OpId op, std::vector<NamedArg> args,
                        std::vector<std::pair<std::string, Type>> results, ResultForm form);
  /// A name not yet used in the graph, from `hint`.
  std::string uniqueName(std::string_view hint);
  void reserveName(const std::string &name) { names_.insert(name); }
  /// The source location every node created from now on gets: rewriteGraph
  /// sets the replaced node's, autodiff the forward node's.
  void setLoc(const SourceLoc *loc) { loc_ = loc; }
  const SourceLoc *loc() const { return loc_; }

private:
  Module &module_;
  Graph &graph_;
  const SourceLoc *loc_ = nullptr;
  std::unordered_set<std::string> names_;
};

/// One node of the old graph, as seen by a rewrite callback: its arguments
/// read by schema name and mapped to the new graph's values.
class RewriteContext : public ArgReader {
public:
  RewriteContext(const Node &old, GraphBuilder &b, const ValueMap &map)
      : ArgReader(old.args()), old_(old), builder_(b), map_(map) {}

  const Node &node() const { return old_; }
  GraphBuilder &builder() const { return builder_; }
  SymContext &syms() const { return builder_.syms(); }

  Value *value(std::string_view name) const;
  std::optional<Value *> optValue(std::string_view name) const;
  /// Tensor[] and Tensor?[] (null entries for None).
  std::vector<Value *> values(std::string_view name) const;
  /// The argument as given (numbers keep their kind), mapped to new values.
  ArgValue passThrough(std::string_view name) const;
  /// The type of a tensor argument / of the old node's i-th result.
  const TensorType &type(std::string_view name) const;
  const TensorType &resultType(size_t i = 0) const;
  /// The new value for an old one.
  Value *map(const Value *old) const;
  /// The old node's arguments with their values mapped into the new graph.
  std::vector<NamedArg> mappedArgs() const;

private:
  const Node &old_;
  GraphBuilder &builder_;
  const ValueMap &map_;
};

/// What a rewrite callback returns: the values that replace the old node's
/// results (one per result), or nullopt to keep the node unchanged.
using NodeRewrite = std::function<std::optional<std::vector<Value *>>(RewriteContext &)>;

/// Called once the nodes and the old outputs are in the new graph; may add
/// outputs (functionalization records mutations this way).
using GraphFinish = std::function<void(GraphBuilder &, const ValueMap &)>;

/// Rebuilds graph `g` of `m` in place through `rewrite`. Inputs, their specs
/// and the outputs with their specs are kept. Errors name the node.
Error rewriteGraph(Module &m, Graph &g, const NodeRewrite &rewrite,
                   const GraphFinish &finish = {});

} // namespace gc

#endif // GC_OPS_GRAPHBUILDER_H
