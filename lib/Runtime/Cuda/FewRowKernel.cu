//===- FewRowKernel.cu - Products of a few rows on NVIDIA GPUs ------------===//
//
// out[m, n] = act(sum_k a[m, k] w[n, k] + bias[n] + residual[m, n]) for a
// few rows m (a decode step's token): every weight element is read once
// and used `rows` times, so the product runs at the memory's bandwidth
// only if enough weight bytes are in flight on every SM.
//
// A block's 256 threads form 1 to 8 groups (FewRowKernelArgs::groups, the
// host's choice); a group takes a tile of kFewRowTile weight rows and its
// threads run along k together, each loading 16-byte chunks of the tile's
// rows, kUnroll chunks per row issued before any multiply-add, so that each
// thread has up to kUnroll x kFewRowTile x 16 bytes in flight. The left
// rows (a few KB, read by every block) come through the L1 cache. Sums are
// float32, reduced over the warp by shuffles and over the group's warps in
// shared memory; the thread of each output element adds the bias and the
// residual, applies the activation and rounds once to the output's type.
//
// A gated pair (FewRowKernelArgs::up: a gated MLP's gate and up
// projections) gives each group's tile row n of the gate's weight and row n
// of the up one instead of two rows of one weight: the loop is the same,
// and the thread of output element n takes both sums and stores
// silu(gate) * up, rounded once, so that neither product is stored.
//
// An RMSNorm prologue (FewRowKernelArgs::norm: the left rows normalised,
// times a weight g, before the product) reads the rows as they are: each
// thread multiplies its elements of a row by g's as it loads them and sums
// their squares beside its dot products, and since a group's threads
// cover all of k, the group's sum of squares is the row's. The thread of
// each output element scales its sums by rsqrt(mean + eps) before the
// epilogue, so the normalised rows are never stored (in float32 from the
// row as it is: no rounding of the normalised row to the output's type).
//
// A launch may compute several products of the same left rows
// (FewRowGroupArgs): each block finds its product from its index and then
// runs as a block of that product's launch alone would, so one launch over
// several small weights fills the SMs that each alone would leave idle.
//
// Rows that do not start 16-byte aligned load element by element
// (FewRowKernelArgs::wide), as does k's tail past the last whole vector.
//
// Row counts up to kGpuFewRowsExact have an instance each; larger ones run
// the instance of kGpuFewRowsMax rows, which takes the count from its
// argument, multiplies the last real row in place of each missing one (its
// sums are dropped) so that no load is predicated, and stores the real
// rows only.
//
// nvcc compiles this at gc's build time into a fatbinary that libgcrt
// embeds (lib/Runtime/CMakeLists.txt); CudaFewRowProduct.cpp picks the
// entry by element type and row count and launches it.
//
//===----------------------------------------------------------------------===//
#include "EarlyLaunch.cuh"
#include "ElementConversions.cuh"
#include "FewRowKernelArgs.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

using namespace gc::cuda;

