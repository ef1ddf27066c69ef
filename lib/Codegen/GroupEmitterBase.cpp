//===- GroupEmitterBase.cpp - What the CPU and GPU kernel emitters share --===//
#include "GroupEmitterBase.h"

#include "gc/IR/Describe.h"
#include "gc/IR/KernelCode.h"
#include "gc/Support/TimeTrace.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>

#include <optional>
#include <set>

namespace gc {

GroupEmitterBase::GroupEmitterBase(llvm::Module &module, const LoopGraph &graph,
                                   uint32_t groupIndex, std::string_view backend)
    : module_(module), ctx_(module.getContext()), b_(ctx_), scalar_(b_, module), graph_(graph),
      group_(graph.plan.kernels[groupIndex]), groupIndex_(groupIndex), backend_(backend) {}

//===--- The function ----------------------------------------------------===//

Error GroupEmitterBase::beginFunction(llvm::ArrayRef<llvm::Type *> params,
                                      llvm::ArrayRef<const char *> paramNames) {
  auto *fnType = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  if (module_.getFunction(group_.name))
    return makeError() << "kernel '" << group_.name << "': duplicate kernel name";
  fn_ = llvm::Function::Create(fnType, llvm::Function::ExternalLinkage, group_.name, module_);
  fn_->setDoesNotThrow();
  for (unsigned arg : {0u, 1u}) {
    fn_->addParamAttr(arg, llvm::Attribute::NoAlias);
    fn_->addParamAttr(arg, llvm::Attribute::NoCapture);
    fn_->addParamAttr(arg, llvm::Attribute::ReadOnly);
  }
  llvm::Argument *args = fn_->arg_begin();
  for (size_t k = 0; k < paramNames.size(); ++k)
    args[k].setName(paramNames[k]);
  entry_ = llvm::BasicBlock::Create(ctx_, "entry", fn_);
  b_.SetInsertPoint(entry_);
  loadSymbols(&args[1]);
  GC_RETURN_IF_ERROR(prepareBuffers(&args[0]));
  body_ = llvm::BasicBlock::Create(ctx_, "body", fn_);
  b_.SetInsertPoint(body_);
  return Error::success();
}

Error GroupEmitterBase::endFunction() {
  b_.CreateRetVoid();
  // The entry block holds the loads of base pointers and the allocas;
  // it is finished last so that allocas added while emitting stay there.
  b_.SetInsertPoint(entry_);
  b_.CreateBr(body_);
  return std::move(error_);
}

void GroupEmitterBase::fail(const std::string &message) {
  if (error_)
    return;
  ErrorBuilder e;
  e << "kernel '" << group_.name << "'";
  if (node_)
    e << ", " << describeNode(*node_);
  error_ = e << ": " << message;
}

GroupEmitterBase::Value *GroupEmitterBase::slot(llvm::Type *type, const char *name) {
  llvm::IRBuilder<> entry(entry_, entry_->begin());
  return entry.CreateAlloca(type, nullptr, name);
}

void GroupEmitterBase::loadSymbols(Value *symbols) {
  for (size_t j = 0; j < graph_.plan.symbols.size(); ++j) {
    Value *slot = b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), symbols, j);
    vars_[graph_.plan.symbols[j]] = b_.CreateLoad(b_.getInt64Ty(), slot, graph_.plan.symbols[j]);
  }
}

/// Loads the base pointer of every buffer the group touches, from the
/// entry's argument list in kernelBuffers() order, and builds one alias
/// scope per buffer: an access to one buffer is `noalias` with every other
/// buffer except its in-place partners.
Error GroupEmitterBase::prepareBuffers(Value *buffers) {
  for (uint32_t n : group_.nodes)
    if (n >= graph_.nodes.size())
      return makeError() << "kernel '" << group_.name << "': node index " << n << " out of range";
  std::vector<uint32_t> used = kernelBuffers(graph_, group_);
  std::set<std::pair<uint32_t, uint32_t>> mayAlias;
  for (const PlanStep &step : graph_.plan.steps)
    if (step.kind == PlanStep::Kind::Kernel && step.index == groupIndex_)
      for (const InplacePair &pair : step.inplace) {
        mayAlias.insert({pair.output, pair.input});
        mayAlias.insert({pair.input, pair.output});
      }
  llvm::MDBuilder md(ctx_);
  llvm::MDNode *domain = md.createAnonymousAliasScopeDomain(group_.name);
  std::map<uint32_t, llvm::MDNode *> scopes;
  for (size_t arg = 0; arg < used.size(); ++arg) {
    uint32_t buf = used[arg];
    if (buf >= graph_.buffers.size())
      return makeError() << "kernel '" << group_.name << "': buffer index " << buf
                         << " out of range";
    const Buffer &buffer = graph_.buffers[buf];
    Value *slot = b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), buffers, arg);
    base_[buf] = bufferBase(b_.CreateLoad(b_.getPtrTy(), slot, buffer.name));
    scopes[buf] = md.createAnonymousAliasScope(domain, buffer.name);
  }
  for (uint32_t buf : used) {
    std::vector<llvm::Metadata *> others;
    for (uint32_t other : used)
      if (other != buf && !mayAlias.count({buf, other}))
        others.push_back(scopes[other]);
    scopeOf_[buf] = llvm::MDNode::get(ctx_, {scopes[buf]});
    noaliasOf_[buf] = llvm::MDNode::get(ctx_, others);
  }
  return Error::success();
}

