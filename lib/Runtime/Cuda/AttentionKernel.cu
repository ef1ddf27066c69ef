//===- AttentionKernel.cu - Fused attention on NVIDIA GPUs ----------------===//
//
// softmax(query key^T * scale + mask) value without the score matrix in
// memory (flash-attention style). A block holds 64 rows of one (batch, key
// head) -- four warps of 16 rows (AttentionKernelArgs.h says which query
// heads and queries they are) -- and walks its range of keys a tile at a
// time, keeping per row the running maximum, the running sum of
// exponentials and the unnormalized output, each rescaled when a later tile
// raises the maximum (the online softmax, in base 2).
//
// Every thread owns the scores and outputs of the m16n8 tensor-core
// fragment layout: rows g and g + 8 of its warp's 16 (g = lane / 4),
// columns 2t and 2t + 1 of each group of 8 (t = lane % 4). bfloat16 and
// float16 products run on tensor cores (mma.sync m16n8k16, float32
// accumulation): the query's fragments stay in registers, keys and values
// come from shared memory, and the weights go from the score fragments
// straight into the second product's operand. float32 products are exact
// float32 multiply-adds over the same layout, operands read four at a time
// from shared memory.
//
// Key and value tiles copy 16 bytes per thread and instruction straight
// into shared memory where the operand allows it (AttentionKernelArgs::wide;
// cp.async, all of a thread's copies in flight at once). A mask's tile is
// read once per block into shared memory -- a bool mask of whole 16-key
// chunks as one bit per key, its next tile loaded while the block works on
// this one -- and a tile whose keys the mask drops for every row of the
// block is skipped without reading keys or values (the unused end of a KV
// cache, the future of a causal mask). A row whose every key is masked
// gives zeros.
//
// nvcc compiles this at gc's build time into a fatbinary that libgcrt
// embeds (lib/Runtime/CMakeLists.txt); CudaAttention.cpp picks the entry
// by element type and head-dimension bound and launches it.
//
//===----------------------------------------------------------------------===//
#include "AttentionDevice.cuh"
#include "DecodeAttention.cuh"
#include "EarlyLaunch.cuh"

#include <type_traits>

using namespace gc::cuda;

namespace {

constexpr int kRows = kAttentionBlockRows;
/// The tile kernel's blocks per SM that its registers must allow: four
/// blocks of four warps keep the tensor cores fed while a block waits at
/// its barriers (at three, 163 registers, the warps stalled on loads).
constexpr int kAttentionBlocksPerSM = 4;


/// Two values rounded to T, the first in the low half: an operand register
/// of mma.sync.
template <class T> __device__ uint32_t pack2(float lo, float hi);
template <> __device__ uint32_t pack2<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t *>(&v);
}
template <> __device__ uint32_t pack2<__half>(float lo, float hi) {
  __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t *>(&v);
}

/// c += a b for a 16x16 a (row-major fragment) and a 16x8 b (column-major).
template <class T>
__device__ void mma(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1);
template <>
__device__ void mma<__nv_bfloat16>(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ void mma<__half>(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/// Four 8x8 matrices of 16-bit elements from shared memory, lane l naming
/// row l % 8 of matrix l / 8: lane i gets row i / 4, columns 2 (i % 4) and
/// 2 (i % 4) + 1 of each -- a B fragment of mma.sync where a matrix's rows
/// are its n. `Trans` gives each matrix's transpose: a B fragment where
/// the rows are its k (the values, stored key by key).
template <bool Trans> __device__ void loadMatrices(uint32_t r[4], const void *rowStart) {
  uint32_t at = static_cast<uint32_t>(__cvta_generic_to_shared(rowStart));
  if constexpr (Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(at));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(at));
}

/// 16 bytes from global memory into shared memory without passing through
/// registers (cp.async); zeros where `!valid`, `src` then any readable
/// address. The copies of a thread complete at waitCopies.
__device__ void copy16(void *dst, const void *src, bool valid) {
  uint32_t at = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(at), "l"(src),
               "r"(valid ? 16 : 0));
}
__device__ void waitCopies() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

