//===- ExecutorBase.h - What the CPU and GPU executors share ----*- C++ -*-===//
//
// The CPU executor (Executor.cpp) and the CUDA executor (CudaExecutor.cpp)
// run the same plan graphs. They check inputs and bind size symbols the same
// way, evaluate every size-dependent layout and plan the arena once per
// binding of the symbols (an Instance), and run fallback and call steps on
// the host through the same code. What differs is theirs: where buffers
// live, and how kernels and library calls run.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_EXECUTORBASE_H
#define GC_LIB_RUNTIME_EXECUTORBASE_H

#include "gc/Runtime/MemoryPlanner.h"
#include "gc/Runtime/Runtime.h"
#include "gc/Runtime/StridedLayout.h"

#include <map>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gc {

class ExternCall;
class GraphCall;
struct PluginOp;

/// The arena and the buffers in it are aligned to this many bytes.
inline constexpr size_t kBufferAlignment = 64;
inline size_t alignUp(size_t v) {
  return (v + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
}

/// Grow-only, aligned host memory; what it held is lost when it grows.
class HostBuffer {
public:
  HostBuffer() = default;
  HostBuffer(const HostBuffer &) = delete;
  HostBuffer &operator=(const HostBuffer &) = delete;
  ~HostBuffer() { release(); }
  char *reserve(size_t bytes) {
    if (bytes > size_) {
      release();
      data_ = static_cast<char *>(::operator new(bytes, std::align_val_t(kBufferAlignment)));
      size_ = bytes;
    }
    return data_;
  }

private:
  void release() {
    if (data_)
      ::operator delete(data_, std::align_val_t(kBufferAlignment));
    data_ = nullptr;
    size_ = 0;
  }
  char *data_ = nullptr;
  size_t size_ = 0;
};

/// `t`'s layout, row-major strides when it gives none.
StridedLayout callerLayout(const TensorRef &t);

/// A binding's size decoded once, so that a run checks and evaluates it
/// without reading its program: a constant, a symbol it binds, or else a
/// program.
struct BindingSize {
  int64_t constant = 0;
  int32_t binds = -1;
  const plan::SizeProgram *program = nullptr;

  explicit BindingSize(const plan::SizeProgram &p);
  Expected<int64_t> value(std::span<const int64_t> symbols) const;
};

/// A step with its symbol-dependent data evaluated.
struct StepInstance {
  /// Kernel: on the CPU the length of the first parallel range, on a GPU
  /// the blocks of the grid.
  int64_t count = 1;
  bool parallel = false; ///< CPU kernel: worth splitting across threads
  int64_t flops = 0, bytes = 0; ///< one run's work (plan::Step), when profiling
  std::vector<StridedLayout> inputs, outputs; ///< op step views
  std::unique_ptr<ExternCall> call; ///< extern step: the library call that took it, if any

  StepInstance();
  StepInstance(StepInstance &&) noexcept;
  ~StepInstance();
};

/// Everything a run needs that depends only on the size symbols' values.
struct Instance {
  /// Unique among the instances an executor ever makes, so that what a
  /// backend derived from one is never taken for another's.
  uint64_t serial = 0;
  std::vector<int64_t> values;  ///< per plan symbol slot
  std::vector<int64_t> symbols; ///< per kernel symbol
  std::vector<StridedLayout> buffers;
  std::vector<int64_t> bufferBytes;
  std::vector<int64_t> offsets; ///< arena offsets, -1 if not in the arena
  int64_t arenaBytes = 0;
  std::vector<StridedLayout> inputViews, outputViews;
  std::vector<StepInstance> steps;
};

/// An Executor for one plan graph, less where its buffers live and how its
/// kernels and library calls run.
class ExecutorBase : public Executor {
public:
  ~ExecutorBase() override;

  Expected<std::vector<std::vector<int64_t>>>
  outputSizes(std::span<const TensorRef> inputs) override;
  Expected<std::vector<std::vector<int64_t>>>
  outputStrides(std::span<const TensorRef> inputs) override;
  std::vector<std::vector<int64_t>> lastOutputSizes() const override { return lastSizes_; }
  /// CPU executors have no stream: an error; CudaExecutor takes one.
  Error setStream(std::optional<void *> stream) override;
  std::vector<StepProfile> profile() const override { return profile_; }
  /// Host memory; CudaExecutor gives GPU memory.
  Expected<TensorRef> allocatePersistent(DType dtype,
                                         const std::vector<int64_t> &sizes) override;
  /// Between host tensors; CudaExecutor adds its GPU's.
  Error copy(const TensorRef &dst, const TensorRef &src, const std::string &what) override;

protected:
  ExecutorBase(std::shared_ptr<const RuntimePlan> plan, const plan::Graph &graph,
               const RuntimeOptions &options);

  /// Checks that inputs bind every size symbol, resolves every kernel
  /// (resolveKernel), makes the executors of call steps and prepares the
  /// steps that only the fallback component runs. Called once the derived
  /// executor is ready to resolve kernels.
  Error init();

  /// Looks up the kernel of step `s`; an error names it if it is missing.
  virtual Error resolveKernel(size_t s, const plan::KernelStep &k) = 0;
  /// Fills in si.count (and si.parallel) for these symbol values.
  virtual Error prepareKernel(const plan::KernelStep &k, std::span<const int64_t> values,
                              StepInstance &si) = 0;
  /// Prepares the library call of extern step `op` for si's layouts,
  /// setting si.call; leaving it null declines the step, which then runs on
  /// the fallback component.
  virtual Error prepareExtern(const plan::OpStep &op, StepInstance &si) = 0;
  /// Called once every step of `inst` is prepared, for choices that span
  /// steps (CudaExecutor groups products that share their left rows).
  virtual Error finishInstance(Instance &) { return Error::success(); }
  /// Whether the steps run on a GPU (plugin ops then need CUDA kernels).
  virtual bool runsOnGpu() const { return false; }

  /// What every run starts with: the inputs checked and bound, the instance
  /// for their sizes, and the outputs checked against it.
  struct RunStart {
    Instance *inst = nullptr;
    std::vector<StridedLayout> outputLayouts; ///< the caller's
  };
  Expected<RunStart> startRun(std::span<const TensorRef> inputs,
                              std::span<const TensorRef> outputs);

  /// An error naming the first tensor in GPU memory, which CPU executors
  /// cannot take.
  Error refuseDeviceTensors(std::span<const TensorRef> inputs,
                            std::span<const TensorRef> outputs) const;

  /// Whether step `s` of `si` runs on the host: a call step, or an op step
  /// no library took (the fallback component runs it).
  bool runsOnHost(size_t s, const StepInstance &si) const;
  /// Runs such a step; `buffers` holds the host address of every buffer its
  /// views name (others may be null). A step that computes sizes (bindsSizes)
  /// binds them in `values`, the run's symbol values.
  Error runOnHost(size_t s, StepInstance &si, char *const *buffers,
                  std::vector<int64_t> &values);
  /// Whether step `s` computes unbacked sizes (nonzero's count): it runs on
  /// the host, and the steps after it run in the instance of the sizes it
  /// found (instanceAfter).
  bool bindsSizes(size_t s) const { return !stepBinds_[s].empty(); }
  /// The instance for `values` once a step bound sizes in them. Buffers
  /// sized by unbacked symbols are planned at the symbols' upper bounds, so
  /// every instance of the same inputs places buffers alike and a run
  /// moves from one to the next without moving data.
  Expected<Instance *> instanceAfter(const std::vector<int64_t> &values);
  /// Whether output `j`'s layout depends on an unbacked size: the caller's
  /// memory then gets it row-major, copied at the end of the run.
  bool outputDependsOnData(size_t j) const { return dataOutputs_[j]; }
  /// Records the true output sizes of a run that finished in `inst`.
  void finishRun(const Instance &inst);

  /// Adds `seconds` to step `s`'s profile.
  void recordStep(size_t s, double seconds);
  /// At step `s`'s second run (before anything of it is recorded), moves
  /// its first run out of the profile's counts into `firstSeconds`.
  void leaveOutFirstRun(size_t s);
  /// Adds layout reorders that step `s` ran to its profile.
  void recordReorders(size_t s, int64_t count, double seconds);

  /// Forgets every instance (and the library calls they hold).
  void dropInstances() { instances_.clear(); }

  const plan::Buffer &buffer(size_t b) const { return *graph_.buffers()->Get(b); }
  const plan::Binding &input(size_t i) const { return *graph_.inputs()->Get(i); }
  const plan::Binding &output(size_t j) const { return *graph_.outputs()->Get(j); }
  const plan::Step &step(size_t s) const { return *graph_.steps()->Get(s); }
  /// "node 'NAME'" or "kernel 'NAME'": how errors name step `s`.
  std::string stepLabel(size_t s) const;

  std::shared_ptr<const RuntimePlan> planFile_;
  const plan::Plan &plan_;
  const plan::Graph &graph_;
  const size_t numBuffers_;
  const RuntimeOptions options_;
  const bool profiling_;

private:
  /// Every symbol a size of this graph reads must be bound by an input or,
  /// an unbacked size, by an earlier fallback step whose output it sizes
  /// (stepBinds_); finds those steps and the outputs they size.
  Error checkSymbolsBound();
  /// The fallback call of op step `s`, made on first need.
  Error prepareFallback(size_t s);
  /// The arena layout when every intermediate's size is static, else
  /// nullopt (then each symbol binding gets its own).
  std::optional<ArenaLayout> staticArena() const;
  std::string inputName(size_t i) const;
  Expected<std::vector<int64_t>> bindInputs(std::span<const TensorRef> inputs) const;
  Expected<Instance *> instanceFor(const std::vector<int64_t> &values);
  Expected<std::unique_ptr<Instance>> makeInstance(const std::vector<int64_t> &values);
  Expected<std::vector<StridedLayout>> checkOutputs(const Instance &inst,
                                                    std::span<const TensorRef> outputs) const;

  std::vector<std::unique_ptr<HostBuffer>> persistent_; ///< allocatePersistent's
  std::vector<std::unique_ptr<FallbackCall>> fallbacks_; ///< per step, once needed
  std::vector<std::unique_ptr<GraphCall>> calls_;        ///< per step; null but for call steps
  std::vector<const PluginOp *> plugins_; ///< per step; null but for plugin steps
  ArenaProblem arenaProblem_;
  std::optional<ArenaLayout> staticArena_;
  std::vector<std::vector<BindingSize>> inputSizes_, outputSizes_; ///< per binding
  std::map<std::vector<int64_t>, std::unique_ptr<Instance>> instances_;
  uint64_t instancesMade_ = 0;
  std::vector<StepProfile> profile_;
  const Instance *current_ = nullptr; ///< the running instance, whose work recordStep adds
  /// Where a step binds an unbacked symbol: its output, dimension, slot.
  struct SizeBinding {
    size_t output, dim;
    uint32_t slot;
  };
  std::vector<std::vector<SizeBinding>> stepBinds_; ///< per step
  std::vector<uint32_t> unbacked_;                  ///< slots steps bind
  std::vector<bool> dataOutputs_;                   ///< per output
  std::vector<std::vector<int64_t>> lastSizes_;     ///< lastOutputSizes
};

} // namespace gc

#endif // GC_LIB_RUNTIME_EXECUTORBASE_H
