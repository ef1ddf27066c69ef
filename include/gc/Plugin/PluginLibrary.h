//===- PluginLibrary.h - Plugin libraries of custom ops ---------*- C++ -*-===//
//
// A plugin (include/gcrt/gc_plugin.h) is a shared library that gives ops
// gc does not know. The compiler reads their schemas and shape functions,
// libgcrt their kernels; both load plugins here, into one process-wide set
// that is never unloaded (the ops they registered stay valid). An op is
// named as graphs spell it: "ns.name.overload". This library links no
// compiler library, so libgcrt may use it.
//
//===----------------------------------------------------------------------===//
#ifndef GC_PLUGIN_PLUGINLIBRARY_H
#define GC_PLUGIN_PLUGINLIBRARY_H

#include "gc/Support/Error.h"
#include "gcrt/gc_plugin.h"

#include <string>
#include <string_view>
#include <vector>

namespace gc {

struct PluginLibrary;

/// One op of a loaded plugin.
struct PluginOp {
  std::string name; ///< "mylib.scaled_swish.default"
  const gc_plugin_op *op = nullptr;
  const PluginLibrary *library = nullptr;
};

struct PluginLibrary {
  std::string path;     ///< as given
  std::string fileName; ///< the path's last component, which packages record
  std::vector<PluginOp> ops;
};

/// Loads the plugin at `path` (once per file: a second call returns the
/// library loaded first) and checks its ABI version and op table. Errors
/// name the file; an op another loaded plugin gives is an error.
Expected<const PluginLibrary *> loadPlugin(const std::string &path);

/// The op `name` of a loaded plugin, or null.
const PluginOp *findPluginOp(std::string_view name);

/// Calls a plugin function with an error buffer, turning a non-zero return
/// into an Error naming the op.
template <typename Fn> Error callPlugin(const PluginOp &op, const char *what, Fn &&fn) {
  char message[512] = {0};
  if (fn(message, sizeof message) == 0)
    return Error::success();
  message[sizeof message - 1] = 0;
  return makeError() << "plugin op " << op.name << " (" << op.library->fileName << "): " << what
                     << " failed: " << (message[0] ? message : "no message");
}

/// What a user is told to do when an op only a plugin gives is missing,
/// after "if a plugin defines it, ".
inline constexpr const char *kPluginHint = "pass that plugin with --plugin=PATH (docs/plugins.md)";

} // namespace gc

#endif // GC_PLUGIN_PLUGINLIBRARY_H
