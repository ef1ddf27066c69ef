//===- PackageReader.h - Opening and running packages ------------*- C++ -*-===//
//
// The runtime's side of packages (Package.h): open one, bind its weights
// (in place, from its source archive, or swapped), and run its graphs.
// libgcrt is built on this and nothing of the writer; it reads the runtime
// plan and no compiler IR.
//
//===----------------------------------------------------------------------===//
#ifndef GC_PACKAGE_PACKAGEREADER_H
#define GC_PACKAGE_PACKAGEREADER_H

#include "gc/Package/Package.h"
#include "gc/Runtime/Runtime.h"
#include "gc/Support/Error.h"
#include "gc/Support/FileSystem.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gc {

class LoadedPackage;

/// A stretch of a file that binding weights checked: the package's
/// `weights` entry, or an entry of the archive external weights lie in.
/// Each is read once, however many weights it holds.
struct VerifiedEntry {
  std::string file;
  std::string entry;
  uint64_t bytes = 0;
  /// What it matched: "CRC-32 1a2b3c4d", or, for a package made before
  /// entry CRCs were recorded, "SHA-256 of weight 'l1.weight'".
  std::string check;
  /// How long checking took.
  double seconds = 0;
};

/// The bytes every weight of a package is bound to, by index into the
/// plan's weights, and what keeps them alive (the mapped package, the
/// mapped archive, copies the caller set, what the constant program
/// computed). Immutable once made: a new
/// binding replaces it, and executors keep the one they were made with.
class WeightBinding {
public:
  std::span<const uint8_t> bytes(size_t weight) const { return bytes_[weight]; }
  size_t size() const { return bytes_.size(); }
  /// Every entry whose bytes this binding uses and which were checked, in
  /// the order they were; empty where the package was opened without
  /// OpenOptions::verifyWeights.
  const std::vector<VerifiedEntry> &verified() const { return verified_; }

private:
  friend class PackageReader;
  friend struct WeightBinder;
  std::vector<std::span<const uint8_t>> bytes_;
  std::vector<std::shared_ptr<const void>> owners_;
  /// The memory of the weights the constant program computed.
  std::vector<std::shared_ptr<const void>> computed_;
  std::vector<VerifiedEntry> verified_;
};

/// A package opened for running: its plan, its kernels loaded, its
/// weights bound. Everything is validated when it is opened.
class LoadedPackage {
public:
  ~LoadedPackage();
  LoadedPackage(const LoadedPackage &) = delete;
  LoadedPackage &operator=(const LoadedPackage &) = delete;

  const plan::Plan &plan() const { return plan_->root(); }
  const std::shared_ptr<const RuntimePlan> &planFile() const { return plan_; }
  const MappedFile &file() const { return *file_; }
  /// The kernels of plan graph `graph`.
  const KernelLibrary &kernels(size_t graph) const { return *kernels_[graph]; }
  /// The index of the weight named `name` in the plan, if any.
  std::optional<size_t> findWeight(std::string_view name) const;
  /// The bytes of plan weight `weight` as the package was opened: in place
  /// in the package, or in the mapped source archive.
  std::span<const uint8_t> weightBytes(size_t weight) const;
  /// The binding made when the package was opened.
  const std::shared_ptr<const WeightBinding> &weights() const { return weights_; }
  /// The weights the source archive holds (empty for an embedded package),
  /// and the archive's path as resolved when the package was opened.
  const std::vector<ExternalWeight> &externalWeights() const { return external_; }
  const std::string &archivePath() const { return archivePath_; }
  /// The CPU level whose kernels were loaded ("x86-64-v4": the best this
  /// CPU runs, or $GC_CPU_TARGET's) and the levels the package has kernels
  /// for ("x86-64-v3,x86-64-v4"); both empty when no CPU graph has kernels.
  const std::string &kernelTarget() const { return kernelTarget_; }
  const std::string &kernelTargets() const { return kernelTargets_; }

private:
  friend class PackageReader;
  friend struct WeightBinder;
  LoadedPackage() = default;
  std::shared_ptr<MappedFile> file_;
  std::shared_ptr<const RuntimePlan> plan_;
  std::vector<std::unique_ptr<KernelLibrary>> kernels_;
  std::shared_ptr<const WeightBinding> weights_;
  std::vector<ExternalWeight> external_;
  std::string archivePath_;
  std::string kernelTarget_, kernelTargets_;
  std::function<Expected<const FallbackComponent *>()> fallback_;
  /// OpenOptions::verifyWeights, for later bindings too, and the package's
  /// own weights entry as it was checked at open.
  bool verifyWeights_ = true;
  std::vector<VerifiedEntry> verified_;
};