namespace {

constexpr int kWarps = kFewRowThreads / 32;
/// 16-byte chunks of each weight row a thread loads before using them.
constexpr int kUnroll = 4;

/// acc plus the products of two 16-byte chunks of T, element by element.
template <class T> __device__ float dot16(uint4 x, uint4 y, float acc);

template <> __device__ float dot16<float>(uint4 x, uint4 y, float acc) {
  acc = fmaf(__uint_as_float(x.x), __uint_as_float(y.x), acc);
  acc = fmaf(__uint_as_float(x.y), __uint_as_float(y.y), acc);
  acc = fmaf(__uint_as_float(x.z), __uint_as_float(y.z), acc);
  return fmaf(__uint_as_float(x.w), __uint_as_float(y.w), acc);
}

/// bfloat16 is float32's upper half: a pair widens by a shift and a mask.
__device__ float bf16Pair(uint32_t x, uint32_t y, float acc) {
  acc = fmaf(__uint_as_float(x << 16), __uint_as_float(y << 16), acc);
  return fmaf(__uint_as_float(x & 0xffff0000u), __uint_as_float(y & 0xffff0000u), acc);
}

template <> __device__ float dot16<__nv_bfloat16>(uint4 x, uint4 y, float acc) {
  acc = bf16Pair(x.x, y.x, acc);
  acc = bf16Pair(x.y, y.y, acc);
  acc = bf16Pair(x.z, y.z, acc);
  return bf16Pair(x.w, y.w, acc);
}

__device__ float f16Pair(uint32_t x, uint32_t y, float acc) {
  float xl = __half2float(__ushort_as_half(uint16_t(x))),
        yl = __half2float(__ushort_as_half(uint16_t(y)));
  float xh = __half2float(__ushort_as_half(uint16_t(x >> 16)));
  float yh = __half2float(__ushort_as_half(uint16_t(y >> 16)));
  return fmaf(xh, yh, fmaf(xl, yl, acc));
}

template <> __device__ float dot16<__half>(uint4 x, uint4 y, float acc) {
  acc = f16Pair(x.x, y.x, acc);
  acc = f16Pair(x.y, y.y, acc);
  acc = f16Pair(x.z, y.z, acc);
  return f16Pair(x.w, y.w, acc);
}

__device__ float activate(float x, int32_t kind) {
  if (kind == kFewRowRelu)
    return x < 0.f ? 0.f : x; // NaN stays NaN, as torch's relu keeps it
  if (kind == kFewRowGeluTanh) {
    float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x); // sqrt(2 / pi)
    return 0.5f * x * (1.f + tanhf(inner));
  }
  return x;
}

__device__ float silu(float x) { return x / (1.f + expf(-x)); }

/// The elements of a 16-byte chunk of T as float32.
template <class T> __device__ void widen16(uint4 x, float (&out)[16 / sizeof(T)]);

template <> __device__ void widen16<float>(uint4 x, float (&out)[4]) {
  out[0] = __uint_as_float(x.x);
  out[1] = __uint_as_float(x.y);
  out[2] = __uint_as_float(x.z);
  out[3] = __uint_as_float(x.w);
}

template <> __device__ void widen16<__nv_bfloat16>(uint4 x, float (&out)[8]) {
  uint32_t words[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    out[2 * i] = __uint_as_float(words[i] << 16);
    out[2 * i + 1] = __uint_as_float(words[i] & 0xffff0000u);
  }
}

template <> __device__ void widen16<__half>(uint4 x, float (&out)[8]) {
  uint32_t words[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    out[2 * i] = __half2float(__ushort_as_half(uint16_t(words[i])));
    out[2 * i + 1] = __half2float(__ushort_as_half(uint16_t(words[i] >> 16)));
  }
}

