//===- gcrt.cpp - The gc runtime's C API ----------------------------------===//
//
// A thin layer over gcPackageReader: handles own C++ objects, errors become
// a status and a thread-local message, and no exception crosses into C.
// The fallback component is loaded from beside this library, and only for
// a plan that needs it.
//
//===----------------------------------------------------------------------===//
#include "gcrt/gcrt.h"

#include "gc/Package/PackageReader.h"
#include "gc/Plugin/PluginLibrary.h"
#include "gc/Runtime/Roofline.h"
#include "gc/Support/Target.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace {

using namespace gc;

static_assert(static_cast<int>(DType::Bool) == GCRT_BOOL &&
              static_cast<int>(DType::Int64) == GCRT_INT64 &&
              static_cast<int>(DType::BFloat16) == GCRT_BFLOAT16 &&
              static_cast<int>(DType::Float64) == GCRT_FLOAT64 && kNumDTypes == 10,
              "gcrt_dtype mirrors gc::DType");

thread_local std::string lastError;

gcrt_status fail(gcrt_status status, const std::string &message) {
  lastError = message;
  return status;
}

/// Runs `body`, turning an escaping exception (memory exhaustion) into a
/// status, since nothing may unwind into C.
template <typename F> gcrt_status guarded(F &&body) {
  lastError.clear();
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail(GCRT_ERROR_RUNTIME, "out of memory");
  } catch (const std::exception &e) {
    return fail(GCRT_ERROR_RUNTIME, e.what());
  }
}

/// A gcrt_tensor_info with the storage it points into.
struct TensorInfo {
  std::string name, role, target, path;
  DType dtype = DType::Float32;
  std::vector<int64_t> sizes, minSizes, maxSizes;

  TensorInfo(const plan::Plan &p, const plan::Binding &b)
      : name(b.name()->str()), role(b.role()->str()), target(b.target()->str()),
        path(b.path() ? b.path()->str() : ""), dtype(dtypeOf(b.view()->dtype())) {
    for (const plan::SizeProgram *s : *b.view()->sizes()) {
      const plan::SizeInsn &first = *s->code()->Get(0);
      if (s->code()->size() == 1 && first.op() == plan::SizeOp::Const) {
        sizes.push_back(first.arg());
        minSizes.push_back(first.arg());
        maxSizes.push_back(first.arg());
        continue;
      }
      // Only a plain symbol has a known range; a compound size is reported
      // as unbounded rather than guessed.
      int64_t min = 0, max = -1;
      if (std::optional<uint32_t> slot = boundSymbol(*s)) {
        const plan::Symbol &sym = *p.symbols()->Get(*slot);
        min = sym.min();
        max = sym.max() == INT64_MAX ? -1 : sym.max();
      }
      sizes.push_back(-1);
      minSizes.push_back(min);
      maxSizes.push_back(max);
    }
  }
  gcrt_tensor_info view() const {
    return gcrt_tensor_info{name.c_str(),     role.c_str(),    target.c_str(),
                            static_cast<gcrt_dtype>(dtype),   sizes.size(), sizes.data(),
                            minSizes.data(),  maxSizes.data()};
  }
};

struct GraphInfo {
  std::string name;
  std::vector<TensorInfo> inputs, outputs;
};

/// Aligned memory for outputs the runtime allocates.
struct AlignedDelete {
  void operator()(char *p) const { ::operator delete(p, std::align_val_t(64)); }
};
/// An output's memory that the context allocated, kept for the next run
/// (a decoding loop's logits every step): allocated again to grow, or when
/// the caller passes it back as an input (an output fed to the next run,
/// which the run must not overwrite while reading it).
struct OutputMemory {
  std::unique_ptr<char, AlignedDelete> data;
  size_t bytes = 0;
  /// The memory replaced last, which an input of the run may still be.
  std::unique_ptr<char, AlignedDelete> retired;

  char *reserve(size_t want, std::span<const TensorRef> inputs) {
    auto inside = [&](const TensorRef &t) {
      auto *p = static_cast<const char *>(t.data);
      return p >= data.get() && p < data.get() + bytes;
    };
    if (want > bytes || std::any_of(inputs.begin(), inputs.end(), inside)) {
      retired = std::move(data);
      data.reset(static_cast<char *>(::operator new(want, std::align_val_t(64))));
      bytes = want;
    }
    return data.get();
  }
};

} // namespace

struct gcrt_package {
  std::shared_ptr<const LoadedPackage> package;
  /// What contexts created from now on bind (gcrt_package_set_weight*).
  std::shared_ptr<const WeightBinding> weights;
  std::vector<GraphInfo> graphs;
  /// gcrt_package_device's answer, found at load time (the package is
  /// read-only afterwards): the device, or why there is none.
  std::string device;
  bool hasDevice = false;
};

