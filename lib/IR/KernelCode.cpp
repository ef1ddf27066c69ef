//===- KernelCode.cpp - What a kernel group's code depends on -------------===//
#include "gc/IR/KernelCode.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

namespace gc {

namespace {

/// Appends `buf` to `order` unless it is there already.
void note(std::vector<uint32_t> &order, uint32_t buf) {
  if (std::find(order.begin(), order.end(), buf) == order.end())
    order.push_back(buf);
}

/// A kernel group with its buffers numbered by their place in
/// kernelBuffers() and every name dropped: what its code is made from.
struct CanonicalKernel {
  KernelGroup group;
  std::vector<LoopNode> nodes;
  std::vector<Buffer> buffers;
  std::vector<InplacePair> inplace;
  bool operator==(const CanonicalKernel &) const = default;
};

CanonicalKernel canonical(const LoopGraph &graph, uint32_t index) {
  const KernelGroup &k = graph.plan.kernels[index];
  std::vector<uint32_t> order = kernelBuffers(graph, k);
  std::map<uint32_t, uint32_t> slot;
  for (uint32_t s = 0; s < order.size(); ++s)
    slot[order[s]] = s;
  CanonicalKernel c;
  c.group = k;
  c.group.name.clear();
  c.group.nodes.clear();
  for (uint32_t n : k.nodes) {
    LoopNode node = graph.nodes[n];
    node.name.clear();
    node.origin.clear();
    node.loc = nullptr; // where in the model does not change the code
    node.output = slot.at(node.output);
    for (BodyOp &op : node.body.ops)
      if (op.kind == BodyOp::Kind::Load)
        op.buffer = slot.at(op.buffer);
    c.nodes.push_back(std::move(node));
  }
  for (uint32_t b : order) {
    Buffer buffer = graph.buffers[b];
    buffer.name.clear();
    c.buffers.push_back(std::move(buffer));
  }
  for (const PlanStep &step : graph.plan.steps)
    if (step.kind == PlanStep::Kind::Kernel && step.index == index)
      for (const InplacePair &pair : step.inplace)
        if (slot.count(pair.output) && slot.count(pair.input))
          c.inplace.push_back({slot[pair.output], slot[pair.input]});
  std::sort(c.inplace.begin(), c.inplace.end(), [](const InplacePair &x, const InplacePair &y) {
    return std::pair(x.output, x.input) < std::pair(y.output, y.input);
  });
  return c;
}

} // namespace

std::vector<uint32_t> kernelBuffers(const LoopGraph &graph, const KernelGroup &k) {
  std::vector<uint32_t> order;
  for (uint32_t n : k.nodes) {
    if (n >= graph.nodes.size())
      continue;
    const LoopNode &node = graph.nodes[n];
    for (const BodyOp &op : node.body.ops)
      if (op.kind == BodyOp::Kind::Load)
        note(order, op.buffer);
    note(order, node.output);
  }
  return order;
}

std::vector<uint32_t> distinctKernels(const LoopGraph &graph) {
  std::vector<uint32_t> out;
  std::set<std::string_view> seen;
  for (uint32_t k = 0; k < graph.plan.kernels.size(); ++k)
    if (seen.insert(graph.plan.kernels[k].name).second)
      out.push_back(k);
  return out;
}

bool sameKernelCode(const LoopGraph &graph, uint32_t a, uint32_t b) {
  return canonical(graph, a) == canonical(graph, b);
}

} // namespace gc
