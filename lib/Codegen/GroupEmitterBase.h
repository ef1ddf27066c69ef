//===- GroupEmitterBase.h - What the CPU and GPU kernel emitters share -*- C++ -*-===//
//
// A kernel group becomes one LLVM function on either backend. How the points
// of its parallel ranges map onto hardware differs (the CPU runs a loop nest
// over a sub-range of the first loop; a GPU kernel strides over the
// flattened points with threads or blocks), but everything below that is the
// same: loading the size symbols and buffer base pointers, index
// expressions, bodies with their masked and gathered loads, stores, a node's
// own loops run serially, and the identity and combine steps of reductions.
// GroupEmitterBase holds that part; KernelEmitter.cpp (CPU) and
// GpuKernelEmitter.cpp derive from it.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_CODEGEN_GROUPEMITTERBASE_H
#define GC_LIB_CODEGEN_GROUPEMITTERBASE_H

#include "ScalarEmitter.h"

#include "gc/Codegen/KernelEmitter.h"
#include "gc/IR/LoopIR.h"
#include "gc/Support/Error.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/OptimizationLevel.h>
#include <llvm/Target/TargetMachine.h>

#include <functional>
#include <memory>
#include <map>
#include <string>
#include <string_view>

namespace gc {

class GroupEmitterBase {
public:
  /// `backend` names the backend in messages ("CPU", "GPU").
  GroupEmitterBase(llvm::Module &module, const LoopGraph &graph, uint32_t groupIndex,
                   std::string_view backend);
  virtual ~GroupEmitterBase() = default;

protected:
  using Value = llvm::Value;

  /// A reduction's running state: the accumulator, and for ArgMax/ArgMin
  /// the position of the current extreme, for float Max/Min whether a NaN
  /// went by (allocas in the entry block).
  struct Accumulator {
    ReduceKind kind = ReduceKind::Sum;
    DType valueType = DType::Float32; ///< what is combined (Sum of Bool: Int64)
    llvm::Type *type = nullptr;
    bool isFloat = false, isUnsigned = false, isArg = false, wantsMax = false;
    Value *identity = nullptr;
    Value *value = nullptr, *position = nullptr, *sawNaN = nullptr;
    /// Whether `sawNaN` takes part (float Max and Min).
    bool tracksNaN() const {
      return sawNaN && (kind == ReduceKind::Max || kind == ReduceKind::Min);
    }
  };

  //===--- The function ------------------------------------------------===//

  /// Creates the kernel function, named after the group, with `params`
  /// (the buffer and symbol arrays first), its entry block with the loads
  /// of symbols and buffer base pointers, and leaves the builder in an
  /// empty "body" block.
  Error beginFunction(llvm::ArrayRef<llvm::Type *> params, llvm::ArrayRef<const char *> paramNames);
  /// Returns from the body and closes the entry block; the first error any
  /// emitting step met.
  Error endFunction();

  void fail(const std::string &message);
  /// An alloca in the entry block, where SROA turns it into SSA values.
  Value *slot(llvm::Type *type, const char *name);
  /// What the kernel addresses a buffer through, given the pointer loaded
  /// from the buffer array (the GPU casts it to global memory).
  virtual Value *bufferBase(Value *pointer) { return pointer; }

