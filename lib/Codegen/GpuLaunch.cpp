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
//  4. A ThreadPerPoint group of pointwise nodes over exactly its parallel
//     ranges (no loops of their own) that read nothing the group writes
//     and do not scatter takes, in each thread, a vector of V consecutive
//     points of the innermost range, V = 16 bytes / the widest element of
//     the buffers it stores or reads along that range (8 for bfloat16, 4
//     for float32), halved until V divides the innermost range (a static
//     size) and every store stays an aligned vector (LaneStep::Aligned);
//     V = 1 if none does. Every load and store that moves along the range
//     with a unit step from an aligned first lane is then one access of up
//     to 16 bytes (ld.global.v4), the rest one per lane. Such a group runs
//     4 of those vectors per thread when it may have 2^18 points (by the
//     upper bound of its size): each thread issues the loads of all 4
//     before its first store, which keeps enough bytes in flight to come
//     near the copy bandwidth. The 4 are the grid's width apart, so that
//     any grid spreads the points evenly: the launch (PlanBuilder's
//     gpuGrid) gives 4 vectors to each thread where that still makes 1024
//     blocks, fewer where it would not, down to one vector a thread, so
//     that a small run of a symbolic size (a short prompt) still fills the
//     GPU.
//  5. Otherwise the group runs BlockPerPoint: one block per point, whose
//     threads share every node's inner loops and combine reductions across
//     the block; a node's inner loop goes in vectors as rule 4 chooses them
//     for that node alone (innerVectorWidth, decided when the kernel is
//     emitted: the launch does not depend on it). The block has 128 threads, doubled (up to 1024) while each
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
#include <cmath>

