//===- Shape.cpp - Decompositions of view, shape and creation ops ---------===//
//
// Reshapes become core views where the strides gc infers allow it, else a
// contiguous copy and a view: decomposed ops give contiguous results where
// torch's may have been permuted, so a view that was valid in the exported
// graph need not be valid here. Splits become slices and selects,
// transposes permutes, creation ops full and arange.start_step, and copies
// that change nothing disappear. The *_copy ops are the view they name,
// cloned; views no core view expresses (diagonal, unfold) become as_strided
// with the strides their shape function computes.
//
//===----------------------------------------------------------------------===//
#include "gc/Ops/Emit.h"

#include "gc/IR/ShapeMath.h"
#include "gc/Ops/ShapeInference.h"

#include <limits>
#include <numeric>

namespace gc {

namespace {

using namespace decompose;

constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();

Value *self(RewriteContext &ctx) { return ctx.value("self"); }

/// The old node's result sizes: what every reshape-like op produces.
const Sizes &resultSizes(RewriteContext &ctx, size_t i = 0) { return ctx.resultType(i).sizes; }

int64_t wrappedDim(RewriteContext &ctx, Value *x, std::string_view name, int64_t dflt) {
  return wrapDimension(ctx.integer(name, dflt), rankOf(x));
}

//===----------------------------------------------------------------------===//
// Reshapes and permutes
//===----------------------------------------------------------------------===//

/// view, reshape, _unsafe_view: the size argument is kept as written, since
/// it may hold -1 or symbolic values.
Results reshapeWithArg(RewriteContext &ctx, std::string_view sizeName) {
  Emit e(ctx);
  return finish(ctx, {e.reshape(self(ctx), resultSizes(ctx), ctx.passThrough(sizeName))});
}
Results decomposeView(RewriteContext &ctx) { return reshapeWithArg(ctx, "size"); }
Results decomposeReshape(RewriteContext &ctx) { return reshapeWithArg(ctx, "shape"); }

/// flatten, unflatten, ravel, view_as, reshape_as: a reshape to the
/// recorded sizes.
Results decomposeToResultSizes(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {e.reshape(self(ctx), resultSizes(ctx))});
}

/// expand_as, broadcast_to: an expand to the sizes the old node recorded.
Results decomposeExpandAs(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {e.expand(self(ctx), resultSizes(ctx))});
}

/// mT, mH, matrix_H (real tensors: no conjugation): the last two dims
/// swapped; numpy_T: every dim reversed.
Results decomposeMatrixTranspose(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  return finish(ctx, {e.transpose(x, rankOf(x) - 2, rankOf(x) - 1)});
}
Results decomposeNumpyT(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Dims dims(rankOf(x));
  for (int64_t i = 0; i < rankOf(x); ++i)
    dims[i] = rankOf(x) - 1 - i;
  return finish(ctx, {e.permute(x, dims)});
}

Results decomposeTranspose(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {e.transpose(self(ctx), ctx.integer("dim0"), ctx.integer("dim1"))});
}

Results decomposeT(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  return finish(ctx, {rankOf(x) < 2 ? x : e.permute(x, {1, 0})});
}

Results decomposeMovedim(RewriteContext &ctx) {
  Value *x = self(ctx);
  Dims perm = movedimPermutation(ctx.ints("source"), ctx.ints("destination"), rankOf(x));
  Emit e(ctx);
  return finish(ctx, {e.permute(x, perm)});
}

Results decomposeSqueezeDim(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  return finish(ctx, {e.squeeze(x, {wrappedDim(ctx, x, "dim", 0)})});
}

Results decomposeSqueeze(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Dims ones;
  for (int64_t d = 0; d < rankOf(x); ++d)
    if (sizesOf(x)[d]->isConst() && sizesOf(x)[d]->constant() == 1)
      ones.push_back(d);
  return finish(ctx, {e.squeeze(x, ones)});
}

//===----------------------------------------------------------------------===//
// Splits
//===----------------------------------------------------------------------===//

/// Consecutive slices of `dim` with the given lengths; the last one runs to
/// the end (its length may be symbolic).
std::vector<Value *> slicesOf(Emit &e, Value *x, int64_t dim, const Dims &lengths) {
  std::vector<Value *> out;
  int64_t start = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    int64_t end = i + 1 == lengths.size() ? kToEnd : start + lengths[i];
    out.push_back(e.slice(x, dim, start, end));
    start += lengths[i];
  }
  return out;
}

/// split.Tensor and chunk: equal pieces of `piece` (the last may be
/// shorter), as many as the node has results.
Results splitEvenly(RewriteContext &ctx, Value *x, int64_t dim, int64_t piece) {
  Emit e(ctx);
  Dims lengths(ctx.node().results().size(), piece);
  return finish(ctx, slicesOf(e, x, dim, lengths));
}

Results decomposeSplit(RewriteContext &ctx) {
  Value *x = self(ctx);
  return splitEvenly(ctx, x, wrappedDim(ctx, x, "dim", 0), ctx.integer("split_size"));
}

Results decomposeChunk(RewriteContext &ctx) {
  Value *x = self(ctx);
  int64_t dim = wrappedDim(ctx, x, "dim", 0);
  int64_t size = staticSize(sizesOf(x)[dim], "the chunked dim");
  int64_t chunks = ctx.integer("chunks");
  if (chunks <= 0)
    rewriteFail("chunk: chunks must be positive");
  return splitEvenly(ctx, x, dim, std::max<int64_t>((size + chunks - 1) / chunks, 1));
}

Results decomposeSplitWithSizes(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  return finish(ctx, slicesOf(e, x, wrappedDim(ctx, x, "dim", 0), ctx.ints("split_sizes")));
}

Results decomposeUnbind(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  int64_t dim = wrappedDim(ctx, x, "dim", 0);
  std::vector<Value *> out;
  for (size_t i = 0; i < ctx.node().results().size(); ++i)
    out.push_back(e.select(x, dim, static_cast<int64_t>(i)));
  return finish(ctx, out);
}

Results decomposeNarrow(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  int64_t dim = wrappedDim(ctx, x, "dim", 0);
  int64_t start = ctx.integer("start"), length = ctx.integer("length");
  if (start < 0)
    start += staticSize(sizesOf(x)[dim], "the narrowed dim");
  return finish(ctx, {e.slice(x, dim, start, start + length)});
}

//===----------------------------------------------------------------------===//
// Copies, casts and no-ops
//===----------------------------------------------------------------------===//