struct gcrt_context {
  std::unique_ptr<PackageExecutor> executor;
  std::vector<OutputMemory> memory;
  std::vector<std::vector<int64_t>> sizes, strides;
  /// The last gcrt_context_profile's steps, which its names point into.
  std::vector<StepProfile> profile;
  /// What gcrt_context_roofline needs: the graph, how the context runs it,
  /// the peaks given or measured (once), and the last text.
  std::shared_ptr<const LoadedPackage> package;
  size_t graph = 0;
  RuntimeOptions options;
  std::optional<MachinePeaks> peaks;
  std::string roofline;
  /// gcrt_context_give_buffers: buffer_mutation outputs without memory are
  /// returned to the caller (else kept in the context's memory alone).
  bool giveBuffers = true;
};

namespace {

/// The fallback component, libgcrt_fallback.so from this library's own
/// directory, loaded on the first call and kept for the process.
Expected<const FallbackComponent *> loadFallbackComponent() {
  static const Expected<const FallbackComponent *> component =
      []() -> Expected<const FallbackComponent *> {
    Dl_info self;
    if (!dladdr(reinterpret_cast<void *>(&gcrt_last_error), &self) || !self.dli_fname)
      return makeError() << "cannot tell where libgcrt is, to find libgcrt_fallback.so";
    std::string dir = self.dli_fname;
    dir = dir.find('/') == std::string::npos ? "." : dir.substr(0, dir.rfind('/'));
    std::string path = dir + "/libgcrt_fallback.so";
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      return makeError() << "the fallback component '" << path
                         << "' cannot be loaded (it is installed beside libgcrt): " << dlerror();
    auto entry = reinterpret_cast<FallbackEntryFn>(dlsym(handle, kFallbackEntry));
    if (!entry)
      return makeError() << "'" << path << "' has no " << kFallbackEntry
                         << " (a fallback component of another gc?)";
    return entry();
  }();
  return component;
}

/// The plugins GCRT_PLUGINS lists, for OpenOptions::plugins.
std::vector<std::string> environmentPlugins() {
  std::vector<std::string> out;
  const char *env = std::getenv("GCRT_PLUGINS");
  std::string_view list = env ? env : "";
  while (!list.empty()) {
    size_t colon = list.find(':');
    if (std::string_view path = list.substr(0, colon); !path.empty())
      out.emplace_back(path);
    list = colon == std::string_view::npos ? std::string_view() : list.substr(colon + 1);
  }
  return out;
}

gcrt_status finishLoad(Expected<std::unique_ptr<LoadedPackage>> loaded, gcrt_package **out) {
  if (!loaded)
    return fail(GCRT_ERROR_PACKAGE, loaded.error().message());
  auto handle = std::make_unique<gcrt_package>();
  handle->package = loaded.take();
  handle->weights = handle->package->weights();
  const plan::Plan &p = handle->package->plan();
  for (const plan::Graph *g : *p.graphs()) {
    GraphInfo info{g->name()->str(), {}, {}};
    for (const plan::Binding *b : *g->inputs())
      if (b->weight() < 0 && b->generator() == plan::GeneratorPart::None)
        info.inputs.emplace_back(p, *b);
    for (const plan::Binding *b : *g->outputs())
      info.outputs.emplace_back(p, *b);
    handle->graphs.push_back(std::move(info));
  }
  handle->hasDevice = true;
  handle->device = "cpu";
  for (const plan::Graph *g : *p.graphs())
    if (targetDevice(g->target()->string_view()) == TargetDevice::CUDA) {
      Expected<CudaDevice> gpu = cudaDeviceFor(RuntimeOptions{});
      handle->hasDevice = bool(gpu);
      handle->device = gpu ? gpu->describe() : gpu.error().message();
      break;
    }
  *out = handle.release();
  return GCRT_OK;
}

const GraphInfo *graphOf(const gcrt_package *p, size_t graph) {
  return p && graph < p->graphs.size() ? &p->graphs[graph] : nullptr;
}

gcrt_status describe(const std::vector<TensorInfo> *list, size_t index, gcrt_tensor_info *out,
                     const char *what) {
  if (!list || !out || index >= list->size())
    return fail(GCRT_ERROR_INVALID_ARGUMENT, std::string("no such ") + what);
  *out = (*list)[index].view();
  return GCRT_OK;
}

gcrt_status pathOf(const std::vector<TensorInfo> *list, size_t index, const char **path,
                   const char *what) {
  if (!list || !path || index >= list->size())
    return fail(GCRT_ERROR_INVALID_ARGUMENT, std::string("no such ") + what);
  *path = (*list)[index].path.c_str();
  return GCRT_OK;
}

/// The caller's tensors as the runtime's; `what` and the index name a bad one.
Expected<std::vector<TensorRef>> refsOf(const gcrt_tensor *tensors, size_t n, const char *what,
                                        bool onDevice = false) {
  std::vector<TensorRef> refs;
  if (n && !tensors)
    return makeError() << n << " " << what << "s announced, but the array is null";
  for (size_t i = 0; i < n; ++i) {
    const gcrt_tensor &t = tensors[i];
    if (static_cast<unsigned>(t.dtype) >= static_cast<unsigned>(kNumDTypes))
      return makeError() << what << " " << i << " has an unknown dtype " << t.dtype;
    if (t.rank && !t.sizes)
      return makeError() << what << " " << i << " has rank " << t.rank << " but no sizes";
    TensorRef r;
    r.data = t.data;
    r.onDevice = onDevice;
    r.dtype = static_cast<DType>(t.dtype);
    r.sizes.assign(t.sizes, t.sizes + t.rank);
    if (t.strides)
      r.strides.assign(t.strides, t.strides + t.rank);
    refs.push_back(std::move(r));
  }
  return refs;
}

/// Output `index`'s sizes or strides `v` into the caller's `out` (room for
/// `capacity`), its length into `rank`.
gcrt_status giveVector(const std::vector<int64_t> &v, size_t index, int64_t *out,
                       size_t capacity, size_t *rank) {
  *rank = v.size();
  if (capacity < v.size())
    return fail(GCRT_ERROR_INVALID_ARGUMENT, "output " + std::to_string(index) + " has rank " +
                                                 std::to_string(v.size()) + ", room for " +
                                                 std::to_string(capacity));
  std::copy(v.begin(), v.end(), out);
  return GCRT_OK;
}

std::vector<int64_t> contiguous(const std::vector<int64_t> &sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;)
    strides[d - 1] = strides[d] * std::max<int64_t>(sizes[d], 1);
  return strides;
}

} // namespace