void GroupEmitterBase::annotate(llvm::Instruction *access, uint32_t buf, bool parallel) {
  access->setMetadata(llvm::LLVMContext::MD_alias_scope, scopeOf_[buf]);
  access->setMetadata(llvm::LLVMContext::MD_noalias, noaliasOf_[buf]);
  if (accessGroup_ && parallel)
    access->setMetadata(llvm::LLVMContext::MD_access_group, accessGroup_);
}

void GroupEmitterBase::markParallel(llvm::Instruction *latch, llvm::MDNode *group) {
  llvm::MDNode *progress =
      llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.mustprogress")});
  llvm::MDNode *parallel =
      llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.parallel_accesses"), group});
  llvm::MDNode *loopId = llvm::MDNode::getDistinct(ctx_, {nullptr, progress, parallel});
  loopId->replaceOperandWith(0, loopId);
  latch->setMetadata(llvm::LLVMContext::MD_loop, loopId);
}

//===--- Nodes run serially ------------------------------------------------===//

bool GroupEmitterBase::checkNode(const LoopNode &node) {
  if (node.kind != LoopNode::Kind::Pointwise && node.kind != LoopNode::Kind::Reduction)
    fail("only pointwise and reduction nodes can be part of a kernel");
  else if (node.ranges.size() < group_.parallelRanges.size())
    fail("has fewer loops than the kernel's parallel ranges");
  else if (node.body.result >= node.body.ops.size())
    fail("body result out of range");
  else if (!node.storeIndex)
    fail("has no store index");
  else
    return true;
  return false;
}

void GroupEmitterBase::emitSerialNode(const LoopNode &node) {
  if (!checkNode(node))
    return;
  emitOwnLoops(node, group_.parallelRanges.size(), [&] {
    if (node.kind == LoopNode::Kind::Pointwise)
      emitPointwisePoint(node);
    else
      emitSerialReduction(node);
  });
}

void GroupEmitterBase::emitPointwisePoint(const LoopNode &node) {
  Value *v = emitBody(node.body);
  store(node, v, node.body.ops[node.body.result].dtype);
}

void GroupEmitterBase::emitSerialReduction(const LoopNode &node) {
  Accumulator a = beginReduction(node);
  emitReductionLoops(node, 0, [&] {
    accumulate(node, a, emitBody(node.body), nullptr);
    // A scan stores every prefix (its store index uses r0).
    if (node.scan)
      storeReduction(node, a);
  });
  if (!node.scan)
    storeReduction(node, a);
}

//===--- Reductions ------------------------------------------------------===//

GroupEmitterBase::Accumulator GroupEmitterBase::beginReduction(const LoopNode &node) {
  Accumulator a;
  a.kind = node.reduce;
  a.valueType = node.body.ops[node.body.result].dtype;
  if (node.reduce == ReduceKind::Any)
    a.valueType = DType::Bool;
  // torch counts when it sums booleans (and multiplies them as integers).
  if (a.valueType == DType::Bool &&
      (node.reduce == ReduceKind::Sum || node.reduce == ReduceKind::Prod))
    a.valueType = DType::Int64;
  a.type = scalar_.type(a.valueType);
  a.isFloat = isFloatingPoint(a.valueType);
  a.isUnsigned = isUnsignedInt(a.valueType);
  a.isArg = a.kind == ReduceKind::ArgMax || a.kind == ReduceKind::ArgMin;
  a.wantsMax = a.kind == ReduceKind::Max || a.kind == ReduceKind::ArgMax;

  switch (a.kind) {
  case ReduceKind::Sum:
  case ReduceKind::Any:
    a.identity = llvm::Constant::getNullValue(a.type);
    break;
  case ReduceKind::Prod:
    a.identity = a.isFloat ? llvm::ConstantFP::get(a.type, 1.0) : llvm::ConstantInt::get(a.type, 1);
    break;
  default: {
    // The identity of max is the lowest value, of min the highest.
    unsigned bits = a.type->getScalarSizeInBits();
    if (a.isFloat)
      a.identity = llvm::ConstantFP::getInfinity(a.type, a.wantsMax);
    else if (a.isUnsigned)
      a.identity = llvm::ConstantInt::get(a.type, a.wantsMax ? llvm::APInt::getMinValue(bits)
                                                             : llvm::APInt::getMaxValue(bits));
    else
      a.identity =
          llvm::ConstantInt::get(a.type, a.wantsMax ? llvm::APInt::getSignedMinValue(bits)
                                                    : llvm::APInt::getSignedMaxValue(bits));
  }
  }
  a.value = slot(a.type, "acc");
  a.position = a.isArg ? slot(b_.getInt64Ty(), "acc.pos") : nullptr;
  a.sawNaN = a.isFloat && !a.isArg ? slot(b_.getInt1Ty(), "acc.nan") : nullptr;
  b_.CreateStore(a.identity, a.value);
  if (a.position)
    b_.CreateStore(b_.getInt64(0), a.position);
  if (a.sawNaN)
    b_.CreateStore(b_.getFalse(), a.sawNaN);
  return a;
}

