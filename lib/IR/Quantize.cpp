//===- Quantize.cpp - The quantization schemes gc runs --------------------===//
#include "gc/IR/Quantize.h"

#include <limits>

namespace gc {

namespace {

struct Range {
  int64_t lo, hi;
};

std::optional<Range> rangeOf(DType dtype) {
  switch (dtype) {
  case DType::UInt8:
    return Range{0, 255};
  case DType::Int8:
    return Range{-128, 127};
  case DType::Int16:
    return Range{std::numeric_limits<int16_t>::min(), std::numeric_limits<int16_t>::max()};
  case DType::Int32:
    return Range{std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
  default:
    return std::nullopt;
  }
}

} // namespace

std::optional<std::string> quantSchemeError(DType dtype, int64_t quantMin, int64_t quantMax) {
  std::optional<Range> r = rangeOf(dtype);
  if (!r)
    return "quantized dtype " + std::string(dtypeName(dtype)) +
           " is not supported (gc runs uint8, int8, int16 and int32)";
  if (quantMin > quantMax || quantMin < r->lo || quantMax > r->hi)
    return "quant range [" + std::to_string(quantMin) + ", " + std::to_string(quantMax) +
           "] does not fit " + std::string(dtypeName(dtype)) + " [" + std::to_string(r->lo) +
           ", " + std::to_string(r->hi) + "]";
  return std::nullopt;
}

} // namespace gc
