//===- Shape.cpp - Derivatives of views, data movement and indexing -------===//
//
// A view's gradient is the gradient laid back where the view read: the
// inverse permutation, the input's shape, zeros where a slice or select
// skipped. Gathers give their gradients back by scatter_add, which sums
// where an element was read more than once.
//
//===----------------------------------------------------------------------===//
#include "Rules.h"

#include "gc/Ops/ShapeInference.h"

#include <algorithm>

namespace gc {

namespace {

using namespace autodiff;

Value *self(DerivativeContext &ctx) { return ctx.value("self"); }
InputGrads selfGrad(Value *g) { return InputGrads().set("self", g); }

int64_t dimArg(DerivativeContext &ctx, Value *x, std::string_view name = "dim") {
  return wrapDimension(ctx.integer(name, 0), rankOf(x));
}

/// Views that keep the elements in order: the gradient takes x's shape.
InputGrads dReshape(DerivativeContext &ctx) {
  Emit e(ctx);
  return selfGrad(e.reshape(ctx.grad(), sizesOf(self(ctx))));
}

/// The joint builder sums a broadcast gradient back to x's shape.
InputGrads dExpand(DerivativeContext &ctx) { return selfGrad(ctx.grad()); }

InputGrads dPermute(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Dims dims = ctx.ints("dims"), inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i)
    inverse[wrapDimension(dims[i], rankOf(x))] = static_cast<int64_t>(i);
  return selfGrad(e.permute(ctx.grad(), inverse));
}

InputGrads dSlice(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  int64_t dim = dimArg(ctx, x);
  int64_t size = staticDim(x, dim);
  int64_t step = ctx.integer("step", 1);
  auto bound = [&](std::string_view name, int64_t dflt) {
    int64_t v = ctx.has(name) ? ctx.integer(name) : dflt;
    if (v < 0)
      v += size;
    return std::clamp<int64_t>(v, 0, size);
  };
  int64_t start = bound("start", 0), end = std::max(start, bound("end", size));
  int64_t count = (end - start + step - 1) / step;
  if (count == 0)
    return selfGrad(zerosLike(e, x));
  Value *g = spread(e, ctx.grad(), dim, step);
  return selfGrad(padDim(e, g, dim, start, size - start - ((count - 1) * step + 1)));
}

InputGrads dSelect(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  int64_t dim = dimArg(ctx, x);
  int64_t size = staticDim(x, dim);
  int64_t index = ctx.integer("index");
  if (index < 0)
    index += size;
  return selfGrad(padDim(e, e.unsqueeze(ctx.grad(), dim), dim, index, size - index - 1));
}

InputGrads dCat(DerivativeContext &ctx) {
  Emit e(ctx);
  std::vector<Value *> xs = ctx.values("tensors");
  Value *out = ctx.result();
  int64_t dim = wrapDimension(ctx.integer("dim", 0), rankOf(out));
  InputGrads grads;
  int64_t offset = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    // torch skips legacy empty 1-d inputs whatever the rank.
    if (rankOf(xs[i]) != rankOf(out))
      continue;
    int64_t n = staticDim(xs[i], dim);
    grads.set("tensors", e.slice(ctx.grad(), dim, offset, offset + n), i);
    offset += n;
  }
  return grads;
}

InputGrads dFlip(DerivativeContext &ctx) {
  Emit e(ctx);
  return selfGrad(e.op(ops::aten_flip_default, {{"self", ctx.grad()}, {"dims", ctx.ints("dims")}}));
}

/// Padding and cropping are each other's inverse.
InputGrads dConstantPad(DerivativeContext &ctx) {
  Emit e(ctx);
  Dims pad = ctx.ints("pad");
  for (int64_t &p : pad)
    p = -p;
  return selfGrad(e.op(ops::aten_constant_pad_nd_default, {{"self", ctx.grad()}, {"pad", pad}}));
}

Value *scatterAdd(Emit &e, Value *into, int64_t dim, Value *index, Value *src) {
  return e.op(ops::aten_scatter_add_default,
              {{"self", into}, {"dim", dim}, {"index", index}, {"src", src}});
}

Value *gather(Emit &e, Value *x, int64_t dim, Value *index) {
  return e.op(ops::aten_gather_default, {{"self", x}, {"dim", dim}, {"index", index}});
}

InputGrads dGather(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  return selfGrad(scatterAdd(e, zerosLike(e, e.cast(x, typeOf(ctx.grad()).dtype)), dimArg(ctx, x),
                             ctx.value("index"), ctx.grad()));
}

/// self: g with zeros where src was written; src: g read back at index.
InputGrads dScatter(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx), *index = ctx.value("index"), *g = ctx.grad();
  int64_t dim = dimArg(ctx, x);
  Value *zeros = e.fullLike(index, Number::integer(0), typeOf(g).dtype);
  Value *kept =
      e.op(ops::aten_scatter_src, {{"self", g}, {"dim", dim}, {"index", index}, {"src", zeros}});
  return selfGrad(kept).set("src", gather(e, g, dim, index));
}

InputGrads dScatterAdd(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *g = ctx.grad();
  return selfGrad(g).set("src", gather(e, g, dimArg(ctx, self(ctx)), ctx.value("index")));
}

