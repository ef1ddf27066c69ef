//===- Fusion.cpp - Grouping loop nodes into kernels ----------------------===//
//
// Inside a kernel, for each point of the shared prefix P every member runs
// its remaining loops in turn. A reader may join its producer's kernel when
// every element it reads was written by the producer at the same point of
// P. The test used is sufficient, not exact: the producer's store and the
// reader's load are affine in the P variables with equal coefficients, and
// those coefficients nest (each at least the span of the rest of the index
// and of the P variables inside it), so equal addresses force equal P
// points. On a GPU, nodes small enough for one block may also share a
// kernel with an empty prefix (P has a single point): a reader there may
// load any element of a member's output, stored a barrier before.
//
//===----------------------------------------------------------------------===//

#include "Fusion.h"
#include "LoopRewrite.h"

#include <algorithm>
#include <limits>
#include <map>

namespace gc::schedule {

namespace {

/// Prefixes with less parallel work than this are not worth keeping.
constexpr int64_t kEnoughParallelWork = 256;
/// What a symbolic extent counts as parallel work.
constexpr int64_t kSymbolicWork = int64_t(1) << 20;
/// On a GPU, nodes this small together (every loop of every member,
/// parallel and reduction, counted) may share a kernel with no common
/// prefix: one block then runs them in turn, a barrier apart, which costs
/// less than a launch each (a decode step's RMSNorm: the row's sum of
/// squares, then the scaled row). Past it one block is the slower: on an
/// H200 a densenet's concatenation and the transposed batch norm after it
/// ([608, 16] and [16, 608], 19456 points) took 14 us in one block, where
/// 5120 points took 2.7 and a launch of its own costs about 2.5.
constexpr int64_t kOneBlockPoints = 8192;
/// ... as long as each reduction among them has at most this many results:
/// the block combines one result at a time, a barrier each, so a reduction
/// of many short rows (a pooling's 768 sums of 4) would run for hundreds of
/// microseconds in one block where a kernel of its own takes a few.
constexpr int64_t kOneBlockRows = 4;
/// ... and while they are at most this many: one block runs them in turn,
/// so a longer chain gains little more.
constexpr size_t kOneBlockNodes = 8;
/// The most nodes a GPU kernel holds. ptxas's time grows faster than a
/// kernel's length: densenet121's load-time program (each convolution's
/// folded batch norm, independent nodes over the same channels) made two
/// kernels of 170 nodes that took ptxas 5.7 s, against 0.8 s for the 77
/// kernels of the model's own run.
constexpr size_t kGpuKernelNodes = 32;

int64_t parallelWork(const std::vector<const SymExpr *> &prefix, size_t n) {
  int64_t work = 1;
  for (size_t k = 0; k < n && k < prefix.size(); ++k) {
    int64_t e = prefix[k]->isConst() ? std::max<int64_t>(prefix[k]->constant(), 0)
                                     : kSymbolicWork;
    if (__builtin_mul_overflow(work, e, &work))
      work = std::numeric_limits<int64_t>::max();
  }
  return work;
}

/// Every point `node` visits, parallel and reduction loops together.
int64_t allPoints(const LoopNode &node) {
  return parallelWork(node.ranges, node.ranges.size()) *
         std::max<int64_t>(parallelWork(node.reductionRanges, node.reductionRanges.size()), 1);
}

bool isLoopNode(const LoopNode &n) {
  return n.kind == LoopNode::Kind::Pointwise ||
         n.kind == LoopNode::Kind::Reduction;
}

/// The symbolic extreme of `e` over the loops of `node` other than the
/// first `p` outer ones (which the caller has set to 0): each variable at
/// the end of its range that maximizes (or minimizes) the expression. Null
/// when `e` is not affine in them or a coefficient's sign is unknown.
const SymExpr *extreme(SymContext &ctx, const SymExpr *e, const LoopNode &node,
                       size_t p, bool maximize) {
  std::map<std::string, const SymExpr *> sub;
  auto visit = [&](const std::vector<const SymExpr *> &extents, bool reduction,
                   size_t first) {
    for (size_t k = first; k < extents.size(); ++k) {
      std::string var = loopVar(reduction, k);
      const SymExpr *c = affineCoefficient(ctx, e, var);
      if (!c || mentionsLoopSymbol(c))
        return false;
      std::optional<SymRange> b = boundsOf(c, ctx.ranges());
      if (!b)
        return false;
      bool positive = b->min >= 0;
      if (!positive && b->max > 0)
        return false;
      const SymExpr *last = ctx.sub(extents[k], ctx.constant(1));
      sub[var] = positive == maximize ? last : ctx.constant(0);
    }
    return true;
  };
  if (!visit(node.ranges, false, p) || !visit(node.reductionRanges, true, 0))
    return nullptr;
  const SymExpr *out = substitute(ctx, e, sub);
  return mentionsLoopSymbol(out) ? nullptr : out;
}

bool provablyNonNegative(const SymExpr *e, const SymContext &ctx) {
  std::optional<SymRange> b = boundsOf(e, ctx.ranges());
  return b && b->min >= 0;
}

/// Whether `reader`, loading `load`, touches only elements that `writer`
/// stores at the same point of the first `p` outer loops (see the file
/// comment). Both nodes' first `p` extents equal `prefix`.
bool samePrefixPoint(SymContext &ctx, const LoopNode &writer,
                     const LoopNode &reader, const SymExpr *load,
                     const std::vector<const SymExpr *> &prefix, size_t p) {
  const SymExpr *store = writer.storeIndex;
  std::map<std::string, const SymExpr *> zeroP;
  std::vector<const SymExpr *> coefs;
  for (size_t k = 0; k < p; ++k) {
    std::string var = loopVar(false, k);
    const SymExpr *cw = affineCoefficient(ctx, store, var);
    const SymExpr *cr = affineCoefficient(ctx, load, var);
    if (!cw || cw != cr || mentionsLoopSymbol(cw))
      return false;
    coefs.push_back(cw);
    zeroP[var] = ctx.constant(0);
  }
  const SymExpr *restW = substitute(ctx, store, zeroP);
  const SymExpr *restR = substitute(ctx, load, zeroP);
  const SymExpr *maxW = extreme(ctx, restW, writer, p, true);
  const SymExpr *maxR = extreme(ctx, restR, reader, p, true);
  const SymExpr *minW = extreme(ctx, restW, writer, p, false);
  const SymExpr *minR = extreme(ctx, restR, reader, p, false);
  if (!maxW || !maxR || !minW || !minR || !provablyNonNegative(minW, ctx) ||
      !provablyNonNegative(minR, ctx))
    return false;
  // Innermost P variable first: its stride must pass the rest's span, each
  // outer one the span of everything inside it.
  const SymExpr *inside = ctx.constant(0);
  for (size_t k = p; k-- > 0;) {
    const SymExpr *need = ctx.add(ctx.constant(1), inside);
    if (!provablyNonNegative(ctx.sub(coefs[k], ctx.add(need, maxW)), ctx) ||
        !provablyNonNegative(ctx.sub(coefs[k], ctx.add(need, maxR)), ctx))
      return false;
    inside = ctx.add(inside, ctx.mul(coefs[k], ctx.sub(prefix[k], ctx.constant(1))));
  }
  return true;
}

class Fuser {
public:
  Fuser(SymContext &ctx, const LoopGraph &graph, const std::vector<uint32_t> &origin)
      : ctx_(ctx), graph_(graph), origin_(origin), access_(nodeAccesses(graph)) {
    for (uint32_t n = 0; n < graph.nodes.size(); ++n)
      for (uint32_t b : access_[n].writes)
        ++writers_[b];
  }