Results decomposeIdentity(RewriteContext &ctx) { return finish(ctx, {self(ctx)}); }

Results decomposeContiguous(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  const TensorType &t = typeOf(x);
  bool contiguous = t.strides == contiguousStrides(e.syms(), t.sizes);
  return finish(ctx, {contiguous ? x : e.clone(x)});
}

/// to.dtype, to.dtype_layout, to.device, to.other and type_as: a _to_copy when the
/// dtype or the device changes, else nothing (gc's graphs are functional,
/// so `copy=True` needs no copy).
Results decomposeTo(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  const TensorType &want = ctx.resultType();
  if (typeOf(x).device == want.device)
    return finish(ctx, {e.cast(x, want.dtype)});
  Arg device;
  device.kind = ArgKind::Device;
  device.device = want.device;
  return finish(ctx, {e.op(ops::aten__to_copy_default,
                           {{"self", x}, {"dtype", want.dtype}, {"device", ArgValue(device)}})});
}

/// Checks torch.export inserts; the types they check are in the graph.
Results decomposeToNothing(RewriteContext &) { return std::vector<Value *>{}; }

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

/// full, ones, zeros, new_*, scalar_tensor: a full of the recorded type.
Results fullOfResult(RewriteContext &ctx, Number v) {
  Emit e(ctx);
  return finish(ctx, {e.full(resultSizes(ctx), v, ctx.resultType().dtype)});
}
Results decomposeZeros(RewriteContext &ctx) { return fullOfResult(ctx, Number::integer(0)); }
Results decomposeOnes(RewriteContext &ctx) { return fullOfResult(ctx, Number::integer(1)); }
Results decomposeNewFull(RewriteContext &ctx) {
  return fullOfResult(ctx, number(ctx, "fill_value"));
}
Results decomposeScalarTensor(RewriteContext &ctx) { return fullOfResult(ctx, number(ctx, "s")); }

/// *_like: a full of self's sizes (symbolic ones included).
Results fullLikeSelf(RewriteContext &ctx, Number v) {
  Emit e(ctx);
  return finish(ctx, {e.fullLike(self(ctx), v, ctx.resultType().dtype)});
}
Results decomposeZerosLike(RewriteContext &ctx) { return fullLikeSelf(ctx, Number::integer(0)); }
Results decomposeOnesLike(RewriteContext &ctx) { return fullLikeSelf(ctx, Number::integer(1)); }
Results decomposeFullLike(RewriteContext &ctx) {
  return fullLikeSelf(ctx, number(ctx, "fill_value"));
}

/// arange.default and arange.start: arange.start_step with the recorded
/// dtype (torch picks it from the kinds of the bounds).
Results decomposeArange(RewriteContext &ctx) {
  Emit e(ctx);
  ArgValue start = ctx.has("start") ? ctx.passThrough("start") : ArgValue(int64_t(0));
  Arg device;
  device.kind = ArgKind::Device;
  device.device = ctx.resultType().device;
  return finish(ctx, {e.op(ops::aten_arange_start_step, {{"start", start},
                                                      {"end", ctx.passThrough("end")},
                                                      {"step", int64_t(1)},
                                                      {"dtype", ctx.resultType().dtype},
                                                      {"device", ArgValue(device)}})});
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

Results decomposeStack(RewriteContext &ctx) {
  Emit e(ctx);
  std::vector<Value *> xs = ctx.values("tensors");
  if (xs.empty())
    rewriteFail("stack needs at least one tensor");
  int64_t dim = wrapDimension(ctx.integer("dim", 0), rankOf(xs[0]) + 1);
  for (Value *&x : xs)
    x = e.unsqueeze(x, dim);
  return finish(ctx, {e.cat(xs, dim)});
}

Results decomposeBroadcastTensors(RewriteContext &ctx) {
  Emit e(ctx);
  std::vector<Value *> xs = ctx.values("tensors");
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = e.expand(xs[i], resultSizes(ctx, i));
  return finish(ctx, xs);
}

/// repeat: each dim i becomes (repeat_i, size_i) through a size-1 dim
/// expanded to repeat_i, then the pairs merge.
Value *repeated(Emit &e, Value *x, const Dims &repeats) {
  int64_t n = static_cast<int64_t>(repeats.size());
  if (n < rankOf(x))
    rewriteFail("repeat: fewer repeats than dims");
  Sizes padded(n - rankOf(x), e.syms().constant(1));
  padded.insert(padded.end(), sizesOf(x).begin(), sizesOf(x).end());
  if (rankOf(x) != n)
    x = e.reshape(x, padded);
  Sizes pairs, merged;
  for (int64_t i = 0; i < n; ++i) {
    x = e.unsqueeze(x, 2 * i);
    pairs.push_back(e.syms().constant(repeats[i]));
    pairs.push_back(padded[i]);
    merged.push_back(e.syms().mul(pairs[2 * i], padded[i]));
  }
  return e.reshape(e.expand(x, pairs), merged);
}

Results decomposeRepeat(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {repeated(e, self(ctx), ctx.ints("repeats"))});
}

/// tile: repeat, with 1s put before the repeats when self has more dims.
Results decomposeTile(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Dims reps = ctx.ints("dims");
  if (static_cast<int64_t>(reps.size()) < rankOf(x))
    reps.insert(reps.begin(), rankOf(x) - reps.size(), 1);
  return finish(ctx, {repeated(e, x, reps)});
}

/// roll along one dim: the last `shift` elements move to the front.
Value *rollDim(Emit &e, Value *x, int64_t shift, int64_t dim) {
  int64_t n = staticSize(sizesOf(x)[dim], "the rolled dim");
  if (n == 0)
    return x;
  int64_t s = ((shift % n) + n) % n;
  if (s == 0)
    return x;
  return e.cat({e.slice(x, dim, n - s, n), e.slice(x, dim, 0, n - s)}, dim);
}

Results decomposeRoll(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Dims shifts = ctx.ints("shifts");
  Dims dims = ctx.has("dims") ? ctx.ints("dims") : Dims{};
  if (dims.empty()) {
    // Roll the flattened tensor.
    if (shifts.size() != 1)
      rewriteFail("roll without dims takes one shift");
    Value *flat = e.reshape(x, {sizeProduct(e.syms(), sizesOf(x))});
    Value *rolled = rollDim(e, flat, shifts[0], 0);
    return finish(ctx, {e.reshape(rolled, sizesOf(x))});
  }
  if (shifts.size() != dims.size())
    rewriteFail("roll: shifts and dims differ in length");
  for (size_t i = 0; i < dims.size(); ++i)
    x = rollDim(e, x, shifts[i], wrapDimension(dims[i], rankOf(x)));
  return finish(ctx, {x});
}

