//===- RangeSplit.cpp - Splitting a loop where its body branches ----------===//
//
// A slice [lo, hi) of loop k runs the node with i_k replaced by i_k + lo and
// extent hi - lo. Its body is then simplified knowing each Index value's
// bounds: a compare of an Index value with a constant that the bounds decide
// becomes a constant, logical operators and selects on constants fold, a
// load masked by a constant either loses its mask or becomes its masked-off
// value, and what the result no longer uses is dropped.
//
//===----------------------------------------------------------------------===//

#include "RangeSplit.h"

#include "LoopRewrite.h"
#include "gc/IR/IndexSimplify.h"

#include <array>
#include <map>
#include <optional>
#include <set>

namespace gc::schedule {

namespace {

/// More slices than this would turn one kernel into too much code for what
/// deciding the branches saves.
constexpr size_t kMaxSlices = 64;

bool isCompare(ScalarOp op) {
  return op == ScalarOp::Lt || op == ScalarOp::Le || op == ScalarOp::Gt ||
         op == ScalarOp::Ge || op == ScalarOp::Eq || op == ScalarOp::Ne;
}

/// A compare of an Index value with an integer constant, as `index op c`.
struct IndexCompare {
  const SymExpr *index;
  ScalarOp op;
  int64_t c;
};

ScalarOp mirrored(ScalarOp op) {
  switch (op) {
  case ScalarOp::Lt:
    return ScalarOp::Gt;
  case ScalarOp::Le:
    return ScalarOp::Ge;
  case ScalarOp::Gt:
    return ScalarOp::Lt;
  case ScalarOp::Ge:
    return ScalarOp::Le;
  default:
    return op;
  }
}

std::optional<IndexCompare> indexCompare(const std::vector<BodyOp> &ops, const BodyOp &op) {
  if (op.kind != BodyOp::Kind::Compute || !isCompare(op.op) || op.operands.size() != 2)
    return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const BodyOp &x = ops[op.operands[side]];
    const BodyOp &c = ops[op.operands[1 - side]];
    if (x.kind != BodyOp::Kind::Index || c.kind != BodyOp::Kind::Const ||
        isFloatingPoint(c.dtype) || c.dtype == DType::Bool)
      continue;
    return IndexCompare{x.index, side == 0 ? op.op : mirrored(op.op),
                        static_cast<int64_t>(c.constant)};
  }
  return std::nullopt;
}

/// The value of `index op c` for every index in [lo, hi], if one.
std::optional<bool> decide(ScalarOp op, int64_t lo, int64_t hi, int64_t c) {
  auto both = [](bool whenLow, bool whenHigh) -> std::optional<bool> {
    if (whenLow == whenHigh)
      return whenLow;
    return std::nullopt;
  };
  switch (op) {
  case ScalarOp::Lt:
    return both(lo < c, hi < c);
  case ScalarOp::Le:
    return both(lo <= c, hi <= c);
  case ScalarOp::Gt:
    return both(lo > c, hi > c);
  case ScalarOp::Ge:
    return both(lo >= c, hi >= c);
  case ScalarOp::Eq:
    if (lo == c && hi == c)
      return true;
    return c < lo || c > hi ? std::optional<bool>(false) : std::nullopt;
  case ScalarOp::Ne:
    if (lo == c && hi == c)
      return false;
    return c < lo || c > hi ? std::optional<bool>(true) : std::nullopt;
  default:
    return std::nullopt;
  }
}

/// The points of loop `k` where a compare in `node`'s body changes value,
/// strictly inside (0, extent).
std::set<int64_t> breakpoints(const LoopNode &node, size_t k, int64_t extent) {
  std::set<int64_t> out;
  std::string var = loopVar(false, k);
  for (const BodyOp &op : node.body.ops) {
    std::optional<IndexCompare> cmp = indexCompare(node.body.ops, op);
    if (!cmp || !cmp->index->isSymbol() || cmp->index->symbolName() != var)
      continue;
    // i < c and i >= c change at c; i <= c and i > c at c + 1; i == c at both.
    std::vector<int64_t> at;
    if (cmp->op == ScalarOp::Lt || cmp->op == ScalarOp::Ge)
      at = {cmp->c};
    else if (cmp->op == ScalarOp::Le || cmp->op == ScalarOp::Gt)
      at = {cmp->c + 1};
    else
      at = {cmp->c, cmp->c + 1};
    for (int64_t p : at)
      if (p > 0 && p < extent)
        out.insert(p);
  }
  return out;
}

/// `body` with what the Index bounds under `ranges` decide folded away.
Body foldDecided(const Body &body, const VarRanges &ranges) {
  std::vector<std::optional<bool>> known(body.ops.size());
  std::vector<uint32_t> alias(body.ops.size());
  std::vector<BodyOp> ops = body.ops;
  auto boolConst = [](bool v) {
    BodyOp c;
    c.kind = BodyOp::Kind::Const;
    c.dtype = DType::Bool;
    c.constant = v ? 1 : 0;
    return c;
  };
  for (uint32_t id = 0; id < ops.size(); ++id) {
    alias[id] = id;
    BodyOp &op = ops[id];
    for (uint32_t &o : op.operands)
      o = alias[o];
    if (op.mask >= 0)
      op.mask = static_cast<int32_t>(alias[op.mask]);
    for (uint32_t &o : op.indirect)
      o = alias[o];
    if (op.kind == BodyOp::Kind::Const && op.dtype == DType::Bool)
      known[id] = op.constant != 0;
    if (op.kind == BodyOp::Kind::Load && op.mask >= 0 && known[op.mask]) {
      if (*known[op.mask]) {
        op.mask = -1;
      } else {
        BodyOp c;
        c.kind = BodyOp::Kind::Const;
        c.dtype = op.dtype;
        c.constant = op.constant;
        op = c;
      }
      continue;
    }
    if (op.kind != BodyOp::Kind::Compute)
      continue;
    auto k = [&](size_t i) { return known[op.operands[i]]; };
    std::optional<bool> value;
    if (std::optional<IndexCompare> cmp = indexCompare(ops, op)) {
      if (std::optional<SymRange> b = boundsOf(cmp->index, ranges);
          b && b->min != SymRange::kUnbounded && b->max != SymRange::kUnbounded)
        value = decide(cmp->op, b->min, b->max, cmp->c);
    } else if (op.op == ScalarOp::LogicalAnd) {
      if (k(0) == false || k(1) == false)
        value = false;
      else if (k(0) && k(1))
        value = true;
    } else if (op.op == ScalarOp::LogicalOr) {
      if (k(0) == true || k(1) == true)
        value = true;
      else if (k(0) && k(1))
        value = false;
    } else if (op.op == ScalarOp::LogicalNot && k(0)) {
      value = !*k(0);
    } else if (op.op == ScalarOp::Where && k(0)) {
      alias[id] = op.operands[*k(0) ? 1 : 2];
      known[id] = known[alias[id]];
      continue;
    }
    if (value && op.dtype == DType::Bool) {
      op = boolConst(*value);
      known[id] = value;
    }
  }
  // Keep what the result still uses, in the original order.
  Body out{std::move(ops), alias[body.result]};
  keepNeededOps(out, std::array{out.result});
  return out;
}

/// Whether every operand of `body` comes before its use (the folding above
/// walks the ops once, in order).
bool inOrder(const Body &body) {
  for (uint32_t id = 0; id < body.ops.size(); ++id) {
    const BodyOp &op = body.ops[id];
    for (uint32_t o : op.operands)
      if (o >= id)
        return false;
    for (uint32_t o : op.indirect)
      if (o >= id)
        return false;
    if (op.mask >= static_cast<int32_t>(id))
      return false;
  }
  return body.result < body.ops.size();
}

bool splittable(const LoopNode &node) {
  if (node.kind != LoopNode::Kind::Pointwise || scatters(node) || !inOrder(node.body))
    return false;
  for (const BodyOp &op : node.body.ops)
    if (op.kind == BodyOp::Kind::Load && op.buffer == node.output)
      return false;
  return true;
}

/// The loop to split and its cut points: the loop with the most.
std::optional<std::pair<size_t, std::set<int64_t>>> chooseSplit(const LoopNode &node) {
  std::optional<std::pair<size_t, std::set<int64_t>>> best;
  for (size_t k = 0; k < node.ranges.size(); ++k) {
    if (!node.ranges[k]->isConst())
      continue;
    std::set<int64_t> cuts = breakpoints(node, k, node.ranges[k]->constant());
    if (!cuts.empty() && cuts.size() < kMaxSlices &&
        (!best || cuts.size() > best->second.size()))
      best = {{k, std::move(cuts)}};
  }
  return best;
}

} // namespace

