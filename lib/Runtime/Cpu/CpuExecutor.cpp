//===- CpuExecutor.cpp - Running a kernel plan on the CPU -----------------===//
//
// Buffers live in host memory: intermediates in one arena, inputs and
// outputs in the caller's tensors where their layouts agree (else in
// scratch memory, copied in and out). Kernels run over the thread pool,
// extern steps through the few-row product, oneDNN or the fused attention
// step. What the CPU and GPU executors share is in ExecutorBase.
//
//===----------------------------------------------------------------------===//
#include "CpuExecutor.h"

#include "AttentionStep.h"
#include "DnnlExtern.h"
#include "ExecutorBase.h"
#include "FewRowProduct.h"

#include "gc/Runtime/ThreadPool.h"

#include <algorithm>
#include <chrono>

namespace gc {

namespace {

using plan::BufferKind;

/// Below this much work (loop points times body operations) a kernel runs
/// on the calling thread:
/// waking the workers would cost more than it saves.
constexpr int64_t kParallelWork = 64 * 1024;

/// What a zero-size buffer points at: no element is ever read or written.
alignas(kBufferAlignment) char emptyBuffer[kBufferAlignment];

class CpuExecutor final : public ExecutorBase {
public:
  CpuExecutor(std::shared_ptr<const RuntimePlan> plan, const plan::Graph &graph,
              const KernelLibrary &kernels, const RuntimeOptions &options)
      : ExecutorBase(std::move(plan), graph, options), kernels_(kernels),
        pool_(options.threads), kernelFns_(graph.steps()->size(), nullptr) {}

  Error create() { return init(); }
  Error run(std::span<const TensorRef> inputs, std::span<const TensorRef> outputs) override;

private:
  Error resolveKernel(size_t s, const plan::KernelStep &k) override;
  Error prepareKernel(const plan::KernelStep &k, std::span<const int64_t> values,
                      StepInstance &si) override;
  Error prepareExtern(const plan::OpStep &op, StepInstance &si) override;

  /// Which caller tensors go through scratch: copied in before the steps,
  /// or out after them.
  struct Copies {
    std::vector<bool> in, out;
  };
  /// Points bufferPtrs_ at the arena, the caller's tensors and scratch.
  Copies placeBuffers(const Instance &inst, std::span<const TensorRef> inputs,
                      std::span<const TensorRef> outputs,
                      const std::vector<StridedLayout> &outLayouts);
  /// `values`: the run's symbol values, which a step that computes sizes
  /// binds.
  Error runStep(size_t s, StepInstance &step, char *const *buffers, const int64_t *symbols,
                std::vector<int64_t> &values);

