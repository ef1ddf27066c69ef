//===- PluginSteps.h - Plan steps that call plugin ops ----------*- C++ -*-===//
//
// A plan step may call an op a plugin gives (plan::PluginCall). Such a
// package runs only where the plugins that give its ops are loaded
// (gc/Plugin/PluginLibrary.h): opening it checks that, and each executor
// resolves its steps' ops here.
//
//===----------------------------------------------------------------------===//
#ifndef GC_RUNTIME_PLUGINSTEPS_H
#define GC_RUNTIME_PLUGINSTEPS_H

#include "gc/Plugin/PluginLibrary.h"
#include "gc/Runtime/RuntimePlan.h"

#include <vector>

namespace gc {

/// Every plugin op graph `graph` of `plan` calls, resolved among the loaded
/// plugins (per step; null for other steps). One error names every op no
/// loaded plugin gives, with the plugin file the package was compiled with
/// and what to do; on a GPU (`gpu`), also every op without a CUDA kernel.
Expected<std::vector<const PluginOp *>> resolvePluginSteps(const plan::Plan &plan,
                                                           const plan::Graph &graph, bool gpu);

} // namespace gc

#endif // GC_RUNTIME_PLUGINSTEPS_H
