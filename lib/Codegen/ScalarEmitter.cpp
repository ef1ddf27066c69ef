//===- ScalarEmitter.cpp - torch's scalar semantics as LLVM IR ------------===//
#include "ScalarEmitter.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <string>
#include <vector>

namespace gc {

bool isUnsignedInt(DType t) { return t == DType::UInt8 || t == DType::Bool; }

llvm::Type *registerType(llvm::LLVMContext &ctx, DType t) {
  switch (t) {
  case DType::Bool:
    return llvm::Type::getInt1Ty(ctx);
  case DType::UInt8:
  case DType::Int8:
    return llvm::Type::getInt8Ty(ctx);
  case DType::Int16:
    return llvm::Type::getInt16Ty(ctx);
  case DType::Int32:
    return llvm::Type::getInt32Ty(ctx);
  case DType::Int64:
    return llvm::Type::getInt64Ty(ctx);
  case DType::Float64:
    return llvm::Type::getDoubleTy(ctx);
  default:
    return llvm::Type::getFloatTy(ctx);
  }
}

llvm::Type *memoryType(llvm::LLVMContext &ctx, DType t) {
  if (isHalfPrecision(t))
    return llvm::Type::getInt16Ty(ctx);
  return t == DType::Bool ? llvm::Type::getInt8Ty(ctx) : registerType(ctx, t);
}

/// Float16 goes through LLVM's half (F16C's vcvtph2ps/vcvtps2ph on x86,
/// cvt on PTX). BFloat16 is the top half of a float: widening is a shift,
/// narrowing adds 0x7fff plus the lowest kept bit before shifting, which
/// rounds to nearest even; a NaN keeps its top bits with the quiet bit set.
llvm::Value *ScalarEmitter::encodeHalf(llvm::Value *v, DType t) {
  if (t == DType::Float16)
    return b_.CreateBitCast(b_.CreateFPTrunc(v, b_.getHalfTy()), b_.getInt16Ty());
  if (nvptxBFloat16_)
    return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_f2bf16_rn, {}, {v});
  llvm::Value *bits = b_.CreateBitCast(v, b_.getInt32Ty());
  llvm::Value *high = b_.CreateLShr(bits, 16);
  llvm::Value *lsb = b_.CreateAnd(high, 1);
  llvm::Value *rounded = b_.CreateLShr(b_.CreateAdd(bits, b_.CreateAdd(lsb, b_.getInt32(0x7fff))), 16);
  llvm::Value *quiet = b_.CreateOr(high, 0x40);
  llvm::Value *isNaN = b_.CreateFCmpUNO(v, v);
  return b_.CreateTrunc(b_.CreateSelect(isNaN, quiet, rounded), b_.getInt16Ty());
}

llvm::Value *ScalarEmitter::encodeBFloat16Pair(llvm::Value *low, llvm::Value *high) {
  if (!nvptxBFloat16_)
    return nullptr;
  // The instruction puts its first operand in the high half.
  return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_ff2bf16x2_rn, {}, {high, low});
}

llvm::Value *ScalarEmitter::decodeHalf(llvm::Value *bits, DType t) {
  if (t == DType::Float16)
    return b_.CreateFPExt(b_.CreateBitCast(bits, b_.getHalfTy()), b_.getFloatTy());
  return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(bits, b_.getInt32Ty()), 16),
                          b_.getFloatTy());
}

llvm::Value *ScalarEmitter::constant(DType t, double v) {
  if (isFloatingPoint(t))
    return llvm::ConstantFP::get(type(t), v);
  if (t == DType::Bool)
    return b_.getInt1(v != 0);
  return llvm::ConstantInt::get(type(t), static_cast<uint64_t>(static_cast<int64_t>(v)), true);
}

