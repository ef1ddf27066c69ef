//===- HalfBits.h - 16-bit float bits for the GPU kernels' tests -*- C++ -*-===//
//
// The bits of bfloat16 and float16 values as the kernels under test read
// and write them, rounded to nearest even, and back to float32.
//
//===----------------------------------------------------------------------===//
#ifndef GC_TEST_UNIT_RUNTIME_HALFBITS_H
#define GC_TEST_UNIT_RUNTIME_HALFBITS_H

#include "gc/Runtime/RuntimePlan.h"

#include <cstdint>
#include <cstring>

namespace gc::test {

inline uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}
inline float fromBf16(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t toF16(float f) {
  _Float16 h = static_cast<_Float16>(f);
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}
inline float fromF16(uint16_t u) {
  _Float16 h;
  std::memcpy(&h, &u, 2);
  return static_cast<float>(h);
}

/// `x` rounded to `t` (bfloat16 or float16) and its bits, and back.
inline uint16_t bits16(plan::DType t, float x) {
  return t == plan::DType::BFloat16 ? toBf16(x) : toF16(x);
}
inline float from16(plan::DType t, uint16_t u) {
  return t == plan::DType::BFloat16 ? fromBf16(u) : fromF16(u);
}

} // namespace gc::test

#endif // GC_TEST_UNIT_RUNTIME_HALFBITS_H
