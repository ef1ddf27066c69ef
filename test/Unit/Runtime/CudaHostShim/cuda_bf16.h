//===- cuda_bf16.h - Just enough CUDA to run gc's kernels on the host -----===//
//
// FewRowKernelOnHost.cpp and AttentionKernelOnHost.cpp compile gc's
// few-row and decode attention kernels with the host compiler, so that CI
// without a GPU runs their indexing, tails and epilogues against the
// references. Each block's threads are host threads:
// __syncthreads is a barrier of the block, a warp shuffle a barrier of the
// warp after writing a shared slot, and __shared__ memory one static array (the
// blocks run one after another). The types hold the same bits as CUDA's.
// Not a CUDA implementation beyond what those kernels use.
//
//===----------------------------------------------------------------------===//
#ifndef GC_TEST_UNIT_RUNTIME_CUDAHOSTSHIM_CUDA_BF16_H
#define GC_TEST_UNIT_RUNTIME_CUDAHOSTSHIM_CUDA_BF16_H

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>

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
inline float rsqrtf(float x) { return 1.f / std::sqrt(x); }
inline __half __float2half_rn(float f) { return {static_cast<_Float16>(f)}; }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short bits) { return {bits}; }
inline __half __ushort_as_half(unsigned short bits) {
  __half h;
  std::memcpy(&h.value, &bits, 2);
  return h;
}
using std::min;

namespace gc::test::hostcuda {
struct Index {
  unsigned x = 0, y = 0;
};
/// The current host thread's place: thread and block.
extern thread_local Index threadIdx, blockIdx;
/// The running block's barrier, and its warps'.
extern std::barrier<> *block;
extern std::barrier<> *warps[8];
extern float shuffled[2][8][32];
/// The block's vote of __syncthreads_or.
extern std::atomic<int> vote;
/// Aborts on a 16-byte load from an address the GPU would fault on.
void requireAligned(const void *p);
/// Runs `kernel` over a grid of gridX x gridY blocks of `threads` host
/// threads (at most 256), one block after another.
void runBlocks(unsigned threads, unsigned gridX, unsigned gridY,
               const std::function<void()> &kernel);
} // namespace gc::test::hostcuda

using gc::test::hostcuda::blockIdx;
using gc::test::hostcuda::threadIdx;

inline void __syncthreads() { gc::test::hostcuda::block->arrive_and_wait(); }
inline int __syncthreads_or(int predicate) {
  using namespace gc::test::hostcuda;
  block->arrive_and_wait(); // the last vote's readers are done
  if (predicate)
    vote = 1;
  block->arrive_and_wait();
  int result = vote;
  block->arrive_and_wait();
  if (threadIdx.x == 0)
    vote = 0;
  return result;
}
inline float __shfl_xor_sync(unsigned, float v, int laneMask) {
  using namespace gc::test::hostcuda;
  // Two slots in turn: a lane writes one slot again only after every lane
  // has passed the barrier of the shuffle between, after reading it.
  thread_local unsigned turn = 0;
  unsigned w = threadIdx.x / 32, lane = threadIdx.x % 32, slot = turn++ & 1;
  shuffled[slot][w][lane] = v;
  warps[w]->arrive_and_wait();
  return shuffled[slot][w][lane ^ unsigned(laneMask)];
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
#define __grid_constant__

#endif // GC_TEST_UNIT_RUNTIME_CUDAHOSTSHIM_CUDA_BF16_H
