//===- CreateExecutor.cpp - The executor of a plan graph's device ---------===//
//
// Executor::create picks the executor by the graph's target: the CPU's
// (Cpu/) or an NVIDIA GPU's (Cuda/). The rest of what the two share, in
// this folder, names no device.
//
//===----------------------------------------------------------------------===//
#include "Cpu/CpuExecutor.h"
#include "Cuda/CudaExecutor.h"

#include "gc/Support/Target.h"

namespace gc {

Expected<std::unique_ptr<Executor>> Executor::create(std::shared_ptr<const RuntimePlan> plan,
                                                     size_t graph, const KernelLibrary &kernels,
                                                     const RuntimeOptions &options) {
  const auto &graphs = *plan->root().graphs();
  if (graph >= graphs.size())
    return makeError() << "the plan has " << graphs.size() << " graphs, no graph " << graph;
  const plan::Graph &g = *graphs.Get(graph);
  if (targetDevice(g.target()->string_view()) == TargetDevice::CUDA)
    return createCudaExecutor(std::move(plan), g, kernels, options);
  return createCpuExecutor(std::move(plan), g, kernels, options);
}

} // namespace gc
