//===- CudaExecutor.h - Running a plan graph on an NVIDIA GPU ---*- C++ -*-===//
#ifndef GC_LIB_RUNTIME_CUDA_CUDAEXECUTOR_H
#define GC_LIB_RUNTIME_CUDA_CUDAEXECUTOR_H

#include "gc/Runtime/Runtime.h"

#include <memory>

namespace gc {

/// The executor of plan graph `graph`, whose target is CUDA, on the GPU
/// options.cudaDevice picks; `kernels` carries the graph's module image
/// (KernelLibrary::gpuImage) and must outlive it. Errors say why it cannot
/// run: no driver, no device, no code for this GPU, a missing kernel.
Expected<std::unique_ptr<Executor>> createCudaExecutor(std::shared_ptr<const RuntimePlan> plan,
                                                       const plan::Graph &graph,
                                                       const KernelLibrary &kernels,
                                                       const RuntimeOptions &options);

} // namespace gc

#endif // GC_LIB_RUNTIME_CUDA_CUDAEXECUTOR_H
