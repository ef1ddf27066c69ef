//===- AttentionKernelArgs.h - The fused attention argument ----*- C++ -*-===//
//
// The one argument of every fused attention kernel (AttentionKernel.cu),
// passed by value, as the host (CudaAttention.cpp) fills it in. Plain data,
// read by nvcc and by the host compiler alike, so both agree on its layout.
//
// The kernels see every operand as four dimensions (batch, head, row,
// column) with strides in elements; a missing or broadcast dimension has
// stride 0. Key and value heads are the query's head divided by `group`
// (grouped-query attention; 1 otherwise).
//
// A block computes kAttentionBlockRows rows of one (batch, key head): the
// rows of its `group` query heads, head by head, queries within a head
// (row r: query head kvHead * group + r / queries, query r % queries), so
// that the query heads sharing a key head read its keys and values once --
// at decode (one query) those heads are the only rows there are. The keys
// are split in `splits` ranges of `keysPerSplit` (grid y): with more than
// one, each block writes its unnormalized output and its rows' maximum and
// sum to the workspace, and the combine kernel makes the output.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_CUDA_ATTENTIONKERNELARGS_H
#define GC_LIB_RUNTIME_CUDA_ATTENTIONKERNELARGS_H

#include <stdint.h>

namespace gc::cuda {

/// Rows (of one key head's query heads) per block: four warps of 16.
constexpr int kAttentionBlockRows = 64;
/// Threads per block of the attention kernels (and of the combine kernel).
constexpr int kAttentionThreads = 128;

/// The decode kernel (DecodeAttention.cuh) takes calls of at most this
/// many rows per (batch, key head): one block per (batch, key head) and
/// split, its rows on CUDA cores.
constexpr int kDecodeRows = 16;
/// Keys the decode kernel reads the mask of at once (and skips together
/// when the mask drops them all); its splits are multiples of it.
constexpr int kDecodeKeyChunk = 64;

/// Keys per tile of the kernel for elements of `elementBytes` and head
/// dimensions up to `headDimBound` (64 or 128): what fits the 48 KiB of
/// shared memory a block has without opting in.
#ifdef __CUDACC__
__host__ __device__
#endif
constexpr int attentionKeyTile(int elementBytes, int headDimBound) {
  return elementBytes == 4 ? (headDimBound == 64 ? 32 : 8) : (headDimBound == 64 ? 64 : 32);
}

/// How the kernel masks scores.
enum AttentionMaskKind : int32_t {
  kMaskNone = 0,
  kMaskCausal = 1,   ///< key j <= query i
  kMaskBool = 2,     ///< a bool mask: keep where true
  kMaskFloat32 = 3,  ///< an additive float32 mask
  kMaskBFloat16 = 4, ///< an additive bfloat16 mask
  kMaskFloat16 = 5,  ///< an additive float16 mask
};

/// Operands, in the order of AttentionKernelArgs::strides.
enum AttentionOperand : int32_t { kQuery, kKey, kValue, kMask, kOutput, kNumOperands };

struct AttentionKernelArgs {
  /// Device addresses of each operand's first element (mask: 0 if none).
  uint64_t address[kNumOperands];
  /// Per operand: strides of batch, head, row, column.
  int64_t strides[kNumOperands][4];
  /// With splits > 1: the partial outputs (float [splits][rows][headDim])
  /// followed by the rows' maxima and sums (float2 [splits][rows]), rows
  /// counted over batch, heads and queries.
  uint64_t workspace;
  int32_t batch, heads, queries, keys, headDim;
  /// Query heads per key head.
  int32_t group;
  /// Blocks per (batch, key head): ceil(group * queries / block rows); 1
/// for the decode kernel.
  int32_t rowBlocks;
  int32_t splits, keysPerSplit;
  int32_t maskKind;
  /// Bit o set: operand o's key/value rows load 16 bytes at a time (unit
  /// column stride, 16-byte aligned rows; set at launch from the addresses);
  /// bit kMask: a bool mask's rows load 16 keys at a time (the same, and a
  /// key count of whole 16-key chunks).
  int32_t wide;
  float scale;
};

} // namespace gc::cuda

#endif // GC_LIB_RUNTIME_CUDA_ATTENTIONKERNELARGS_H
