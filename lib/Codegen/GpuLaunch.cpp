//===- GpuLaunch.cpp - How GPU kernels spread their points over threads ---===//
//
// The rule (docs/gpu.md, "Kernels"), per kernel group:
//
//  1. A group whose reductions all have fewer than 64 points (by the upper
//     bounds of their sizes; a symbol without an upper bound counts as
//     large), or that has none, runs ThreadPerPoint with 256 threads a
//     block: one thread per point of the parallel ranges, doing the inner
//     loops and reductions alone. Not so when a node's own loops beyond
//     the parallel ranges have at least a warp's 32 points and the
//     parallel ranges fewer than 2^18 (softmax's normalization fused with
//     the next pointwise node over their common [heads, rows] prefix):
//     one thread per point would walk each row alone, with too few threads
//     to fill the GPU and neighbours a row apart in memory, so such a group
//     runs BlockPerPoint (5), its threads sharing the inner loops.
//  2. So does a group with short rows (reductions of at most 1024 points)
//     over a huge parallel space (at least 2^20 points for sure, the most
//     blocks a launch has): there are enough points to fill the GPU with
//     threads, and a block per row would leave most of its threads idle.
//  3. So does a group whose large reductions read memory contiguously along
//     the group's innermost parallel loop but not along their own innermost
//     reduction loop (a column sum), when there are at least 4096 points:
//     neighbouring threads then read neighbouring elements.
//  4. A ThreadPerPoint group of pointwise nodes that read nothing the group
//     writes runs 4 points per thread when it has at least 2^18 points for
//     sure: each thread issues the loads of all 4 before its first store,
//     which keeps enough bytes in flight to come near the copy bandwidth
//     (one 4-byte load per thread leaves the memory system idle part of the
//     time), and the grid is a quarter as large.
//  5. Otherwise the group runs BlockPerPoint: one block per point, whose
//     threads share every node's inner loops and combine reductions across
//     the block. The block has 128 threads, doubled (up to 1024) while each
//     thread would still have more than 8 elements of the largest reduction
//     to combine; 1024 where that size has no upper bound. A group of fewer
//     than 64 points (a decode step's RMSNorm is one) has too few blocks to
//     hide memory latency with: its block grows while each thread would
//     have more than 2 elements of the largest reduction or inner loop, so
//     that each thread's few loads overlap instead of following each other.
//
// Everything here reads the graph and the module's symbol ranges only, so
// the choice is deterministic and part of the object cache key.
//
//===----------------------------------------------------------------------===//
#include "GpuLaunch.h"

#include "gc/Codegen/GpuKernelEmitter.h"

#include <algorithm>

namespace gc {

namespace {

constexpr int64_t kLargeReduction = 64;
constexpr int64_t kShortRow = 1024;
constexpr int64_t kHugeSpace = int64_t(1) << 20;
constexpr int64_t kColumnSpace = 4096;
constexpr uint32_t kPointThreads = 256;
constexpr uint32_t kMinBlockThreads = 128;
constexpr int64_t kElementsPerThread = 8;
constexpr int64_t kUnrollSpace = int64_t(1) << 18;
constexpr uint32_t kUnroll = 4;
constexpr int64_t kWideInnerLoop = 32;
constexpr int64_t kFewBlocks = 64;
constexpr int64_t kFewBlockElementsPerThread = 2;

constexpr int64_t kUnbounded = SymRange::kUnbounded;

int64_t saturatingMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0)
    return 0;
  if (a == kUnbounded || b == kUnbounded || a > kUnbounded / b)
    return kUnbounded;
  return a * b;
}

/// Whether `var` appears in `e` with coefficient 1 (consecutive values of
/// var address consecutive elements).
bool hasUnitStride(const SymExpr *e, const std::string &var) {
  if (e->isSymbol())
    return e->symbolName() == var;
  if (e->kind() != SymExpr::Kind::Add)
    return false;
  for (const SymExpr *term : e->operands())
    if (term->isSymbol() && term->symbolName() == var)
      return true;
  return false;
}

/// A reduction that walks memory along the group's innermost parallel loop
/// (`parallelVar`) and not along its own innermost reduction loop.
bool readsAcrossPoints(const LoopNode &node, const std::string &parallelVar) {
  if (node.reductionRanges.empty())
    return false;
  std::string reductionVar = "r" + std::to_string(node.reductionRanges.size() - 1);
  bool alongPoints = false;
  for (const BodyOp &op : node.body.ops) {
    if (op.kind != BodyOp::Kind::Load || !op.index)
      continue;
    if (hasUnitStride(op.index, reductionVar))
      return false;
    alongPoints |= hasUnitStride(op.index, parallelVar);
  }
  return alongPoints;
}