/// torch's conversion between dtypes.
llvm::Value *ScalarEmitter::convert(llvm::Value *v, DType from, DType to) {
  if (from == to)
    return v;
  // A half-precision value leaves its float register rounded to its dtype.
  if (isHalfPrecision(from))
    return convert(decodeHalf(encodeHalf(v, from), from), DType::Float32, to);
  if (isHalfPrecision(to))
    return decodeHalf(encodeHalf(convert(v, from, DType::Float32), to), to);
  llvm::Type *dst = type(to);
  if (to == DType::Bool) {
    if (isFloatingPoint(from))
      return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
    return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  if (isFloatingPoint(from)) {
    if (isFloatingPoint(to))
      return b_.CreateFPCast(v, dst);
    // Narrow integers go through i32 as C++ does, which is also what
    // packed conversions provide.
    if (to == DType::Int64)
      return b_.CreateFPToSI(v, dst);
    return b_.CreateTrunc(b_.CreateFPToSI(v, b_.getInt32Ty()), dst);
  }
  if (isFloatingPoint(to))
    return isUnsignedInt(from) ? b_.CreateUIToFP(v, dst) : b_.CreateSIToFP(v, dst);
  return b_.CreateIntCast(v, dst, !isUnsignedInt(from));
}

llvm::Value *ScalarEmitter::intrinsic(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Value *> args) {
  return b_.CreateIntrinsic(id, {args[0]->getType()}, args);
}

/// A function of the math library (gc_*) or of libm, by name.
llvm::Value *ScalarEmitter::call(llvm::StringRef name, llvm::ArrayRef<llvm::Value *> args) {
  std::vector<llvm::Type *> params;
  for (llvm::Value *a : args)
    params.push_back(a->getType());
  auto *fnType = llvm::FunctionType::get(args[0]->getType(), params, false);
  llvm::FunctionCallee callee = module_.getOrInsertFunction(name, fnType);
  if (auto *fn = llvm::dyn_cast<llvm::Function>(callee.getCallee()))
    if (fn->isDeclaration()) {
      fn->setDoesNotAccessMemory();
      fn->setDoesNotThrow();
      fn->setWillReturn();
    }
  return b_.CreateCall(callee, args);
}

/// A math function: gc_<name>f / gc_<name> from the math library, or the
/// libm function when `inLibrary` is false.
llvm::Value *ScalarEmitter::math(llvm::StringRef name, llvm::ArrayRef<llvm::Value *> args,
                                 bool inLibrary) {
  bool isFloat = args[0]->getType()->isFloatTy();
  std::string full = (inLibrary ? "gc_" : "") + name.str() + (isFloat ? "f" : "");
  return call(full, args);
}

/// A special function: gc_NAME of the math library, which works in double.
llvm::Value *ScalarEmitter::special(llvm::StringRef name, llvm::ArrayRef<llvm::Value *> args) {
  llvm::Type *type = args[0]->getType();
  std::vector<llvm::Value *> wide;
  for (llvm::Value *a : args)
    wide.push_back(b_.CreateFPExt(a, b_.getDoubleTy()));
  return b_.CreateFPTrunc(call("gc_" + name.str(), wide), type);
}

/// Python floor division; a zero divisor gives a harmless value instead
/// of a trap (torch raises before the kernel runs), and x // -1 is -x so
/// that INT_MIN // -1 cannot trap either.
llvm::Value *ScalarEmitter::intFloorDiv(llvm::Value *a, llvm::Value *d, bool isUnsigned) {
  auto [safe, minusOne] = safeDivisor(d, isUnsigned);
  if (isUnsigned)
    return b_.CreateUDiv(a, safe);
  llvm::Value *q = b_.CreateSDiv(a, safe);
  llvm::Value *r = b_.CreateSRem(a, safe);
  llvm::Value *zero = llvm::ConstantInt::get(a->getType(), 0);
  llvm::Value *adjust =
      b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, d), zero));
  q = b_.CreateSub(q, b_.CreateZExt(adjust, a->getType()));
  return b_.CreateSelect(minusOne, b_.CreateNeg(a), q);
}

/// Remainder with the dividend's sign (truncating) or, for Python's
/// modulo, the divisor's.
llvm::Value *ScalarEmitter::intRemainder(llvm::Value *a, llvm::Value *d, bool isUnsigned,
                                         bool divisorSign) {
  auto [safe, minusOne] = safeDivisor(d, isUnsigned);
  if (isUnsigned)
    return b_.CreateURem(a, safe);
  llvm::Value *r = b_.CreateSRem(a, safe);
  llvm::Value *zero = llvm::ConstantInt::get(a->getType(), 0);
  if (divisorSign) {
    llvm::Value *adjust =
        b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, d), zero));
    r = b_.CreateSelect(adjust, b_.CreateAdd(r, d), r);
  }
  return b_.CreateSelect(minusOne, zero, r);
}

llvm::Value *ScalarEmitter::intTruncDiv(llvm::Value *a, llvm::Value *d, bool isUnsigned) {
  auto [safe, minusOne] = safeDivisor(d, isUnsigned);
  if (isUnsigned)
    return b_.CreateUDiv(a, safe);
  return b_.CreateSelect(minusOne, b_.CreateNeg(a), b_.CreateSDiv(a, safe));
}