void GroupEmitterBase::accumulate(const LoopNode &node, const Accumulator &a, Value *v,
                                  Value *position) {
  v = scalar_.convert(v, node.body.ops[node.body.result].dtype, a.valueType);
  Value *cur = b_.CreateLoad(a.type, a.value);
  if (a.isArg)
    return combineArg(node, v, cur, a, position);
  b_.CreateStore(combine(a.kind, cur, v, a.isFloat, a.isUnsigned), a.value);
  if (a.tracksNaN()) {
    Value *seen = b_.CreateLoad(b_.getInt1Ty(), a.sawNaN);
    b_.CreateStore(b_.CreateOr(seen, b_.CreateFCmpUNO(v, v)), a.sawNaN);
  }
}

GroupEmitterBase::Value *GroupEmitterBase::reducedValue(const Accumulator &a) {
  Value *result = b_.CreateLoad(a.type, a.value);
  if (a.tracksNaN())
    result = b_.CreateSelect(b_.CreateLoad(b_.getInt1Ty(), a.sawNaN),
                             llvm::ConstantFP::getNaN(a.type), result);
  return result;
}

void GroupEmitterBase::storeReduction(const LoopNode &node, const Accumulator &a) {
  if (a.isArg)
    return store(node, b_.CreateLoad(b_.getInt64Ty(), a.position), DType::Int64);
  store(node, reducedValue(a), a.valueType);
}

namespace {
llvm::Value *withFlags(llvm::Value *v, llvm::FastMathFlags flags) {
  if (auto *inst = llvm::dyn_cast<llvm::Instruction>(v))
    inst->setFastMathFlags(flags);
  return v;
}
} // namespace

GroupEmitterBase::Value *GroupEmitterBase::combine(ReduceKind kind, Value *acc, Value *v,
                                                   bool isFloat, bool isUnsigned) {
  llvm::FastMathFlags reassoc;
  reassoc.setAllowReassoc();
  reassoc.setNoSignedZeros();
  reassoc.setAllowContract();
  switch (kind) {
  case ReduceKind::Sum:
    if (isFloat)
      return withFlags(b_.CreateFAdd(acc, v), reassoc);
    return b_.CreateAdd(acc, v);
  case ReduceKind::Prod:
    if (isFloat)
      return withFlags(b_.CreateFMul(acc, v), reassoc);
    return b_.CreateMul(acc, v);
  case ReduceKind::Any:
    return b_.CreateOr(acc, v);
  default:
    break;
  }
  bool isMax = kind == ReduceKind::Max;
  if (isFloat) {
    // maxnum ignores NaN; the NaN flag kept beside the accumulator restores
    // torch's propagation, which lets the vectorizer use a min/max
    // reduction (nnan here only makes the accumulator poison after a
    // NaN, and the flag then selects NaN instead).
    llvm::FastMathFlags flags;
    flags.setNoNaNs();
    flags.setNoSignedZeros();
    return withFlags(
        scalar_.intrinsic(isMax ? llvm::Intrinsic::maxnum : llvm::Intrinsic::minnum, {acc, v}),
        flags);
  }
  llvm::Intrinsic::ID id = isUnsigned ? (isMax ? llvm::Intrinsic::umax : llvm::Intrinsic::umin)
                                      : (isMax ? llvm::Intrinsic::smax : llvm::Intrinsic::smin);
  return scalar_.intrinsic(id, {acc, v});
}