  std::vector<Group> run(const std::vector<uint32_t> &nodes, bool fuse, TargetDevice device) {
    gpu_ = device != TargetDevice::CPU;
    for (uint32_t n : nodes) {
      const LoopNode &node = graph_.nodes[n];
      if (!isLoopNode(node)) {
        groups_.push_back({false, {n}, {}});
        continue;
      }
      // On the CPU a scatter runs alone and serially, its points in order.
      // A GPU runs its points in parallel whatever the group (a combining
      // store is atomic), so there it shares a kernel like any node, with
      // nodes that neither read nor write what it scatters into: a decode
      // step's two cache writes and the query's rotary embedding are one
      // launch.
      if (scatters(node) && device == TargetDevice::CPU) {
        groups_.push_back({true, {n}, {}});
        scattering_.insert(groups_.size() - 1);
        continue;
      }
      if (!fuse || !joinExisting(n))
        groups_.push_back({true, {n}, node.ranges});
    }
    return std::move(groups_);
  }

private:
  /// Whether `n` writes a buffer that a member of `g` reads or writes,
  /// other than its own slices' disjoint writes.
  bool writesInto(const Group &g, uint32_t n) const {
    for (uint32_t m : g.nodes)
      for (uint32_t x : access_[n].writes)
        if (access_[m].reads.count(x) ||
            (access_[m].writes.count(x) && origin_[m] != origin_[n]))
          return true;
    return false;
  }

