//===- Partition.h - Splitting a joint graph in two -------------*- C++ -*-===//
//
// gc-partition turns the joint graph of gc-opt --joint (primals, tangents)
// -> (outputs, gradients) into a forward graph and a backward graph, and
// chooses what the forward graph saves for the backward one:
//  - save-all keeps every forward value the backward reads;
//  - min-cut saves a minimum-byte set of values from which the backward can
//    recompute the rest, as AOTAutograd's min-cut rematerialization does.
// docs/partition.md describes the calling convention of the two graphs.
//
//===----------------------------------------------------------------------===//
#ifndef GC_PARTITION_PARTITION_H
#define GC_PARTITION_PARTITION_H

#include "gc/IR/Module.h"
#include "gc/Pass/Pass.h"
#include "gc/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace gc {

enum class PartitionStrategy : uint8_t { MinCut, SaveAll };
std::string_view partitionStrategyName(PartitionStrategy s);
std::optional<PartitionStrategy> parsePartitionStrategy(std::string_view s);

/// Whether the backward graph may compute `op` again from saved inputs
/// instead of having its result saved: cheap pointwise ops, views and data
/// movement may; matrix products, convolutions, pooling, reductions, sorting,
/// scatters, random ops (which must never run twice) and ops gc does not
/// know may not.
bool isRecomputable(OpId op);

/// Which joint-graph values each graph gets.
struct PartitionPlan {
  /// What the forward graph returns for the backward one, in joint-graph
  /// order (inputs, then node results).
  std::vector<const Value *> saved;
  uint64_t savedBytes = 0;
  /// The nodes of each graph, in joint-graph order. A node recomputed in
  /// the backward graph is in both.
  std::vector<const Node *> forwardNodes;
  std::vector<const Node *> backwardNodes;
};

/// Plans the partition of `joint`, a graph of the Joint-level module `m`.
Expected<PartitionPlan> planPartition(const Module &m, const Graph &joint,
                                      PartitionStrategy strategy);

/// Replaces the graph "joint" of a Joint-level module with the graphs
/// "forward" and "backward" of `plan` (made by planPartition on it) and
/// makes the module Partitioned.
Error applyPartition(Module &m, const PartitionPlan &plan);

/// planPartition and applyPartition on the module's @joint graph, as a pass
/// ("partition").
std::unique_ptr<Pass> createPartitionPass(PartitionStrategy strategy);
/// Adds "partition" (min-cut) to the pass registry.
void registerPartitionPasses();

} // namespace gc

#endif // GC_PARTITION_PARTITION_H