/// ArgMax/ArgMin: the first extreme value wins; NaN counts as extreme.
void GroupEmitterBase::combineArg(const LoopNode &node, Value *v, Value *cur, const Accumulator &a,
                                  Value *position) {
  Value *better;
  if (a.isFloat) {
    better = a.wantsMax ? b_.CreateFCmpOGT(v, cur) : b_.CreateFCmpOLT(v, cur);
    Value *newNaN = b_.CreateAnd(b_.CreateFCmpUNO(v, v), b_.CreateFCmpORD(cur, cur));
    better = b_.CreateOr(better, newNaN);
  } else if (a.isUnsigned) {
    better = a.wantsMax ? b_.CreateICmpUGT(v, cur) : b_.CreateICmpULT(v, cur);
  } else {
    better = a.wantsMax ? b_.CreateICmpSGT(v, cur) : b_.CreateICmpSLT(v, cur);
  }
  Value *pos = position;
  if (!pos) {
    // The position in the flattened reduction space, r0 outermost.
    pos = b_.getInt64(0);
    for (size_t k = 0; k < node.reductionRanges.size(); ++k) {
      pos = b_.CreateMul(pos, expr(node.reductionRanges[k]), "", true, true);
      pos = b_.CreateAdd(pos, vars_["r" + std::to_string(k)], "", true, true);
    }
  }
  b_.CreateStore(b_.CreateSelect(better, v, cur), a.value);
  Value *old = b_.CreateLoad(b_.getInt64Ty(), a.position);
  b_.CreateStore(b_.CreateSelect(better, pos, old), a.position);
}

void GroupEmitterBase::store(const LoopNode &node, Value *v, DType from) {
  storeAt(node, v, from, storeIndexOf(node));
}

GroupEmitterBase::Value *GroupEmitterBase::storeIndexOf(const LoopNode &node) {
  for (size_t k = 0; k < node.storeIndirect.size(); ++k) {
    uint32_t source = node.storeIndirect[k];
    if (source >= bodyValues_.size() || !bodyValues_[source]) {
      fail("indirect store index refers to no body value");
      return b_.getInt64(0);
    }
    vars_["t" + std::to_string(k)] =
        scalar_.convert(bodyValues_[source], node.body.ops[source].dtype, DType::Int64);
  }
  Value *index = expr(node.storeIndex);
  for (size_t k = 0; k < node.storeIndirect.size(); ++k)
    vars_.erase("t" + std::to_string(k));
  return index;
}

GroupEmitterBase::Value *GroupEmitterBase::elementAddress(uint32_t buf, Value *index) {
  return b_.CreateInBoundsGEP(memoryType(ctx_, graph_.buffers[buf].dtype), base_[buf], index);
}

GroupEmitterBase::Value *GroupEmitterBase::loadElement(const BodyOp &op, Value *index) {
  llvm::LoadInst *load =
      b_.CreateLoad(memoryType(ctx_, graph_.buffers[op.buffer].dtype), elementAddress(op.buffer, index));
  annotate(load, op.buffer);
  return load;
}

GroupEmitterBase::Value *GroupEmitterBase::halfSource(Value *v, DType from, DType to) {
  // A value of the stored dtype is that float already, unrounded.
  return from == to ? v : scalar_.convert(v, from, DType::Float32);
}

GroupEmitterBase::Value *GroupEmitterBase::memoryValue(const LoopNode &node, Value *v, DType from) {
  DType to = graph_.buffers[node.output].dtype;
  v = isHalfPrecision(to) ? scalar_.encodeHalf(halfSource(v, from, to), to)
                          : scalar_.convert(v, from, to);
  return to == DType::Bool ? b_.CreateZExt(v, b_.getInt8Ty()) : v;
}

void GroupEmitterBase::storeAt(const LoopNode &node, Value *v, DType from, Value *index) {
  v = memoryValue(node, v, from);
  if (!scatters(node)) {
    annotate(b_.CreateStore(v, elementAddress(node.output, index)), node.output);
    return;
  }
  // A loaded index may lie outside the buffer: such a store is dropped
  // rather than written past the buffer (the loop interpreter reports it).
  Value *elements = b_.getInt64(1);
  for (const SymExpr *size : graph_.buffers[node.output].sizes)
    elements = b_.CreateMul(elements, expr(size));
  Value *inside = b_.CreateICmpULT(index, elements);
  auto *then = llvm::BasicBlock::Create(ctx_, "scatter.store", fn_);
  auto *after = llvm::BasicBlock::Create(ctx_, "scatter.next", fn_);
  b_.CreateCondBr(inside, then, after);
  b_.SetInsertPoint(then);
  Value *address = elementAddress(node.output, index);
  if (node.combine == StoreCombine::None)
    annotate(b_.CreateStore(v, address), node.output, false);
  else
    combineStore(node, address, v);
  b_.CreateBr(after);
  b_.SetInsertPoint(after);
}

void GroupEmitterBase::combineStore(const LoopNode &node, Value *address, Value *v) {
  DType dtype = graph_.buffers[node.output].dtype;
  llvm::LoadInst *old = b_.CreateLoad(memoryType(ctx_, dtype), address);
  annotate(old, node.output, false);
  annotate(b_.CreateStore(combineStored(node.combine, dtype, old, v), address), node.output,
           false);
}

