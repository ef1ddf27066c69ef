//===- PluginRows.h - Op rows that plugins register -------------*- C++ -*-===//
//
// An op a plugin gives (gc/Ops/PluginOps.h) has a row beside OpDefs.def's,
// made at run time: its schema, in the core op set, with an OpId past the
// derived variants' (OpVariants.h). opSchema, opDef and lookupOp see these
// rows as they see the others.
//
//===----------------------------------------------------------------------===//
#ifndef GC_IR_PLUGINROWS_H
#define GC_IR_PLUGINROWS_H

#include "gc/IR/OpId.h"
#include "gc/Support/Error.h"

#include <string>
#include <string_view>

namespace gc {

/// Registers the op `name` with `schema`. Registering a name again with the
/// same schema gives the same id; with another schema, or the name of a row
/// of OpDefs.def or a variant, it is an error.
Expected<OpId> registerPluginOp(std::string_view name, std::string_view schema,
                                std::string_view summary);
/// True if registerPluginOp made `op`.
bool isPluginOp(OpId op);
/// Whether `name` ("aten.add.Tensor") is in one of torch's own namespaces
/// (aten, prims, Python's operator); an op of another is a user's, which
/// only a plugin can give.
bool isTorchOpName(std::string_view name);
/// What readers say of an op name `lookupOp` does not know: that gc does
/// not know it, and for a user's op, that a plugin may give it.
std::string unknownOpMessage(std::string_view name);

} // namespace gc

#endif // GC_IR_PLUGINROWS_H
