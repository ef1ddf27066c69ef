//===- Indexing.cpp - Decompositions of indexing, searching and sorting ---===//
//
// Flat indexing (take, put), masked and filled indexing, searches
// (bucketize, searchsorted, isin) and order statistics (median, quantile,
// mode, kthvalue) in terms of the core gather, index, index_put,
// scatter_reduce, cumsum and sort. Searches compare every value with every
// boundary and count; order statistics sort once, then gather at positions
// computed as tensors (a NaN moves the position of a median or quantile).
//
//===----------------------------------------------------------------------===//
#include "gc/Ops/Emit.h"

#include "gc/Ops/ShapeInference.h"

#include <cmath>
#include <limits>
#include <sstream>

namespace gc {

namespace {

using namespace decompose;

Value *self(RewriteContext &ctx) { return ctx.value("self"); }

int64_t dimArg(RewriteContext &ctx, Value *x, std::string_view name, int64_t dflt) {
  return wrapDimension(ctx.integer(name, dflt), std::max<int64_t>(rankOf(x), 1));
}

Value *flatten(Emit &e, Value *x) { return e.reshape(x, {sizeProduct(e.syms(), sizesOf(x))}); }

Value *int64Scalar(Emit &e, int64_t v) { return e.scalar(Number::integer(v), DType::Int64); }

/// Positions counted from the end made absolute: i < 0 ? i + n : i.
Value *wrapIndex(Emit &e, Value *index, int64_t n) {
  return e.where(e.compare(Cmp::Lt, index, Number::integer(0)), e.add(index, n), index);
}

/// Positions clamped into [-n, n - 1], where reading is always safe.
Value *clampIndex(Emit &e, Value *index, int64_t n) {
  return e.maximum(e.minimum(index, int64Scalar(e, n - 1)), int64Scalar(e, -n));
}

Value *indexWith(Emit &e, Value *x, std::vector<Value *> indices) {
  return e.op(ops::aten_index_Tensor, {{"self", x}, {"indices", std::move(indices)}});
}

Value *cumsum(Emit &e, Value *x, int64_t dim) {
  return e.op(ops::aten_cumsum_default, {{"self", x}, {"dim", dim}, {"dtype", DType::Int64}});
}

/// sort.default's values and indices along `dim` (stable).
std::pair<Value *, Value *> sortAlong(Emit &e, Value *x, int64_t dim, bool descending) {
  std::vector<Value *> r = e.builder().create(
      ops::aten_sort_default, {{"self", x}, {"dim", dim}, {"descending", descending}});
  return {r.at(0), r.at(1)};
}

Value *gatherAlong(Emit &e, Value *x, int64_t dim, Value *index) {
  return e.op(ops::aten_gather_default, {{"self", x}, {"dim", dim}, {"index", index}});
}

//===----------------------------------------------------------------------===//
// Flat and masked indexing
//===----------------------------------------------------------------------===//

Results decomposeTake(RewriteContext &ctx) {
  Emit e(ctx);
  Value *flat = flatten(e, self(ctx));
  int64_t n = staticSize(sizesOf(flat)[0], "take's element count");
  return finish(ctx, {indexWith(e, flat, {wrapIndex(e, ctx.value("index"), n)})});
}

/// take_along_dim: gather after broadcasting self and indices in every dim
/// but `dim`; with no dim, take on the flattened self.
Results decomposeTakeAlongDim(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx), *index = ctx.value("indices");
  if (!ctx.has("dim"))
    return finish(ctx, {indexWith(e, flatten(e, x), {flatten(e, index)})});
  if (rankOf(x) != rankOf(index))
    rewriteFail("take_along_dim needs self and indices of the same rank, got " +
                std::to_string(rankOf(x)) + " and " + std::to_string(rankOf(index)));
  int64_t dim = dimArg(ctx, x, "dim", 0);
  Sizes xs = sizesOf(x), is = sizesOf(index);
  for (int64_t d = 0; d < rankOf(x); ++d) {
    if (d == dim)
      continue;
    const SymExpr *big = xs[d]->isConst() && xs[d]->constant() == 1 ? is[d] : xs[d];
    xs[d] = is[d] = big;
  }
  return finish(ctx, {gatherAlong(e, e.expand(x, xs), dim, e.expand(index, is))});
}

/// put: index_put into the flattened self.
Results decomposePut(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Value *flat = flatten(e, x);
  int64_t n = staticSize(sizesOf(flat)[0], "put's element count");
  Value *index = wrapIndex(e, flatten(e, ctx.value("index")), n);
  Value *out =
      e.op(ops::aten_index_put_default, {{"self", flat},
                                         {"indices", std::vector<Value *>{index}},
                                         {"values", flatten(e, ctx.value("source"))},
                                         {"accumulate", ctx.boolean("accumulate", false)}});
  return finish(ctx, {e.reshape(out, sizesOf(x))});
}

/// index_fill: where the position along dim is one of the indices, value.
Results decomposeIndexFill(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  int64_t rank = rankOf(x), dim = dimArg(ctx, x, "dim", 0);
  int64_t n = rank == 0 ? 1 : staticSize(sizesOf(x)[dim], "the filled dim");
  DType dtype = typeOf(x).dtype;
  Value *index = wrapIndex(e, flatten(e, ctx.value("index")), n);
  Value *hit =
      e.op(ops::aten_any_dim,
           {{"self", e.compare(Cmp::Eq, e.unsqueeze(e.arange(n), 1), e.unsqueeze(index, 0))},
            {"dim", int64_t(1)}});
  hit = rank == 0 ? e.reshape(hit, {}) : e.alongDim(hit, dim, rank);
  Value *value = isTensorArg(ctx, "value") ? e.cast(ctx.value("value"), dtype)
                                           : e.scalar(number(ctx, "value"), dtype);
  return finish(ctx, {e.where(hit, value, x)});
}

std::vector<Value *> clampedIndices(RewriteContext &ctx, Emit &e, Value *x) {
  std::vector<Value *> indices = ctx.values("indices");
  for (size_t d = 0; d < indices.size(); ++d)
    if (indices[d])
      indices[d] = clampIndex(e, indices[d], staticSize(sizesOf(x)[d], "an indexed dim"));
  return indices;
}

/// _unsafe_masked_index: self[indices] where mask, else fill; indices
/// outside self are clamped (they are only read where mask is false).
Results decomposeUnsafeMaskedIndex(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Value *read = indexWith(e, x, clampedIndices(ctx, e, x));
  Value *fill = e.scalar(number(ctx, "fill"), typeOf(x).dtype);
  return finish(ctx, {e.where(ctx.value("mask"), read, fill)});
}

Results decomposeUnsafeMaskedIndexPutAccumulate(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Value *values = ctx.value("values");
  Value *zero = e.scalar(Number::integer(0), typeOf(values).dtype);
  return finish(
      ctx, {e.op(ops::aten_index_put_default, {{"self", x},
                                               {"indices", clampedIndices(ctx, e, x)},
                                               {"values", e.where(ctx.value("mask"), values, zero)},
                                               {"accumulate", true}})});
}

/// masked_scatter: the k-th true element of the mask (in row-major order)
/// takes source's k-th element; k is a running count of the mask, kept
/// inside source where the mask is false (or source too short, which torch
/// refuses). An empty source leaves self as it is (the mask must be false).
Results decomposeMaskedScatter(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Value *source = flatten(e, ctx.value("source"));
  int64_t n = staticSize(sizesOf(source)[0], "masked_scatter's source");
  if (n == 0)
    return finish(ctx, {e.clone(x)});
  Value *mask = flatten(e, e.expand(ctx.value("mask"), sizesOf(x)));
  Value *k = e.sub(cumsum(e, mask, 0), int64_t(1));
  k = e.minimum(e.maximum(k, int64Scalar(e, 0)), int64Scalar(e, n - 1));
  Value *read = indexWith(e, source, {k});
  return finish(ctx, {e.reshape(e.where(mask, read, flatten(e, x)), sizesOf(x))});
}

/// scatter.reduce (the deprecated form): scatter_reduce with self included.
Results decomposeScatterReduce(RewriteContext &ctx) {
  Emit e(ctx);
  std::string reduce = ctx.string("reduce", "");
  const char *as = reduce == "add" ? "sum" : reduce == "multiply" ? "prod" : nullptr;
  if (!as)
    rewriteFail("scatter reduce '" + reduce + "' is not supported (add or multiply)");
  Value *x = self(ctx);
  return finish(ctx, {e.op(ops::aten_scatter_reduce_two, {{"self", x},
                                                          {"dim", dimArg(ctx, x, "dim", 0)},
                                                          {"index", ctx.value("index")},
                                                          {"src", ctx.value("src")},
                                                          {"reduce", as},
                                                          {"include_self", true}})});
}

/// nonzero_static: row r holds the coordinates of the r-th nonzero element
/// (found as the one whose running count is r + 1), fill_value past the
/// last one.
Results decomposeNonzeroStatic(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  int64_t rows = ctx.integer("size");
  Sizes sizes = sizesOf(x);
  Value *nz = flatten(e, e.compare(Cmp::Ne, x, Number::integer(0)));
  int64_t n = staticSize(sizesOf(nz)[0], "nonzero_static's element count");
  Value *rank = e.sub(cumsum(e, nz, 0), int64_t(1));
  Value *hit =
      e.op(ops::aten_logical_and_default,
           {{"self", e.unsqueeze(nz, 0)},
            {"other", e.compare(Cmp::Eq, e.unsqueeze(rank, 0), e.unsqueeze(e.arange(rows), 1))}});
  Value *source = e.sum(e.where(hit, e.unsqueeze(e.arange(n), 0), int64Scalar(e, 0)), {1}, true);
  Value *found = e.op(ops::aten_any_dim, {{"self", hit}, {"dim", int64_t(1)}, {"keepdim", true}});
  std::vector<Value *> coords;
  int64_t stride = 1;
  for (int64_t d = rankOf(x) - 1; d >= 0; --d) {
    int64_t size = staticSize(sizes[d], "nonzero_static's dims");
    Value *c =
        e.op(ops::aten_div_Tensor_mode,
             {{"self", source}, {"other", int64Scalar(e, stride)}, {"rounding_mode", "floor"}});
    coords.insert(coords.begin(),
                  e.op(ops::aten_remainder_Tensor, {{"self", c}, {"other", int64Scalar(e, size)}}));
    stride *= size;
  }
  if (coords.empty())
    return finish(ctx, {e.full({e.syms().constant(rows), e.syms().constant(0)}, Number::integer(0),
                               DType::Int64)});
  Value *fill = int64Scalar(e, ctx.integer("fill_value", -1));
  return finish(ctx, {e.where(found, e.cat(coords, 1), fill)});
}

/// repeat_interleave.self_int: each element repeated along a new dim after
/// `dim`, then the two dims merged.
Results decomposeRepeatInterleave(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  int64_t dim = 0;
  if (ctx.has("dim"))
    dim = dimArg(ctx, x, "dim", 0);
  else
    x = flatten(e, x);
  if (rankOf(x) == 0)
    x = e.unsqueeze(x, 0);
  Sizes sizes = sizesOf(x);
  sizes.insert(sizes.begin() + dim + 1, e.syms().constant(ctx.integer("repeats")));
  Value *spread = e.expand(e.unsqueeze(x, dim + 1), sizes);
  return finish(ctx, {e.reshape(spread, ctx.resultType().sizes)});
}

//===----------------------------------------------------------------------===//
// Searches
//===----------------------------------------------------------------------===//

/// How many entries of each row of `sorted` (last dim) come before each
/// value: those smaller (or not larger, for `right`). `sorted` holds one
/// row per row of `values`' leading dims, or one row for all.
Value *countBefore(Emit &e, Value *sorted, Value *values, bool right) {
  Value *v = e.unsqueeze(values, -1);
  Value *s = rankOf(sorted) == 1 ? sorted : e.unsqueeze(sorted, -2);
  // "Not after" rather than "before", so that NaN comes after everything.
  Value *before = e.logicalNot(e.compare(right ? Cmp::Lt : Cmp::Le, v, s));
  return e.sum(before, {rankOf(v) - 1}, false, DType::Int64);
}

Results decomposeBucketize(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx,
                {countBefore(e, ctx.value("boundaries"), self(ctx), ctx.boolean("right", false))});
}

