//===- KernelEmitter.h - LLVM code for kernel groups ------------*- C++ -*-===//
//
// Each KernelGroup of a plan becomes one function with the KernelEntryFn
// signature (Runtime.h), built as LLVM IR, optimized at O3 for the chosen
// target. Consecutive kernels form batches, one LLVM module and one ELF
// object each, compiled on a pool of threads; the graph's object code is
// the archive of the batches' objects (Support/ObjectArchive.h). Batches
// depend on the graph alone, never on the number of threads, so the bytes
// are the same however many compile them.
//
//===----------------------------------------------------------------------===//
#ifndef GC_CODEGEN_KERNELEMITTER_H
#define GC_CODEGEN_KERNELEMITTER_H

#include "gc/IR/LoopIR.h"
#include "gc/Support/Error.h"
#include "gc/Support/Target.h"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gc {

class TimeTrace;

/// What a target name stands for on this machine: the name itself, except
/// "native", which becomes the host's CPU name and features, and a CUDA
/// target, which gains the toolkit's release (so that a cache key made from
/// it never matches code for another CPU or from another ptxas).
std::string resolvedTargetName(const std::string &target);

struct EmitOptions {
  /// CPU targets: "x86-64" (portable, SSE2), "x86-64-v3" (AVX2, FMA),
  /// "x86-64-v4" (AVX-512), "native" (this machine; never cached across
  /// hosts), or a list of levels ("x86-64-v3,x86-64-v4", Target.h).
  std::string target{kDefaultCpuTargets};
  /// Fill these with the module's text before / after optimization.
  std::string *llvmIR = nullptr;
  std::string *optimizedLLVMIR = nullptr;
  /// CUDA targets: fill this with the kernels' PTX.
  std::string *ptx = nullptr;
  /// Threads that compile a graph's kernel batches (0: one per hardware
  /// thread); the object code does not depend on it.
  unsigned jobs = 0;
  /// Records one event per kernel batch, on the thread that compiled it.
  TimeTrace *trace = nullptr;
};

/// Kernels [begin, end) of distinctKernels(graph) (KernelCode.h), compiled
/// as one LLVM module.
struct KernelBatch {
  uint32_t begin = 0;
  uint32_t end = 0;
};

/// graph.plan's distinct kernels cut into batches: consecutive kernels
/// until a batch holds enough loop nodes to outweigh LLVM's cost per module.
std::vector<KernelBatch> kernelBatches(const LoopGraph &graph);

/// Compiles the distinct kernels of graph.plan (one function per name) for
/// a CPU target (CUDA targets go to emitGpuKernels, GpuKernelEmitter.h)
/// into the archive of one relocatable ELF object per batch. With llvmIR or
/// optimizedLLVMIR set the kernels form one batch, so that the text is one
/// module. Size symbols are read from the `symbols` argument
/// in graph.plan.symbols order. Errors name the kernel and node.
Expected<std::string> emitKernels(const Module &module, const LoopGraph &graph,
                                  const EmitOptions &options);

/// emitKernels for each CPU target of `targets` in turn (options.target is
/// not read), the batches of every target compiled on one pool of threads;
/// the LLVM text asked for is the first target's.
Expected<std::vector<std::string>> emitKernelsForTargets(const Module &module,
                                                         const LoopGraph &graph,
                                                         std::span<const std::string> targets,
                                                         const EmitOptions &options);

} // namespace gc

#endif // GC_CODEGEN_KERNELEMITTER_H
