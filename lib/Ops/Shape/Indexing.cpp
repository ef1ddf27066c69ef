//===- Indexing.cpp - Shapes of data movement and indexing ----------------===//
//
// Ops that gather, scatter, join, pad or rearrange elements into a new
// tensor. Results are contiguous, as torch allocates them, except where
// torch keeps the input's memory format.
//
//===----------------------------------------------------------------------===//
#include "ShapeUtil.h"

namespace gc {
namespace {

using namespace shape;

/// The dtype of joining `tensors`: torch promotes them all as dimensioned
/// tensors.
DType joinedDType(const std::vector<const TensorType *> &tensors) {
  std::vector<PromotionOperand> operands;
  for (const TensorType *t : tensors)
    operands.push_back({t->dtype, PromotionOperand::Rank::Tensor});
  return resultType(operands);
}

/// Checks that `t` has `sizes` except along `dim`.
void checkSizesBesides(const TensorType &t, const Sizes &sizes, size_t dim, SymContext &syms) {
  if (t.rank() != sizes.size())
    shapeFail("tensors of " + std::to_string(t.rank()) + " and " + std::to_string(sizes.size()) +
              " dimensions cannot be joined");
  for (size_t d = 0; d < sizes.size(); ++d) {
    std::optional<int> same = compareSizes(syms, t.sizes[d], sizes[d]);
    if (d != dim && same && *same != 0)
      shapeFail("sizes " + t.sizes[d]->str() + " and " + sizes[d]->str() + " differ in dimension " +
                std::to_string(d));
  }
}

std::vector<Type> cat(const ShapeContext &ctx) {
  SymContext &syms = ctx.syms();
  std::vector<const TensorType *> all = ctx.tensors("tensors");
  if (all.empty())
    shapeFail("cat needs at least one tensor");
  // torch skips 1-d empty tensors, which older code used as placeholders.
  std::vector<const TensorType *> joined;
  for (const TensorType *t : all)
    if (!(t->rank() == 1 && t->sizes[0]->isConst() && t->sizes[0]->constant() == 0))
      joined.push_back(t);
  DType dtype = joinedDType(all);
  if (joined.empty())
    return one(contiguousType(syms, dtype, all.front()->sizes, all.front()->device));
  const TensorType &first = *joined.front();
  if (first.rank() == 0)
    shapeFail("cat cannot join 0-dim tensors");
  int64_t dim = wrapDimension(ctx.integer("dim", 0), first.rank());
  Sizes sizes = first.sizes;
  sizes[dim] = syms.constant(0);
  for (const TensorType *t : joined) {
    checkSizesBesides(*t, first.sizes, dim, syms);
    sizes[dim] = syms.add(sizes[dim], t->sizes[dim]);
  }
  // The result keeps a memory format all the inputs share.
  bool channelsLast = std::all_of(joined.begin(), joined.end(), [&](const TensorType *t) {
    return suggestsChannelsLast(syms, *t);
  });
  if (channelsLast)
    return one(channelsLastType(syms, dtype, sizes, first.device));
  return one(contiguousType(syms, dtype, sizes, first.device));
}

std::vector<Type> stack(const ShapeContext &ctx) {
  std::vector<const TensorType *> tensors = ctx.tensors("tensors");
  if (tensors.empty())
    shapeFail("stack needs at least one tensor");
  const TensorType &first = *tensors.front();
  int64_t dim = wrapDimension(ctx.integer("dim", 0), first.rank() + 1);
  for (const TensorType *t : tensors)
    checkSizesBesides(*t, first.sizes, first.rank(), ctx.syms());
  Sizes sizes = first.sizes;
  sizes.insert(sizes.begin() + dim, ctx.syms().constant(static_cast<int64_t>(tensors.size())));
  return one(contiguousType(ctx.syms(), joinedDType(tensors), sizes, first.device));
}

/// gather: the index's shape, self's dtype.
std::vector<Type> gather(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  const TensorType &index = ctx.tensor("index");
  wrapDimension(ctx.integer("dim"), self.rank());
  if (self.rank() > 0 && index.rank() > 0 && self.rank() != index.rank())
    shapeFail("gather needs an index of the same rank as self");
  return one(contiguousType(ctx.syms(), self.dtype, index.sizes, self.device));
}

/// scatter, scatter_add, index_add, index_put and the *_scatter ops: a new
/// tensor of self's type with some elements replaced.
std::vector<Type> likeSelf(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  if (ctx.has("dim"))
    wrapDimension(ctx.integer("dim"), self.rank());
  return one(contiguousType(ctx.syms(), self.dtype, self.sizes, self.device));
}

/// index.Tensor: the index tensors broadcast together; their result shape
/// replaces the indexed dimensions where those are adjacent, or comes first
/// where they are not.
std::vector<Type> index(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  std::vector<const TensorType *> indices = ctx.optTensors("indices");
  if (indices.size() > self.rank())
    shapeFail("too many indices (" + std::to_string(indices.size()) + ") for a tensor of rank " +
              std::to_string(self.rank()));
  Sizes broadcast;
  std::vector<size_t> indexed;
  for (size_t d = 0; d < indices.size(); ++d) {
    const TensorType *t = indices[d];
    if (!t)
      continue;
    if (t->dtype == DType::Bool || t->dtype == DType::UInt8)
      shapeFail("indexing with a mask gives a data-dependent shape, which gc does not support");
    if (isFloatingPoint(t->dtype))
      shapeFail("index tensors must be integers, not " + std::string(dtypeName(t->dtype)));
    broadcast = broadcastSizes(ctx.syms(), broadcast, t->sizes);
    indexed.push_back(d);
  }
  if (indexed.empty())
    shapeFail("index needs at least one index tensor");
  bool adjacent = indexed.back() - indexed.front() + 1 == indexed.size();
  Sizes sizes;
  if (adjacent)
    sizes.assign(self.sizes.begin(), self.sizes.begin() + indexed.front());
  sizes.insert(sizes.end(), broadcast.begin(), broadcast.end());
  for (size_t d = adjacent ? indexed.back() + 1 : 0; d < self.rank(); ++d)
    if (adjacent || d >= indices.size() || !indices[d])
      sizes.push_back(self.sizes[d]);
  return one(contiguousType(ctx.syms(), self.dtype, sizes, self.device));
}

std::vector<Type> indexSelect(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  const TensorType &index = ctx.tensor("index");
  if (index.rank() > 1)
    shapeFail("index_select needs a 0-d or 1-d index");
  int64_t dim = wrapDimension(ctx.integer("dim"), self.rank());
  Sizes sizes = self.sizes;
  if (!sizes.empty())
    sizes[dim] = numel(ctx.syms(), index.sizes);
  return one(contiguousType(ctx.syms(), self.dtype, sizes, self.device));
}

std::vector<Type> embedding(const ShapeContext &ctx) {
  const TensorType &weight = ctx.tensor("weight");
  const TensorType &indices = ctx.tensor("indices");
  if (weight.rank() != 2)
    shapeFail("embedding needs a 2-d weight");
  Sizes sizes = indices.sizes;
  sizes.push_back(weight.sizes[1]);
  return one(contiguousType(ctx.syms(), weight.dtype, sizes, weight.device));
}

/// constant_pad_nd, pad: every mode pads the same way; negative pads cut.
std::vector<Type> pad(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  SymContext &syms = ctx.syms();
  Sizes pad = symInts(ctx, "pad");
  if (pad.size() % 2 != 0 || pad.size() / 2 > self.rank())
    shapeFail("pad needs an even length of at most twice the rank");
  // Pairs pad the dimensions from the last one backwards.
  Sizes sizes = self.sizes;
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const SymExpr *&size = sizes[self.rank() - 1 - i];
    size = syms.add(size, syms.add(pad[2 * i], pad[2 * i + 1]));
    if (size->isConst() && size->constant() < 0)
      shapeFail("padding makes a dimension negative");
  }
  if (suggestsChannelsLast(syms, self))
    return one(channelsLastType(syms, self.dtype, sizes, self.device));
  return one(contiguousType(syms, self.dtype, sizes, self.device));
}

std::vector<Type> flip(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  wrapDims(ctx.ints("dims"), self.rank());
  return one(preservedLayoutType(ctx.syms(), self, self.dtype));
}

std::vector<Type> roll(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  std::vector<int64_t> dims = ctx.has("dims") ? ctx.ints("dims") : std::vector<int64_t>{};
  wrapDims(dims, self.rank());
  if (!dims.empty() && dims.size() != ctx.ints("shifts").size())
    shapeFail("roll needs one shift per dimension");
  return one(contiguousType(ctx.syms(), self.dtype, self.sizes, self.device));
}

std::vector<Type> repeat(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  SymContext &syms = ctx.syms();
  Sizes repeats = symInts(ctx, "repeats");
  if (repeats.size() < self.rank())
    shapeFail("repeat needs at least as many repeats as dimensions");
  size_t lead = repeats.size() - self.rank();
  Sizes sizes = repeats;
  for (size_t d = 0; d < self.rank(); ++d)
    sizes[lead + d] = syms.mul(repeats[lead + d], self.sizes[d]);
  return one(contiguousType(syms, self.dtype, sizes, self.device));
}

/// tril, triu: the input's shape, at least 2-d.
std::vector<Type> triangle(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  if (self.rank() < 2)
    shapeFail("needs a tensor of at least 2 dimensions");
  return one(contiguousType(ctx.syms(), self.dtype, self.sizes, self.device));
}

std::vector<Type> diff(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  SymContext &syms = ctx.syms();
  if (self.rank() == 0)
    shapeFail("diff needs a tensor with at least one dimension");
  int64_t dim = wrapDimension(ctx.integer("dim", -1), self.rank());
  int64_t n = ctx.integer("n", 1);
  if (n < 0)
    shapeFail("diff needs a non-negative order");
  // prepend and append are joined to self first.
  std::vector<const TensorType *> joined{&self};
  const SymExpr *size = self.sizes[dim];
  for (std::string_view name : {"prepend", "append"}) {
    if (!ctx.has(name))
      continue;
    const TensorType &t = ctx.tensor(name);
    checkSizesBesides(t, self.sizes, dim, syms);
    size = syms.add(size, t.sizes[dim]);
    joined.push_back(&t);
  }
  // n differences or more leave nothing.
  size = syms.sub(size, syms.constant(n));
  if (size->isConst() && size->constant() < 0)
    size = syms.constant(0);
  Sizes sizes = self.sizes;
  sizes[dim] = size;
  return one(contiguousType(syms, joinedDType(joined), sizes, self.device));
}

constexpr ShapeEntry kEntries[] = {
    {ops::aten_as_strided_scatter_default, likeSelf},
    {ops::aten_cat_default, cat},
    {ops::aten_constant_pad_nd_default, pad},
    {ops::aten_diff_default, diff},
    {ops::aten_embedding_default, embedding},
    {ops::aten_flip_default, flip},
    {ops::aten_gather_default, gather},
    {ops::aten_index_Tensor, index},
    {ops::aten_index_add_default, likeSelf},
    {ops::aten_index_copy_default, likeSelf},
    {ops::aten_index_put_default, likeSelf},
    {ops::aten_index_select_default, indexSelect},
    {ops::aten_pad_default, pad},
    {ops::aten_repeat_default, repeat},
    {ops::aten_roll_default, roll},
    {ops::aten_scatter_src, likeSelf},
    {ops::aten_scatter_value, likeSelf},
    {ops::aten_scatter_add_default, likeSelf},
    {ops::aten_scatter_reduce_two, likeSelf},
    {ops::aten_select_scatter_default, likeSelf},
    {ops::aten_slice_scatter_default, likeSelf},
    {ops::aten_stack_default, stack},
    {ops::aten_tril_default, triangle},
    {ops::aten_triu_default, triangle},
};

} // namespace

void registerIndexingShapes(ShapeRegistry &r) { r.add(kEntries); }

} // namespace gc