/// Bit c set where byte c of `w` is not zero (c = 0..3), in a few word
/// operations: a byte's high bit is set where the byte is, or where its low
/// seven bits carry into it; the multiply gathers the four high bits into
/// bits 28 to 31 (each lands alone: no two shifted bits meet, so nothing
/// carries).
__device__ uint32_t byteBits(uint32_t w) {
  uint32_t high = (((w & 0x7f7f7f7fu) + 0x7f7f7f7fu) | w) & 0x80808080u;
  return (high * 0x00204081u) >> 28;
}

/// This thread's 16-key chunks of a bool mask tile (rows of the block,
/// chunk by chunk), loaded a tile ahead of their use so that the load's
/// latency passes while the block works on the tile before: a bool mask
/// whose rows are 16-byte aligned with unit key stride and whole 16-key
/// chunks (AttentionKernelArgs::wide's kMask bit).
template <int KT> struct MaskChunks {
  static_assert(KT % 16 == 0 && KT <= 64, "a tile of whole 16-key chunks, bits in a word");
  static constexpr int kChunks = KT / 16;
  static constexpr int kPerThread = (kRows * kChunks + kAttentionThreads - 1) / kAttentionThreads;
  uint4 v[kPerThread];

  __device__ void fetch(const AttentionKernelArgs &a, const int64_t *maskRow, int row0, int rows,
                        int key0, int keyStop) {
    const unsigned char *mask = reinterpret_cast<const unsigned char *>(a.address[kMask]);
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      int e = threadIdx.x + i * kAttentionThreads;
      int r = e / kChunks, j0 = (e - r * kChunks) * 16;
      v[i] = make_uint4(0, 0, 0, 0);
      if (e < kRows * kChunks && row0 + r < rows && key0 + j0 < keyStop)
        v[i] = *reinterpret_cast<const uint4 *>(mask + maskRow[r] + key0 + j0);
    }
  }

  /// Writes the fetched tile as bits: bit c of bits[r][j] set where row r
  /// keeps key key0 + 16 j + c (keys from keyStop on dropped). Returns
  /// whether this thread saw a kept key.
  __device__ bool store(int key0, int keyStop, uint16_t (*bits)[kChunks]) const {
    bool kept = false;
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      int e = threadIdx.x + i * kAttentionThreads;
      if (e >= kRows * kChunks)
        break;
      int r = e / kChunks, j = e - r * kChunks;
      uint32_t b = byteBits(v[i].x) | byteBits(v[i].y) << 4 | byteBits(v[i].z) << 8 |
                   byteBits(v[i].w) << 12;
      int below = keyStop - (key0 + 16 * j); // keys of the chunk before keyStop
      if (below < 16)
        b &= below <= 0 ? 0u : (1u << below) - 1;
      bits[r][j] = static_cast<uint16_t>(b);
      kept |= b != 0;
    }
    return kept;
  }
};

/// A row's bits of a tile of KT keys.
template <int KT> using RowBits = std::conditional_t<(KT > 32), uint64_t, uint32_t>;

/// The bits of a tile's first `n` keys (n clamped to [0, KT]).
template <int KT> __device__ RowBits<KT> keyPrefix(int n) {
  using B = RowBits<KT>;
  constexpr int kBits = 8 * sizeof(B);
  if (n <= 0)
    return 0;
  if (n >= KT)
    return ~B(0) >> (kBits - KT);
  return (B(1) << n) - 1;
}

/// The bits of a shifted row word (keep >> 2 t) that stand for a thread's
/// columns of the tile: 8 n and 8 n + 1 for each group n of 8 keys.
template <int KT> __device__ constexpr RowBits<KT> fragmentBits() {
  RowBits<KT> bits = 0;
  for (int n = 0; n < KT / 8; ++n)
    bits |= RowBits<KT>(3) << (8 * n);
  return bits;
}

