//===- Reduction.cpp - Decompositions of reductions and scans -------------===//
//
// Means, variances, norms, softmax and friends in terms of the core
// reductions (sum, prod, amax, amin, any). Floating math happens in float32
// for float16 and bfloat16 inputs, as torch's kernels accumulate, and the
// result is cast back to the recorded dtype.
//
//===----------------------------------------------------------------------===//
#include "Emit.h"

#include "gc/Ops/ShapeInference.h"

#include <cmath>
#include <limits>

namespace gc {

namespace {

using namespace decompose;

constexpr double kInf = std::numeric_limits<double>::infinity();

Value *self(RewriteContext &ctx) { return ctx.value("self"); }

/// self, converted to the `dtype` argument if given, else to where torch
/// does its floating math for the recorded result.
Value *floatingInput(RewriteContext &ctx, Emit &e) {
  std::optional<DType> dtype = ctx.dtype("dtype");
  return e.cast(self(ctx), dtype ? *dtype : computeDType(ctx.resultType().dtype));
}

/// The dims a reduction's `dim` argument names (every dim when absent or
/// empty), wrapped.
Dims reducedDims(RewriteContext &ctx, Value *x, std::string_view name = "dim") {
  std::optional<Dims> dims;
  if (ctx.has(name))
    dims = ctx.ints(name);
  return wrapDims(dims, rankOf(x));
}

/// A keepdim-shaped value with the reduced dims removed unless kept.
Value *dropDims(Emit &e, Value *v, const Dims &dims, bool keepdim) {
  return keepdim || rankOf(v) == 0 ? v : e.squeeze(v, dims);
}

//===----------------------------------------------------------------------===//
// Softmax and log-sum-exp
//===----------------------------------------------------------------------===//

int64_t softmaxDim(RewriteContext &ctx, Value *x) {
  return wrapDimension(ctx.integer("dim"), rankOf(x));
}

/// softmax.int and _softmax: the recorded dtype says whether torch computed
/// in another dtype (dtype=..., half_to_float).
Results decomposeSoftmax(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = floatingInput(ctx, e);
  return finish(ctx, {e.softmax(x, softmaxDim(ctx, x))});
}

/// Softmax that gives 0 instead of NaN for rows that are entirely -inf
/// (fully masked attention rows).
Results decomposeSafeSoftmax(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = floatingInput(ctx, e);
  Value *max;
  Value *y = e.softmax(x, softmaxDim(ctx, x), &max);
  Value *masked = e.compare(Cmp::Eq, max, Number::real(-kInf));
  return finish(ctx, {e.where(masked, e.scalar(Number::integer(0), typeOf(y).dtype), y)});
}

Results decomposeLogSoftmax(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = floatingInput(ctx, e);
  return finish(ctx, {e.logSoftmax(x, softmaxDim(ctx, x))});
}

/// log(sum(exp(x - m))) + m with m the max, where an infinite max is
/// replaced by 0 so that all -inf (or any +inf) rows come out right.
Results decomposeLogsumexp(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = floatingInput(ctx, e);
  Dims dims = reducedDims(ctx, x);
  bool keepdim = ctx.boolean("keepdim", false);
  Value *max = e.amax(x, dims, true);
  Value *infinite = e.compare(Cmp::Eq, e.unary(ops::aten_abs_default, max), Number::real(kInf));
  max = e.where(infinite, e.scalar(Number::integer(0), typeOf(max).dtype), max);
  Value *sum = e.sum(e.unary(ops::aten_exp_default, e.sub(x, max)), dims, keepdim);
  return finish(ctx, {e.add(e.unary(ops::aten_log_default, sum), dropDims(e, max, dims, keepdim))});
}

//===----------------------------------------------------------------------===//
// Sums, means, variances, norms
//===----------------------------------------------------------------------===//

Results decomposeSumDefault(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {e.sum(self(ctx), {}, false, ctx.dtype("dtype"))});
}

Results decomposeMean(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = floatingInput(ctx, e);
  return finish(ctx, {e.mean(x, reducedDims(ctx, x), ctx.boolean("keepdim", false))});
}

/// var and std, .dim (unbiased) and .correction overloads.
Value *variance(RewriteContext &ctx, Emit &e) {
  Value *x = floatingInput(ctx, e);
  double correction = ctx.boolean("unbiased", true) ? 1 : 0;
  if (ctx.has("correction"))
    correction = number(ctx, "correction").value();
  return e.variance(x, reducedDims(ctx, x), correction, ctx.boolean("keepdim", false));
}

Results decomposeVar(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {variance(ctx, e)});
}

