//===- ReferenceStep.h - A loop node run by its reference kernel -*- C++ -*-===//
//
// Fallback nodes, and extern nodes oneDNN cannot take, run the reference
// kernel of their core op (through gc-lower's ReferenceCall). Tensors own
// their storage, so views of buffers are copied into tensors, and the
// results, after the node's post-ops, copied back into the output views.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIMEFALLBACK_REFERENCESTEP_H
#define GC_LIB_RUNTIMEFALLBACK_REFERENCESTEP_H

#include "gc/Runtime/Fallback.h"
#include "gc/Runtime/StridedLayout.h"

#include "gc/IR/LoopIR.h"
#include "gc/Interp/ReferenceCall.h"

#include <memory>

namespace gc {

class ReferenceStep {
public:
  /// Errors if no reference kernel exists for the node's op.
  static Expected<std::unique_ptr<ReferenceStep>> create(const LoopNode &node);

  /// `inputs` and `outputs`: the evaluated layouts of the node's views.
  Error run(char *const *buffers, const std::vector<StridedLayout> &inputs,
            const std::vector<StridedLayout> &outputs) const;
  /// As run, with the output layouts `place` gives for the results' sizes.
  Error runSized(char *const *buffers, const std::vector<StridedLayout> &inputs,
                 const FallbackCall::PlaceOutputs &place) const;

private:
  ReferenceStep(const LoopNode &node, ReferenceCall call) : node_(node), call_(std::move(call)) {}

  const LoopNode &node_;
  ReferenceCall call_;
};

} // namespace gc

#endif // GC_LIB_RUNTIMEFALLBACK_REFERENCESTEP_H
