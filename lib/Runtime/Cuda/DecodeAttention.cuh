//===- DecodeAttention.cuh - Attention of a few rows per key head -*- CUDA -*-===//
//
// The fused attention of a decode step: at most kDecodeRows rows (query
// heads x queries) per (batch, key head), too few for the tensor-core
// tiles of AttentionKernel.cu, whose 64-row blocks would be mostly
// padding. Flash-decoding style on CUDA cores: a block per (batch, key
// head) and key range (grid y, the splits); its warps take the range's
// keys in turn, several keys at once -- kLanes lanes per key, each holding
// 16 bytes of the head dimension, so a key's row of K or V is one 16-byte
// load per lane. Per key the lanes of a key add their slices' products
// with warp shuffles, then every lane updates its rows' running maximum,
// sum and unnormalized output (the online softmax, base 2). At the end the
// key groups of a warp merge by shuffles, the warps through shared memory,
// and the block writes its rows (one split) or its partial result for the
// combine kernel (AttentionDevice.cuh), in the tile kernel's format.
//
// The mask is read kDecodeKeyChunk keys at a time into shared memory; a
// chunk every row drops costs that read and nothing else (the unused end
// of a KV cache).
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_CUDA_DECODEATTENTION_CUH
#define GC_LIB_RUNTIME_CUDA_DECODEATTENTION_CUH

#include "AttentionDevice.cuh"

namespace gc::cuda {
namespace {

/// The slice [d0, d0 + V) of one key's row, zeros past the head dimension;
/// `wide` (unit column stride, aligned rows, a head dimension of whole
/// chunks) makes it one 16-byte load.
template <class T, class S, int V>
__device__ void loadSlice(const S *row, int d0, int dim, int64_t columnStride, bool wide,
                          float x[V]) {
  union {
    uint4 v;
    S s[V];
  } u;
  u.v = make_uint4(0, 0, 0, 0);
  if (d0 < dim) {
    if (wide) {
      u.v = *reinterpret_cast<const uint4 *>(row + d0);
    } else {
#pragma unroll
      for (int c = 0; c < V; ++c)
        u.s[c] = d0 + c < dim ? row[(d0 + c) * columnStride] : S(0);
    }
  }
#pragma unroll
  for (int c = 0; c < V; ++c)
    x[c] = widenStored(u.s[c], T());
}

/// T: the element type; D: the head-dimension bound (64 or 128); R: the
/// rows bound (at least group * queries).
template <class T, int D, int R> __device__ void decodeAttention(const AttentionKernelArgs &a) {
  using S = typename StoredOf<T>::type;
  constexpr int kVec = 16 / sizeof(S);
  constexpr int kLanes = D / kVec;       // lanes per key
  constexpr int kGroups = 32 / kLanes;   // keys a warp takes at once
  constexpr int kWarps = kAttentionThreads / 32;
  constexpr int kChunk = kDecodeKeyChunk;
  constexpr unsigned kAll = 0xffffffffu;
  __shared__ float qs[R][D];
  __shared__ float ms[R][kChunk];
  __shared__ int64_t maskRow[R];
  __shared__ float mergeM[kWarps][R], mergeL[kWarps][R];
  __shared__ float mergeO[kWarps][R][D];

  const int rows = a.group * a.queries, kvHeads = a.heads / a.group, dim = a.headDim;
  const int b = blockIdx.x / kvHeads, kvh = blockIdx.x % kvHeads;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int sub = lane / kLanes, d0 = (lane % kLanes) * kVec;
  const bool hasMask = a.maskKind >= kMaskBool, causal = a.maskKind == kMaskCausal;
  // A causal mask keeps no key past the last query.
  const int keyEnd = causal ? min(a.keys, a.queries) : a.keys;
  const int keyBegin = blockIdx.y * a.keysPerSplit;
  const int keyStop = min(keyEnd, keyBegin + a.keysPerSplit);

  const T *query = reinterpret_cast<const T *>(a.address[kQuery]);
  const int64_t *qst = a.strides[kQuery];
  for (int e = threadIdx.x; e < R * D; e += kAttentionThreads) {
    int r = e / D, d = e - r * D;
    float x = 0.f;
    if (r < rows && d < dim) {
      RowPlace p = place(a, kvh, r);
      x = widen(query[b * qst[0] + p.head * qst[1] + p.query * qst[2] + d * qst[3]]);
    }
    qs[r][d] = x;
  }
  if (hasMask)
    for (int r = threadIdx.x; r < R; r += kAttentionThreads) {
      RowPlace p = place(a, kvh, r);
      const int64_t *s = a.strides[kMask];
      maskRow[r] = b * s[0] + p.head * s[1] + p.query * s[2];
    }
  int rowQuery[R]; // for a causal mask
#pragma unroll
  for (int r = 0; r < R; ++r)
    rowQuery[r] = r % a.queries;

  const int64_t *kst = a.strides[kKey], *vst = a.strides[kValue];
  const S *keyBase = reinterpret_cast<const S *>(a.address[kKey]) + b * kst[0] + kvh * kst[1];
  const S *valueBase = reinterpret_cast<const S *>(a.address[kValue]) + b * vst[0] + kvh * vst[1];
  const bool wideKey = (a.wide >> kKey) & 1, wideValue = (a.wide >> kValue) & 1;

  // Per row: the running maximum (log2 units), sum and unnormalized output
  // of this lane's key group, over its slice of the head dimension.
  float m[R], l[R], o[R][kVec];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    m[r] = -CUDART_INF_F;
    l[r] = 0.f;
#pragma unroll
    for (int c = 0; c < kVec; ++c)
      o[r][c] = 0.f;
  }
  __syncthreads(); // the query and mask rows

