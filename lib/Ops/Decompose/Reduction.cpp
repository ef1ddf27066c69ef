//===- Reduction.cpp - Decompositions of reductions and scans -------------===//
//
// Means, variances, norms, softmax and friends in terms of the core
// reductions (sum, prod, amax, amin, any). Floating math happens in float32
// for float16 and bfloat16 inputs, as torch's kernels accumulate, and the
// result is cast back to the recorded dtype.
//
//===----------------------------------------------------------------------===//
#include "gc/Ops/Emit.h"

#include "gc/Ops/ShapeInference.h"

#include <cmath>
#include <functional>
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
Value *logSumExp(Emit &e, Value *x, const Dims &dims, bool keepdim) {
  Value *max = e.amax(x, dims, true);
  Value *infinite = e.compare(Cmp::Eq, e.unary(ops::aten_abs_default, max), Number::real(kInf));
  max = e.where(infinite, e.scalar(Number::integer(0), typeOf(max).dtype), max);
  Value *sum = e.sum(e.unary(ops::aten_exp_default, e.sub(x, max)), dims, keepdim);
  return e.add(e.unary(ops::aten_log_default, sum), dropDims(e, max, dims, keepdim));
}

Results decomposeLogsumexp(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = floatingInput(ctx, e);
  return finish(ctx, {logSumExp(e, x, reducedDims(ctx, x), ctx.boolean("keepdim", false))});
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

/// Scans along a dim of length n as reductions over its prefixes: x with
/// the dim moved last and a new dim of length n before it, row i holding
/// x_j for j <= i and `fill` elsewhere (O(n^2) work, for short dims).
struct Prefixes {
  Value *rows;  // [..., n, n]
  Value *lower; // [n, n]: j <= i
  int64_t dim, n;
};
Prefixes prefixes(Emit &e, Value *x, int64_t dim, const std::function<Value *(Value *)> &fill) {
  int64_t n = staticSize(sizesOf(x)[dim], "the scanned dim");
  Value *last = e.transpose(x, dim, -1);
  Sizes square = sizesOf(last);
  square.insert(square.end() - 1, e.syms().constant(n));
  Value *rows = e.expand(e.unsqueeze(last, -2), square);
  Value *lower = e.compare(Cmp::Le, e.unsqueeze(e.arange(n), 0), e.unsqueeze(e.arange(n), 1));
  return {e.where(lower, rows, fill(last)), lower, dim, n};
}

/// A scan's [..., n] result (dim last) back in place.
Value *unscan(Emit &e, const Prefixes &p, Value *v) { return e.transpose(v, p.dim, -1); }

/// cumprod: the product of each prefix (exact for zeros and negative
/// values, unlike exp(cumsum(log x))).
Results decomposeCumprod(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  if (ctx.has("dtype"))
    x = e.cast(x, *ctx.dtype("dtype"));
  if (rankOf(x) == 0)
    return finish(ctx, {x});
  Prefixes p = prefixes(e, x, wrapDimension(ctx.integer("dim"), rankOf(x)),
                        [&](Value *) { return e.scalar(Number::integer(1), typeOf(x).dtype); });
  return finish(ctx, {unscan(e, p,
                             e.op(ops::aten_prod_dim_int,
                                  {{"self", p.rows}, {"dim", int64_t(-1)}, {"keepdim", false}}))});
}

/// cummax and cummin: the extreme of each prefix (NaN once one is seen)
/// and the last position in the prefix that holds it, as torch gives.
Results runningExtreme(RewriteContext &ctx, bool isMax) {
  Emit e(ctx);
  Value *x = self(ctx);
  if (rankOf(x) == 0)
    return finish(ctx, {x, e.full({}, Number::integer(0), DType::Int64)});
  Prefixes p = prefixes(e, x, wrapDimension(ctx.integer("dim"), rankOf(x)),
                        [&](Value *last) { return e.unsqueeze(last, -1); });
  int64_t r = rankOf(p.rows) - 1;
  Value *best = isMax ? e.amax(p.rows, {r}, true) : e.amin(p.rows, {r}, true);
  Value *same = e.compare(Cmp::Eq, p.rows, best);
  if (isFloatingPoint(typeOf(x).dtype))
    same = e.op(ops::aten_logical_or_default,
                {{"self", same},
                 {"other", e.op(ops::aten_logical_and_default,
                                {{"self", e.unary(ops::aten_isnan_default, p.rows)},
                                 {"other", e.unary(ops::aten_isnan_default, best)}})}});
  same = e.op(ops::aten_logical_and_default, {{"self", same}, {"other", p.lower}});
  Value *minusOne = e.scalar(Number::integer(-1), DType::Int64);
  Value *at = e.amax(e.where(same, e.arange(p.n), minusOne), {r}, false);
  return finish(ctx, {unscan(e, p, e.squeeze(best, {r})), unscan(e, p, at)});
}
Results decomposeCummax(RewriteContext &ctx) { return runningExtreme(ctx, true); }
Results decomposeCummin(RewriteContext &ctx) { return runningExtreme(ctx, false); }

/// logcumsumexp: logsumexp of each prefix, the rest of the row at -inf.
Results decomposeLogcumsumexp(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = floatingInput(ctx, e);
  if (rankOf(x) == 0)
    return finish(ctx, {x});
  Prefixes p = prefixes(e, x, wrapDimension(ctx.integer("dim"), rankOf(x)),
                        [&](Value *) { return e.scalar(Number::real(-kInf), typeOf(x).dtype); });
  return finish(ctx, {unscan(e, p, logSumExp(e, p.rows, {rankOf(p.rows) - 1}, false))});
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

/// aminmax: amin and amax over dim (every dim if none).
Results decomposeAminmax(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Dims dims =
      ctx.has("dim") ? wrapDims(Dims{ctx.integer("dim")}, rankOf(x)) : wrapDims({}, rankOf(x));
  bool keepdim = ctx.boolean("keepdim", false);
  return finish(ctx, {e.amin(x, dims, keepdim), e.amax(x, dims, keepdim)});
}

//===----------------------------------------------------------------------===//
// Counting, NaN-ignoring reductions, histograms
//===----------------------------------------------------------------------===//

Results decomposeCountNonzero(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Value *nonzero = e.compare(Cmp::Ne, x, Number::integer(0));
  return finish(ctx, {e.sum(nonzero, reducedDims(ctx, x), false, DType::Int64)});
}

/// x with NaN replaced by zero.
Value *zeroNan(Emit &e, Value *x) {
  if (!isFloatingPoint(typeOf(x).dtype))
    return x;
  return e.where(e.unary(ops::aten_isnan_default, x), e.scalar(Number::integer(0), typeOf(x).dtype),
                 x);
}

Results decomposeNansum(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  if (std::optional<DType> dtype = ctx.dtype("dtype"))
    x = e.cast(x, *dtype);
  return finish(ctx, {e.sum(zeroNan(e, x), reducedDims(ctx, x), ctx.boolean("keepdim", false))});
}

/// nanmean: the sum of the numbers over their count.
Results decomposeNanmean(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = floatingInput(ctx, e);
  Dims dims = reducedDims(ctx, x);
  bool keepdim = ctx.boolean("keepdim", false);
  Value *numbers = e.logicalNot(e.unary(ops::aten_isnan_default, x));
  Value *count = e.sum(numbers, dims, keepdim, typeOf(x).dtype);
  return finish(ctx, {e.div(e.sum(zeroNan(e, x), dims, keepdim), count)});
}

/// segment_reduce over axis 0 with 1-D lengths or offsets: segment s covers
/// [start_s, end_s); each reduction sees every element, the others at the
/// reduction's identity; `initial` joins every segment (and is an empty
/// segment's mean).
Results decomposeSegmentReduce(RewriteContext &ctx) {
  Emit e(ctx);
  Value *data = ctx.value("data");
  if (ctx.integer("axis", 0) != 0 || rankOf(data) == 0)
    rewriteFail("segment_reduce over axis " + std::to_string(ctx.integer("axis", 0)) +
                " of a rank-" + std::to_string(rankOf(data)) +
                " tensor is not supported (only axis 0)");
  Value *ends, *starts;
  if (ctx.has("lengths")) {
    Value *lengths = ctx.value("lengths");
    if (rankOf(lengths) != 1)
      rewriteFail("segment_reduce with lengths of rank " + std::to_string(rankOf(lengths)) +
                  " is not supported");
    ends = e.op(ops::aten_cumsum_default,
                {{"self", lengths}, {"dim", int64_t(0)}, {"dtype", DType::Int64}});
    starts = e.sub(ends, lengths);
  } else if (ctx.has("offsets")) {
    Value *offsets = ctx.value("offsets");
    if (rankOf(offsets) != 1)
      rewriteFail("segment_reduce with offsets of rank " + std::to_string(rankOf(offsets)) +
                  " is not supported");
    int64_t k = staticSize(sizesOf(offsets)[0], "the offsets");
    starts = e.slice(offsets, 0, 0, std::max<int64_t>(k - 1, 0));
    ends = e.slice(offsets, 0, 1, std::max<int64_t>(k, 1));
  } else {
    rewriteFail("segment_reduce without lengths or offsets is not supported");
  }
  int64_t n = staticSize(sizesOf(data)[0], "the segmented dim");
  Value *j = e.unsqueeze(e.arange(n), 0);
  Value *member =
      e.op(ops::aten_logical_and_default, {{"self", e.compare(Cmp::Le, e.unsqueeze(starts, 1), j)},
                                           {"other", e.compare(Cmp::Lt, j, e.unsqueeze(ends, 1))}});
  member = e.reshape(member, [&] {
    Sizes s = sizesOf(member);
    s.resize(rankOf(data) + 1, e.syms().constant(1));
    return s;
  }());
  Value *rows = e.unsqueeze(data, 0);
  DType dtype = typeOf(data).dtype;
  std::string reduce = ctx.string("reduce", "");
  std::optional<Number> initial = optNumber(ctx, "initial");
  auto withIdentity = [&](double identity) {
    return e.where(member, rows, e.scalar(Number::real(identity), dtype));
  };
  Value *out;
  if (reduce == "sum" || reduce == "mean") {
    out = e.sum(withIdentity(0), {1}, false);
    if (initial)
      out = e.add(out, e.wrapNumber(*initial, dtype));
    if (reduce == "mean") {
      Value *count = e.sum(member, {1}, false, dtype);
      out = e.div(out, count);
      if (initial)
        out = e.where(e.compare(Cmp::Eq, count, Number::integer(0)), e.wrapNumber(*initial, dtype),
                      out);
    }
  } else if (reduce == "prod") {
    out = e.op(ops::aten_prod_dim_int,
               {{"self", withIdentity(1)}, {"dim", int64_t(1)}, {"keepdim", false}});
    if (initial)
      out = e.mul(out, e.wrapNumber(*initial, dtype));
  } else if (reduce == "max" || reduce == "min") {
    bool isMax = reduce == "max";
    out = isMax ? e.amax(withIdentity(-kInf), {1}, false) : e.amin(withIdentity(kInf), {1}, false);
    if (initial) {
      Value *init = e.wrapNumber(*initial, dtype);
      out = isMax ? e.maximum(out, init) : e.minimum(out, init);
    }
  } else {
    rewriteFail("segment_reduce reduction '" + reduce + "' is not supported");
  }
  return finish(ctx, {out});
}

/// The edges torch's histogram makes for `bins` equal bins from lo to hi
/// (0-dim tensors): lo + i * step in the first half, hi - (bins - i) * step
/// in the second, as linspace computes them.
Value *linearEdges(Emit &e, Value *lo, Value *hi, int64_t bins) {
  DType dtype = typeOf(lo).dtype;
  Value *i = e.cast(e.arange(bins + 1), dtype);
  Value *step = e.div(e.sub(hi, lo), e.scalar(Number::integer(bins), dtype));
  Value *fromLo = e.add(lo, e.mul(i, step));
  Value *fromHi = e.sub(hi, e.mul(e.sub(e.scalar(Number::integer(bins), dtype), i), step));
  return e.where(e.compare(Cmp::Lt, e.arange(bins + 1), Number::integer((bins + 1) / 2)), fromLo,
                 fromHi);
}

/// The data's range (0-dim tensors): [lo, hi] if given and not empty, else
/// the data's min and max, widened by `widen` on each side when equal.
std::pair<Value *, Value *>
histogramRange(Emit &e, Value *x, std::optional<std::pair<double, double>> range, double widen) {
  DType dtype = typeOf(x).dtype;
  Value *lo, *hi;
  if (range && range->first != range->second) {
    lo = e.scalar(Number::real(range->first), dtype);
    hi = e.scalar(Number::real(range->second), dtype);
  } else if (range && staticSize(sizeProduct(e.syms(), sizesOf(x)), "the histogram's input") == 0) {
    lo = e.scalar(Number::real(range->first), dtype);
    hi = lo;
  } else {
    Dims all = wrapDims({}, rankOf(x));
    lo = rankOf(x) == 0 ? x : e.amin(x, all, false);
    hi = rankOf(x) == 0 ? x : e.amax(x, all, false);
  }
  Value *same = e.compare(Cmp::Eq, lo, hi);
  return {e.where(same, e.sub(lo, widen), lo), e.where(same, e.add(hi, widen), hi)};
}

/// For each element of x (flattened) and each bin, whether the element is
/// in the bin: bin b holds edges[b] <= x < edges[b + 1], the last bin its
/// right edge too; elements outside the edges are in no bin. [elements, bins]
Value *binMembership(Emit &e, Value *x, Value *edges) {
  int64_t bins = staticSize(sizesOf(edges)[0], "the bin edges") - 1;
  Value *flat = e.unsqueeze(e.reshape(x, {sizeProduct(e.syms(), sizesOf(x))}), 1);
  Value *left = e.unsqueeze(e.slice(edges, 0, 0, bins), 0);
  Value *right = e.unsqueeze(e.slice(edges, 0, 1, bins + 1), 0);
  Value *isLast = e.unsqueeze(e.compare(Cmp::Eq, e.arange(bins), Number::integer(bins - 1)), 0);
  Value *belowRight =
      e.op(ops::aten_logical_or_default,
           {{"self", e.compare(Cmp::Lt, flat, right)},
            {"other", e.op(ops::aten_logical_and_default,
                           {{"self", isLast}, {"other", e.compare(Cmp::Eq, flat, right)}})}});
  return e.op(ops::aten_logical_and_default,
              {{"self", e.compare(Cmp::Ge, flat, left)}, {"other", belowRight}});
}

/// The sum over dim 0 of `weight` (1 if null; one per row of `in`,
/// flattened) where `in` holds.
Value *weightedCount(Emit &e, Value *in, Value *weight, DType dtype) {
  Value *w = e.scalar(Number::integer(1), dtype);
  if (weight) {
    Sizes sizes(rankOf(in), e.syms().constant(1));
    sizes[0] = sizeProduct(e.syms(), sizesOf(weight));
    w = e.reshape(e.cast(weight, dtype), sizes);
  }
  return e.sum(e.where(in, w, e.scalar(Number::integer(0), dtype)), {0}, false);
}

/// The bin widths, edges[b + 1] - edges[b].
Value *binWidths(Emit &e, Value *edges) {
  int64_t bins = staticSize(sizesOf(edges)[0], "the bin edges") - 1;
  return e.sub(e.slice(edges, 0, 1, bins + 1), e.slice(edges, 0, 0, bins));
}

/// histogram's and histogramdd's `range`: per dim, its [lo, hi] if given.
std::optional<std::pair<double, double>> rangeOfDim(RewriteContext &ctx, size_t dim, size_t dims) {
  if (!ctx.has("range"))
    return std::nullopt;
  const std::vector<double> &r = ctx.find("range")->value.floats;
  if (r.size() != 2 * dims)
    rewriteFail("the histogram's range must hold " + std::to_string(2 * dims) + " numbers, not " +
                std::to_string(r.size()));
  return std::pair{r[2 * dim], r[2 * dim + 1]};
}

/// histc: `bins` equal bins over [min, max], or over the data's range when
/// both are 0 (or equal), widened by 1 on each side if empty.
Results decomposeHistc(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  int64_t bins = ctx.integer("bins", 100);
  double lo = optNumber(ctx, "min").value_or(Number::integer(0)).value();
  double hi = optNumber(ctx, "max").value_or(Number::integer(0)).value();
  std::optional<std::pair<double, double>> range;
  if (lo != hi)
    range = {lo, hi};
  auto [left, right] = histogramRange(e, x, range, 1);
  DType dtype = typeOf(x).dtype;
  // torch's bin: floor((x - lo) * bins / (hi - lo)), the right edge in the
  // last bin.
  Value *pos = e.unary(
      ops::aten_floor_default,
      e.div(e.mul(e.sub(x, left), e.scalar(Number::integer(bins), dtype)), e.sub(right, left)));
  pos = e.minimum(e.cast(pos, DType::Int64), e.scalar(Number::integer(bins - 1), DType::Int64));
  Value *in = e.op(ops::aten_logical_and_default, {{"self", e.compare(Cmp::Ge, x, left)},
                                                   {"other", e.compare(Cmp::Le, x, right)}});
  Value *flatIn = e.unsqueeze(e.reshape(in, {sizeProduct(e.syms(), sizesOf(x))}), 1);
  Value *flatPos = e.unsqueeze(e.reshape(pos, {sizeProduct(e.syms(), sizesOf(x))}), 1);
  Value *hit = e.op(
      ops::aten_logical_and_default,
      {{"self", flatIn}, {"other", e.compare(Cmp::Eq, flatPos, e.unsqueeze(e.arange(bins), 0))}});
  return finish(ctx, {e.sum(hit, {0}, false, dtype)});
}

/// histogram: counts (or weight sums) per bin, and the edges; density
/// divides by the total and the bin widths.
Results decomposeHistogram(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  DType dtype = typeOf(x).dtype;
  Value *edges;
  if (isTensorArg(ctx, "bins")) {
    edges = e.cast(ctx.value("bins"), dtype);
  } else {
    auto [lo, hi] = histogramRange(e, x, rangeOfDim(ctx, 0, 1), 0.5);
    edges = linearEdges(e, lo, hi, ctx.integer("bins", 100));
  }
  Value *weight = ctx.has("weight") ? ctx.value("weight") : nullptr;
  Value *hist = weightedCount(e, binMembership(e, x, edges), weight, dtype);
  if (ctx.boolean("density", false))
    hist = e.div(hist, e.mul(e.sum(hist, {0}, false), binWidths(e, edges)));
  return finish(ctx, {hist, edges});
}

/// histogramdd: the rows of self (its last dim holds a point's D
/// coordinates) counted in D-dimensional cells, each coordinate binned as
/// histogram bins it; the results are the counts and each dim's edges.
Results decomposeHistogramdd(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  DType dtype = typeOf(x).dtype;
  if (rankOf(x) == 0)
    rewriteFail("histogramdd of a 0-dim tensor is not supported");
  int64_t dims = staticSize(sizesOf(x).back(), "histogramdd's point dim");
  Sizes leading(sizesOf(x).begin(), sizesOf(x).end() - 1);
  Value *points = e.reshape(x, {sizeProduct(e.syms(), leading), e.syms().constant(dims)});
  std::vector<Value *> edges;
  if (ctx.find("bins")->value.kind == ArgKind::Tensors) {
    for (Value *b : ctx.values("bins"))
      edges.push_back(e.cast(b, dtype));
  } else {
    Dims bins = ctx.ints("bins");
    for (int64_t d = 0; d < dims; ++d) {
      Value *column = e.select(points, 1, d);
      auto [lo, hi] = histogramRange(e, column, rangeOfDim(ctx, d, dims), 0.5);
      edges.push_back(linearEdges(e, lo, hi, bins.size() == 1 ? bins[0] : bins.at(d)));
    }
  }
  if (static_cast<int64_t>(edges.size()) != dims)
    rewriteFail("histogramdd has " + std::to_string(edges.size()) + " bin specifications for " +
                std::to_string(dims) + " dims");
  Value *cell = nullptr;
  for (int64_t d = 0; d < dims; ++d) {
    Value *in = binMembership(e, e.select(points, 1, d), edges[d]);
    Sizes sizes(dims + 1, e.syms().constant(1));
    sizes[0] = sizesOf(in)[0];
    sizes[d + 1] = sizesOf(in)[1];
    in = e.reshape(in, sizes);
    cell = cell ? e.op(ops::aten_logical_and_default, {{"self", cell}, {"other", in}}) : in;
  }
  Value *hist = weightedCount(e, cell, ctx.has("weight") ? ctx.value("weight") : nullptr, dtype);
  if (ctx.boolean("density", false)) {
    Value *volume = nullptr;
    for (int64_t d = 0; d < dims; ++d) {
      Value *w = e.alongDim(binWidths(e, edges[d]), d, dims);
      volume = volume ? e.mul(volume, w) : w;
    }
    hist = e.div(hist, e.mul(e.sum(hist, wrapDims({}, dims), false), volume));
  }
  std::vector<Value *> out = {hist};
  out.insert(out.end(), edges.begin(), edges.end());
  return finish(ctx, out);
}

const DecompositionEntry kReductionDecompositions[] = {
    {ops::aten__log_softmax_default, decomposeLogSoftmax},
    {ops::aten__safe_softmax_default, decomposeSafeSoftmax},
    {ops::aten__softmax_default, decomposeSoftmax},
    {ops::aten_all_default, decomposeAll},
    {ops::aten_all_dim, decomposeAll},
    {ops::aten_all_dims, decomposeAll},
    {ops::aten_aminmax_default, decomposeAminmax},
    {ops::aten_any_default, decomposeAny},
    {ops::aten_any_dims, decomposeAny},
    {ops::aten_count_nonzero_default, decomposeCountNonzero},
    {ops::aten_cummax_default, decomposeCummax},
    {ops::aten_cummin_default, decomposeCummin},
    {ops::aten_cumprod_default, decomposeCumprod},
    {ops::aten_histc_default, decomposeHistc},
    {ops::aten_histogram_bin_ct, decomposeHistogram},
    {ops::aten_histogram_bins_tensor, decomposeHistogram},
    {ops::aten_histogramdd_TensorList_bins, decomposeHistogramdd},
    {ops::aten_histogramdd_default, decomposeHistogramdd},
    {ops::aten_linalg_vector_norm_default, decomposeVectorNorm},
    {ops::aten_log_softmax_int, decomposeLogSoftmax},
    {ops::aten_logcumsumexp_default, decomposeLogcumsumexp},
    {ops::aten_logsumexp_default, decomposeLogsumexp},
    {ops::aten_max_default, decomposeMax},
    {ops::aten_max_dim, decomposeMaxDim},
    {ops::aten_mean_default, decomposeMean},
    {ops::aten_mean_dim, decomposeMean},
    {ops::aten_min_default, decomposeMin},
    {ops::aten_min_dim, decomposeMinDim},
    {ops::aten_nanmean_default, decomposeNanmean},
    {ops::aten_nansum_default, decomposeNansum},
    {ops::aten_prod_default, decomposeProdDefault},
    {ops::aten_segment_reduce_default, decomposeSegmentReduce},
    {ops::aten_softmax_int, decomposeSoftmax},
    {ops::aten_std_correction, decomposeStd},
    {ops::aten_std_default, decomposeStd},
    {ops::aten_std_dim, decomposeStd},
    {ops::aten_std_mean_correction, decomposeStdMean},
    {ops::aten_std_mean_default, decomposeStdMean},
    {ops::aten_std_mean_dim, decomposeStdMean},
    {ops::aten_sum_default, decomposeSumDefault},
    {ops::aten_var_correction, decomposeVar},
    {ops::aten_var_default, decomposeVar},
    {ops::aten_var_dim, decomposeVar},
    {ops::aten_var_mean_correction, decomposeVarMean},
    {ops::aten_var_mean_default, decomposeVarMean},
    {ops::aten_var_mean_dim, decomposeVarMean},
};

} // namespace

void registerReductionDecompositions(DecompositionRegistry &r) { r.add(kReductionDecompositions); }

} // namespace gc
