//===- PluginStep.h - A plan step that calls a plugin's kernel --*- C++ -*-===//
//
// A step whose op a plugin gives (plan::PluginCall) runs the plugin's CPU
// kernel on host buffers, or its CUDA kernel on device buffers and the
// step's stream, with the step's views as gc_plugin_tensor
// (include/gcrt/gc_plugin.h). Both executors hold it as their extern call.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_PLUGINSTEP_H
#define GC_LIB_RUNTIME_PLUGINSTEP_H

#include "ExternCall.h"

#include "gc/Runtime/PluginSteps.h"
#include "gc/Runtime/StridedLayout.h"

#include <memory>
#include <vector>

namespace gc {

/// The call of plugin op `op` for step `step` on these evaluated layouts.
std::unique_ptr<ExternCall> makePluginCall(const PluginOp &op, const plan::OpStep &step,
                                           const std::vector<StridedLayout> &inputs,
                                           const std::vector<StridedLayout> &outputs);

} // namespace gc

#endif // GC_LIB_RUNTIME_PLUGINSTEP_H
