//===- LoopRewrite.cpp - Loop order and loop collapse of one node ---------===//

#include "LoopRewrite.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace gc::schedule {

namespace {

using Substitution = std::map<std::string, const SymExpr *>;

void rewriteIndices(SymContext &ctx, LoopNode &node, const Substitution &sub) {
  node.storeIndex = substitute(ctx, node.storeIndex, sub);
  for (BodyOp &op : node.body.ops)
    if (op.index)
      op.index = substitute(ctx, op.index, sub);
}

std::vector<const SymExpr *> &loopRanges(LoopNode &node, bool reduction) {
  return reduction ? node.reductionRanges : node.ranges;
}

/// How far apart consecutive values of a loop variable put an expression's
/// element: the absolute constant coefficient, or kUnknownStride when the
/// coefficient is symbolic or the expression is not affine in it.
constexpr int64_t kUnknownStride = std::numeric_limits<int64_t>::max();

int64_t strideOf(SymContext &ctx, const SymExpr *e, const std::string &var) {
  const SymExpr *c = affineCoefficient(ctx, e, var);
  if (!c || !c->isConst())
    return kUnknownStride;
  return c->constant() < 0 ? -c->constant() : c->constant();
}

/// The order key of an outer loop: loops that do not move the store (only
/// extent-1 loops can do that) stay outermost, then larger store strides,
/// then larger summed load strides.
struct LoopKey {
  int64_t store;
  int64_t loads;
  auto operator<=>(const LoopKey &) const = default;
};

LoopKey keyOf(SymContext &ctx, const LoopNode &node, const std::string &var) {
  int64_t store = strideOf(ctx, node.storeIndex, var);
  if (store == 0)
    store = kUnknownStride;
  int64_t loads = 0;
  for (const BodyOp &op : node.body.ops) {
    if (op.kind != BodyOp::Kind::Load)
      continue;
    int64_t s = strideOf(ctx, op.index, var);
    loads = s == kUnknownStride || loads > kUnknownStride - s ? kUnknownStride
                                                              : loads + s;
  }
  return {store, loads};
}

} // namespace

std::string loopVar(bool reduction, size_t k) {
  return (reduction ? "r" : "i") + std::to_string(k);
}

