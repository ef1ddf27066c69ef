//===- Pipelines.cpp - The pass lists of each stage -----------------------===//
#include "gc/Transforms/Pipelines.h"

namespace gc {

std::string corePipeline(const CorePipelineOptions &options) {
  // Functional first: the decompositions and every later pass assume no op
  // writes in place. Freezing must see the functional graph (a mutated
  // buffer is not a constant) and comes before the folds it enables.
  std::string p = "functionalize";
  if (options.freeze)
    p += ",freeze,fold-conv-bn";
  p += ",decompose,canonicalize";
  if (options.freeze)
    p += ",constant-fold,fold-linear-bias";
  p += ",cse,dce";
  return p;
}

} // namespace gc