/// tril and triu: keep the elements whose column minus row is at most
/// (tril) or at least (triu) the diagonal offset.
Results triangle(RewriteContext &ctx, Cmp keepCompare) {
  Emit e(ctx);
  Value *x = self(ctx);
  int64_t rank = rankOf(x);
  if (rank < 2)
    rewriteFail("tril/triu need at least two dims");
  int64_t rows = staticSize(sizesOf(x)[rank - 2], "the row dim");
  int64_t cols = staticSize(sizesOf(x)[rank - 1], "the column dim");
  Value *offset = e.sub(e.arange(cols), e.unsqueeze(e.arange(rows), 1));
  Value *keep = e.compare(keepCompare, offset, Number::integer(ctx.integer("diagonal", 0)));
  Value *zero = e.scalar(Number::integer(0), typeOf(x).dtype);
  return finish(ctx, {e.where(keep, x, zero)});
}
Results decomposeTril(RewriteContext &ctx) { return triangle(ctx, Cmp::Le); }
Results decomposeTriu(RewriteContext &ctx) { return triangle(ctx, Cmp::Ge); }

Results decomposeDiff(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  int64_t dim = wrappedDim(ctx, x, "dim", -1);
  std::vector<Value *> parts;
  if (ctx.has("prepend"))
    parts.push_back(ctx.value("prepend"));
  parts.push_back(x);
  if (ctx.has("append"))
    parts.push_back(ctx.value("append"));
  if (parts.size() > 1)
    x = e.cat(parts, dim);
  bool isBool = typeOf(x).dtype == DType::Bool;
  for (int64_t i = 0, n = ctx.integer("n", 1); i < n; ++i) {
    int64_t len = staticSize(sizesOf(x)[dim], "the differenced dim");
    Value *next = e.slice(x, dim, 1, kToEnd);
    Value *prev = e.slice(x, dim, 0, std::max<int64_t>(len - 1, 0));
    // Booleans differ by exclusive or, as in torch.
    x = isBool ? e.compare(Cmp::Ne, next, prev) : e.sub(next, prev);
  }
  return finish(ctx, {x});
}

/// `index` with the tensor `index` at position `dim` and every other
/// position None.
Value *indexAlong(Emit &e, Value *x, int64_t dim, Value *index) {
  std::vector<Value *> indices(dim, nullptr);
  indices.push_back(index);
  return e.op(ops::aten_index_Tensor, {{"self", x}, {"indices", indices}});
}

Results decomposeIndexSelect(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Value *index = ctx.value("index");
  // A 0-dim index still selects along a dim of length 1; a 0-dim self is
  // indexed as a 1-element vector.
  if (rankOf(index) == 0)
    index = e.unsqueeze(index, 0);
  if (rankOf(x) == 0)
    return finish(ctx, {e.reshape(indexAlong(e, e.unsqueeze(x, 0), 0, index), resultSizes(ctx))});
  return finish(ctx, {indexAlong(e, x, wrappedDim(ctx, x, "dim", 0), index)});
}

Results decomposeEmbedding(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {indexAlong(e, ctx.value("weight"), 0, ctx.value("indices"))});
}

/// index_add, index_copy and index_reduce: `scatter` (scatter_add,
/// scatter.src or scatter_reduce.two, with `extra` arguments) of source into
/// self, with the index spread over source's shape; index_add scales source
/// by alpha first.
Results scatterAlongIndex(RewriteContext &ctx, OpId scatter,
                          std::vector<std::pair<std::string, ArgValue>> extra = {}) {
  Emit e(ctx);
  Value *x = self(ctx), *source = ctx.value("source"), *index = ctx.value("index");
  int64_t dim = wrappedDim(ctx, x, "dim", 0);
  if (ctx.has("alpha"))
    source = e.mul(source, ctx.passThrough("alpha"));
  if (rankOf(source) == 0)
    source = e.unsqueeze(source, 0);
  if (rankOf(index) == 0)
    index = e.unsqueeze(index, 0);
  Sizes along(rankOf(source), e.syms().constant(1));
  along[dim] = sizesOf(index)[0];
  Value *spread = e.expand(e.reshape(index, along), sizesOf(source));
  std::vector<std::pair<std::string, ArgValue>> args = {
      {"self", rankOf(x) == 0 ? e.unsqueeze(x, 0) : x},
      {"dim", dim},
      {"index", spread},
      {"src", source}};
  args.insert(args.end(), extra.begin(), extra.end());
  Value *out = e.op(scatter, std::move(args));
  return finish(ctx, {rankOf(x) == 0 ? e.squeeze(out, {0}) : out});
}

Results decomposeIndexAdd(RewriteContext &ctx) {
  return scatterAlongIndex(ctx, ops::aten_scatter_add_default);
}

Results decomposeIndexCopy(RewriteContext &ctx) {
  return scatterAlongIndex(ctx, ops::aten_scatter_src);
}

/// index_reduce: scatter_reduce.two, whose reductions (prod, mean, amax,
/// amin) and include_self mean the same.
Results decomposeIndexReduce(RewriteContext &ctx) {
  std::string reduce = ctx.string("reduce", "");
  return scatterAlongIndex(
      ctx, ops::aten_scatter_reduce_two,
      {{"reduce", reduce.c_str()}, {"include_self", ctx.boolean("include_self", true)}});
}

/// scatter.value: scatter.src of a tensor of the index's sizes full of the
/// number, in self's dtype.
Results decomposeScatterValue(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx), *index = ctx.value("index");
  Value *src = e.fullLike(index, number(ctx, "value"), ctx.resultType().dtype);
  return finish(ctx, {e.op(ops::aten_scatter_src, {{"self", x},
                                                   {"dim", wrappedDim(ctx, x, "dim", 0)},
                                                   {"index", index},
                                                   {"src", src}})});
}

//===----------------------------------------------------------------------===//
// Views no core view expresses, and copies of views
//===----------------------------------------------------------------------===//

/// diagonal and unfold: as_strided with the sizes, strides and storage
/// offset their shape function gives for self's layout in the new graph.
Results decomposeStridedView(RewriteContext &ctx) {
  Expected<std::vector<Type>> types =
      inferResultTypes(ctx.node().op(), ctx.mappedArgs(), ctx.syms());
  if (!types)
    rewriteFail(types.error().message());
  Emit e(ctx);
  return finish(ctx, {e.asStrided(self(ctx), (*types)[0].tensor)});
}

