//===- StepWork.cpp - The work of a plan step, for the profile's roofline --===//
#include "gc/Plan/StepWork.h"

#include "gc/IR/ExternOps.h"

#include <algorithm>

namespace gc {

std::optional<int64_t> SizeSum::constant() const {
  int64_t sum = 0;
  for (const Term &t : terms) {
    int64_t product = t.coefficient;
    for (const SymExpr *f : t.factors) {
      if (!f->isConst())
        return std::nullopt;
      product *= f->constant();
    }
    sum += product;
  }
  return sum;
}

namespace {

std::vector<const SymExpr *> concat(std::vector<const SymExpr *> a,
                                    const std::vector<const SymExpr *> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// Adds each buffer of `buffers` once, whole.
void addBuffers(const LoopGraph &g, const std::vector<uint32_t> &buffers, SizeSum &bytes) {
  for (uint32_t b : buffers)
    if (b < g.buffers.size())
      bytes.add(dtypeSize(g.buffers[b].dtype), g.buffers[b].sizes);
}

void addOnce(std::vector<uint32_t> &set, uint32_t b) {
  if (std::find(set.begin(), set.end(), b) == set.end())
    set.push_back(b);
}

StepWork kernelWork(const LoopGraph &g, const KernelGroup &k) {
  StepWork w;
  std::vector<uint32_t> loaded, stored;
  for (uint32_t n : k.nodes) {
    if (n >= g.nodes.size())
      continue;
    const LoopNode &node = g.nodes[n];
    int64_t ops = 0;
    for (const BodyOp &op : node.body.ops) {
      if (op.kind == BodyOp::Kind::Compute && isFloatingPoint(op.dtype))
        ++ops;
      if (op.kind == BodyOp::Kind::Load)
        addOnce(loaded, op.buffer);
    }
    const Body &body = node.body;
    if (node.kind == LoopNode::Kind::Reduction && body.result < body.ops.size() &&
        isFloatingPoint(body.ops[body.result].dtype))
      ++ops;
    if (ops)
      w.flops.add(ops, concat(node.ranges, node.reductionRanges));
    addOnce(stored, node.output);
  }
  addBuffers(g, loaded, w.bytes);
  addBuffers(g, stored, w.bytes);
  return w;
}

/// The reduced length of a library call's output element (its row's WORK
/// column), or nothing for ops it does not count.
std::optional<std::vector<const SymExpr *>> reducedLength(const LoopNode &node) {
  if (node.inputs.size() < 2)
    return std::nullopt;
  const ExternOp *ext = externOp(node.op);
  if (!ext)
    return std::nullopt;
  const TensorType &a = node.inputs[0].type, &b = node.inputs[1].type;
  if (ext->work == ExternWork::InnerOfSelf && !a.sizes.empty())
    return std::vector<const SymExpr *>{a.sizes.back()};
  if (ext->work == ExternWork::WeightTail && b.sizes.size() > 1)
    return std::vector<const SymExpr *>(b.sizes.begin() + 1, b.sizes.end());
  return std::nullopt;
}

StepWork opWork(const LoopNode &node, bool external) {
  StepWork w;
  std::vector<uint32_t> seen;
  for (const auto *views : {&node.inputs, &node.outputs})
    for (const BufferView &v : *views) {
      if (std::find(seen.begin(), seen.end(), v.buffer) != seen.end())
        continue;
      seen.push_back(v.buffer);
      w.bytes.add(dtypeSize(v.type.dtype), v.type.sizes);
    }
  if (!external || node.outputs.empty())
    return w;
  const TensorType &out = node.outputs[0].type;
  if (std::optional<std::vector<const SymExpr *>> k = reducedLength(node)) {
    // A gated pair computes its product on each of its two weights.
    bool gated = std::any_of(node.postOps.begin(), node.postOps.end(),
                             [](const PostOp &p) { return p.kind == PostOp::Kind::GatedSilu; });
    w.flops.add(gated ? 4 : 2, concat(out.sizes, *k));
  }
  if (const ExternOp *ext = externOp(node.op);
      ext && ext->work == ExternWork::Attention && node.inputs.size() >= 2 && !out.sizes.empty()) {
    const std::vector<const SymExpr *> &key = node.inputs[1].type.sizes;
    if (key.size() >= 2) {
      const SymExpr *keys = key[key.size() - 2], *depth = key.back();
      std::vector<const SymExpr *> rows(out.sizes.begin(), out.sizes.end() - 1);
      w.flops.add(2, concat(out.sizes, {keys}));          // scores times values
      w.flops.add(2, concat(rows, {keys, depth}));        // query times keys
    }
  }
  if (!node.postOps.empty())
    w.flops.add(static_cast<int64_t>(node.postOps.size()), out.sizes);
  return w;
}

} // namespace

StepWork stepWork(const LoopGraph &graph, const PlanStep &step) {
  switch (step.kind) {
  case PlanStep::Kind::Kernel:
    return step.index < graph.plan.kernels.size()
               ? kernelWork(graph, graph.plan.kernels[step.index])
               : StepWork{};
  case PlanStep::Kind::Extern:
  case PlanStep::Kind::Fallback:
    return step.index < graph.nodes.size()
               ? opWork(graph.nodes[step.index], step.kind == PlanStep::Kind::Extern)
               : StepWork{};
  case PlanStep::Kind::Call:
    return {};
  }
  return {};
}

} // namespace gc