namespace gc {

namespace {

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
/// The widest access a thread makes (ld.global.v4.u32).
constexpr uint32_t kVectorBytes = 16;

constexpr int64_t kUnbounded = SymRange::kUnbounded;

/// What laneStep tracks of a subexpression: its step, and whether its
/// value (Same) or its first lane's (Aligned) is a multiple of the width.
struct Lanes {
  LaneStep step;
  bool multiple;
};

Lanes lanesOf(const SymExpr *e, const std::string &var, int64_t width) {
  using Kind = SymExpr::Kind;
  constexpr Lanes other{LaneStep::Other, false};
  switch (e->kind()) {
  case Kind::Const:
    return {LaneStep::Same, e->constant() % width == 0};
  case Kind::Symbol:
    return e->symbolName() == var ? Lanes{LaneStep::Aligned, true} : Lanes{LaneStep::Same, false};
  case Kind::Add: {
    Lanes sum{LaneStep::Same, true};
    for (const SymExpr *term : e->operands()) {
      Lanes t = lanesOf(term, var, width);
      if (t.step == LaneStep::Other || (t.step == LaneStep::Aligned && sum.step == LaneStep::Aligned))
        return other;
      if (t.step == LaneStep::Aligned)
        sum.step = LaneStep::Aligned;
      sum.multiple = sum.multiple && t.multiple;
    }
    return sum;
  }
  case Kind::Mul: {
    // A product moves with the lanes only with a coefficient other than 1
    // (a canonical product of var alone is var), so it is not a unit step.
    Lanes product{LaneStep::Same, false};
    for (const SymExpr *factor : e->operands()) {
      Lanes f = lanesOf(factor, var, width);
      if (f.step != LaneStep::Same)
        return other;
      product.multiple = product.multiple || f.multiple;
    }
    return product;
  }
  case Kind::FloorDiv:
  case Kind::Mod: {
    Lanes x = lanesOf(e->operands()[0], var, width);
    const SymExpr *d = e->operands()[1];
    bool wholeVectors = d->isConst() && d->constant() > 0 && d->constant() % width == 0;
    if (x.step == LaneStep::Same)
      return {LaneStep::Same, e->kind() == Kind::Mod && wholeVectors && x.multiple};
    // No multiple of d lies strictly inside an aligned vector when width
    // divides d: the quotient is the same for every lane, and the
    // remainder steps with them from a multiple of width.
    if (x.step == LaneStep::Aligned && x.multiple && wholeVectors)
      return e->kind() == Kind::FloorDiv ? Lanes{LaneStep::Same, false}
                                         : Lanes{LaneStep::Aligned, true};
    return other;
  }
  case Kind::Min:
  case Kind::Max: {
    Lanes all{LaneStep::Same, true};
    for (const SymExpr *op : e->operands()) {
      Lanes o = lanesOf(op, var, width);
      if (o.step != LaneStep::Same)
        return other;
      all.multiple = all.multiple && o.multiple;
    }
    return all;
  }
  }
  return other;
}

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

/// Pointwise nodes over exactly the group's parallel ranges: a point of the
/// group is a point of each node, with nothing left to loop over.
bool flatPointwise(const LoopGraph &graph, const KernelGroup &k) {
  for (uint32_t n : k.nodes)
    if (n >= graph.nodes.size() || graph.nodes[n].kind != LoopNode::Kind::Pointwise ||
        graph.nodes[n].ranges.size() != k.parallelRanges.size())
      return false;
  return true;
}

/// The widest vector of points of `var`, whose loop has `size` points, that
/// `nodes` take: 16 bytes of the widest element they store or load along
/// it, halved until it divides the loop and `fits` (the stores stay
/// aligned; a reduction has a vector load). 1 if none.
template <typename Fits>
uint32_t widestVector(const LoopGraph &graph, const std::vector<const LoopNode *> &nodes,
                      const SymExpr *size, const std::string &var, const VarRanges &ranges,
                      bool stores, Fits &&fits) {
  uint32_t widest = 1;
  auto consider = [&](uint32_t buffer, bool moves) {
    if (moves && buffer < graph.buffers.size())
      widest = std::max<uint32_t>(widest, dtypeSize(graph.buffers[buffer].dtype));
  };
  for (const LoopNode *node : nodes) {
    if (stores)
      consider(node->output, laneStep(node->storeIndex, var, 2) == LaneStep::Aligned);
    std::vector<bool> loads = vectorLoads(graph, node->body, var, 2, ranges);
    for (size_t op = 0; op < loads.size(); ++op)
      consider(node->body.ops[op].buffer, loads[op]);
  }
  for (uint32_t width = kVectorBytes / widest; width > 1; width /= 2)
    if (isMultipleOf(size, width) && fits(width))
      return width;
  return 1;
}

/// Rule 4's vector width: the widest that leaves every store an aligned
/// vector, 1 if none does.
uint32_t vectorWidthFor(const LoopGraph &graph, const KernelGroup &k, const VarRanges &ranges) {
  if (k.parallelRanges.empty())
    return 1;
  std::string var = "i" + std::to_string(k.parallelRanges.size() - 1);
  std::vector<const LoopNode *> nodes;
  for (uint32_t n : k.nodes)
    nodes.push_back(&graph.nodes[n]);
  return widestVector(graph, nodes, k.parallelRanges.back(), var, ranges, true, [&](uint32_t w) {
    return std::all_of(nodes.begin(), nodes.end(), [&](const LoopNode *node) {
      return laneStep(node->storeIndex, var, w) == LaneStep::Aligned;
    });
  });
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

bool isMultipleOf(const SymExpr *size, uint32_t width) {
  // No variable moves: the expression is Same, and lanesOf knows whether
  // it is a multiple (8192*s0 is one of 8 for every s0).
  return lanesOf(size, "", width).multiple;
}

LaneStep laneStep(const SymExpr *index, const std::string &var, uint32_t width) {
  Lanes l = lanesOf(index, var, width);
  if (l.step == LaneStep::Aligned && !l.multiple)
    return LaneStep::Other;
  return l.step;
}

uint32_t innerVectorWidth(const LoopGraph &graph, const LoopNode &node, size_t prefix,
                          const VarRanges &ranges) {
  if (node.kind == LoopNode::Kind::Pointwise) {
    if (node.ranges.size() <= prefix || scatters(node))
      return 1;
    std::string var = "i" + std::to_string(node.ranges.size() - 1);
    return widestVector(graph, {&node}, node.ranges.back(), var, ranges, true, [&](uint32_t w) {
      return laneStep(node.storeIndex, var, w) == LaneStep::Aligned;
    });
  }
  if (node.kind != LoopNode::Kind::Reduction || node.scan || node.reductionRanges.empty())
    return 1;
  std::string var = "r" + std::to_string(node.reductionRanges.size() - 1);
  return widestVector(graph, {&node}, node.reductionRanges.back(), var, ranges, false,
                      [&](uint32_t w) {
                        std::vector<bool> loads = vectorLoads(graph, node.body, var, w, ranges);
                        return std::find(loads.begin(), loads.end(), true) != loads.end();
                      });
}

bool vectorAccess(const LoopGraph &graph, uint32_t buffer, const SymExpr *index,
                  const std::string &var, uint32_t width) {
  if (buffer >= graph.buffers.size())
    return false;
  uint32_t bytes = dtypeSize(graph.buffers[buffer].dtype) * width;
  return bytes >= 4 && bytes <= kVectorBytes && laneStep(index, var, width) == LaneStep::Aligned;
}

std::vector<bool> vectorLoads(const LoopGraph &graph, const Body &body, const std::string &var,
                              uint32_t width, const VarRanges &ranges) {
  size_t n = body.ops.size();
  // same: one value for every lane; stepping: an Index value that is an
  // aligned first lane plus the lane.
  std::vector<bool> same(n, false), stepping(n, false), vector(n, false);
  auto multipleConst = [&](uint32_t v) {
    const BodyOp &c = body.ops[v];
    return c.kind == BodyOp::Kind::Const && c.constant == std::floor(c.constant) &&
           std::fmod(c.constant, double(width)) == 0;
  };
  for (size_t k = 0; k < n; ++k) {
    const BodyOp &op = body.ops[k];
    auto sameValue = [&](int64_t v) { return v >= 0 && size_t(v) < k && same[v]; };
    bool operandsSame = std::all_of(op.operands.begin(), op.operands.end(), sameValue);
    switch (op.kind) {
    case BodyOp::Kind::Const:
      same[k] = true;
      break;
    case BodyOp::Kind::Index: {
      LaneStep step = op.index ? laneStep(op.index, var, width) : LaneStep::Other;
      same[k] = step == LaneStep::Same;
      stepping[k] = step == LaneStep::Aligned;
      break;
    }
    case BodyOp::Kind::Cast:
      same[k] = operandsSame;
      break;
    case BodyOp::Kind::Compute: {
      same[k] = operandsSame;
      // x >= c and x < c (c >= x, c > x) split the lanes nowhere when x
      // steps from a multiple of the width and c is one: a rotation's
      // halves (rotate_half: i >= 32 over a row of 64).
      auto splitsNowhere = [&](uint32_t x, uint32_t c) {
        return x < k && c < k && stepping[x] && multipleConst(c);
      };
      if (op.operands.size() == 2) {
        uint32_t a = op.operands[0], b = op.operands[1];
        if ((op.op == ScalarOp::Ge || op.op == ScalarOp::Lt) && splitsNowhere(a, b))
          same[k] = true;
        if ((op.op == ScalarOp::Le || op.op == ScalarOp::Gt) && splitsNowhere(b, a))
          same[k] = true;
      }
      break;
    }
    case BodyOp::Kind::Load: {
      // With its gathered indices the same for every lane, the index moves
      // as laneStep says (which takes t0, t1, ... for fixed values). A
      // masked-off vector reads the buffer's first `width` elements, which
      // must exist.
      bool fixed = op.index && std::all_of(op.indirect.begin(), op.indirect.end(), sameValue) &&
                   (op.mask < 0 || (sameValue(op.mask) && op.buffer < graph.buffers.size() &&
                                    loopSpaceBounds(graph.buffers[op.buffer].sizes, ranges).min >=
                                        int64_t(width)));
      same[k] = fixed && laneStep(op.index, var, width) == LaneStep::Same;
      vector[k] = fixed && vectorAccess(graph, op.buffer, op.index, var, width);
      break;
    }
    }
  }
  return vector;
}

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
      if (points < kGpuBlockReduction)
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
    bool vectors = perThread && flatPointwise(graph, k) && loadsBeforeStores(graph, k);
    k.vectorWidth = vectors ? vectorWidthFor(graph, k, ranges) : 0;
    k.vectorWidth = k.vectorWidth > 1 ? k.vectorWidth : 0;
    k.pointsPerThread = vectors && space.max >= kUnrollSpace ? kUnroll : 0;
  }
}

} // namespace gc
