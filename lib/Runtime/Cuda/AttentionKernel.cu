//===- AttentionKernel.cu - Fused attention on NVIDIA GPUs ----------------===//
//
// softmax(query key^T * scale + mask) value without the score matrix in
// memory (flash-attention style): a block takes kRows query rows of one
// (batch, head) and walks the keys a tile at a time, keeping per row the
// running maximum, the running sum of exponentials and the unnormalized
// output, each rescaled when a later tile raises the maximum (the online
// softmax). Four threads share a query row: each computes a quarter of the
// tile's scores and owns every fourth output column.
//
// Products are float32 multiply-adds whatever the input type: bfloat16 and
// float16 operands are widened as the tiles are loaded, and the output is
// rounded once. A row whose every key is masked gives zeros.
//
// nvcc compiles this at gc's build time into a fatbinary that libgcrt
// embeds (lib/Runtime/CMakeLists.txt); CudaAttention.cpp picks the entry
// by element type and head-dimension bound and launches it.
//
//===----------------------------------------------------------------------===//
#include "AttentionKernelArgs.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math_constants.h>

using namespace gc::cuda;

namespace {

constexpr int kRows = 32;          // query rows per block
constexpr int kThreadsPerRow = 4;  // threads sharing a row
constexpr int kThreads = kRows * kThreadsPerRow;

__device__ float widen(float x) { return x; }
__device__ float widen(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ float widen(__half x) { return __half2float(x); }

template <class T> __device__ T narrow(float x);
template <> __device__ float narrow<float>(float x) { return x; }
template <> __device__ __nv_bfloat16 narrow<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
template <> __device__ __half narrow<__half>(float x) { return __float2half_rn(x); }

/// The mask's term for score (b, h, i, j): 0, an additive value, or -inf
/// for a key the mask drops.
__device__ float maskTerm(const AttentionKernelArgs &a, int b, int h, int i, int j) {
  const int64_t *s = a.strides[kMask];
  int64_t at = b * s[0] + h * s[1] + i * s[2] + j * s[3];
  switch (a.maskKind) {
  case kMaskBool:
    return reinterpret_cast<const unsigned char *>(a.address[kMask])[at] ? 0.f
                                                                             : -CUDART_INF_F;
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

/// Loads rows [first, first + rows) of operand `o` of (b, h) into `tile`
/// (rows of pitch D + 1 floats, so that threads reading one column of
/// different rows hit different banks); rows past `count` are zeros.
template <class T, int D>
__device__ void loadTile(const AttentionKernelArgs &a, int o, int b, int h, int first, int rows,
                         int count, float (*tile)[D + 1]) {
  const T *base = reinterpret_cast<const T *>(a.address[o]);
  const int64_t *s = a.strides[o];
  int64_t start = b * s[0] + h * s[1];
  int dim = a.headDim;
  for (int e = threadIdx.x; e < rows * dim; e += kThreads) {
    int r = e / dim, d = e - r * dim;
    int row = first + r;
    tile[r][d] = row < count ? widen(base[start + row * s[2] + d * s[3]]) : 0.f;
  }
}

/// T: the element type of query, key, value and output; D: the largest
/// head dimension taken; K: keys per tile (shared memory stays under the
/// 48 KiB a block has without opting in).
template <class T, int D, int K>
__device__ void attention(const AttentionKernelArgs &a) {
  constexpr int kCols = D / kThreadsPerRow;  // output columns per thread
  constexpr int kScores = K / kThreadsPerRow; // scores per thread per tile
  __shared__ float q[kRows][D + 1];
  __shared__ float k[K][D + 1];
  __shared__ float v[K][D + 1];
  __shared__ float p[kRows][K + 1];

  int block = blockIdx.x % a.queryBlocks, bh = blockIdx.x / a.queryBlocks;
  int b = bh / a.heads, h = bh % a.heads, kvh = h / a.group;
  int row0 = block * kRows;
  int row = threadIdx.x / kThreadsPerRow, part = threadIdx.x % kThreadsPerRow;
  int i = row0 + row;
  int dim = a.headDim;

  loadTile<T, D>(a, kQuery, b, h, row0, kRows, a.queries, q);
  float acc[kCols];
#pragma unroll
  for (int c = 0; c < kCols; ++c)
    acc[c] = 0.f;
  float rowMax = -CUDART_INF_F, rowSum = 0.f;
  // Under a causal mask no row of this block sees a key past its last row.
  int keyEnd = a.maskKind == kMaskCausal ? min(a.keys, row0 + kRows) : a.keys;
  for (int key0 = 0; key0 < keyEnd; key0 += K) {
    __syncthreads(); // the last tile's readers are done (and q is loaded)
    loadTile<T, D>(a, kKey, b, kvh, key0, K, a.keys, k);
    loadTile<T, D>(a, kValue, b, kvh, key0, K, a.keys, v);
    __syncthreads();
    // The thread's scores of the tile, each query element read once for
    // all of them.
    float s[kScores];
#pragma unroll
    for (int t = 0; t < kScores; ++t)
      s[t] = 0.f;
#pragma unroll 4
    for (int d = 0; d < dim; ++d) {
      float qd = q[row][d];
#pragma unroll
      for (int t = 0; t < kScores; ++t)
        s[t] = fmaf(qd, k[part + kThreadsPerRow * t][d], s[t]);
    }
    float tileMax = -CUDART_INF_F;
#pragma unroll
    for (int t = 0; t < kScores; ++t) {
      int key = key0 + part + kThreadsPerRow * t;
      float x = s[t] * a.scale;
      bool keep = key < a.keys && i < a.queries;
      if (a.maskKind == kMaskCausal)
        keep = keep && key <= i;
      else if (keep && a.maskKind != kMaskNone)
        x += maskTerm(a, b, h, i, key);
      s[t] = keep ? x : -CUDART_INF_F;
      tileMax = fmaxf(tileMax, s[t]);
    }
    // The row's four threads are neighbouring lanes of one warp.
    tileMax = fmaxf(tileMax, __shfl_xor_sync(0xffffffffu, tileMax, 1));
    tileMax = fmaxf(tileMax, __shfl_xor_sync(0xffffffffu, tileMax, 2));
    float newMax = fmaxf(rowMax, tileMax);
    // Nothing kept so far: no rescaling, and every weight is 0.
    bool none = newMax == -CUDART_INF_F;
    float alpha = none ? 1.f : expf(rowMax - newMax);
    float tileSum = 0.f;
#pragma unroll
    for (int t = 0; t < kScores; ++t) {
      float e = none ? 0.f : expf(s[t] - newMax);
      p[row][part + kThreadsPerRow * t] = e;
      tileSum += e;
    }
    tileSum += __shfl_xor_sync(0xffffffffu, tileSum, 1);
    tileSum += __shfl_xor_sync(0xffffffffu, tileSum, 2);
    rowSum = rowSum * alpha + tileSum;
    rowMax = newMax;
    __syncwarp(); // the row's weights, written by its four threads
#pragma unroll
    for (int c = 0; c < kCols; ++c)
      acc[c] *= alpha;
#pragma unroll 4
    for (int j = 0; j < K; ++j) {
      float w = p[row][j];
#pragma unroll
      for (int c = 0; c < kCols; ++c)
        acc[c] = fmaf(w, v[j][part + kThreadsPerRow * c], acc[c]);
    }
  }
  if (i >= a.queries)
    return;
  T *out = reinterpret_cast<T *>(a.address[kOutput]);
  const int64_t *os = a.strides[kOutput];
  int64_t start = b * os[0] + h * os[1] + i * os[2];
  float inv = rowSum > 0.f ? 1.f / rowSum : 0.f;
#pragma unroll
  for (int c = 0; c < kCols; ++c) {
    int d = part + kThreadsPerRow * c;
    if (d < dim)
      out[start + d * os[3]] = narrow<T>(acc[c] * inv);
  }
}

} // namespace

// One entry per element type and head-dimension bound; the host names them
// (CudaAttention.cpp: attentionEntry).
#define GC_ATTENTION_ENTRY(NAME, T, D, K)                                                          \
  extern "C" __global__ void __launch_bounds__(kThreads) NAME(AttentionKernelArgs a) {            \
    attention<T, D, K>(a);                                                                         \
  }
GC_ATTENTION_ENTRY(gc_attention_f32_d64, float, 64, 32)
GC_ATTENTION_ENTRY(gc_attention_f32_d128, float, 128, 16)
GC_ATTENTION_ENTRY(gc_attention_bf16_d64, __nv_bfloat16, 64, 32)
GC_ATTENTION_ENTRY(gc_attention_bf16_d128, __nv_bfloat16, 128, 16)
GC_ATTENTION_ENTRY(gc_attention_f16_d64, __half, 64, 32)
GC_ATTENTION_ENTRY(gc_attention_f16_d128, __half, 128, 16)
