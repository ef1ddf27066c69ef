//===- CudaExecutor.cpp - Running a plan graph on an NVIDIA GPU -----------===//
//
// The executor holds a retained primary context of its device, one stream,
// the graph's module (loaded once, every kernel resolved at creation) and
// one device allocation laid out per run:
//
//   [ arena (intermediates) | inputs and outputs | library workspace | tables ]
//
// where the tables are, for each kernel step in turn, the addresses of the
// buffers it uses (its `buffers` argument: one kernel may serve several
// steps), then the kernel symbols' values that every kernel receives:
// entry(buffers, symbols). Weights get allocations
// of their own, uploaded once and again only when their host address
// changes. Callers pass host tensors: inputs are copied in before the steps
// and outputs out after them, through host staging memory where the
// caller's strides are not the buffer's; tensors already in the GPU's memory
// are copied on the GPU, as one block where laid out as their buffers, else
// by the strided-copy kernel (StridedCopy.h). Fallback and call steps run on
// the host through the same code as on the CPU, on host copies of the
// buffers they view.
//
// A run goes on the executor's own stream and is waited for, or on the
// caller's stream (setStream), where it is only enqueued. An event recorded
// at the end of each call orders a call on another stream after it, since
// every call uses the same device memory.
//
// A graph whose steps all run on the GPU is captured as a CUDA graph and
// replayed: one launch instead of one per step. With static shapes that is
// from the first run on; with symbolic ones, from the second run in a row of
// the same sizes, so that sizes that change with every run never pay for a
// capture. The capture holds the addresses the steps were given, so it is
// made again if any of them moves. A profile times each step between two
// CUDA events, on the GPU's clock. Captures are made on the executor's own
// stream and launched on the run's.
//
//===----------------------------------------------------------------------===//
#include "CudaExecutor.h"

#include "CudaAttention.h"
#include "CudaDriver.h"
#include "CudaFewRowProduct.h"
#include "CallerMemory.h"
#include "CudaLibraries.h"
#include "ExecutorBase.h"
#include "StridedCopy.h"

#include "gc/Support/Target.h"

#include <algorithm>
#include <chrono>
#include <climits>

namespace gc {

namespace {

using cuda::DevicePtr;
using cuda::Driver;
using cuda::Result;
using plan::BufferKind;

/// Where the executor places buffers and the library workspace in its
/// device allocation: cuBLASLt wants its workspace 256-byte aligned, and
/// picks its fastest algorithms for operands that are.
constexpr size_t kDeviceAlignment = 256;
size_t alignDevice(size_t v) {
  return (v + kDeviceAlignment - 1) / kDeviceAlignment * kDeviceAlignment;
}

/// The error for a failed allocation of `bytes` bytes for `what`.
Error allocationError(const Driver &d, Result r, size_t bytes, const std::string &what,
                      const CudaDevice &device) {
  if (r == cuda::ErrorOutOfMemory)
    return makeError() << "out of GPU memory: " << what << " asked for " << bytes
                       << " bytes on " << device.describe() << " (" << device.memoryBytes
                       << " bytes in all)";
  return d.check(r, "allocating " + std::to_string(bytes) + " bytes of GPU memory for " + what);
}

/// Device memory that grows when asked for more (what it held is lost).
class DeviceBuffer {
public:
  explicit DeviceBuffer(const Driver &d) : d_(d) {}
  DeviceBuffer(DeviceBuffer &&o) noexcept : d_(o.d_), ptr_(o.ptr_), size_(o.size_) {
    o.ptr_ = 0;
    o.size_ = 0;
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  ~DeviceBuffer() { release(); }
  size_t size() const { return size_; }
  void release() {
    if (ptr_)
      d_.memFree(ptr_);
    ptr_ = 0;
    size_ = 0;
  }

  Expected<DevicePtr> reserve(size_t bytes, const std::string &what, const CudaDevice &device) {
    bytes = std::max<size_t>(bytes, 1);
    if (bytes <= size_)
      return ptr_;
    release();
    DevicePtr p = 0;
    if (Result r = d_.memAlloc(&p, bytes))
      return allocationError(d_, r, bytes, what, device);
    ptr_ = p;
    size_ = bytes;
    return ptr_;
  }

private:
  const Driver &d_;
  DevicePtr ptr_ = 0;
  size_t size_ = 0;
};

/// A weight's device copy, and the host tensor it was made from.
struct WeightCopy {
  explicit WeightCopy(const Driver &d) : memory(d) {}
  DeviceBuffer memory;
  const void *host = nullptr;
  StridedLayout layout;
  DevicePtr address = 0;
  /// The host tensor where it is laid out as the buffer (else null): what
  /// host steps read instead of a copy back from the GPU.
  const char *hostBuffer = nullptr;
};

class CudaExecutor final : public ExecutorBase {
public:
  CudaExecutor(std::shared_ptr<const RuntimePlan> plan, const plan::Graph &graph,
               const RuntimeOptions &options, const Driver &d, CudaDevice device)
      : ExecutorBase(std::move(plan), graph, options), d_(d), device_(std::move(device)),
        memory_(d), functions_(graph.steps()->size()),
        kernelArgStart_(graph.steps()->size(), 0) {
    weights_.reserve(numBuffers_);
    for (size_t b = 0; b < numBuffers_; ++b)
      weights_.emplace_back(d);
  }
  ~CudaExecutor() override;
  CudaExecutor(const CudaExecutor &) = delete;

  Error create(const KernelLibrary &kernels);
  Error run(std::span<const TensorRef> inputs, std::span<const TensorRef> outputs) override;
  Expected<TensorRef> allocatePersistent(DType dtype,
                                         const std::vector<int64_t> &sizes) override;
  Error copy(const TensorRef &dst, const TensorRef &src, const std::string &what) override;
  Error setStream(std::optional<void *> stream) override;

private:
  Error resolveKernel(size_t s, const plan::KernelStep &k) override;
  Error prepareKernel(const plan::KernelStep &k, std::span<const int64_t> values,
                      StepInstance &si) override;
  Error prepareExtern(const plan::OpStep &op, StepInstance &si) override;
  /// Runs of consecutive products that share their left rows become one
  /// launch (CudaFewRowProduct.h): the first step's call, the others' none.
  Error finishInstance(Instance &inst) override;
  bool runsOnGpu() const override { return true; }