namespace {

/// Runs `body` on buffer `name` of `context` with `tensor` as the runtime's;
/// an unknown name is an invalid argument, the rest a bad value.
template <typename F>
gcrt_status onBuffer(gcrt_context *context, const char *name, const gcrt_tensor *tensor,
                     const char *function, F &&body) {
  return guarded([&] {
    if (!context || !name || !tensor)
      return fail(GCRT_ERROR_INVALID_ARGUMENT, std::string(function) + ": null argument");
    PackageExecutor &exec = *context->executor;
    std::vector<std::string> names = exec.bufferNames();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      std::string known;
      for (const std::string &n : names)
        known += (known.empty() ? "" : ", ") + n;
      return fail(GCRT_ERROR_INVALID_ARGUMENT,
                  graphLabel(exec.graph()) + " mutates no buffer '" + name + "' (" +
                      (known.empty() ? "it mutates none" : "it mutates " + known) + ")");
    }
    Expected<std::vector<TensorRef>> ref = refsOf(tensor, 1, "tensor");
    if (!ref)
      return fail(GCRT_ERROR_INPUT, "buffer '" + std::string(name) + "': " + ref.error().message());
    if (Error e = body(exec, (*ref)[0]))
      return fail(GCRT_ERROR_INPUT, e.message());
    return GCRT_OK;
  });
}

