//===- TargetOf.cpp - What a module is compiled for -----------------------===//
#include "gc/IR/TargetOf.h"

#include "gc/IR/LoopIR.h"

namespace gc {

Target targetOf(const Module &m) {
  if (m.target())
    return *m.target();
  Target t;
  for (const auto &g : m.graphs())
    for (const Value *v : g->inputs())
      if (v->type().isTensor() && v->type().tensor.device.kind == DeviceKind::CUDA)
        t.device = TargetDevice::CUDA;
  for (const auto &g : m.loopGraphs())
    for (const LoopBinding &b : g->inputs)
      if (b.type.device.kind == DeviceKind::CUDA)
        t.device = TargetDevice::CUDA;
  return t;
}

} // namespace gc
