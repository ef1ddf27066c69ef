//===- ScalarEval.h - The scalar math, defined once -------------*- C++ -*-===//
//
// What each ScalarOp computes on floating-point values. The reference kernels
// (lib/Interp) and the loop interpreter (lib/Lower) both call this, so that
// the two interpreters that check a compiled model agree by construction;
// the CPU code generator emits the same operations through LLVM and
// MathLibrary.c.
//
//===----------------------------------------------------------------------===//
#ifndef GC_IR_SCALAREVAL_H
#define GC_IR_SCALAREVAL_H

#include "gc/IR/LoopIR.h"

#include <optional>

namespace gc {

/// `op` applied to `x` (and `y` for a binary op) in double precision;
/// comparisons and predicates give 0 or 1. nullopt for the ops that are not
/// defined on floating-point values (the bitwise ones) and for Where.
std::optional<double> evalFloatScalarOp(ScalarOp op, double x, double y = 0);

/// True if `op` gives a bool: comparisons, logical ops and isnan.
bool scalarOpGivesBool(ScalarOp op);

} // namespace gc

#endif // GC_IR_SCALAREVAL_H
