//===- Compare.cpp - Comparing results with references --------------------===//
#include "gc/Tensor/Compare.h"

#include <cmath>

namespace gc {

Comparison compareTensors(const Tensor &actual, const Tensor &expected, double rtol, double atol) {
  Comparison c;
  if (actual.sizes() != expected.sizes()) {
    c.problem = "shape " + shapeString(actual.sizes()) + " differs from the expected " +
                shapeString(expected.sizes());
    return c;
  }
  if (actual.dtype() != expected.dtype()) {
    c.problem = "dtype " + std::string(dtypeName(actual.dtype())) + " differs from the expected " +
                std::string(dtypeName(expected.dtype()));
    return c;
  }
  std::vector<double> a = actual.toDoubles(), e = expected.toDoubles();
  c.pass = true;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(e[i])) {
      c.pass &= std::isnan(a[i]) && std::isnan(e[i]);
      continue;
    }
    if (std::isinf(a[i]) || std::isinf(e[i])) {
      c.pass &= a[i] == e[i];
      continue;
    }
    double abs = std::fabs(a[i] - e[i]);
    c.maxAbsError = std::max(c.maxAbsError, abs);
    if (e[i] != 0)
      c.maxRelError = std::max(c.maxRelError, abs / std::fabs(e[i]));
    c.pass &= abs <= atol + rtol * std::fabs(e[i]);
  }
  return c;
}

Tolerance defaultTolerance(DType t) {
  switch (t) {
  case DType::Float16:
    return {1e-3, 1e-5};
  case DType::BFloat16:
    return {1.6e-2, 1e-5};
  default:
    return {1e-4, 1e-4};
  }
}

} // namespace gc
