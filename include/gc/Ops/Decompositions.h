//===- Decompositions.h - Ops in terms of core ops --------------*- C++ -*-===//
//
// A decomposition rewrites one call of an op into calls of other ops through
// a GraphBuilder, and returns the values that replace the call's results. A
// rule may decline (return nullopt) for cases it does not handle; the
// decompose pass reports an op that stays outside the core set. Each family
// registers its rules in one table (lib/Ops/Decompose/<Family>.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef GC_OPS_DECOMPOSITIONS_H
#define GC_OPS_DECOMPOSITIONS_H

#include "gc/IR/OpRegistry.h"
#include "gc/Ops/GraphBuilder.h"

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gc {

using DecompositionFn = std::optional<std::vector<Value *>> (*)(RewriteContext &ctx);

struct DecompositionEntry {
  OpId op;
  DecompositionFn fn;
};

using DecompositionRegistry = OpRegistry<DecompositionEntry>;

/// What conv-as-product makes of GPU convolutions (aten.convolution, not
/// transposed, 1 to 3 spatial dims, static sizes); not decompositions, as
/// convolution is a core op.
///
/// One group: im2col and one matrix product, [N, o.., C k..] x [C k.., Cout]
/// plus the bias, whose result, viewed back as [N, Cout, o..], is
/// channels-last in memory.
std::optional<std::vector<Value *>> convolutionAsProduct(RewriteContext &ctx);
/// Depthwise (one input channel per group, m output channels each): the
/// windows of the padded input times the weight, summed over the kernel
/// dims, plus the bias, in the plain layout.
std::optional<std::vector<Value *>> depthwiseConvolutionAsSum(RewriteContext &ctx);

/// Every decomposition gc has.
const DecompositionRegistry &decompositions();
void registerPointwiseDecompositions(DecompositionRegistry &r);
void registerProductDecompositions(DecompositionRegistry &r);
void registerShapeDecompositions(DecompositionRegistry &r);
void registerIndexingDecompositions(DecompositionRegistry &r);
void registerLinalgDecompositions(DecompositionRegistry &r);
void registerLossDecompositions(DecompositionRegistry &r);
void registerNNDecompositions(DecompositionRegistry &r);
void registerNumericDecompositions(DecompositionRegistry &r);
void registerPoolingDecompositions(DecompositionRegistry &r);
void registerQuantizeDecompositions(DecompositionRegistry &r);
void registerRandomDecompositions(DecompositionRegistry &r);
void registerRecurrentDecompositions(DecompositionRegistry &r);
void registerReductionDecompositions(DecompositionRegistry &r);
void registerSpectralDecompositions(DecompositionRegistry &r);

} // namespace gc

#endif // GC_OPS_DECOMPOSITIONS_H