/// Each X_copy op: the view X returns, copied.
struct CopyOfView {
  OpId copy, view;
};
constexpr CopyOfView kCopiesOfViews[] = {
    {ops::aten_alias_copy_default, ops::aten_alias_default},
    {ops::aten_as_strided_copy_default, ops::aten_as_strided_default},
    {ops::aten_diagonal_copy_default, ops::aten_diagonal_default},
    {ops::aten_expand_copy_default, ops::aten_expand_default},
    {ops::aten_narrow_copy_default, ops::aten_narrow_default},
    {ops::aten_permute_copy_default, ops::aten_permute_default},
    {ops::aten_split_with_sizes_copy_default, ops::aten_split_with_sizes_default},
    {ops::aten_squeeze_copy_default, ops::aten_squeeze_default},
    {ops::aten_t_copy_default, ops::aten_t_default},
    {ops::aten_transpose_copy_int, ops::aten_transpose_int},
    {ops::aten_unbind_copy_int, ops::aten_unbind_int},
    {ops::aten_unfold_copy_default, ops::aten_unfold_default},
    {ops::aten_unsqueeze_copy_default, ops::aten_unsqueeze_default},
    {ops::aten_view_copy_default, ops::aten_view_default},
};

Results decomposeCopyOfView(RewriteContext &ctx) {
  const CopyOfView *entry = std::find_if(std::begin(kCopiesOfViews), std::end(kCopiesOfViews),
                                         [&](const CopyOfView &c) { return c.copy == ctx.node().op(); });
  std::vector<std::pair<std::string, ArgValue>> args;
  for (NamedArg &a : ctx.mappedArgs())
    args.emplace_back(a.name, ArgValue(std::move(a.value)));
  Emit e(ctx);
  std::vector<Value *> out = ctx.builder().create(entry->view, std::move(args));
  for (Value *&v : out)
    v = e.clone(v);
  return finish(ctx, out);
}

//===----------------------------------------------------------------------===//
// Dims added, stacks and splits
//===----------------------------------------------------------------------===//

/// atleast_1d/2d/3d: a 0-dim tensor becomes [1, ..., 1]; a vector of k
/// becomes [1, k] (and [1, k, 1]); a matrix gains a last dim for 3d.
Value *atLeast(Emit &e, Value *x, int64_t n) {
  if (rankOf(x) >= n)
    return x;
  if (rankOf(x) == 0)
    return e.reshape(x, Sizes(n, e.syms().constant(1)));
  if (rankOf(x) == 1)
    x = e.unsqueeze(x, 0);
  return rankOf(x) < n ? e.unsqueeze(x, rankOf(x)) : x;
}
template <int N> Results decomposeAtLeast(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {atLeast(e, self(ctx), N)});
}

/// hstack, vstack, dstack: cat along dim 1, 0 or 2 of the tensors made at
/// least 1-, 2- or 3-dimensional; hstack joins vectors along dim 0.
template <int N> Results decomposeStackN(RewriteContext &ctx) {
  Emit e(ctx);
  std::vector<Value *> xs = ctx.values("tensors");
  if (xs.empty())
    rewriteFail("needs at least one tensor");
  for (Value *&x : xs)
    x = atLeast(e, x, N);
  int64_t dim = N == 1 ? (rankOf(xs[0]) == 1 ? 0 : 1) : N == 2 ? 0 : 2;
  return finish(ctx, {e.cat(xs, dim)});
}

/// column_stack: 0-D and 1-D tensors as columns, then cat along dim 1.
Results decomposeColumnStack(RewriteContext &ctx) {
  Emit e(ctx);
  std::vector<Value *> xs = ctx.values("tensors");
  if (xs.empty())
    rewriteFail("column_stack needs at least one tensor");
  for (Value *&x : xs)
    if (rankOf(x) <= 1)
      x = e.reshape(x, {sizeProduct(e.syms(), sizesOf(x)), e.syms().constant(1)});
  return finish(ctx, {e.cat(xs, 1)});
}

/// tensor_split's pieces of `dim`: [0, b0), [b0, b1), ..., [bk, size), each
/// bound wrapped (if negative) and clamped into the dim.
std::vector<Value *> splitAt(Emit &e, Value *x, int64_t dim, const Dims &bounds) {
  int64_t size = staticSize(sizesOf(x)[dim], "the split dim");
  auto clamp = [&](int64_t b) { return std::clamp<int64_t>(b < 0 ? b + size : b, 0, size); };
  std::vector<Value *> out;
  int64_t start = 0;
  for (size_t i = 0; i <= bounds.size(); ++i) {
    int64_t end = i < bounds.size() ? clamp(bounds[i]) : size;
    out.push_back(e.slice(x, dim, start, std::max(start, end)));
    start = std::max(start, end);
  }
  return out;
}

/// hsplit, vsplit, dsplit: along dim 1 (0 for a vector), 0 or 2, into
/// equal sections (which must divide the dim) or at indices.
template <int Dim> Results decomposeDirectionalSplit(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  int64_t minRank = Dim == 1 ? 1 : Dim + 1 + (Dim == 0);
  if (rankOf(x) < minRank)
    rewriteFail("needs a tensor of at least " + std::to_string(minRank) + " dims, got " +
                std::to_string(rankOf(x)));
  int64_t dim = Dim == 1 && rankOf(x) == 1 ? 0 : Dim;
  if (ctx.has("indices"))
    return finish(ctx, splitAt(e, x, dim, ctx.ints("indices")));
  int64_t size = staticSize(sizesOf(x)[dim], "the split dim");
  int64_t sections = ctx.integer("sections");
  if (sections <= 0 || size % sections != 0)
    rewriteFail("cannot split a dim of size " + std::to_string(size) + " into " +
                std::to_string(sections) + " equal sections");
  Dims bounds;
  for (int64_t i = 1; i < sections; ++i)
    bounds.push_back(i * (size / sections));
  return finish(ctx, splitAt(e, x, dim, bounds));
}