/// Python's float floor division, from fmod so that a quotient just below
/// an integer is not rounded up to it.
llvm::Value *ScalarEmitter::floatFloorDiv(llvm::Value *a, llvm::Value *d) {
  llvm::Type *t = a->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
  llvm::Value *mod = b_.CreateFRem(a, d);
  llvm::Value *div = b_.CreateFDiv(b_.CreateFSub(a, mod), d);
  llvm::Value *signsDiffer = b_.CreateXor(b_.CreateFCmpOLT(d, c(0)), b_.CreateFCmpOLT(mod, c(0)));
  llvm::Value *adjust = b_.CreateAnd(b_.CreateFCmpUNE(mod, c(0)), signsDiffer);
  div = b_.CreateSelect(adjust, b_.CreateFSub(div, c(1)), div);
  llvm::Value *floored = intrinsic(llvm::Intrinsic::floor, {div});
  llvm::Value *roundUp = b_.CreateFCmpOGT(b_.CreateFSub(div, floored), c(0.5));
  llvm::Value *result = b_.CreateSelect(roundUp, b_.CreateFAdd(floored, c(1)), floored);
  llvm::Value *signedZero = intrinsic(llvm::Intrinsic::copysign, {c(0), b_.CreateFDiv(a, d)});
  result = b_.CreateSelect(b_.CreateFCmpOEQ(div, c(0)), signedZero, result);
  return b_.CreateSelect(b_.CreateFCmpOEQ(d, c(0)), b_.CreateFDiv(a, d), result);
}

llvm::Value *ScalarEmitter::floatRemainder(llvm::Value *a, llvm::Value *d) {
  llvm::Type *t = a->getType();
  llvm::Value *zero = llvm::ConstantFP::get(t, 0.0);
  llvm::Value *mod = b_.CreateFRem(a, d);
  llvm::Value *signsDiffer = b_.CreateXor(b_.CreateFCmpOLT(d, zero), b_.CreateFCmpOLT(mod, zero));
  llvm::Value *adjust = b_.CreateAnd(b_.CreateFCmpUNE(mod, zero), signsDiffer);
  return b_.CreateSelect(adjust, b_.CreateFAdd(mod, d), mod);
}

/// torch.maximum / minimum on floats: NaN wins.
llvm::Value *ScalarEmitter::floatExtreme(llvm::Value *a, llvm::Value *d, bool isMax) {
  llvm::Value *pick = isMax ? b_.CreateFCmpOGT(a, d) : b_.CreateFCmpOLT(a, d);
  llvm::Value *aWins = b_.CreateOr(b_.CreateFCmpUNO(a, a), pick);
  return b_.CreateSelect(aWins, a, d);
}

llvm::Value *ScalarEmitter::sigmoid(llvm::Value *x) {
  llvm::Type *t = x->getType();
  llvm::Value *one = llvm::ConstantFP::get(t, 1.0);
  return b_.CreateFDiv(one, b_.CreateFAdd(one, math("exp", {b_.CreateFNeg(x)}, true)));
}

llvm::Value *ScalarEmitter::sign(llvm::Value *x, bool isFloat) {
  llvm::Type *t = x->getType();
  llvm::Value *zero = llvm::Constant::getNullValue(t);
  llvm::Value *pos = isFloat ? b_.CreateFCmpOGT(x, zero) : b_.CreateICmpSGT(x, zero);
  llvm::Value *neg = isFloat ? b_.CreateFCmpOLT(x, zero) : b_.CreateICmpSLT(x, zero);
  llvm::Value *one = isFloat ? llvm::ConstantFP::get(t, 1.0) : llvm::ConstantInt::get(t, 1);
  llvm::Value *minusOne =
      isFloat ? llvm::ConstantFP::get(t, -1.0) : llvm::ConstantInt::get(t, -1, true);
  return b_.CreateSelect(pos, one, b_.CreateSelect(neg, minusOne, zero));
}

/// A divisor that cannot trap (1 where d is 0 or -1), and whether d is -1.
std::pair<llvm::Value *, llvm::Value *> ScalarEmitter::safeDivisor(llvm::Value *d,
                                                                   bool isUnsigned) {
  llvm::Value *zero = llvm::ConstantInt::get(d->getType(), 0);
  llvm::Value *one = llvm::ConstantInt::get(d->getType(), 1);
  llvm::Value *minusOne = isUnsigned
                              ? b_.getFalse()
                              : b_.CreateICmpEQ(d, llvm::ConstantInt::get(d->getType(), -1, true));
  llvm::Value *bad = b_.CreateOr(b_.CreateICmpEQ(d, zero), minusOne);
  return {b_.CreateSelect(bad, one, d), minusOne};
}

