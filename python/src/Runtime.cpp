//===- Runtime.cpp - gcrt's Python bindings over libgcrt's C API ----------===//
//
// A thin layer: every call goes to a gcrt_* function, and a failing status
// becomes gcrt.Error (or gcrt.InputError for GCRT_ERROR_INPUT) carrying
// gcrt_last_error()'s message. Arrays arrive as nanobind ndarrays, so any
// DLPack producer (numpy, torch, CuPy, JAX) is read in place; outputs are
// allocated here and handed to numpy without a copy.
//
//===----------------------------------------------------------------------===//
#include "Bindings.h"
#include "DLPackExchange.h"

#include "gcrt/gcrt.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace gc::python {
namespace {

using Array = nb::ndarray<nb::ro>;
using WritableArray = nb::ndarray<>;

[[noreturn]] void raise(gcrt_status status) {
  if (status == GCRT_ERROR_INPUT)
    throw InputError(gcrt_last_error());
  throw Error(gcrt_last_error());
}

void check(gcrt_status status) {
  if (status != GCRT_OK)
    raise(status);
}

/// gcrt's dtype for a DLPack dtype; none for one libgcrt has no name for.
bool dtypeOf(nb::dlpack::dtype d, gcrt_dtype &out) {
  using Code = nb::dlpack::dtype_code;
  if (d.lanes != 1)
    return false;
  switch (static_cast<Code>(d.code)) {
  case Code::Bool:
    out = GCRT_BOOL;
    return d.bits == 8;
  case Code::UInt:
    out = GCRT_UINT8;
    return d.bits == 8;
  case Code::Int:
    switch (d.bits) {
    case 8: out = GCRT_INT8; return true;
    case 16: out = GCRT_INT16; return true;
    case 32: out = GCRT_INT32; return true;
    case 64: out = GCRT_INT64; return true;
    }
    return false;
  case Code::Float:
    switch (d.bits) {
    case 16: out = GCRT_FLOAT16; return true;
    case 32: out = GCRT_FLOAT32; return true;
    case 64: out = GCRT_FLOAT64; return true;
    }
    return false;
  case Code::Bfloat:
    out = GCRT_BFLOAT16;
    return d.bits == 16;
  default:
    return false;
  }
}

nb::dlpack::dtype dlpackOf(gcrt_dtype d) {
  using Code = nb::dlpack::dtype_code;
  auto make = [](Code code, uint8_t bits) {
    nb::dlpack::dtype r;
    r.code = static_cast<uint8_t>(code);
    r.bits = bits;
    r.lanes = 1;
    return r;
  };
  switch (d) {
  case GCRT_BOOL: return make(Code::Bool, 8);
  case GCRT_UINT8: return make(Code::UInt, 8);
  case GCRT_INT8: return make(Code::Int, 8);
  case GCRT_INT16: return make(Code::Int, 16);
  case GCRT_INT32: return make(Code::Int, 32);
  case GCRT_INT64: return make(Code::Int, 64);
  case GCRT_FLOAT16: return make(Code::Float, 16);
  case GCRT_BFLOAT16: return make(Code::Bfloat, 16);
  case GCRT_FLOAT32: return make(Code::Float, 32);
  case GCRT_FLOAT64: return make(Code::Float, 64);
  }
  return make(Code::Float, 32);
}

/// A graph input or output as Python sees it: the C record plus its pytree
/// path, and the static sizes a call is checked against.
struct TensorInfo {
  std::string name, role, target, path;
  gcrt_dtype dtype = GCRT_FLOAT32;
  std::vector<int64_t> sizes, minSizes, maxSizes;

  TensorInfo(const gcrt_tensor_info &info, const char *treePath)
      : name(info.name), role(info.role), target(info.target), path(treePath),
        dtype(info.dtype), sizes(info.sizes, info.sizes + info.rank),
        minSizes(info.min_sizes, info.min_sizes + info.rank),
        maxSizes(info.max_sizes, info.max_sizes + info.rank) {}