Results decomposeSearchsorted(RewriteContext &ctx) {
  Emit e(ctx);
  Value *sorted = ctx.value("sorted_sequence");
  if (ctx.has("sorter"))
    sorted = gatherAlong(e, sorted, rankOf(sorted) - 1, ctx.value("sorter"));
  bool right = ctx.boolean("right", false) || ctx.string("side", "left") == "right";
  return finish(ctx, {countBefore(e, sorted, self(ctx), right)});
}

/// isin: any of the test elements equal to the element.
Results decomposeIsin(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("elements");
  Value *eq = e.compare(Cmp::Eq, e.unsqueeze(flatten(e, x), 1),
                        e.unsqueeze(flatten(e, ctx.value("test_elements")), 0));
  Value *in = e.reshape(e.op(ops::aten_any_dim, {{"self", eq}, {"dim", int64_t(1)}}), sizesOf(x));
  return finish(ctx, {ctx.boolean("invert", false) ? e.logicalNot(in) : in});
}

//===----------------------------------------------------------------------===//
// Sorting and order statistics
//===----------------------------------------------------------------------===//

/// sort.stable (gc's sort is always stable), argsort and msort.
Results decomposeSortStable(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  auto [values, indices] =
      sortAlong(e, x, dimArg(ctx, x, "dim", -1), ctx.boolean("descending", false));
  return finish(ctx, {values, indices});
}

