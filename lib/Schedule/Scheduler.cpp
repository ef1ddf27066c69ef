//===- Scheduler.cpp - Fusion of loop nodes into kernels ------------------===//
//
// The passes run in this order: loop order per node, without its loops of
// extent 1 (so that fusion sees contiguous loops and equal prefixes), extern
// post-ops, fusion, then loop collapse inside each kernel (collapsing the
// shared prefix only where every member agrees, so that the group keeps one
// prefix), then the plan's steps, and last the sharing of kernels between
// groups of the same code.
//
//===----------------------------------------------------------------------===//

#include "gc/Schedule/Scheduler.h"

#include "Fusion.h"
#include "LoopRewrite.h"
#include "PostOps.h"
#include "RangeSplit.h"
#include "StridedSum.h"

#include "gc/IR/Describe.h"
#include "gc/IR/KernelCode.h"
#include "gc/IR/OpSchema.h"

#include <algorithm>
#include <map>
#include <set>

namespace gc {

using namespace schedule;

namespace {

bool isLoopNode(const LoopNode &n) {
  return n.kind == LoopNode::Kind::Pointwise ||
         n.kind == LoopNode::Kind::Reduction;
}

/// Collapses the group's shared prefix where all members allow it, then
/// each member's own loops.
void collapseGroup(SymContext &ctx, LoopGraph &graph, Group &group) {
  for (size_t k = 0; k + 1 < group.prefix.size();) {
    bool all = std::all_of(group.nodes.begin(), group.nodes.end(),
                           [&](uint32_t n) {
                             return canCollapse(ctx, graph.nodes[n], false, k);
                           });
    if (!all) {
      ++k;
      continue;
    }
    for (uint32_t n : group.nodes)
      collapse(ctx, graph.nodes[n], false, k);
    group.prefix[k] = ctx.mul(group.prefix[k], group.prefix[k + 1]);
    group.prefix.erase(group.prefix.begin() + k + 1);
  }
  for (uint32_t n : group.nodes) {
    LoopNode &node = graph.nodes[n];
    for (size_t k = group.prefix.size(); k + 1 < node.ranges.size();) {
      if (canCollapse(ctx, node, false, k))
        collapse(ctx, node, false, k);
      else
        ++k;
    }
    for (size_t k = 0; k + 1 < node.reductionRanges.size();) {
      if (canCollapse(ctx, node, true, k))
        collapse(ctx, node, true, k);
      else
        ++k;
    }
  }
}

/// Whether every load of `buffer` in the group is at the store position of
/// `node`, unmasked and direct.
bool readOnlyAtStore(const LoopGraph &graph, const Group &group,
                     uint32_t node, uint32_t buffer) {
  for (uint32_t m : group.nodes) {
    for (const BodyOp &op : graph.nodes[m].body.ops) {
      if (op.kind != BodyOp::Kind::Load || op.buffer != buffer)
        continue;
      if (m != node || op.index != graph.nodes[m].storeIndex || op.mask >= 0 ||
          !op.indirect.empty())
        return false;
    }
  }
  return true;
}

std::vector<InplacePair> inplaceCandidates(SymContext &ctx,
                                           const LoopGraph &graph,
                                           const Group &group) {
  std::set<std::pair<uint32_t, uint32_t>> pairs;
  for (uint32_t n : group.nodes) {
    const LoopNode &node = graph.nodes[n];
    const Buffer &out = graph.buffers[node.output];
    // A scatter writes elements other points' loads may still need.
    if (out.kind != BufferKind::Intermediate || scatters(node))
      continue;
    for (const BodyOp &op : node.body.ops) {
      if (op.kind != BodyOp::Kind::Load || op.buffer == node.output)
        continue;
      const Buffer &in = graph.buffers[op.buffer];
      if (in.kind == BufferKind::Intermediate &&
          dtypeSize(in.dtype) == dtypeSize(out.dtype) &&
          extentProduct(ctx, in.sizes) == extentProduct(ctx, out.sizes) &&
          readOnlyAtStore(graph, group, n, op.buffer))
        pairs.insert({node.output, op.buffer});
    }
  }
  std::vector<InplacePair> out;
  for (auto [o, i] : pairs)
    out.push_back({o, i});
  return out;
}

void collectSymbols(const SymExpr *e, std::set<std::string> &out) {
  if (!e)
    return;
  if (e->isSymbol() && !isLoopSymbol(e->symbolName()))
    out.insert(e->symbolName());
  for (const SymExpr *op : e->operands())
    collectSymbols(op, out);
}

void collectSymbols(const TensorType &t, std::set<std::string> &out) {
  for (const SymExpr *e : t.sizes)
    collectSymbols(e, out);
  for (const SymExpr *e : t.strides)
    collectSymbols(e, out);
  collectSymbols(t.storageOffset, out);
}

std::vector<std::string> sizeSymbols(const LoopGraph &graph) {
  std::set<std::string> out;
  for (const Buffer &b : graph.buffers) {
    for (const SymExpr *e : b.sizes)
      collectSymbols(e, out);
    for (const SymExpr *e : b.strides)
      collectSymbols(e, out);
  }
  for (const LoopNode &n : graph.nodes) {
    for (const SymExpr *e : n.ranges)
      collectSymbols(e, out);
    for (const SymExpr *e : n.reductionRanges)
      collectSymbols(e, out);
    for (const SymExpr *e : indexExprs(n))
      collectSymbols(e, out);
    for (const BufferView &v : n.inputs)
      collectSymbols(v.type, out);
    for (const BufferView &v : n.outputs)
      collectSymbols(v.type, out);
  }
  for (const LoopBinding &b : graph.inputs)
    collectSymbols(b.type, out);
  for (const LoopBinding &b : graph.outputs)
    collectSymbols(b.type, out);
  return {out.begin(), out.end()};
}

/// What groups of the same code certainly agree on, to compare only those
/// in full: node kinds and body and range sizes.
std::vector<size_t> fingerprint(const LoopGraph &graph, const KernelGroup &k) {
  std::vector<size_t> print = {k.parallelRanges.size()};
  for (uint32_t n : k.nodes) {
    const LoopNode &node = graph.nodes[n];
    print.insert(print.end(), {static_cast<size_t>(node.kind), node.ranges.size(),
                               node.reductionRanges.size(), node.body.ops.size()});
  }
  return print;
}

/// Renames every kernel group that compiles to the same code as an earlier
/// group after the first such group.
void shareKernels(LoopGraph &graph) {
  std::vector<KernelGroup> &kernels = graph.plan.kernels;
  std::map<std::vector<size_t>, std::vector<uint32_t>> firsts;
  for (uint32_t k = 0; k < kernels.size(); ++k) {
    std::vector<uint32_t> &candidates = firsts[fingerprint(graph, kernels[k])];
    auto same = std::find_if(candidates.begin(), candidates.end(),
                             [&](uint32_t first) { return sameKernelCode(graph, first, k); });
    if (same == candidates.end())
      candidates.push_back(k);
    else
      kernels[k].name = kernels[*same].name;
  }
}

} // namespace

Error scheduleGraph(SymContext &ctx, LoopGraph &graph,
                    const ScheduleOptions &options) {
  for (LoopNode &node : graph.nodes) {
    if (!isLoopNode(node))
      continue;
    if (!node.storeIndex)
      return makeError() << "graph '" << graph.name << "': " << describeNode(node)
                         << " has no store index";
    dropUnitLoops(ctx, node);
    simplifyNodeIndices(ctx, node);
    // A scatter keeps its points in order: where several write one element,
    // the order decides the result (the last write wins, a float sum rounds).
    if (!scatters(node))
      reorderLoops(ctx, node);
  }
  // Serial on a GPU, the accumulating node would leave the device idle.
  if (options.device == TargetDevice::CPU)
    accumulateStridedSums(ctx, graph);
  if (options.externPostOps) {
    // A node folded into an extern's post-ops no longer runs: drop it, so
    // that every node left is in exactly one step.
    std::set<uint32_t> folded = foldPostOps(ctx, graph, options.device);
    std::vector<LoopNode> kept;
    for (uint32_t n = 0; n < graph.nodes.size(); ++n)
      if (!folded.count(n))
        kept.push_back(std::move(graph.nodes[n]));
    graph.nodes = std::move(kept);
  }
  std::vector<uint32_t> origin(graph.nodes.size());
  for (uint32_t n = 0; n < graph.nodes.size(); ++n)
    origin[n] = n;
  // On a GPU every slice would be a launch of its own.
  if (options.device == TargetDevice::CPU)
    origin = splitAtIndexBounds(ctx, graph);
  std::vector<uint32_t> order(graph.nodes.size());
  for (uint32_t n = 0; n < graph.nodes.size(); ++n)
    order[n] = n;

  std::vector<Group> groups = fuseNodes(ctx, graph, order, origin, options.fuse, options.device);
  Plan &plan = graph.plan;
  plan.kernels.clear();
  plan.steps.clear();
  for (Group &group : groups) {
    if (!group.kernel) {
      LoopNode::Kind kind = graph.nodes[group.nodes[0]].kind;
      plan.steps.push_back({kind == LoopNode::Kind::Extern   ? PlanStep::Kind::Extern
                            : kind == LoopNode::Kind::Call ? PlanStep::Kind::Call
                                                           : PlanStep::Kind::Fallback,
                            group.nodes[0], {}, {}});
      continue;
    }
    collapseGroup(ctx, graph, group);
    uint32_t index = static_cast<uint32_t>(plan.kernels.size());
    plan.kernels.push_back({graph.name + "_k" + std::to_string(index),
                            group.nodes, group.prefix});
    plan.steps.push_back({PlanStep::Kind::Kernel, index, {},
                          inplaceCandidates(ctx, graph, group)});
  }
  plan.symbols = sizeSymbols(graph);
  if (options.shareKernels)
    shareKernels(graph);
  return Error::success();
}

} // namespace gc