  /// How messages name it: by its place in the call where torch.export
  /// recorded one, else by the graph's name.
  std::string label() const { return path.empty() ? "'" + name + "'" : "'" + path + "'"; }
};

/// An array's view as a gcrt_tensor; the sizes and strides live here.
struct TensorView {
  gcrt_tensor tensor{};
  std::vector<int64_t> sizes, strides;
  int32_t deviceType = 0, deviceId = 0;
  /// The exchange table it was read through, if any: its framework makes
  /// the call's outputs.
  const dlpack::ExchangeApi *producer = nullptr;
  /// What __dlpack__ gave, for a producer without an exchange table: held
  /// until the run is over.
  Array held;

  template <typename... Ts>
  explicit TensorView(const nb::ndarray<Ts...> &a, const TensorInfo *info = nullptr) {
    fill(a.dtype(), a.ndim(), const_cast<void *>(static_cast<const void *>(a.data())),
         [&](size_t d) { return static_cast<int64_t>(a.shape(d)); },
         [&](size_t d) { return a.stride(d); }, info);
    deviceType = a.device_type();
    deviceId = a.device_id();
  }

  /// `object` read in place: through its type's DLPack exchange table (no
  /// Python call), else through __dlpack__; anything else is refused,
  /// naming the input.
  TensorView(nb::handle object, const TensorInfo *info) {
    if (const dlpack::ExchangeApi *api = dlpack::exchangeApiOf(object.ptr());
        api && api->viewObject) {
      dlpack::Tensor t;
      if (api->viewObject(object.ptr(), &t) == 0) {
        producer = api;
        nb::dlpack::dtype d;
        d.code = t.dtype.code;
        d.bits = t.dtype.bits;
        d.lanes = t.dtype.lanes;
        void *data = static_cast<char *>(t.data) + t.byteOffset;
        if (t.strides) {
          // The producer's own sizes and strides, valid while `object` is:
          // the call holds it.
          if (!dtypeOf(d, tensor.dtype))
            throw InputError(describe(info) + " has an element type libgcrt does not know");
          tensor.data = data;
          tensor.rank = static_cast<size_t>(t.ndim);
          tensor.sizes = t.shape;
          tensor.strides = t.strides;
        } else {
          fill(d, static_cast<size_t>(t.ndim), data, [&](size_t i) { return t.shape[i]; },
               [&](size_t i) { return rowMajorStride(t, i); }, info);
        }
        deviceType = t.device.type;
        deviceId = t.device.id;
        return;
      }
      PyErr_Clear();
    }
    Array array;
    if (!nb::try_cast(object, array))
      throw InputError(describe(info) + " is a " + nb::type_name(object.type()).c_str() +
                       ", not an array or tensor (anything with __dlpack__)");
    *this = TensorView(array, info);
    held = std::move(array);
  }

  std::span<const int64_t> shape() const { return {tensor.sizes, tensor.rank}; }

  static int64_t rowMajorStride(const dlpack::Tensor &t, size_t d) {
    int64_t stride = 1;
    for (size_t i = d + 1; i < static_cast<size_t>(t.ndim); ++i)
      stride *= t.shape[i];
    return stride;
  }

  static std::string describe(const TensorInfo *info) {
    return info ? "input " + info->label() : std::string("the tensor");
  }

private:
  template <typename Size, typename Stride>
  void fill(nb::dlpack::dtype d, size_t rank, void *data, Size size, Stride stride,
            const TensorInfo *info) {
    if (!dtypeOf(d, tensor.dtype))
      throw InputError(describe(info) + " has an element type libgcrt does not know");
    sizes.resize(rank);
    strides.resize(rank);
    for (size_t i = 0; i < rank; ++i) {
      sizes[i] = size(i);
      strides[i] = stride(i);
    }
    tensor.data = data;
    tensor.rank = rank;
    tensor.sizes = sizes.data();
    tensor.strides = strides.data();
  }
};

std::string sizesText(const std::vector<int64_t> &sizes) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < sizes.size(); ++i)
    s << (i ? ", " : "") << (sizes[i] < 0 ? std::string("?") : std::to_string(sizes[i]));
  s << "]";
  return s.str();
}

