//===- Quantize.h - The quantization schemes gc runs ------------*- C++ -*-===//
//
// PyTorch's export quantization flow (prepare_pt2e/convert_pt2e) leaves
// quantized_decomposed.quantize_* and dequantize_* calls in the program: an
// affine map between float32 and a small integer dtype with a range
// [quant_min, quant_max]. The reference kernels and the decompositions both
// accept exactly the schemes this header allows.
//
//===----------------------------------------------------------------------===//
#ifndef GC_IR_QUANTIZE_H
#define GC_IR_QUANTIZE_H

#include "gc/Support/DType.h"

#include <cstdint>
#include <optional>
#include <string>

namespace gc {

/// Why gc cannot run a quantize or dequantize to or from `dtype` with the
/// range [quantMin, quantMax], or nullopt if it can: the dtype must be an
/// integer dtype of at most 32 bits and the range must lie inside it.
std::optional<std::string> quantSchemeError(DType dtype, int64_t quantMin, int64_t quantMax);

} // namespace gc

#endif // GC_IR_QUANTIZE_H