GroupEmitterBase::Value *GroupEmitterBase::combineStored(StoreCombine combine, DType dtype,
                                                         Value *old, Value *v) {
  // Half precision: both are the 16 bits as stored (v rounded already);
  // they combine in float32 and the result rounds once.
  if (isHalfPrecision(dtype) && combine != StoreCombine::None)
    return scalar_.encodeHalf(combineStored(combine, DType::Float32, scalar_.decodeHalf(old, dtype),
                                            scalar_.decodeHalf(v, dtype)),
                              dtype);
  bool isFloat = isFloatingPoint(dtype);
  if (dtype == DType::Bool)
    return combine == StoreCombine::Add || combine == StoreCombine::Max ? b_.CreateOr(old, v)
                                                                        : b_.CreateAnd(old, v);
  switch (combine) {
  case StoreCombine::Add:
    return isFloat ? b_.CreateFAdd(old, v) : b_.CreateAdd(old, v);
  case StoreCombine::Mul:
    return isFloat ? b_.CreateFMul(old, v) : b_.CreateMul(old, v);
  case StoreCombine::Max:
  case StoreCombine::Min: {
    bool isMax = combine == StoreCombine::Max;
    if (isFloat)
      return scalar_.floatOp(isMax ? ScalarOp::Maximum : ScalarOp::Minimum, old, v);
    bool isUnsigned = isUnsignedInt(dtype);
    llvm::Intrinsic::ID id = isUnsigned
                                 ? (isMax ? llvm::Intrinsic::umax : llvm::Intrinsic::umin)
                                 : (isMax ? llvm::Intrinsic::smax : llvm::Intrinsic::smin);
    return scalar_.intrinsic(id, {old, v});
  }
  case StoreCombine::None:
    break;
  }
  return v;
}

//===--- Index expressions ---------------------------------------------===//

GroupEmitterBase::Value *GroupEmitterBase::expr(const SymExpr *e) {
  switch (e->kind()) {
  case SymExpr::Kind::Const:
    return b_.getInt64(static_cast<uint64_t>(e->constant()));
  case SymExpr::Kind::Symbol: {
    auto it = vars_.find(e->symbolName());
    if (it == vars_.end()) {
      fail("index uses '" + e->symbolName() + "', which is not bound here");
      return b_.getInt64(0);
    }
    return it->second;
  }
  case SymExpr::Kind::Add:
  case SymExpr::Kind::Mul:
  case SymExpr::Kind::Min:
  case SymExpr::Kind::Max: {
    auto ops = e->operands();
    Value *acc = expr(ops[0]);
    for (size_t k = 1; k < ops.size(); ++k) {
      Value *v = expr(ops[k]);
      switch (e->kind()) {
      case SymExpr::Kind::Add:
        acc = b_.CreateAdd(acc, v, "", false, true);
        break;
      case SymExpr::Kind::Mul:
        acc = b_.CreateMul(acc, v, "", false, true);
        break;
      case SymExpr::Kind::Min:
        acc = scalar_.intrinsic(llvm::Intrinsic::smin, {acc, v});
        break;
      default:
        acc = scalar_.intrinsic(llvm::Intrinsic::smax, {acc, v});
        break;
      }
    }
    return acc;
  }
  case SymExpr::Kind::FloorDiv:
  case SymExpr::Kind::Mod:
    return indexDivision(e);
  }
  return b_.getInt64(0);
}

GroupEmitterBase::Value *GroupEmitterBase::indexDivision(const SymExpr *e) {
  Value *x = expr(e->operands()[0]), *d = expr(e->operands()[1]);
  if (e->kind() == SymExpr::Kind::FloorDiv)
    return scalar_.intFloorDiv(x, d, false);
  return scalar_.intRemainder(x, d, false, true);
}

//===--- Bodies ---------------------------------------------------------===//

GroupEmitterBase::Value *GroupEmitterBase::emitBody(const Body &body) {
  std::vector<Value *> values(body.ops.size(), nullptr);
  for (size_t k = 0; k < body.ops.size(); ++k) {
    const BodyOp &op = body.ops[k];
    for (uint32_t operand : op.operands)
      if (operand >= k) {
        fail("value %" + std::to_string(k) + " uses a later value");
        return scalar_.constant(op.dtype, 0);
      }
    values[k] = emitOp(body, op, values);
  }
  bodyValues_ = values;
  return values[body.result];
}

/// The operand's value converted to `to`.
GroupEmitterBase::Value *GroupEmitterBase::operand(const Body &body,
                                                   const std::vector<Value *> &values,
                                                   uint32_t index, DType to) {
  const BodyOp &op = body.ops[index];
  // A half-precision element loaded as itself is exact in its float
  // register: converting it to another dtype need not round it first.
  bool exact = op.kind == BodyOp::Kind::Load && op.mask < 0 && isHalfPrecision(op.dtype) &&
               op.buffer < graph_.buffers.size() && graph_.buffers[op.buffer].dtype == op.dtype;
  return scalar_.convert(values[index], exact && to != op.dtype ? DType::Float32 : op.dtype, to);
}

