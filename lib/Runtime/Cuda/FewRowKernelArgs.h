//===- FewRowKernelArgs.h - The few-row product's argument -----*- C++ -*-===//
//
// The one argument of every few-row product kernel (FewRowKernel.cu),
// passed by value, as the host (CudaFewRowProduct.cpp) fills it in. Plain
// data, read by nvcc and by the host compiler alike.
//
// One launch computes 1 to kFewRowMaxProducts products that share their
// left rows (a decode layer's q, k and v projections, or its gate and up
// ones): for each, out[m, n] = act(sum_k a[m, k] w[n, k] + bias[n] +
// residual[m, n]) for m < rows, n < n: `a` and `w` with unit stride along
// k, the others with any strides (in elements). A single product is a
// group of one. A gated pair (a gated MLP's gate and up projections) is
// one product with a second weight `up` of w's layout: out[m, n] =
// silu(sum_k a[m, k] w[n, k]) * sum_k a[m, k] up[n, k]. With an RMSNorm
// prologue (`norm`), a[m, k] stands for a[m, k] norm[k] / sqrt(mean_k
// a[m, k]^2 + normEps) in each of these sums.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_CUDA_FEWROWKERNELARGS_H
#define GC_LIB_RUNTIME_CUDA_FEWROWKERNELARGS_H

#include "gc/Support/GpuFewRows.h"

#include <stdint.h>

namespace gc::cuda {

/// Threads per block: eight warps, in FewRowKernelArgs::groups groups that
/// each run along k over a tile of their own.
constexpr int kFewRowThreads = 256;
/// Weight rows (output columns) per group's tile.
constexpr int kFewRowTile = 2;
/// The most groups per block: one warp each.
constexpr int kFewRowMaxGroups = kFewRowThreads / 32;
/// The row counts the kernels take (gc/Support/GpuFewRows.h, which the
/// compiler reads too).
using gc::kGpuFewRowsExact;
using gc::kGpuFewRowsMax;

/// The activation applied last.
enum FewRowActivation : int32_t {
  kFewRowNoActivation = 0,
  kFewRowRelu = 1,
  kFewRowGeluTanh = 2,
};

struct FewRowKernelArgs {
  /// Device addresses of each operand's first element (bias, residual and
  /// up: 0 when absent). With `up`, a group's tile is row n of `w` and row
  /// n of `up` (strided as w), one output column, and there is no bias,
  /// residual or activation.
  uint64_t a, w, out, bias, residual, up;
  /// The RMSNorm prologue's weight (k elements, unit stride; 0: none) and
  /// epsilon.
  uint64_t norm;
  float normEps;
  /// Strides in elements.
  int64_t aRowStride, wRowStride;
  int64_t outRowStride, outColStride;
  int64_t biasStride;
  int64_t residualRowStride, residualColStride;
  int32_t n, k;
  /// Left rows: the instance's own count, or up to it for the instance of
  /// kGpuFewRowsMax rows.
  int32_t rows;
  int32_t activation;
  /// Groups of threads per block (1, 2, 4 or 8): block b's group g takes
  /// the weight rows of tile b * groups + g.
  int32_t groups;
  /// 1: the rows of `a`, `w` and `up`, and `norm`, start 16-byte aligned, so that they load 16
  /// bytes at a time up to the last whole vector (set at launch from the
  /// addresses); 0: every element loads alone.
  int32_t wide;
};

/// The most products one launch computes. A decode layer has at most three
/// that read the same rows (q, k and v; gate and up are two); four leaves
/// room for one more (a fused adapter's, say) while the argument stays
/// about 600 bytes, and a block finds its product in at most three
/// comparisons.
constexpr int kFewRowMaxProducts = 4;

struct FewRowGroupArgs {
  /// The products, each with its own `groups` equal to the others'; their
  /// `a`, aRowStride and k are the same.
  FewRowKernelArgs products[kFewRowMaxProducts];
  /// Product i takes blocks firstBlock[i] up to firstBlock[i + 1] (the
  /// last one up to the grid's end); blocks of a product do what a launch
  /// of it alone with the same groups would.
  uint32_t firstBlock[kFewRowMaxProducts];
  int32_t count;
};

} // namespace gc::cuda

#endif // GC_LIB_RUNTIME_CUDA_FEWROWKERNELARGS_H
