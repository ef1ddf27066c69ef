//===- GpuKernelEmitter.h - NVIDIA GPU code for kernel groups ----*- C++ -*-===//
//
// For CUDA targets ("cuda:sm_80,sm_90", gc/Support/Target.h) every
// KernelGroup of a plan becomes one GPU kernel, built as LLVM IR for the
// NVPTX target, optimized at O3, emitted as PTX once and assembled by the
// CUDA toolkit's ptxas for every architecture of the target; fatbinary
// bundles the cubins with the PTX (for newer GPUs to compile at load time).
// docs/gpu.md, section "Kernels", describes the kernels and their launch.
//
//===----------------------------------------------------------------------===//
#ifndef GC_CODEGEN_GPUKERNELEMITTER_H
#define GC_CODEGEN_GPUKERNELEMITTER_H

#include "gc/Codegen/KernelEmitter.h"

namespace gc {

/// Sets every kernel group's `mapping` and `blockThreads` from the graph
/// alone (sizes, and symbol ranges from the module), deterministically, so
/// that it can run before the object cache key is computed.
void chooseGpuLaunches(const Module &module, LoopGraph &graph);

/// Compiles the distinct kernels of graph.plan (whose launches
/// chooseGpuLaunches chose) for the CUDA target options.target into a CUDA
/// fatbinary. Each kernel is an entry named after its group taking
/// (buffers, symbols): device arrays of the device addresses of its
/// buffers (u64, in kernelBuffers() order, KernelCode.h) and of the size
/// symbols (i64, in graph.plan.symbols order). It
/// runs with `grid` blocks (the plan's KernelStep) of exactly
/// `blockThreads` threads. Fills options.ptx with the PTX when asked. The
/// kernels compile in kernelBatches() on options.jobs threads, their PTX
/// joined into one module; the fatbinary does not depend on the threads.
/// Errors name the kernel, node or buffer, or the toolkit's tool that
/// failed with its messages.
Expected<std::string> emitGpuKernels(const Module &module, const LoopGraph &graph,
                                     const EmitOptions &options);

} // namespace gc

#endif // GC_CODEGEN_GPUKERNELEMITTER_H