/// Checks an input against the graph's record before libgcrt sees it, so
/// that the message names the argument by its path.
void checkInput(const TensorView &view, const TensorInfo &info) {
  std::span<const int64_t> given = view.shape();
  if (view.tensor.dtype != info.dtype)
    throw InputError("input " + info.label() + " is " + gcrt_dtype_name(view.tensor.dtype) +
                     ", the package wants " + gcrt_dtype_name(info.dtype));
  bool fits = given.size() == info.sizes.size();
  for (size_t d = 0; fits && d < given.size(); ++d)
    fits = given[d] >= info.minSizes[d] && (info.maxSizes[d] < 0 || given[d] <= info.maxSizes[d]);
  if (!fits)
    throw InputError("input " + info.label() + " has sizes " +
                     sizesText(std::vector<int64_t>(given.begin(), given.end())) +
                     ", the package wants " + sizesText(info.sizes));
}

/// A loaded package (gcrt_package), freed when the last reference goes.
class Package {
public:
  Package(const std::string &path, std::optional<std::string> weights) {
    gcrt_package *p = nullptr;
    check(weights ? gcrt_package_load_file_with_weights(path.c_str(), weights->c_str(), &p)
                  : gcrt_package_load_file(path.c_str(), &p));
    handle_.reset(p);
    // The C API's records and paths, read once per graph and side.
    auto read = [p](size_t g, size_t count, auto infoOf, auto pathOf) {
      std::vector<TensorInfo> side;
      for (size_t i = 0; i < count; ++i) {
        gcrt_tensor_info info;
        const char *treePath = "";
        check(infoOf(p, g, i, &info));
        check(pathOf(p, g, i, &treePath));
        side.emplace_back(info, treePath);
      }
      return side;
    };
    for (size_t g = 0; g < gcrt_graph_count(p); ++g)
      graphs_.push_back({read(g, gcrt_input_count(p, g), gcrt_input_info, gcrt_input_path),
                         read(g, gcrt_output_count(p, g), gcrt_output_info, gcrt_output_path)});
  }

  gcrt_package *get() const { return handle_.get(); }
  size_t graphCount() const { return graphs_.size(); }
  std::string graphName(size_t g) const { return gcrt_graph_name(handle_.get(), graph(g)); }
  const std::vector<TensorInfo> &inputs(size_t g) const { return graphs_[graph(g)].inputs; }
  const std::vector<TensorInfo> &outputs(size_t g) const { return graphs_[graph(g)].outputs; }

  std::string device() const {
    const char *d = nullptr;
    check(gcrt_package_device(handle_.get(), &d));
    return d;
  }

  void setWeightsFile(const std::string &path) {
    check(gcrt_package_set_weights_file(handle_.get(), path.c_str()));
  }

  void readWeight(const std::string &name, WritableArray into) const {
    TensorView view(into, nullptr);
    if (view.deviceType != nb::device::cpu::value)
      throw InputError("weight '" + name + "' can only be read into host memory");
    check(gcrt_package_read_weight(handle_.get(), name.c_str(), &view.tensor));
  }

  void setWeight(const std::string &name, Array value) {
    TensorView view(value, nullptr);
    if (view.deviceType != nb::device::cpu::value)
      throw InputError("weight '" + name + "' must be in host memory");
    check(gcrt_package_set_weight(handle_.get(), name.c_str(), &view.tensor));
  }

private:
  struct Deleter {
    void operator()(gcrt_package *p) const { gcrt_package_free(p); }
  };
  struct Graph {
    std::vector<TensorInfo> inputs, outputs;
  };

  size_t graph(size_t g) const {
    if (g >= graphs_.size())
      throw nb::index_error("no such graph");
    return g;
  }

  std::unique_ptr<gcrt_package, Deleter> handle_;
  std::vector<Graph> graphs_;
};

