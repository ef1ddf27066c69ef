//===- Calls.cpp - Library calls ------------------------------------------===//
//
// Ops that run as one call into a library (oneDNN, cuBLASLt, cuDNN, the
// runtime's fused attention): an Extern node on buffers, whose result the
// pointwise ops after it may fold into the call as post-ops
// (lib/Schedule/PostOps.h).
//
//===----------------------------------------------------------------------===//
#include "../GraphLowerer.h"

#include "gc/IR/ExternOps.h"

namespace gc::lower {

namespace {

Error externCall(GraphLowerer &lowerer, const Node &n, const OpLowering &) {
  return lowerer.callNode(n, LoopNode::Kind::Extern);
}

} // namespace

/// One row per GC_EXTERN_OP row. An op outside the core set reaches gc-lower
/// only where an inference pipeline kept it whole (runsWhole).
void registerCallLowerings(LoweringRegistry &r) {
  std::vector<OpLowering> rows;
  for (OpId op : externOps())
    rows.push_back(OpLowering{op, &externCall});
  r.add(rows);
}

} // namespace gc::lower
