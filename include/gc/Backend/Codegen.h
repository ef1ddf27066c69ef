//===- Codegen.h - The backend's stages as passes ---------------*- C++ -*-===//
//
// gc-lower and gc-codegen run their stages as passes, so that the pass
// manager's --print-after, --time-passes and --stats work on them as on
// gc-opt's:
//   lower         core graphs -> loop graphs (level loops)
//   schedule      fusion into kernel groups, loop order, plan steps
//   plan-memory   lifetimes and arena offsets of intermediate buffers
//   emit-kernels  LLVM object code for the kernels (level kernels)
//
//===----------------------------------------------------------------------===//
#ifndef GC_BACKEND_CODEGEN_H
#define GC_BACKEND_CODEGEN_H

#include "gc/Codegen/KernelEmitter.h"
#include "gc/Lower/Lowering.h"
#include "gc/Pass/Pass.h"
#include "gc/Schedule/Scheduler.h"

#include <memory>
#include <vector>

namespace gc {

struct CodegenOptions {
  ScheduleOptions schedule;
  EmitOptions emit;
  /// Reuse object code from the cache (ObjectCache.h) and store new code.
  bool useCache = true;
};

/// The passes gc-lower runs. Fallbacks the lowering made are added to
/// `report` (which must outlive the passes).
std::vector<std::unique_ptr<Pass>> lowerPipeline(const LowerOptions &options, LowerReport &report);
/// The passes gc-codegen runs, in order.
std::vector<std::unique_ptr<Pass>> codegenPipeline(const CodegenOptions &options);
/// Names and summaries of the backend's passes, for --list-passes and docs.
std::span<const PassInfo> backendPasses();

/// Lays out the intermediates of `graph` (whose plan has steps) in one arena
/// when their sizes are static; fills placements, frees, arenaBytes and
/// intermediateBytes. Symbolic sizes are left to the runtime (offset -1).
void planGraphMemory(LoopGraph &graph);

} // namespace gc

#endif // GC_BACKEND_CODEGEN_H
