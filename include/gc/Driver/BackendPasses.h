//===- BackendPasses.h - The backend's stages as passes ---------*- C++ -*-===//
//
// The backend's stages are passes, so that the pass manager's --print-after,
// --time-passes and --stats work on them as on gc-opt's:
//   lower         core graphs -> loop graphs (level loops)
//   schedule      fusion into kernel groups, loop order, plan steps
//   plan-memory   lifetimes and arena offsets of intermediate buffers
//   emit-kernels  LLVM object code for the kernels (level kernels)
//
//===----------------------------------------------------------------------===//
#ifndef GC_DRIVER_BACKENDPASSES_H
#define GC_DRIVER_BACKENDPASSES_H

#include "gc/Codegen/KernelEmitter.h"
#include "gc/Lower/Lowering.h"
#include "gc/Pass/Pass.h"
#include "gc/Schedule/Scheduler.h"

#include <memory>
#include <optional>
#include <vector>

namespace gc {

struct CodegenOptions {
  /// The schedule pass sets schedule.device from the module's target.
  ScheduleOptions schedule;
  /// The schedule pass records the module's target (codegenTarget) in every
  /// plan, and emit-kernels compiles for that; emit.target is not read.
  EmitOptions emit;
  /// Reuse object code from the cache (ObjectCache.h) and store new code.
  bool useCache = true;
};

/// The target `m`'s plans record (Support/Target.h): its CPU levels, or
/// "cuda:<archs>" on a GPU; the defaults where `m` has no target. Errors
/// name a malformed level or architecture.
Expected<std::string> codegenTarget(const Module &m);

/// The backend's passes with the given options (Driver/Pipeline.cpp puts
/// them in order). The lowering's fallbacks are the lower pass's warnings.
std::unique_ptr<Pass> createLowerPass(const LowerOptions &options);
std::unique_ptr<Pass> createSchedulePass(const CodegenOptions &options);
std::unique_ptr<Pass> createPlanMemoryPass();
std::unique_ptr<Pass> createEmitKernelsPass(const EmitOptions &options, bool useCache);
/// Adds the backend's passes (default options) to the pass registry.
void registerBackendPasses();

/// Lays out the intermediates of `graph` (whose plan has steps) in one arena
/// when their sizes are static; fills placements, frees, arenaBytes and
/// intermediateBytes. Symbolic sizes are left to the runtime (offset -1).
void planGraphMemory(LoopGraph &graph);

} // namespace gc

#endif // GC_DRIVER_BACKENDPASSES_H
