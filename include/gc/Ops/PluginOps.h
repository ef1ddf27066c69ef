//===- PluginOps.h - Ops a plugin gives, for the compiler -------*- C++ -*-===//
//
// `--plugin=PATH` loads a plugin (include/gcrt/gc_plugin.h) and registers
// each of its ops as a row beside OpDefs.def's (registerPluginOp): in the
// core op set, with the plugin's schema. Its shape function gives result
// types; gc-lower makes each call an opaque step that the plan runs through
// the plugin's kernel (docs/plugins.md).
//
//===----------------------------------------------------------------------===//
#ifndef GC_OPS_PLUGINOPS_H
#define GC_OPS_PLUGINOPS_H

#include "gc/IR/Module.h"
#include "gc/Plugin/PluginLibrary.h"

#include <string>
#include <vector>

namespace gc {

/// Loads the plugin at `path` and registers its ops; an op whose schema
/// takes an argument kind the plugin ABI does not pass is an error naming
/// it.
Error loadCompilerPlugin(const std::string &path);
/// Loads every plugin of `paths`, in order.
Error loadCompilerPlugins(const std::vector<std::string> &paths);

/// The plugin op `op` is (isPluginOp), or null.
const PluginOp *pluginOpOf(OpId op);

/// The non-tensor arguments of a call, in schema order, as the ABI passes
/// them.
std::vector<gc_plugin_scalar> pluginScalars(const std::vector<Arg> &args);

/// Calls `op`'s shape function: the result types from the tensor
/// arguments' types and the scalars. Errors name the op.
Expected<std::vector<gc_plugin_type>>
callShapeFunction(const PluginOp &op, const std::vector<gc_plugin_type> &inputs,
                  const std::vector<gc_plugin_scalar> &scalars);

/// The result types of a call of plugin op `op`, through its shape function.
Expected<std::vector<Type>> pluginResultTypes(const PluginOp &op,
                                              const std::vector<NamedArg> &args,
                                              SymContext &syms);

} // namespace gc

#endif // GC_OPS_PLUGINOPS_H