bool isLoopSymbol(const std::string &name) {
  if (name.size() < 2 || (name[0] != 'i' && name[0] != 'r' && name[0] != 't'))
    return false;
  return std::all_of(name.begin() + 1, name.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

bool mentionsLoopSymbol(const SymExpr *e) {
  if (e->isSymbol())
    return isLoopSymbol(e->symbolName());
  for (const SymExpr *op : e->operands())
    if (mentionsLoopSymbol(op))
      return true;
  return false;
}

VarRanges nodeRanges(const SymContext &ctx, const LoopNode &node) {
  VarRanges ranges = ctx.ranges();
  VarRanges sizes = ctx.ranges();
  auto addLoops = [&](const std::vector<const SymExpr *> &extents,
                      bool reduction) {
    for (size_t k = 0; k < extents.size(); ++k) {
      std::optional<SymRange> b = boundsOf(extents[k], sizes);
      int64_t hi = !b || b->max == SymRange::kUnbounded ? SymRange::kUnbounded
                                                        : std::max<int64_t>(b->max - 1, 0);
      ranges[loopVar(reduction, k)] = SymRange{0, hi};
    }
  };
  addLoops(node.ranges, false);
  addLoops(node.reductionRanges, true);
  return ranges;
}

const SymExpr *extentProduct(SymContext &ctx, const std::vector<const SymExpr *> &extents) {
  const SymExpr *n = ctx.constant(1);
  for (const SymExpr *e : extents)
    n = ctx.mul(n, e);
  return n;
}

std::vector<const SymExpr *> indexExprs(const LoopNode &node) {
  std::vector<const SymExpr *> out;
  if (node.storeIndex)
    out.push_back(node.storeIndex);
  for (const BodyOp &op : node.body.ops)
    if (op.index)
      out.push_back(op.index);
  return out;
}

void simplifyNodeIndices(SymContext &ctx, LoopNode &node) {
  VarRanges ranges = nodeRanges(ctx, node);
  VarExtents extents;
  for (size_t k = 0; k < node.ranges.size(); ++k)
    extents[loopVar(false, k)] = node.ranges[k];
  for (size_t k = 0; k < node.reductionRanges.size(); ++k)
    extents[loopVar(true, k)] = node.reductionRanges[k];
  node.storeIndex = simplifyIndex(ctx, node.storeIndex, ranges, extents);
  for (BodyOp &op : node.body.ops)
    if (op.index)
      op.index = simplifyIndex(ctx, op.index, ranges, extents);
}

void dropUnitLoops(SymContext &ctx, LoopNode &node) {
  const SymExpr *one = ctx.constant(1);
  std::vector<const SymExpr *> kept;
  Substitution sub;
  for (size_t k = 0; k < node.ranges.size(); ++k) {
    if (node.ranges[k] == one) {
      sub[loopVar(false, k)] = ctx.constant(0);
      continue;
    }
    sub[loopVar(false, k)] = ctx.symbol(loopVar(false, kept.size()));
    kept.push_back(node.ranges[k]);
  }
  if (kept.size() == node.ranges.size() || kept.empty())
    return;
  node.ranges = std::move(kept);
  rewriteIndices(ctx, node, sub);
}

void reorderLoops(SymContext &ctx, LoopNode &node) {
  size_t n = node.ranges.size();
  std::vector<LoopKey> keys;
  for (size_t k = 0; k < n; ++k)
    keys.push_back(keyOf(ctx, node, loopVar(false, k)));
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&keys](size_t a, size_t b) { return keys[a] > keys[b]; });
  if (std::is_sorted(order.begin(), order.end()))
    return;
  Substitution sub;
  std::vector<const SymExpr *> ranges;
  for (size_t k = 0; k < n; ++k) {
    sub[loopVar(false, order[k])] = ctx.symbol(loopVar(false, k));
    ranges.push_back(node.ranges[order[k]]);
  }
  node.ranges = std::move(ranges);
  rewriteIndices(ctx, node, sub);
}

bool canCollapse(SymContext &ctx, const LoopNode &node, bool reduction,
                 size_t k) {
  const std::vector<const SymExpr *> &extents =
      reduction ? node.reductionRanges : node.ranges;
  if (k + 1 >= extents.size())
    return false;
  const SymExpr *one = ctx.constant(1);
  if (extents[k] == one || extents[k + 1] == one)
    return true;
  std::string outer = loopVar(reduction, k), inner = loopVar(reduction, k + 1);
  for (const SymExpr *e : indexExprs(node)) {
    const SymExpr *co = affineCoefficient(ctx, e, outer);
    const SymExpr *ci = affineCoefficient(ctx, e, inner);
    if (!co || !ci || co != ctx.mul(ci, extents[k + 1]))
      return false;
  }
  return true;
}

void collapse(SymContext &ctx, LoopNode &node, bool reduction, size_t k) {
  std::vector<const SymExpr *> &extents = loopRanges(node, reduction);
  const SymExpr *one = ctx.constant(1);
  const SymExpr *merged = ctx.symbol(loopVar(reduction, k));
  const SymExpr *zero = ctx.constant(0);
  Substitution sub;
  // With coef(outer) == coef(inner) * extent(inner), the pair contributes
  // coef(inner) * (extent(inner)*outer + inner): the inner variable's term
  // with the merged variable in its place. An extent-1 loop is always 0.
  if (extents[k + 1] == one) {
    sub[loopVar(reduction, k)] = merged;
    sub[loopVar(reduction, k + 1)] = zero;
  } else {
    sub[loopVar(reduction, k)] = zero;
    sub[loopVar(reduction, k + 1)] = merged;
  }
  for (size_t m = k + 2; m < extents.size(); ++m)
    sub[loopVar(reduction, m)] = ctx.symbol(loopVar(reduction, m - 1));
  extents[k] = ctx.mul(extents[k], extents[k + 1]);
  extents.erase(extents.begin() + k + 1);
  rewriteIndices(ctx, node, sub);
}

} // namespace gc::schedule
