//===- Calls.cpp - Library calls ------------------------------------------===//
//
// Ops that run as one call into a library (oneDNN, cuBLASLt, cuDNN, the CPU
// runtime's fused attention): an Extern node on buffers, whose result the
// pointwise ops after it may fold into the call as post-ops
// (lib/Schedule/PostOps.h).
//
//===----------------------------------------------------------------------===//
#include "../GraphLowerer.h"

#include "gc/IR/OpId.h"

namespace gc::lower {

namespace {

Error externCall(GraphLowerer &lowerer, const Node &n, const OpLowering &) {
  return lowerer.callNode(n, LoopNode::Kind::Extern);
}

const OpLowering kRows[] = {
    OpLowering{ops::aten_mm_default, &externCall},
    OpLowering{ops::aten_bmm_default, &externCall},
    OpLowering{ops::aten_convolution_default, &externCall},
    // Only where the CPU pipeline kept it whole (gc/IR/CpuSteps.h).
    OpLowering{ops::aten_scaled_dot_product_attention_default, &externCall},
};

} // namespace

void registerCallLowerings(LoweringRegistry &r) { r.add(kRows); }

} // namespace gc::lower