  for (int key0 = keyBegin; key0 < keyStop; key0 += kChunk) {
    if (hasMask) {
      const int64_t ms3 = a.strides[kMask][3];
      bool kept = false;
      __syncthreads(); // the last chunk's readers are done
      for (int e = threadIdx.x; e < R * kChunk; e += kAttentionThreads) {
        int r = e / kChunk, j = e - r * kChunk, key = key0 + j;
        float x = -CUDART_INF_F;
        if (r < rows && key < keyStop)
          x = maskValue(a, maskRow[r] + key * ms3);
        ms[r][j] = x;
        kept |= x != -CUDART_INF_F;
      }
      if (!__syncthreads_or(kept))
        continue; // no row keeps a key of this chunk
    }
    const int chunkStop = min(keyStop, key0 + kChunk);
    // Whole warps go round together (the shuffles need every lane); a key
    // group past the chunk's end reads nothing and weighs nothing.
    for (int first = key0 + warp * kGroups; first < chunkStop; first += kWarps * kGroups) {
      const int key = first + sub;
      const bool live = key < chunkStop;
      float kx[kVec], vx[kVec];
      loadSlice<T, S, kVec>(keyBase + int64_t(key) * kst[2], live ? d0 : dim, dim, kst[3],
                            wideKey, kx);
      loadSlice<T, S, kVec>(valueBase + int64_t(key) * vst[2], live ? d0 : dim, dim, vst[3],
                            wideValue, vx);
      float s[R];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float acc = 0.f;
#pragma unroll
        for (int c = 0; c < kVec; ++c)
          acc = fmaf(qs[r][d0 + c], kx[c], acc);
        s[r] = acc;
      }
#pragma unroll
      for (int x = kLanes / 2; x >= 1; x /= 2)
#pragma unroll
        for (int r = 0; r < R; ++r)
          s[r] += __shfl_xor_sync(kAll, s[r], x);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        bool keep = live && r < rows;
        float x = s[r] * a.scale;
        if (causal) {
          keep = keep && key <= rowQuery[r];
        } else if (hasMask && keep) {
          // A dropped key weighs nothing whatever its key and value hold
          // (NaN past a cache's valid prefix): its score is not added to.
          float term = ms[r][key - key0];
          keep = term != -CUDART_INF_F;
          x += term;
        }
        x = keep ? x * kLog2e : -CUDART_INF_F;
        if (x == -CUDART_INF_F)
          continue; // weighs nothing
        if (x > m[r]) {
          float alpha = exp2f(m[r] - x); // 0 while nothing was kept
          l[r] *= alpha;
#pragma unroll
          for (int c = 0; c < kVec; ++c)
            o[r][c] *= alpha;
          m[r] = x;
        }
        float p = exp2f(x - m[r]);
        l[r] += p;
#pragma unroll
        for (int c = 0; c < kVec; ++c)
          o[r][c] = fmaf(p, vx[c], o[r][c]);
      }
    }
  }

  // The warp's key groups merge: lanes kLanes apart hold the same slice.
