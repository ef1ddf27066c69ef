//===- PluginKernel.h - Plugin ops in the reference interpreter -*- C++ -*-===//
//
// An op a plugin gives (gc/Ops/PluginOps.h) has no reference kernel of gc's
// own: the interpreters run it through the plugin's CPU kernel, with
// results shaped by its shape function on the inputs' sizes.
//
//===----------------------------------------------------------------------===//
#ifndef GC_INTERP_PLUGINKERNEL_H
#define GC_INTERP_PLUGINKERNEL_H

#include "gc/Interp/Kernel.h"

namespace gc {

/// The reference kernel of `op`: its entry of referenceKernels(), or for a
/// plugin op the entry that runs the plugin's CPU kernel; null if none.
const KernelEntry *findReferenceKernel(OpId op);

} // namespace gc

#endif // GC_INTERP_PLUGINKERNEL_H
