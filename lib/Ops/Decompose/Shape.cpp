//===- Shape.cpp - Decompositions of view, shape and creation ops ---------===//
//
// Reshapes become core views where the strides gc infers allow it, else a
// contiguous copy and a view: decomposed ops give contiguous results where
// torch's may have been permuted, so a view that was valid in the exported
// graph need not be valid here. Splits become slices and selects,
// transposes permutes, creation ops full and arange.start_step, and copies
// that change nothing disappear.
//
//===----------------------------------------------------------------------===//
#include "Emit.h"

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

/// to.dtype, to.dtype_layout, to.device, to.other: a _to_copy when the
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
Results decomposeRepeat(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Dims repeats = ctx.ints("repeats");
  int64_t n = static_cast<int64_t>(repeats.size());
  if (n < rankOf(x))
    rewriteFail("repeat: fewer repeats than dims");
  Sizes padded(n - rankOf(x), e.syms().constant(1));
  padded.insert(padded.end(), sizesOf(x).begin(), sizesOf(x).end());
  if (rankOf(x) != n)
    x = e.reshape(x, padded);
  Sizes pairs;
  for (int64_t i = 0; i < n; ++i) {
    x = e.unsqueeze(x, 2 * i);
    pairs.push_back(e.syms().constant(repeats[i]));
    pairs.push_back(padded[i]);
  }
  return finish(ctx, {e.reshape(e.expand(x, pairs), resultSizes(ctx))});
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

const DecompositionEntry kShapeDecompositions[] = {
    {ops::aten__assert_tensor_metadata_default, decomposeToNothing},
    {ops::aten__unsafe_view_default, decomposeView},
    {ops::aten_alias_default, decomposeIdentity},
    {ops::aten_arange_default, decomposeArange},
    {ops::aten_arange_start, decomposeArange},
    {ops::aten_broadcast_tensors_default, decomposeBroadcastTensors},
    {ops::aten_broadcast_to_default, decomposeExpandAs},
    {ops::aten_chunk_default, decomposeChunk},
    {ops::aten_contiguous_default, decomposeContiguous},
    {ops::aten_diff_default, decomposeDiff},
    {ops::aten_embedding_default, decomposeEmbedding},
    {ops::aten_empty_memory_format, decomposeZeros},
    {ops::aten_empty_like_default, decomposeZerosLike},
    {ops::aten_expand_as_default, decomposeExpandAs},
    {ops::aten_flatten_using_ints, decomposeToResultSizes},
    {ops::aten_full_like_default, decomposeFullLike},
    {ops::aten_index_add_default, decomposeIndexAdd},
    {ops::aten_index_copy_default, decomposeIndexCopy},
    {ops::aten_index_reduce_default, decomposeIndexReduce},
    {ops::aten_index_select_default, decomposeIndexSelect},
    {ops::aten_lift_fresh_copy_default, decomposeIdentity},
    {ops::aten_mH_default, decomposeMatrixTranspose},
    {ops::aten_mT_default, decomposeMatrixTranspose},
    {ops::aten_matrix_H_default, decomposeMatrixTranspose},
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
    {ops::aten_roll_default, decomposeRoll},
    {ops::aten_scalar_tensor_default, decomposeScalarTensor},
    {ops::aten_scatter_value, decomposeScatterValue},
    {ops::aten_split_Tensor, decomposeSplit},
    {ops::aten_split_with_sizes_default, decomposeSplitWithSizes},
    {ops::aten_squeeze_default, decomposeSqueeze},
    {ops::aten_squeeze_dim, decomposeSqueezeDim},
    {ops::aten_stack_default, decomposeStack},
    {ops::aten_t_default, decomposeT},
    {ops::aten_to_device, decomposeTo},
    {ops::aten_to_dtype, decomposeTo},
    {ops::aten_to_dtype_layout, decomposeTo},
    {ops::aten_to_other, decomposeTo},
    {ops::aten_transpose_int, decomposeTranspose},
    {ops::aten_tril_default, decomposeTril},
    {ops::aten_triu_default, decomposeTriu},
    {ops::aten_unbind_int, decomposeUnbind},
    {ops::aten_unflatten_int, decomposeToResultSizes},
    // Core: the decompose pass calls this only for a view its input's new
    // layout no longer allows (see the file comment).
    {ops::aten_view_default, decomposeView},
    {ops::aten_view_as_default, decomposeToResultSizes},
    {ops::aten_zeros_default, decomposeZeros},
    {ops::aten_zeros_like_default, decomposeZerosLike},
};

} // namespace

void registerShapeDecompositions(DecompositionRegistry &r) { r.add(kShapeDecompositions); }

} // namespace gc
