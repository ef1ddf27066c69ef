//===- Numeric.cpp - Decompositions of numerical integration and ranges ---===//
//
// The trapezoid rule (trapezoid, trapz, cumulative_trapezoid), finite
// differences (gradient) and evenly spaced ranges with tensor endpoints
// (linspace, logspace), through slices, pointwise ops, sum and cumsum.
//
//===----------------------------------------------------------------------===//
#include "gc/Ops/Emit.h"

#include "gc/Ops/ShapeInference.h"

#include <string>

namespace gc {

namespace {

using namespace decompose;

/// x[1:] - x[:-1] or x[1:] + x[:-1] along `dim` (of size n >= 1).
Value *neighbours(Emit &e, Value *x, int64_t dim, int64_t n, bool add) {
  Value *next = e.slice(x, dim, 1, n), *prev = e.slice(x, dim, 0, n - 1);
  return add ? e.add(next, prev) : e.sub(next, prev);
}

/// The areas of the trapezoids between neighbouring samples of y along
/// `dim`: (x[i+1] - x[i]) * (y[i+1] + y[i]) / 2, x 1-D (along dim) or of
/// y's rank. Null when y has no samples along dim.
Value *trapezoidAreas(RewriteContext &ctx, Emit &e, int64_t &dim) {
  Value *y = ctx.value("y"), *x = ctx.value("x");
  int64_t rank = rankOf(y);
  if (rank == 0)
    rewriteFail("y must have at least one dim");
  dim = wrapDimension(ctx.integer("dim", -1), rank);
  int64_t n = staticSize(sizesOf(y)[dim], "the integrated dim");
  if (n == 0)
    return nullptr;
  Value *dx;
  if (rankOf(x) == 1) {
    if (staticSize(sizesOf(x)[0], "x") != n)
      rewriteFail("x must have as many samples as y along dim");
    dx = e.alongDim(neighbours(e, x, 0, n, false), dim, rank);
  } else {
    if (rankOf(x) != rank)
      rewriteFail("x must be 1-D or have y's number of dims");
    dx = neighbours(e, x, dim, staticSize(sizesOf(x)[dim], "x's integrated dim"), false);
  }
  return e.div(e.mul(dx, neighbours(e, y, dim, n, true)), 2.0);
}

/// trapezoid.x and trapz.x: the sum of the areas (0 without samples).
Results decomposeTrapezoid(RewriteContext &ctx) {
  Emit e(ctx);
  int64_t dim;
  Value *areas = trapezoidAreas(ctx, e, dim);
  if (!areas)
    return finish(ctx, {e.sum(e.mul(ctx.value("y"), 0.0), {dim}, false)});
  return finish(ctx, {e.sum(areas, {dim}, false)});
}

/// The running sums of the areas, one fewer than the samples.
Results decomposeCumulativeTrapezoid(RewriteContext &ctx) {
  Emit e(ctx);
  int64_t dim;
  Value *areas = trapezoidAreas(ctx, e, dim);
  if (!areas)
    return finish(ctx, {e.mul(ctx.value("y"), 0.0)});
  return finish(ctx, {e.op(ops::aten_cumsum_default, {{"self", areas}, {"dim", dim}})});
}

/// gradient with one spacing for every dim: central differences inside,
/// one-sided differences of order edge_order (1 or 2) at both ends; one
/// result per dim (all dims without `dim`).
Results decomposeGradient(RewriteContext &ctx) {
  Emit e(ctx);
  Value *f = ctx.value("self");
  f = e.cast(f, computeDType(typeOf(f).dtype));
  int64_t rank = rankOf(f);
  double h = optNumber(ctx, "spacing").value_or(Number::integer(1)).value();
  int64_t order = ctx.integer("edge_order", 1);
  if (order != 1 && order != 2)
    rewriteFail("edge_order must be 1 or 2");
  std::optional<Dims> given;
  if (ctx.has("dim"))
    given = Dims{ctx.integer("dim")};
  std::vector<Value *> out;
  for (int64_t dim : wrapDims(given, rank)) {
    int64_t n = staticSize(sizesOf(f)[dim], "a differentiated dim");
    if (n < order + 1)
      rewriteFail("each differentiated dim needs at least edge_order + 1 samples");
    auto at = [&](int64_t i) { return e.slice(f, dim, i, i + 1); };
    Value *first, *last;
    if (order == 1) {
      first = e.div(e.sub(at(1), at(0)), h);
      last = e.div(e.sub(at(n - 1), at(n - 2)), h);
    } else {
      // (-3 f0 + 4 f1 - f2) / 2h and (3 f[n-1] - 4 f[n-2] + f[n-3]) / 2h.
      first = e.div(e.sub(e.sub(e.mul(at(1), 4.0), e.mul(at(0), 3.0)), at(2)), 2 * h);
      last = e.div(e.add(e.sub(e.mul(at(n - 1), 3.0), e.mul(at(n - 2), 4.0)), at(n - 3)), 2 * h);
    }
    std::vector<Value *> parts = {first};
    if (n > 2)
      parts.push_back(e.div(e.sub(e.slice(f, dim, 2, n), e.slice(f, dim, 0, n - 2)), 2 * h));
    parts.push_back(last);
    out.push_back(e.cat(parts, dim));
  }
  return finish(ctx, out);
}

/// linspace and logspace with a 0-dim tensor start (and end): steps
/// values, computed from whichever end is nearer, as torch does, so that
/// both ends come out exact; logspace raises `base` to them.
Results evenlySpaced(RewriteContext &ctx, bool logarithmic) {
  Emit e(ctx);
  int64_t steps = ctx.integer("steps");
  if (steps < 0)
    rewriteFail("steps must be non-negative");
  DType result = ctx.resultType().dtype;
  DType t = isFloatingPoint(result) ? computeDType(result) : DType::Float64;
  Value *start = ctx.value("start");
  Value *end = isTensorArg(ctx, "end") ? ctx.value("end") : e.scalar(number(ctx, "end"), t);
  if (rankOf(start) != 0 || rankOf(end) != 0)
    rewriteFail("start and end must be 0-dim tensors");
  if (steps == 0)
    return finish(ctx, {e.full({e.syms().constant(0)}, Number::integer(0), result)});
  // The bounds take the result's dtype first (an integer result truncates
  // them), then the dtype the points are computed in.
  start = e.cast(e.cast(start, result), t);
  end = e.cast(e.cast(end, result), t);
  Value *values;
  if (steps == 1) {
    values = e.unsqueeze(start, 0);
  } else {
    Value *i = e.cast(e.arange(steps), t);
    Value *step = e.div(e.sub(end, start), static_cast<double>(steps - 1));
    Value *fromStart = e.add(start, e.mul(i, step));
    Value *fromEnd = e.sub(end, e.mul(e.sub(e.scalar(Number::integer(steps - 1), t), i), step));
    values = e.where(e.compare(Cmp::Lt, i, Number::real(static_cast<double>(steps / 2))),
                     fromStart, fromEnd);
  }
  if (logarithmic)
    values = e.op(ops::aten_pow_Scalar, {{"self", ctx.real("base", 10.0)}, {"exponent", values}});
  return finish(ctx, {values});
}

Results decomposeLinspace(RewriteContext &ctx) { return evenlySpaced(ctx, false); }
Results decomposeLogspace(RewriteContext &ctx) { return evenlySpaced(ctx, true); }

const DecompositionEntry kNumericDecompositions[] = {
    {ops::aten_cumulative_trapezoid_x, decomposeCumulativeTrapezoid},
    {ops::aten_gradient_scalarint, decomposeGradient},
    {ops::aten_linspace_Tensor_Scalar, decomposeLinspace},
    {ops::aten_linspace_Tensor_Tensor, decomposeLinspace},
    {ops::aten_logspace_Tensor_Scalar, decomposeLogspace},
    {ops::aten_logspace_Tensor_Tensor, decomposeLogspace},
    {ops::aten_trapezoid_x, decomposeTrapezoid},
    {ops::aten_trapz_x, decomposeTrapezoid},
};

} // namespace

void registerNumericDecompositions(DecompositionRegistry &r) { r.add(kNumericDecompositions); }

} // namespace gc