/// Memory for one output, owned by the numpy array that views it.
nb::object newHostArray(gcrt_dtype dtype, const std::vector<int64_t> &sizes, void *&data) {
  size_t count = 1;
  for (int64_t s : sizes)
    count *= static_cast<size_t>(s);
  size_t bytes = std::max<size_t>(count * gcrt_dtype_size(dtype), 1);
  // 64-byte alignment: what the runtime's vector kernels like best.
  data = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!data)
    throw std::bad_alloc();
  nb::capsule owner(data, [](void *p) noexcept { std::free(p); });
  std::vector<size_t> shape(sizes.begin(), sizes.end());
  return nb::cast(nb::ndarray<nb::numpy>(data, shape.size(), shape.data(), owner, nullptr,
                                         dlpackOf(dtype)));
}

/// An output tensor the framework allocated through its exchange table:
/// freed unless released to Python as the framework's tensor object.
class AllocatedTensor {
public:
  AllocatedTensor() = default;
  AllocatedTensor(const AllocatedTensor &) = delete;
  AllocatedTensor &operator=(const AllocatedTensor &) = delete;
  ~AllocatedTensor() {
    if (managed_ && managed_->deleter)
      managed_->deleter(managed_);
  }

  /// A tensor of `sizes`, row-major, or with `strides` where given: then
  /// the framework allocates the elements they span as a flat tensor, and
  /// the tensor handed over is given these sizes and strides (the exchange
  /// table's allocator takes sizes only).
  template <typename Where>
  void *allocate(const dlpack::ExchangeApi &api, gcrt_dtype dtype, std::vector<int64_t> &sizes,
                 const std::vector<int64_t> *strides, const Where &where) {
    nb::dlpack::dtype d = dlpackOf(dtype);
    dlpack::Tensor prototype{};
    prototype.device = {where.deviceType, where.deviceId};
    prototype.ndim = static_cast<int32_t>(sizes.size());
    prototype.dtype = {d.code, d.bits, d.lanes};
    prototype.shape = sizes.data();
    int64_t span = 1;
    if (strides) {
      for (size_t i = 0; i < sizes.size(); ++i)
        span += (sizes[i] - 1) * (*strides)[i];
      for (int64_t s : sizes)
        span = s == 0 ? 0 : span;
      prototype.ndim = 1;
      prototype.shape = &span;
    }
    std::string message;
    auto setError = [](void *context, const char *kind, const char *text) {
      *static_cast<std::string *>(context) = std::string(kind) + ": " + text;
    };
    if (api.allocate(&prototype, &managed_, &message, setError) != 0 || !managed_)
      throw Error("allocating an output tensor failed: " + message);
    if (strides) {
      sizes_ = sizes;
      strides_ = *strides;
      managed_->tensor.ndim = static_cast<int32_t>(sizes_.size());
      managed_->tensor.shape = sizes_.data();
      managed_->tensor.strides = strides_.data();
    }
    return static_cast<char *>(managed_->tensor.data) + managed_->tensor.byteOffset;
  }

  nb::object release(const dlpack::ExchangeApi &api) {
    void *object = nullptr;
    if (api.managedToObject(managed_, &object) != 0)
      throw nb::python_error();
    managed_ = nullptr;
    return nb::steal(static_cast<PyObject *>(object));
  }

private:
  dlpack::ManagedTensor *managed_ = nullptr;
  /// What a strided tensor's DLPack record points at until it is released.
  std::vector<int64_t> sizes_, strides_;
};

/// One graph of a package ready to run (gcrt_context).
class Context {
public:
  Context(std::shared_ptr<Package> package, size_t graph, unsigned threads, bool profile,
          bool cudaGraphs, bool allowTf32, bool earlyLaunch)
      : package_(std::move(package)), graph_(graph) {
    auto flag = [](bool on, unsigned bit) { return on ? static_cast<uint32_t>(bit) : 0u; };
    uint32_t flags = flag(profile, GCRT_CONTEXT_PROFILE) |
                     flag(!cudaGraphs, GCRT_CONTEXT_NO_CUDA_GRAPHS) |
                     flag(allowTf32, GCRT_CONTEXT_ALLOW_TF32) |
                     flag(!earlyLaunch, GCRT_CONTEXT_NO_EARLY_LAUNCH);
    gcrt_context *c = nullptr;
    check(gcrt_context_create_with_flags(package_->get(), graph_, threads, flags, &c));
    handle_.reset(c);
    const std::vector<TensorInfo> &inputs = package_->inputs(graph_);
    staticInputs_ = std::all_of(inputs.begin(), inputs.end(), isStatic);
  }

