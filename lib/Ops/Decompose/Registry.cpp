//===- Registry.cpp - The decomposition registry --------------------------===//
#include "gc/Ops/Decompositions.h"

namespace gc {

const DecompositionRegistry &decompositions() {
  static const DecompositionRegistry registry = [] {
    DecompositionRegistry r;
    registerPointwiseDecompositions(r);
    registerShapeDecompositions(r);
    registerNNDecompositions(r);
    registerLossDecompositions(r);
    registerPoolingDecompositions(r);
    registerRandomDecompositions(r);
    registerRecurrentDecompositions(r);
    registerReductionDecompositions(r);
    return r;
  }();
  return registry;
}

} // namespace gc
