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
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_CUDA_ATTENTIONKERNELARGS_H
#define GC_LIB_RUNTIME_CUDA_ATTENTIONKERNELARGS_H

#include <stdint.h>

namespace gc::cuda {

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
  int32_t batch, heads, queries, keys, headDim;
  /// Query heads per key head.
  int32_t group;
  /// Blocks per (batch, head): ceil(queries / rows per block).
  int32_t queryBlocks;
  int32_t maskKind;
  float scale;
};

} // namespace gc::cuda

#endif // GC_LIB_RUNTIME_CUDA_ATTENTIONKERNELARGS_H