  /// Runs the graph on `inputs` (arrays or tensors of any DLPack producer,
  /// read in place): with gcrt_run_device where they lie in GPU memory, with
  /// gcrt_run otherwise. Returns the outputs as new tensors of the inputs'
  /// framework (made through its exchange table, on the inputs' device:
  /// torch tensors for torch inputs) or else numpy arrays; or nothing where
  /// `out` gives the caller's memory for every output, which the run fills.
  ///
  /// In GPU memory the inputs may have any strides; outputs the inputs'
  /// framework makes have the graph's own layout (gcrt_output_strides), so
  /// that no copy rearranges them. With `stream` (a CUDA stream's handle, such as
  /// torch.cuda.current_stream().cuda_stream) a GPU run is enqueued there
  /// and not waited for (gcrt_run_device_async); without, it runs on the
  /// context's own stream and is done on return.
  /// `buffers=False` leaves out the mutated buffers' new values (None in
  /// their places): the context keeps them, and one it updates in place (a
  /// KV cache; in GPU memory, any, also from host inputs) is then never
  /// copied.
  std::vector<nb::object> run(nb::sequence inputs, std::optional<nb::sequence> out,
                              std::optional<uintptr_t> stream, bool buffers) {
    std::vector<TensorView> views = viewInputs(inputs);
    Placement where = placementOf(views);
    const std::vector<TensorInfo> &infos = package_->outputs(graph_);
    // Left out, they are written only where the context keeps them.
    check(gcrt_context_give_buffers(handle_.get(), buffers));
    if (out) {
      std::vector<TensorView> outViews = viewOutputs(*out, where);
      runViews(views, tensors(outViews), where, stream);
      return {};
    }
    const dlpack::ExchangeApi *maker = nullptr;
    for (const TensorView &v : views)
      maker = maker ? maker : v.producer;
    if (where.deviceType != nb::device::cpu::value && !maker)
      throw InputError("the inputs' framework cannot make outputs in GPU memory through DLPack's "
                       "exchange table: pass out=");
    std::vector<std::vector<int64_t>> sizes(infos.size());
    std::vector<gcrt_tensor> outputs(infos.size());
    std::vector<AllocatedTensor> allocated(infos.size());
    std::vector<nb::object> results(infos.size());
    auto leftOut = [&](size_t i) { return !buffers && infos[i].role == "buffer_mutation"; };
    for (size_t i = 0; i < infos.size(); ++i) {
      outputSizes(views, i, sizes[i]);
      // The framework's tensors take the graph's layout on the CPU too,
      // where it costs nothing either way, so that both devices return the
      // same strides.
      const std::vector<int64_t> *strides = maker ? ownLayout(views, i, sizes[i]) : nullptr;
      void *data = nullptr;
      if (leftOut(i))
        results[i] = nb::none();
      else if (maker)
        data = allocated[i].allocate(*maker, infos[i].dtype, sizes[i], strides, where);
      else
        results[i] = newHostArray(infos[i].dtype, sizes[i], data);
      outputs[i] = gcrt_tensor{data, infos[i].dtype, sizes[i].size(), sizes[i].data(),
                               strides ? strides->data() : nullptr};
    }
    runViews(views, outputs, where, stream);
    if (maker)
      for (size_t i = 0; i < infos.size(); ++i)
        if (!leftOut(i))
          results[i] = allocated[i].release(*maker);
    for (size_t i = 0; i < infos.size(); ++i)
      if (!leftOut(i))
        results[i] = filledPart(i, sizes[i], results[i]);
    return results;
  }

  void readBuffer(const std::string &name, WritableArray into) {
    TensorView view(into, nullptr);
    check(gcrt_context_read_buffer(handle_.get(), name.c_str(), &view.tensor));
  }
  void writeBuffer(const std::string &name, Array value) {
    TensorView view(value, nullptr);
    check(gcrt_context_write_buffer(handle_.get(), name.c_str(), &view.tensor));
  }
  void resetBuffers() { check(gcrt_context_reset_buffers(handle_.get())); }

