//===- Pipelines.cpp - The pass lists of each stage -----------------------===//
#include "gc/Transforms/Pipelines.h"

namespace gc {

std::string corePipeline(const CorePipelineOptions &options) {
  // Functional first: the decompositions and every later pass assume no op
  // writes in place. Freezing must see the functional graph (a mutated
  // buffer is not a constant) and comes before the folds it enables.
  // Retargeting comes before everything, so that no pass sees a cuda tensor.
  std::string p = options.retargetCPU ? "retarget-cpu,functionalize" : "functionalize";
  if (options.freeze)
    p += ",freeze,fold-conv-bn";
  p += ",decompose,canonicalize";
  if (options.freeze)
    p += ",constant-fold,fold-linear-bias";
  // Aliases are read off the final graph: earlier passes may still remove
  // or add views.
  p += ",cse,dce,record-aliases";
  return p;
}

std::string jointPipeline() {
  // The backward recomputes what the forward has (a transpose of the same
  // weight, the same mask): CSE merges those across the two halves, and
  // canonicalization removes the no-op views and casts the rules leave.
  return "cse,canonicalize,dce";
}

} // namespace gc
