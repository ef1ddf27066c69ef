//===- CudaFewRowProduct.h - Products of a few rows on GPUs ----*- C++ -*-===//
//
// The GPU counterpart of Cpu/FewRowProduct.h: a matrix product (an extern
// step whose `dnnl` is a matmul) of at most kGpuFewRowsMax left rows by a
// weight in PyTorch's Linear layout, [N, K] with contiguous rows (the
// product's [K, N] operand seen transposed), runs as one launch of gc's
// few-row kernel (FewRowKernel.cu, embedded in libgcrt as a fatbinary like
// the attention kernel) instead of cuBLASLt, whose few-row products are
// bound by latency rather than by the weight's bytes (docs/gpu.md,
// "Products of a few rows"). The kernel applies the epilogue cuBLASLt
// would fuse (a bias, a residual add, then ReLU or GELU's tanh form), so
// choosing it never adds a launch; any other step declines and goes to
// cuBLASLt as before.
//
// planFewRowProduct decides from the step's views alone (unit-tested
// without a GPU); CudaFewRowKernels loads the kernels and makes the calls.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_CUDA_CUDAFEWROWPRODUCT_H
#define GC_LIB_RUNTIME_CUDA_CUDAFEWROWPRODUCT_H

#include "CudaDriver.h"
#include "ExternCall.h"
#include "FewRowKernelArgs.h"

#include "gc/Runtime/RuntimePlan.h"
#include "gc/Runtime/StridedLayout.h"

#include <memory>
#include <string>
#include <vector>

namespace gc::cuda {

/// Operands of the product, in the order of FewRowLaunch::buffers.
enum FewRowOperand : int {
  kFewRowA,
  kFewRowW,
  kFewRowOut,
  kFewRowBias,
  kFewRowResidual,
  kFewRowOperands
};

/// The launch that computes one step, or why there is none.
struct FewRowLaunch {
  /// Empty when the kernel declines.
  std::string entry;
  std::string declined;
  /// The argument, with each operand's byte offset in its address until
  /// the buffers' addresses are added at run time (absent operands: 0).
  FewRowKernelArgs args{};
  /// Each operand's plan buffer; `present` says which operands there are.
  uint32_t buffers[kFewRowOperands] = {};
  bool present[kFewRowOperands] = {};
  /// Whether the rows' strides keep 16-byte vectors aligned (the
  /// addresses are checked at run time).
  bool wideStrides = false;
  unsigned blocks = 0;
  int64_t rows = 0, n = 0, k = 0, elementBytes = 0;
};

/// The kernel's launch for `step` (its `dnnl` a matmul) on these
/// evaluated layouts on a GPU of `multiprocessors` SMs, or the reason it
/// declines: not a product of 1 to kGpuFewRowsMax rows (with any
/// dimensions before the last two of size 1), a weight not in [N, K]
/// layout, the left operand's k not contiguous, mixed or other dtypes than
/// float32, bfloat16 and float16, an epilogue cuBLASLt would not fuse
/// either, or a shape the rule (fewRowKernelWins) leaves to cuBLASLt.
///
/// Thread groups per block: where a row's 16-byte chunks are fewer than a
/// block's threads, as many groups as keep every thread busy; beyond that,
/// doubled while the blocks stay at least kFewRowBlocksPerSM per SM, so
/// that each thread has more bytes in flight and fewer blocks end in a
/// reduction.
///
/// `pick` WheneverPossible skips the rule: what the kernel can take (for
/// utils/bench's comparison with cuBLASLt on every shape).
enum class FewRowPick { ByRule, WheneverPossible };
FewRowLaunch planFewRowProduct(const plan::OpStep &step, const std::vector<StridedLayout> &inputs,
                               const std::vector<StridedLayout> &outputs, int multiprocessors,
                               FewRowPick pick = FewRowPick::ByRule);
constexpr int64_t kFewRowBlocksPerSM = 4;

/// Sets `launch`'s thread groups per block (1, 2, 4 or 8) and the blocks
/// that makes.
void setFewRowGroups(FewRowLaunch &launch, int groups);

/// `launch`'s argument for plan buffers at `buffers` (device addresses, by
/// index): the operands' addresses, and whether their rows load 16 bytes
/// at a time.
FewRowKernelArgs fewRowArgs(const FewRowLaunch &launch, const uint64_t *buffers);

/// The rule: whether the kernel is to run a product it can take, of
/// `rows` x `k` by a weight of `n` x `k` elements of `elementBytes`.
/// Measured on an H200 (utils/bench/cuda-fewrow.cpp, each product in a CUDA
/// graph, Llama-3.2-1B's and -3.1-8B's decode shapes, docs/gpu.md): float32
/// at 1 and 4 rows, the kernel wins or ties on every shape; 16-bit types at
/// one row, it wins on all but the gate/up products (5% slower there, 10%
/// faster on the step's products summed), and at 4 rows cuBLASLt's tensor
/// cores win on all but the smallest. So: float32 up to kGpuFewRowsMax rows,
/// 16-bit types a single row.
bool fewRowKernelWins(int64_t rows, int64_t n, int64_t k, int64_t elementBytes);

/// The kernels of one executor's context, loaded on first need.
class CudaFewRowKernels {
public:
  CudaFewRowKernels(const Driver &d, int multiprocessors)
      : d_(d), multiprocessors_(multiprocessors) {}
  ~CudaFewRowKernels();
  CudaFewRowKernels(const CudaFewRowKernels &) = delete;
  CudaFewRowKernels &operator=(const CudaFewRowKernels &) = delete;

  /// The call for `step` on these layouts, or null when the kernel
  /// declines it or libgcrt was built without it. Needs the executor's
  /// context current.
  Expected<std::unique_ptr<ExternCall>> prepare(const plan::OpStep &step,
                                                const std::vector<StridedLayout> &inputs,
                                                const std::vector<StridedLayout> &outputs,
                                                FewRowPick pick = FewRowPick::ByRule);

  /// The call that runs `launch` (planned by planFewRowProduct), or null
  /// when libgcrt was built without the kernels.
  Expected<std::unique_ptr<ExternCall>> call(FewRowLaunch launch);

private:
  const Driver &d_;
  int multiprocessors_;
  Module module_ = nullptr;
};

/// Whether this libgcrt carries the kernels (its build found nvcc).
bool haveFewRowKernels();

} // namespace gc::cuda

#endif // GC_LIB_RUNTIME_CUDA_CUDAFEWROWPRODUCT_H