/// x ** c for the exponents torch itself computes with multiplications
/// and square roots, giving the same bits; null for other exponents.
llvm::Value *ScalarEmitter::powByConstant(llvm::Value *x, double c) {
  llvm::Value *one = llvm::ConstantFP::get(x->getType(), 1.0);
  if (c == 2)
    return b_.CreateFMul(x, x);
  if (c == 3)
    return b_.CreateFMul(b_.CreateFMul(x, x), x);
  if (c == 0.5)
    return intrinsic(llvm::Intrinsic::sqrt, {x});
  if (c == -0.5)
    return b_.CreateFDiv(one, intrinsic(llvm::Intrinsic::sqrt, {x}));
  if (c == -1)
    return b_.CreateFDiv(one, x);
  if (c == -2)
    return b_.CreateFDiv(one, b_.CreateFMul(x, x));
  return nullptr;
}

llvm::Value *ScalarEmitter::compare(ScalarOp sop, DType t, llvm::Value *x, llvm::Value *y) {
  if (isFloatingPoint(t)) {
    llvm::CmpInst::Predicate p = sop == ScalarOp::Eq   ? llvm::CmpInst::FCMP_OEQ
                                 : sop == ScalarOp::Ne ? llvm::CmpInst::FCMP_UNE
                                 : sop == ScalarOp::Lt ? llvm::CmpInst::FCMP_OLT
                                 : sop == ScalarOp::Le ? llvm::CmpInst::FCMP_OLE
                                 : sop == ScalarOp::Gt ? llvm::CmpInst::FCMP_OGT
                                                       : llvm::CmpInst::FCMP_OGE;
    return b_.CreateFCmp(p, x, y);
  }
  bool u = isUnsignedInt(t);
  llvm::CmpInst::Predicate p =
      sop == ScalarOp::Eq   ? llvm::CmpInst::ICMP_EQ
      : sop == ScalarOp::Ne ? llvm::CmpInst::ICMP_NE
      : sop == ScalarOp::Lt ? (u ? llvm::CmpInst::ICMP_ULT : llvm::CmpInst::ICMP_SLT)
      : sop == ScalarOp::Le ? (u ? llvm::CmpInst::ICMP_ULE : llvm::CmpInst::ICMP_SLE)
      : sop == ScalarOp::Gt ? (u ? llvm::CmpInst::ICMP_UGT : llvm::CmpInst::ICMP_SGT)
                            : (u ? llvm::CmpInst::ICMP_UGE : llvm::CmpInst::ICMP_SGE);
  return b_.CreateICmp(p, x, y);
}

llvm::Value *ScalarEmitter::floatOp(ScalarOp sop, llvm::Value *x, llvm::Value *y) {
  llvm::Type *type = x->getType();
  llvm::Value *one = llvm::ConstantFP::get(type, 1.0);
  using I = llvm::Intrinsic::ID;
  using Args = std::vector<llvm::Value *>;
  auto in = [&](I id) { return intrinsic(id, {x}); };
  switch (sop) {
  // The rows of ScalarOps.def that a math function computes.
#define GC_CALL_LIBRARY(NAME, ARITY) return math(NAME, ARITY == 1 ? Args{x} : Args{x, y}, true);
#define GC_CALL_LIBM(NAME, ARITY) return math(NAME, ARITY == 1 ? Args{x} : Args{x, y}, false);
#define GC_CALL_SPECIAL(NAME, ARITY) return special(NAME, ARITY == 1 ? Args{x} : Args{x, y});
#define GC_CALL_EMITTER(NAME, ARITY) break;
#define GC_SCALAR_OP(ID, NAME, ARITY, CPU, EVAL)                                                  \
  case ScalarOp::ID:                                                                              \
    GC_CALL_##CPU(NAME, ARITY)
#include "gc/IR/ScalarOps.def"
#undef GC_SCALAR_OP
#undef GC_CALL_EMITTER
#undef GC_CALL_SPECIAL
#undef GC_CALL_LIBM
#undef GC_CALL_LIBRARY
  }
  // The rest, written out.
  switch (sop) {
  case ScalarOp::Neg:
    return b_.CreateFNeg(x);
  case ScalarOp::Abs:
    return in(llvm::Intrinsic::fabs);
  case ScalarOp::Erf:
    return math("erf", {x}, type->isFloatTy());
  case ScalarOp::Sqrt:
    return in(llvm::Intrinsic::sqrt);
  case ScalarOp::Rsqrt:
    return b_.CreateFDiv(one, in(llvm::Intrinsic::sqrt));
  case ScalarOp::Sigmoid:
    return sigmoid(x);
  case ScalarOp::Reciprocal:
    return b_.CreateFDiv(one, x);
  case ScalarOp::Floor:
    return in(llvm::Intrinsic::floor);
  case ScalarOp::Ceil:
    return in(llvm::Intrinsic::ceil);
  case ScalarOp::Trunc:
    return in(llvm::Intrinsic::trunc);
  case ScalarOp::Round:
    return in(llvm::Intrinsic::roundeven);
  case ScalarOp::Sign:
    return sign(x, true);
  case ScalarOp::Add:
    return b_.CreateFAdd(x, y);
  case ScalarOp::Sub:
    return b_.CreateFSub(x, y);
  case ScalarOp::Mul:
    return b_.CreateFMul(x, y);
  case ScalarOp::Div:
    return b_.CreateFDiv(x, y);
  case ScalarOp::FloorDiv:
    return floatFloorDiv(x, y);
  case ScalarOp::TruncDiv:
    return intrinsic(llvm::Intrinsic::trunc, {b_.CreateFDiv(x, y)});
  case ScalarOp::Remainder:
    return floatRemainder(x, y);
  case ScalarOp::Fmod:
    return b_.CreateFRem(x, y);
  case ScalarOp::Pow:
    return math("pow", {x, y}, type->isFloatTy());
  case ScalarOp::Maximum:
    return floatExtreme(x, y, true);
  case ScalarOp::Minimum:
    return floatExtreme(x, y, false);
  default:
    return nullptr;
  }
}