/// scatter_reduce.two with reduce='sum': as scatter_add, with self's
/// gradient zeroed where the index writes when self is left out.
InputGrads dScatterReduce(DerivativeContext &ctx) {
  Emit e(ctx);
  if (ctx.string("reduce", "") != "sum")
    rewriteFail("the derivative of scatter_reduce.two supports reduce='sum' only");
  Value *x = self(ctx), *index = ctx.value("index"), *g = ctx.grad();
  int64_t dim = dimArg(ctx, x);
  Value *selfG = g;
  if (!ctx.boolean("include_self", true))
    selfG = e.op(ops::aten_scatter_src,
                 {{"self", g}, {"dim", dim}, {"index", index},
                  {"src", e.fullLike(index, Number::integer(0), typeOf(g).dtype)}});
  return selfGrad(selfG).set("src", gather(e, g, dim, index));
}

/// index_put: self's gradient is g, zeroed where values were written
/// (unless they were added); values' is g read back at the indices (summed
/// over what values was broadcast along).
InputGrads dIndexPut(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *g = ctx.grad();
  std::vector<Value *> indices = ctx.values("indices");
  Value *selfG = g;
  if (!ctx.boolean("accumulate", false))
    selfG = e.op(ops::aten_index_put_default,
                 {{"self", g}, {"indices", indices},
                  {"values", e.full({}, Number::integer(0), typeOf(g).dtype)}});
  return selfGrad(selfG).set(
      "values", e.op(ops::aten_index_Tensor, {{"self", g}, {"indices", indices}}));
}

/// x[..., i_p, ..., i_q, ...] with consecutive index tensors reads the
/// flattened dims p..q at one linear index; the gradient is g added back at
/// those linear indices.
InputGrads dIndex(DerivativeContext &ctx) {
  Emit e(ctx);
  SymContext &syms = e.syms();
  Value *x = self(ctx), *g = ctx.grad();
  std::vector<Value *> indices = ctx.values("indices");
  int64_t first = -1, last = -1;
  for (size_t k = 0; k < indices.size(); ++k) {
    if (!indices[k])
      continue;
    DType t = typeOf(indices[k]).dtype;
    if (isFloatingPoint(t) || t == DType::Bool)
      rewriteFail("the derivative of index.Tensor supports integer indices only");
    if (last >= 0 && last != static_cast<int64_t>(k) - 1)
      rewriteFail("the derivative of index.Tensor needs adjacent index tensors");
    if (first < 0)
      first = static_cast<int64_t>(k);
    last = static_cast<int64_t>(k);
  }
  if (first < 0)
    return selfGrad(g);
  const Sizes &xs = sizesOf(x);
  Value *linear = nullptr;
  int64_t indexed = 1;
  for (int64_t k = last; k >= first; --k) {
    int64_t size = staticDim(x, k);
    Value *i = e.cast(indices[k], DType::Int64);
    i = e.where(e.compare(Cmp::Lt, i, Number::integer(0)), e.add(i, size), i);
    if (indexed != 1)
      i = e.mul(i, indexed);
    linear = linear ? e.add(i, linear) : i;
    indexed *= size;
  }
  // g is [pre, broadcast index shape, post]: fold it to three dims.
  Sizes pre(xs.begin(), xs.begin() + first), post(xs.begin() + last + 1, xs.end());
  const SymExpr *preCount = decompose::sizeProduct(syms, pre);
  const SymExpr *postCount = decompose::sizeProduct(syms, post);
  const SymExpr *readCount = decompose::sizeProduct(syms, sizesOf(linear));
  Value *g3 = e.reshape(g, {preCount, readCount, postCount});
  Value *at =
      e.expand(e.reshape(linear, {syms.constant(1), readCount, syms.constant(1)}), sizesOf(g3));
  Value *zeros =
      e.full({preCount, syms.constant(indexed), postCount}, Number::integer(0), typeOf(g).dtype);
  return selfGrad(e.reshape(scatterAdd(e, zeros, 1, at, g3), xs));
}

const DerivativeEntry kEntries[] = {
    {ops::aten_cat_default, dCat, "g sliced along dim"},
    {ops::aten_constant_pad_nd_default, dConstantPad, "g cropped (padded) by the pads negated"},
    {ops::aten_expand_default, dExpand, "g summed over the expanded dims"},
    {ops::aten_flip_default, dFlip, "g flipped back"},
    {ops::aten_gather_default, dGather, "zeros with g scatter-added at index"},
    {ops::aten_index_Tensor, dIndex, "zeros with g scatter-added at the flat indices"},
    {ops::aten_index_put_default, dIndexPut,
     "self: g, zeroed at the indices unless accumulate; values: g indexed"},
    {ops::aten_permute_default, dPermute, "g permuted back"},
    {ops::aten_scatter_src, dScatter, "self: g zeroed at index; src: g gathered at index"},
    {ops::aten_scatter_add_default, dScatterAdd, "self: g; src: g gathered at index"},
    {ops::aten_scatter_reduce_two, dScatterReduce,
     "reduce='sum' only: self: g (zeroed at index without include_self); src: g gathered"},
    {ops::aten_select_int, dSelect, "g padded with zeros around index"},
    {ops::aten_slice_Tensor, dSlice, "g spread by step and padded with zeros"},
    {ops::aten_squeeze_dims, dReshape, "g viewed as x"},
    {ops::aten_unsqueeze_default, dReshape, "g viewed as x"},
    {ops::aten_view_default, dReshape, "g viewed as x"},
};

} // namespace

void registerShapeDerivatives(DerivativeRegistry &r) { r.add(kEntries); }

} // namespace gc
