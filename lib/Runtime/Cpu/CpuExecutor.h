//===- CpuExecutor.h - Running a plan graph on the CPU ----------*- C++ -*-===//
#ifndef GC_LIB_RUNTIME_CPU_CPUEXECUTOR_H
#define GC_LIB_RUNTIME_CPU_CPUEXECUTOR_H

#include "gc/Runtime/Runtime.h"

#include <memory>

namespace gc {

/// The executor of plan graph `graph`, whose target is a CPU, on this
/// process's threads (options.threads); `kernels` holds the graph's kernel
/// entries and must outlive it. Errors name what the plan lacks: a kernel
/// missing from the library, a size symbol no input binds.
Expected<std::unique_ptr<Executor>> createCpuExecutor(std::shared_ptr<const RuntimePlan> plan,
                                                      const plan::Graph &graph,
                                                      const KernelLibrary &kernels,
                                                      const RuntimeOptions &options);

} // namespace gc

#endif // GC_LIB_RUNTIME_CPU_CPUEXECUTOR_H
