//===- Passes.h - The passes gc-opt runs ------------------------*- C++ -*-===//
#ifndef GC_TRANSFORMS_PASSES_H
#define GC_TRANSFORMS_PASSES_H

#include "gc/IR/LayoutMode.h"
#include "gc/Pass/Pass.h"

#include <memory>

namespace gc {

#define GC_PASS(NAME, CREATE, SUMMARY) std::unique_ptr<Pass> CREATE();
#include "gc/Transforms/Passes.def"
#undef GC_PASS

/// conv-as-product under gc-lower's --layout (the registry's takes Auto):
/// float32 depthwise convolutions become window sums only channels-last.
std::unique_ptr<Pass> createConvAsProductPass(LayoutMode layout);

/// Test-only passes (PassInfo::testOnly; lib/Transforms/TestMiscompile.cpp).
std::unique_ptr<Pass> createTestMiscompilePass();

/// Adds every pass of Passes.def to the pass registry.
void registerTransformPasses();

} // namespace gc

#endif // GC_TRANSFORMS_PASSES_H
