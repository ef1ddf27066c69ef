//===- MemoryPlanner.cpp - Arena offsets from buffer lifetimes ------------===//
//
// Lifetimes come from the plan's steps in order. Buffers joined by a usable
// in-place pair form one block whose life is the union of theirs. Blocks are
// then placed largest first, each at the lowest aligned offset that no
// already placed block with an overlapping life occupies.
//
//===----------------------------------------------------------------------===//
#include "gc/Runtime/MemoryPlanner.h"

#include <algorithm>
#include <numeric>

namespace gc {

namespace {

constexpr int64_t kAlignment = 64;

int64_t alignUp(int64_t v) { return (v + kAlignment - 1) / kAlignment * kAlignment; }

/// First and last step that touches each buffer (-1 when none does): a
/// step's writes and reads both count, since a step may read what it writes.
struct Lifetimes {
  std::vector<int64_t> first, last;

  explicit Lifetimes(size_t buffers) : first(buffers, -1), last(buffers, -1) {}
  void touch(uint32_t b, int64_t step) {
    if (first[b] < 0)
      first[b] = step;
    last[b] = std::max(last[b], step);
  }
};

Lifetimes computeLifetimes(const ArenaProblem &problem) {
  Lifetimes life(problem.intermediate.size());
  for (size_t s = 0; s < problem.uses.size(); ++s)
    for (uint32_t b : problem.uses[s])
      life.touch(b, static_cast<int64_t>(s));
  return life;
}

} // namespace

ArenaLayout planArena(const ArenaProblem &problem,
                      const std::function<int64_t(uint32_t)> &bytesOf) {
  size_t numBuffers = problem.intermediate.size();
  size_t numSteps = problem.uses.size();
  Lifetimes life = computeLifetimes(problem);

  // Graph outputs are read after the last step.
  int64_t end = static_cast<int64_t>(numSteps);
  for (uint32_t b : problem.outputs)
    if (life.first[b] >= 0)
      life.last[b] = end;

  ArenaLayout layout;
  layout.offsets.assign(numBuffers, -1);
  layout.frees.assign(numSteps, {});
  std::vector<int64_t> bytes(numBuffers, 0);
  std::vector<bool> placed(numBuffers, false);
  for (uint32_t b = 0; b < numBuffers; ++b) {
    if (!problem.intermediate[b] || life.first[b] < 0)
      continue;
    placed[b] = true;
    bytes[b] = alignUp(bytesOf(b));
    layout.sumBytes += bytes[b];
    if (life.last[b] < end)
      layout.frees[life.last[b]].push_back(b);
  }

  // Blocks: a union-find over buffers, merged along usable in-place pairs.
  std::vector<uint32_t> parent(numBuffers);
  std::iota(parent.begin(), parent.end(), 0u);
  auto root = [&](uint32_t b) {
    while (parent[b] != b)
      b = parent[b] = parent[parent[b]];
    return b;
  };
  std::vector<bool> donated(numBuffers, false), received(numBuffers, false);
  for (size_t s = 0; s < problem.inplace.size(); ++s) {
    for (auto [output, input] : problem.inplace[s]) {
      int64_t at = static_cast<int64_t>(s);
      if (input >= numBuffers || output >= numBuffers || input == output || !placed[input] ||
          !placed[output] || donated[input] || received[output] || life.last[input] != at ||
          life.first[output] != at || bytesOf(input) != bytesOf(output))
        continue;
      donated[input] = received[output] = true;
      parent[root(output)] = root(input);
    }
  }

  struct Block {
    uint32_t id; ///< the smallest buffer index in it
    int64_t bytes = 0, first = 0, last = 0;
    int64_t offset = 0;
  };
  std::vector<Block> blocks;
  std::vector<int64_t> blockOf(numBuffers, -1);
  for (uint32_t b = 0; b < numBuffers; ++b) {
    if (!placed[b])
      continue;
    uint32_t r = root(b);
    if (blockOf[r] < 0) {
      blockOf[r] = static_cast<int64_t>(blocks.size());
      blocks.push_back({b, bytes[b], life.first[b], life.last[b]});
    }
    Block &blk = blocks[blockOf[r]];
    blk.first = std::min(blk.first, life.first[b]);
    blk.last = std::max(blk.last, life.last[b]);
  }

  std::vector<size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return blocks[a].bytes > blocks[b].bytes; });
  std::vector<size_t> done;
  for (size_t i : order) {
    Block &blk = blocks[i];
    std::vector<std::pair<int64_t, int64_t>> taken;
    for (size_t j : done)
      if (blocks[j].first <= blk.last && blk.first <= blocks[j].last)
        taken.emplace_back(blocks[j].offset, blocks[j].offset + blocks[j].bytes);
    std::sort(taken.begin(), taken.end());
    int64_t offset = 0;
    for (auto [lo, hi] : taken) {
      if (offset + blk.bytes <= lo)
        break;
      offset = std::max(offset, hi);
    }
    blk.offset = offset;
    layout.arenaBytes = std::max(layout.arenaBytes, offset + blk.bytes);
    done.push_back(i);
  }
  for (uint32_t b = 0; b < numBuffers; ++b)
    if (placed[b])
      layout.offsets[b] = blocks[blockOf[root(b)]].offset;
  return layout;
}

} // namespace gc
