//===- Random.h - How many random numbers a graph draws ---------*- C++ -*-===//
//
// A graph's random numbers come from gc.rand nodes keyed by the graph's
// rng_seed and rng_offset inputs; the decomposition gives each node the
// stretch of the counter after the nodes before it. A runner advances its
// offset after a run by the graph's total, so that the next run draws fresh
// numbers (docs/random.md). Every level counts the same nodes: the gc.rand
// nodes of a core graph, the gc.rand fallback nodes of a loop graph.
//
//===----------------------------------------------------------------------===//

#ifndef GC_IR_RANDOM_H
#define GC_IR_RANDOM_H

#include "gc/IR/LoopIR.h"
#include "gc/IR/Module.h"
#include "gc/Support/Error.h"

#include <cstdint>

namespace gc {

/// The random numbers one run of `g` draws: the elements of its gc.rand
/// results. Fails, naming the node, on a symbolic size.
Expected<int64_t> randomDraws(const Graph &g);
Expected<int64_t> randomDraws(const LoopGraph &g);

} // namespace gc

#endif // GC_IR_RANDOM_H
