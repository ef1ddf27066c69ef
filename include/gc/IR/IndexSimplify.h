//===- IndexSimplify.h - Range-aware index expression rewriting --*- C++ -*-===//
//
// SymContext builds expressions in canonical form but knows nothing of the
// values a loop variable takes. Index expressions over loop variables can be
// simplified much further once their ranges are known: with 0 <= i1 < 64,
// (64*i0 + i1) // 64 is i0 and (64*i0 + i1) % 64 is i1. Lowering a reshape of
// a permuted view produces exactly such expressions; the scheduler needs
// their affine form to pick loop orders and collapse loops.
//
//===----------------------------------------------------------------------===//
#ifndef GC_IR_INDEXSIMPLIFY_H
#define GC_IR_INDEXSIMPLIFY_H

#include "gc/IR/SymExpr.h"

#include <map>
#include <optional>
#include <string>

namespace gc {

/// The inclusive range each variable (loop variables, and size symbols from
/// the module) takes. A variable not listed has [0, kUnbounded].
using VarRanges = std::map<std::string, SymRange>;

/// Conservative bounds of `e` given the ranges, or nullopt if unbounded.
std::optional<SymRange> boundsOf(const SymExpr *e, const VarRanges &ranges);

/// Loop variables whose extent is an expression: 0 <= var < extent. Numeric
/// ranges cannot tell that i0 < s0 in a loop over s0 when s0 is a symbol;
/// the extent can.
using VarExtents = std::map<std::string, const SymExpr *>;

/// Rewrites `e` into an equal expression (for every assignment within the
/// ranges and extents) with fewer FloorDiv/Mod/Min/Max nodes: x // d and
/// x % d are removed or split when the bounds of x's terms allow, min/max
/// are decided when the bounds of their operands do not overlap.
const SymExpr *simplifyIndex(SymContext &ctx, const SymExpr *e,
                             const VarRanges &ranges,
                             const VarExtents &extents = {});

/// If `e` is affine in `var` (e = c*var + rest, rest free of var), c (the
/// constant 0 if var does not occur); otherwise null. c may be symbolic.
const SymExpr *affineCoefficient(SymContext &ctx, const SymExpr *e,
                                 const std::string &var);

/// `e` with each symbol named in `values` replaced.
const SymExpr *substitute(SymContext &ctx, const SymExpr *e,
                          const std::map<std::string, const SymExpr *> &values);

} // namespace gc

#endif // GC_IR_INDEXSIMPLIFY_H
