//===- ScalarEmitter.h - torch's scalar semantics as LLVM IR -----*- C++ -*-===//
//
// The element-level half of the kernel emitter: dtypes to LLVM types,
// torch's conversions, and every ScalarOp on scalar values, with the
// special cases (NaN propagation, Python division, division by zero) as
// selects, so that the loops around them stay vectorizable.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_CODEGEN_SCALAREMITTER_H
#define GC_LIB_CODEGEN_SCALAREMITTER_H

#include "gc/IR/LoopIR.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <utility>

namespace gc {

/// UInt8 and Bool compare, divide and widen as unsigned.
bool isUnsignedInt(DType t);
/// The value kept in registers: Bool is i1.
llvm::Type *registerType(llvm::LLVMContext &ctx, DType t);
/// The element as stored in memory: Bool is one byte, Float16 and BFloat16
/// are their 16 bits (i16), converted by ScalarEmitter::encode/decode.
llvm::Type *memoryType(llvm::LLVMContext &ctx, DType t);

/// Emits scalar operations at the builder's insertion point. Math functions
/// it calls are declared in `module`: gc_* ones for the caller to link from
/// the math library, the others from libm.
class ScalarEmitter {
public:
  ScalarEmitter(llvm::IRBuilder<> &b, llvm::Module &module) : b_(b), module_(module) {}

  llvm::Type *type(DType t) { return registerType(b_.getContext(), t); }
  llvm::Value *constant(DType t, double v);
  /// torch's conversion between dtypes. Float16 and BFloat16 values live in
  /// float registers unrounded; converting one to another dtype, or a value
  /// to them, rounds it to the half-precision dtype first.
  llvm::Value *convert(llvm::Value *v, DType from, DType to);
  /// Round to BFloat16 with NVPTX's cvt.rn.bf16.f32 (sm_80 and newer)
  /// instead of integer arithmetic: the same bits for every float but NaN,
  /// which becomes the canonical 0x7fff (as torch's CUDA kernels give) and
  /// not the input's top bits, quieted.
  void useNvptxBFloat16Rounding() { nvptxBFloat16_ = true; }
  /// With NVPTX's rounding, two floats as the bfloat16 pair of one 4-byte
  /// word (`low` in its low half: cvt.rn.bf16x2.f32); else null.
  llvm::Value *encodeBFloat16Pair(llvm::Value *low, llvm::Value *high);
  /// The 16 bits of Float16 or BFloat16 t for the float v, rounding to
  /// nearest even (NaN stays NaN); and the float those bits hold.
  llvm::Value *encodeHalf(llvm::Value *v, DType t);
  llvm::Value *decodeHalf(llvm::Value *bits, DType t);
  /// An overloaded intrinsic on the type of args[0].
  llvm::Value *intrinsic(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Value *> args);
  /// A call of a function without side effects, by name.
  llvm::Value *call(llvm::StringRef name, llvm::ArrayRef<llvm::Value *> args);

  /// A comparison of two values of dtype t.
  llvm::Value *compare(ScalarOp op, DType t, llvm::Value *x, llvm::Value *y);
  /// A unary or binary op on floats; null if the op has no float meaning.
  llvm::Value *floatOp(ScalarOp op, llvm::Value *x, llvm::Value *y);
  /// A unary or binary op on integers of dtype t; null if it has none.
  llvm::Value *intOp(ScalarOp op, DType t, llvm::Value *x, llvm::Value *y);
  /// x ** c for the exponents torch itself computes with multiplications
  /// and square roots, giving the same bits; null for other exponents.
  llvm::Value *powByConstant(llvm::Value *x, double c);

  /// Python floor division and modulo (the remainder takes the divisor's
  /// sign, or the dividend's when `divisorSign` is false, as fmod).
  llvm::Value *intFloorDiv(llvm::Value *a, llvm::Value *d, bool isUnsigned);
  llvm::Value *intRemainder(llvm::Value *a, llvm::Value *d, bool isUnsigned, bool divisorSign);

private:
  using Value = llvm::Value;

  Value *math(llvm::StringRef name, llvm::ArrayRef<Value *> args, bool inLibrary);
  Value *special(llvm::StringRef name, llvm::ArrayRef<Value *> args);
  Value *intTruncDiv(Value *a, Value *d, bool isUnsigned);
  Value *floatFloorDiv(Value *a, Value *d);
  Value *floatRemainder(Value *a, Value *d);
  Value *floatExtreme(Value *a, Value *d, bool isMax);
  Value *sigmoid(Value *x);
  Value *sign(Value *x, bool isFloat);
  std::pair<Value *, Value *> safeDivisor(Value *d, bool isUnsigned);

  llvm::IRBuilder<> &b_;
  llvm::Module &module_;
  bool nvptxBFloat16_ = false;
};

} // namespace gc

#endif // GC_LIB_CODEGEN_SCALAREMITTER_H
