//===- MaxFlow.h - Maximum flow and minimum cut -----------------*- C++ -*-===//
//
// A flow network with integer capacities, solved with Dinic's algorithm.
// Edges are kept and explored in the order they were added, so the flow and
// the cut it yields depend only on the order the network was built in.
//
//===----------------------------------------------------------------------===//
#ifndef GC_PARTITION_MAXFLOW_H
#define GC_PARTITION_MAXFLOW_H

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace gc {

class FlowNetwork {
public:
  /// A capacity no cut may cross. Sums saturate at it, so any number of
  /// such edges in a row stays "infinite".
  static constexpr uint64_t kInfinite = std::numeric_limits<uint64_t>::max() / 4;

  explicit FlowNetwork(size_t numNodes) : adjacency_(numNodes) {}

  size_t numNodes() const { return adjacency_.size(); }
  void addEdge(size_t from, size_t to, uint64_t capacity);

  /// Pushes as much flow as possible from `source` to `sink` and returns its
  /// value (kInfinite or more if an uncuttable path joins them). Call once.
  uint64_t maxFlow(size_t source, size_t sink);

  /// After maxFlow: the nodes still reachable from the source through edges
  /// with spare capacity. The edges that leave this set form a minimum cut,
  /// the one closest to the source.
  std::vector<bool> sourceSide(size_t source) const;

private:
  struct Edge {
    size_t to;
    uint64_t residual;
  };
  bool levelGraph(size_t source, size_t sink);
  uint64_t augment(size_t node, size_t sink, uint64_t limit);

  // Edges in pairs: edge 2k is the forward edge, 2k + 1 its reverse.
  std::vector<Edge> edges_;
  std::vector<std::vector<size_t>> adjacency_;
  std::vector<int64_t> level_;
  std::vector<size_t> nextEdge_;
};

} // namespace gc

#endif // GC_PARTITION_MAXFLOW_H