/// Block `block` of the product `p`; NORM: with its RMSNorm prologue.
template <class T, int ROWS, bool NORM>
__device__ __forceinline__ void fewRowProduct(const FewRowKernelArgs &p, unsigned block) {
  constexpr int V = 16 / sizeof(T); // elements per chunk
  const T *a = reinterpret_cast<const T *>(p.a);
  // Left row m's first element: the instance past kGpuFewRowsExact reads
  // the last real row again for each missing one. (Computed where used: an
  // array of 16 row addresses made the float32 instance spill.)
  auto aRow = [&](int m) {
    return a + int64_t(ROWS > kGpuFewRowsExact ? min(m, p.rows - 1) : m) * p.aRowStride;
  };
  int tid = threadIdx.x;
  // This thread's group, its place in it, and the group's first row.
  int per = kFewRowThreads / p.groups;
  int group = tid / per, local = tid % per;
  int tile = block * p.groups + group;
  // The tile's weight rows: a gated pair's row `tile` of each weight, else
  // rows of one weight from `tile` * kFewRowTile. One past the last output
  // column reads the last row again (its sums are never stored), so that
  // no load is predicated.
  static_assert(kFewRowTile == 2, "a gated pair's tile is a row of each of its two weights");
  bool gated = p.up != 0;
  const T *w[kFewRowTile];
#pragma unroll
  for (int t = 0; t < kFewRowTile; ++t) {
    int row = gated ? tile : tile * kFewRowTile + t;
    w[t] = reinterpret_cast<const T *>(gated && t == 1 ? p.up : p.w) +
           int64_t(min(row, p.n - 1)) * p.wRowStride;
  }
  int64_t chunks = p.wide ? p.k / V : 0;
  // No kernel writes the weights: the chunks of this thread's first pass
  // head for the L2 cache while the kernel ahead of this one ends (an
  // early launch); the left rows, bias and residual wait for it.
  releaseSuccessor();
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
#pragma unroll
    for (int t = 0; t < kFewRowTile; ++t)
      if (int64_t c = local + int64_t(u) * per; c < chunks)
        prefetchL2(reinterpret_cast<const uint4 *>(w[t]) + c);
  awaitPredecessor();

  float acc[ROWS][kFewRowTile];
  // NORM: each row's sum of squares over this thread's elements.
  float squares[ROWS];
#pragma unroll
  for (int m = 0; m < ROWS; ++m) {
    squares[m] = 0.f;
#pragma unroll
    for (int t = 0; t < kFewRowTile; ++t)
      acc[m][t] = 0.f;
  }
  const T *g = reinterpret_cast<const T *>(p.norm);

  for (int64_t c0 = local; c0 < chunks; c0 += int64_t(per) * kUnroll) {
    uint4 wv[kUnroll][kFewRowTile];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      int64_t c = c0 + int64_t(u) * per;
#pragma unroll
      for (int t = 0; t < kFewRowTile; ++t)
        wv[u][t] =
            c < chunks ? __ldcs(reinterpret_cast<const uint4 *>(w[t]) + c) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      int64_t c = c0 + int64_t(u) * per;
      if (c >= chunks)
        break;
      if constexpr (NORM) {
        float gf[V], wf[kFewRowTile][V];
        widen16<T>(__ldg(reinterpret_cast<const uint4 *>(g) + c), gf);
#pragma unroll
        for (int t = 0; t < kFewRowTile; ++t)
          widen16<T>(wv[u][t], wf[t]);
#pragma unroll
        for (int m = 0; m < ROWS; ++m) {
          float af[V];
          widen16<T>(__ldg(reinterpret_cast<const uint4 *>(aRow(m)) + c), af);
#pragma unroll
          for (int i = 0; i < V; ++i) {
            squares[m] = fmaf(af[i], af[i], squares[m]);
            float x = af[i] * gf[i];
#pragma unroll
            for (int t = 0; t < kFewRowTile; ++t)
              acc[m][t] = fmaf(x, wf[t][i], acc[m][t]);
          }
        }
      } else {
#pragma unroll
        for (int m = 0; m < ROWS; ++m) {
          uint4 av = __ldg(reinterpret_cast<const uint4 *>(aRow(m)) + c);
#pragma unroll
          for (int t = 0; t < kFewRowTile; ++t)
            acc[m][t] = dot16<T>(av, wv[u][t], acc[m][t]);
        }
      }
    }
  }
  // Element by element: k's tail past the last whole chunk, or all of it.
  for (int64_t e = chunks * V + local; e < p.k; e += per) {
    float wf[kFewRowTile];
#pragma unroll
    for (int t = 0; t < kFewRowTile; ++t)
      wf[t] = widen(w[t][e]);
#pragma unroll
    for (int m = 0; m < ROWS; ++m) {
      float x = widen(aRow(m)[e]);
      if constexpr (NORM) {
        squares[m] = fmaf(x, x, squares[m]);
        x *= widen(g[e]);
      }
#pragma unroll
      for (int t = 0; t < kFewRowTile; ++t)
        acc[m][t] = fmaf(x, wf[t], acc[m][t]);
    }
  }

  // Sum over the warp's lanes, then over the group's warps.
  // NORM: the rows' sums of squares follow the products' sums.
  constexpr int kSums = ROWS * kFewRowTile;
  __shared__ float partial[kWarps][kSums + (NORM ? ROWS : 0)];
  int warp = tid / 32, lane = tid % 32;
  auto warpSum = [&](float s, int slot) {
#pragma unroll
    for (int o = 16; o > 0; o /= 2)
      s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0)
      partial[warp][slot] = s;
  };