  Error makeCurrent() const { return d_.check(d_.ctxSetCurrent(context_), "using " + gpu()); }
  Error synchronize(const std::string &doing) const {
    return d_.check(d_.streamSynchronize(run_), doing + " on " + gpu());
  }
  /// What every run and copy starts and ends with: ordering after the
  /// last call's work on another stream, and waiting for the work or
  /// recording where it ends.
  Error beginCall();
  Error endCall(const std::string &doing);
  /// "cuda:sm_90 NVIDIA H100 80GB HBM3", for messages.
  std::string gpu() const { return device_.describe(); }
  std::string graphName() const { return graphLabel(graph_); }

  /// How each tensor in GPU memory is copied (inputCopies_ and
  /// outputCopies_), decided before any work is enqueued; an error names
  /// a tensor no copy takes.
  Error planDeviceCopies(const Instance &inst, std::span<const TensorRef> inputs,
                         std::span<const TensorRef> outputs,
                         const std::vector<StridedLayout> &outLayouts);
  /// Copies `plan`'s elements on the GPU: one block, or the copy kernel.
  Error copyStridedOnDevice(DevicePtr dst, DevicePtr src, const cuda::StridedCopyPlan &plan,
                            unsigned elemBytes, const std::string &what);
  /// Lays out the device allocation for `inst` and sets addresses_ (but
  /// for weights, which uploadInputs places).
  Error placeBuffers(const Instance &inst);
  /// Points addresses_ at the caller's tensors the call uses where they lie
  /// (CallerMemory.h), and records which (inPlace_).
  void bindCallerMemory(const Instance &inst, std::span<const TensorRef> inputs,
                        std::span<const TensorRef> outputs);
  /// addresses_ as a captured graph depends on them: those of the buffers
  /// library calls use (kernels read theirs from the tables).
  std::vector<uint64_t> heldAddresses() const;
  Error uploadInputs(const Instance &inst, std::span<const TensorRef> inputs);
  Error uploadTables(const Instance &inst);
  Error runStep(size_t s, StepInstance &si, cuda::Stream stream);
  /// A fallback or call step: the buffers it views are copied to the host,
  /// the step runs there, and the buffers it writes go back.
  Error runStepOnHost(size_t s, StepInstance &si, const Instance &inst,
                      std::vector<int64_t> &values);
  Error downloadOutputs(const Instance &inst, std::span<const TensorRef> outputs,
                        const std::vector<StridedLayout> &outLayouts);
  /// Runs the steps one by one, between profiling events if profiling. A
  /// step that computes sizes (nonzero's count) runs on the host, which
  /// waits for the GPU; the steps after it run in the instance of the
  /// sizes it found, which `inst` becomes.
  Error runSteps(Instance *&inst);
  /// Runs the steps through the CUDA graph captured for `inst` and the
  /// current addresses, capturing it first if there is none; false if the
  /// steps cannot be captured (then graphs are off for this executor).
  Expected<bool> runCaptured(Instance &inst);
  void dropCapture();
  /// What a capture depends on: the instance and every address it holds.
  struct CaptureKey {
    uint64_t instance = 0;
    std::vector<uint64_t> addresses;
    DevicePtr workspace = 0, tables = 0;
    bool operator==(const CaptureKey &) const = default;
  };
  Error copyIn(DevicePtr dst, const void *src, size_t bytes, const std::string &what) {
    return d_.check(d_.memcpyHtoDAsync(dst, src, bytes, run_),
                    "copying " + what + " to " + gpu());
  }
  Error copyOut(void *dst, DevicePtr src, size_t bytes, const std::string &what) {
    return d_.check(d_.memcpyDtoHAsync(dst, src, bytes, run_),
                    "copying " + what + " from " + gpu());
  }
  Error copyOnDevice(DevicePtr dst, DevicePtr src, size_t bytes, const std::string &what) {
    return d_.check(d_.memcpyDtoDAsync(dst, src, bytes, run_),
                    "copying " + what + " on " + gpu());
  }

