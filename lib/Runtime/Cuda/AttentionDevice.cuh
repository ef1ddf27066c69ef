//===- AttentionDevice.cuh - What the attention kernels share ----*- CUDA -*-===//
//
// The element conversions, the mask's terms, the rows' places and the
// combine step of split attention, shared by the tile kernel
// (AttentionKernel.cu) and the decode kernel (DecodeAttention.cuh). Host
// tests compile it against test/Unit/Runtime/CudaHostShim/ as well, so it
// holds nothing the host compiler cannot take.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_CUDA_ATTENTIONDEVICE_CUH
#define GC_LIB_RUNTIME_CUDA_ATTENTIONDEVICE_CUH

#include "AttentionKernelArgs.h"
#include "ElementConversions.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math_constants.h>
#include <stdint.h>

namespace gc::cuda {
namespace {

constexpr float kLog2e = 1.4426950408889634f;

/// How an element sits in shared memory and loads: float32 as is, 16-bit
/// types as their bits (the tensor cores take them in pairs).
template <class T> struct StoredOf { using type = uint16_t; };
template <> struct StoredOf<float> { using type = float; };

/// An element of T from its stored form.
__device__ float widenStored(float x, float) { return x; }
__device__ float widenStored(uint16_t x, __nv_bfloat16) {
  return __bfloat162float(__ushort_as_bfloat16(x));
}
__device__ float widenStored(uint16_t x, __half) { return __half2float(__ushort_as_half(x)); }

/// The mask's term at element offset `at`: an additive value, or -inf for
/// a key a boolean mask drops.
__device__ float maskValue(const AttentionKernelArgs &a, int64_t at) {
  switch (a.maskKind) {
  case kMaskBool:
    return reinterpret_cast<const unsigned char *>(a.address[kMask])[at] ? 0.f : -CUDART_INF_F;
  case kMaskFloat32:
    return reinterpret_cast<const float *>(a.address[kMask])[at];
  case kMaskBFloat16:
    return widen(reinterpret_cast<const __nv_bfloat16 *>(a.address[kMask])[at]);
  case kMaskFloat16:
    return widen(reinterpret_cast<const __half *>(a.address[kMask])[at]);
  default:
    return 0.f;
  }
}

/// Row r of a (batch, key head)'s rows: its query head and query.
struct RowPlace {
  int head, query;
};
__device__ RowPlace place(const AttentionKernelArgs &a, int kvHead, int r) {
  return {kvHead * a.group + r / a.queries, r % a.queries};
}

/// The output of split attention: per element, the splits' partial outputs
/// weighed by their maxima against the largest, over the weighed sums.
template <class T> __device__ void combine(const AttentionKernelArgs &a) {
  const int64_t totalRows = int64_t(a.batch) * a.heads * a.queries;
  int64_t e = int64_t(blockIdx.x) * kAttentionThreads + threadIdx.x;
  int dim = a.headDim;
  if (e >= totalRows * dim)
    return;
  int64_t row = e / dim;
  int d = static_cast<int>(e - row * dim);
  const float *partial = reinterpret_cast<const float *>(a.workspace);
  const float *stats = partial + int64_t(a.splits) * totalRows * dim;
  float m = -CUDART_INF_F;
  for (int s = 0; s < a.splits; ++s)
    m = fmaxf(m, stats[2 * (s * totalRows + row)]);
  float sum = 0.f, acc = 0.f;
  if (m != -CUDART_INF_F)
    for (int s = 0; s < a.splits; ++s) {
      int64_t at = s * totalRows + row;
      float w = exp2f(stats[2 * at] - m); // 0 for a split that kept nothing
      sum += w * stats[2 * at + 1];
      acc += w * partial[at * dim + d];
    }
  int i = static_cast<int>(row % a.queries);
  int64_t bh = row / a.queries;
  int h = static_cast<int>(bh % a.heads), b = static_cast<int>(bh / a.heads);
  const int64_t *os = a.strides[kOutput];
  reinterpret_cast<T *>(a.address[kOutput])[b * os[0] + h * os[1] + i * os[2] + d * os[3]] =
      narrow<T>(sum > 0.f ? acc / sum : 0.f);
}

} // namespace
} // namespace gc::cuda

#endif // GC_LIB_RUNTIME_CUDA_ATTENTIONDEVICE_CUH