  uint64_t seed() const {
    uint64_t s = 0;
    check(gcrt_context_get_seed(handle_.get(), &s));
    return s;
  }
  void setSeed(uint64_t s) { check(gcrt_context_set_seed(handle_.get(), s)); }

  /// Per plan step: (name, kind, runs, total microseconds, fastest run's),
  /// each step's first run left out once it has run again (gcrt.h).
  std::vector<nb::tuple> profile() {
    size_t count = 0;
    check(gcrt_context_profile(handle_.get(), nullptr, 0, &count));
    std::vector<gcrt_step_profile> steps(count);
    check(gcrt_context_profile(handle_.get(), steps.data(), steps.size(), &count));
    std::vector<nb::tuple> rows;
    for (const gcrt_step_profile &s : steps)
      rows.push_back(nb::make_tuple(s.name, s.kind, s.runs, s.total_us, s.min_us));
    return rows;
  }

private:
  struct Deleter {
    void operator()(gcrt_context *c) const { gcrt_context_free(c); }
  };

  std::vector<TensorView> viewInputs(nb::sequence inputs) const {
    const std::vector<TensorInfo> &infos = package_->inputs(graph_);
    size_t given = nb::len(inputs);
    if (given != infos.size())
      throw InputError("the graph takes " + std::to_string(infos.size()) + " inputs, " +
                       std::to_string(given) + " were given");
    std::vector<TensorView> views;
    views.reserve(given);
    for (size_t i = 0; i < given; ++i) {
      views.emplace_back(nb::handle(inputs[i]), &infos[i]);
      checkInput(views.back(), infos[i]);
    }
    return views;
  }

  /// Where a call runs: the inputs' device, which must be one for all.
  struct Placement {
    int32_t deviceType = nb::device::cpu::value, deviceId = 0;
  };

  Placement placementOf(const std::vector<TensorView> &views) const {
    Placement where;
    if (!views.empty())
      where = {views[0].deviceType, views[0].deviceId};
    const std::vector<TensorInfo> &infos = package_->inputs(graph_);
    for (size_t i = 0; i < views.size(); ++i)
      if (views[i].deviceType != where.deviceType || views[i].deviceId != where.deviceId)
        throw InputError("input " + infos[i].label() + " is on another device than input " +
                         infos[0].label() + ": every input must be in host memory, or all on "
                                            "one GPU");
    if (where.deviceType != nb::device::cpu::value && where.deviceType != nb::device::cuda::value)
      throw InputError("inputs must be in host or CUDA memory");
    return where;
  }

  std::vector<TensorView> viewOutputs(nb::sequence out, Placement where) const {
    const std::vector<TensorInfo> &infos = package_->outputs(graph_);
    size_t given = nb::len(out);
    if (given != infos.size())
      throw InputError("the graph has " + std::to_string(infos.size()) + " outputs, out= gives " +
                       std::to_string(given));
    std::vector<TensorView> views;
    views.reserve(given);
    for (size_t i = 0; i < given; ++i) {
      views.emplace_back(nb::handle(out[i]), nullptr);
      if (views.back().deviceType != where.deviceType)
        throw InputError("the out= memory of output " + infos[i].label() +
                         " is not on the inputs' device");
    }
    return views;
  }

  void runViews(const std::vector<TensorView> &views, std::vector<gcrt_tensor> outputs,
                Placement where, std::optional<uintptr_t> stream) {
    std::vector<gcrt_tensor> in = tensors(views);
    bool gpu = where.deviceType == nb::device::cuda::value;
    gcrt_status status;
    {
      nb::gil_scoped_release unlocked;
      if (gpu && stream)
        status = gcrt_run_device_async(handle_.get(), in.data(), in.size(), outputs.data(),
                                       outputs.size(), reinterpret_cast<void *>(*stream));
      else if (gpu)
        status = gcrt_run_device(handle_.get(), in.data(), in.size(), outputs.data(),
                                 outputs.size());
      else
        status = gcrt_run(handle_.get(), in.data(), in.size(), outputs.data(), outputs.size());
    }
    check(status);
  }