  const Driver &d_;
  const CudaDevice device_;
  cuda::Context context_ = nullptr;
  cuda::Stream stream_ = nullptr;
  /// The stream of the current call: stream_, or the caller's; whether the
  /// call waits for its work (only on stream_).
  cuda::Stream run_ = nullptr;
  bool waits_ = true;
  /// The end of the last call's work that was not waited for, and its
  /// stream (null: none).
  cuda::Event done_ = nullptr;
  cuda::Stream doneOn_ = nullptr;
  bool pending_ = false;
  cuda::Module module_ = nullptr;
  /// The strided-copy kernel, loaded on first need.
  cuda::Module copyModule_ = nullptr;
  cuda::Function copyKernel_ = nullptr;
  /// Per input, then per output in GPU memory: how it is copied (nullopt:
  /// laid out as its buffer, copied whole).
  std::vector<std::optional<cuda::StridedCopyPlan>> inputCopies_, outputCopies_;
  /// Per buffer, what the choice of caller memory in place reads; per
  /// buffer, the caller's address in the last call; the current call's
  /// choice.
  std::vector<cuda::BufferFacts> bufferFacts_;
  std::vector<uint64_t> lastCallerAddress_;
  cuda::InPlace inPlace_;
  DeviceBuffer memory_;
  std::vector<WeightCopy> weights_; ///< per buffer; used for weight buffers
  std::vector<DeviceBuffer> persistent_; ///< allocatePersistent's
  std::vector<cuda::Kernel> functions_; ///< per step; fn null for op steps
  /// Per kernel step: where its buffers' addresses start in the tables (in
  /// addresses); and how many addresses all kernel steps take.
  std::vector<size_t> kernelArgStart_;
  size_t numKernelArgs_ = 0;
  std::unique_ptr<CudaLibraries> libraries_;
  std::unique_ptr<cuda::CudaAttentionKernels> attention_;
  std::unique_ptr<cuda::CudaFewRowKernels> fewRows_;
  /// Device addresses: of every buffer (by index), of the workspace and
  /// of the two tables, for the current run.
  std::vector<uint64_t> addresses_;
  DevicePtr workspace_ = 0, tables_ = 0;
  /// The tables as last uploaded, and where to.
  std::vector<uint64_t> tableHost_;
  DevicePtr tablesUploadedTo_ = 0;
  HostBuffer stage_, hostStep_;
  /// Staged outputs of the current run: (output, offset in stage_).
  std::vector<std::pair<size_t, size_t>> stagedOutputs_;
  /// Whether runs may go through a CUDA graph: the options allow it, and no
  /// step was found that cannot be captured.
  bool captureAllowed_ = false;
  bool staticShapes_ = true;
  uint64_t lastInstance_ = 0; ///< the serial of the last run's instance
  cuda::GraphExec captured_ = nullptr;
  CaptureKey capturedFor_;
  /// Profiling: a start and an end event per step.
  std::vector<cuda::Event> events_;
};

CudaExecutor::~CudaExecutor() {
  if (!context_)
    return;
  // What follows frees memory and handles of this context.
  d_.ctxSetCurrent(context_);
  // Work enqueued on a caller's stream may still use that memory.
  if (pending_)
    d_.eventSynchronize(done_);
  dropCapture();
  for (cuda::Event e : events_)
    d_.eventDestroy(e);
  dropInstances();
  libraries_.reset();
  attention_.reset();
  fewRows_.reset();
  memory_.release();
  weights_.clear();
  persistent_.clear();
  if (done_)
    d_.eventDestroy(done_);
  if (module_)
    d_.moduleUnload(module_);
  if (copyModule_)
    d_.moduleUnload(copyModule_);
  if (stream_)
    d_.streamDestroy(stream_);
  d_.primaryCtxRelease(device_.ordinal);
}

Error CudaExecutor::create(const KernelLibrary &kernels) {
  cuda::Device dev = 0;
  GC_RETURN_IF_ERROR(d_.check(d_.deviceGet(&dev, device_.ordinal), "opening " + gpu()));
  cuda::Context ctx = nullptr;
  GC_RETURN_IF_ERROR(d_.check(d_.primaryCtxRetain(&ctx, dev), "making a context on " + gpu()));
  context_ = ctx;
  GC_RETURN_IF_ERROR(makeCurrent());
  GC_RETURN_IF_ERROR(d_.check(d_.streamCreate(&stream_, cuda::StreamNonBlocking),
                              "making a stream on " + gpu()));
  run_ = stream_;
  GC_RETURN_IF_ERROR(d_.check(d_.eventCreate(&done_, cuda::EventDisableTiming),
                              "making an event on " + gpu()));
  bool hasKernels = false;
  for (const plan::Step *st : *graph_.steps())
    hasKernels |= st->detail_as_KernelStep() != nullptr;
  if (hasKernels) {
    std::string_view image = kernels.gpuImage();
    if (image.empty())
      return makeError() << "it has kernels, but its kernel library holds no GPU code";
    Result r = d_.moduleLoadData(&module_, image.data());
    std::string_view target = graph_.target()->string_view();
    if (r == cuda::ErrorNoBinaryForGpu)
      return makeError() << "the package has kernels for "
                         << target.substr(kCudaTargetPrefix.size()) << "; this GPU is sm_"
                         << device_.arch << " (" << device_.name << ")";
    GC_RETURN_IF_ERROR(d_.check(r, "loading the GPU kernels (" + std::string(target) +
                                       ") on " + gpu()));
  }
  libraries_ = std::make_unique<CudaLibraries>(CudaLibraryOptions{options_.allowTF32});
  attention_ = std::make_unique<cuda::CudaAttentionKernels>(d_, device_.multiprocessors,
                                                            options_.cudaEarlyLaunch);
  fewRows_ = std::make_unique<cuda::CudaFewRowKernels>(d_, device_.multiprocessors,
                                                       options_.cudaEarlyLaunch);
  if (profiling_)
    for (size_t i = 0; i < 2 * graph_.steps()->size(); ++i) {
      cuda::Event e = nullptr;
      GC_RETURN_IF_ERROR(d_.check(d_.eventCreate(&e, 0), "making a profiling event"));
      events_.push_back(e);
    }
  captureAllowed_ = options_.cudaGraphs;
  bufferFacts_.resize(numBuffers_);
  for (size_t b = 0; b < numBuffers_; ++b)
    bufferFacts_[b].kind = buffer(b).kind();
  for (const plan::Binding *o : *graph_.outputs())
    bufferFacts_[o->view()->buffer()].written = true;
  for (const plan::Step *st : *graph_.steps())
    if (!st->detail_as_KernelStep())
      for (uint32_t b : *st->uses())
        bufferFacts_[b].heldByCalls = true;
  // Shapes are static when no input binds a size symbol.
  for (const plan::Binding *b : *graph_.inputs())
    for (const plan::SizeProgram *p : *b->view()->sizes())
      staticShapes_ &= !boundSymbol(*p).has_value();
  return init();
}

void CudaExecutor::dropCapture() {
  if (captured_)
    d_.graphExecDestroy(captured_);
  captured_ = nullptr;
}

Error CudaExecutor::resolveKernel(size_t s, const plan::KernelStep &k) {
  std::string name = k.entry()->str();
  if (!k.grid() || k.block_threads() == 0)
    return makeError() << "kernel '" << name << "' has no GPU launch shape (grid and block size)";
  cuda::Function fn = nullptr;
  Result r = d_.moduleGetFunction(&fn, module_, name.c_str());
  if (r == cuda::ErrorNotFound)
    return makeError() << "kernel '" << name << "' is not in the graph's GPU module";
  GC_RETURN_IF_ERROR(d_.check(r, "finding kernel '" + name + "'"));
  int maxThreads = 0;
  GC_RETURN_IF_ERROR(d_.check(d_.funcGetAttribute(&maxThreads, cuda::FuncAttrMaxThreadsPerBlock,
                                                  fn),
                              "kernel '" + name + "'"));
  if (k.block_threads() > static_cast<uint32_t>(maxThreads))
    return makeError() << "kernel '" << name << "' runs " << k.block_threads()
                       << " threads per block, but " << gpu() << " runs it with at most "
                       << maxThreads;
  // Older plans' kernels may read their inputs before the kernel ahead of
  // them has written them all.
  bool awaits = plan_.version()->minor_version() >= kPlanMinorEarlyKernels;
  functions_[s] = {fn, options_.cudaEarlyLaunch && awaits && d_.earlyCapable(fn)};
  kernelArgStart_[s] = numKernelArgs_;
  numKernelArgs_ += step(s).uses()->size();
  return Error::success();
}

Error CudaExecutor::prepareKernel(const plan::KernelStep &k, std::span<const int64_t> values,
                                  StepInstance &si) {
  Expected<int64_t> grid = evaluate(*k.grid(), values);
  if (!grid)
    return grid.error();
  if (*grid < 0 || *grid > INT_MAX)
    return makeError() << "a grid of " << *grid << " blocks is outside what a GPU launches";
  si.count = *grid;
  return Error::success();
}

Error CudaExecutor::prepareExtern(const plan::OpStep &op, StepInstance &si) {
  if (op.attention()) {
    Expected<std::unique_ptr<ExternCall>> call = attention_->prepare(op, si.inputs, si.outputs);
    if (!call)
      return call.error();
    si.call = call.take();
    return Error::success();
  }
  // A product of a few rows runs as gc's kernel where its rule takes it
  // (CudaFewRowProduct.h), any other call as a library's.
  Expected<std::unique_ptr<ExternCall>> fewRows = fewRows_->prepare(op, si.inputs, si.outputs);
  if (!fewRows)
    return fewRows.error();
  if (*fewRows) {
    si.call = fewRows.take();
    return Error::success();
  }
  Expected<std::unique_ptr<CudaLibraryCall>> call =
      libraries_->prepare(op, si.inputs, si.outputs);
  if (!call)
    return call.error();
  si.call = call.take();
  return Error::success();
}

Error CudaExecutor::finishInstance(Instance &inst) {
  std::vector<const cuda::FewRowLaunch *> launches;
  for (const StepInstance &si : inst.steps)
    launches.push_back(cuda::fewRowLaunchOf(si.call.get()));
  for (auto [first, count] : cuda::fewRowGroupRuns(launches)) {
    std::vector<cuda::FewRowLaunch> products;
    for (size_t i = first; i < first + count; ++i)
      products.push_back(*launches[i]);
    Expected<std::unique_ptr<ExternCall>> group = fewRows_->group(std::move(products));
    if (!group)
      return group.error().withContext(stepLabel(first));
    if (!*group)
      continue;
    inst.steps[first].call = group.take();
    for (size_t i = first + 1; i < first + count; ++i)
      inst.steps[i].call = cuda::fewRowGroupedStep();
  }
  return Error::success();
}

Error CudaExecutor::setStream(std::optional<void *> stream) {
  run_ = stream ? static_cast<cuda::Stream>(*stream) : stream_;
  waits_ = !stream;
  return Error::success();
}

Error CudaExecutor::beginCall() {
  GC_RETURN_IF_ERROR(makeCurrent());
  if (pending_ && doneOn_ != run_)
    GC_RETURN_IF_ERROR(d_.check(d_.streamWaitEvent(run_, done_, 0),
                                "ordering after the last call on " + gpu()));
  return Error::success();
}

Error CudaExecutor::endCall(const std::string &doing) {
  if (waits_) {
    pending_ = false;
    return synchronize(doing);
  }
  pending_ = true;
  doneOn_ = run_;
  return d_.check(d_.eventRecord(done_, run_), doing + " on " + gpu());
}

Error CudaExecutor::planDeviceCopies(const Instance &inst, std::span<const TensorRef> inputs,
                                     std::span<const TensorRef> outputs,
                                     const std::vector<StridedLayout> &outLayouts) {
  // A tensor laid out as its buffer is copied whole; any other takes the
  // kernel, from the caller's strides to the view's or back.
  auto decide = [&](const char *kind, const plan::Binding &binding, const StridedLayout &view,
                    const StridedLayout &caller, bool toBuffer,
                    std::optional<cuda::StridedCopyPlan> &into) -> Error {
    const StridedLayout &buf = inst.buffers[binding.view()->buffer()];
    into.reset();
    if (view.sameMemoryAs(buf) && caller.sameMemoryAs(buf))
      return Error::success();
    Expected<cuda::StridedCopyPlan> p =
        toBuffer ? cuda::planStridedCopy(view.sizes, view.strides, caller.strides)
                 : cuda::planStridedCopy(view.sizes, caller.strides, view.strides);
    if (!p)
      return p.error().withContext(std::string(kind) + " '" + binding.name()->str() + "'");
    into = p.take();
    return Error::success();
  };
  inputCopies_.assign(inputs.size(), std::nullopt);
  outputCopies_.assign(outputs.size(), std::nullopt);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].onDevice)
      GC_RETURN_IF_ERROR(decide("input", input(i), inst.inputViews[i],
                                callerLayout(inputs[i]), true, inputCopies_[i]));
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (!outputs[j].onDevice)
      continue;
    // Each element must have a place of its own in the caller's memory.
    const StridedLayout &caller = outLayouts[j];
    for (size_t d = 0; d < caller.sizes.size(); ++d)
      if (caller.sizes[d] > 1 && caller.strides[d] == 0)
        return makeError() << "output '" << output(j).name()->str()
                           << "' has stride 0 in dimension " << d
                           << ": its elements would overlap";
    GC_RETURN_IF_ERROR(
        decide("output", output(j), inst.outputViews[j], caller, false, outputCopies_[j]));
  }
  return Error::success();
}