/// _chunk_cat: each tensor's dim padded with zeros to a multiple of
/// num_chunks and viewed as [..., num_chunks, rest], the rest holding a
/// chunk and every dim after it; the tensors joined along that last dim.
Results decomposeChunkCat(RewriteContext &ctx) {
  Emit e(ctx);
  std::vector<Value *> xs = ctx.values("tensors");
  int64_t chunks = ctx.integer("num_chunks");
  if (xs.empty() || chunks <= 0)
    rewriteFail("_chunk_cat needs tensors and a positive num_chunks");
  int64_t dim = wrappedDim(ctx, xs[0], "dim", 0);
  for (Value *&x : xs) {
    if (rankOf(x) <= dim)
      rewriteFail("_chunk_cat: a tensor has no dim " + std::to_string(dim));
    x = e.cast(x, ctx.resultType().dtype);
    int64_t size = staticSize(sizesOf(x)[dim], "the chunked dim");
    int64_t chunk = (size + chunks - 1) / chunks;
    if (chunk * chunks != size) {
      Dims pad(2 * (rankOf(x) - dim), 0);
      pad[2 * (rankOf(x) - 1 - dim) + 1] = chunk * chunks - size;
      x = e.op(ops::aten_constant_pad_nd_default, {{"self", x}, {"pad", pad}, {"value", 0.0}});
    }
    Sizes sizes(sizesOf(x).begin(), sizesOf(x).begin() + dim);
    sizes.push_back(e.syms().constant(chunks));
    Sizes rest(sizesOf(x).begin() + dim + 1, sizesOf(x).end());
    sizes.push_back(e.syms().mul(e.syms().constant(chunk), sizeProduct(e.syms(), rest)));
    x = e.reshape(x, sizes);
  }
  return finish(ctx, {e.cat(xs, dim + 1)});
}

//===----------------------------------------------------------------------===//
// Grids and combinations
//===----------------------------------------------------------------------===//

/// meshgrid: tensor i (0-D or 1-D) along output dim i, expanded to every
/// tensor's length; "xy" indexing swaps the first two output dims.
std::vector<Value *> meshgrid(Emit &e, std::vector<Value *> xs, bool xy) {
  size_t n = xs.size();
  Sizes grid;
  for (Value *&x : xs) {
    if (rankOf(x) > 1)
      rewriteFail("meshgrid takes 0-D and 1-D tensors");
    if (rankOf(x) == 0)
      x = e.reshape(x, {e.syms().constant(1)});
    grid.push_back(sizesOf(x)[0]);
  }
  std::vector<size_t> at(n);
  std::iota(at.begin(), at.end(), 0);
  if (xy && n >= 2)
    std::swap(at[0], at[1]);
  Sizes out(n);
  for (size_t i = 0; i < n; ++i)
    out[at[i]] = grid[i];
  for (size_t i = 0; i < n; ++i) {
    Sizes along(n, e.syms().constant(1));
    along[at[i]] = grid[i];
    xs[i] = e.expand(e.reshape(xs[i], along), out);
  }
  return xs;
}

Results decomposeMeshgrid(RewriteContext &ctx) {
  std::string indexing = ctx.string("indexing", "ij");
  if (indexing != "ij" && indexing != "xy")
    rewriteFail("meshgrid: indexing must be 'ij' or 'xy', got '" + indexing + "'");
  Emit e(ctx);
  return finish(ctx, meshgrid(e, ctx.values("tensors"), indexing == "xy"));
}

/// cartesian_prod: the flattened "ij" grids as columns; one tensor is
/// returned as it is.
Results decomposeCartesianProd(RewriteContext &ctx) {
  Emit e(ctx);
  std::vector<Value *> xs = ctx.values("tensors");
  if (xs.size() == 1)
    return finish(ctx, {xs[0]});
  std::vector<Value *> cols = meshgrid(e, xs, false);
  for (Value *&c : cols)
    c = e.unsqueeze(e.reshape(c, {sizeProduct(e.syms(), sizesOf(c))}), 1);
  return finish(ctx, {e.cat(cols, 1)});
}

/// The elements of 1-D `x` at the (compile-time) `indices`: runs of equal
/// indices become expanded one-element slices, runs of consecutive ones
/// slices, joined by cat.
Value *elementsAt(Emit &e, Value *x, const Dims &indices) {
  std::vector<Value *> runs;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i + 1;
    bool same = j < indices.size() && indices[j] == indices[i];
    while (j < indices.size() && indices[j] == indices[j - 1] + (same ? 0 : 1))
      ++j;
    int64_t len = static_cast<int64_t>(j - i);
    Value *run = same ? e.expand(e.slice(x, 0, indices[i], indices[i] + 1),
                                 {e.syms().constant(len)})
                      : e.slice(x, 0, indices[i], indices[i] + len);
    runs.push_back(run);
    i = j;
  }
  if (runs.empty())
    return e.slice(x, 0, 0, 0);
  return runs.size() == 1 ? runs[0] : e.cat(runs, 0);
}

/// combinations: every r-element combination of the vector's elements
/// (with repetition if asked), in lexicographic order of their indices,
/// one per row.
Results decomposeCombinations(RewriteContext &ctx) {
  constexpr size_t kMaxRows = 1 << 16;
  Emit e(ctx);
  Value *x = self(ctx);
  if (rankOf(x) != 1)
    rewriteFail("combinations needs a 1-D tensor");
  int64_t n = staticSize(sizesOf(x)[0], "the size of combinations' input");
  int64_t r = ctx.integer("r", 2);
  bool repeat = ctx.boolean("with_replacement", false);
  if (r <= 0)
    rewriteFail("combinations with r = " + std::to_string(r) + " is not supported");
  std::vector<Dims> cols(r);
  Dims pick(r, 0);
  // Advance `pick` through the index tuples in order; each step fixes the
  // last position that can still grow and resets the ones after it.
  auto valid = [&](int64_t k, int64_t v) { return v + (repeat ? 0 : r - 1 - k) < n; };
  for (int64_t k = 0; k < r; ++k)
    pick[k] = repeat ? 0 : k;
  bool more = valid(r - 1, pick[r - 1]) && (repeat || r <= n);
  while (more) {
    if (cols[0].size() == kMaxRows)
      rewriteFail("combinations with more than " + std::to_string(kMaxRows) +
                  " rows is not supported");
    for (int64_t k = 0; k < r; ++k)
      cols[k].push_back(pick[k]);
    int64_t k = r - 1;
    while (k >= 0 && !valid(k, pick[k] + 1))
      --k;
    more = k >= 0;
    if (more) {
      ++pick[k];
      for (int64_t m = k + 1; m < r; ++m)
        pick[m] = repeat ? pick[k] : pick[m - 1] + 1;
    }
  }
  std::vector<Value *> columns;
  for (const Dims &c : cols)
    columns.push_back(e.unsqueeze(elementsAt(e, x, c), 1));
  return finish(ctx, {columns.size() == 1 ? columns[0] : e.cat(columns, 1)});
}