Results decomposeStd(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {e.unary(ops::aten_sqrt_default, variance(ctx, e))});
}

/// var_mean and std_mean: the variance (or its root) and the mean over the
/// same dims.
Results momentsAndMean(RewriteContext &ctx, bool root) {
  Emit e(ctx);
  Value *spread = variance(ctx, e);
  if (root)
    spread = e.unary(ops::aten_sqrt_default, spread);
  Value *x = floatingInput(ctx, e);
  return finish(ctx, {spread, e.mean(x, reducedDims(ctx, x), ctx.boolean("keepdim", false))});
}
Results decomposeVarMean(RewriteContext &ctx) { return momentsAndMean(ctx, false); }
Results decomposeStdMean(RewriteContext &ctx) { return momentsAndMean(ctx, true); }

Results decomposeVectorNorm(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = floatingInput(ctx, e);
  Dims dims = reducedDims(ctx, x);
  bool keepdim = ctx.boolean("keepdim", false);
  double ord = optNumber(ctx, "ord").value_or(Number::integer(2)).value();
  Value *a = e.unary(ops::aten_abs_default, x);
  Value *r;
  if (ord == 2)
    r = e.unary(ops::aten_sqrt_default, e.sum(e.mul(x, x), dims, keepdim));
  else if (ord == kInf)
    r = e.amax(a, dims, keepdim);
  else if (ord == -kInf)
    r = e.amin(a, dims, keepdim);
  else if (ord == 0)
    r = e.sum(e.cast(e.compare(Cmp::Ne, x, Number::integer(0)), typeOf(x).dtype), dims, keepdim);
  else if (ord == 1)
    r = e.sum(a, dims, keepdim);
  else
    r = e.op(ops::aten_pow_Tensor_Scalar,
             {{"self", e.sum(e.op(ops::aten_pow_Tensor_Scalar, {{"self", a}, {"exponent", ord}}), dims,
                             keepdim)},
              {"exponent", 1.0 / ord}});
  return finish(ctx, {r});
}

//===----------------------------------------------------------------------===//
// any, all, prod, max, min
//===----------------------------------------------------------------------===//

/// any over several dims through any.dim, one dim at a time.
Value *anyOver(Emit &e, Value *x, const Dims &dims, bool keepdim) {
  if (rankOf(x) == 0)
    return e.op(ops::aten_any_dim, {{"self", x}, {"dim", int64_t(0)}, {"keepdim", keepdim}});
  for (auto d = dims.rbegin(); d != dims.rend(); ++d)
    x = e.op(ops::aten_any_dim, {{"self", x}, {"dim", *d}, {"keepdim", true}});
  return dropDims(e, x, dims, keepdim);
}

Results decomposeAny(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  return finish(ctx, {anyOver(e, x, reducedDims(ctx, x), ctx.boolean("keepdim", false))});
}

/// all(x) = not any(not x).
Results decomposeAll(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Value *anyFalse = anyOver(e, e.logicalNot(x), reducedDims(ctx, x), ctx.boolean("keepdim", false));
  return finish(ctx, {e.logicalNot(anyFalse)});
}

Results decomposeProdDefault(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Value *flat = e.reshape(x, {sizeProduct(e.syms(), sizesOf(x))});
  std::vector<std::pair<std::string, ArgValue>> args = {
      {"self", flat}, {"dim", int64_t(0)}, {"keepdim", false}};
  if (ctx.has("dtype"))
    args.emplace_back("dtype", *ctx.dtype("dtype"));
  return finish(ctx, {e.op(ops::aten_prod_dim_int, std::move(args))});
}