/// exp2 of a score less its row's maximum, the weight of a key. Weights
/// that the tensor cores take as 16-bit operands keep 8 or 11 significant
/// bits, so the hardware's approximation (relative error about 2^-22, a
/// tiny result flushed to zero) costs them nothing; float32 weights take
/// exp2f.
template <class T> __device__ float weightExp2(float x) {
  if constexpr (sizeof(T) == 2) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
  } else {
    return exp2f(x);
  }
}

/// Row r's bits of the tile (MaskChunks::store): bit j for key key0 + j.
template <int KT> __device__ RowBits<KT> rowBits(const uint16_t (*bits)[KT / 16], int r) {
  RowBits<KT> w = 0;
#pragma unroll
  for (int j = 0; j < KT / 16; ++j)
    w |= RowBits<KT>(bits[r][j]) << (16 * j);
  return w;
}

/// Loads keys [key0, key0 + KT) of operand `o` (key or value) of (b,
/// kvHead) into `tile`, rows of P elements; keys from `keyStop` on and
/// columns past the head dimension are zeros. Whole 16-byte chunks go by
/// copy16: the tile is complete at waitCopies.
template <class S, int D, int KT, int P>
__device__ void loadTile(const AttentionKernelArgs &a, int o, int b, int kvHead, int key0,
                         int keyStop, S (*tile)[P]) {
  constexpr int kVec = 16 / sizeof(S);
  constexpr int kChunks = D / kVec;
  const int64_t *s = a.strides[o];
  const S *base = reinterpret_cast<const S *>(a.address[o]) + b * s[0] + kvHead * s[1];
  bool wide = (a.wide >> o) & 1;
  int dim = a.headDim;
  if (wide) { // whole chunks: `wide` needs the head dimension a multiple of kVec
    // All of the thread's copies in flight at once (waitCopies before use).
#pragma unroll
    for (int i = 0; i < (KT * kChunks + kAttentionThreads - 1) / kAttentionThreads; ++i) {
      int e = threadIdx.x + i * kAttentionThreads;
      if (e >= KT * kChunks)
        break;
      int r = e / kChunks, d0 = (e - r * kChunks) * kVec;
      int key = key0 + r;
      bool valid = key < keyStop && d0 < dim;
      copy16(&tile[r][d0], valid ? base + key * s[2] + d0 : base, valid);
    }
    return;
  }
  for (int e = threadIdx.x; e < KT * kChunks; e += kAttentionThreads) {
    int r = e / kChunks, d0 = (e - r * kChunks) * kVec;
    int key = key0 + r;
    union {
      uint4 v;
      S x[kVec];
    } chunk;
    chunk.v = make_uint4(0, 0, 0, 0);
    if (key < keyStop && d0 < dim) {
      const S *src = base + key * s[2];
#pragma unroll
      for (int c = 0; c < kVec; ++c)
        chunk.x[c] = d0 + c < dim ? src[(d0 + c) * s[3]] : S(0);
    }
    *reinterpret_cast<uint4 *>(&tile[r][d0]) = chunk.v;
  }
}

