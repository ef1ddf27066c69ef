//===- PostOps.h - Folding pointwise epilogues into externs -----*- C++ -*-===//
//
// A matmul or convolution followed by a pointwise node that only adds a
// bias, adds a same-shaped tensor or applies relu or SiLU (x * sigmoid(x))
// can do that itself while
// storing its result (oneDNN post-ops), saving a pass over the output. On
// a GPU a decode step's products take more of their neighbours: a gated
// MLP's SiLU product, the residual adds, the RMSNorms (ProductFolds.h).
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_SCHEDULE_POSTOPS_H
#define GC_LIB_SCHEDULE_POSTOPS_H

#include "gc/IR/LoopIR.h"
#include "gc/Support/Target.h"

#include <set>

namespace gc::schedule {

/// Folds each foldable pointwise epilogue into its Extern when the library
/// that runs the extern on `device` can apply the whole resulting post-op
/// sequence: the Extern gains the post-ops and inputs, and its outputs[0]
/// view moves to the epilogue's buffer. Returns the folded nodes, still in
/// graph.nodes so that indices stay valid while folding; the caller removes
/// them.
std::set<uint32_t> foldPostOps(SymContext &ctx, LoopGraph &graph, TargetDevice device);

} // namespace gc::schedule

#endif // GC_LIB_SCHEDULE_POSTOPS_H
