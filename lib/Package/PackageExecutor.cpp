//===- PackageExecutor.cpp - Running a graph of a package -----------------===//
#include "gc/Package/PackageReader.h"

namespace gc {

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
  return exec;
}

Expected<std::span<const TensorRef>> PackageExecutor::bind(std::span<const TensorRef> userInputs) {
  if (userInputs.size() != userSlots_.size())
    return makeError() << graphLabel(graph_) << " takes " << userSlots_.size() << " user input"
                       << (userSlots_.size() == 1 ? "" : "s") << ", but " << userInputs.size()
                       << " were given";
  for (size_t i = 0; i < userSlots_.size(); ++i)
    inputs_[userSlots_[i]] = userInputs[i];
  return std::span<const TensorRef>(inputs_);
}

Expected<std::vector<std::vector<int64_t>>>
PackageExecutor::outputSizes(std::span<const TensorRef> userInputs) {
  Expected<std::span<const TensorRef>> inputs = bind(userInputs);
  if (!inputs)
    return inputs.error();
  return executor_->outputSizes(*inputs);
}

Error PackageExecutor::run(std::span<const TensorRef> userInputs,
                           std::span<const TensorRef> outputs) {
  Expected<std::span<const TensorRef>> inputs = bind(userInputs);
  if (!inputs)
    return inputs.error();
  if (outputs.size() != graph_.outputs()->size())
    return makeError() << graphLabel(graph_) << " has " << graph_.outputs()->size()
                       << " outputs, but " << outputs.size() << " were given";
  return executor_->run(*inputs, outputs);
}

} // namespace gc
