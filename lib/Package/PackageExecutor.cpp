//===- PackageExecutor.cpp - Running a graph of a package -----------------===//
#include "gc/Package/PackageReader.h"

#include "gc/Runtime/StridedLayout.h"

#include <algorithm>
#include <new>

namespace gc {

namespace {

std::vector<int64_t> contiguousStrides(const std::vector<int64_t> &sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;)
    strides[d - 1] = strides[d] * std::max<int64_t>(sizes[d], 1);
  return strides;
}

/// `t`'s strides, row-major when it gives none.
std::vector<int64_t> stridesOf(const TensorRef &t) {
  return t.strides.empty() ? contiguousStrides(t.sizes) : t.strides;
}

int64_t numelOf(const std::vector<int64_t> &sizes) {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

/// The bytes [first, last] that `t`'s elements cover, or nullopt if none.
std::optional<std::pair<uintptr_t, uintptr_t>> byteRange(const TensorRef &t) {
  if (!t.data || numelOf(t.sizes) == 0)
    return std::nullopt;
  std::vector<int64_t> strides = stridesOf(t);
  int64_t last = 0;
  for (size_t d = 0; d < t.sizes.size(); ++d)
    last += (t.sizes[d] - 1) * strides[d];
  auto base = reinterpret_cast<uintptr_t>(t.data);
  return std::pair{base, base + (last + 1) * dtypeSize(t.dtype) - 1};
}

} // namespace

Expected<std::unique_ptr<PackageExecutor>>
PackageExecutor::create(std::shared_ptr<const LoadedPackage> package, size_t graph,
                        const RuntimeOptions &options,
                        std::shared_ptr<const WeightBinding> weights) {
  const plan::Plan &p = package->plan();
  if (!weights)
    weights = package->weights();
  if (graph >= p.graphs()->size())
    return makeError() << "the package has " << p.graphs()->size() << " graphs, no graph "
                       << graph;
  const plan::Graph &g = *p.graphs()->Get(graph);
  auto exec = std::unique_ptr<PackageExecutor>(new PackageExecutor(package, g));
  exec->weights_ = weights;
  for (size_t i = 0; i < g.inputs()->size(); ++i) {
    const plan::Binding &in = *g.inputs()->Get(i);
    exec->inputs_.emplace_back();
    if (in.generator() != plan::GeneratorPart::None)
      continue;
    if (in.weight() < 0) {
      exec->userSlots_.push_back(i);
      continue;
    }
    // The reader checked that the layout is inside the bytes.
    const plan::Weight &w = *p.weights()->Get(in.weight());
    TensorRef &ref = exec->inputs_.back();
    ref.dtype = dtypeOf(w.dtype());
    ref.sizes.assign(w.sizes()->begin(), w.sizes()->end());
    ref.strides.assign(w.strides()->begin(), w.strides()->end());
    // Weights are inputs, which the runtime only reads; the mapping is
    // read-only regardless.
    auto *base = const_cast<uint8_t *>(weights->bytes(in.weight()).data());
    ref.data = base + w.storage_offset() * dtypeSize(ref.dtype);
  }
  // A buffer input with a mutation output is state: it gets memory of its
  // own, which the mutation output refreshes after each run.
  for (size_t j = 0; j < g.outputs()->size(); ++j) {
    const plan::Binding &out = *g.outputs()->Get(j);
    std::string_view role = out.role()->string_view(), target = out.target()->string_view();
    for (size_t i = 0; i < g.inputs()->size(); ++i) {
      const plan::Binding &in = *g.inputs()->Get(i);
      if (in.target()->string_view() != target)
        continue;
      if (role == kBufferMutationRole && in.role()->string_view() == kBufferRole &&
          in.weight() >= 0) {
        // The new value is copied over the old one, so it must be the same
        // tensor type; a plan that says otherwise is refused, not trusted.
        const plan::View &v = *out.view();
        const TensorRef &w = exec->inputs_[i];
        bool same = dtypeOf(v.dtype()) == w.dtype && v.sizes()->size() == w.sizes.size();
        for (size_t d = 0; same && d < w.sizes.size(); ++d) {
          const plan::SizeProgram &size = *v.sizes()->Get(d);
          same = size.code()->size() == 1 && size.code()->Get(0)->op() == plan::SizeOp::Const &&
                 size.code()->Get(0)->arg() == w.sizes[d];
        }
        if (!same)
          return makeError() << graphLabel(g) << ": output '" << out.name()->str()
                             << "' gives buffer '" << target << "' a new value of type "
                             << typeText(v.dtype(), v.sizes(), p) << ", but the buffer is "
                             << typeText(w.dtype, w.sizes);
        State s;
        s.name = std::string(target);
        s.input = i;
        s.output = j;
        s.initial = exec->inputs_[i];
        s.inPlace = out.view()->buffer() == in.view()->buffer();
        exec->state_.push_back(std::move(s));
      } else if (role == kUserInputMutationRole && in.weight() < 0) {
        auto user = std::find(exec->userSlots_.begin(), exec->userSlots_.end(), i);
        exec->inputMutations_.push_back({size_t(user - exec->userSlots_.begin()), j});
      }
    }
  }
  RuntimeOptions withKernels = options;
  // The package outlives its executors, which share it.
  withKernels.graphKernels = [pkg = package.get()](size_t g) -> const KernelLibrary & {
    return pkg->kernels(g);
  };
  Expected<std::unique_ptr<Executor>> executor =
      Executor::create(package->planFile(), graph, package->kernels(graph), withKernels);
  if (!executor)
    return executor.error().withContext(graphLabel(g));
  exec->executor_ = executor.take();
  // State lives where the graph's steps read it (GPU memory for CUDA), so
  // that runs on tensors in GPU memory never pass through the host.
  for (State &s : exec->state_) {
    Expected<TensorRef> ref = exec->executor_->allocatePersistent(s.initial.dtype, s.initial.sizes);
    if (!ref)
      return ref.error().withContext(graphLabel(g) + ": buffer '" + s.name + "'");
    s.ref = ref.take();
  }
  GC_RETURN_IF_ERROR(exec->resetBuffers());
  return exec;
}

Expected<std::span<const TensorRef>> PackageExecutor::bind(std::span<const TensorRef> userInputs) {
  if (userInputs.size() != userSlots_.size())
    return makeError() << graphLabel(graph_) << " takes " << userSlots_.size() << " user input"
                       << (userSlots_.size() == 1 ? "" : "s") << ", but " << userInputs.size()
                       << " were given";
  for (size_t i = 0; i < userSlots_.size(); ++i)
    inputs_[userSlots_[i]] = userInputs[i];
  generator_.bind(graph_, inputs_);
  return std::span<const TensorRef>(inputs_);
}

Error PackageExecutor::checkAliasing(std::span<const TensorRef> userInputs) const {
  if (userInputs.size() != userSlots_.size())
    return Error::success(); // bind() reports the count
  for (const InputMutation &m : inputMutations_) {
    std::optional<std::pair<uintptr_t, uintptr_t>> written = byteRange(userInputs[m.userInput]);
    if (!written)
      continue;
    for (size_t i = 0; i < userInputs.size(); ++i) {
      std::optional<std::pair<uintptr_t, uintptr_t>> other = byteRange(userInputs[i]);
      if (i == m.userInput || !other || other->second < written->first ||
          written->second < other->first)
        continue;
      auto name = [&](size_t u) {
        const plan::Binding &b = *graph_.inputs()->Get(userSlots_[u]);
        return b.target()->size() ? b.target()->str() : b.name()->str();
      };
      return makeError() << graphLabel(graph_) << ": user inputs '" << name(m.userInput)
                         << "' and '" << name(i) << "' share memory, and the graph writes '"
                         << name(m.userInput) << "'; pass separate copies";
    }
  }
  return Error::success();
}

Expected<std::vector<std::vector<int64_t>>>
PackageExecutor::outputSizes(std::span<const TensorRef> userInputs) {
  Expected<std::span<const TensorRef>> inputs = bind(userInputs);
  if (!inputs)
    return inputs.error();
  return executor_->outputSizes(*inputs);
}

Expected<std::vector<std::vector<int64_t>>>
PackageExecutor::outputStrides(std::span<const TensorRef> userInputs) {
  Expected<std::span<const TensorRef>> inputs = bind(userInputs);
  if (!inputs)
    return inputs.error();
  return executor_->outputStrides(*inputs);
}

Error PackageExecutor::run(std::span<const TensorRef> userInputs,
                           std::span<const TensorRef> outputs, std::optional<void *> stream) {
  Expected<std::span<const TensorRef>> inputs = bind(userInputs);
  if (!inputs)
    return inputs.error();
  if (outputs.size() != graph_.outputs()->size())
    return makeError() << graphLabel(graph_) << " has " << graph_.outputs()->size()
                       << " outputs, but " << outputs.size() << " were given";
  GC_RETURN_IF_ERROR(checkAliasing(userInputs));
  GC_RETURN_IF_ERROR(executor_->setStream(stream));
  // Later calls (reading a buffer, say) go back to the executor's own stream.
  Error ran = runOn(userInputs, *inputs, outputs);
  if (stream)
    if (Error e = executor_->setStream(std::nullopt); e && !ran)
      return e;
  return ran;
}

Error PackageExecutor::runOn(std::span<const TensorRef> userInputs,
                             std::span<const TensorRef> inputs,
                             std::span<const TensorRef> outputs) {
  GC_RETURN_IF_ERROR(executor_->run(inputs, outputs));
  // Only now that every step succeeded: a failed run changes nothing (but
  // a buffer updated in place, whose output is its state memory already).
  for (State &s : state_)
    if (outputs[s.output].data != s.ref.data)
      GC_RETURN_IF_ERROR(executor_->copy(s.ref, outputs[s.output], "buffer '" + s.name + "'"));
  for (const InputMutation &m : inputMutations_)
    GC_RETURN_IF_ERROR(executor_->copy(userInputs[m.userInput], outputs[m.output],
                                       "the new value of input '" +
                                           graph_.outputs()->Get(m.output)->target()->str() + "'"));
  generator_.advance(graph_);
  return Error::success();
}

std::vector<std::string> PackageExecutor::bufferNames() const {
  std::vector<std::string> names;
  for (const State &s : state_)
    names.push_back(s.name);
  return names;
}

const TensorRef *PackageExecutor::stateUpdatedInPlace(size_t output) const {
  for (const State &s : state_)
    if (s.output == output)
      return s.inPlace ? &s.ref : nullptr;
  return nullptr;
}

const TensorRef *PackageExecutor::stateOf(size_t output) const {
  for (const State &s : state_)
    if (s.output == output)
      return &s.ref;
  return nullptr;
}

const PackageExecutor::State *PackageExecutor::findState(std::string_view name) const {
  for (const State &s : state_)
    if (s.name == name)
      return &s;
  return nullptr;
}

Error PackageExecutor::checkBufferValue(const State &s, const TensorRef &t) const {
  if (t.dtype != s.ref.dtype || t.sizes != s.ref.sizes)
    return makeError() << "buffer '" << s.name << "' is " << typeText(s.ref.dtype, s.ref.sizes)
                       << ", not " << typeText(t.dtype, t.sizes);
  if (!t.strides.empty() && t.strides.size() != t.sizes.size())
    return makeError() << "buffer '" << s.name << "': " << t.strides.size() << " strides for "
                       << t.sizes.size() << " dimensions";
  if (!t.data && numelOf(t.sizes) != 0)
    return makeError() << "buffer '" << s.name << "': no data";
  return Error::success();
}

Error PackageExecutor::readBuffer(std::string_view name, const TensorRef &into) const {
  const State *s = findState(name);
  if (!s)
    return makeError() << graphLabel(graph_) << " mutates no buffer '" << name << "'";
  GC_RETURN_IF_ERROR(checkBufferValue(*s, into));
  return executor_->copy(into, s->ref, "buffer '" + s->name + "'");
}

Error PackageExecutor::writeBuffer(std::string_view name, const TensorRef &value) {
  const State *s = findState(name);
  if (!s)
    return makeError() << graphLabel(graph_) << " mutates no buffer '" << name << "'";
  GC_RETURN_IF_ERROR(checkBufferValue(*s, value));
  return executor_->copy(s->ref, value, "buffer '" + s->name + "'");
}

Error PackageExecutor::resetBuffers() {
  for (State &s : state_) {
    GC_RETURN_IF_ERROR(executor_->copy(s.ref, s.initial, "buffer '" + s.name + "'"));
    inputs_[s.input] = s.ref;
  }
  return Error::success();
}

} // namespace gc
