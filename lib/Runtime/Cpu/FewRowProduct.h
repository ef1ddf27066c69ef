//===- FewRowProduct.h - Products of a few rows with weights in place -*- C++ -*-===//
//
// A matrix product of a few rows (a decode step's one token) with a
// constant weight in PyTorch's Linear layout, [N, K] with rows contiguous
// (the product's [K, N] operand seen transposed). Such a product reads
// every weight element once and does little with it, so its time is the
// weight's bytes over the memory bandwidth: the weight is read where it
// lies (a mapped package or archive), never packed into a second copy as
// oneDNN's products do, and its rows are split over the threads.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_CPU_FEWROWPRODUCT_H
#define GC_LIB_RUNTIME_CPU_FEWROWPRODUCT_H

#include "DnnlExtern.h"

#include "gc/Runtime/ThreadPool.h"

#include <functional>
#include <string_view>

namespace gc {

/// The most rows of the left operand the step takes. Up to this many, the
/// weight is read once per four rows (one register tile), as fast as or
/// faster than oneDNN's packed products (docs/llm.md, "What is measured").
constexpr int64_t kFewRowsMax = 8;

/// The few-row product compiled for one CPU level, in two parts: the left
/// operand is prepared once per product, then each task runs its columns.
struct FewRowLevel {
  /// Writes `rows` rows of `a` (stride lda) into `left` (room for rows * k
  /// floats) in the form `run` reads, with stride k. With `bf16` the
  /// values of `a` must be bfloat16 ones (the step's operands are all of
  /// one type).
  void (*prepare)(const float *a, int64_t lda, int64_t rows, int64_t k, bool bf16, void *left);
  /// out[m * ldo + n] = sum over k of a[m][k] * w[n * ldw + k], in float32,
  /// for m < rows and n in [nBegin, nEnd), from `left` as `prepare` wrote
  /// it. `w` holds float32, or bfloat16 (the upper halves of float32) when
  /// `bf16`.
  void (*run)(const void *left, int64_t rows, int64_t k, const void *w, int64_t ldw, bool bf16,
              float *out, int64_t ldo, int64_t nBegin, int64_t nEnd);
};
using FewRowKernel = const FewRowLevel *;

/// Runs `kernel` over all n columns on `pool`, split into tasks of whole
/// weight-row tiles, and calls `done(nBegin, nEnd)` in each task once its
/// columns' sums are in `out` (the step applies its post-ops there, while
/// they are in cache). The one split the step and utils/bench's kernel
/// benchmark share.
void runFewRowProduct(FewRowKernel kernel, const ThreadPool &pool, const float *a, int64_t lda,
                      int64_t rows, int64_t k, const void *w, int64_t ldw, bool bf16, float *out,
                      int64_t ldo, int64_t n,
                      const std::function<void(int64_t, int64_t)> &done);

/// How an x86-64-v4 kernel multiplies bfloat16 weights: Best takes
/// AVX-512 BF16's dot-product instruction where the host has it, Split
/// never does. Both give the same sums but where a product of two
/// bfloat16 is subnormal, which the instruction flushes to zero.
enum class FewRowForm { Best, Split };

/// The kernel compiled for `level` ("x86-64-v4", "x86-64-v3" or "x86-64",
/// as $GC_CPU_TARGET names them), or null for another name. The caller
/// makes sure the CPU runs that level.
FewRowKernel fewRowKernel(std::string_view level, FewRowForm form = FewRowForm::Best);

/// The step `step` describes when it is a few-row product (its `dnnl` a
/// matmul of at most kFewRowsMax rows by a constant weight in [N, K]
/// layout, float32 or bfloat16 throughout, post-ops this step applies),
/// running on `pool` (which must outlive it); null for any other call, which
/// then goes to oneDNN. `targets` is the graph's CPU target list: the step
/// runs the level of code the graph's kernels load (so that a package gives
/// the same bytes on every CPU that loads the same level), or the host's
/// where the list names none of its levels ("native").
Expected<std::unique_ptr<CpuCall>> prepareFewRowProduct(const plan::OpStep &step,
                                                         const std::vector<StridedLayout> &inputs,
                                                         const std::vector<StridedLayout> &outputs,
                                                         const std::vector<bool> &constant,
                                                         std::string_view targets,
                                                         const ThreadPool &pool);

} // namespace gc

#endif // GC_LIB_RUNTIME_CPU_FEWROWPRODUCT_H