Results decomposeArgsort(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  return finish(
      ctx, {sortAlong(e, x, dimArg(ctx, x, "dim", -1), ctx.boolean("descending", false)).second});
}

Results decomposeMsort(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {sortAlong(e, self(ctx), 0, false).first});
}

/// An order statistic's input: self with the reduced dim, or self
/// flattened (`flat`), as at least 1-D.
struct Rows {
  Value *x;
  int64_t dim;
  int64_t n;
};
Rows rowsOf(RewriteContext &ctx, Emit &e, bool flat) {
  Value *x = self(ctx);
  int64_t dim = 0;
  if (flat)
    x = flatten(e, x);
  else
    dim = dimArg(ctx, x, "dim", -1);
  if (rankOf(x) == 0)
    x = e.unsqueeze(x, 0);
  return {x, dim, staticSize(sizesOf(x)[dim], "the reduced dim")};
}

/// Sorted values and indices read at `pos` (keepdim-shaped), with the dim
/// dropped unless `keepdim`; results reshaped to the recorded sizes.
Results pickSorted(RewriteContext &ctx, Emit &e, const Rows &r, Value *values, Value *indices,
                   Value *pos, bool withIndices) {
  std::vector<Value *> out = {gatherAlong(e, values, r.dim, pos)};
  if (withIndices)
    out.push_back(gatherAlong(e, indices, r.dim, pos));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = e.reshape(out[i], ctx.resultType(i).sizes);
  return finish(ctx, out);
}

