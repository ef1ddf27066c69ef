//===- Fusion.h - Grouping loop nodes into kernels --------------*- C++ -*-===//
//
// Groups the nodes of a loop graph into steps: kernels of Pointwise and
// Reduction nodes that share an outer loop prefix, and single Extern or
// Fallback nodes. A node joins the latest group it may legally share a
// kernel with, looking back past every step it does not depend on.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_SCHEDULE_FUSION_H
#define GC_LIB_SCHEDULE_FUSION_H

#include "gc/IR/LoopIR.h"
#include "gc/Support/Target.h"

#include <set>
#include <vector>

namespace gc::schedule {

/// A step of the plan before names are given: a kernel (Pointwise and
/// Reduction nodes over a shared prefix) or one Extern/Fallback node.
struct Group {
  bool kernel = true;
  std::vector<uint32_t> nodes;
  std::vector<const SymExpr *> prefix;
};

/// The buffers a node reads and writes.
struct Access {
  std::set<uint32_t> reads;
  std::set<uint32_t> writes;
};

std::vector<Access> nodeAccesses(const LoopGraph &graph);

/// Groups `nodes` (indices into graph.nodes, in execution order). With
/// `fuse` false each node is a group of its own. On the CPU a scattering
/// node is a kernel of its own with no parallel loop (one thread runs its
/// points in order, so that a float sum is deterministic); on a GPU its
/// points run in parallel (atomic combining stores) and it shares a kernel
/// with nodes that do not touch its output. `origin` gives, for each node,
/// the node it was split from (splitAtIndexBounds): slices of one node
/// write disjoint parts of one output and may share a kernel.
std::vector<Group> fuseNodes(SymContext &ctx, const LoopGraph &graph,
                             const std::vector<uint32_t> &nodes,
                             const std::vector<uint32_t> &origin, bool fuse,
                             TargetDevice device);

} // namespace gc::schedule

#endif // GC_LIB_SCHEDULE_FUSION_H