  bool conflicts(const Group &g, uint32_t n) const {
    if (writesInto(g, n))
      return true;
    for (uint32_t m : g.nodes)
      for (uint32_t x : access_[n].reads)
        if (access_[m].writes.count(x))
          return true;
    return false;
  }

  /// Looks back from the last group for one that `n` may join, stopping at
  /// the first it depends on.
  bool joinExisting(uint32_t n) {
    for (size_t g = groups_.size(); g-- > 0;) {
      if (groups_[g].kernel && !scattering_.count(g) && !writesInto(groups_[g], n) &&
          (!gpu_ || groups_[g].nodes.size() < kGpuKernelNodes)) {
        if (std::optional<size_t> p = legalPrefix(groups_[g], n)) {
          groups_[g].prefix.resize(*p);
          groups_[g].nodes.push_back(n);
          return true;
        }
      }
      if (conflicts(groups_[g], n))
        return false;
    }
    return false;
  }

  /// The longest prefix with which `n` may join `g`, if any.
  std::optional<size_t> legalPrefix(const Group &g, uint32_t n) const {
    const LoopNode &node = graph_.nodes[n];
    const Access &a = access_[n];
    size_t common = 0;
    while (common < g.prefix.size() && common < node.ranges.size() &&
           g.prefix[common] == node.ranges[common])
      ++common;
    int64_t wanted = std::min({parallelWork(g.prefix, g.prefix.size()),
                               parallelWork(node.ranges, node.ranges.size()),
                               kEnoughParallelWork});
    for (size_t p = common; p > 0; --p) {
      // Too little parallel work here and at every shorter prefix.
      if (parallelWork(g.prefix, p) < wanted)
        break;
      // A shorter prefix leaves a reduction more rows still.
      if (gpu_ && combinesRowsOneByOne(g, node, p))
        break;
      if (readsAtSamePoint(g, node, a, p))
        return p;
    }
    if (gpu_ && fitsOneBlock(g, node) && readsWhole(g, a))
      return 0;
    return std::nullopt;
  }

  /// Whether on a GPU the kernel of `g` and `node` over a prefix of `p`
  /// loops would combine a reduction's rows one at a time: a reduction of
  /// kGpuBlockReduction points or more makes the kernel a block per prefix
  /// point, whose threads combine each row of such a reduction together, a
  /// barrier a row, so one reducing more than kOneBlockRows rows per point
  /// would take them in turn. (Rows of smaller reductions go to the threads
  /// one each: a convnext block's 7x7 depthwise window sums, 96 channels of
  /// 49 points, beside its layer norm over the same pixels, channels-last,
  /// took ten times their own kernels' time on an H200 combined row by row.)
  bool combinesRowsOneByOne(const Group &g, const LoopNode &node, size_t p) const {
    auto manyRows = [&](const LoopNode &n) {
      if (n.kind != LoopNode::Kind::Reduction ||
          parallelWork(n.reductionRanges, n.reductionRanges.size()) < kGpuBlockReduction)
        return false;
      std::vector<const SymExpr *> rows(n.ranges.begin() + std::min(p, n.ranges.size()),
                                        n.ranges.end());
      return parallelWork(rows, rows.size()) > kOneBlockRows;
    };
    return manyRows(node) ||
           std::any_of(g.nodes.begin(), g.nodes.end(),
                       [&](uint32_t m) { return manyRows(graph_.nodes[m]); });
  }

