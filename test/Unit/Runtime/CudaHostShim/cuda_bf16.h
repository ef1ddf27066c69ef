//===- cuda_bf16.h - Just enough CUDA to run gc's kernels on the host -----===//
//
// FewRowKernelOnHost.cpp compiles FewRowKernel.cu with the host compiler,
// so that CI without a GPU runs the kernel's indexing, tails and epilogues
// against the reference. Each block's threads are host threads:
// __syncthreads is a barrier of the block, a warp shuffle a barrier of the
// warp around a shared slot, and __shared__ memory one static array (the
// blocks run one after another). The types hold the same bits as CUDA's.
// Not a CUDA implementation beyond what FewRowKernel.cu uses.
//
//===----------------------------------------------------------------------===//
#ifndef GC_TEST_UNIT_RUNTIME_CUDAHOSTSHIM_CUDA_BF16_H
#define GC_TEST_UNIT_RUNTIME_CUDAHOSTSHIM_CUDA_BF16_H

#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>

struct uint4 {
  unsigned x, y, z, w;
};
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
inline float __uint_as_float(unsigned u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

struct __nv_bfloat16 {
  uint16_t bits;
};
inline float __bfloat162float(__nv_bfloat16 h) { return __uint_as_float(unsigned(h.bits) << 16); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  unsigned u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return {uint16_t(u >> 16)};
}
struct __half {
  _Float16 value;
};
inline float __half2float(__half h) { return float(h.value); }
inline __half __float2half_rn(float f) { return {static_cast<_Float16>(f)}; }
inline __half __ushort_as_half(unsigned short bits) {
  __half h;
  std::memcpy(&h.value, &bits, 2);
  return h;
}
using std::min;

namespace gc::test::hostcuda {
struct Index {
  unsigned x = 0;
};
/// The current host thread's place: thread and block.
extern thread_local Index threadIdx, blockIdx;
/// The running block's barrier, and its warps'.
extern std::barrier<> *block;
extern std::barrier<> *warps[8];
extern float shuffled[8][32];
/// Aborts on a 16-byte load from an address the GPU would fault on.
void requireAligned(const void *p);
} // namespace gc::test::hostcuda

using gc::test::hostcuda::blockIdx;
using gc::test::hostcuda::threadIdx;

inline void __syncthreads() { gc::test::hostcuda::block->arrive_and_wait(); }
inline float __shfl_xor_sync(unsigned, float v, int laneMask) {
  using namespace gc::test::hostcuda;
  unsigned w = threadIdx.x / 32, lane = threadIdx.x % 32;
  shuffled[w][lane] = v;
  warps[w]->arrive_and_wait();
  float other = shuffled[w][lane ^ unsigned(laneMask)];
  warps[w]->arrive_and_wait();
  return other;
}
inline uint4 __ldg(const uint4 *p) {
  gc::test::hostcuda::requireAligned(p);
  return *p;
}
inline uint4 __ldcs(const uint4 *p) {
  gc::test::hostcuda::requireAligned(p);
  return *p;
}

#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(threads)

#endif // GC_TEST_UNIT_RUNTIME_CUDAHOSTSHIM_CUDA_BF16_H