  const KernelLibrary &kernels_;
  ThreadPool pool_;
  DnnlContext dnnl_;
  std::vector<KernelEntryFn> kernelFns_; ///< per step; null for op steps
  HostBuffer arena_, scratch_;
  std::vector<char *> bufferPtrs_;
  std::vector<char *> kernelArgs_; ///< the running kernel step's buffers
};

Error CpuExecutor::resolveKernel(size_t s, const plan::KernelStep &k) {
  kernelFns_[s] = kernels_.lookup(k.entry()->str());
  if (!kernelFns_[s])
    return makeError() << "kernel '" << k.entry()->str() << "' is not in the kernel library";
  return Error::success();
}

Error CpuExecutor::prepareKernel(const plan::KernelStep &k, std::span<const int64_t> values,
                                 StepInstance &si) {
  if (k.parallel_range()) {
    Expected<int64_t> n = evaluate(*k.parallel_range(), values);
    if (!n)
      return n.error();
    si.count = *n;
  }
  Expected<int64_t> work = evaluate(*k.work(), values);
  if (!work)
    return work.error();
  si.parallel = si.count > 1 && *work >= kParallelWork && pool_.size() > 1;
  return Error::success();
}

Error CpuExecutor::prepareExtern(const plan::OpStep &op, StepInstance &si) {
  if (op.attention()) {
    Expected<std::unique_ptr<CpuCall>> attention =
        prepareAttention(op, si.inputs, si.outputs, pool_);
    if (!attention)
      return attention.error();
    si.call = attention.take();
    return Error::success();
  }
  // Weights do not change while the executor lives, so what oneDNN
  // derives from them (reordered weights) is kept.
  std::vector<bool> constant;
  for (const plan::View *v : *op.inputs())
    constant.push_back(buffer(v->buffer()).kind() == BufferKind::Weight);
  // A product of a few rows reads its weight where it lies; oneDNN would
  // pack a second copy of it and be no faster.
  Expected<std::unique_ptr<CpuCall>> fewRows =
      prepareFewRowProduct(op, si.inputs, si.outputs, constant,
                           graph_.target() ? graph_.target()->string_view() : "", pool_);
  if (!fewRows)
    return fewRows.error();
  si.call = fewRows.take();
  if (!si.call)
    si.call = dnnl_.prepare(op, si.inputs, si.outputs, constant);
  return Error::success();
}

Error CpuExecutor::runStep(size_t s, StepInstance &step, char *const *buffers,
                           const int64_t *symbols, std::vector<int64_t> &values) {
  if (KernelEntryFn fn = kernelFns_[s]) {
    if (step.count <= 0)
      return Error::success();
    // The kernel receives the base pointers of its own buffers (the step's
    // uses, in order), so that one entry serves every step that shares it.
    const auto &uses = *this->step(s).uses();
    kernelArgs_.resize(uses.size());
    for (size_t k = 0; k < uses.size(); ++k)
      kernelArgs_[k] = buffers[uses[k]];
    char *const *args = kernelArgs_.data();
    if (!step.parallel) {
      fn(args, symbols, 0, step.count);
      return Error::success();
    }
    pool_.parallelFor(step.count,
                      [&](int64_t begin, int64_t end) { fn(args, symbols, begin, end); });
    return Error::success();
  }
  if (step.call) {
    // The step's name is only spelled out on failure.
    ExternReorders reorders;
    if (Error e = step.call->run({.hostBuffers = buffers,
                                  .reorders = profiling_ ? &reorders : nullptr}))
      return e.withContext(stepLabel(s));
    if (profiling_)
      recordReorders(s, reorders.count, reorders.seconds);
    return Error::success();
  }
  return runOnHost(s, step, buffers, values);
}

CpuExecutor::Copies CpuExecutor::placeBuffers(const Instance &inst,
                                              std::span<const TensorRef> inputs,
                                              std::span<const TensorRef> outputs,
                                              const std::vector<StridedLayout> &outLayouts) {
  size_t numBuffers = numBuffers_;
  bufferPtrs_.assign(numBuffers, nullptr);
  char *arena = arena_.reserve(std::max<int64_t>(inst.arenaBytes, 1));
  for (size_t b = 0; b < numBuffers; ++b)
    if (buffer(b).kind() == BufferKind::Intermediate && inst.offsets[b] >= 0)
      bufferPtrs_[b] = arena + inst.offsets[b];

  // Caller memory is used in place when its layout is the buffer's; the
  // rest goes through scratch, laid out once we know what needs it.
  Copies copies{std::vector<bool>(inputs.size(), false), std::vector<bool>(outputs.size(), true)};
  std::vector<size_t> scratchOffset(numBuffers, SIZE_MAX);
  size_t scratchBytes = 0;
  auto needScratch = [&](size_t b) {
    if (scratchOffset[b] == SIZE_MAX) {
      scratchOffset[b] = scratchBytes;
      scratchBytes += alignUp(inst.bufferBytes[b]);
    }
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    uint32_t b = input(i).view()->buffer();
    const StridedLayout &buf = inst.buffers[b];
    if (!bufferPtrs_[b] && inst.inputViews[i].sameMemoryAs(buf) &&
        callerLayout(inputs[i]).sameMemoryAs(buf)) {
      bufferPtrs_[b] = static_cast<char *>(inputs[i].data);
      continue;
    }
    copies.in[i] = true;
    needScratch(b);
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    uint32_t b = output(j).view()->buffer();
    const StridedLayout &buf = inst.buffers[b];
    if (!inst.outputViews[j].sameMemoryAs(buf) || !outLayouts[j].sameMemoryAs(buf) ||
        outputDependsOnData(j))
      continue;
    if (buffer(b).kind() == BufferKind::Output && !bufferPtrs_[b]) {
      bufferPtrs_[b] = static_cast<char *>(outputs[j].data);
      copies.out[j] = false;
    } else if (buffer(b).kind() == BufferKind::Input && bufferPtrs_[b] == outputs[j].data) {
      // A mutated buffer updated in place, whose input and output are the
      // same memory (the context's state): already written.
      copies.out[j] = false;
    }
  }
  for (size_t b = 0; b < numBuffers; ++b)
    if (buffer(b).kind() == BufferKind::Output && !bufferPtrs_[b])
      needScratch(b);
  char *scratch = scratch_.reserve(std::max<size_t>(scratchBytes, 1));
  for (size_t b = 0; b < numBuffers; ++b) {
    if (scratchOffset[b] != SIZE_MAX)
      bufferPtrs_[b] = scratch + scratchOffset[b];
    if (!bufferPtrs_[b] || inst.bufferBytes[b] == 0)
      bufferPtrs_[b] = emptyBuffer;
  }
  return copies;
}

Error CpuExecutor::run(std::span<const TensorRef> inputs, std::span<const TensorRef> outputs) {
  GC_RETURN_IF_ERROR(refuseDeviceTensors(inputs, outputs));
  Expected<RunStart> start = startRun(inputs, outputs);
  if (!start)
    return start.error();
  Instance *inst = start->inst;
  const std::vector<StridedLayout> &outLayouts = start->outputLayouts;
  Copies copies = placeBuffers(*inst, inputs, outputs, outLayouts);
  pool_.bindToCallingThread();

  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!copies.in[i])
      continue;
    const StridedLayout &view = inst->inputViews[i];
    unsigned elem = dtypeSize(inputs[i].dtype);
    copyStrided(bufferPtrs_[input(i).view()->buffer()] + view.offset * elem, view.strides,
                static_cast<const char *>(inputs[i].data), callerLayout(inputs[i]).strides,
                view.sizes, elem);
  }
  std::vector<int64_t> values = inst->values;
  for (size_t s = 0; s < inst->steps.size(); ++s) {
    auto begin = profiling_ ? std::chrono::steady_clock::now()
                            : std::chrono::steady_clock::time_point();
    GC_RETURN_IF_ERROR(runStep(s, inst->steps[s], bufferPtrs_.data(), inst->symbols.data(), values));
    if (profiling_)
      recordStep(s, std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
                        .count());
    // The later steps run with the sizes this one computed.
    if (bindsSizes(s)) {
      Expected<Instance *> next = instanceAfter(values);
      if (!next)
        return next.error();
      inst = *next;
    }
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (!copies.out[j])
      continue;
    const StridedLayout &view = inst->outputViews[j];
    unsigned elem = dtypeSize(outputs[j].dtype);
    // A size the data decided: row-major from the start of the caller's
    // memory, which has room for the upper bound.
    std::vector<int64_t> strides = outputDependsOnData(j)
                                       ? callerLayout(TensorRef{nullptr, outputs[j].dtype,
                                                                view.sizes, {}})
                                             .strides
                                       : outLayouts[j].strides;
    copyStrided(static_cast<char *>(outputs[j].data), strides,
                bufferPtrs_[output(j).view()->buffer()] + view.offset * elem, view.strides,
                view.sizes, elem);
  }
  finishRun(*inst);
  return Error::success();
}

} // namespace

Expected<std::unique_ptr<Executor>> createCpuExecutor(std::shared_ptr<const RuntimePlan> plan,
                                                      const plan::Graph &graph,
                                                      const KernelLibrary &kernels,
                                                      const RuntimeOptions &options) {
  auto exec = std::make_unique<CpuExecutor>(std::move(plan), graph, kernels, options);
  GC_RETURN_IF_ERROR(exec->create());
  return std::unique_ptr<Executor>(std::move(exec));
}

} // namespace gc
