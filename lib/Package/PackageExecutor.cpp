//===- PackageExecutor.cpp - Running a graph of a package -----------------===//
#include "gc/Package/PackageReader.h"

#include "gc/IR/LoopIR.h"

namespace gc {

Expected<std::unique_ptr<PackageExecutor>>
PackageExecutor::create(std::shared_ptr<const LoadedPackage> package, size_t graph,
                        const RuntimeOptions &options,
                        std::shared_ptr<const WeightBinding> weights) {
  const Module &m = package->module();
  if (!weights)
    weights = package->weights();
  if (graph >= m.loopGraphs().size())
    return makeError() << "the package has " << m.loopGraphs().size() << " graphs, no graph "
                       << graph;
  const LoopGraph &g = *m.loopGraphs()[graph];
  auto exec = std::unique_ptr<PackageExecutor>(new PackageExecutor(package, g));
  exec->weights_ = weights;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const InputSpec &spec = g.inputSpecs[i];
    exec->inputs_.emplace_back();
    if (spec.kind == InputKind::UserInput) {
      exec->userSlots_.push_back(i);
      continue;
    }
    const Weight *w = m.weight(spec.target);
    if (!w)
      return makeError() << "graph @" << g.name << ": the package has no weight '" << spec.target
                         << "' for input '" << g.inputs[i].name << "'";
    // The reader checked that the layout is constant and inside the bytes.
    TensorRef &ref = exec->inputs_.back();
    ref.dtype = w->type.dtype;
    for (size_t d = 0; d < w->type.rank(); ++d) {
      ref.sizes.push_back(w->type.sizes[d]->constant());
      ref.strides.push_back(w->type.strides[d]->constant());
    }
    // Weights are inputs, which the runtime only reads; the mapping is
    // read-only regardless.
    auto *base = const_cast<uint8_t *>(weights->bytes(w - m.weights().data()).data());
    ref.data = base + w->type.storageOffset->constant() * dtypeSize(w->type.dtype);
  }
  Expected<std::unique_ptr<Executor>> executor =
      Executor::create(m, g, package->kernels(graph), options);
  if (!executor)
    return executor.error().withContext("graph @" + g.name);
  exec->executor_ = executor.take();
  return exec;
}

Expected<std::span<const TensorRef>> PackageExecutor::bind(std::span<const TensorRef> userInputs) {
  if (userInputs.size() != userSlots_.size())
    return makeError() << "graph @" << graph_.name << " takes " << userSlots_.size()
                       << " user input" << (userSlots_.size() == 1 ? "" : "s") << ", but "
                       << userInputs.size() << " were given";
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
  if (outputs.size() != graph_.outputs.size())
    return makeError() << "graph @" << graph_.name << " has " << graph_.outputs.size()
                       << " outputs, but " << outputs.size() << " were given";
  return executor_->run(*inputs, outputs);
}

} // namespace gc
