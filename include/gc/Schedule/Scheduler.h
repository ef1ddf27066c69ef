//===- Scheduler.h - Fusion of loop nodes into kernels ----------*- C++ -*-===//
//
// The scheduler decides which loop nodes run in one kernel and in what loop
// order, as Inductor's Scheduler does. It fuses
//  - vertically: a pointwise or reduction node with the nodes that read its
//    buffer at the same outer point (pointwise chains, a reduction with its
//    prologue and epilogue: softmax, layer norm);
//  - horizontally: sibling nodes over the same outer space;
//  - into an extern's post-ops: bias, relu, gelu, add after a matmul or a
//    convolution.
// It may rewrite a node's loops first: permute them so that the innermost
// loop walks memory contiguously, and collapse adjacent loops that index
// every buffer as one.
//
//===----------------------------------------------------------------------===//
#ifndef GC_SCHEDULE_SCHEDULER_H
#define GC_SCHEDULE_SCHEDULER_H

#include "gc/IR/LoopIR.h"
#include "gc/Support/Error.h"
#include "gc/Support/Target.h"

namespace gc {

struct ScheduleOptions {
  bool fuse = true;         ///< false: one kernel per node
  bool externPostOps = true;
  /// Groups that compile to the same code (KernelCode.h) share one name,
  /// so that their kernel is compiled once.
  bool shareKernels = true;
  /// Which libraries run the externs, and so which post-ops they can fuse
  /// (oneDNN on the CPU; cuBLASLt and cuDNN on a GPU).
  TargetDevice device = TargetDevice::CPU;
};

/// Rewrites the nodes of `graph` (loop order, collapsed loops; nodes folded
/// into extern post-ops are removed) and fills graph.plan.kernels and graph.plan.steps
/// (with in-place candidates; not frees or placements). A group that
/// compiles to the same code as an earlier one takes that one's name.
/// Deterministic.
Error scheduleGraph(SymContext &ctx, LoopGraph &graph, const ScheduleOptions &options);

} // namespace gc

#endif // GC_SCHEDULE_SCHEDULER_H
