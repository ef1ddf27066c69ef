//===- CudaAttention.h - The fused attention step on GPUs ------*- C++ -*-===//
//
// The GPU counterpart of Cpu/AttentionStep.h: an extern step whose
// `attention` is set runs as one launch of gc's fused attention kernel
// (AttentionKernel.cu, compiled by nvcc at gc's build time and embedded in
// libgcrt as a fatbinary, as the strided-copy kernel's PTX is: every CUDA
// package uses it, and libgcrt compiles nothing). The compiler keeps such a
// call whole only where the kernel takes it (gc/IR/ExternOps.h:
// runsWhole); a layout the kernel still cannot take (a rank above 4, an
// operand that does not broadcast) declines, and the step's reference
// kernel runs instead.
//
// planAttention decides everything from the views alone, without a GPU
// (unit-tested anywhere); CudaAttentionKernels loads the kernels and makes
// the calls.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_CUDA_CUDAATTENTION_H
#define GC_LIB_RUNTIME_CUDA_CUDAATTENTION_H

#include "AttentionKernelArgs.h"
#include "CudaDriver.h"
#include "ExternCall.h"

#include "gc/Runtime/RuntimePlan.h"
#include "gc/Runtime/StridedLayout.h"

#include <memory>
#include <string>

namespace gc::cuda {

/// The attention operands of one step: layouts (the mask's null when there
/// is none), element types and plan buffers, by AttentionOperand.
struct AttentionOperands {
  const StridedLayout *layouts[kNumOperands] = {};
  plan::DType dtypes[kNumOperands] = {};
  uint32_t buffers[kNumOperands] = {};
  bool causal = false;
  double scale = 1;
};

/// The launches that compute one step, or why there are none.
struct AttentionLaunch {
  /// Empty when the kernel declines.
  std::string entry;
  std::string declined;
  /// The second kernel that combines the splits' partial results (empty
  /// with one split).
  std::string combineEntry;
  /// The argument, with each operand's byte offset in `address` until the
  /// buffers' addresses are added at run time.
  AttentionKernelArgs args{};
  uint32_t buffers[kNumOperands] = {};
  /// The attention kernel's grid is blocks x args.splits; the combine
  /// kernel's combineBlocks.
  unsigned blocks = 0, combineBlocks = 0;
  /// Device scratch memory for the splits' partial results.
  uint64_t workspaceBytes = 0;
};

/// The entry and argument that compute `ops` on a GPU of `multiprocessors`
/// SMs, or the reason none does: the decode kernel for at most kDecodeRows
/// rows per (batch, key head), the tile kernel otherwise. Where (batch x key heads x row blocks)
/// fills under two waves of the SMs, the keys are split so that it does,
/// each split keeping at least kMinTilesPerSplit key tiles (fewer would
/// cost more in the combine than the extra blocks gain).
AttentionLaunch planAttention(const AttentionOperands &ops, int multiprocessors);
constexpr int64_t kMinTilesPerSplit = 2;

/// `launch`'s argument for one run: operand addresses from the plan
/// buffers' addresses `buffers`, the workspace, and which operands load 16
/// bytes at a time (elements of `elementBytes`).
AttentionKernelArgs bindAttention(const AttentionLaunch &launch, const uint64_t *buffers,
                                  uint64_t workspace, int64_t elementBytes);

/// The kernels of one executor's context, loaded on first need.
class CudaAttentionKernels {
public:
  /// `early`: the kernels may start early where their code allows it
  /// (Kernel).
  CudaAttentionKernels(const Driver &d, int multiprocessors, bool early)
      : d_(d), multiprocessors_(multiprocessors), early_(early) {}
  ~CudaAttentionKernels();
  CudaAttentionKernels(const CudaAttentionKernels &) = delete;
  CudaAttentionKernels &operator=(const CudaAttentionKernels &) = delete;

  /// The call for `step` (its `attention` set) on these layouts, or null
  /// when the kernel declines it or libgcrt was built without it. Needs
  /// the executor's context current.
  Expected<std::unique_ptr<ExternCall>> prepare(const plan::OpStep &step,
                                                const std::vector<StridedLayout> &inputs,
                                                const std::vector<StridedLayout> &outputs);

private:
  Expected<Kernel> kernel(const std::string &entry);

  const Driver &d_;
  int multiprocessors_;
  bool early_;
  Module module_ = nullptr;
};

/// Whether this libgcrt carries the kernels (its build found nvcc).
bool haveAttentionKernels();

} // namespace gc::cuda

#endif // GC_LIB_RUNTIME_CUDA_CUDAATTENTION_H