/// A keepdim-shaped int64 tensor holding `v` at every row.
Value *atEveryRow(Emit &e, const Rows &r, int64_t v) {
  Sizes sizes = sizesOf(r.x);
  sizes[r.dim] = e.syms().constant(1);
  return e.full(sizes, Number::integer(v), DType::Int64);
}

/// The number of NaN in each row (keepdim), or null for non-floating rows.
Value *nanCount(Emit &e, const Rows &r) {
  if (!isFloatingPoint(typeOf(r.x).dtype))
    return nullptr;
  return e.sum(e.unary(ops::aten_isnan_default, r.x), {r.dim}, true, DType::Int64);
}

/// median and nanmedian: the lower of the two middle elements of the sorted
/// row. NaN sorts last: median gives the first NaN of a row that has one,
/// nanmedian the middle of the numbers (a NaN for a row of NaN only).
Results median(RewriteContext &ctx, bool flat, bool ignoreNan) {
  Emit e(ctx);
  Rows r = rowsOf(ctx, e, flat);
  auto [values, indices] = sortAlong(e, r.x, r.dim, false);
  Value *pos = atEveryRow(e, r, (r.n - 1) / 2);
  if (Value *nans = nanCount(e, r)) {
    Value *numbers = e.sub(int64Scalar(e, r.n), nans);
    if (ignoreNan)
      pos = e.op(ops::aten_div_Tensor_mode,
                 {{"self", e.maximum(e.sub(numbers, int64_t(1)), int64Scalar(e, 0))},
                  {"other", int64Scalar(e, 2)},
                  {"rounding_mode", "floor"}});
    else
      pos = e.where(e.compare(Cmp::Gt, nans, Number::integer(0)), numbers, pos);
  }
  return pickSorted(ctx, e, r, values, indices, pos, !flat);
}
Results decomposeMedian(RewriteContext &ctx) { return median(ctx, true, false); }
Results decomposeMedianDim(RewriteContext &ctx) { return median(ctx, false, false); }
Results decomposeNanmedian(RewriteContext &ctx) { return median(ctx, true, true); }
Results decomposeNanmedianDim(RewriteContext &ctx) { return median(ctx, false, true); }