/// T: the element type of query, key, value and output; D: the largest
/// head dimension taken; KT: keys per tile (attentionKeyTile).
template <class T, int D, int KT>
__device__ void attention(const AttentionKernelArgs &a) {
  using S = typename StoredOf<T>::type;
  constexpr bool kTensorCores = sizeof(S) == 2;
  // Rows stay 16-byte aligned and neighbouring rows start 4 banks apart.
  constexpr int kPitch = D + 16 / sizeof(S);
  constexpr int kMaskPitch = KT + 4;
  constexpr int kTiles = KT / 8, kCols = D / 8;
  __shared__ __align__(16) S ks[KT][kPitch];
  __shared__ __align__(16) S vs[KT][kPitch];
  // The mask's terms of the tile (but a bool mask's in 16-key chunks:
  // maskBits); for float32 then the weights.
  __shared__ __align__(16) float ms[kRows][kMaskPitch];
  constexpr bool kMaskChunks = KT % 16 == 0;
  __shared__ __align__(8) uint16_t maskBits[2][kRows][kMaskChunks ? KT / 16 : 1];
  __shared__ __align__(16) float qs[kTensorCores ? 1 : kRows][kTensorCores ? 1 : kPitch];
  __shared__ int64_t maskRow[kRows];

  const int rows = a.group * a.queries, kvHeads = a.heads / a.group;
  const int rowBlock = blockIdx.x % a.rowBlocks, bk = blockIdx.x / a.rowBlocks;
  const int b = bk / kvHeads, kvh = bk % kvHeads;
  const int row0 = rowBlock * kRows, dim = a.headDim;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int local0 = warp * 16 + g, local1 = local0 + 8; // the thread's rows in the block
  const int r0 = row0 + local0, r1 = row0 + local1;
  const bool warpActive = row0 + warp * 16 < rows;
  const RowPlace p0 = place(a, kvh, r0), p1 = place(a, kvh, r1);
  const bool hasMask = a.maskKind >= kMaskBool, causal = a.maskKind == kMaskCausal;
  // (Tiles of 8 keys, float32's for head dimensions over 64, hold no
  // 16-key chunk: they read their mask a key at a time.)
  const bool wideMask = kMaskChunks && ((a.wide >> kMask) & 1);

  // The keys of this block: its split's range, under a causal mask only up
  // to the last query of its rows.
  int keyEnd = a.keys;
  int lastRow = min(row0 + kRows, rows) - 1;
  if (causal) {
    bool oneHead = row0 / a.queries == lastRow / a.queries;
    keyEnd = min(keyEnd, (oneHead ? lastRow % a.queries : a.queries - 1) + 1);
  }
  const int keyBegin = blockIdx.y * a.keysPerSplit;
  const int keyStop = min(keyEnd, keyBegin + a.keysPerSplit);

  if (hasMask) {
    const int64_t *s = a.strides[kMask];
    for (int r = threadIdx.x; r < kRows; r += kAttentionThreads) {
      RowPlace pr = place(a, kvh, row0 + r);
      maskRow[r] = b * s[0] + pr.head * s[1] + pr.query * s[2];
    }
  }
  // A bool mask's next tile is fetched a tile ahead where the registers
  // allow it (at head dimension 128 the output alone takes 64 a thread).
  constexpr bool kMaskAhead = D <= 64;
  MaskChunks<kMaskChunks ? KT : 16> nextMask;
  if (hasMask && wideMask) {
    __syncthreads(); // maskRow
    if (kMaskAhead)
      nextMask.fetch(a, maskRow, row0, rows, keyBegin, keyStop);
  }

  // The query: fragments in registers for the tensor cores, else a tile in
  // shared memory (visible after the loop's first barrier).
  const T *query = reinterpret_cast<const T *>(a.address[kQuery]);
  const int64_t *qst = a.strides[kQuery];
  uint32_t qa[kTensorCores ? D / 16 : 1][4];
  if constexpr (kTensorCores) {
    const uint16_t *qbits = reinterpret_cast<const uint16_t *>(query);
    int64_t base0 = b * qst[0] + p0.head * qst[1] + p0.query * qst[2];
    int64_t base1 = b * qst[0] + p1.head * qst[1] + p1.query * qst[2];
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        bool second = e & 1;
        int row = second ? r1 : r0, col = kk * 16 + t * 2 + (e >= 2 ? 8 : 0);
        int64_t base = second ? base1 : base0;
        uint32_t lo = 0, hi = 0;
        if (row < rows && col < dim)
          lo = qbits[base + col * qst[3]];
        if (row < rows && col + 1 < dim)
          hi = qbits[base + (col + 1) * qst[3]];
        qa[kk][e] = lo | hi << 16;
      }
  } else {
    for (int e = threadIdx.x; e < kRows * D; e += kAttentionThreads) {
      int r = e / D, d = e - r * D;
      float x = 0.f;
      if (row0 + r < rows && d < dim) {
        RowPlace pr = place(a, kvh, row0 + r);
        x = widen(query[b * qst[0] + pr.head * qst[1] + pr.query * qst[2] + d * qst[3]]);
      }
      qs[r][d] = x;
    }
  }

  float o[kCols][4];