llvm::Value *ScalarEmitter::intOp(ScalarOp sop, DType t, llvm::Value *x, llvm::Value *y) {
  bool u = isUnsignedInt(t);
  bool isBool = t == DType::Bool;
  llvm::Type *type = x->getType();
  switch (sop) {
  case ScalarOp::Neg:
    return b_.CreateNeg(x);
  case ScalarOp::Abs:
    return u ? x : intrinsic(llvm::Intrinsic::abs, {x, b_.getFalse()});
  case ScalarOp::Floor:
  case ScalarOp::Ceil:
  case ScalarOp::Round:
  case ScalarOp::Trunc:
    return x;
  case ScalarOp::Sign:
    return u ? b_.CreateZExt(b_.CreateICmpNE(x, llvm::Constant::getNullValue(type)), type)
             : sign(x, false);
  case ScalarOp::BitwiseNot:
    return b_.CreateNot(x);
  case ScalarOp::Add:
    return isBool ? b_.CreateOr(x, y) : b_.CreateAdd(x, y);
  case ScalarOp::Sub:
    return isBool ? b_.CreateXor(x, y) : b_.CreateSub(x, y);
  case ScalarOp::Mul:
    return isBool ? b_.CreateAnd(x, y) : b_.CreateMul(x, y);
  case ScalarOp::FloorDiv:
    return intFloorDiv(x, y, u);
  case ScalarOp::TruncDiv:
    return intTruncDiv(x, y, u);
  case ScalarOp::Remainder:
    return intRemainder(x, y, u, true);
  case ScalarOp::Fmod:
    return intRemainder(x, y, u, false);
  case ScalarOp::Pow: {
    auto widen = [&](llvm::Value *v) { return b_.CreateIntCast(v, b_.getInt64Ty(), !u); };
    return b_.CreateTrunc(call("gc_powi64", {widen(x), widen(y)}), type);
  }
  case ScalarOp::Maximum:
    return intrinsic(u ? llvm::Intrinsic::umax : llvm::Intrinsic::smax, {x, y});
  case ScalarOp::Minimum:
    return intrinsic(u ? llvm::Intrinsic::umin : llvm::Intrinsic::smin, {x, y});
  case ScalarOp::BitwiseAnd:
    return b_.CreateAnd(x, y);
  case ScalarOp::BitwiseOr:
    return b_.CreateOr(x, y);
  case ScalarOp::BitwiseXor:
    return b_.CreateXor(x, y);
  case ScalarOp::Gcd: {
    auto widen = [&](llvm::Value *v) { return b_.CreateIntCast(v, b_.getInt64Ty(), !u); };
    return b_.CreateTrunc(call("gc_gcd64", {widen(x), widen(y)}), type);
  }
  default:
    return nullptr;
  }
}

} // namespace gc