struct OpenOptions {
  /// Gives the fallback component to the constant program (run at load and
  /// when weights are swapped), should a step of it need one.
  std::function<Expected<const FallbackComponent *>()> fallback;
  /// For a package with external weights: bind them from this archive
  /// instead of the one the package names. Each weight is checked against
  /// its size, dtype and shape, not its SHA-256 (the archive may hold other
  /// weights of the same architecture).
  std::string weightsFile;
  /// Check the bytes of every weight before binding it: the CRC-32 of the
  /// package's weights entry, and of each archive entry external weights
  /// lie in (against the CRC-32 the package recorded for the archive it
  /// names, the archive's own for another). Off, a damaged weight runs and
  /// gives wrong numbers; only for those who measured the cost
  /// (docs/package.md).
  bool verifyWeights = true;
  /// Plugin libraries to load before the package's plugin ops are resolved
  /// (gc/Plugin/PluginLibrary.h); plugins loaded earlier in the process
  /// count too. An op no loaded plugin gives is an error at open.
  std::vector<std::string> plugins;
};

/// Opens the package at `path` ("-" reads stdin). Errors name the file and
/// the entry. External weights are mapped from the archive, whose path
/// the package gives relative to its own directory, and checked against
/// the CRC-32 of their entries (the SHA-256 of each weight for packages
/// made before those were recorded).
Expected<std::unique_ptr<LoadedPackage>> openPackage(const std::string &path,
                                                     const OpenOptions &options = {});
/// Opens a package whose bytes are already in memory (MappedFile::fromBuffer);
/// an external archive is then relative to the directory of the buffer's name.
Expected<std::unique_ptr<LoadedPackage>> openPackage(std::shared_ptr<MappedFile> file,
                                                     const OpenOptions &options = {});

/// A binding of `package`'s weights with every external weight taken from
/// the archive at `path` (another archive of the same architecture), checked
/// by entry, size and alignment, and the weights the constant program
/// computes computed again from them. An error, naming the package, the
/// archive and the weight, if the package has no external weights, if it
/// holds constants computed from the old archive's weights (--freeze in a
/// package older than the constant program, format 2.1), or if a weight's
/// entry is missing or of another size, or fails its CRC-32.
Expected<std::shared_ptr<const WeightBinding>>
bindWeightsFile(const LoadedPackage &package, const std::string &path);

/// `current` with weight `name` replaced by a copy of `value`, which must
/// have the weight's dtype and sizes (any strides), and the constant
/// program's weights computed again. Errors name the weight; a weight the
/// constant program computes cannot be set.
Expected<std::shared_ptr<const WeightBinding>>
bindWeight(const LoadedPackage &package, const WeightBinding &current, const std::string &name,
           const TensorRef &value);

/// Copies weight `name` as `current` binds it into `into`, which must have
/// its dtype and sizes (any strides). Errors name the weight.
Error readWeight(const LoadedPackage &package, const WeightBinding &current,
                 const std::string &name, const TensorRef &into);

/// A loop graph of an opened package, ready to run many times on user
/// inputs, with the package's weights bound in place. Not safe to run from
/// two threads at once; separate executors over one package may run
/// concurrently.
///
/// The buffers the graph mutates are the executor's state, kept where the
/// graph's steps run (GPU memory for CUDA): each starts as its weight's value, every run reads the current value, and a run that
/// succeeds makes the buffer's mutation output the new one (a failed run
/// leaves it, except a buffer the plan updates in place, which a run that
/// fails after its update has written). User inputs the graph mutates get
/// their new values copied back into the caller's memory.
class PackageExecutor {
public:
  /// `graph` indexes the plan's graphs.
  /// `weights` (null: the package's own) binds the graph's weights; the
  /// executor keeps it alive.
  static Expected<std::unique_ptr<PackageExecutor>>
  create(std::shared_ptr<const LoadedPackage> package, size_t graph,
         const RuntimeOptions &options, std::shared_ptr<const WeightBinding> weights = nullptr);