GroupEmitterBase::Value *GroupEmitterBase::emitOp(const Body &body, const BodyOp &op,
                                                  const std::vector<Value *> &values) {
  switch (op.kind) {
  case BodyOp::Kind::Const:
    return scalar_.constant(op.dtype, op.constant);
  case BodyOp::Kind::Index:
    if (!op.index) {
      fail("index value without an expression");
      return scalar_.constant(op.dtype, 0);
    }
    return scalar_.convert(expr(op.index), DType::Int64, op.dtype);
  case BodyOp::Kind::Cast:
    if (op.operands.size() != 1) {
      fail("cast needs one operand");
      return scalar_.constant(op.dtype, 0);
    }
    return operand(body, values, op.operands[0], op.dtype);
  case BodyOp::Kind::Load:
    return emitLoad(body, op, values);
  case BodyOp::Kind::Compute:
    break;
  }
  if (op.operands.size() != scalarOpArity(op.op)) {
    fail("operation " + std::string(scalarOpName(op.op)) + " has the wrong operand count");
    return scalar_.constant(op.dtype, 0);
  }
  return emitCompute(body, op, values);
}

namespace {

/// c where `term` is c * `name` with a constant c (1 for `name` itself),
/// else 0.
int64_t coefficientOf(const SymExpr *term, const std::string &name) {
  if (term->isSymbol())
    return term->symbolName() == name ? 1 : 0;
  auto ops = term->operands();
  if (term->kind() == SymExpr::Kind::Mul && ops.size() == 2 && ops[0]->isConst() &&
      ops[1]->isSymbol() && ops[1]->symbolName() == name)
    return ops[0]->constant();
  return 0;
}

/// The elements from a buffer's first to its last, plus one, when its sizes
/// and strides are static.
std::optional<int64_t> staticExtent(const Buffer &b) {
  int64_t extent = 1;
  for (size_t d = 0; d < b.sizes.size(); ++d) {
    if (!b.sizes[d]->isConst() || (!b.strides.empty() && !b.strides[d]->isConst()))
      return std::nullopt;
    int64_t size = b.sizes[d]->constant();
    if (size <= 0)
      return 0;
    if (b.strides.empty())
      extent *= size;
    else
      extent += (size - 1) * b.strides[d]->constant();
  }
  return extent;
}

} // namespace

GroupEmitterBase::Value *GroupEmitterBase::maskedIndex(const SymExpr *index, uint32_t buffer,
                                                       Value *mask) {
  // Where the index is c * v plus a rest without v, v being the node's last
  // loop variable (the loop the vectorizer widens), and c * v alone stays in
  // the buffer, masked-off points read at c * v: along v the address stays
  // consecutive, so a mask the same for a whole vector (a pooling window's
  // row and column tests) leaves one vector load. Else they read element 0.
  if (node_ && !node_->ranges.empty() && index->kind() == SymExpr::Kind::Add) {
    size_t last = node_->ranges.size() - 1;
    std::string name = "i" + std::to_string(last);
    const SymExpr *range = node_->ranges[last];
    auto terms = index->operands();
    std::optional<size_t> at;
    int64_t coefficient = 0;
    bool alone = true;
    for (size_t k = 0; k < terms.size(); ++k) {
      if (int64_t c = coefficientOf(terms[k], name); c > 0 && !at) {
        at = k;
        coefficient = c;
      } else if (mentions(terms[k], name)) {
        alone = false;
      }
    }
    std::optional<int64_t> extent = staticExtent(graph_.buffers[buffer]);
    if (at && alone && range->isConst() && extent &&
        coefficient * (range->constant() - 1) < *extent) {
      Value *rest = nullptr;
      for (size_t k = 0; k < terms.size(); ++k)
        if (k != *at) {
          Value *v = expr(terms[k]);
          rest = rest ? b_.CreateAdd(rest, v, "", false, true) : v;
        }
      return b_.CreateAdd(expr(terms[*at]), b_.CreateSelect(mask, rest, b_.getInt64(0)), "",
                          false, true);
    }
  }
  // Masked-off points read element 0, which exists, so the load needs no
  // branch and the loop stays vectorizable.
  return b_.CreateSelect(mask, expr(index), b_.getInt64(0));
}