#pragma unroll
  for (int x = kLanes; x < 32; x *= 2)
#pragma unroll
    for (int r = 0; r < R; ++r) {
      float mo = __shfl_xor_sync(kAll, m[r], x), lo = __shfl_xor_sync(kAll, l[r], x);
      float mn = fmaxf(m[r], mo);
      float wa = mn == -CUDART_INF_F ? 0.f : exp2f(m[r] - mn);
      float wb = mn == -CUDART_INF_F ? 0.f : exp2f(mo - mn);
      l[r] = l[r] * wa + lo * wb;
      m[r] = mn;
#pragma unroll
      for (int c = 0; c < kVec; ++c) {
        float oo = __shfl_xor_sync(kAll, o[r][c], x);
        o[r][c] = o[r][c] * wa + oo * wb;
      }
    }
  if (sub == 0)
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (lane == 0) {
        mergeM[warp][r] = m[r];
        mergeL[warp][r] = l[r];
      }
#pragma unroll
      for (int c = 0; c < kVec; ++c)
        mergeO[warp][r][d0 + c] = o[r][c];
    }
  __syncthreads();

  // The warps merge, and the block writes its rows or its partial result.
  const int64_t totalRows = int64_t(a.batch) * a.heads * a.queries;
  for (int e = threadIdx.x; e < R * D; e += kAttentionThreads) {
    int r = e / D, d = e - r * D;
    if (r >= rows || d >= dim)
      continue;
    float mx = -CUDART_INF_F;
    for (int w = 0; w < kWarps; ++w)
      mx = fmaxf(mx, mergeM[w][r]);
    float sum = 0.f, acc = 0.f;
    if (mx != -CUDART_INF_F)
      for (int w = 0; w < kWarps; ++w) {
        float weight = exp2f(mergeM[w][r] - mx);
        sum += weight * mergeL[w][r];
        acc += weight * mergeO[w][r][d];
      }
    RowPlace p = place(a, kvh, r);
    if (a.splits == 1) {
      const int64_t *os = a.strides[kOutput];
      reinterpret_cast<T *>(a.address[kOutput])[b * os[0] + p.head * os[1] + p.query * os[2] +
                                                d * os[3]] =
          narrow<T>(sum > 0.f ? acc / sum : 0.f);
    } else {
      int64_t at = int64_t(blockIdx.y) * totalRows + (int64_t(b) * a.heads + p.head) * a.queries +
                   p.query;
      float *partial = reinterpret_cast<float *>(a.workspace);
      float *stats = partial + int64_t(a.splits) * totalRows * dim;
      partial[at * dim + d] = acc;
      if (d == 0) {
        stats[2 * at] = mx;
        stats[2 * at + 1] = sum;
      }
    }
  }
}

} // namespace
} // namespace gc::cuda

#endif // GC_LIB_RUNTIME_CUDA_DECODEATTENTION_CUH
