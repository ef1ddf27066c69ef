//===- Reduction.cpp - Derivatives of reductions, scans and sorts ---------===//
#include "Rules.h"

#include "gc/Ops/ShapeInference.h"

namespace gc {

namespace {

using namespace autodiff;

Value *self(DerivativeContext &ctx) { return ctx.value("self"); }
InputGrads selfGrad(Value *g) { return InputGrads().set("self", g); }

Dims reducedDims(DerivativeContext &ctx, Value *x) {
  std::optional<Dims> dims;
  if (ctx.has("dim"))
    dims = ctx.ints("dim");
  return decompose::wrapDims(dims, rankOf(x));
}

/// g with the reduced dims back as size 1.
Value *keptGrad(DerivativeContext &ctx, Emit &e, Value *g, Value *x, const Dims &dims) {
  if (ctx.boolean("keepdim", false))
    return g;
  return e.reshape(g, keptSizes(e.syms(), sizesOf(x), dims));
}

InputGrads dSum(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  return selfGrad(e.expand(keptGrad(ctx, e, ctx.grad(), x, reducedDims(ctx, x)), sizesOf(x)));
}

/// The gradient goes to the positions equal to the extremum, split evenly
/// between ties.
InputGrads dAmax(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Dims dims = reducedDims(ctx, x);
  Value *y = keptGrad(ctx, e, ctx.result(), x, dims);
  Value *g = keptGrad(ctx, e, ctx.grad(), x, dims);
  Value *hits = e.cast(e.compare(Cmp::Eq, x, y), typeOf(g).dtype);
  return selfGrad(e.mul(e.div(g, e.sum(hits, dims, true)), hits));
}

/// Each prefix sum reads x_i for every later position: reversed cumsum.
InputGrads dCumsum(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx), *g = ctx.grad();
  if (rankOf(x) == 0)
    return selfGrad(g);
  int64_t dim = wrapDimension(ctx.integer("dim"), rankOf(x));
  auto flip = [&](Value *v) {
    return e.op(ops::aten_flip_default, {{"self", v}, {"dims", Dims{dim}}});
  };
  return selfGrad(flip(e.op(ops::aten_cumsum_default, {{"self", flip(g)}, {"dim", dim}})));
}

/// Each x_i gets g times the product of the others, taken directly (a
/// division by x_i would fail at zeros): row i of an n x n matrix holds x
/// with 1 at position i.
InputGrads dProd(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx), *g = ctx.grad();
  if (rankOf(x) == 0)
    return selfGrad(g);
  int64_t rank = rankOf(x), dim = wrapDimension(ctx.integer("dim"), rank);
  int64_t n = staticDim(x, dim);
  Sizes square = sizesOf(x);
  square.insert(square.begin() + dim, e.syms().constant(n));
  Value *rows = e.expand(e.unsqueeze(x, dim), square);
  Value *eye = e.compare(Cmp::Eq, e.unsqueeze(e.arange(n), 1), e.arange(n));
  Value *others = e.where(e.alongDim(eye, 1, rank + 1 - dim), scalarLike(e, x, 1), rows);
  Value *product = e.op(ops::aten_prod_dim_int, {{"self", others}, {"dim", dim + 1}});
  return selfGrad(e.mul(keptGrad(ctx, e, g, x, {dim}), product));
}

/// Sorted values came from their indices: g goes back there.
InputGrads dSelected(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx), *g = ctx.grad(0);
  int64_t dim = wrapDimension(ctx.integer("dim", -1), std::max<int64_t>(rankOf(x), 1));
  if (rankOf(x) == 0)
    return selfGrad(g);
  Value *zeros = e.fullLike(x, Number::integer(0), typeOf(g).dtype);
  return selfGrad(e.op(ops::aten_scatter_add_default,
                       {{"self", zeros}, {"dim", dim}, {"index", ctx.result(1)}, {"src", g}}));
}

const DerivativeEntry kEntries[] = {
    {ops::aten_amax_default, dAmax, "g split evenly between the positions equal to the max"},
    {ops::aten_amin_default, dAmax, "g split evenly between the positions equal to the min"},
    {ops::aten_any_dim, nullptr, "none (bool)"},
    {ops::aten_argmax_default, nullptr, "none (integer)"},
    {ops::aten_argmin_default, nullptr, "none (integer)"},
    {ops::aten_cumsum_default, dCumsum, "reversed cumsum of g"},
    {ops::aten_prod_dim_int, dProd, "g times the product of the other elements"},
    {ops::aten_sort_default, dSelected, "g scatter-added at the indices"},
    {ops::aten_sum_dim_IntList, dSum, "g expanded over the reduced dims"},
    {ops::aten_topk_default, dSelected, "g scatter-added at the indices"},
};

} // namespace

void registerReductionDerivatives(DerivativeRegistry &r) { r.add(kEntries); }

} // namespace gc