GroupEmitterBase::Value *GroupEmitterBase::emitLoad(const Body &body, const BodyOp &op,
                                                    const std::vector<Value *> &values) {
  if (!op.index) {
    fail("load without an index");
    return scalar_.constant(op.dtype, 0);
  }
  Value *mask = nullptr;
  if (op.mask >= 0) {
    if (static_cast<size_t>(op.mask) >= values.size() || !values[op.mask]) {
      fail("load mask refers to a later value");
      return scalar_.constant(op.dtype, 0);
    }
    mask = operand(body, values, op.mask, DType::Bool);
  }
  for (size_t k = 0; k < op.indirect.size(); ++k) {
    uint32_t source = op.indirect[k];
    if (source >= values.size() || !values[source]) {
      fail("indirect index refers to a later value");
      return scalar_.constant(op.dtype, 0);
    }
    vars_["t" + std::to_string(k)] = operand(body, values, source, DType::Int64);
  }
  Value *index = mask ? maskedIndex(op.index, op.buffer, mask) : expr(op.index);
  for (size_t k = 0; k < op.indirect.size(); ++k)
    vars_.erase("t" + std::to_string(k));
  DType stored = graph_.buffers[op.buffer].dtype;
  Value *v = loadElement(op, index);
  if (stored == DType::Bool)
    v = b_.CreateICmpNE(v, b_.getInt8(0));
  if (isHalfPrecision(stored)) {
    // The loaded value is exact in float32: nothing to round.
    v = scalar_.decodeHalf(v, stored);
    stored = stored == op.dtype ? stored : DType::Float32;
  }
  v = scalar_.convert(v, stored, op.dtype);
  if (mask)
    v = b_.CreateSelect(mask, v, scalar_.constant(op.dtype, op.constant));
  return v;
}

GroupEmitterBase::Value *GroupEmitterBase::emitCompute(const Body &body, const BodyOp &op,
                                                       const std::vector<Value *> &values) {
  ScalarOp sop = op.op;
  DType t = op.dtype;
  auto arg = [&](size_t k, DType to) { return operand(body, values, op.operands[k], to); };
  switch (sop) {
  case ScalarOp::IsNan: {
    DType from = body.ops[op.operands[0]].dtype;
    Value *x = values[op.operands[0]];
    Value *nan = isFloatingPoint(from) ? b_.CreateFCmpUNO(x, x) : b_.getFalse();
    return scalar_.convert(nan, DType::Bool, t);
  }
  case ScalarOp::Eq:
  case ScalarOp::Ne:
  case ScalarOp::Lt:
  case ScalarOp::Le:
  case ScalarOp::Gt:
  case ScalarOp::Ge:
    return scalar_.convert(compare(body, op, values), DType::Bool, t);
  case ScalarOp::LogicalNot:
    return scalar_.convert(b_.CreateNot(arg(0, DType::Bool)), DType::Bool, t);
  case ScalarOp::LogicalAnd:
    return scalar_.convert(b_.CreateAnd(arg(0, DType::Bool), arg(1, DType::Bool)), DType::Bool, t);
  case ScalarOp::LogicalOr:
    return scalar_.convert(b_.CreateOr(arg(0, DType::Bool), arg(1, DType::Bool)), DType::Bool, t);
  case ScalarOp::Where:
    return b_.CreateSelect(arg(0, DType::Bool), arg(1, t), arg(2, t));
  default:
    break;
  }
  unsigned arity = scalarOpArity(sop);
  Value *x = arg(0, t);
  Value *y = arity > 1 ? arg(1, t) : nullptr;
  Value *result = nullptr;
  if (isFloatingPoint(t)) {
    const BodyOp &exponent = body.ops[op.operands[arity - 1]];
    if (sop == ScalarOp::Pow && exponent.kind == BodyOp::Kind::Const)
      result = scalar_.powByConstant(x, exponent.constant);
    if (!result)
      result = scalar_.floatOp(sop, x, y);
  } else {
    result = scalar_.intOp(sop, t, x, y);
  }
  if (!result) {
    fail("operation " + std::string(scalarOpName(sop)) + " is not defined on " +
         std::string(dtypeName(t)) + " values");
    return x;
  }
  return result;
}

/// Mixed operands compare at the wider of the two kinds.
GroupEmitterBase::Value *GroupEmitterBase::compare(const Body &body, const BodyOp &op,
                                                   const std::vector<Value *> &values) {
  DType t = body.ops[op.operands[0]].dtype;
  DType other = body.ops[op.operands[1]].dtype;
  if (isFloatingPoint(other) && (!isFloatingPoint(t) || other == DType::Float64))
    t = other;
  else if (!isFloatingPoint(t) && !isFloatingPoint(other) && dtypeSize(other) > dtypeSize(t))
    t = other;
  return scalar_.compare(op.op, t, operand(body, values, op.operands[0], t),
                         operand(body, values, op.operands[1], t));
}

//===--- Whole modules ------------------------------------------------------===//