  const plan::Graph &graph() const { return graph_; }
  /// One per user input, in order.
  Expected<std::vector<std::vector<int64_t>>> outputSizes(std::span<const TensorRef> userInputs);
  /// The strides each output has in the graph's own layout, for these
  /// inputs' sizes (Executor::outputStrides).
  Expected<std::vector<std::vector<int64_t>>> outputStrides(std::span<const TensorRef> userInputs);
  /// `outputs` has one per graph output, of the sizes outputSizes gives.
  /// With `stream` (a CUDA graph's tensors all in GPU memory), every copy
  /// and step is enqueued on that CUDA stream and not waited for
  /// (Executor::setStream).
  Error run(std::span<const TensorRef> userInputs, std::span<const TensorRef> outputs,
            std::optional<void *> stream = std::nullopt);
  /// The true sizes of each output of the last run (Executor::lastOutputSizes).
  std::vector<std::vector<int64_t>> lastOutputSizes() const {
    return executor_->lastOutputSizes();
  }
  /// Time per step (RuntimeOptions::profile).
  std::vector<StepProfile> profile() const { return executor_->profile(); }
  /// The generator state the graph's random numbers come from: set the
  /// seed or the offset here; each run moves the offset on.
  RandomState &randomState() { return generator_.state; }

  /// An error naming both inputs if two user inputs share memory and the
  /// graph writes one of them: the copy back would clobber the other.
  /// run() checks it too.
  Error checkAliasing(std::span<const TensorRef> userInputs) const;
  /// The mutated buffers' names (their FQNs), in the plan's input order.
  std::vector<std::string> bufferNames() const;
  /// Copies the current value of buffer `name` into `into`, which must have
  /// its dtype and sizes (any strides). Errors name the buffer.
  Error readBuffer(std::string_view name, const TensorRef &into) const;
  /// Makes a copy of `value` (the buffer's dtype and sizes, any strides) the
  /// current value of buffer `name`.
  Error writeBuffer(std::string_view name, const TensorRef &value);
  /// Every mutated buffer back to its weight's value.
  Error resetBuffers();
  /// For output `output` when it is a mutated buffer that the plan updates
  /// in place (its output bound to its input's buffer: a KV cache written
  /// at a position), the buffer's current value: the memory the run writes.
  /// Passing it as that output costs no copy; null for other outputs.
  const TensorRef *stateUpdatedInPlace(size_t output) const;
  /// For output `output` when it is a mutated buffer, the buffer's current
  /// value, whether or not the plan updates it in place; null otherwise.
  /// The CUDA executor takes it as that output's memory without a hazard
  /// (it never writes an output into memory an input shares), which saves
  /// the copy into the state after the run.
  const TensorRef *stateOf(size_t output) const;

private:
  PackageExecutor(std::shared_ptr<const LoadedPackage> package, const plan::Graph &graph)
      : package_(std::move(package)), graph_(graph) {}
  Expected<std::span<const TensorRef>> bind(std::span<const TensorRef> userInputs);
  /// run() once the inputs are bound and the stream set.
  Error runOn(std::span<const TensorRef> userInputs, std::span<const TensorRef> inputs,
              std::span<const TensorRef> outputs);

  /// A mutated buffer: the graph input that reads it, the output that gives
  /// its new value, its weight's value, and its current value (contiguous,
  /// in the executor's persistent memory: the GPU's for CUDA).
  struct State {
    std::string name;
    size_t input = 0, output = 0;
    TensorRef initial, ref;
    /// The output is bound to the input's buffer (GraphLowerer::inPlaceBuffer).
    bool inPlace = false;
  };
  const State *findState(std::string_view name) const;
  Error checkBufferValue(const State &s, const TensorRef &t) const;
  /// A user input the graph writes: its index among the user inputs and the
  /// output with its new value.
  struct InputMutation {
    size_t userInput = 0, output = 0;
  };

  std::shared_ptr<const LoadedPackage> package_;
  std::shared_ptr<const WeightBinding> weights_;
  const plan::Graph &graph_;
  std::unique_ptr<Executor> executor_;
  /// Every graph input: weights filled in at creation, user inputs per call.
  std::vector<TensorRef> inputs_;
  std::vector<size_t> userSlots_;
  std::vector<State> state_;
  std::vector<InputMutation> inputMutations_;
  GeneratorBinding generator_;
};

} // namespace gc

#endif // GC_PACKAGE_PACKAGEREADER_H
