//===- Edits.h - The ways gc-reduce shrinks a module ------------*- C++ -*-===//
//
// An edit is one small change to a module's first graph (the one a runner
// calls): cut a node out (its results become new inputs or constants), drop
// or hoist an output, turn a weight into an input, halve a dimension of an
// input. applyEdits makes a new module from a set of edits at once and then
// removes what nothing reads any more: nodes, inputs, weights and their
// sources. The reducer (Reducer.h) tries sets of edits and keeps those after
// which the failure is still there.
//
//===----------------------------------------------------------------------===//
#ifndef GC_REDUCE_EDITS_H
#define GC_REDUCE_EDITS_H

#include "gc/IR/Module.h"
#include "gc/Support/Error.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace gc {

enum class EditKind : uint8_t {
  /// Node `index`'s results become new user inputs of the same types.
  CutToInput,
  /// Node `index`'s results become constants, zeros or ones (aten.full).
  CutToZeros,
  CutToOnes,
  /// Output `index` goes (the graph keeps at least one).
  DropOutput,
  /// Output `index` becomes tensor operand `dim` of the node that computes
  /// it, moving the graph's end up by one node.
  HoistOutput,
  /// Input `index`, a parameter, buffer or constant, becomes a user input,
  /// so the module no longer needs the weight.
  WeightToInput,
  /// Every dimension of size `index` of every user input halves (rounded
  /// up), so that shapes that must agree shrink together; every node's
  /// result types are inferred again.
  HalveSize,
  /// Dimension `dim` of user input `index` halves (rounded up), types
  /// inferred again.
  HalveDim,
};
std::string_view editKindName(EditKind k);

struct Edit {
  EditKind kind;
  uint32_t index = 0;
  uint32_t dim = 0;
  bool operator==(const Edit &) const = default;
};

/// Every edit of `kind` that applies to `m`'s first graph, in graph order.
std::vector<Edit> proposeEdits(const Module &m, EditKind kind);

/// A copy of `m` with `edits` (all of one module's proposals) applied to its
/// first graph, then cleaned: nodes whose results nothing reads, inputs
/// nothing reads and weights no input names are removed. An error when the
/// edits leave no valid graph: no output, or a shape function refuses the
/// narrowed types.
Expected<std::unique_ptr<Module>> applyEdits(const Module &m, std::span<const Edit> edits);

/// How big a module is, compared lexicographically: a reduction must make
/// it smaller, so that no sequence of edits can come back to where it was.
struct ModuleSize {
  size_t nodes = 0;
  size_t weights = 0;
  size_t inputs = 0;
  size_t outputs = 0;
  int64_t elements = 0; ///< the static elements of every input and result
  auto operator<=>(const ModuleSize &) const = default;
};
ModuleSize moduleSize(const Module &m);

} // namespace gc

#endif // GC_REDUCE_EDITS_H
