//===- KernelEmitter.cpp - LLVM code for kernel groups --------------------===//
//
// Every kernel group becomes one function over a loop nest built directly as
// LLVM IR. Loops are plain counted loops with i64 induction variables; the
// O3 pipeline does the rest (LICM hoists what a body computes from outer
// loops only, the loop vectorizer widens the innermost loops). To let it do
// so without runtime checks, every buffer access carries alias scopes that
// say distinct buffers never overlap, every loop says that its iterations
// touch memory independently (llvm.loop.parallel_accesses: true of every
// loop gc emits, since a point of a node reads only what earlier nodes or
// the same point wrote, which also covers an output written in place over
// its input), and reductions combine with reassociation allowed.
//
//===----------------------------------------------------------------------===//
#include "gc/Codegen/KernelEmitter.h"

#include "GroupEmitterBase.h"
#include "MathBitcode.h"
#include "TargetSetup.h"

#include "gc/IR/KernelCode.h"
#include "gc/Support/ObjectArchive.h"
#include "gc/Support/Parallel.h"
#include "gc/Support/TimeTrace.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <span>

namespace gc {

namespace {

/// Loop nodes per batch: LLVM spends a few milliseconds on every module
/// (target machine, math library, pass pipelines) however small, so a batch
/// gathers kernels until that is a small share of its time.
constexpr size_t kBatchNodes = 16;

/// Emits one kernel group as a CPU function over a sub-range of its first
/// parallel loop.
class GroupEmitter : public GroupEmitterBase {
public:
  GroupEmitter(llvm::Module &module, const LoopGraph &graph, uint32_t groupIndex)
      : GroupEmitterBase(module, graph, groupIndex, "CPU") {}

  Error emit() {
    auto *i64 = b_.getInt64Ty();
    auto *ptr = b_.getPtrTy();
    GC_RETURN_IF_ERROR(
        beginFunction({ptr, ptr, i64, i64}, {"buffers", "symbols", "begin", "end"}));
    llvm::Argument *args = fn_->arg_begin();
    emitParallelLoops(0, &args[2], &args[3]);
    return endFunction();
  }

private:
  void emitParallelLoops(size_t level, Value *begin, Value *end) {
    const auto &ranges = group_.parallelRanges;
    if (level == ranges.size()) {
      for (uint32_t n : group_.nodes) {
        node_ = &graph_.nodes[n];
        emitSerialNode(*node_);
      }
      return;
    }
    Value *lo = level == 0 ? begin : b_.getInt64(0);
    Value *hi = level == 0 ? end : expr(ranges[level]);
    std::string name = "i" + std::to_string(level);
    emitLoop(lo, hi, "p" + std::to_string(level), [&](Value *iv) {
      vars_[name] = iv;
      emitParallelLoops(level + 1, begin, end);
    });
    vars_.erase(name);
  }
};

} // namespace

std::vector<KernelBatch> kernelBatches(const LoopGraph &graph) {
  std::vector<KernelBatch> batches;
  size_t nodes = 0;
  std::vector<uint32_t> kernels = distinctKernels(graph);
  for (uint32_t i = 0; i < kernels.size(); ++i) {
    if (batches.empty() || nodes >= kBatchNodes) {
      batches.push_back({i, i});
      nodes = 0;
    }
    batches.back().end = i + 1;
    nodes += graph.plan.kernels[kernels[i]].nodes.size();
  }
  return batches;
}

namespace {

/// The object code of the kernels of `batch`.
Expected<std::string> emitBatch(const LoopGraph &graph, std::span<const uint32_t> kernels,
                                KernelBatch batch, const EmitOptions &options) {
  TraceScope scope(options.trace,
                   "kernels " + graph.name + "[" + std::to_string(batch.begin) + ", " +
                       std::to_string(batch.end) + ") " + options.target,
                   "kernels");
  auto machine = createTargetMachine(options.target);
  if (!machine)
    return machine.error();
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> module = newKernelModule(ctx, graph.name, **machine);
  {
    TraceScope build(options.trace, "build IR", "llvm");
    for (uint32_t i = batch.begin; i < batch.end; ++i) {
      GroupEmitter emitter(*module, graph, kernels[i]);
      GC_RETURN_IF_ERROR(emitter.emit());
    }
  }
  return finishKernelModule(
      *module, **machine,
      llvm::StringRef(reinterpret_cast<const char *>(kMathBitcode), kMathBitcodeSize), graph.name,
      options, llvm::CGFT_ObjectFile, llvm::OptimizationLevel::O3);
}

} // namespace

Expected<std::vector<std::string>> emitKernelsForTargets(const Module &, const LoopGraph &graph,
                                                         std::span<const std::string> targets,
                                                         const EmitOptions &options) {
  // A bad target is an error even for a graph without kernels.
  for (const std::string &target : targets)
    if (auto machine = createTargetMachine(target); !machine)
      return machine.error();
  bool wantIR = options.llvmIR || options.optimizedLLVMIR;
  std::vector<uint32_t> kernels = distinctKernels(graph);
  std::vector<KernelBatch> batches =
      wantIR ? std::vector<KernelBatch>{{0, static_cast<uint32_t>(kernels.size())}}
             : kernelBatches(graph);
  // One job per (target, batch), so that every level's batches share the
  // threads; the text asked for is the first target's.
  size_t jobsPerTarget = batches.size();
  Expected<std::vector<std::string>> made = mapIndices<std::string>(
      targets.size() * jobsPerTarget, options.jobs, [&](size_t i) {
        EmitOptions emit = options;
        emit.target = targets[i / jobsPerTarget];
        if (i >= jobsPerTarget)
          emit.llvmIR = emit.optimizedLLVMIR = nullptr;
        return emitBatch(graph, kernels, batches[i % jobsPerTarget], emit);
      });
  if (!made)
    return made.error();
  const std::vector<std::string> &objects = *made;
  std::vector<std::string> out;
  for (size_t t = 0; t < targets.size(); ++t)
    out.push_back(archiveObjects(std::span<const std::string>(objects).subspan(
        t * jobsPerTarget, jobsPerTarget)));
  return out;
}

Expected<std::string> emitKernels(const Module &module, const LoopGraph &graph,
                                  const EmitOptions &options) {
  Expected<std::vector<std::string>> objects =
      emitKernelsForTargets(module, graph, std::span(&options.target, 1), options);
  if (!objects)
    return objects.error();
  return std::move(objects->front());
}

} // namespace gc
