//===- StridedSum.cpp - Sums whose kept loop is the contiguous one --------===//
#include "StridedSum.h"

#include "LoopRewrite.h"
#include "gc/IR/IndexSimplify.h"

#include <map>
#include <optional>

namespace gc::schedule {

namespace {

/// The constant coefficient of `var` in `e`, or nullopt.
std::optional<int64_t> constantStride(SymContext &ctx, const SymExpr *e, const std::string &var) {
  const SymExpr *c = affineCoefficient(ctx, e, var);
  if (!c || !c->isConst())
    return std::nullopt;
  return c->constant();
}

bool accumulatesRowByRow(SymContext &ctx, const LoopGraph &graph, const LoopNode &node) {
  if (node.kind != LoopNode::Kind::Reduction || node.reduce != ReduceKind::Sum || node.scan ||
      scatters(node) || node.ranges.empty() || node.reductionRanges.empty() ||
      node.body.result >= node.body.ops.size() || graph.buffers[node.output].dtype != DType::Float32 ||
      node.body.ops[node.body.result].dtype != DType::Float32)
    return false;
  std::string kept = loopVar(false, node.ranges.size() - 1);
  if (constantStride(ctx, node.storeIndex, kept) != 1)
    return false;
  bool loads = false;
  for (const BodyOp &op : node.body.ops) {
    if (op.kind != BodyOp::Kind::Load)
      continue;
    if (!op.indirect.empty() || op.mask >= 0 || constantStride(ctx, op.index, kept) != 1)
      return false;
    for (size_t k = 0; k < node.reductionRanges.size(); ++k) {
      std::optional<int64_t> s = constantStride(ctx, op.index, loopVar(true, k));
      if (!s || *s == 1 || *s == -1)
        return false;
    }
    loads = true;
  }
  return loads;
}

} // namespace

void accumulateStridedSums(SymContext &ctx, LoopGraph &graph) {
  std::vector<LoopNode> nodes;
  for (LoopNode &node : graph.nodes) {
    if (!accumulatesRowByRow(ctx, graph, node)) {
      nodes.push_back(std::move(node));
      continue;
    }
    LoopNode zero;
    zero.kind = LoopNode::Kind::Pointwise;
    zero.name = node.name + "_zero";
    zero.origin = node.origin;
    zero.ranges = node.ranges;
    zero.output = node.output;
    zero.storeIndex = node.storeIndex;
    zero.body.ops = {BodyOp{BodyOp::Kind::Const}};
    nodes.push_back(std::move(zero));

    // Reduction loop r<k> becomes loop i<k>, kept loop i<k> becomes
    // i<reductions + k>: the reduction loops outermost.
    size_t reductions = node.reductionRanges.size();
    std::map<std::string, const SymExpr *> sub;
    for (size_t k = 0; k < reductions; ++k)
      sub[loopVar(true, k)] = ctx.symbol(loopVar(false, k));
    for (size_t k = 0; k < node.ranges.size(); ++k)
      sub[loopVar(false, k)] = ctx.symbol(loopVar(false, reductions + k));
    node.kind = LoopNode::Kind::Pointwise;
    node.ranges.insert(node.ranges.begin(), node.reductionRanges.begin(),
                       node.reductionRanges.end());
    node.reductionRanges.clear();
    node.combine = StoreCombine::Add;
    node.storeIndex = substitute(ctx, node.storeIndex, sub);
    for (BodyOp &op : node.body.ops)
      if (op.index)
        op.index = substitute(ctx, op.index, sub);
    nodes.push_back(std::move(node));
  }
  graph.nodes = std::move(nodes);
}

} // namespace gc::schedule
