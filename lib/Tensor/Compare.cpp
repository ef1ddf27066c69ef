//===- Compare.cpp - Comparing results with references --------------------===//
#include "gc/Tensor/Compare.h"

namespace gc {

static_assert(static_cast<int>(DType::Float64) == GCRT_FLOAT64 && kNumDTypes == GCRT_FLOAT64 + 1,
              "gcrt_dtype numbers gc's dtypes as DType does");

gcrt_tensor tensorView(const Tensor &t) {
  auto *data = const_cast<uint8_t *>(t.storage()->data()) + t.offset() * dtypeSize(t.dtype());
  return {data, static_cast<gcrt_dtype>(t.dtype()), t.sizes().size(), t.sizes().data(),
          t.strides().data()};
}

Comparison compareTensors(const Tensor &actual, const Tensor &expected, double rtol, double atol) {
  gcrt_tensor a = tensorView(actual), e = tensorView(expected);
  Comparison c;
  gc_compare(&a, &e, {rtol, atol}, &c);
  return c;
}

Tolerance toleranceFor(DType t, std::optional<double> rtol, std::optional<double> atol) {
  return gc_tolerance_for(static_cast<gcrt_dtype>(t), rtol.value_or(-1), atol.value_or(-1));
}

std::string comparisonLine(const Comparison &c, const std::string &label) {
  int n = gc_comparison_line(&c, label.c_str(), nullptr, 0);
  std::string line(static_cast<size_t>(n), '\0');
  gc_comparison_line(&c, label.c_str(), line.data(), line.size() + 1);
  return line;
}

} // namespace gc
