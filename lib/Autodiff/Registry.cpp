//===- Registry.cpp - The derivative registry -----------------------------===//
#include "gc/Autodiff/Derivatives.h"

namespace gc {

const DerivativeRegistry &derivatives() {
  static const DerivativeRegistry registry = [] {
    DerivativeRegistry r;
    registerPointwiseDerivatives(r);
    registerShapeDerivatives(r);
    registerNNDerivatives(r);
    registerReductionDerivatives(r);
    return r;
  }();
  return registry;
}

} // namespace gc