Error CudaExecutor::copyStridedOnDevice(DevicePtr dst, DevicePtr src,
                                        const cuda::StridedCopyPlan &plan, unsigned elemBytes,
                                        const std::string &what) {
  if (plan.numel == 0)
    return Error::success();
  if (plan.block)
    return copyOnDevice(dst, src, static_cast<size_t>(plan.numel) * elemBytes, what);
  if (!copyKernel_) {
    GC_RETURN_IF_ERROR(d_.check(d_.moduleLoadData(&copyModule_, cuda::kStridedCopyPtx),
                                "loading gc's strided-copy kernel on " + gpu()));
    GC_RETURN_IF_ERROR(d_.check(
        d_.moduleGetFunction(&copyKernel_, copyModule_, cuda::kStridedCopyKernel),
        "finding gc's strided-copy kernel"));
  }
  cuda::StridedCopyArgs args = cuda::stridedCopyArgs(plan, dst, src, elemBytes);
  void *params[] = {&args};
  return d_.check(d_.launchKernel(copyKernel_, cuda::stridedCopyBlocks(plan.numel), 1, 1,
                                  cuda::kCopyBlockThreads, 1, 1, 0, run_, params, nullptr),
                  "copying " + what + " on " + gpu());
}

Error CudaExecutor::placeBuffers(const Instance &inst) {
  // Offsets in the one allocation, then addresses once it is made.
  std::vector<size_t> offset(numBuffers_, 0);
  size_t bytes = alignDevice(static_cast<size_t>(inst.arenaBytes));
  for (size_t b = 0; b < numBuffers_; ++b) {
    BufferKind kind = buffer(b).kind();
    if (kind == BufferKind::Intermediate) {
      offset[b] = inst.offsets[b] >= 0 ? static_cast<size_t>(inst.offsets[b]) : 0;
    } else if (kind != BufferKind::Weight) {
      offset[b] = bytes;
      bytes += alignDevice(inst.bufferBytes[b]);
    }
  }
  uint64_t workspaceBytes = 0;
  for (const StepInstance &si : inst.steps)
    if (si.call)
      workspaceBytes = std::max(workspaceBytes, si.call->workspaceBytes());
  size_t workspace = bytes;
  bytes += alignDevice(workspaceBytes);
  size_t tables = bytes;
  bytes += (numKernelArgs_ + inst.symbols.size()) * sizeof(uint64_t);
  size_t had = memory_.size();
  // Growing frees the old memory, which the last call's work on a
  // caller's stream may still use.
  if (pending_ && bytes > had)
    GC_RETURN_IF_ERROR(d_.check(d_.eventSynchronize(done_), "waiting for the last call on " +
                                                                gpu()));
  Expected<DevicePtr> base = memory_.reserve(bytes, "the buffers of " + graphName(), device_);
  if (!base)
    return base.error();
  // New memory holds no tables, wherever it lies.
  if (memory_.size() != had)
    tablesUploadedTo_ = 0;
  addresses_.assign(numBuffers_, 0);
  for (size_t b = 0; b < numBuffers_; ++b)
    addresses_[b] = *base + offset[b];
  workspace_ = *base + workspace;
  tables_ = *base + tables;
  return Error::success();
}