#pragma unroll
  for (int m = 0; m < ROWS; ++m) {
#pragma unroll
    for (int t = 0; t < kFewRowTile; ++t)
      warpSum(acc[m][t], m * kFewRowTile + t);
    if constexpr (NORM)
      warpSum(squares[m], kSums + m);
  }
  __syncthreads();
  // Thread i finishes sum i % kSums of group i / kSums; of a gated pair,
  // the thread of its tile's first row takes the second's sum too.
  if (tid >= p.groups * kSums)
    return;
  group = tid / kSums;
  int j = tid % kSums, m = j / kFewRowTile;
  tile = block * p.groups + group;
  int n = gated ? tile : tile * kFewRowTile + j % kFewRowTile;
  if (n >= p.n || m >= p.rows || (gated && j % kFewRowTile != 0))
    return;
  int warps = kWarps / p.groups;
  float s = 0.f, up = 0.f, sq = 0.f;
  for (int i = group * warps; i < (group + 1) * warps; ++i) {
    s += partial[i][j];
    if (gated)
      up += partial[i][j + 1];
    if constexpr (NORM)
      sq += partial[i][kSums + m];
  }
  if constexpr (NORM) {
    float scale = rsqrtf(sq / float(p.k) + p.normEps);
    s *= scale;
    up *= scale;
  }
  if (gated) {
    reinterpret_cast<T *>(p.out)[m * p.outRowStride + n * p.outColStride] =
        narrow<T>(silu(s) * up);
    return;
  }
  if (p.bias)
    s += widen(reinterpret_cast<const T *>(p.bias)[n * p.biasStride]);
  if (p.residual)
    s += widen(
        reinterpret_cast<const T *>(p.residual)[m * p.residualRowStride + n * p.residualColStride]);
  reinterpret_cast<T *>(p.out)[m * p.outRowStride + n * p.outColStride] =
      narrow<T>(activate(s, p.activation));
}

/// The block of `g`'s products this block runs: the argument stays in the
/// parameter space (__grid_constant__), read at the index found, not copied
/// to each thread's stack.
template <class T, int ROWS> __device__ __forceinline__ void fewRowGroup(const FewRowGroupArgs &g) {
  int i = 0;
#pragma unroll
  for (int j = 1; j < kFewRowMaxProducts; ++j)
    if (j < g.count && blockIdx.x >= g.firstBlock[j])
      i = j;
  if (g.products[i].norm)
    fewRowProduct<T, ROWS, true>(g.products[i], blockIdx.x - g.firstBlock[i]);
  else
    fewRowProduct<T, ROWS, false>(g.products[i], blockIdx.x - g.firstBlock[i]);
}

} // namespace

// gc_fewrow_<type>_r<rows>: CudaFewRowProduct.cpp builds these names.
static_assert(kGpuFewRowsMax == 16, "the instance of kGpuFewRowsMax rows is named r16");
#define GC_FEWROW_ENTRY(NAME, T, ROWS)                                                             \
  extern "C" __global__ void __launch_bounds__(kFewRowThreads)                                     \
      NAME(const __grid_constant__ FewRowGroupArgs g) {                                            \
    fewRowGroup<T, ROWS>(g);                                                                       \
  }
#define GC_FEWROW_ENTRIES(TYPE, T)                                                                 \
  GC_FEWROW_ENTRY(gc_fewrow_##TYPE##_r1, T, 1)                                                     \
  GC_FEWROW_ENTRY(gc_fewrow_##TYPE##_r2, T, 2)                                                     \
  GC_FEWROW_ENTRY(gc_fewrow_##TYPE##_r3, T, 3)                                                     \
  GC_FEWROW_ENTRY(gc_fewrow_##TYPE##_r4, T, 4)                                                     \
  GC_FEWROW_ENTRY(gc_fewrow_##TYPE##_r5, T, 5)                                                     \
  GC_FEWROW_ENTRY(gc_fewrow_##TYPE##_r6, T, 6)                                                     \
  GC_FEWROW_ENTRY(gc_fewrow_##TYPE##_r7, T, 7)                                                     \
  GC_FEWROW_ENTRY(gc_fewrow_##TYPE##_r8, T, 8)                                                     \
  GC_FEWROW_ENTRY(gc_fewrow_##TYPE##_r16, T, kGpuFewRowsMax)

GC_FEWROW_ENTRIES(f32, float)
GC_FEWROW_ENTRIES(bf16, __nv_bfloat16)
GC_FEWROW_ENTRIES(f16, __half)
