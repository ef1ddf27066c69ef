//===- MaxFlow.cpp - Maximum flow and minimum cut -------------------------===//
#include "gc/Partition/MaxFlow.h"

#include <algorithm>
#include <cassert>
#include <deque>

namespace gc {

void FlowNetwork::addEdge(size_t from, size_t to, uint64_t capacity) {
  assert(from < numNodes() && to < numNodes());
  adjacency_[from].push_back(edges_.size());
  edges_.push_back({to, std::min(capacity, kInfinite)});
  adjacency_[to].push_back(edges_.size());
  edges_.push_back({from, 0});
}

bool FlowNetwork::levelGraph(size_t source, size_t sink) {
  level_.assign(numNodes(), -1);
  level_[source] = 0;
  std::deque<size_t> queue = {source};
  while (!queue.empty()) {
    size_t node = queue.front();
    queue.pop_front();
    for (size_t e : adjacency_[node]) {
      const Edge &edge = edges_[e];
      if (edge.residual > 0 && level_[edge.to] < 0) {
        level_[edge.to] = level_[node] + 1;
        queue.push_back(edge.to);
      }
    }
  }
  return level_[sink] >= 0;
}

uint64_t FlowNetwork::augment(size_t node, size_t sink, uint64_t limit) {
  if (node == sink)
    return limit;
  for (size_t &i = nextEdge_[node]; i < adjacency_[node].size(); ++i) {
    size_t e = adjacency_[node][i];
    Edge &edge = edges_[e];
    if (edge.residual == 0 || level_[edge.to] != level_[node] + 1)
      continue;
    uint64_t pushed = augment(edge.to, sink, std::min(limit, edge.residual));
    if (pushed > 0) {
      edge.residual -= pushed;
      edges_[e ^ 1].residual += pushed;
      return pushed;
    }
  }
  return 0;
}

uint64_t FlowNetwork::maxFlow(size_t source, size_t sink) {
  uint64_t total = 0;
  while (total < kInfinite && levelGraph(source, sink)) {
    nextEdge_.assign(numNodes(), 0);
    while (uint64_t pushed = augment(source, sink, kInfinite)) {
      total = std::min(total + pushed, kInfinite);
      if (total == kInfinite)
        break;
    }
  }
  return total;
}

std::vector<bool> FlowNetwork::sourceSide(size_t source) const {
  std::vector<bool> seen(numNodes(), false);
  seen[source] = true;
  std::vector<size_t> stack = {source};
  while (!stack.empty()) {
    size_t node = stack.back();
    stack.pop_back();
    for (size_t e : adjacency_[node]) {
      const Edge &edge = edges_[e];
      if (edge.residual > 0 && !seen[edge.to]) {
        seen[edge.to] = true;
        stack.push_back(edge.to);
      }
    }
  }
  return seen;
}

} // namespace gc
