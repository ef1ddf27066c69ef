//===- PassUtils.h - Helpers shared by gc-opt's passes ----------*- C++ -*-===//
//
// What several passes ask of an op (does it write in place, is it random),
// rebuilding a graph with other inputs (freeze), and making new constants
// (constant-fold, fold-conv-bn, fold-linear-bias). A constant is a graph
// input of kind constant whose data is a module weight; new ones get their
// bytes in the module's pending blob (Module::pendingBlob), which gc-opt
// writes beside its output.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_TRANSFORMS_PASSUTILS_H
#define GC_LIB_TRANSFORMS_PASSUTILS_H

#include "gc/IR/Module.h"
#include "gc/IR/Permutation.h"

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace gc {

/// `n`'s argument `name`, or null when it is absent or None.
const Arg *argOf(const Node &n, std::string_view name);
/// `n`'s argument `name` as a plain integer, or nullopt when it is absent,
/// not one integer, or symbolic.
std::optional<int64_t> intArg(const Node &n, std::string_view name);
/// `n`'s tensor argument `name`, or null.
Value *tensorArg(const Node &n, std::string_view name);

/// True if the dimensions of `t` of size other than 1 have row-major
/// strides (the strides of size-1 dimensions do not matter).
bool isContiguous(SymContext &syms, const TensorType &t);



/// True if the op writes one of its arguments in place (an `(a!)` argument
/// of its schema, as every ATen in-place op such as aten.add_.Tensor has).
bool writesInPlace(OpId op);

/// An error if a graph of `m` still has an op that writes in place: `pass`
/// assumes values never change once computed.
Error requireFunctional(const Module &m, std::string_view pass);

/// How many times each value of `g` is used, by nodes and outputs.
std::unordered_map<const Value *, int> countUses(const Graph &g);

/// True if `v` is an input of `g` of kind constant.
bool isConstantInput(const Graph &g, const Value *v);

/// A graph input that rebuildGraph adds.
struct AddedInput {
  std::string name;
  Type type;
  InputSpec spec;
  /// The old value (a result of a removed node) it stands for, or null.
  const Value *replaces = nullptr;
};

/// How rebuildGraph changes a graph.
struct GraphEdit {
  /// Per old input: its spec in the new graph, or nullopt to drop it (no
  /// kept node or output may use it). Empty: every input stays as it is.
  std::vector<std::optional<InputSpec>> specs;
  /// Added before the first user input, so the signature keeps torch's
  /// order: parameters, buffers, constants, then user inputs.
  std::vector<AddedInput> added;
  /// Nodes left out; kept nodes and outputs may use their results only
  /// where an added input replaces them.
  std::unordered_set<const Node *> removed;
  /// Outputs left out, by index.
  std::unordered_set<size_t> droppedOutputs;
};

/// Rebuilds graph `g` of `m` in place as `edit` says.
Error rebuildGraph(Module &m, Graph &g, const GraphEdit &edit);

/// Evaluates with the reference kernels every node of `g` that `shouldFold`
/// accepts, that has a kernel and neither writes in place nor draws random
/// numbers, and whose tensor arguments are all constants (inputs of kind
/// constant, or results of nodes folded before it). Each folded result that
/// a kept node or an output still uses becomes a new weight in the pending
/// blob and a new constant input. Constant inputs that nothing uses any more
/// are dropped, and so are the weights no graph refers to. Counts what it
/// did in `stats`.
Error foldConstants(Module &m, Graph &g, const std::function<bool(const Node &)> &shouldFold,
                    std::map<std::string, int64_t> &stats);

/// Drops the outputs of the constant program (graph @constant_program)
/// whose weights no graph reads any more, with those weights; dce then
/// removes what computed them.
Error pruneConstantProgram(Module &m, std::map<std::string, int64_t> &stats);

/// The number of bytes a tensor of `t`'s dtype and sizes takes, or nullopt
/// for symbolic sizes.
std::optional<int64_t> staticBytes(const TensorType &t);

} // namespace gc

#endif // GC_LIB_TRANSFORMS_PASSUTILS_H