//===----------------------------------------------------------------------===//
// Diagonals
//===----------------------------------------------------------------------===//

/// diag_embed: the last dim of x on the `offset` diagonal of two new dims
/// dim1 (rows) and dim2 (columns), zeros elsewhere. The square matrix is
/// built last, then moved into place.
Value *diagEmbed(Emit &e, Value *x, int64_t offset, int64_t dim1, int64_t dim2) {
  int64_t rank = rankOf(x) + 1;
  if (rankOf(x) == 0)
    rewriteFail("diag_embed needs at least one dim");
  int64_t d1 = wrapDimension(dim1, rank), d2 = wrapDimension(dim2, rank);
  if (d1 == d2)
    rewriteFail("diag_embed needs two different dims");
  int64_t len = staticSize(sizesOf(x).back(), "the embedded dim");
  int64_t shift = offset < 0 ? -offset : offset, n = len + shift;
  if (shift > 0) {
    Dims pad = {0, shift};
    x = e.op(ops::aten_constant_pad_nd_default, {{"self", x}, {"pad", pad}, {"value", 0.0}});
  }
  // Row r holds x[r] for offset >= 0; column c holds x[c] below it.
  x = e.unsqueeze(x, offset >= 0 ? rank - 1 : rank - 2);
  Value *colMinusRow = e.sub(e.arange(n), e.unsqueeze(e.arange(n), 1));
  Value *onDiagonal = e.compare(Cmp::Eq, colMinusRow, Number::integer(offset));
  Value *m = e.where(onDiagonal, x, e.scalar(Number::integer(0), typeOf(x).dtype));
  Dims perm;
  for (int64_t p = 0, batch = 0; p < rank; ++p)
    perm.push_back(p == d1 ? rank - 2 : p == d2 ? rank - 1 : batch++);
  return e.permute(m, perm);
}

Value *diagonal(Emit &e, Value *x, int64_t offset, int64_t dim1, int64_t dim2) {
  return e.op(ops::aten_diagonal_default,
              {{"self", x}, {"offset", offset}, {"dim1", dim1}, {"dim2", dim2}});
}

Results decomposeDiagEmbed(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {diagEmbed(e, self(ctx), ctx.integer("offset", 0), ctx.integer("dim1", -2),
                                ctx.integer("dim2", -1))});
}

/// diag: a vector onto a matrix's diagonal, or a matrix's diagonal copied.
Results decomposeDiag(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  int64_t offset = ctx.integer("diagonal", 0);
  if (rankOf(x) == 1)
    return finish(ctx, {diagEmbed(e, x, offset, 0, 1)});
  if (rankOf(x) != 2)
    rewriteFail("diag needs a 1-D or 2-D tensor, got " + std::to_string(rankOf(x)) + " dims");
  return finish(ctx, {e.clone(diagonal(e, x, offset, 0, 1))});
}

Results decomposeDiagflat(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Value *flat = e.reshape(x, {sizeProduct(e.syms(), sizesOf(x))});
  return finish(ctx, {diagEmbed(e, flat, ctx.integer("offset", 0), 0, 1)});
}

/// self with src written where a view of self would read: the view taken
/// of the element positions 0..numel-1 (laid out as contiguous self) says
/// where each element of src goes, and a scatter into flattened self puts
/// it there.
template <typename ViewFn>
Value *scatterThroughView(Emit &e, Value *x, Value *src, ViewFn view) {
  SymContext &syms = e.syms();
  const SymExpr *numel = sizeProduct(syms, sizesOf(x));
  Value *positions = view(e.reshape(e.arange(staticSize(numel, "self's size")), sizesOf(x)));
  if (sizesOf(positions) != sizesOf(src))
    rewriteFail("src's sizes do not match the view's");
  Sizes count = {sizeProduct(syms, sizesOf(src))};
  Value *out = e.op(ops::aten_scatter_src, {{"self", e.reshape(x, {numel})},
                                            {"dim", int64_t(0)},
                                            {"index", e.reshape(positions, count)},
                                            {"src", e.reshape(e.cast(src, typeOf(x).dtype), count)}});
  return e.reshape(out, sizesOf(x));
}

Results decomposeDiagonalScatter(RewriteContext &ctx) {
  Emit e(ctx);
  int64_t offset = ctx.integer("offset", 0), d1 = ctx.integer("dim1", 0), d2 = ctx.integer("dim2", 1);
  return finish(ctx, {scatterThroughView(e, self(ctx), ctx.value("src"), [&](Value *p) {
                  return diagonal(e, p, offset, d1, d2);
                })});
}

Results decomposeAsStridedScatter(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {scatterThroughView(e, self(ctx), ctx.value("src"), [&](Value *p) {
                  std::vector<std::pair<std::string, ArgValue>> args = {
                      {"self", p}, {"size", ctx.passThrough("size")}, {"stride", ctx.passThrough("stride")}};
                  if (ctx.has("storage_offset"))
                    args.emplace_back("storage_offset", ctx.passThrough("storage_offset"));
                  return e.op(ops::aten_as_strided_default, std::move(args));
                })});
}

/// slice_scatter: self with src where self[start:end:step] along dim reads
/// (start and end None: the whole dim).
Results decomposeSliceScatter(RewriteContext &ctx) {
  Emit e(ctx);
  int64_t dim = ctx.integer("dim", 0);
  int64_t start = ctx.has("start") ? ctx.integer("start") : 0;
  int64_t end = ctx.has("end") ? ctx.integer("end") : std::numeric_limits<int64_t>::max();
  int64_t step = ctx.integer("step", 1);
  return finish(ctx, {scatterThroughView(e, self(ctx), ctx.value("src"), [&](Value *p) {
                  return e.slice(p, dim, start, end, step);
                })});
}

