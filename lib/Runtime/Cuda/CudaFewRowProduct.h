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
// Products that read the same left rows (a decode layer's q, k and v
// projections; its gate and up ones) run as one launch whose blocks are
// shared out among them (FewRowGroupArgs): the small ones alone leave most
// SMs idle and pay a launch each. The CUDA executor groups them once the
// steps of an instance are prepared (CudaExecutor::finishInstance), not
// gc-codegen: the grouping needs the evaluated views (a step's offsets and
// strides may depend on size symbols) and the kernel's own decisions per
// step, both of which only the runtime has, and the plan format stays as
// it is. Runs of consecutive steps are grouped (fewRowGroupRuns), so no
// step moves past another and a CUDA graph's capture sees the same order.
// The group's call is the first step's; the others' calls do nothing, so a
// profile reports the group's time under its first step. Where the memory
// plan lets an output share memory with another product's operand, the
// group cannot run at once; its call then launches the products one after
// another, as they would run ungrouped.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_CUDA_CUDAFEWROWPRODUCT_H
#define GC_LIB_RUNTIME_CUDA_CUDAFEWROWPRODUCT_H

#include "CudaDriver.h"
#include "ExternCall.h"
#include "FewRowKernelArgs.h"

#include "gc/Runtime/RuntimePlan.h"
#include "gc/Runtime/StridedLayout.h"

#include <array>
#include <memory>
#include <optional>
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
  kFewRowUp,
  kFewRowNorm,
  kFewRowOperands
};

/// The address fields of `args`, in FewRowOperand order.
inline std::array<uint64_t *, kFewRowOperands> fewRowAddresses(FewRowKernelArgs &args) {
  return {&args.a, &args.w, &args.out, &args.bias, &args.residual, &args.up, &args.norm};
}

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
  /// Each operand's bytes from its first element to past its last (absent:
  /// 0), for a group's overlap check.
  int64_t spanBytes[kFewRowOperands] = {};
  unsigned blocks = 0;
  int64_t rows = 0, n = 0, k = 0, elementBytes = 0;
};

/// The kernel's launch for `step` (its `dnnl` a matmul) on these
/// evaluated layouts on a GPU of `multiprocessors` SMs, or the reason it
/// declines: not a product of 1 to kGpuFewRowsMax rows (with any
/// dimensions before the last two of size 1), a weight not in [N, K]
/// layout, the left operand's k not contiguous, mixed or other dtypes than
/// float32, bfloat16 and float16, an epilogue cuBLASLt would not fuse
/// either, or a shape the rule (fewRowKernelWins) leaves to cuBLASLt. A
/// gated pair (ProductEpilogue::up) or an RMSNorm prologue
/// (ProductEpilogue::rmsNorm), which cuBLASLt cannot compute, skips the
/// rule: the kernel takes each one it can, the second weight laid out as
/// the first, the norm's weight one contiguous value per k.
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

/// One launch of 1 to kFewRowMaxProducts products that share their left
/// rows; blocks go to the products in order, each as many as its tiles
/// take in the group's thread groups.
struct FewRowGroup {
  std::string entry;
  std::vector<FewRowLaunch> products;
  unsigned blocks = 0;
};

/// A launch of `launch` alone, with its own thread groups.
FewRowGroup fewRowGroupOfOne(FewRowLaunch launch);

/// The launch of `products` (each planned by planFewRowProduct, that
/// joinsFewRowGroup accepts together) on a GPU of `multiprocessors` SMs:
/// their thread groups per block chosen by planFewRowProduct's rule over
/// all their tiles, the same for each, so that every block does the same
/// work.
FewRowGroup planFewRowGroup(std::vector<FewRowLaunch> products, int multiprocessors);

/// Whether `next` (planned) may run in one launch with `group`'s products,
/// the steps just before it: fewer than kFewRowMaxProducts of them, the
/// same kernel (type and rows) and k, the same left rows (buffer, offset
/// and row stride); and no buffer one writes is one another reads or
/// writes.
bool joinsFewRowGroup(const std::vector<const FewRowLaunch *> &group, const FewRowLaunch &next);

/// The groups among consecutive steps, `launches` holding each step's
/// launch (null where the kernel does not take the step): [first, first +
/// count) for count >= 2, each as long as joinsFewRowGroup allows, the next
/// starting where the last ended.
std::vector<std::pair<size_t, size_t>>
fewRowGroupRuns(const std::vector<const FewRowLaunch *> &launches);

/// `group`'s argument for plan buffers at `buffers`, or nullopt when at
/// these addresses a product's output overlaps another product's operand
/// (the memory plan may place a buffer where one read earlier lay): the
/// products must then run one after another. Also nullopt for no products
/// or more than kFewRowMaxProducts.
std::optional<FewRowGroupArgs> fewRowGroupArgs(const FewRowGroup &group, const uint64_t *buffers);


/// The kernels of one executor's context, loaded on first need.
class CudaFewRowKernels {
public:
  /// `early`: the kernels may start early where their code allows it
  /// (Kernel).
  CudaFewRowKernels(const Driver &d, int multiprocessors, bool early)
      : d_(d), multiprocessors_(multiprocessors), early_(early) {}
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

  /// The call that runs `products` (2 to kFewRowMaxProducts that
  /// joinsFewRowGroup accepts together) as one launch, or one after another
  /// where the addresses do not allow it (fewRowGroupArgs); null as call(),
  /// or for no products or too many.
  Expected<std::unique_ptr<ExternCall>> group(std::vector<FewRowLaunch> products);

private:
  Expected<Kernel> function(const std::string &entry);

  const Driver &d_;
  int multiprocessors_;
  bool early_;
  Module module_ = nullptr;
};

/// The launch of a call that call() or prepare() made for one product (to
/// group it with others), else null.
const FewRowLaunch *fewRowLaunchOf(const ExternCall *call);

/// The call of a step whose product runs in its group's launch, made by
/// the call of the group's first step: it does nothing.
std::unique_ptr<ExternCall> fewRowGroupedStep();

/// Whether this libgcrt carries the kernels (its build found nvcc).
bool haveFewRowKernels();

} // namespace gc::cuda

#endif // GC_LIB_RUNTIME_CUDA_CUDAFEWROWPRODUCT_H
