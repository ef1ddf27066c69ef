//===- BFloat16.h - bfloat16 widened and narrowed on the CPU ----*- C++ -*-===//
//
// The runtime's CPU steps hold bfloat16 operands in float32 registers: a
// bfloat16 is the upper half of a float32, so widening is a shift, and a
// result is rounded once as it is stored. (gc/Tensor has the same
// conversions, but libgcrt links no compiler library.)
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_CPU_BFLOAT16_H
#define GC_LIB_RUNTIME_CPU_BFLOAT16_H

#include <bit>
#include <cmath>
#include <cstdint>

namespace gc {

inline float widenBFloat16(uint16_t x) {
  return std::bit_cast<float>(static_cast<uint32_t>(x) << 16);
}

/// torch's narrowing to bfloat16: round to nearest even, NaN kept quiet.
inline uint16_t narrowToBFloat16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if (std::isnan(f))
    return static_cast<uint16_t>((x >> 16) | 0x40);
  return static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

} // namespace gc

#endif // GC_LIB_RUNTIME_CPU_BFLOAT16_H
