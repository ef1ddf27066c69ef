//===- FallbackPayload.cpp - What a fallback step carries -----------------===//
#include "gc/RuntimeFallback/FallbackPayload.h"

#include "gc/GraphFile/FlatBufferIO.h"

namespace gc {

namespace {

/// `t` with every expression moved into `ctx`.
TensorType copyType(const TensorType &t, SymContext &ctx) {
  TensorType c = t;
  for (auto *list : {&c.sizes, &c.strides})
    for (const SymExpr *&e : *list)
      e = ctx.copyOf(e);
  if (c.storageOffset)
    c.storageOffset = ctx.copyOf(c.storageOffset);
  return c;
}

} // namespace

std::string encodeFallbackPayload(const LoopNode &node) {
  Module m;
  m.setLevel(Level::Loops);
  LoopGraph &g = m.addLoopGraph(node.name);
  LoopNode n = node;
  uint32_t next = 0;
  for (auto *views : {&n.inputs, &n.outputs})
    for (BufferView &v : *views) {
      v.type = copyType(v.type, m.syms());
      Buffer b;
      b.name = "view" + std::to_string(next);
      b.kind = views == &n.inputs ? BufferKind::Input : BufferKind::Output;
      b.dtype = v.type.dtype;
      b.sizes = v.type.sizes;
      b.strides = v.type.strides;
      g.buffers.push_back(std::move(b));
      v.buffer = next++;
    }
  g.nodes.push_back(std::move(n));
  return writeModuleFlatBuffer(m);
}

Expected<std::unique_ptr<Module>> decodeFallbackPayload(std::span<const uint8_t> payload) {
  Expected<std::unique_ptr<Module>> m = readModuleFlatBuffer(payload, "fallback payload");
  if (!m)
    return m.error();
  const auto &graphs = (*m)->loopGraphs();
  if (graphs.size() != 1 || graphs[0]->nodes.size() != 1)
    return makeError() << "a fallback payload must hold one graph of one node";
  const LoopNode &n = graphs[0]->nodes[0];
  uint32_t next = 0;
  for (const auto *views : {&n.inputs, &n.outputs})
    for (const BufferView &v : *views)
      if (v.buffer != next++)
        return makeError() << "fallback payload of node '" << n.name
                           << "': its views are not its buffers in order";
  if (graphs[0]->buffers.size() != next)
    return makeError() << "fallback payload of node '" << n.name << "': "
                       << graphs[0]->buffers.size() << " buffers for " << next << " views";
  return m;
}

} // namespace gc