/// select_scatter: src (unsqueezed at dim) where the index along dim is
/// `index`, self elsewhere.
Results decomposeSelectScatter(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  if (rankOf(x) == 0)
    rewriteFail("select_scatter needs at least one dim");
  int64_t dim = wrappedDim(ctx, x, "dim", 0);
  int64_t size = staticSize(sizesOf(x)[dim], "the selected dim");
  int64_t index = ctx.integer("index");
  if (index < -size || index >= size)
    rewriteFail("select_scatter: index " + std::to_string(index) + " is out of range for size " +
                std::to_string(size));
  Value *at = e.alongDim(e.arange(size), dim, rankOf(x));
  Value *mask = e.compare(Cmp::Eq, at, Number::integer(index < 0 ? index + size : index));
  Value *src = e.unsqueeze(e.cast(ctx.value("src"), typeOf(x).dtype), dim);
  return finish(ctx, {e.where(mask, src, x)});
}

//===----------------------------------------------------------------------===//
// Flips, block matrices and sums to a size
//===----------------------------------------------------------------------===//

/// fliplr (Dim 1) and flipud (Dim 0): a flip of that dim.
template <int Dim> Results decomposeFlipDim(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  if (rankOf(x) <= Dim)
    rewriteFail("needs at least " + std::to_string(Dim + 1) + " dims, got " +
                std::to_string(rankOf(x)));
  return finish(ctx, {e.flip(x, {Dim})});
}

/// rot90: k quarter turns from dims[0] towards dims[1]: one turn flips
/// dims[1] and swaps the two, three flip dims[0] and swap, two flip both.
Results decomposeRot90(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Dims dims = ctx.has("dims") ? ctx.ints("dims") : Dims{0, 1};
  if (dims.size() != 2 || rankOf(x) < 2)
    rewriteFail("rot90 needs two dims and a tensor of at least 2 dims");
  int64_t d0 = wrapDimension(dims[0], rankOf(x)), d1 = wrapDimension(dims[1], rankOf(x));
  if (d0 == d1)
    rewriteFail("rot90 needs two different dims");
  int64_t k = ((ctx.integer("k", 1) % 4) + 4) % 4;
  if (k == 1)
    x = e.transpose(e.flip(x, {d1}), d0, d1);
  else if (k == 2)
    x = e.flip(x, {d0, d1});
  else if (k == 3)
    x = e.transpose(e.flip(x, {d0}), d0, d1);
  return finish(ctx, {x});
}

/// block_diag: each tensor (as a matrix) padded with zero columns to its
/// place, the rows joined.
Results decomposeBlockDiag(RewriteContext &ctx) {
  Emit e(ctx);
  std::vector<Value *> xs = ctx.values("tensors");
  int64_t cols = 0;
  for (Value *&x : xs) {
    if (rankOf(x) > 2)
      rewriteFail("block_diag takes tensors of at most 2 dims");
    x = e.cast(atLeast(e, x, 2), ctx.resultType().dtype);
    cols += staticSize(sizesOf(x)[1], "a block's columns");
  }
  if (xs.empty())
    return finish(ctx, {e.full(resultSizes(ctx), Number::integer(0), ctx.resultType().dtype)});
  int64_t left = 0;
  for (Value *&x : xs) {
    int64_t width = staticSize(sizesOf(x)[1], "a block's columns");
    Dims pad = {left, cols - left - width};
    if (width != cols)
      x = e.op(ops::aten_constant_pad_nd_default, {{"self", x}, {"pad", pad}, {"value", 0.0}});
    left += width;
  }
  return finish(ctx, {e.cat(xs, 0)});
}

/// sum_to_size: sums over the leading dims size lacks and over the dims
/// where size has 1 and self has not.
Results decomposeSumToSize(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Dims size = ctx.ints("size");
  int64_t lead = rankOf(x) - static_cast<int64_t>(size.size());
  if (lead < 0)
    rewriteFail("sum_to_size: size has more dims than self");
  Dims dims;
  for (int64_t d = 0; d < rankOf(x); ++d) {
    const SymExpr *have = sizesOf(x)[d];
    if (d < lead || (size[d - lead] == 1 && !(have->isConst() && have->constant() == 1)))
      dims.push_back(d);
    else if (!have->isConst() || have->constant() != size[d - lead])
      rewriteFail("sum_to_size: size is not expandable to self's sizes");
  }
  if (dims.empty())
    return finish(ctx, {x});
  Value *s = e.sum(x, dims, true, ctx.resultType().dtype);
  return finish(ctx, {e.reshape(s, resultSizes(ctx))});
}

//===----------------------------------------------------------------------===//
// Resizes, fills and ranges
//===----------------------------------------------------------------------===//

/// resize and resize_as (resize_ and resize_as_ made functional): self's
/// first elements in row-major order; growing is not supported, since the
/// new elements would be undefined.
Value *resized(Emit &e, Value *x, const Sizes &to) {
  SymContext &syms = e.syms();
  int64_t have = staticSize(sizeProduct(syms, sizesOf(x)), "self's size");
  int64_t want = staticSize(sizeProduct(syms, to), "the new size");
  if (want > have)
    rewriteFail("resizing " + std::to_string(have) + " elements to " + std::to_string(want) +
                " is not supported (the new elements are undefined)");
  Value *flat = e.reshape(x, {syms.constant(have)});
  if (want < have)
    flat = e.slice(flat, 0, 0, want);
  return e.reshape(flat, to);
}

Results decomposeResize(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {resized(e, self(ctx), resultSizes(ctx))});
}

Results decomposeFill(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {e.fullLike(self(ctx), number(ctx, "value"), ctx.resultType().dtype)});
}

/// fill.Tensor: the 0-dim `value`, converted and expanded to self's sizes.
Results decomposeFillTensor(RewriteContext &ctx) {
  Emit e(ctx);
  Value *value = ctx.value("value");
  if (rankOf(value) != 0)
    rewriteFail("fill expects a 0-dim value tensor, got " + std::to_string(rankOf(value)) +
                " dims");
  const TensorType &want = ctx.resultType();
  return finish(ctx, {e.clone(e.expand(e.cast(value, want.dtype), want.sizes))});
}

