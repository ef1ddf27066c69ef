//===- Runtime.h - Executing a kernel plan ----------------------*- C++ -*-===//
//
// The runtime runs a graph of a runtime plan (RuntimePlan.h): kernels from
// compiled object code, extern calls (oneDNN matmul and convolution), and
// reference kernels for fallbacks (the optional fallback component), over
// buffers that live in one arena. It links no LLVM and no compiler IR: where
// the kernels' code comes from is a KernelLibrary. A graph whose target is
// CUDA ("cuda:sm_80,sm_90") runs on an NVIDIA GPU through the driver API,
// loaded at run time (docs/gpu.md, "Runtime"); its callers still pass and
// receive host tensors.
//
//===----------------------------------------------------------------------===//
#ifndef GC_RUNTIME_RUNTIME_H
#define GC_RUNTIME_RUNTIME_H

#include "gc/Runtime/Fallback.h"
#include "gc/Runtime/RuntimePlan.h"
#include "gc/Support/Error.h"
#include "gc/Support/RandomState.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gc {

/// The entry point of a compiled kernel. `buffers` has one base pointer per
/// buffer the step's kernel touches, in the order of its plan step's
/// `buffers` list, `symbols` one value per kernel symbol, and
/// the kernel runs the part [begin, end) of its group's first parallel
/// range (the whole range if the group has none: begin 0, end 1).
using KernelEntryFn = void (*)(char *const *buffers, const int64_t *symbols,
                               int64_t begin, int64_t end);

/// Resolves kernel entry points by name.
class KernelLibrary {
public:
  virtual ~KernelLibrary() = default;
  /// The entry point named `name`, or null.
  virtual KernelEntryFn lookup(const std::string &name) const = 0;
  /// For a CUDA graph: the module image the driver loads (a fatbinary, a
  /// cubin or PTX text) that holds the kernel entries; empty for the CPU.
  virtual std::string_view gpuImage() const { return {}; }
};

/// The kernels of a CUDA graph: a module image and nothing to look up on
/// the host.
class GpuKernelImage final : public KernelLibrary {
public:
  explicit GpuKernelImage(std::string image) : image_(std::move(image)) {}
  KernelEntryFn lookup(const std::string &) const override { return nullptr; }
  std::string_view gpuImage() const override { return image_; }

private:
  std::string image_;
};

/// A tensor the caller owns: strided elements at `data`.
struct TensorRef {
  void *data = nullptr;
  DType dtype = DType::Float32;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides; ///< in elements
  /// `data` is memory of the GPU a CUDA executor runs on (a CUdeviceptr),
  /// which only CUDA executors take (any strides: copied on the GPU, at
  /// the cost of one memory copy where laid out as the plan's buffer).
  bool onDevice = false;
};

struct RuntimeOptions {
  /// Threads for kernels and for oneDNN (through OpenMP, whose thread
  /// count for the thread that calls run() this sets); 0 means one per
  /// hardware thread.
  unsigned threads = 0;
  /// Time every step of every run (Executor::profile). On a GPU each step
  /// is then waited for, which costs time of its own.
  bool profile = false;
  /// The GPU that CUDA plan graphs run on, by the driver's numbering;
  /// negative: the one the GC_CUDA_DEVICE environment variable names, else 0.
  int cudaDevice = -1;
  /// On a GPU, a plan graph of static shapes whose steps all run there is
  /// captured as a CUDA graph on its first run and replayed afterwards
  /// (not while profiling). Off: every run launches its steps one by one.
  bool cudaGraphs = true;
  /// On a GPU of sm_90 or later, gc's kernels start early (programmatic
  /// dependent launch): each may be scheduled once the kernel before it has
  /// started all of its blocks, and waits for that kernel's results itself.
  /// Off: each kernel starts when the one before it has ended.
  bool cudaEarlyLaunch = true;
  /// On a GPU, let cuBLASLt and cuDNN use TF32 tensor cores for float32
  /// products and convolutions (torch's allow_tf32): faster, about 1e-3
  /// relative error. Off: full float32.
  bool allowTF32 = false;
  /// Gives the fallback component when a step needs it (null: none is
  /// available). Called at creation for fallback steps, and later for an
  /// extern step only if oneDNN declines its shapes.
  std::function<Expected<const FallbackComponent *>()> fallback;
  /// The kernels of plan graph `graph`, for the graphs that call steps run
  /// (a cond's branches, a while_loop's body); they must outlive the
  /// executor. Unset: a plan with call steps is refused.
  std::function<const KernelLibrary &(size_t graph)> graphKernels;
};

/// A context's random-number generator state, bound to the generator
/// inputs of a plan graph (Binding.generator): the seed and the offset as
/// i64[] tensors that live here.
class GeneratorBinding {
public:
  RandomState state;
  /// Points each generator input of `g` among `inputs` (one per graph
  /// input) at the current seed or offset.
  void bind(const plan::Graph &g, std::span<TensorRef> inputs);
  /// After a run of `g`: moves the offset past the numbers the run drew.
  void advance(const plan::Graph &g) { state.offset += static_cast<uint64_t>(g.random_draws()); }

private:
  int64_t seed_ = 0, offset_ = 0;
};

