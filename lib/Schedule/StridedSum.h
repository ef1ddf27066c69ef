//===- StridedSum.h - Sums whose kept loop is the contiguous one -*- C++ -*-===//
//
// A sum over the spatial dimensions of a channels-last tensor (the mean of a
// squeeze-excitation block, a global average pool) keeps the channels,
// which are innermost in memory, and reduces over the strided positions: a
// Reduction node walks every channel's column with a stride of the channel
// count, which the loop vectorizer can only gather. Accumulating row by row
// instead (for each position, add its row of channels into the sums) reads
// memory in order, with the channels as vector lanes.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_SCHEDULE_STRIDEDSUM_H
#define GC_LIB_SCHEDULE_STRIDEDSUM_H

#include "gc/IR/LoopIR.h"

namespace gc::schedule {

/// Replaces each float32 Sum reduction of `graph` whose innermost kept loop
/// walks its store and every load contiguously while each reduction loop
/// strides over them by two Pointwise nodes: one storing zeros, then one
/// over the reduction loops (outermost) and the kept loops that adds each
/// value into its sum (StoreCombine::Add). For the CPU: the accumulating
/// node runs serially.
void accumulateStridedSums(SymContext &ctx, LoopGraph &graph);

} // namespace gc::schedule

#endif // GC_LIB_SCHEDULE_STRIDEDSUM_H
