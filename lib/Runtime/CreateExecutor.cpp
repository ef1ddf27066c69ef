//===- CreateExecutor.cpp - The executor of a plan graph's device ---------===//
//
// Executor::create picks the executor by the graph's target: the CPU's
// (Executor.cpp) or an NVIDIA GPU's (CudaExecutor.cpp). The rest of what
// the two share names no device.
//
//===----------------------------------------------------------------------===//
#include "CpuExecutor.h"
#include "CudaExecutor.h"

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