/// cumprod along a dim of length n: row i of an n x n matrix holds x_j for
/// j <= i and 1 elsewhere; its product is the i-th prefix product (exact
/// for zeros and negative values, unlike exp(cumsum(log x))).
Results decomposeCumprod(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  if (ctx.has("dtype"))
    x = e.cast(x, *ctx.dtype("dtype"));
  if (rankOf(x) == 0)
    return finish(ctx, {x});
  int64_t dim = wrapDimension(ctx.integer("dim"), rankOf(x));
  int64_t n = staticSize(sizesOf(x)[dim], "the cumprod dim");
  Value *last = e.transpose(x, dim, -1);
  Sizes square = sizesOf(last);
  square.insert(square.end() - 1, e.syms().constant(n));
  Value *rows = e.expand(e.unsqueeze(last, -2), square);
  Value *lower = e.compare(Cmp::Le, e.unsqueeze(e.arange(n), 0), e.unsqueeze(e.arange(n), 1));
  Value *one = e.scalar(Number::integer(1), typeOf(x).dtype);
  Value *prefix =
      e.op(ops::aten_prod_dim_int,
           {{"self", e.where(lower, rows, one)}, {"dim", int64_t(-1)}, {"keepdim", false}});
  return finish(ctx, {e.transpose(prefix, dim, -1)});
}

/// max.dim and min.dim: the extreme values and their positions.
Results extremeAlongDim(RewriteContext &ctx, bool isMax) {
  Emit e(ctx);
  Value *x = self(ctx);
  int64_t dim = wrapDimension(ctx.integer("dim"), rankOf(x));
  bool keepdim = ctx.boolean("keepdim", false);
  Value *values = isMax ? e.amax(x, {dim}, keepdim) : e.amin(x, {dim}, keepdim);
  Value *indices = e.op(isMax ? ops::aten_argmax_default : ops::aten_argmin_default,
                        {{"self", x}, {"dim", dim}, {"keepdim", keepdim}});
  return finish(ctx, {values, indices});
}
Results decomposeMaxDim(RewriteContext &ctx) { return extremeAlongDim(ctx, true); }
Results decomposeMinDim(RewriteContext &ctx) { return extremeAlongDim(ctx, false); }

Results decomposeMax(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  return finish(ctx, {e.amax(x, wrapDims({}, rankOf(x)), false)});
}

Results decomposeMin(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  return finish(ctx, {e.amin(x, wrapDims({}, rankOf(x)), false)});
}

const DecompositionEntry kReductionDecompositions[] = {
    {ops::aten__log_softmax_default, decomposeLogSoftmax},
    {ops::aten__safe_softmax_default, decomposeSafeSoftmax},
    {ops::aten__softmax_default, decomposeSoftmax},
    {ops::aten_all_default, decomposeAll},
    {ops::aten_all_dim, decomposeAll},
    {ops::aten_all_dims, decomposeAll},
    {ops::aten_any_default, decomposeAny},
    {ops::aten_any_dims, decomposeAny},
    {ops::aten_cumprod_default, decomposeCumprod},
    {ops::aten_linalg_vector_norm_default, decomposeVectorNorm},
    {ops::aten_log_softmax_int, decomposeLogSoftmax},
    {ops::aten_logsumexp_default, decomposeLogsumexp},
    {ops::aten_max_default, decomposeMax},
    {ops::aten_max_dim, decomposeMaxDim},
    {ops::aten_mean_default, decomposeMean},
    {ops::aten_mean_dim, decomposeMean},
    {ops::aten_min_default, decomposeMin},
    {ops::aten_min_dim, decomposeMinDim},
    {ops::aten_prod_default, decomposeProdDefault},
    {ops::aten_softmax_int, decomposeSoftmax},
    {ops::aten_std_correction, decomposeStd},
    {ops::aten_std_default, decomposeStd},
    {ops::aten_std_dim, decomposeStd},
    {ops::aten_std_mean_correction, decomposeStdMean},
    {ops::aten_std_mean_dim, decomposeStdMean},
    {ops::aten_sum_default, decomposeSumDefault},
    {ops::aten_var_correction, decomposeVar},
    {ops::aten_var_default, decomposeVar},
    {ops::aten_var_dim, decomposeVar},
    {ops::aten_var_mean_correction, decomposeVarMean},
    {ops::aten_var_mean_dim, decomposeVarMean},
};

} // namespace

void registerReductionDecompositions(DecompositionRegistry &r) { r.add(kReductionDecompositions); }

} // namespace gc