void CudaExecutor::bindCallerMemory(const Instance &inst, std::span<const TensorRef> inputs,
                                    std::span<const TensorRef> outputs) {
  for (size_t b = 0; b < numBuffers_; ++b)
    bufferFacts_[b].bytes = inst.bufferBytes[b];
  auto caller = [](const TensorRef &t, uint32_t buffer, bool asBuffer) {
    cuda::CallerTensor c{.buffer = buffer};
    if (!t.onDevice)
      return c;
    c.address = reinterpret_cast<uintptr_t>(t.data);
    c.spanBytes = static_cast<uint64_t>(callerLayout(t).extent()) * dtypeSize(t.dtype);
    c.asBuffer = asBuffer;
    return c;
  };
  std::vector<cuda::CallerTensor> in, out;
  for (size_t i = 0; i < inputs.size(); ++i)
    in.push_back(caller(inputs[i], input(i).view()->buffer(), !inputCopies_[i]));
  for (size_t j = 0; j < outputs.size(); ++j)
    out.push_back(
        caller(outputs[j], output(j).view()->buffer(), !outputCopies_[j] && !outputDependsOnData(j)));
  inPlace_ = cuda::chooseInPlace(bufferFacts_, in, out, captureAllowed_ && !profiling_,
                                 kDeviceAlignment, lastCallerAddress_);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inPlace_.inputs[i])
      addresses_[in[i].buffer] = in[i].address;
  for (size_t j = 0; j < outputs.size(); ++j)
    if (inPlace_.outputs[j])
      addresses_[out[j].buffer] = out[j].address;
}

std::vector<uint64_t> CudaExecutor::heldAddresses() const {
  std::vector<uint64_t> held(numBuffers_, 0);
  for (size_t b = 0; b < numBuffers_; ++b)
    if (bufferFacts_[b].heldByCalls)
      held[b] = addresses_[b];
  return held;
}