/// gcrt_run, and gcrt_run_device when `device`: every tensor is then GPU
/// memory, and every output the caller's; with `stream`,
/// gcrt_run_device_async, which enqueues the run there.
gcrt_status runContext(gcrt_context *context, const gcrt_tensor *inputs, size_t num_inputs,
                       gcrt_tensor *outputs, size_t num_outputs, bool device,
                       std::optional<void *> stream = std::nullopt) {
  const char *function =
      stream ? "gcrt_run_device_async" : device ? "gcrt_run_device" : "gcrt_run";
  return guarded([&] {
    if (!context || (num_outputs && !outputs))
      return fail(GCRT_ERROR_INVALID_ARGUMENT, std::string(function) + ": null argument");
    PackageExecutor &exec = *context->executor;
    const plan::Graph &g = exec.graph();
    if (device && targetDevice(g.target()->string_view()) != TargetDevice::CUDA)
      return fail(GCRT_ERROR_INPUT, graphLabel(g) + " runs on the CPU: " + function +
                                        " takes GPU memory for CUDA packages only");
    size_t numOutputs = g.outputs()->size();
    bool onHost = targetDevice(g.target()->string_view()) != TargetDevice::CUDA;
    Expected<std::vector<TensorRef>> in = refsOf(inputs, num_inputs, "input", device);
    if (!in)
      return fail(GCRT_ERROR_INPUT, in.error().message());
    Expected<std::vector<std::vector<int64_t>>> sizes = exec.outputSizes(*in);
    if (!sizes)
      return fail(GCRT_ERROR_INPUT, sizes.error().message());
    if (num_outputs != numOutputs)
      return fail(GCRT_ERROR_INPUT, graphLabel(g) + " has " + std::to_string(numOutputs) +
                                        " outputs, but " +
                                        std::to_string(num_outputs) + " were given");
    context->memory.resize(num_outputs);
    context->sizes = *sizes;
    context->strides.resize(num_outputs);
    std::vector<std::optional<TensorRef>> keptRefs(num_outputs);
    std::vector<std::optional<gcrt_tensor>> keptTensors(num_outputs);
    for (size_t i = 0; i < num_outputs; ++i) {
      gcrt_tensor &t = outputs[i];
      const plan::Binding &binding = *g.outputs()->Get(i);
      DType dtype = dtypeOf(binding.view()->dtype());
      const std::vector<int64_t> &want = context->sizes[i];
      // A mutated buffer's output with no memory of the caller's takes the
      // buffer's own: on the CPU where the plan updates it in place (the
      // run writes it where it lies); in GPU memory always (the executor
      // never writes an output over an input's memory, so the state input
      // is read first, and no copy into the state follows the run).
      const TensorRef *state = nullptr;
      if (!t.data && (device || (!context->giveBuffers && !onHost)))
        state = exec.stateOf(i);
      else if (!t.data && onHost)
        state = exec.stateUpdatedInPlace(i);
      // Kept: the run writes the buffer's own memory (on the CPU, where the
      // plan does not update it in place, the context's), the caller's
      // tensor stays as given.
      bool kept = !t.data && !context->giveBuffers &&
                  binding.role()->string_view() == kBufferMutationRole;
      if (kept) {
        if (state) {
          keptRefs[i] = *state;
          continue;
        }
        keptTensors[i] = t;
      }
      if (!state && !t.data && device) {
        return fail(GCRT_ERROR_INPUT, "output " + std::to_string(i) + " ('" +
                                          binding.name()->str() + "'): " + function +
                                          " writes only into the caller's GPU memory (or, "
                                          "for a mutated buffer, the buffer's own)");
      } else if (state) {
        context->strides[i] = contiguous(want);
        t = gcrt_tensor{state->data, static_cast<gcrt_dtype>(dtype), want.size(), want.data(),
                        context->strides[i].data()};
      } else if (!t.data) {
        int64_t elements = 1;
        for (int64_t s : want)
          elements *= s;
        char *memory = context->memory[i].reserve(std::max<size_t>(elements * dtypeSize(dtype), 1), *in);
        context->strides[i] = contiguous(want);
        t = gcrt_tensor{memory, static_cast<gcrt_dtype>(dtype), want.size(),
                        want.data(), context->strides[i].data()};
      } else if (t.dtype != static_cast<gcrt_dtype>(dtype) || t.rank != want.size() ||
                 (t.rank && (!t.sizes || !std::equal(want.begin(), want.end(), t.sizes)))) {
        return fail(GCRT_ERROR_INPUT,
                    "output " + std::to_string(i) + " ('" + binding.name()->str() + "') must be " +
                        std::string(dtypeName(dtype)) + " of rank " +
                        std::to_string(want.size()) + " with the sizes gcrt_output_sizes gives");
      }
    }
    Expected<std::vector<TensorRef>> refs = refsOf(outputs, num_outputs, "output", device);
    if (!refs)
      return fail(GCRT_ERROR_INPUT, refs.error().message());
    for (size_t i = 0; i < num_outputs; ++i) {
      if (keptRefs[i])
        (*refs)[i] = *keptRefs[i];
      if (keptTensors[i])
        outputs[i] = *keptTensors[i];
    }
    if (Error e = exec.checkAliasing(*in))
      return fail(GCRT_ERROR_INPUT, e.message());
    if (Error e = exec.run(*in, *refs, stream))
      return fail(GCRT_ERROR_RUNTIME, e.message());
    // Outputs the context allocated take the sizes the data decided.
    std::vector<std::vector<int64_t>> filled = exec.lastOutputSizes();
    for (size_t i = 0; i < num_outputs && i < filled.size(); ++i)
      if (outputs[i].sizes == context->sizes[i].data() && filled[i] != context->sizes[i]) {
        std::copy(filled[i].begin(), filled[i].end(), context->sizes[i].begin());
        std::vector<int64_t> strides = contiguous(filled[i]);
        std::copy(strides.begin(), strides.end(), context->strides[i].begin());
      }
    return GCRT_OK;
  });
}

/// gcrt_output_sizes and gcrt_output_strides: one vector per output of
/// `compute`'s for these inputs, output `index`'s into `values`.
template <typename F>
gcrt_status outputVector(gcrt_context *context, const gcrt_tensor *inputs, size_t num_inputs,
                         size_t index, int64_t *values, size_t capacity, size_t *rank,
                         const char *function, F &&compute) {
  return guarded([&] {
    if (!context || !rank || (capacity && !values))
      return fail(GCRT_ERROR_INVALID_ARGUMENT, std::string(function) + ": null argument");
    Expected<std::vector<TensorRef>> refs = refsOf(inputs, num_inputs, "input");
    if (!refs)
      return fail(GCRT_ERROR_INPUT, refs.error().message());
    Expected<std::vector<std::vector<int64_t>>> all = compute(*context->executor, *refs);
    if (!all)
      return fail(GCRT_ERROR_INPUT, all.error().message());
    if (index >= all->size())
      return fail(GCRT_ERROR_INVALID_ARGUMENT, "no output " + std::to_string(index));
    return giveVector((*all)[index], index, values, capacity, rank);
  });
}

} // namespace

