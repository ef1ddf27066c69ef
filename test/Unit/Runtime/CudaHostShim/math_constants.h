//===- math_constants.h - Just enough CUDA to run gc's kernels on the host ===//
// See cuda_bf16.h.
#ifndef GC_TEST_UNIT_RUNTIME_CUDAHOSTSHIM_MATH_CONSTANTS_H
#define GC_TEST_UNIT_RUNTIME_CUDAHOSTSHIM_MATH_CONSTANTS_H
#include <limits>
#define CUDART_INF_F std::numeric_limits<float>::infinity()
#endif // GC_TEST_UNIT_RUNTIME_CUDAHOSTSHIM_MATH_CONSTANTS_H