#pragma unroll
  for (int n = 0; n < kCols; ++n)
    o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  // Per row: the running maximum (in the scores' units; the row's four
  // threads hold the same) and this thread's share of the running sum.
  float m0 = -CUDART_INF_F, m1 = -CUDART_INF_F, l0 = 0.f, l1 = 0.f;
  // log2 of a key's weight per unit of score: the scores are the product
  // (times the scale, where the mask's terms were added); planAttention
  // takes positive scales only, so the largest score has the largest weight.
  const float units = (hasMask && !wideMask ? 1.f : a.scale) * kLog2e;

  for (int key0 = keyBegin; key0 < keyStop; key0 += KT) {
    // The tile's bits go to the other half of maskBits than the last
    // tile's, which warps may still read: so with a bool mask of whole
    // chunks the barrier that tells whether any row keeps a key is the one
    // after which the key and value tiles may be written.
    uint16_t(*bits)[kMaskChunks ? KT / 16 : 1] = maskBits[((key0 - keyBegin) / KT) & 1];
    if (!(hasMask && wideMask))
      __syncthreads(); // the last tile's readers are done
    if (hasMask && wideMask) {
      bool kept = false;
      if constexpr (kMaskChunks) {
        if (!kMaskAhead)
          nextMask.fetch(a, maskRow, row0, rows, key0, keyStop);
        kept = nextMask.store(key0, keyStop, bits);
        if (kMaskAhead && key0 + KT < keyStop)
          nextMask.fetch(a, maskRow, row0, rows, key0 + KT, keyStop);
      }
      if (!__syncthreads_or(kept))
        continue; // no row keeps a key of this tile
    } else if (hasMask) {
      const int64_t ms3 = a.strides[kMask][3];
      bool kept = false;
      for (int e = threadIdx.x; e < kRows * KT; e += kAttentionThreads) {
        int r = e / KT, j = e - r * KT, key = key0 + j;
        float x = -CUDART_INF_F;
        if (row0 + r < rows && key < keyStop)
          x = maskValue(a, maskRow[r] + key * ms3);
        ms[r][j] = x;
        kept |= x != -CUDART_INF_F;
      }
      if (!__syncthreads_or(kept))
        continue; // no row keeps a key of this tile
    }
    loadTile<S, D, KT, kPitch>(a, kKey, b, kvh, key0, keyStop, ks);
    loadTile<S, D, KT, kPitch>(a, kValue, b, kvh, key0, keyStop, vs);
    waitCopies();
    __syncthreads();
    if (!warpActive)
      continue;

    // Scores of the thread's fragment.
    float s[kTiles][4];
#pragma unroll
    for (int n = 0; n < kTiles; ++n)
      s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
    if constexpr (kTensorCores) {
      // Lane l addresses key n * 8 + l % 8, columns kk * 16 + (l / 8) * 8:
      // one load gives the fragments of two 16-column steps.
#pragma unroll
      for (int n = 0; n < kTiles; ++n)
#pragma unroll
        for (int kk = 0; kk < D / 16; kk += 2) {
          uint32_t kb[4];
          loadMatrices<false>(kb, &ks[n * 8 + lane % 8][kk * 16 + (lane / 8) * 8]);
          mma<T>(s[n], qa[kk], kb[0], kb[1]);
          mma<T>(s[n], qa[kk + 1], kb[2], kb[3]);
        }
    } else {
#pragma unroll 2
      for (int d = 0; d < D; d += 4) {
        float4 x0 = *reinterpret_cast<const float4 *>(&qs[local0][d]);
        float4 x1 = *reinterpret_cast<const float4 *>(&qs[local1][d]);
#pragma unroll
        for (int n = 0; n < kTiles; ++n) {
          float4 y0 = *reinterpret_cast<const float4 *>(&ks[n * 8 + t * 2][d]);
          float4 y1 = *reinterpret_cast<const float4 *>(&ks[n * 8 + t * 2 + 1][d]);
          s[n][0] = fmaf(x0.w, y0.w, fmaf(x0.z, y0.z, fmaf(x0.y, y0.y, fmaf(x0.x, y0.x, s[n][0]))));
          s[n][1] = fmaf(x0.w, y1.w, fmaf(x0.z, y1.z, fmaf(x0.y, y1.y, fmaf(x0.x, y1.x, s[n][1]))));
          s[n][2] = fmaf(x1.w, y0.w, fmaf(x1.z, y0.z, fmaf(x1.y, y0.y, fmaf(x1.x, y0.x, s[n][2]))));
          s[n][3] = fmaf(x1.w, y1.w, fmaf(x1.z, y1.z, fmaf(x1.y, y1.y, fmaf(x1.x, y1.x, s[n][3]))));
        }
      }
    }

    // Scale, mask, and the tile's row maxima. Which keys each of the
    // thread's two rows keeps is a word of bits (keepBits), shifted so that
    // bit 8 n + e stands for its column n * 8 + 2 t + e: the loop over the
    // fragment then has no branch.
    RowBits<KT> keep0 = r0 < rows ? keyPrefix<KT>(keyStop - key0) : 0;
    RowBits<KT> keep1 = r1 < rows ? keyPrefix<KT>(keyStop - key0) : 0;
    if (causal) {
      keep0 &= keyPrefix<KT>(p0.query - key0 + 1);
      keep1 &= keyPrefix<KT>(p1.query - key0 + 1);
    } else if (hasMask && wideMask) {
      if constexpr (kMaskChunks) {
        keep0 &= rowBits<KT>(bits, local0);
        keep1 &= rowBits<KT>(bits, local1);
      }
    }
    keep0 >>= 2 * t;
    keep1 >>= 2 * t;
    // Scores stay in the units of the product (`units` converts them to
    // log2 of the weight), but with an additive mask they take its terms
    // first: scaled, in log2e units.
    if (hasMask && !wideMask) { // the mask's terms in ms: -inf where a bool mask drops a key
#pragma unroll
      for (int n = 0; n < kTiles; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          s[n][e] = fmaf(s[n][e], a.scale, ms[e >= 2 ? local1 : local0][n * 8 + t * 2 + (e & 1)]);
    }
    // Most tiles keep every key of the warp's rows (all but the diagonal of
    // a causal mask): those skip the selection.
    const RowBits<KT> kMine = fragmentBits<KT>();
    if (!__all_sync(0xffffffffu, (keep0 & kMine) == kMine && (keep1 & kMine) == kMine)) {
#pragma unroll
      for (int n = 0; n < kTiles; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          bool keep = ((e >= 2 ? keep1 : keep0) >> (8 * n + (e & 1))) & 1;
          s[n][e] = keep ? s[n][e] : -CUDART_INF_F;
        }
    }
    float mx0 = -CUDART_INF_F, mx1 = -CUDART_INF_F;
#pragma unroll
    for (int n = 0; n < kTiles; ++n) {
      mx0 = fmaxf(mx0, fmaxf(s[n][0], s[n][1]));
      mx1 = fmaxf(mx1, fmaxf(s[n][2], s[n][3]));
    }
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
    float new0 = fmaxf(m0, mx0), new1 = fmaxf(m1, mx1);
    // Nothing kept yet: no rescaling, and every weight exp2(-inf) = 0.
    float alpha0 = new0 == -CUDART_INF_F ? 1.f : exp2f((m0 - new0) * units);
    float alpha1 = new1 == -CUDART_INF_F ? 1.f : exp2f((m1 - new1) * units);
    float base0 = new0 == -CUDART_INF_F ? 0.f : new0 * units;
    float base1 = new1 == -CUDART_INF_F ? 0.f : new1 * units;
    m0 = new0;
    m1 = new1;
    l0 *= alpha0;
    l1 *= alpha1;
#pragma unroll
    for (int n = 0; n < kTiles; ++n) {
      s[n][0] = weightExp2<T>(fmaf(s[n][0], units, -base0));
      s[n][1] = weightExp2<T>(fmaf(s[n][1], units, -base0));
      s[n][2] = weightExp2<T>(fmaf(s[n][2], units, -base1));
      s[n][3] = weightExp2<T>(fmaf(s[n][3], units, -base1));
      l0 += s[n][0] + s[n][1];
      l1 += s[n][2] + s[n][3];
    }
    // Once the rows' maxima settle, most tiles rescale nothing.
    if (__any_sync(0xffffffffu, alpha0 != 1.f || alpha1 != 1.f)) {
#pragma unroll
      for (int n = 0; n < kCols; ++n) {
        o[n][0] *= alpha0;
        o[n][1] *= alpha0;
        o[n][2] *= alpha1;
        o[n][3] *= alpha1;
      }
    }

    // The weights times the values.
    if constexpr (kTensorCores) {
#pragma unroll
      for (int kt = 0; kt < KT / 16; ++kt) {
        // Two score fragments of 8 keys are one operand fragment of 16.
        uint32_t w[4] = {pack2<T>(s[2 * kt][0], s[2 * kt][1]),
                         pack2<T>(s[2 * kt][2], s[2 * kt][3]),
                         pack2<T>(s[2 * kt + 1][0], s[2 * kt + 1][1]),
                         pack2<T>(s[2 * kt + 1][2], s[2 * kt + 1][3])};
        // Lane l addresses key kt * 16 + ((l / 8) % 2) * 8 + l % 8, columns
        // (n + l / 16) * 8: one transposed load gives two column groups.
#pragma unroll
        for (int n = 0; n < kCols; n += 2) {
          uint32_t vb[4];
          loadMatrices<true>(vb, &vs[kt * 16 + ((lane / 8) % 2) * 8 + lane % 8][(n + lane / 16) * 8]);
          mma<T>(o[n], w, vb[0], vb[1]);
          mma<T>(o[n + 1], w, vb[2], vb[3]);
        }
      }
    } else {
#pragma unroll
      for (int n = 0; n < kTiles; ++n) {
        *reinterpret_cast<float2 *>(&ms[local0][n * 8 + t * 2]) = make_float2(s[n][0], s[n][1]);
        *reinterpret_cast<float2 *>(&ms[local1][n * 8 + t * 2]) = make_float2(s[n][2], s[n][3]);
      }
      __syncwarp(); // the warp's weights, written by its quads
#pragma unroll 2
      for (int j = 0; j < KT; j += 4) {
        float4 w0 = *reinterpret_cast<const float4 *>(&ms[local0][j]);
        float4 w1 = *reinterpret_cast<const float4 *>(&ms[local1][j]);
        const float x0[4] = {w0.x, w0.y, w0.z, w0.w}, x1[4] = {w1.x, w1.y, w1.z, w1.w};
#pragma unroll
        for (int c = 0; c < 4; ++c)
#pragma unroll
          for (int n = 0; n < kCols; ++n) {
            float2 y = *reinterpret_cast<const float2 *>(&vs[j + c][n * 8 + t * 2]);
            o[n][0] = fmaf(x0[c], y.x, o[n][0]);
            o[n][1] = fmaf(x0[c], y.y, o[n][1]);
            o[n][2] = fmaf(x1[c], y.x, o[n][2]);
            o[n][3] = fmaf(x1[c], y.y, o[n][3]);
          }
      }
    }
  }

  l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
  l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
  const int64_t totalRows = int64_t(a.batch) * a.heads * a.queries;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    int row = half ? r1 : r0;
    if (row >= rows)
      continue;
    RowPlace pr = half ? p1 : p0;
    float m = half ? m1 : m0, l = half ? l1 : l0;
    if (a.splits == 1) {
      T *out = reinterpret_cast<T *>(a.address[kOutput]);
      const int64_t *os = a.strides[kOutput];
      int64_t start = b * os[0] + pr.head * os[1] + pr.query * os[2];
      float inv = l > 0.f ? 1.f / l : 0.f;
#pragma unroll
      for (int n = 0; n < kCols; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          int d = n * 8 + t * 2 + e;
          if (d < dim)
            out[start + d * os[3]] = narrow<T>(o[n][2 * half + e] * inv);
        }
    } else {
      // The partial result of this split: unnormalized output, maximum, sum.
      int64_t at = (int64_t(blockIdx.y) * totalRows +
                    (int64_t(b) * a.heads + pr.head) * a.queries + pr.query);
      float *partial = reinterpret_cast<float *>(a.workspace);
      float *stats = partial + int64_t(a.splits) * totalRows * dim;
#pragma unroll
      for (int n = 0; n < kCols; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          int d = n * 8 + t * 2 + e;
          if (d < dim)
            partial[at * dim + d] = o[n][2 * half + e];
        }
      if (t == 0) {
        stats[2 * at] = m * units; // the combine step takes log2 units
        stats[2 * at + 1] = l;
      }
    }
  }
}

} // namespace