Results decomposeKthvalue(RewriteContext &ctx) {
  Emit e(ctx);
  Rows r = rowsOf(ctx, e, false);
  int64_t k = ctx.integer("k");
  if (k < 1 || k > r.n)
    rewriteFail("kthvalue's k = " + std::to_string(k) + " is outside [1, " + std::to_string(r.n) +
                "]");
  auto [values, indices] = sortAlong(e, r.x, r.dim, false);
  return pickSorted(ctx, e, r, values, indices, atEveryRow(e, r, k - 1), true);
}

/// mode: the value seen most often (the smallest of several), and the last
/// position where it occurs.
Results decomposeMode(RewriteContext &ctx) {
  Emit e(ctx);
  Rows r = rowsOf(ctx, e, false);
  Value *x = e.transpose(r.x, r.dim, -1);
  int64_t last = rankOf(x) - 1;
  Value *counts = e.sum(e.compare(Cmp::Eq, e.unsqueeze(x, -1), e.unsqueeze(x, -2)), {last + 1},
                        false, DType::Int64);
  Value *most = e.compare(Cmp::Eq, counts, e.amax(counts, {last}, true));
  Value *value = e.amin(e.where(most, x, e.amax(x, {last}, true)), {last}, true);
  Value *at = e.where(e.compare(Cmp::Eq, x, value), e.arange(r.n), int64Scalar(e, -1));
  Value *index = e.amax(at, {last}, true);
  std::vector<Value *> out = {value, index};
  for (size_t i = 0; i < 2; ++i)
    out[i] = e.reshape(e.transpose(out[i], r.dim, -1), ctx.resultType(i).sizes);
  return finish(ctx, out);
}

