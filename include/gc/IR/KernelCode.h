//===- KernelCode.h - What a kernel group's code depends on -----*- C++ -*-===//
//
// A kernel's entry point receives the base pointers of the buffers it
// touches, in the order kernelBuffers() gives, not the whole graph's
// buffer table: so the code of a kernel names no buffer index, and groups
// that differ only in which buffers they read and write (the same layer
// repeated, as in every transformer) compile to one function. Those groups
// carry one name (the scheduler's shareKernels), the code generators
// compile each name once, and every step passes its own buffers.
//
//===----------------------------------------------------------------------===//
#ifndef GC_IR_KERNELCODE_H
#define GC_IR_KERNELCODE_H

#include "gc/IR/LoopIR.h"

#include <cstdint>
#include <vector>

namespace gc {

/// The buffers kernel group `k` loads or stores, in the order its entry
/// point receives them: node by node, each node's loads in body order,
/// then its output, each buffer at its first use. Groups that
/// sameKernelCode() equates list corresponding buffers at the same places.
/// A node index out of the graph's range adds nothing (the verifier and
/// the code generators reject it).
std::vector<uint32_t> kernelBuffers(const LoopGraph &graph, const KernelGroup &k);

/// The kernel groups to compile: the first of each name, in plan order
/// (groups of one name are the same code).
std::vector<uint32_t> distinctKernels(const LoopGraph &graph);

/// Whether kernel groups `a` and `b` of `graph` compile to the same code:
/// equal nodes, launch and in-place partners once each group's buffers are
/// numbered by their place in kernelBuffers(), over buffers of the same
/// kind, element type and layout. Names (of the groups, nodes and buffers)
/// do not count.
bool sameKernelCode(const LoopGraph &graph, uint32_t a, uint32_t b);

} // namespace gc

#endif // GC_IR_KERNELCODE_H