// One entry per element type and head-dimension bound, and a combining
// entry per element type; the host names them (CudaAttention.cpp).
#define GC_ATTENTION_ENTRY(NAME, T, D)                                                             \
  extern "C" __global__ void __launch_bounds__(kAttentionThreads, kAttentionBlocksPerSM)          \
      NAME(AttentionKernelArgs a) {                                                                \
    releaseSuccessor();                                                                            \
    awaitPredecessor();                                                                            \
    attention<T, D, attentionKeyTile(sizeof(T), D)>(a);                                            \
  }
GC_ATTENTION_ENTRY(gc_attention_f32_d64, float, 64)
GC_ATTENTION_ENTRY(gc_attention_f32_d128, float, 128)
GC_ATTENTION_ENTRY(gc_attention_bf16_d64, __nv_bfloat16, 64)
GC_ATTENTION_ENTRY(gc_attention_bf16_d128, __nv_bfloat16, 128)
GC_ATTENTION_ENTRY(gc_attention_f16_d64, __half, 64)
GC_ATTENTION_ENTRY(gc_attention_f16_d128, __half, 128)

#define GC_COMBINE_ENTRY(NAME, T)                                                                  \
  extern "C" __global__ void __launch_bounds__(kAttentionThreads) NAME(AttentionKernelArgs a) {   \
    releaseSuccessor();                                                                            \
    awaitPredecessor();                                                                            \
    combine<T>(a);                                                                                 \
  }