Error CudaExecutor::uploadInputs(const Instance &inst, std::span<const TensorRef> inputs) {
  // Where the caller's layout is not the buffer's, the input is laid out
  // in host staging memory first; that memory is sized before anything is
  // copied, since growing it would lose what it holds.
  std::vector<bool> direct(inputs.size(), false), skip(inputs.size(), false);
  std::vector<size_t> stageOffset(inputs.size(), 0);
  size_t stageBytes = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    uint32_t b = input(i).view()->buffer();
    const StridedLayout caller = callerLayout(inputs[i]);
    if (inst.bufferBytes[b] == 0 || caller.numel() == 0 || inPlace_.inputs[i]) {
      skip[i] = true;
      continue;
    }
    if (buffer(b).kind() == BufferKind::Weight && !inputs[i].onDevice) {
      WeightCopy &w = weights_[b];
      if (w.address && w.host == inputs[i].data && w.layout == caller) {
        addresses_[b] = w.address;
        skip[i] = true;
        continue;
      }
    }
    direct[i] = inst.inputViews[i].sameMemoryAs(inst.buffers[b]) &&
                caller.sameMemoryAs(inst.buffers[b]);
    if (!direct[i] && !inputs[i].onDevice) {
      stageOffset[i] = stageBytes;
      stageBytes += alignUp(inst.bufferBytes[b]);
    }
  }
  char *stage = stage_.reserve(std::max<size_t>(stageBytes, 1));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (skip[i])
      continue;
    uint32_t b = input(i).view()->buffer();
    size_t bytes = inst.bufferBytes[b];
    if (buffer(b).kind() == BufferKind::Weight) {
      WeightCopy &w = weights_[b];
      Expected<DevicePtr> p =
          w.memory.reserve(bytes, "weight '" + buffer(b).name()->str() + "'", device_);
      if (!p)
        return p.error();
      w.address = *p;
      // A weight in GPU memory is copied again every run.
      bool host = !inputs[i].onDevice;
      w.host = host ? inputs[i].data : nullptr;
      w.layout = callerLayout(inputs[i]);
      w.hostBuffer = host && direct[i] ? static_cast<const char *>(inputs[i].data) : nullptr;
      addresses_[b] = w.address;
    }
    std::string what = "input '" + input(i).name()->str() + "'";
    auto address = reinterpret_cast<uintptr_t>(inputs[i].data);
    if (inputs[i].onDevice && inputCopies_[i]) {
      unsigned elem = dtypeSize(inputs[i].dtype);
      GC_RETURN_IF_ERROR(copyStridedOnDevice(addresses_[b] + inst.inputViews[i].offset * elem,
                                             address, *inputCopies_[i], elem, what));
      continue;
    }
    if (inputs[i].onDevice) {
      GC_RETURN_IF_ERROR(copyOnDevice(addresses_[b], address, bytes, what));
      continue;
    }
    if (direct[i]) {
      GC_RETURN_IF_ERROR(copyIn(addresses_[b], inputs[i].data, bytes, what));
      continue;
    }
    const StridedLayout &view = inst.inputViews[i];
    unsigned elem = dtypeSize(inputs[i].dtype);
    char *staged = stage + stageOffset[i];
    copyStrided(staged + view.offset * elem, view.strides,
                static_cast<const char *>(inputs[i].data), callerLayout(inputs[i]).strides,
                view.sizes, elem);
    GC_RETURN_IF_ERROR(copyIn(addresses_[b], staged, bytes, what));
  }
  return Error::success();
}

Error CudaExecutor::uploadTables(const Instance &inst) {
  std::vector<uint64_t> table(numKernelArgs_);
  for (size_t s = 0; s < functions_.size(); ++s)
    if (functions_[s].fn) {
      const auto &uses = *step(s).uses();
      for (size_t k = 0; k < uses.size(); ++k)
        table[kernelArgStart_[s] + k] = addresses_[uses[k]];
    }
  for (int64_t v : inst.symbols)
    table.push_back(static_cast<uint64_t>(v));
  if (table == tableHost_ && tablesUploadedTo_ == tables_)
    return Error::success();
  // A member, not a local: the copy may read it after this returns.
  tableHost_ = std::move(table);
  tablesUploadedTo_ = tables_;
  return copyIn(tables_, tableHost_.data(), tableHost_.size() * sizeof(uint64_t),
                "the buffer table");
}

Error CudaExecutor::runStep(size_t s, StepInstance &si, cuda::Stream stream) {
  if (const cuda::Kernel &k = functions_[s]; k.fn) {
    if (si.count == 0)
      return Error::success();
    DevicePtr buffers = tables_ + kernelArgStart_[s] * sizeof(uint64_t);
    DevicePtr symbols = tables_ + numKernelArgs_ * sizeof(uint64_t);
    void *params[] = {&buffers, &symbols};
    unsigned block = step(s).detail_as_KernelStep()->block_threads();
    return d_.check(d_.launch(k, {static_cast<unsigned>(si.count), 1, block}, stream, params),
                    "launching " + stepLabel(s) + " (" + std::to_string(si.count) +
                        " blocks of " + std::to_string(block) + " threads)");
  }
  if (si.call)
    return si.call
        ->run({.deviceBuffers = addresses_.data(), .stream = stream, .workspace = workspace_})
        .withContext(stepLabel(s));
  return Error::success();
}

Error CudaExecutor::runStepOnHost(size_t s, StepInstance &si, const Instance &inst,
                                  std::vector<int64_t> &values) {
  const plan::OpStep &op = *step(s).detail_as_OpStep();
  // Every buffer the step views, in first-seen order, and which it writes.
  std::vector<uint32_t> used;
  std::vector<bool> written(numBuffers_, false);
  for (const auto *views : {op.inputs(), op.outputs()})
    for (const plan::View *v : *views)
      if (std::find(used.begin(), used.end(), v->buffer()) == used.end())
        used.push_back(v->buffer());
  for (const plan::View *v : *op.outputs())
    written[v->buffer()] = true;
  // A weight the step only reads is read where the caller keeps it.
  auto inPlace = [&](uint32_t b) -> const char * {
    return buffer(b).kind() == BufferKind::Weight && !written[b] ? weights_[b].hostBuffer
                                                                 : nullptr;
  };
  size_t bytes = 0;
  std::vector<size_t> offset(numBuffers_, 0);
  for (uint32_t b : used) {
    offset[b] = bytes;
    bytes += inPlace(b) ? 0 : alignUp(inst.bufferBytes[b]);
  }
  char *host = hostStep_.reserve(std::max<size_t>(bytes, 1));
  std::vector<char *> bases(numBuffers_, nullptr);
  std::string what = stepLabel(s);
  GC_RETURN_IF_ERROR(synchronize("running the steps before " + what));
  for (uint32_t b : used) {
    // Host steps never write what they only read, so the weight's memory,
    // read-only, is safe to hand over.
    if (const char *weight = inPlace(b)) {
      bases[b] = const_cast<char *>(weight);
      continue;
    }
    bases[b] = host + offset[b];
    if (inst.bufferBytes[b])
      GC_RETURN_IF_ERROR(
          copyOut(bases[b], addresses_[b], inst.bufferBytes[b], "the buffers of " + what));
  }
  GC_RETURN_IF_ERROR(synchronize("copying the buffers of " + what));
  GC_RETURN_IF_ERROR(runOnHost(s, si, bases.data(), values));
  for (uint32_t b : used)
    if (written[b] && inst.bufferBytes[b])
      GC_RETURN_IF_ERROR(
          copyIn(addresses_[b], bases[b], inst.bufferBytes[b], "the results of " + what));
  return Error::success();
}

