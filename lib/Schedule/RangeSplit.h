//===- RangeSplit.h - Splitting a loop where its body branches --*- C++ -*-===//
//
// A concatenation lowers to one Pointwise node whose body picks, for each
// point, which input to load: a chain of `where(i1 >= 64, load b, where(...,
// load a))` on one loop variable, with each load masked to its range. Every
// point then evaluates the whole chain, and the masked loads keep the loop
// from vectorizing; in densenet every dense layer's batch norm and ReLU runs
// over such a concatenation of all the layers before it. Split at the
// constants the variable is compared with, each slice of the loop knows
// which branch it takes: its body is one load and the epilogue, and the
// slice writes its part of the output in place.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_SCHEDULE_RANGESPLIT_H
#define GC_LIB_SCHEDULE_RANGESPLIT_H

#include "gc/IR/LoopIR.h"

#include <vector>

namespace gc::schedule {

/// Replaces each Pointwise node whose body compares a loop variable of
/// constant extent with integer constants by one node per range between
/// those constants, its compares, selects and masks decided. Returns, for
/// each node of the new graph.nodes, the index of the node it came from:
/// slices of one node write disjoint parts of one output.
std::vector<uint32_t> splitAtIndexBounds(SymContext &ctx, LoopGraph &graph);

} // namespace gc::schedule

#endif // GC_LIB_SCHEDULE_RANGESPLIT_H
