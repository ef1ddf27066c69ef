//===- BodyBuilder.h - Building loop bodies ---------------------*- C++ -*-===//
//
// Appends scalar operations to a Body, reusing an identical earlier
// operation instead of repeating it, and keeps what inlined loaders share
// while one body is built: the ranges of the loop variables (so that index
// expressions are simplified as they are made) and the mask that guards
// every load (cat and padding read their inputs only where they are in
// range).
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_LOWER_BODYBUILDER_H
#define GC_LIB_LOWER_BODYBUILDER_H

#include "gc/IR/IndexSimplify.h"
#include "gc/IR/LoopIR.h"

#include <functional>

namespace gc {

class BodyBuilder {
public:
  BodyBuilder(SymContext &syms, VarRanges ranges) : syms_(syms), ranges_(std::move(ranges)) {}

  SymContext &syms() { return syms_; }
  const VarRanges &ranges() const { return ranges_; }
  const SymExpr *simplify(const SymExpr *e) { return simplifyIndex(syms_, e, ranges_); }

  uint32_t constant(DType dtype, double value);
  uint32_t index(const SymExpr *e);
  uint32_t compute(ScalarOp op, DType dtype, std::vector<uint32_t> operands);
  /// `v` converted to `dtype` (itself if it already has that dtype).
  uint32_t cast(uint32_t v, DType dtype);
  /// buffer[index] under the current mask (0 where masked off). `indirect`
  /// binds t0, t1, ... in `index`, whose ranges are `indirectRanges`.
  uint32_t load(uint32_t buffer, DType dtype, const SymExpr *index,
                std::vector<uint32_t> indirect = {}, const VarRanges &indirectRanges = {});
  DType dtypeOf(uint32_t v) const { return body_.ops[v].dtype; }

  /// The mask loads get; -1 for none. Callers restore the previous one.
  int32_t mask() const { return mask_; }
  void setMask(int32_t m) { mask_ = m; }
  /// The current mask and `m` combined.
  uint32_t andMask(uint32_t m);

  /// The body computing `result`, without operations nothing needs;
  /// `roots` (a scatter's store indices) are kept too and renumbered.
  Body finish(uint32_t result, std::vector<uint32_t> *roots = nullptr) &&;

private:
  uint32_t add(BodyOp op);

  SymContext &syms_;
  VarRanges ranges_;
  Body body_;
  int32_t mask_ = -1;
};

/// Emits `inner` where `cond` holds (loads masked by it) and `otherwise`
/// elsewhere.
uint32_t emitMasked(BodyBuilder &b, uint32_t cond, DType dtype,
                    const std::function<uint32_t()> &inner, uint32_t otherwise);

/// lo <= e < hi, as a Bool body value; either bound may be null.
uint32_t emitInRange(BodyBuilder &b, const SymExpr *e, const SymExpr *lo, const SymExpr *hi);

/// The inclusive range a loop variable with `extent` iterations takes.
SymRange loopVarRange(const SymExpr *extent, const VarRanges &known);

} // namespace gc

#endif // GC_LIB_LOWER_BODYBUILDER_H
