//===- Compare.h - Comparing results with references ------------*- C++ -*-===//
//
// Host tensors through the rule of gc/TensorIO/TensorIO.h, which gcrt-run
// uses too: the comparison, its tolerances and its report line are there.
//
//===----------------------------------------------------------------------===//
#ifndef GC_TENSOR_COMPARE_H
#define GC_TENSOR_COMPARE_H

#include "gc/Tensor/Tensor.h"
#include "gc/TensorIO/TensorIO.h"

#include <optional>
#include <string>

namespace gc {

using Comparison = gc_comparison;
using Tolerance = gc_tolerance;

/// gc_compare of two host tensors.
Comparison compareTensors(const Tensor &actual, const Tensor &expected, double rtol, double atol);

/// gc_tolerance_for: the given tolerances, and the default of the expected
/// tensor's dtype `t` for those not given.
Tolerance toleranceFor(DType t, std::optional<double> rtol = std::nullopt,
                       std::optional<double> atol = std::nullopt);

/// gc_comparison_line: "<label>: max abs error A, max rel error R: pass".
std::string comparisonLine(const Comparison &c, const std::string &label);

/// A view of `t` for gc/TensorIO (its storage, offset, sizes and strides),
/// valid while `t` is.
gcrt_tensor tensorView(const Tensor &t);

} // namespace gc

#endif // GC_TENSOR_COMPARE_H