Error linkMathLibrary(llvm::Module &module, llvm::StringRef bitcode) {
  std::set<std::string> wanted;
  for (const llvm::Function &fn : module)
    if (fn.isDeclaration() && fn.getName().startswith("gc_"))
      wanted.insert(fn.getName().str());
  if (wanted.empty())
    return Error::success();
  llvm::MemoryBufferRef bytes(bitcode, "MathLibrary");
  auto library = llvm::parseBitcodeFile(bytes, module.getContext());
  if (!library)
    return makeError() << "cannot read the embedded math library: "
                       << llvm::toString(library.takeError());
  (*library)->setTargetTriple(module.getTargetTriple());
  (*library)->setDataLayout(module.getDataLayout());
  if (llvm::Linker::linkModules(module, std::move(*library), llvm::Linker::LinkOnlyNeeded))
    return makeError() << "cannot link the math library into the kernels";
  for (llvm::Function &fn : module) {
    if (fn.isDeclaration() || !fn.getName().startswith("gc_"))
      continue;
    fn.setLinkage(llvm::GlobalValue::InternalLinkage);
    fn.removeFnAttr(llvm::Attribute::NoInline);
    fn.removeFnAttr(llvm::Attribute::OptimizeNone);
    fn.addFnAttr(llvm::Attribute::AlwaysInline);
  }
  for (const std::string &name : wanted)
    if (module.getFunction(name)->isDeclaration())
      return makeError() << "the math library has no function '" << name << "'";
  return Error::success();
}

/// With AVX-512 the kernels use full 512-bit vectors: LLVM's default of
/// 256 bits guards against clock throttling on old server parts, which
/// matters less for the short, math-heavy loops of a kernel than the width.
void setTargetAttributes(llvm::Module &module, const llvm::TargetMachine &machine) {
  bool avx512 =
      machine.getTargetTriple().isX86() && machine.getMCSubtargetInfo()->checkFeatures("+avx512f");
  for (llvm::Function &fn : module) {
    if (fn.isDeclaration())
      continue;
    fn.addFnAttr("target-cpu", machine.getTargetCPU());
    fn.addFnAttr("target-features", machine.getTargetFeatureString());
    fn.removeFnAttr("tune-cpu");
    if (avx512)
      fn.addFnAttr("prefer-vector-width", "512");
  }
}

Error verifyKernelModule(const llvm::Module &module, const std::string &graphName) {
  std::string problems;
  llvm::raw_string_ostream problemStream(problems);
  if (llvm::verifyModule(module, &problemStream))
    return makeError() << "internal error: invalid LLVM IR for graph '" << graphName
                       << "': " << problemStream.str();
  return Error::success();
}

void optimize(llvm::Module &module, llvm::TargetMachine &machine, llvm::OptimizationLevel level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder builder(&machine, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager passes = builder.buildPerModuleDefaultPipeline(level);
  passes.run(module, mam);
}

std::string printModule(const llvm::Module &module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  return text;
}

std::unique_ptr<llvm::Module> newKernelModule(llvm::LLVMContext &ctx, const std::string &graph,
                                              const llvm::TargetMachine &machine) {
  auto module = std::make_unique<llvm::Module>(graph.empty() ? "kernels" : graph, ctx);
  module->setSourceFileName(module->getModuleIdentifier());
  module->setTargetTriple(machine.getTargetTriple().str());
  module->setDataLayout(machine.createDataLayout());
  return module;
}

Expected<std::string> finishKernelModule(llvm::Module &module, llvm::TargetMachine &machine,
                                         llvm::StringRef bitcode, const std::string &graphName,
                                         const EmitOptions &options, llvm::CodeGenFileType type,
                                         llvm::OptimizationLevel level,
                                         const std::function<Error()> &afterLink) {
  std::optional<TraceScope> link(std::in_place, options.trace, "link math library", "llvm");
  GC_RETURN_IF_ERROR(linkMathLibrary(module, bitcode));
  link.reset();
  if (afterLink)
    GC_RETURN_IF_ERROR(afterLink());
  setTargetAttributes(module, machine);
  GC_RETURN_IF_ERROR(verifyKernelModule(module, graphName));
  if (options.llvmIR)
    *options.llvmIR = printModule(module);
  {
    TraceScope scope(options.trace, "optimize", "llvm");
    optimize(module, machine, level);
  }
  if (options.optimizedLLVMIR)
    *options.optimizedLLVMIR = printModule(module);
  TraceScope scope(options.trace, "machine code", "llvm");
  llvm::SmallVector<char, 0> bytes;
  llvm::raw_svector_ostream stream(bytes);
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, stream, nullptr, type))
    return makeError() << "the target '" << options.target << "' cannot emit "
                       << (type == llvm::CGFT_ObjectFile ? "object files" : "assembly");
  codegen.run(module);
  return std::string(bytes.begin(), bytes.end());
}

} // namespace gc