std::vector<uint32_t> splitAtIndexBounds(SymContext &ctx, LoopGraph &graph) {
  std::vector<LoopNode> nodes;
  std::vector<uint32_t> origin;
  for (uint32_t n = 0; n < graph.nodes.size(); ++n) {
    LoopNode &node = graph.nodes[n];
    std::optional<std::pair<size_t, std::set<int64_t>>> split;
    if (splittable(node))
      split = chooseSplit(node);
    if (!split) {
      nodes.push_back(std::move(node));
      origin.push_back(n);
      continue;
    }
    auto [k, cuts] = *split;
    std::vector<int64_t> bounds{0};
    bounds.insert(bounds.end(), cuts.begin(), cuts.end());
    bounds.push_back(node.ranges[k]->constant());
    std::string var = loopVar(false, k);
    for (size_t s = 0; s + 1 < bounds.size(); ++s) {
      LoopNode slice = node;
      slice.name = node.name + ".slice" + std::to_string(s);
      slice.ranges[k] = ctx.constant(bounds[s + 1] - bounds[s]);
      std::map<std::string, const SymExpr *> shift{
          {var, ctx.add(ctx.symbol(var), ctx.constant(bounds[s]))}};
      slice.storeIndex = substitute(ctx, slice.storeIndex, shift);
      for (BodyOp &op : slice.body.ops)
        if (op.index)
          op.index = substitute(ctx, op.index, shift);
      slice.body = foldDecided(slice.body, nodeRanges(ctx, slice));
      simplifyNodeIndices(ctx, slice);
      nodes.push_back(std::move(slice));
      origin.push_back(n);
    }
  }
  graph.nodes = std::move(nodes);
  return origin;
}

} // namespace gc::schedule