/// Where the time of the runs went, per plan step (RuntimeOptions::profile).
/// A step's first run holds one-time set-up (oneDNN primitives and weight
/// reorders, cuBLASLt plans): it counts alone until the step runs again,
/// and from then on only in `firstSeconds`, so that the figures below say
/// what a repeated run costs.
struct StepProfile {
  std::string name; ///< the kernel's name, or the extern/fallback node's
  plan::StepKind kind = plan::StepKind::Kernel;
  int64_t runs = 0;      ///< the runs counted (the first one left out once there are others)
  double seconds = 0;    ///< the counted runs together
  double minSeconds = 0; ///< the fastest counted run
  /// Layout reorders of activations inside the step (oneDNN calls), the
  /// counted runs together, and the time they took (part of `seconds`).
  int64_t reorders = 0;
  double reorderSeconds = 0;
  /// The floating-point operations and bytes moved, the counted runs
  /// together, as the compiler counted them (plan::Step flops and bytes; 0:
  /// unknown).
  double flops = 0, bytes = 0;
  /// The module the step's sources lie in (stepModulePath), for the
  /// profile's grouping; "" for the root or when the plan does not know.
  std::string modulePath;
  /// The step's first run, once a later run has replaced it in the counts
  /// (0 until then).
  double firstSeconds = 0;
};
/// An NVIDIA GPU, as the driver describes it.
struct CudaDevice {
  int ordinal = 0;
  std::string name;         ///< "NVIDIA H100 80GB HBM3"
  int arch = 0;             ///< the compute capability times ten: 90 for sm_90
  uint64_t memoryBytes = 0; ///< total device memory
  int multiprocessors = 0;
  /// For the profile's peaks: the SM and memory clocks' peaks (kHz) and
  /// the memory bus's width in bits; 0 where the driver does not say.
  int clockKHz = 0, memoryClockKHz = 0, memoryBusBits = 0;
  /// "cuda:sm_90 NVIDIA H100 80GB HBM3"
  std::string describe() const;
};

/// Every GPU the NVIDIA driver shows, or why none can be used: "no NVIDIA
/// driver: libcuda.so.1 not found", "no CUDA device: ...".
Expected<std::vector<CudaDevice>> cudaDevices();
/// The GPU an executor made with `options` runs CUDA graphs on.
Expected<CudaDevice> cudaDeviceFor(const RuntimeOptions &options);

/// A graph of a runtime plan, ready to run many times. Not safe to run from
/// two threads at once; make one Executor per thread.
class Executor {
public:
  /// Resolves every kernel and prepares every extern and fallback step of
  /// plan graph `graph`. `kernels` must outlive the executor. A graph whose
  /// target is CUDA gets an executor on a GPU (RuntimeOptions::cudaDevice),
  /// or an error saying why there is none.
  static Expected<std::unique_ptr<Executor>> create(std::shared_ptr<const RuntimePlan> plan,
                                                    size_t graph, const KernelLibrary &kernels,
                                                    const RuntimeOptions &options);
  virtual ~Executor() = default;

  /// The sizes of each output for these inputs (binds symbolic sizes from
  /// the inputs; checks their count, dtypes, shapes and symbol ranges). A
  /// size the data decides (an unbacked symbol: nonzero's count) is given
  /// at its upper bound, the room the run needs; lastOutputSizes then says
  /// how much of it the run filled.
  virtual Expected<std::vector<std::vector<int64_t>>>
  outputSizes(std::span<const TensorRef> inputs) = 0;
  /// The true sizes of each output of the last successful run. An output
  /// whose sizes the data decides was written row-major for those sizes
  /// from the start of the caller's memory (whatever strides it gave);
  /// every other output as the run was asked to.
  virtual std::vector<std::vector<int64_t>> lastOutputSizes() const = 0;
  /// The strides of each output as the plan lays it out for these inputs'
  /// sizes: an output the caller gives with them is copied without
  /// rearranging (on a GPU, as one block of memory).
  virtual Expected<std::vector<std::vector<int64_t>>>
  outputStrides(std::span<const TensorRef> inputs) = 0;

  /// Runs the plan. `inputs`: one per graph input (user inputs and
  /// weights alike), in order. `outputs`: one per graph output, with
  /// the sizes outputSizes gave, any strides (device tensors: the plan
  /// buffer's). Errors name the input or step.
  virtual Error run(std::span<const TensorRef> inputs, std::span<const TensorRef> outputs) = 0;

  /// Where the next run() and copy() calls put their GPU work (CUDA
  /// executors only): a caller's CUDA stream (a CUstream; null is the
  /// default stream), on which they enqueue everything and return without
  /// waiting; or, with nullopt, the executor's own stream, waited for
  /// before they return (the default). Work of calls on different streams
  /// is ordered as the calls were made.
  virtual Error setStream(std::optional<void *> stream) = 0;

  /// Time per step so far, in plan order (empty unless profiling).
  virtual std::vector<StepProfile> profile() const = 0;

  /// Contiguous memory for a tensor kept between runs (a buffer the graph
  /// mutates), where this executor's steps read it without a copy from
  /// elsewhere: host memory on the CPU, GPU memory (TensorRef::onDevice)
  /// for CUDA. It lives as long as the executor; its contents start
  /// undefined.
  virtual Expected<TensorRef> allocatePersistent(DType dtype,
                                                 const std::vector<int64_t> &sizes) = 0;
  /// Copies `src` into `dst` (the same dtype and sizes), each in host
  /// memory (any strides) or in this executor's GPU memory (contiguous);
  /// complete when it returns. Errors name the copy as `what`.
  virtual Error copy(const TensorRef &dst, const TensorRef &src, const std::string &what) = 0;
};

} // namespace gc

#endif // GC_RUNTIME_RUNTIME_H
