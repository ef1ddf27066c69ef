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

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

namespace gc {

namespace {

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

Expected<std::string> emitKernels(const Module &, const LoopGraph &graph,
                                  const EmitOptions &options) {
  auto machine = createTargetMachine(options.target);
  if (!machine)
    return machine.error();
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> owned = newKernelModule(ctx, graph.name, **machine);
  llvm::Module &module = *owned;

  for (uint32_t g = 0; g < graph.plan.kernels.size(); ++g) {
    GroupEmitter emitter(module, graph, g);
    GC_RETURN_IF_ERROR(emitter.emit());
  }
  return finishKernelModule(
      module, **machine,
      llvm::StringRef(reinterpret_cast<const char *>(kMathBitcode), kMathBitcodeSize), graph.name,
      options, llvm::CGFT_ObjectFile);
}

} // namespace gc
