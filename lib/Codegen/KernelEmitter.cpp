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

#include "gc/Support/ObjectArchive.h"
#include "gc/Support/TimeTrace.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <thread>

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
  uint32_t count = static_cast<uint32_t>(graph.plan.kernels.size());
  for (uint32_t k = 0; k < count; ++k) {
    if (batches.empty() || nodes >= kBatchNodes) {
      batches.push_back({k, k});
      nodes = 0;
    }
    batches.back().end = k + 1;
    nodes += graph.plan.kernels[k].nodes.size();
  }
  return batches;
}

namespace {

/// The object code of the kernels of `batch`.
Expected<std::string> emitBatch(const LoopGraph &graph, KernelBatch batch,
                                const EmitOptions &options) {
  TraceScope scope(options.trace,
                   "kernels " + graph.name + "[" + std::to_string(batch.begin) + ", " +
                       std::to_string(batch.end) + ")",
                   "kernels");
  auto machine = createTargetMachine(options.target);
  if (!machine)
    return machine.error();
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> module = newKernelModule(ctx, graph.name, **machine);
  {
    TraceScope build(options.trace, "build IR", "llvm");
    for (uint32_t g = batch.begin; g < batch.end; ++g) {
      GroupEmitter emitter(*module, graph, g);
      GC_RETURN_IF_ERROR(emitter.emit());
    }
  }
  return finishKernelModule(
      *module, **machine,
      llvm::StringRef(reinterpret_cast<const char *>(kMathBitcode), kMathBitcodeSize), graph.name,
      options, llvm::CGFT_ObjectFile);
}

/// Calls work(i) for every i < n on up to `jobs` threads (the caller's
/// among them), each taking the next index when it is done with one.
void forEachIndex(size_t n, unsigned jobs, const std::function<void(size_t)> &work) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;)
      work(i);
  };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < std::min<size_t>(jobs, n); ++t)
    threads.emplace_back(worker);
  worker();
  for (std::thread &t : threads)
    t.join();
}

} // namespace

Expected<std::string> emitKernels(const Module &, const LoopGraph &graph,
                                  const EmitOptions &options) {
  // A bad target is an error even for a graph without kernels.
  if (auto machine = createTargetMachine(options.target); !machine)
    return machine.error();
  bool wantIR = options.llvmIR || options.optimizedLLVMIR;
  std::vector<KernelBatch> batches =
      wantIR ? std::vector<KernelBatch>{{0, static_cast<uint32_t>(graph.plan.kernels.size())}}
             : kernelBatches(graph);
  std::vector<std::string> objects(batches.size());
  std::vector<Error> errors(batches.size());
  unsigned jobs = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  forEachIndex(batches.size(), jobs, [&](size_t i) {
    Expected<std::string> object = emitBatch(graph, batches[i], options);
    if (object)
      objects[i] = object.take();
    else
      errors[i] = object.error();
  });
  // The first failure in batch order, whichever thread saw it first.
  for (const Error &e : errors)
    if (e)
      return e;
  return archiveObjects(objects);
}

} // namespace gc