  /// Whether `g` and `node` are small enough to run as one block. A scan
  /// runs a kernel one thread a point (docs/gpu.md): with no prefix, one
  /// thread would run every member alone.
  bool fitsOneBlock(const Group &g, const LoopNode &node) const {
    auto fits = [](const LoopNode &n) {
      return !n.scan && (n.kind != LoopNode::Kind::Reduction ||
                         parallelWork(n.ranges, n.ranges.size()) <= kOneBlockRows);
    };
    if (g.nodes.size() >= kOneBlockNodes || !fits(node))
      return false;
    // Each term capped, so that the sum cannot overflow.
    auto capped = [](const LoopNode &n) { return std::min(allPoints(n), kOneBlockPoints + 1); };
    int64_t points = capped(node);
    for (uint32_t m : g.nodes) {
      if (!fits(graph_.nodes[m]))
        return false;
      points += capped(graph_.nodes[m]);
    }
    return points <= kOneBlockPoints;
  }

  /// Whether, in one block that runs the members in turn a barrier apart,
  /// every element `a` reads from a member is the member's own: any index
  /// may then read it, a mask's out-of-range lanes included (a rotary
  /// embedding's halves), as it is all stored before the barrier.
  bool readsWhole(const Group &g, const Access &a) const {
    for (uint32_t m : g.nodes) {
      const LoopNode &writer = graph_.nodes[m];
      if (a.reads.count(writer.output) &&
          (writers_.at(writer.output) != 1 || scatters(writer)))
        return false;
    }
    return true;
  }

  bool readsAtSamePoint(const Group &g, const LoopNode &node, const Access &a,
                        size_t p) const {
    for (uint32_t m : g.nodes) {
      const LoopNode &writer = graph_.nodes[m];
      if (!a.reads.count(writer.output))
        continue;
      // A scatter's points do not own the elements they write.
      if (writers_.at(writer.output) != 1 || scatters(writer))
        return false;
      for (const BodyOp &op : node.body.ops) {
        if (op.kind != BodyOp::Kind::Load || op.buffer != writer.output)
          continue;
        if (!samePrefixPoint(ctx_, writer, node, op.index, g.prefix, p))
          return false;
      }
    }
    return true;
  }

  SymContext &ctx_;
  const LoopGraph &graph_;
  const std::vector<uint32_t> &origin_;
  std::vector<Access> access_;
  std::map<uint32_t, size_t> writers_;
  std::vector<Group> groups_;
  /// On a GPU small nodes may share a kernel without a common prefix, and
  /// kernels hold at most kGpuKernelNodes nodes.
  bool gpu_ = false;
  /// Groups of one scattering node on the CPU, which nothing joins.
  std::set<size_t> scattering_;
};

} // namespace

std::vector<Access> nodeAccesses(const LoopGraph &graph) {
  std::vector<Access> out(graph.nodes.size());
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const LoopNode &node = graph.nodes[n];
    Access &a = out[n];
    if (isLoopNode(node)) {
      a.writes.insert(node.output);
      for (const BodyOp &op : node.body.ops)
        if (op.kind == BodyOp::Kind::Load)
          a.reads.insert(op.buffer);
      continue;
    }
    for (const BufferView &v : node.inputs)
      a.reads.insert(v.buffer);
    for (const BufferView &v : node.outputs)
      a.writes.insert(v.buffer);
  }
  return out;
}

std::vector<Group> fuseNodes(SymContext &ctx, const LoopGraph &graph,
                             const std::vector<uint32_t> &nodes,
                             const std::vector<uint32_t> &origin, bool fuse,
                             TargetDevice device) {
  return Fuser(ctx, graph, origin).run(nodes, fuse, device);
}

} // namespace gc::schedule