extern "C" {

const char *gcrt_last_error(void) { return lastError.c_str(); }

size_t gcrt_dtype_size(gcrt_dtype dtype) {
  return static_cast<unsigned>(dtype) < kNumDTypes ? dtypeSize(static_cast<DType>(dtype)) : 0;
}

const char *gcrt_dtype_name(gcrt_dtype dtype) {
  // The names are literals, so their data() ends in a NUL.
  return static_cast<unsigned>(dtype) < kNumDTypes ? dtypeName(static_cast<DType>(dtype)).data()
                                                   : "?";
}

const char *gcrt_package_format_version(void) {
  static const std::string v = std::to_string(kPackageMajor) + "." + std::to_string(kPackageMinor);
  return v.c_str();
}

gcrt_status gcrt_plugin_load(const char *path) {
  return guarded([&] {
    if (!path)
      return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_plugin_load: null argument");
    Expected<const PluginLibrary *> lib = loadPlugin(path);
    return lib ? GCRT_OK : fail(GCRT_ERROR_INVALID_ARGUMENT, lib.error().message());
  });
}

gcrt_status gcrt_package_load_file(const char *path, gcrt_package **out) {
  return gcrt_package_load_file_with_flags(path, nullptr, 0, out);
}

gcrt_status gcrt_package_load_file_with_weights(const char *path, const char *weights,
                                                gcrt_package **out) {
  return gcrt_package_load_file_with_flags(path, weights, 0, out);
}

gcrt_status gcrt_package_load_file_with_flags(const char *path, const char *weights,
                                              uint32_t flags, gcrt_package **out) {
  return guarded([&] {
    if (!path || !out)
      return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_package_load_file: null argument");
    if (flags & ~uint32_t(GCRT_LOAD_NO_VERIFY_WEIGHTS))
      return fail(GCRT_ERROR_INVALID_ARGUMENT,
                  "gcrt_package_load_file_with_flags: unknown flags " + std::to_string(flags));
    OpenOptions options;
    options.fallback = loadFallbackComponent;
    options.plugins = environmentPlugins();
    if (weights)
      options.weightsFile = weights;
    options.verifyWeights = !(flags & GCRT_LOAD_NO_VERIFY_WEIGHTS);
    return finishLoad(openPackage(std::string(path), options), out);
  });
}

size_t gcrt_package_verified_count(const gcrt_package *package) {
  return package ? package->weights->verified().size() : 0;
}

gcrt_status gcrt_package_verified(const gcrt_package *package, size_t index,
                                  gcrt_verified_entry *out) {
  return guarded([&] {
    if (!package || !out || index >= package->weights->verified().size())
      return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_package_verified: null argument or index");
    const VerifiedEntry &v = package->weights->verified()[index];
    *out = {v.file.c_str(), v.entry.c_str(), v.bytes, v.check.c_str(), v.seconds};
    return GCRT_OK;
  });
}

gcrt_status gcrt_package_set_weights_file(gcrt_package *package, const char *path) {
  return guarded([&] {
    if (!package || !path)
      return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_package_set_weights_file: null argument");
    Expected<std::shared_ptr<const WeightBinding>> bound =
        bindWeightsFile(*package->package, path);
    if (!bound)
      return fail(GCRT_ERROR_PACKAGE, bound.error().message());
    package->weights = bound.take();
    return GCRT_OK;
  });
}

gcrt_status gcrt_package_set_weight(gcrt_package *package, const char *name,
                                    const gcrt_tensor *value) {
  return guarded([&] {
    if (!package || !name || !value)
      return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_package_set_weight: null argument");
    if (!package->package->findWeight(name))
      return fail(GCRT_ERROR_INVALID_ARGUMENT, "'" + package->package->file().path() +
                                                   "' has no weight '" + name + "'");
    Expected<std::vector<TensorRef>> ref = refsOf(value, 1, "weight value");
    if (!ref)
      return fail(GCRT_ERROR_INPUT, "weight '" + std::string(name) + "': " + ref.error().message());
    Expected<std::shared_ptr<const WeightBinding>> bound =
        bindWeight(*package->package, *package->weights, name, (*ref)[0]);
    if (!bound)
      return fail(GCRT_ERROR_INPUT, bound.error().message());
    package->weights = bound.take();
    return GCRT_OK;
  });
}

gcrt_status gcrt_package_read_weight(const gcrt_package *package, const char *name,
                                     const gcrt_tensor *into) {
  return guarded([&] {
    if (!package || !name || !into)
      return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_package_read_weight: null argument");
    if (!package->package->findWeight(name))
      return fail(GCRT_ERROR_INVALID_ARGUMENT, "'" + package->package->file().path() +
                                                   "' has no weight '" + name + "'");
    Expected<std::vector<TensorRef>> ref = refsOf(into, 1, "weight memory");
    if (!ref)
      return fail(GCRT_ERROR_INPUT, "weight '" + std::string(name) + "': " + ref.error().message());
    if (Error e = readWeight(*package->package, *package->weights, name, (*ref)[0]))
      return fail(GCRT_ERROR_INPUT, e.message());
    return GCRT_OK;
  });
}

gcrt_status gcrt_package_load_memory(const void *data, size_t size, const char *name,
                                     gcrt_package **out) {
  return guarded([&] {
    if ((!data && size) || !out)
      return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_package_load_memory: null argument");
    std::string bytes(static_cast<const char *>(data), size);
    return finishLoad(
        openPackage(MappedFile::fromBuffer(name ? name : "<memory>", std::move(bytes)),
                    OpenOptions{.fallback = loadFallbackComponent,
                                .plugins = environmentPlugins()}),
        out);
  });
}

void gcrt_package_free(gcrt_package *package) { delete package; }

gcrt_status gcrt_cuda_device_count(size_t *count) {
  return guarded([&] {
    if (!count)
      return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_cuda_device_count: null argument");
    *count = 0;
    Expected<std::vector<CudaDevice>> devices = cudaDevices();
    if (!devices)
      return fail(GCRT_ERROR_RUNTIME, devices.error().message());
    *count = devices->size();
    return GCRT_OK;
  });
}

gcrt_status gcrt_cuda_device_name(size_t index, const char **name) {
  return guarded([&] {
    if (!name)
      return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_cuda_device_name: null argument");
    // Devices do not come and go while a process runs; their names are
    // kept for the process, as the header promises.
    static const Expected<std::vector<std::string>> names =
        []() -> Expected<std::vector<std::string>> {
      Expected<std::vector<CudaDevice>> devices = cudaDevices();
      if (!devices)
        return devices.error();
      std::vector<std::string> out;
      for (const CudaDevice &d : *devices)
        out.push_back(d.describe());
      return out;
    }();
    if (!names)
      return fail(GCRT_ERROR_RUNTIME, names.error().message());
    if (index >= names->size())
      return fail(GCRT_ERROR_INVALID_ARGUMENT, "no CUDA device " + std::to_string(index) +
                                                   " (there are " +
                                                   std::to_string(names->size()) + ")");
    *name = (*names)[index].c_str();
    return GCRT_OK;
  });
}

gcrt_status gcrt_package_device(const gcrt_package *package, const char **device) {
  if (!package || !device)
    return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_package_device: null argument");
  lastError.clear();
  if (!package->hasDevice)
    return fail(GCRT_ERROR_RUNTIME, "'" + package->package->file().path() + "' runs on an " +
                                        "NVIDIA GPU: " + package->device);
  *device = package->device.c_str();
  return GCRT_OK;
}

gcrt_status gcrt_package_kernel_target(const gcrt_package *package, const char **loaded,
                                       const char **available) {
  if (!package || !loaded || !available)
    return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_package_kernel_target: null argument");
  lastError.clear();
  *loaded = package->package->kernelTarget().c_str();
  *available = package->package->kernelTargets().c_str();
  return GCRT_OK;
}

size_t gcrt_graph_count(const gcrt_package *package) {
  return package ? package->graphs.size() : 0;
}

const char *gcrt_graph_name(const gcrt_package *package, size_t graph) {
  const GraphInfo *g = graphOf(package, graph);
  return g ? g->name.c_str() : nullptr;
}

size_t gcrt_input_count(const gcrt_package *package, size_t graph) {
  const GraphInfo *g = graphOf(package, graph);
  return g ? g->inputs.size() : 0;
}

size_t gcrt_output_count(const gcrt_package *package, size_t graph) {
  const GraphInfo *g = graphOf(package, graph);
  return g ? g->outputs.size() : 0;
}

gcrt_status gcrt_input_info(const gcrt_package *package, size_t graph, size_t index,
                            gcrt_tensor_info *out) {
  const GraphInfo *g = graphOf(package, graph);
  return describe(g ? &g->inputs : nullptr, index, out, "input");
}

gcrt_status gcrt_output_info(const gcrt_package *package, size_t graph, size_t index,
                             gcrt_tensor_info *out) {
  const GraphInfo *g = graphOf(package, graph);
  return describe(g ? &g->outputs : nullptr, index, out, "output");
}

gcrt_status gcrt_input_path(const gcrt_package *package, size_t graph, size_t index,
                            const char **path) {
  const GraphInfo *g = graphOf(package, graph);
  return pathOf(g ? &g->inputs : nullptr, index, path, "input");
}

gcrt_status gcrt_output_path(const gcrt_package *package, size_t graph, size_t index,
                             const char **path) {
  const GraphInfo *g = graphOf(package, graph);
  return pathOf(g ? &g->outputs : nullptr, index, path, "output");
}

gcrt_status gcrt_context_create(gcrt_package *package, size_t graph, unsigned threads,
                                gcrt_context **out) {
  return gcrt_context_create_with_flags(package, graph, threads, 0, out);
}

gcrt_status gcrt_context_create_with_flags(gcrt_package *package, size_t graph, unsigned threads,
                                           uint32_t flags, gcrt_context **out) {
  return guarded([&] {
    if (!package || !out)
      return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_context_create: null argument");
    if (flags & ~uint32_t(GCRT_CONTEXT_PROFILE | GCRT_CONTEXT_NO_CUDA_GRAPHS |
                          GCRT_CONTEXT_ALLOW_TF32 | GCRT_CONTEXT_NO_EARLY_LAUNCH))
      return fail(GCRT_ERROR_INVALID_ARGUMENT,
                  "gcrt_context_create: unknown flags " + std::to_string(flags));
    RuntimeOptions options;
    options.threads = threads;
    options.profile = flags & GCRT_CONTEXT_PROFILE;
    options.cudaGraphs = !(flags & GCRT_CONTEXT_NO_CUDA_GRAPHS);
    options.allowTF32 = flags & GCRT_CONTEXT_ALLOW_TF32;
    options.cudaEarlyLaunch = !(flags & GCRT_CONTEXT_NO_EARLY_LAUNCH);
    options.fallback = loadFallbackComponent;
    Expected<std::optional<MachinePeaks>> peaks = givenPeaks("");
    if (options.profile && !peaks)
      return fail(GCRT_ERROR_INVALID_ARGUMENT, peaks.error().message());
    Expected<std::unique_ptr<PackageExecutor>> exec =
        PackageExecutor::create(package->package, graph, options, package->weights);
    if (!exec)
      return fail(GCRT_ERROR_PACKAGE, exec.error().message());
    auto context = std::make_unique<gcrt_context>();
    context->executor = exec.take();
    context->package = package->package;
    context->graph = graph;
    context->options = options;
    if (peaks)
      context->peaks = *peaks;
    *out = context.release();
    return GCRT_OK;
  });
}

void gcrt_context_free(gcrt_context *context) { delete context; }

gcrt_status gcrt_context_set_seed(gcrt_context *context, uint64_t seed) {
  if (!context)
    return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_context_set_seed: null context");
  lastError.clear();
  context->executor->randomState() = RandomState{seed, 0};
  return GCRT_OK;
}

gcrt_status gcrt_context_get_seed(const gcrt_context *context, uint64_t *seed) {
  if (!context || !seed)
    return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_context_get_seed: null argument");
  lastError.clear();
  *seed = context->executor->randomState().seed;
  return GCRT_OK;
}

gcrt_status gcrt_context_set_offset(gcrt_context *context, uint64_t offset) {
  if (!context)
    return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_context_set_offset: null context");
  lastError.clear();
  context->executor->randomState().offset = offset;
  return GCRT_OK;
}

gcrt_status gcrt_context_get_offset(const gcrt_context *context, uint64_t *offset) {
  if (!context || !offset)
    return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_context_get_offset: null argument");
  lastError.clear();
  *offset = context->executor->randomState().offset;
  return GCRT_OK;
}

gcrt_status gcrt_context_profile(gcrt_context *context, gcrt_step_profile *steps,
                                 size_t capacity, size_t *count) {
  return guarded([&] {
    if (!context || !count || (capacity && !steps))
      return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_context_profile: null argument");
    context->profile = context->executor->profile();
    *count = context->profile.size();
    for (size_t i = 0; i < std::min(capacity, context->profile.size()); ++i) {
      const StepProfile &p = context->profile[i];
      steps[i] = gcrt_step_profile{p.name.c_str(), stepKindName(p.kind), p.runs,
                                   p.seconds * 1e6, p.minSeconds * 1e6};
    }
    return GCRT_OK;
  });
}

namespace {

/// The peaks of the machine `context` runs on: on a GPU, of the unit its
/// graph's first floating-point output's dtype runs on.
Expected<MachinePeaks> devicePeaks(const gcrt_context &context) {
  const plan::Graph &g = *context.package->plan().graphs()->Get(context.graph);
  if (targetDevice(g.target()->string_view()) != TargetDevice::CUDA)
    return measureCpuPeaks(context.options.threads, context.package->kernelTarget());
  Expected<CudaDevice> gpu = cudaDeviceFor(context.options);
  if (!gpu)
    return gpu.error();
  DType dtype = DType::Float32;
  for (const plan::Binding *b : *g.outputs())
    if (isFloatingPoint(static_cast<DType>(b->view()->dtype()))) {
      dtype = static_cast<DType>(b->view()->dtype());
      break;
    }
  return cudaPeaks(*gpu, dtype, context.options.allowTF32);
}

} // namespace

gcrt_status gcrt_context_roofline(gcrt_context *context, const char **text) {
  return guarded([&] {
    if (!context || !text)
      return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_context_roofline: null argument");
    if (!context->peaks) {
      Expected<MachinePeaks> measured = devicePeaks(*context);
      if (!measured)
        return fail(GCRT_ERROR_RUNTIME, measured.error().message());
      context->peaks = measured.take();
    }
    context->roofline = rooflineReport(context->executor->profile(), *context->peaks);
    *text = context->roofline.c_str();
    return GCRT_OK;
  });
}

gcrt_status gcrt_context_set_peaks(gcrt_context *context, const char *peaks) {
  return guarded([&] {
    if (!context)
      return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_context_set_peaks: null context");
    if (!peaks) {
      context->peaks.reset();
      return GCRT_OK;
    }
    Expected<MachinePeaks> p = parsePeaks(peaks, "the given peaks");
    if (!p)
      return fail(GCRT_ERROR_INVALID_ARGUMENT, p.error().message());
    context->peaks = p.take();
    return GCRT_OK;
  });
}

gcrt_status gcrt_output_sizes(gcrt_context *context, const gcrt_tensor *inputs,
                              size_t num_inputs, size_t index, int64_t *sizes, size_t capacity,
                              size_t *rank) {
  return outputVector(context, inputs, num_inputs, index, sizes, capacity, rank,
                      "gcrt_output_sizes", [](PackageExecutor &e, std::span<const TensorRef> in) {
                        return e.outputSizes(in);
                      });
}

gcrt_status gcrt_output_strides(gcrt_context *context, const gcrt_tensor *inputs,
                                size_t num_inputs, size_t index, int64_t *strides,
                                size_t capacity, size_t *rank) {
  return outputVector(context, inputs, num_inputs, index, strides, capacity, rank,
                      "gcrt_output_strides",
                      [](PackageExecutor &e, std::span<const TensorRef> in) {
                        return e.outputStrides(in);
                      });
}

gcrt_status gcrt_run_output_sizes(gcrt_context *context, size_t index, int64_t *sizes,
                                  size_t capacity, size_t *rank) {
  return guarded([&] {
    if (!context || !rank || (capacity && !sizes))
      return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_run_output_sizes: null argument");
    std::vector<std::vector<int64_t>> filled = context->executor->lastOutputSizes();
    if (filled.empty() && context->executor->graph().outputs()->size())
      return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_run_output_sizes: no run has finished");
    if (index >= filled.size())
      return fail(GCRT_ERROR_INVALID_ARGUMENT, "no output " + std::to_string(index));
    return giveVector(filled[index], index, sizes, capacity, rank);
  });
}

gcrt_status gcrt_run(gcrt_context *context, const gcrt_tensor *inputs, size_t num_inputs,
                     gcrt_tensor *outputs, size_t num_outputs) {
  return runContext(context, inputs, num_inputs, outputs, num_outputs, false);
}

gcrt_status gcrt_run_device(gcrt_context *context, const gcrt_tensor *inputs, size_t num_inputs,
                            gcrt_tensor *outputs, size_t num_outputs) {
  return runContext(context, inputs, num_inputs, outputs, num_outputs, true);
}

gcrt_status gcrt_run_device_async(gcrt_context *context, const gcrt_tensor *inputs,
                                  size_t num_inputs, gcrt_tensor *outputs, size_t num_outputs,
                                  void *cuda_stream) {
  return runContext(context, inputs, num_inputs, outputs, num_outputs, true, cuda_stream);
}

gcrt_status gcrt_context_read_buffer(gcrt_context *context, const char *name,
                                     const gcrt_tensor *into) {
  return onBuffer(context, name, into, "gcrt_context_read_buffer",
                  [&](PackageExecutor &exec, const TensorRef &t) {
                    return exec.readBuffer(name, t);
                  });
}

gcrt_status gcrt_context_write_buffer(gcrt_context *context, const char *name,
                                      const gcrt_tensor *value) {
  return onBuffer(context, name, value, "gcrt_context_write_buffer",
                  [&](PackageExecutor &exec, const TensorRef &t) {
                    return exec.writeBuffer(name, t);
                  });
}

gcrt_status gcrt_context_give_buffers(gcrt_context *context, int give) {
  if (!context)
    return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_context_give_buffers: null argument");
  context->giveBuffers = give != 0;
  return GCRT_OK;
}

gcrt_status gcrt_context_reset_buffers(gcrt_context *context) {
  return guarded([&] {
    if (!context)
      return fail(GCRT_ERROR_INVALID_ARGUMENT, "gcrt_context_reset_buffers: null argument");
    if (Error e = context->executor->resetBuffers())
      return fail(GCRT_ERROR_RUNTIME, e.message());
    return GCRT_OK;
  });
}

} // extern "C"
