//===- Passes.h - The passes gc-opt runs ------------------------*- C++ -*-===//
#ifndef GC_TRANSFORMS_PASSES_H
#define GC_TRANSFORMS_PASSES_H

#include "gc/Pass/Pass.h"

#include <memory>

namespace gc {

#define GC_PASS(NAME, CREATE, SUMMARY) std::unique_ptr<Pass> CREATE();
#include "gc/Transforms/Passes.def"
#undef GC_PASS

/// conv-as-product for a module compiled for a CUDA GPU: every convolution
/// it takes is rewritten, whatever device its tensors name (a model exported
/// on the CPU and compiled with --device cuda keeps CPU tensor types).
std::unique_ptr<Pass> createConvAsProductPass(bool cudaTarget);

/// Adds every pass of Passes.def to the pass registry.
void registerTransformPasses();

} // namespace gc

#endif // GC_TRANSFORMS_PASSES_H