  /// A counted loop [lo, hi) by `step` (1 if null) around what `body`
  /// emits; the induction variable has lo's type. Loops declare their
  /// iterations' accesses independent (llvm.loop.parallel_accesses), which
  /// holds for every loop gc emits: a point of a node reads only what
  /// earlier nodes or the same point wrote.
  template <typename F>
  void emitLoop(Value *lo, Value *hi, const std::string &name, F &&body, Value *step = nullptr) {
    llvm::BasicBlock *pre = b_.GetInsertBlock();
    auto *header = llvm::BasicBlock::Create(ctx_, name + ".header", fn_);
    auto *bodyBlock = llvm::BasicBlock::Create(ctx_, name + ".body", fn_);
    auto *exit = llvm::BasicBlock::Create(ctx_, name + ".exit", fn_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode *iv = b_.CreatePHI(lo->getType(), 2, name);
    iv->addIncoming(lo, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(iv, hi), bodyBlock, exit);
    b_.SetInsertPoint(bodyBlock);
    // Accesses belong to the group of their innermost loop.
    llvm::MDNode *outerGroup = accessGroup_;
    llvm::MDNode *group = llvm::MDNode::getDistinct(ctx_, {});
    accessGroup_ = group;
    body(static_cast<Value *>(iv));
    accessGroup_ = outerGroup;
    Value *increment = step ? step : llvm::ConstantInt::get(lo->getType(), 1);
    Value *next = b_.CreateAdd(iv, increment, name + ".next", true, true);
    iv->addIncoming(next, b_.GetInsertBlock());
    llvm::Instruction *latch = b_.CreateBr(header);
    markParallel(latch, group);
    b_.SetInsertPoint(exit);
  }

  //===--- Nodes run serially ---------------------------------------------===//

  /// Checks what every kernel node needs; false after fail().
  bool checkNode(const LoopNode &node);
  /// The node's own loops from `level` on, run one after another around
  /// `inner`, which sees their variables i<level>...
  template <typename F> void emitOwnLoops(const LoopNode &node, size_t level, F &&inner) {
    if (level == node.ranges.size())
      return inner();
    std::string name = "i" + std::to_string(level);
    emitLoop(b_.getInt64(0), expr(node.ranges[level]), name, [&](Value *iv) {
      vars_[name] = iv;
      emitOwnLoops(node, level + 1, inner);
    });
    // A later node must not see this loop's variable.
    vars_.erase(name);
  }
  /// Runs the node at the current point of the group's parallel ranges:
  /// its own loops beyond them, and its reduction loops, serially.
  void emitSerialNode(const LoopNode &node);
  /// One pointwise point: the body, stored.
  void emitPointwisePoint(const LoopNode &node);
  /// One reduction point, with its reduction loops run serially.
  void emitSerialReduction(const LoopNode &node);

  //===--- Reductions -----------------------------------------------------===//

  /// The accumulator of `node`, set to the reduction's identity.
  Accumulator beginReduction(const LoopNode &node);
  /// Combines the body value `v` into `a`. `position` is v's place in the
  /// flattened reduction space (ArgMax/ArgMin); null computes it from the
  /// loop variables r0, r1, ...
  void accumulate(const LoopNode &node, const Accumulator &a, Value *v, Value *position);
  /// The accumulated value, NaN if a NaN went by (float Max/Min).
  Value *reducedValue(const Accumulator &a);
  /// Stores what `a` holds: the position for ArgMax/ArgMin, else the value.
  void storeReduction(const LoopNode &node, const Accumulator &a);
  /// acc (op) v for Sum, Prod, Any, Max, Min. Float max and min ignore NaN
  /// here (the accumulator's NaN flag restores torch's propagation).
  Value *combine(ReduceKind kind, Value *acc, Value *v, bool isFloat, bool isUnsigned);

  void store(const LoopNode &node, Value *v, DType from);
  /// store() at an element index computed earlier (storeIndexOf).
  void storeAt(const LoopNode &node, Value *v, DType from, Value *index);
  /// `v`, of dtype `from`, as the node's output buffer holds it in memory
  /// (memoryType): converted, half precision rounded once, bool a byte.
  Value *memoryValue(const LoopNode &node, Value *v, DType from);
  /// The float that a store of `v` (of dtype `from`) into a buffer of the
  /// half-precision dtype `to` rounds once.
  Value *halfSource(Value *v, DType from, DType to);
  /// The element `index` of a buffer, as loaded from memory: a body's
  /// load `op` reads through this (the GPU takes aligned vectors of
  /// several lanes at once).
  virtual Value *loadElement(const BodyOp &op, Value *index);
  /// The address of element `index` of buffer `buf`.
  Value *elementAddress(uint32_t buf, Value *index);
  /// The node's store index, its t0, t1, ... bound to the values of the
  /// body emitted last (a scatter's loaded indices).
  Value *storeIndexOf(const LoopNode &node);
  /// A scattering store of `v` (the buffer's memory type) at `address` that
  /// combines with the element there (node.combine). The CPU reads,
  /// combines and writes in point order; the GPU overrides this with
  /// atomics.
  virtual void combineStore(const LoopNode &node, Value *address, Value *v);
  /// old (combine) v in the buffer's memory type: + or * (bool: or, and),
  /// max or min (a NaN wins, as torch's scatter_reduce).
  Value *combineStored(StoreCombine combine, DType dtype, Value *old, Value *v);

  //===--- Index expressions and bodies -------------------------------------===//

  /// An index expression as an i64 value over the bound variables.
  Value *expr(const SymExpr *e);
  /// expr() of a FloorDiv or Mod expression, with Python's semantics (the
  /// GPU divides by a loop-invariant divisor through a multiplication).
  virtual Value *indexDivision(const SymExpr *e);
  Value *emitBody(const Body &body);
  /// Every value of the body emitBody emitted last.
  std::vector<Value *> bodyValues_;

  llvm::Module &module_;
  llvm::LLVMContext &ctx_;
  llvm::IRBuilder<> b_;
  ScalarEmitter scalar_;
  const LoopGraph &graph_;
  const KernelGroup &group_;
  uint32_t groupIndex_;
  std::string_view backend_;
  llvm::Function *fn_ = nullptr;
  llvm::BasicBlock *entry_ = nullptr;
  llvm::BasicBlock *body_ = nullptr;
  const LoopNode *node_ = nullptr;
  /// Size symbols, loop variables (i*, r*) and gather values (t*) by name.
  std::map<std::string, Value *> vars_;

private:
  void loadSymbols(Value *symbols);
  Error prepareBuffers(Value *buffers);
protected:
  /// Alias scopes of `buf`, and the innermost loop's access group unless
  /// `parallel` is false (a scattering store's accesses: its points may
  /// touch one element).
  void annotate(llvm::Instruction *access, uint32_t buf, bool parallel = true);

private:
  void markParallel(llvm::Instruction *latch, llvm::MDNode *group);
  template <typename F> void emitReductionLoops(const LoopNode &node, size_t level, F &&body) {
    if (level == node.reductionRanges.size())
      return body();
    std::string name = "r" + std::to_string(level);
    emitLoop(b_.getInt64(0), expr(node.reductionRanges[level]), name, [&](Value *iv) {
      vars_[name] = iv;
      emitReductionLoops(node, level + 1, body);
    });
    vars_.erase(name);
  }
  void combineArg(const LoopNode &node, Value *v, Value *cur, const Accumulator &a,
                  Value *position);

  Value *operand(const Body &body, const std::vector<Value *> &values, uint32_t index, DType to);
  Value *emitOp(const Body &body, const BodyOp &op, const std::vector<Value *> &values);
  Value *emitLoad(const Body &body, const BodyOp &op, const std::vector<Value *> &values);
  /// The element a load masked by `mask` reads from `buffer`: `index`
  /// where the mask holds, else one that exists.
  Value *maskedIndex(const SymExpr *index, uint32_t buffer, Value *mask);
  Value *emitCompute(const Body &body, const BodyOp &op, const std::vector<Value *> &values);
  Value *compare(const Body &body, const BodyOp &op, const std::vector<Value *> &values);

  std::map<uint32_t, Value *> base_;
  std::map<uint32_t, llvm::MDNode *> scopeOf_;
  std::map<uint32_t, llvm::MDNode *> noaliasOf_;
  llvm::MDNode *accessGroup_ = nullptr;
  Error error_ = Error::success();
};

//===--- Whole modules ------------------------------------------------------===//

/// Links the gc_* math functions the kernels call from `bitcode` (the math
/// library compiled for the module's target) and makes them internal and
/// always inlined.
Error linkMathLibrary(llvm::Module &module, llvm::StringRef bitcode);
/// Gives every defined function the target's CPU and features (the math
/// library's came from clang with its own), so that they inline into each
/// other.
void setTargetAttributes(llvm::Module &module, const llvm::TargetMachine &machine);
/// "internal error: invalid LLVM IR for graph ..." if the module is broken.
Error verifyKernelModule(const llvm::Module &module, const std::string &graphName);
/// LLVM's default pipeline at `level` for the machine.
void optimize(llvm::Module &module, llvm::TargetMachine &machine, llvm::OptimizationLevel level);
std::string printModule(const llvm::Module &module);

/// An empty module for `graph`'s kernels, with the machine's triple and data
/// layout.
std::unique_ptr<llvm::Module> newKernelModule(llvm::LLVMContext &ctx, const std::string &graph,
                                              const llvm::TargetMachine &machine);

/// What both emitters do once the kernels are built: link the math library
/// `bitcode`, run `afterLink` (the GPU links libdevice there), verify,
/// optimize at `level` and emit the module as `type` (an object file, or
/// PTX text), filling options.llvmIR / optimizedLLVMIR on the way.
Expected<std::string> finishKernelModule(llvm::Module &module, llvm::TargetMachine &machine,
                                         llvm::StringRef bitcode, const std::string &graphName,
                                         const EmitOptions &options, llvm::CodeGenFileType type,
                                         llvm::OptimizationLevel level,
                                         const std::function<Error()> &afterLink = {});

} // namespace gc

#endif // GC_LIB_CODEGEN_GROUPEMITTERBASE_H