/// Pointwise nodes only, none scattering nor reading a buffer a node of the group writes:
/// the loads of several points can go before their stores.
bool loadsBeforeStores(const LoopGraph &graph, const KernelGroup &k) {
  std::vector<uint32_t> written;
  for (uint32_t n : k.nodes) {
    if (n >= graph.nodes.size() || graph.nodes[n].kind != LoopNode::Kind::Pointwise ||
        scatters(graph.nodes[n]))
      return false;
    written.push_back(graph.nodes[n].output);
  }
  for (uint32_t n : k.nodes)
    for (const BodyOp &op : graph.nodes[n].body.ops)
      if (op.kind == BodyOp::Kind::Load &&
          std::find(written.begin(), written.end(), op.buffer) != written.end())
        return false;
  return true;
}

/// The most points of any node's own loops beyond the parallel ranges.
int64_t largestInnerLoop(const LoopGraph &graph, const KernelGroup &k, const VarRanges &ranges) {
  int64_t largest = 0;
  size_t prefix = k.parallelRanges.size();
  for (uint32_t n : k.nodes) {
    if (n >= graph.nodes.size() || graph.nodes[n].ranges.size() <= prefix)
      continue;
    const std::vector<const SymExpr *> &all = graph.nodes[n].ranges;
    std::vector<const SymExpr *> inner(all.begin() + prefix, all.end());
    largest = std::max(largest, loopSpaceBounds(inner, ranges).max);
  }
  return largest;
}

uint32_t blockThreadsFor(int64_t points, int64_t elementsPerThread) {
  uint32_t threads = kMinBlockThreads;
  while (threads < kGpuMaxBlockThreads && saturatingMul(threads, elementsPerThread) < points)
    threads *= 2;
  return threads;
}

} // namespace

SymRange loopSpaceBounds(const std::vector<const SymExpr *> &space, const VarRanges &ranges) {
  SymRange total{1, 1};
  for (const SymExpr *size : space) {
    std::optional<SymRange> b = boundsOf(size, ranges);
    total.min = saturatingMul(total.min, b ? std::max<int64_t>(b->min, 0) : 0);
    total.max = saturatingMul(total.max, b ? std::max<int64_t>(b->max, 0) : kUnbounded);
  }
  return total;
}

void chooseGpuLaunches(const Module &module, LoopGraph &graph) {
  const VarRanges &ranges = module.syms().ranges();
  for (KernelGroup &k : graph.plan.kernels) {
    std::string innermost =
        k.parallelRanges.empty() ? "" : "i" + std::to_string(k.parallelRanges.size() - 1);
    int64_t largest = 0;
    bool columns = !innermost.empty(), scans = false;
    for (uint32_t n : k.nodes) {
      if (n >= graph.nodes.size() || graph.nodes[n].kind != LoopNode::Kind::Reduction)
        continue;
      const LoopNode &node = graph.nodes[n];
      // A scan runs its loop serially, in order: one thread per point.
      scans |= node.scan;
      int64_t points = loopSpaceBounds(node.reductionRanges, ranges).max;
      if (points < kLargeReduction)
        continue;
      largest = std::max(largest, points);
      columns = columns && readsAcrossPoints(node, innermost);
    }
    SymRange space = loopSpaceBounds(k.parallelRanges, ranges);
    bool rowsPerBlock = space.max < kUnrollSpace &&
                        largestInnerLoop(graph, k, ranges) >= kWideInnerLoop;
    bool perThread = scans || (largest == 0 && !rowsPerBlock) ||
                     (space.min >= kHugeSpace && largest <= kShortRow) ||
                     (columns && space.min >= kColumnSpace);
    k.mapping = perThread ? GpuMapping::ThreadPerPoint : GpuMapping::BlockPerPoint;
    if (perThread)
      k.blockThreads = kPointThreads;
    else if (space.max < kFewBlocks)
      k.blockThreads = blockThreadsFor(std::max(largest, largestInnerLoop(graph, k, ranges)),
                                       kFewBlockElementsPerThread);
    else
      k.blockThreads = blockThreadsFor(largest, kElementsPerThread);
    k.pointsPerThread =
        perThread && space.min >= kUnrollSpace && loadsBeforeStores(graph, k) ? kUnroll : 0;
  }
}

} // namespace gc
