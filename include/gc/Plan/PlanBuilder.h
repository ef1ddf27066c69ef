//===- PlanBuilder.h - Runtime plans from kernels-level modules -*- C++ -*-===//
//
// The compiler's side of the runtime plan (gc/Runtime/RuntimePlan.h): a
// Kernels-level module's loop graphs become a plan that needs nothing of
// the IR. gc-package stores it in packages; gc-run runs kernels-level
// graph files through it in process.
//
//===----------------------------------------------------------------------===//
#ifndef GC_PLAN_PLANBUILDER_H
#define GC_PLAN_PLANBUILDER_H

#include "gc/IR/LoopIR.h"
#include "gc/Runtime/MemoryPlanner.h"
#include "gc/Support/Error.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace gc {

struct PlanOptions {
  /// The module's weight source that stands for an external archive: its
  /// weights are marked as in the archive; the others' offsets are taken
  /// as offsets in the package file.
  std::optional<uint32_t> archiveSource;
  /// The package entry holding graph i's kernels ("" or unset: none).
  std::function<std::string(size_t graph)> kernelLibrary;
};

/// The plan's bytes for every loop graph of `m` (Kernels level). The bytes
/// depend only on the module and the options. Errors name the graph and
/// the weight or node.
Expected<std::string> buildRuntimePlan(const Module &m, const PlanOptions &options = {});

/// The memory planner's view of `graph`'s plan: which buffers each step
/// reads or writes, and where it may write in place.
ArenaProblem arenaProblem(const LoopGraph &graph);

} // namespace gc

#endif // GC_PLAN_PLANBUILDER_H
