//===- OpSchema.h - The one definition of each op ---------------*- C++ -*-===//
//
// Every op gc knows is defined once, in OpDefs.def: its qualified name with
// overload, whether it belongs to the core op set, its traits, and its schema
// in ATen's own notation. Shape functions, reference kernels, decompositions and
// derivatives are registered elsewhere, per concern, against these names;
// docs/ops.md is generated from all of them.
//
//===----------------------------------------------------------------------===//
#ifndef GC_IR_OPSCHEMA_H
#define GC_IR_OPSCHEMA_H

#include "gc/IR/OpId.h"
#include "gc/Support/Error.h"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gc {

/// One argument of a schema, e.g. `Scalar alpha=1` or `Tensor(a!) self`.
struct ArgDef {
  std::string name;
  /// The type as written, without alias annotation: "Tensor", "Tensor?",
  /// "int[]", "SymInt[1]", "Scalar", "ScalarType?", ...
  std::string type;
  /// The default as written ("1", "None", "[]", "False"), if any.
  std::optional<std::string> defaultValue;
  bool keywordOnly = false;
  /// Written in place: the `(a!)` alias annotation.
  bool mutated = false;
};

struct OpSchema {
  OpId id{};
  std::string name;  ///< "aten.add.Tensor"
  bool core = false; ///< part of the core op set (see docs/ops.md)
  /// A result is a view of an argument: annotated `Tensor(a)`, not `(a!)`.
  bool returnsView = false;
  std::string summary;
  std::vector<ArgDef> args;
  std::vector<std::string> returns; ///< return types, e.g. {"Tensor", "Tensor"}
  std::string schema; ///< the schema as written, "(Tensor self, ...) -> Tensor"

  const ArgDef *arg(std::string_view name) const;
  /// Every result is a SymInt, SymBool or SymFloat: the op computes sizes
  /// from sizes (sym_size, operator.mul, ...). Lowering reads such a value
  /// as an expression over the model's symbols where it is used; nothing
  /// runs it, and nothing differentiates it.
  bool computesSizes() const;
  /// Some argument is a `Graph`: the op calls graphs of the module (cond,
  /// while_loop). Such ops have no reference kernel or lowering of their
  /// own; each stage runs the graphs they name.
  bool callsGraphs() const;
};

/// Parses ATen's schema notation, "(Tensor self, *, Scalar alpha=1) -> Tensor",
/// for the op `name`.
Expected<OpSchema> parseOpSchema(std::string_view name, std::string_view schema);

/// Every op in OpDefs.def, sorted by name.
std::span<const OpSchema> allOpSchemas();
/// The op named `name` (a row or a derived variant), or null.
const OpSchema *findOpSchema(std::string_view name);
const OpSchema &opSchema(OpId op);
/// True if `op` is in the core op set.
bool isCoreOp(OpId op);
/// True if `op` returns a view of an argument.
bool returnsView(OpId op);
/// OpSchema::computesSizes of `op`.
bool computesSizes(OpId op);
/// OpSchema::callsGraphs of `op`.
bool callsGraphs(OpId op);

} // namespace gc

#endif // GC_IR_OPSCHEMA_H
