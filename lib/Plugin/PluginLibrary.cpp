//===- PluginLibrary.cpp - Plugin libraries of custom ops -----------------===//
#include "gc/Plugin/PluginLibrary.h"

#include <dlfcn.h>

#include <deque>
#include <filesystem>
#include <map>
#include <mutex>

namespace gc {

namespace {
struct Loaded {
  std::mutex mutex;
  /// Stable addresses: the ops point at their library.
  std::deque<PluginLibrary> libraries;
  std::map<std::string, const PluginLibrary *> byFile; // canonical path
  std::map<std::string, const PluginOp *, std::less<>> ops;
};

Loaded &loaded() {
  static Loaded *l = new Loaded; // never destroyed: plugins stay loaded
  return *l;
}

Error checkOp(const gc_plugin_op &op, int32_t i) {
  if (!op.ns || !op.name || !op.overload || !op.schema || !*op.ns || !*op.name || !*op.overload)
    return makeError() << "op " << i << " lacks its namespace, name, overload or schema";
  if (!op.shape || !op.cpu)
    return makeError() << "op " << op.ns << "::" << op.name << "." << op.overload
                       << " has no shape function or no CPU kernel";
  return Error::success();
}
} // namespace

Expected<const PluginLibrary *> loadPlugin(const std::string &path) {
  Loaded &l = loaded();
  std::lock_guard lock(l.mutex);
  std::error_code ec;
  std::filesystem::path canonical = std::filesystem::canonical(path, ec);
  if (ec)
    return makeError() << "plugin '" << path << "': " << ec.message();
  if (auto it = l.byFile.find(canonical.string()); it != l.byFile.end())
    return it->second;
  // A path without '/' would make dlopen search the library path instead.
  void *handle = dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return makeError() << "plugin '" << path << "': cannot load it: " << dlerror();
  auto fail = [&](const std::string &why) -> Error {
    dlclose(handle);
    return makeError() << "plugin '" << path << "': " << why;
  };
  auto entry = reinterpret_cast<gc_plugin_entry_fn>(dlsym(handle, GC_PLUGIN_ENTRY));
  if (!entry)
    return fail("it exports no " GC_PLUGIN_ENTRY " function; a plugin defines it "
                "(include/gcrt/gc_plugin.h)");
  const gc_plugin_library *table = entry();
  if (!table)
    return fail(GC_PLUGIN_ENTRY " returned no table");
  if (table->abi_version != GC_PLUGIN_ABI_VERSION)
    return fail("it was built for plugin ABI version " + std::to_string(table->abi_version) +
                ", and this gc reads version " + std::to_string(GC_PLUGIN_ABI_VERSION) +
                "; rebuild it against this gc's gc_plugin.h");
  if (table->num_ops < 0 || (table->num_ops > 0 && !table->ops))
    return fail("its op table is malformed");
  PluginLibrary lib;
  lib.path = path;
  lib.fileName = canonical.filename().string();
  for (int32_t i = 0; i < table->num_ops; ++i) {
    const gc_plugin_op &op = table->ops[i];
    if (Error e = checkOp(op, i))
      return fail(e.message());
    std::string name = std::string(op.ns) + "." + op.name + "." + op.overload;
    if (auto it = l.ops.find(name); it != l.ops.end())
      return fail("op " + name + " is also given by the plugin '" + it->second->library->path +
                  "'; load only one of them");
    for (const PluginOp &seen : lib.ops)
      if (seen.name == name)
        return fail("it gives op " + name + " twice");
    lib.ops.push_back({name, &op, nullptr});
  }
  PluginLibrary &kept = l.libraries.emplace_back(std::move(lib));
  for (PluginOp &op : kept.ops) {
    op.library = &kept;
    l.ops.emplace(op.name, &op);
  }
  l.byFile.emplace(canonical.string(), &kept);
  return &kept;
}

const PluginOp *findPluginOp(std::string_view name) {
  Loaded &l = loaded();
  std::lock_guard lock(l.mutex);
  auto it = l.ops.find(name);
  return it == l.ops.end() ? nullptr : it->second;
}

} // namespace gc