Error CudaExecutor::downloadOutputs(const Instance &inst, std::span<const TensorRef> outputs,
                                    const std::vector<StridedLayout> &outLayouts) {
  stagedOutputs_.clear();
  size_t stageBytes = 0;
  bool toHost = false;
  for (size_t j = 0; j < outputs.size(); ++j) {
    toHost |= !outputs[j].onDevice;
    uint32_t b = output(j).view()->buffer();
    if (inst.bufferBytes[b] == 0 || outLayouts[j].numel() == 0)
      continue;
    if (!outputs[j].onDevice && (outputDependsOnData(j) ||
                                 !(inst.outputViews[j].sameMemoryAs(inst.buffers[b]) &&
                                   outLayouts[j].sameMemoryAs(inst.buffers[b])))) {
      stagedOutputs_.emplace_back(j, stageBytes);
      stageBytes += alignUp(inst.bufferBytes[b]);
    }
  }
  // Inputs are no longer staged: their copies have been read by now.
  char *stage = stage_.reserve(std::max<size_t>(stageBytes, 1));
  size_t next = 0;
  for (size_t j = 0; j < outputs.size(); ++j) {
    uint32_t b = output(j).view()->buffer();
    if (inst.bufferBytes[b] == 0 || outLayouts[j].numel() == 0 || inPlace_.outputs[j])
      continue;
    std::string what = "output '" + output(j).name()->str() + "'";
    auto address = reinterpret_cast<uintptr_t>(outputs[j].data);
    if (outputs[j].onDevice && outputCopies_[j]) {
      unsigned elem = dtypeSize(outputs[j].dtype);
      GC_RETURN_IF_ERROR(copyStridedOnDevice(address,
                                             addresses_[b] + inst.outputViews[j].offset * elem,
                                             *outputCopies_[j], elem, what));
      continue;
    }
    if (outputs[j].onDevice) {
      GC_RETURN_IF_ERROR(copyOnDevice(address, addresses_[b], inst.bufferBytes[b], what));
      continue;
    }
    bool staged = next < stagedOutputs_.size() && stagedOutputs_[next].first == j;
    void *dst = staged ? stage + stagedOutputs_[next++].second : outputs[j].data;
    GC_RETURN_IF_ERROR(copyOut(dst, addresses_[b], inst.bufferBytes[b], what));
  }
  // Host outputs are read by the host: their copies must be done.
  if (toHost)
    GC_RETURN_IF_ERROR(synchronize("running " + graphName()));
  for (auto [j, at] : stagedOutputs_) {
    const StridedLayout &view = inst.outputViews[j];
    unsigned elem = dtypeSize(outputs[j].dtype);
    // A size the data decided: row-major from the start of the caller's
    // memory (CpuExecutor::run).
    std::vector<int64_t> strides =
        outputDependsOnData(j)
            ? callerLayout(TensorRef{nullptr, outputs[j].dtype, view.sizes, {}}).strides
            : outLayouts[j].strides;
    copyStrided(static_cast<char *>(outputs[j].data), strides,
                stage + at + view.offset * elem, view.strides, view.sizes, elem);
  }
  return Error::success();
}

Error CudaExecutor::run(std::span<const TensorRef> inputs, std::span<const TensorRef> outputs) {
  GC_RETURN_IF_ERROR(makeCurrent());
  Expected<RunStart> start = startRun(inputs, outputs);
  if (!start)
    return start.error();
  for (size_t j = 0; j < outputs.size(); ++j)
    if (outputs[j].onDevice && outputDependsOnData(j))
      return makeError() << "output '" << output(j).name()->str()
                         << "': its size depends on the data, so gc returns it in host memory "
                            "only";
  Instance *ran = start->inst;
  Instance &inst = *ran;
  GC_RETURN_IF_ERROR(planDeviceCopies(inst, inputs, outputs, start->outputLayouts));
  GC_RETURN_IF_ERROR(beginCall());
  GC_RETURN_IF_ERROR(placeBuffers(inst));
  bindCallerMemory(inst, inputs, outputs);
  GC_RETURN_IF_ERROR(uploadInputs(inst, inputs));
  GC_RETURN_IF_ERROR(uploadTables(inst));
  bool plain = true;
  bool repeated = staticShapes_ || inst.serial == lastInstance_ ||
                  (captured_ && capturedFor_.instance == inst.serial);
  lastInstance_ = inst.serial;
  if (captureAllowed_ && !profiling_ && repeated) {
    Expected<bool> ran = runCaptured(inst);
    if (!ran)
      return ran.error();
    plain = !*ran;
  }
  if (plain)
    GC_RETURN_IF_ERROR(runSteps(ran));
  GC_RETURN_IF_ERROR(downloadOutputs(*ran, outputs, start->outputLayouts));
  // A profile's times are read once the run is done.
  if (profiling_ && !waits_)
    GC_RETURN_IF_ERROR(synchronize("running " + graphName()));
  GC_RETURN_IF_ERROR(endCall("running " + graphName()));
  for (size_t s = 0; s < events_.size() / 2; ++s) {
    float ms = 0;
    GC_RETURN_IF_ERROR(d_.check(d_.eventElapsedTime(&ms, events_[2 * s], events_[2 * s + 1]),
                                "timing " + stepLabel(s)));
    recordStep(s, ms / 1e3);
  }
  finishRun(*ran);
  return Error::success();
}

Expected<TensorRef> CudaExecutor::allocatePersistent(DType dtype,
                                                    const std::vector<int64_t> &sizes) {
  GC_RETURN_IF_ERROR(makeCurrent());
  TensorRef t{nullptr, dtype, sizes, {}, /*onDevice=*/true};
  size_t bytes = static_cast<size_t>(callerLayout(t).numel()) * dtypeSize(dtype);
  persistent_.emplace_back(d_);
  Expected<DevicePtr> p = persistent_.back().reserve(bytes, "state of " + graphName(), device_);
  if (!p)
    return p.error();
  t.data = reinterpret_cast<void *>(static_cast<uintptr_t>(*p));
  return t;
}

