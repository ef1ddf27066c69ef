//===- Rules.h - Building blocks of derivative rules ------------*- C++ -*-===//
//
// Rules are written against the decompositions' Emit layer, so that a rule
// reads like its formula; these helpers add the patterns backward passes
// share (zero-filling the positions a view or a pooling skipped). Private
// to lib/Autodiff.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_AUTODIFF_RULES_H
#define GC_LIB_AUTODIFF_RULES_H

#include "gc/Autodiff/Derivatives.h"
#include "gc/Ops/Emit.h"

namespace gc::autodiff {

using decompose::Cmp;
using decompose::Dims;
using decompose::Emit;
using decompose::Number;
using decompose::rankOf;
using decompose::Sizes;
using decompose::sizesOf;
using decompose::typeOf;

Value *zerosLike(Emit &e, Value *x);
/// A 0-dim tensor of x's dtype.
Value *scalarLike(Emit &e, Value *x, double v);
/// g with `before` zeros in front and `after` behind along dim (negative
/// counts crop).
Value *padDim(Emit &e, Value *g, int64_t dim, int64_t before, int64_t after);
/// g with step - 1 zeros between neighbours along dim: what a strided read
/// of the result gives back.
Value *spread(Emit &e, Value *g, int64_t dim, int64_t step);
/// `sizes` with `dims` set to 1 (a reduction's keepdim result).
Sizes keptSizes(SymContext &syms, Sizes sizes, const Dims &dims);
/// The static size of dim `dim` of x.
int64_t staticDim(Value *x, int64_t dim);

} // namespace gc::autodiff

#endif // GC_LIB_AUTODIFF_RULES_H