  /// Output `index`'s strides in the graph's own layout where they are not
  /// row-major (else null), for the inputs' sizes; kept for the last sizes
  /// seen, which a graph of static shapes never changes.
  const std::vector<int64_t> *ownLayout(const std::vector<TensorView> &views, size_t index,
                                        const std::vector<int64_t> &sizes) {
    // Inputs of static sizes never change the layouts: no key to build.
    if (layouts_.empty() || !staticInputs_) {
      std::vector<int64_t> key;
      for (const TensorView &v : views)
        key.insert(key.end(), v.shape().begin(), v.shape().end());
      if (key != layoutKey_ || layouts_.empty()) {
        layouts_.clear();
        for (size_t j = 0; j < package_->outputs(graph_).size(); ++j)
          layouts_.push_back(outputStrides(views, j));
        layoutKey_ = std::move(key);
      }
    }
    const std::vector<int64_t> &strides = layouts_[index];
    int64_t dense = 1;
    for (size_t d = sizes.size(); d-- > 0;) {
      if (sizes[d] != 1 && strides[d] != dense)
        return &strides;
      dense *= sizes[d];
    }
    return nullptr;
  }

  std::vector<int64_t> outputStrides(const std::vector<TensorView> &views, size_t index) const {
    std::vector<gcrt_tensor> in = tensors(views);
    std::vector<int64_t> strides(package_->outputs(graph_)[index].sizes.size() + 1, 0);
    size_t rank = 0;
    check(gcrt_output_strides(handle_.get(), in.data(), in.size(), index, strides.data(),
                              strides.size(), &rank));
    strides.resize(rank);
    return strides;
  }

public:
  /// Every output's strides in the graph's own layout for these inputs.
  std::vector<std::vector<int64_t>> outputStridesFor(nb::sequence inputs) const {
    std::vector<TensorView> views = viewInputs(inputs);
    std::vector<std::vector<int64_t>> all;
    for (size_t j = 0; j < package_->outputs(graph_).size(); ++j)
      all.push_back(outputStrides(views, j));
    return all;
  }

private:

  static std::vector<gcrt_tensor> tensors(const std::vector<TensorView> &views) {
    std::vector<gcrt_tensor> r;
    r.reserve(views.size());
    for (const TensorView &v : views)
      r.push_back(v.tensor);
    return r;
  }

  /// Output `index` as the run filled it: where the data decided a size
  /// (nonzero's count), the first elements of `result`, row-major for the
  /// sizes the run reports (gcrt_run_output_sizes).
  nb::object filledPart(size_t index, const std::vector<int64_t> &allocated,
                        nb::object result) const {
    // A size the data decides is dynamic in the record.
    if (isStatic(package_->outputs(graph_)[index]))
      return result;
    std::vector<int64_t> filled(allocated.size() + 1, 0);
    size_t rank = 0;
    check(gcrt_run_output_sizes(handle_.get(), index, filled.data(), filled.size(), &rank));
    filled.resize(rank);
    if (filled == allocated)
      return result;
    nb::list shape, strides;
    int64_t numel = 1, stride = 1;
    for (int64_t s : filled)
      numel *= s;
    std::vector<int64_t> rowMajor(rank, 1);
    for (size_t d = rank; d-- > 0;) {
      rowMajor[d] = stride;
      stride *= std::max<int64_t>(filled[d], 1);
    }
    for (size_t d = 0; d < rank; ++d) {
      shape.append(filled[d]);
      strides.append(rowMajor[d]);
    }
    // A framework tensor views its storage; a NumPy array (contiguous, made
    // here) is cut and reshaped.
    if (nb::hasattr(result, "as_strided"))
      return result.attr("as_strided")(nb::tuple(shape), nb::tuple(strides), 0);
    nb::object first = nb::module_::import_("builtins").attr("slice")(0, numel);
    return result.attr("reshape")(-1)[first].attr("reshape")(nb::tuple(shape));
  }

  static bool isStatic(const TensorInfo &info) {
    return std::all_of(info.sizes.begin(), info.sizes.end(), [](int64_t s) { return s >= 0; });
  }