Error CudaExecutor::copy(const TensorRef &dst, const TensorRef &src, const std::string &what) {
  if (!dst.onDevice && !src.onDevice)
    return ExecutorBase::copy(dst, src, what);
  GC_RETURN_IF_ERROR(beginCall());
  StridedLayout to = callerLayout(dst), from = callerLayout(src);
  StridedLayout dense = callerLayout(TensorRef{nullptr, src.dtype, src.sizes, {}});
  size_t bytes = static_cast<size_t>(dense.numel()) * dtypeSize(src.dtype);
  if (bytes == 0)
    return Error::success();
  auto address = [](const TensorRef &t) { return reinterpret_cast<uintptr_t>(t.data); };
  unsigned elem = dtypeSize(src.dtype);
  if (dst.onDevice && src.onDevice) {
    Expected<cuda::StridedCopyPlan> plan =
        cuda::planStridedCopy(src.sizes, to.strides, from.strides);
    if (!plan)
      return plan.error().withContext(what);
    GC_RETURN_IF_ERROR(copyStridedOnDevice(address(dst), address(src), *plan, elem, what));
    return endCall("copying " + what);
  }
  // Between host and GPU memory, the GPU's side is copied whole.
  for (const auto &[t, layout] : {std::pair{&dst, &to}, std::pair{&src, &from}})
    if (t->onDevice && !layout->sameMemoryAs(dense))
      return makeError() << what << ": gc copies tensors between host and GPU memory only "
                         << "where the GPU's are contiguous";
  if (dst.onDevice) {
    const char *host = static_cast<const char *>(src.data);
    if (!from.sameMemoryAs(dense)) {
      char *staged = stage_.reserve(bytes);
      copyStrided(staged, dense.strides, host, from.strides, src.sizes, elem);
      host = staged;
    }
    GC_RETURN_IF_ERROR(copyIn(address(dst), host, bytes, what));
  } else {
    bool direct = to.sameMemoryAs(dense);
    char *host = direct ? static_cast<char *>(dst.data) : stage_.reserve(bytes);
    GC_RETURN_IF_ERROR(copyOut(host, address(src), bytes, what));
    GC_RETURN_IF_ERROR(synchronize("copying " + what));
    if (!direct)
      copyStrided(static_cast<char *>(dst.data), to.strides, host, dense.strides, src.sizes,
                  elem);
  }
  return endCall("copying " + what);
}

Error CudaExecutor::runSteps(Instance *&inst) {
  std::vector<int64_t> values = inst->values;
  for (size_t s = 0; s < inst->steps.size(); ++s) {
    StepInstance &si = inst->steps[s];
    if (profiling_)
      GC_RETURN_IF_ERROR(d_.check(d_.eventRecord(events_[2 * s], run_), "profiling"));
    GC_RETURN_IF_ERROR(runsOnHost(s, si) ? runStepOnHost(s, si, *inst, values)
                                         : runStep(s, si, run_));
    if (profiling_)
      GC_RETURN_IF_ERROR(d_.check(d_.eventRecord(events_[2 * s + 1], run_), "profiling"));
    if (bindsSizes(s)) {
      // Buffers stay where they are (planned at the sizes' upper bounds);
      // the kernels' symbol table takes the sizes found.
      Expected<Instance *> next = instanceAfter(values);
      if (!next)
        return next.error();
      inst = *next;
      GC_RETURN_IF_ERROR(uploadTables(*inst));
    }
  }
  return Error::success();
}

Expected<bool> CudaExecutor::runCaptured(Instance &inst) {
  CaptureKey key{inst.serial, heldAddresses(), workspace_, tables_};
  if (!captured_ || !(key == capturedFor_)) {
    dropCapture();
    for (size_t s = 0; s < inst.steps.size(); ++s)
      if (runsOnHost(s, inst.steps[s])) {
        captureAllowed_ = false;
        return false;
      }
    // A step that cannot be captured (a library call that synchronizes,
    // say) ends graphs for this executor: its runs launch step by step.
    GC_RETURN_IF_ERROR(d_.check(d_.streamBeginCapture(stream_, cuda::CaptureModeThreadLocal),
                                "capturing " + graphName() + " as a CUDA graph"));
    Error failed = Error::success();
    for (size_t s = 0; s < inst.steps.size() && !failed; ++s)
      failed = runStep(s, inst.steps[s], stream_);
    cuda::Graph graph = nullptr;
    Result ended = d_.streamEndCapture(stream_, &graph);
    cuda::GraphExec exec = nullptr;
    Result made = failed || ended || !graph ? cuda::ErrorNotFound
                                            : d_.graphInstantiate(&exec, graph, 0);
    if (graph)
      d_.graphDestroy(graph);
    if (made) {
      captureAllowed_ = false;
      return false;
    }
    captured_ = exec;
    capturedFor_ = std::move(key);
  }
  GC_RETURN_IF_ERROR(d_.check(d_.graphLaunch(captured_, run_),
                              "launching " + graphName() + " as a CUDA graph"));
  return true;
}

} // namespace

Expected<std::unique_ptr<Executor>> createCudaExecutor(std::shared_ptr<const RuntimePlan> plan,
                                                       const plan::Graph &graph,
                                                       const KernelLibrary &kernels,
                                                       const RuntimeOptions &options) {
  std::string needs = "needs an NVIDIA GPU (" + graph.target()->str() + ")";
  Expected<const Driver *> d = cuda::driver();
  if (!d)
    return d.error().withContext(needs);
  Expected<CudaDevice> device = cuda::selectDevice(**d, options.cudaDevice);
  if (!device)
    return device.error().withContext(needs);
  auto exec = std::make_unique<CudaExecutor>(std::move(plan), graph, options, **d, device.take());
  GC_RETURN_IF_ERROR(exec->create(kernels));
  return std::unique_ptr<Executor>(std::move(exec));
}

} // namespace gc
