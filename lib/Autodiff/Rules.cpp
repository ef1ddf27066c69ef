//===- Rules.cpp - Building blocks of derivative rules --------------------===//
#include "Rules.h"

namespace gc::autodiff {

Value *zerosLike(Emit &e, Value *x) { return e.fullLike(x, Number::integer(0), typeOf(x).dtype); }

Value *scalarLike(Emit &e, Value *x, double v) {
  return e.scalar(Number::real(v), typeOf(x).dtype);
}

Value *padDim(Emit &e, Value *g, int64_t dim, int64_t before, int64_t after) {
  if (before == 0 && after == 0)
    return g;
  // constant_pad_nd pads the last dims first, in (before, after) pairs.
  Dims pad;
  for (int64_t d = rankOf(g) - 1; d > dim; --d) {
    pad.push_back(0);
    pad.push_back(0);
  }
  pad.push_back(before);
  pad.push_back(after);
  return e.op(ops::aten_constant_pad_nd_default, {{"self", g}, {"pad", pad}});
}

Value *spread(Emit &e, Value *g, int64_t dim, int64_t step) {
  int64_t n = staticDim(g, dim);
  if (step == 1 || n == 0)
    return g;
  // [.., n, ..] -> [.., n, 1, ..] padded to [.., n, step, ..], flattened to
  // n * step, and the zeros after the last element dropped.
  Value *column = e.unsqueeze(g, dim + 1);
  Value *padded = padDim(e, column, dim + 1, 0, step - 1);
  Sizes flat = sizesOf(g);
  flat[dim] = e.syms().constant(n * step);
  return e.slice(e.reshape(padded, flat), dim, 0, (n - 1) * step + 1);
}

Sizes keptSizes(SymContext &syms, Sizes sizes, const Dims &dims) {
  for (int64_t d : dims)
    sizes[d] = syms.constant(1);
  return sizes;
}

int64_t staticDim(Value *x, int64_t dim) {
  return decompose::staticSize(sizesOf(x)[dim], "dim " + std::to_string(dim));
}

} // namespace gc::autodiff