GC_COMBINE_ENTRY(gc_attention_combine_f32, float)
GC_COMBINE_ENTRY(gc_attention_combine_bf16, __nv_bfloat16)
GC_COMBINE_ENTRY(gc_attention_combine_f16, __half)

// The decode kernel: per element type and head-dimension bound, a rows
// bound of 4 (a decode step's query heads per key head, or 4 query rows)
// and of kDecodeRows.
#define GC_DECODE_ENTRY(NAME, T, D, R)                                                             \
  extern "C" __global__ void __launch_bounds__(kAttentionThreads) NAME(AttentionKernelArgs a) {   \
    releaseSuccessor();                                                                            \
    awaitPredecessor();                                                                            \
    decodeAttention<T, D, R>(a);                                                                   \
  }
#define GC_DECODE_ENTRIES(TYPE, T)                                                                 \
  GC_DECODE_ENTRY(gc_attention_decode_##TYPE##_d64_r4, T, 64, 4)                                   \
  GC_DECODE_ENTRY(gc_attention_decode_##TYPE##_d64_r16, T, 64, kDecodeRows)                        \
  GC_DECODE_ENTRY(gc_attention_decode_##TYPE##_d128_r4, T, 128, 4)                                 \
  GC_DECODE_ENTRY(gc_attention_decode_##TYPE##_d128_r16, T, 128, kDecodeRows)
GC_DECODE_ENTRIES(f32, float)
GC_DECODE_ENTRIES(bf16, __nv_bfloat16)
GC_DECODE_ENTRIES(f16, __half)