const DecompositionEntry kShapeDecompositions[] = {
    {ops::aten__assert_tensor_metadata_default, decomposeToNothing},
    {ops::aten__chunk_cat_default, decomposeChunkCat},
    {ops::aten__unsafe_view_default, decomposeView},
    {ops::aten_alias_default, decomposeIdentity},
    {ops::aten_arange_default, decomposeArange},
    {ops::aten_arange_start, decomposeArange},
    {ops::aten_as_strided_scatter_default, decomposeAsStridedScatter},
    {ops::aten_atleast_1d_default, decomposeAtLeast<1>},
    {ops::aten_atleast_2d_default, decomposeAtLeast<2>},
    {ops::aten_atleast_3d_default, decomposeAtLeast<3>},
    {ops::aten_block_diag_default, decomposeBlockDiag},
    {ops::aten_broadcast_tensors_default, decomposeBroadcastTensors},
    {ops::aten_broadcast_to_default, decomposeExpandAs},
    {ops::aten_cartesian_prod_default, decomposeCartesianProd},
    {ops::aten_chunk_default, decomposeChunk},
    {ops::aten_column_stack_default, decomposeColumnStack},
    {ops::aten_combinations_default, decomposeCombinations},
    {ops::aten_contiguous_default, decomposeContiguous},
    {ops::aten_diag_default, decomposeDiag},
    {ops::aten_diag_embed_default, decomposeDiagEmbed},
    {ops::aten_diagflat_default, decomposeDiagflat},
    {ops::aten_diagonal_default, decomposeStridedView},
    {ops::aten_diagonal_scatter_default, decomposeDiagonalScatter},
    {ops::aten_diff_default, decomposeDiff},
    {ops::aten_dsplit_array, decomposeDirectionalSplit<2>},
    {ops::aten_dsplit_int, decomposeDirectionalSplit<2>},
    {ops::aten_dstack_default, decomposeStackN<3>},
    {ops::aten_embedding_default, decomposeEmbedding},
    {ops::aten_empty_memory_format, decomposeZeros},
    {ops::aten_empty_like_default, decomposeZerosLike},
    {ops::aten_expand_as_default, decomposeExpandAs},
    {ops::aten_fill_Scalar, decomposeFill},
    {ops::aten_fill_Tensor, decomposeFillTensor},
    {ops::aten_flatten_using_ints, decomposeToResultSizes},
    {ops::aten_fliplr_default, decomposeFlipDim<1>},
    {ops::aten_flipud_default, decomposeFlipDim<0>},
    {ops::aten_full_like_default, decomposeFullLike},
    {ops::aten_hsplit_array, decomposeDirectionalSplit<1>},
    {ops::aten_hsplit_int, decomposeDirectionalSplit<1>},
    {ops::aten_hstack_default, decomposeStackN<1>},
    {ops::aten_index_add_default, decomposeIndexAdd},
    {ops::aten_index_copy_default, decomposeIndexCopy},
    {ops::aten_index_reduce_default, decomposeIndexReduce},
    {ops::aten_index_select_default, decomposeIndexSelect},
    {ops::aten_lift_fresh_copy_default, decomposeIdentity},
    {ops::aten_mH_default, decomposeMatrixTranspose},
    {ops::aten_mT_default, decomposeMatrixTranspose},
    {ops::aten_matrix_H_default, decomposeMatrixTranspose},
    {ops::aten_meshgrid_indexing, decomposeMeshgrid},
    {ops::aten_movedim_int, decomposeMovedim},
    {ops::aten_movedim_intlist, decomposeMovedim},
    {ops::aten_narrow_default, decomposeNarrow},
    {ops::aten_new_empty_default, decomposeZeros},
    {ops::aten_new_full_default, decomposeNewFull},
    {ops::aten_new_ones_default, decomposeOnes},
    {ops::aten_new_zeros_default, decomposeZeros},
    {ops::aten_numpy_T_default, decomposeNumpyT},
    {ops::aten_ones_default, decomposeOnes},
    {ops::aten_ones_like_default, decomposeOnesLike},
    {ops::aten_positive_default, decomposeIdentity},
    {ops::aten_ravel_default, decomposeToResultSizes},
    {ops::aten_repeat_default, decomposeRepeat},
    {ops::aten_reshape_as_default, decomposeToResultSizes},
    {ops::aten_reshape_default, decomposeReshape},
    {ops::aten_resize_default, decomposeResize},
    {ops::aten_resize_as_default, decomposeResize},
    {ops::aten_resolve_conj_default, decomposeIdentity},
    {ops::aten_resolve_neg_default, decomposeIdentity},
    {ops::aten_roll_default, decomposeRoll},
    {ops::aten_rot90_default, decomposeRot90},
    {ops::aten_scalar_tensor_default, decomposeScalarTensor},
    {ops::aten_scatter_value, decomposeScatterValue},
    {ops::aten_select_scatter_default, decomposeSelectScatter},
    {ops::aten_slice_scatter_default, decomposeSliceScatter},
    {ops::aten_split_Tensor, decomposeSplit},
    {ops::aten_split_with_sizes_default, decomposeSplitWithSizes},
    {ops::aten_squeeze_default, decomposeSqueeze},
    {ops::aten_squeeze_dim, decomposeSqueezeDim},
    {ops::aten_stack_default, decomposeStack},
    {ops::aten_sum_to_size_default, decomposeSumToSize},
    {ops::aten_t_default, decomposeT},
    {ops::aten_tile_default, decomposeTile},
    {ops::aten_to_device, decomposeTo},
    {ops::aten_to_dtype, decomposeTo},
    {ops::aten_to_dtype_layout, decomposeTo},
    {ops::aten_to_other, decomposeTo},
    {ops::aten_transpose_int, decomposeTranspose},
    {ops::aten_tril_default, decomposeTril},
    {ops::aten_triu_default, decomposeTriu},
    {ops::aten_type_as_default, decomposeTo},
    {ops::aten_unbind_int, decomposeUnbind},
    {ops::aten_unflatten_int, decomposeToResultSizes},
    {ops::aten_unfold_default, decomposeStridedView},
    {ops::aten_unsafe_chunk_default, decomposeChunk},
    {ops::aten_unsafe_split_Tensor, decomposeSplit},
    // Core: the decompose pass calls this only for a view its input's new
    // layout no longer allows (see the file comment).
    {ops::aten_view_default, decomposeView},
    {ops::aten_view_as_default, decomposeToResultSizes},
    {ops::aten_vsplit_array, decomposeDirectionalSplit<0>},
    {ops::aten_vsplit_int, decomposeDirectionalSplit<0>},
    {ops::aten_vstack_default, decomposeStackN<2>},
    {ops::aten_zero_default, decomposeZerosLike},
    {ops::aten_zeros_default, decomposeZeros},
    {ops::aten_zeros_like_default, decomposeZerosLike},
};

} // namespace

void registerShapeDecompositions(DecompositionRegistry &r) {
  r.add(kShapeDecompositions);
  std::vector<DecompositionEntry> copies;
  for (const CopyOfView &c : kCopiesOfViews)
    copies.push_back({c.copy, decomposeCopyOfView});
  r.add(copies);
}

} // namespace gc
