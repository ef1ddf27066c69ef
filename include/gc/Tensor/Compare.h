//===- Compare.h - Comparing results with references ------------*- C++ -*-===//
#ifndef GC_TENSOR_COMPARE_H
#define GC_TENSOR_COMPARE_H

#include "gc/Tensor/Tensor.h"

#include <string>

namespace gc {

struct Comparison {
  bool pass = false;
  double maxAbsError = 0;
  double maxRelError = 0;
  /// Why it failed when the values could not be compared (shape, dtype).
  std::string problem;
};

/// Element-wise |actual - expected| <= atol + rtol * |expected|, as
/// numpy.allclose; NaNs must sit at the same places, infinities must be
/// equal. Shapes must be equal; dtypes must be equal too.
Comparison compareTensors(const Tensor &actual, const Tensor &expected, double rtol, double atol);

struct Tolerance {
  double rtol;
  double atol;
};
/// The tolerances gc-run and gcrt-run check a result of dtype t with when
/// none is given: torch.testing.assert_close's for Float16 (rtol 1e-3, atol
/// 1e-5) and BFloat16 (rtol 1.6e-2, atol 1e-5), 1e-4 each for the others.
Tolerance defaultTolerance(DType t);

} // namespace gc

#endif // GC_TENSOR_COMPARE_H