/// quantile and nanquantile at a number q: the sorted row read at
/// q * (count - 1), between its two neighbours as `interpolation` says.
/// quantile gives NaN for a row with a NaN; nanquantile counts the numbers
/// only.
Results quantile(RewriteContext &ctx, bool ignoreNan) {
  Emit e(ctx);
  Rows r = rowsOf(ctx, e, !ctx.has("dim"));
  double q = ctx.real("q");
  if (!(q >= 0 && q <= 1)) {
    std::ostringstream os;
    os << "quantile's q = " << q << " is outside [0, 1]";
    rewriteFail(os.str());
  }
  DType dtype = typeOf(r.x).dtype;
  if (!isFloatingPoint(dtype))
    rewriteFail("quantile of a non-floating tensor is not supported");
  auto [values, indices] = sortAlong(e, r.x, r.dim, false);
  Value *nans = nanCount(e, r);
  Value *count = ignoreNan ? e.sub(int64Scalar(e, r.n), nans) : atEveryRow(e, r, r.n);
  Value *rank = e.mul(e.cast(e.maximum(e.sub(count, int64_t(1)), int64Scalar(e, 0)), dtype), q);
  if (!ignoreNan)
    rank = e.where(e.compare(Cmp::Gt, nans, Number::integer(0)),
                   e.scalar(Number::integer(r.n - 1), dtype), rank);
  std::string mode = ctx.string("interpolation", "linear");
  Value *lo = e.unary(ops::aten_floor_default, rank), *hi = e.unary(ops::aten_ceil_default, rank);
  if (mode == "lower")
    hi = lo;
  else if (mode == "higher")
    lo = hi;
  else if (mode == "nearest")
    lo = hi = e.unary(ops::aten_round_default, rank);
  else if (mode != "linear" && mode != "midpoint")
    rewriteFail("quantile interpolation '" + mode + "' is not supported");
  Value *out = gatherAlong(e, values, r.dim, e.cast(lo, DType::Int64));
  if (lo != hi) {
    Value *above = gatherAlong(e, values, r.dim, e.cast(hi, DType::Int64));
    Value *weight = mode == "midpoint" ? e.scalar(Number::real(0.5), dtype) : e.sub(rank, lo);
    out = e.add(out, e.mul(e.sub(above, out), weight));
  }
  return finish(ctx, {e.reshape(out, ctx.resultType().sizes)});
}
Results decomposeQuantile(RewriteContext &ctx) { return quantile(ctx, false); }
Results decomposeNanquantile(RewriteContext &ctx) { return quantile(ctx, true); }

const DecompositionEntry kIndexingDecompositions[] = {
    {ops::aten__unsafe_masked_index_default, decomposeUnsafeMaskedIndex},
    {ops::aten__unsafe_masked_index_put_accumulate_default,
     decomposeUnsafeMaskedIndexPutAccumulate},
    {ops::aten_argsort_default, decomposeArgsort},
    {ops::aten_argsort_stable, decomposeArgsort},
    {ops::aten_bucketize_Tensor, decomposeBucketize},
    {ops::aten_index_fill_int_Scalar, decomposeIndexFill},
    {ops::aten_index_fill_int_Tensor, decomposeIndexFill},
    {ops::aten_isin_Tensor_Tensor, decomposeIsin},
    {ops::aten_kthvalue_default, decomposeKthvalue},
    {ops::aten_masked_scatter_default, decomposeMaskedScatter},
    {ops::aten_median_default, decomposeMedian},
    {ops::aten_median_dim, decomposeMedianDim},
    {ops::aten_mode_default, decomposeMode},
    {ops::aten_msort_default, decomposeMsort},
    {ops::aten_nanmedian_default, decomposeNanmedian},
    {ops::aten_nanmedian_dim, decomposeNanmedianDim},
    {ops::aten_nanquantile_scalar, decomposeNanquantile},
    {ops::aten_nonzero_static_default, decomposeNonzeroStatic},
    {ops::aten_put_default, decomposePut},
    {ops::aten_quantile_scalar, decomposeQuantile},
    {ops::aten_repeat_interleave_self_int, decomposeRepeatInterleave},
    {ops::aten_scatter_reduce, decomposeScatterReduce},
    {ops::aten_searchsorted_Tensor, decomposeSearchsorted},
    {ops::aten_sort_stable, decomposeSortStable},
    {ops::aten_take_along_dim_default, decomposeTakeAlongDim},
    {ops::aten_take_default, decomposeTake},
};

} // namespace

void registerIndexingDecompositions(DecompositionRegistry &r) { r.add(kIndexingDecompositions); }

} // namespace gc