  void outputSizes(const std::vector<TensorView> &views, size_t index,
                   std::vector<int64_t> &sizes) const {
    const TensorInfo &info = package_->outputs(graph_)[index];
    if (isStatic(info)) {
      sizes = info.sizes;
      return;
    }
    std::vector<gcrt_tensor> in = tensors(views);
    sizes.assign(info.sizes.size() + 1, 0);
    size_t rank = 0;
    check(gcrt_output_sizes(handle_.get(), in.data(), in.size(), index, sizes.data(), sizes.size(),
                            &rank));
    sizes.resize(rank);
  }

  std::shared_ptr<Package> package_;
  size_t graph_;
  std::unique_ptr<gcrt_context, Deleter> handle_;
  /// ownLayout's: the inputs' sizes, one after another, and the strides;
  /// whether every input's sizes are static.
  std::vector<int64_t> layoutKey_;
  bool staticInputs_ = false;
  std::vector<std::vector<int64_t>> layouts_;
};

nb::dict infoDict(const TensorInfo &info) {
  nb::dict d;
  d["name"] = info.name;
  d["role"] = info.role;
  d["target"] = info.target;
  d["path"] = info.path;
  d["dtype"] = gcrt_dtype_name(info.dtype);
  d["sizes"] = info.sizes;
  d["min_sizes"] = info.minSizes;
  d["max_sizes"] = info.maxSizes;
  return d;
}

std::vector<nb::dict> infoDicts(const std::vector<TensorInfo> &infos) {
  std::vector<nb::dict> r;
  for (const TensorInfo &i : infos)
    r.push_back(infoDict(i));
  return r;
}

} // namespace

void bindRuntime(nb::module_ &m) {
  m.def("package_format_version", [] { return std::string(gcrt_package_format_version()); });
  m.def("load_plugin", [](const std::string &path) { check(gcrt_plugin_load(path.c_str())); });
  m.def("cuda_device_count", [] {
    size_t count = 0;
    return gcrt_cuda_device_count(&count) == GCRT_OK ? count : size_t(0);
  });

  nb::class_<Package>(m, "Package")
      .def("__init__",
           [](Package *self, const std::string &path, std::optional<std::string> weights) {
             new (self) Package(path, std::move(weights));
           },
           nb::arg("path"), nb::arg("weights") = nb::none())
      .def_prop_ro("graph_count", &Package::graphCount)
      .def("graph_name", &Package::graphName)
      .def("inputs", [](const Package &p, size_t g) { return infoDicts(p.inputs(g)); })
      .def("outputs", [](const Package &p, size_t g) { return infoDicts(p.outputs(g)); })
      .def_prop_ro("device", &Package::device)
      .def("set_weights_file", &Package::setWeightsFile)
      .def("set_weight", &Package::setWeight)
      .def("read_weight", &Package::readWeight);

  // A shared_ptr holder keeps the package alive while a context uses it.
  nb::class_<Context>(m, "Context")
      .def("__init__",
           [](Context *self, std::shared_ptr<Package> package, size_t graph, unsigned threads,
              bool profile, bool cudaGraphs, bool allowTf32, bool earlyLaunch) {
             new (self) Context(std::move(package), graph, threads, profile, cudaGraphs, allowTf32,
                                earlyLaunch);
           },
           nb::arg("package"), nb::arg("graph") = 0, nb::arg("threads") = 0,
           nb::arg("profile") = false, nb::arg("cuda_graphs") = true,
           nb::arg("allow_tf32") = false, nb::arg("early_launch") = true)
      .def("run", &Context::run, nb::arg("inputs"), nb::arg("out") = nb::none(),
           nb::arg("stream") = nb::none(), nb::arg("buffers") = true)
      .def("output_strides", &Context::outputStridesFor, nb::arg("inputs"))
      .def("read_buffer", &Context::readBuffer)
      .def("write_buffer", &Context::writeBuffer)
      .def("reset_buffers", &Context::resetBuffers)
      .def_prop_rw("seed", &Context::seed, &Context::setSeed)
      .def("profile", &Context::profile);
}

} // namespace gc::python
