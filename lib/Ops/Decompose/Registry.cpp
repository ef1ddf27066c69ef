//===- Registry.cpp - The decomposition registry --------------------------===//
#include "gc/Ops/Decompositions.h"

namespace gc {

const DecompositionRegistry &decompositions() {
  static const DecompositionRegistry registry = [] {
    DecompositionRegistry r;
    registerPointwiseDecompositions(r);
    registerProductDecompositions(r);
    registerShapeDecompositions(r);
    registerIndexingDecompositions(r);
    registerLinalgDecompositions(r);
    registerNNDecompositions(r);
    registerLossDecompositions(r);
    registerNumericDecompositions(r);
    registerPoolingDecompositions(r);
    registerQuantizeDecompositions(r);
    registerRandomDecompositions(r);
    registerRecurrentDecompositions(r);
    registerReductionDecompositions(r);
    registerSpectralDecompositions(r);
    return r;
  }();
  return registry;
}

} // namespace gc
