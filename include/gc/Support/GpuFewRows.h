//===- GpuFewRows.h - Which products the GPU's few-row kernel runs -*- C++ -*-===//
//
// libgcrt runs a GPU matrix product of a few left rows by a Linear weight
// as gc's own few-row kernel (lib/Runtime/Cuda/FewRowKernel.cu) where the
// rule below says it beats cuBLASLt, and plans each launch by it
// (CudaFewRowProduct.cpp). The compiler asks the same rule before it folds
// a gated pair or an RMSNorm into products (lib/Schedule/ProductFolds.cpp),
// since only the kernel computes those: both sides read it here. Plain constexpr
// data, which nvcc reads too (FewRowKernelArgs.h).
//
//===----------------------------------------------------------------------===//
#ifndef GC_SUPPORT_GPUFEWROWS_H
#define GC_SUPPORT_GPUFEWROWS_H

#include <stdint.h>

namespace gc {

/// Left rows up to this count have a kernel instance each, which knows its
/// count at compile time.
constexpr int kGpuFewRowsExact = 8;
/// The most left rows the kernel takes: counts past kGpuFewRowsExact run
/// one instance of this many rows, which reads the last real row again in
/// place of each missing one and stores only the real rows' sums. (A conv
/// net's 1x1 convolutions at a 4x4 resolution are products of 16 rows.)
constexpr int kGpuFewRowsMax = 16;

/// The largest weight (N x K elements, 4 MiB of float32) that float32
/// products of more than kGpuFewRowsExact rows take to the kernel.
constexpr int64_t kFewRowSmallWeight = int64_t(1) << 20;

/// The rule: whether the kernel is to run a product it can take, of
/// `rows` x `k` by a weight of `n` x `k` elements of `elementBytes`.
/// Measured on an H200 (utils/bench/cuda-fewrow.cpp, each product in a CUDA
/// graph, Llama-3.2-1B's and -3.1-8B's decode shapes, docs/gpu.md): float32
/// at 1 and 4 rows, the kernel wins or ties on every shape; 16-bit types at
/// one row, it wins on all but the gate/up products (5% slower there, 10%
/// faster on the step's products summed), and at 4 rows cuBLASLt's tensor
/// cores win on all but the smallest. So: float32 up to kGpuFewRowsExact
/// rows, 16-bit types a single row. Past kGpuFewRowsExact, float32 weights
/// of at most kFewRowSmallWeight elements: a conv net's 1x1 convolutions
/// at a 4x4 resolution, where cuBLASLt took 49 us for each of
/// shufflenet_v2's [16, 116] x [116, 116] products on an H200, a launch's
/// latency bound for the kernel; not yet timed on a GPU against cuBLASLt
/// (`cuda-fewrow-bench --conv-shapes` does), so larger weights of 9 to 16
/// rows stay cuBLASLt's.
constexpr bool fewRowKernelWins(int64_t rows, int64_t n, int64_t k, int64_t elementBytes) {
  if (rows == 1)
    return true;
  if (elementBytes != 4)
    return false;
  return rows <= kGpuFewRowsExact || n * k <= kFewRowSmallWeight;
}

} // namespace gc

#endif // GC_SUPPORT_GPUFEWROWS_H
