//===- View.cpp - Shapes of views ------------------------------------------===//
//
// A view shares its input's storage: its type carries the sizes, strides
// and storage offset that index that storage, computed as torch computes
// them. Ops that split a tensor return one view per piece.
//
//===----------------------------------------------------------------------===//
#include "ShapeUtil.h"
#include "gc/IR/ShapeMath.h"

#include <algorithm>
#include <limits>

namespace gc {
namespace {

using namespace shape;

/// A view of `t` with other sizes, strides and offset.
TensorType viewOf(const TensorType &t, Sizes sizes, Sizes strides, const SymExpr *offset) {
  TensorType v = t;
  v.sizes = std::move(sizes);
  v.strides = std::move(strides);
  v.storageOffset = offset;
  return v;
}

std::string sizesText(const Sizes &sizes) {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i)
    out += (i ? ", " : "") + sizes[i]->str();
  return out + "]";
}

/// total // known for two products of sizes: the factors of `known` that
/// `total` has cancel first (sizes are never 0 where a -1 is inferred), so
/// that [s0, s1, -1, 8] of 32*s0*s1 elements infers 4, where the general
/// division by a symbolic divisor would stay unsimplified.
const SymExpr *divideSizes(SymContext &syms, const SymExpr *total, const SymExpr *known) {
  auto factors = [](const SymExpr *e) {
    std::vector<const SymExpr *> f;
    if (e->kind() == SymExpr::Kind::Mul)
      f.assign(e->operands().begin(), e->operands().end());
    else
      f.push_back(e);
    return f;
  };
  std::vector<const SymExpr *> rest = factors(total);
  const SymExpr *divisor = syms.constant(1);
  for (const SymExpr *d : factors(known)) {
    if (d->isConst()) {
      divisor = syms.mul(divisor, d);
      continue;
    }
    auto it = std::find(rest.begin(), rest.end(), d);
    if (it == rest.end())
      return syms.floorDiv(total, known);
    rest.erase(it);
  }
  const SymExpr *dividend = syms.constant(1);
  for (const SymExpr *f : rest)
    dividend = syms.mul(dividend, f);
  return syms.floorDiv(dividend, divisor);
}

/// `sizes` with a -1 entry inferred from `total` elements; the element
/// count must match.
Sizes inferViewSizes(SymContext &syms, const Sizes &requested, const SymExpr *total) {
  const SymExpr *minusOne = syms.constant(-1);
  const SymExpr *known = syms.constant(1);
  std::optional<size_t> inferred;
  for (size_t i = 0; i < requested.size(); ++i) {
    if (requested[i] == minusOne) {
      if (inferred)
        shapeFail("only one dimension can be inferred (-1)");
      inferred = i;
    } else if (requested[i]->isConst() && requested[i]->constant() < 0) {
      shapeFail("invalid size " + requested[i]->str());
    } else {
      known = syms.mul(known, requested[i]);
    }
  }
  Sizes sizes = requested;
  if (inferred) {
    if (known->isConst() && known->constant() == 0)
      shapeFail("cannot infer a -1 size among sizes with 0 elements");
    sizes[*inferred] = divideSizes(syms, total, known);
    known = syms.mul(known, sizes[*inferred]);
  }
  std::optional<int> same = compareSizes(syms, known, total);
  if (same && *same != 0)
    shapeFail("shape " + sizesText(requested) + " is invalid for an input of " + total->str() +
              " elements");
  return sizes;
}

/// The strides of `t` viewed with `sizes`, or nullopt if its layout does not
/// allow it. As torch's view rule: dimensions whose strides chain (each the
/// next one's stride times its size) form a chunk, and the new sizes must
/// split the chunks exactly; size-1 dimensions take any stride.
std::optional<Sizes> viewStrides(SymContext &syms, const TensorType &t, const Sizes &sizes) {
  const SymExpr *one = syms.constant(1);
  if (t.rank() == 0)
    return Sizes(sizes.size(), one);
  const SymExpr *total = numel(syms, t.sizes);
  if (total->isConst() && total->constant() == 0) {
    if (t.sizes == sizes)
      return t.strides;
    return contiguousStrides(syms, sizes);
  }
  Sizes strides(sizes.size());
  int64_t viewDim = static_cast<int64_t>(sizes.size()) - 1;
  const SymExpr *chunkBase = t.strides.back();
  const SymExpr *chunkNumel = one;
  const SymExpr *viewNumel = one;
  for (int64_t d = static_cast<int64_t>(t.rank()) - 1; d >= 0; --d) {
    chunkNumel = syms.mul(chunkNumel, t.sizes[d]);
    bool chunkEnds = d == 0 || (t.sizes[d - 1] != one &&
                                t.strides[d - 1] != syms.mul(chunkNumel, chunkBase));
    if (!chunkEnds)
      continue;
    // Take new dimensions until they cover the chunk, and any size-1 ones
    // right after. Products only grow, so a chunk that is not split exactly
    // never matches.
    while (viewDim >= 0 && (viewNumel != chunkNumel || sizes[viewDim] == one)) {
      strides[viewDim] = syms.mul(viewNumel, chunkBase);
      viewNumel = syms.mul(viewNumel, sizes[viewDim]);
      --viewDim;
    }
    if (viewNumel != chunkNumel)
      return std::nullopt;
    if (d > 0) {
      chunkBase = t.strides[d - 1];
      chunkNumel = one;
      viewNumel = one;
    }
  }
  if (viewDim != -1)
    return std::nullopt;
  return strides;
}

/// `t` reshaped to `sizes` (-1 inferred): a view when the layout allows it,
/// else a contiguous copy, or an error if `viewOnly`.
TensorType reshaped(SymContext &syms, const TensorType &t, const Sizes &requested, bool viewOnly) {
  Sizes sizes = inferViewSizes(syms, requested, numel(syms, t.sizes));
  if (std::optional<Sizes> strides = viewStrides(syms, t, sizes))
    return viewOf(t, sizes, *strides, t.storageOffset);
  if (viewOnly)
    shapeFail("view sizes are not compatible with the input's sizes and strides; use reshape");
  return contiguousType(syms, t.dtype, sizes, t.device);
}

std::vector<Type> view(const ShapeContext &ctx) {
  return one(reshaped(ctx.syms(), ctx.tensor("self"), symInts(ctx, "size"), true));
}

std::vector<Type> reshape(const ShapeContext &ctx) {
  return one(reshaped(ctx.syms(), ctx.tensor("self"), symInts(ctx, "shape"), false));
}

std::vector<Type> viewAs(const ShapeContext &ctx) {
  return one(reshaped(ctx.syms(), ctx.tensor("self"), ctx.tensor("other").sizes, true));
}

std::vector<Type> reshapeAs(const ShapeContext &ctx) {
  return one(reshaped(ctx.syms(), ctx.tensor("self"), ctx.tensor("other").sizes, false));
}
std::vector<Type> ravel(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  return one(reshaped(ctx.syms(), self, {numel(ctx.syms(), self.sizes)}, false));
}

std::vector<Type> flatten(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  SymContext &syms = ctx.syms();
  int64_t rank = self.rank();
  int64_t start = wrapDimension(ctx.integer("start_dim", 0), rank);
  int64_t end = wrapDimension(ctx.integer("end_dim", -1), rank);
  if (start > end)
    shapeFail("flatten: start_dim comes after end_dim");
  if (rank == 0)
    return one(reshaped(syms, self, {syms.constant(1)}, false));
  if (start == end)
    return one(self);
  Sizes sizes(self.sizes.begin(), self.sizes.begin() + start);
  sizes.push_back(numel(syms, Sizes(self.sizes.begin() + start, self.sizes.begin() + end + 1)));
  sizes.insert(sizes.end(), self.sizes.begin() + end + 1, self.sizes.end());
  return one(reshaped(syms, self, sizes, false));
}

std::vector<Type> unflatten(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  SymContext &syms = ctx.syms();
  int64_t dim = wrapDimension(ctx.integer("dim"), self.rank());
  if (self.rank() == 0)
    shapeFail("unflatten needs a tensor with at least one dimension");
  Sizes inner = inferViewSizes(syms, symInts(ctx, "sizes"), self.sizes[dim]);
  Sizes sizes(self.sizes.begin(), self.sizes.begin() + dim);
  sizes.insert(sizes.end(), inner.begin(), inner.end());
  sizes.insert(sizes.end(), self.sizes.begin() + dim + 1, self.sizes.end());
  return one(reshaped(syms, self, sizes, true));
}

/// `t` with its dimensions in the order `dims` gives.
TensorType permuted(const TensorType &t, const std::vector<int64_t> &dims) {
  if (dims.size() != t.rank())
    shapeFail("permute needs " + std::to_string(t.rank()) + " dimensions, not " +
              std::to_string(dims.size()));
  Sizes sizes, strides;
  for (int64_t d : dims) {
    sizes.push_back(t.sizes[d]);
    strides.push_back(t.strides[d]);
  }
  return viewOf(t, sizes, strides, t.storageOffset);
}

std::vector<Type> permute(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  return one(permuted(self, wrapDims(ctx.ints("dims"), self.rank())));
}

TensorType transposed(const TensorType &t, int64_t dim0, int64_t dim1) {
  int64_t rank = t.rank();
  dim0 = wrapDimension(dim0, rank);
  dim1 = wrapDimension(dim1, rank);
  if (rank == 0)
    return t;
  std::vector<int64_t> dims(rank);
  for (int64_t d = 0; d < rank; ++d)
    dims[d] = d;
  std::swap(dims[dim0], dims[dim1]);
  return permuted(t, dims);
}

std::vector<Type> transpose(const ShapeContext &ctx) {
  return one(transposed(ctx.tensor("self"), ctx.integer("dim0"), ctx.integer("dim1")));
}

std::vector<Type> t(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  if (self.rank() > 2)
    shapeFail("t needs a tensor of at most 2 dimensions, not " + std::to_string(self.rank()));
  return one(self.rank() < 2 ? self : transposed(self, 0, 1));
}

/// mT, mH: the last two dims swapped; matrix_H only for 2-D tensors.
std::vector<Type> matrixTranspose(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  int64_t rank = self.rank();
  if (rank < 2 || (ctx.op() == ops::aten_matrix_H_default && rank != 2))
    shapeFail(std::string(ctx.op() == ops::aten_matrix_H_default ? "matrix_H needs a 2-D"
                                                                  : "mT and mH need an at least 2-D") +
              " tensor, not " + std::to_string(rank) + "-D");
  return one(transposed(self, rank - 2, rank - 1));
}

/// numpy_T: every dim reversed.
std::vector<Type> reversedDims(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  std::vector<int64_t> dims(self.rank());
  for (int64_t i = 0; i < self.rank(); ++i)
    dims[i] = self.rank() - 1 - i;
  return one(permuted(self, dims));
}

std::vector<Type> movedim(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  int64_t rank = self.rank();
  std::vector<int64_t> source = wrapDims(ctx.ints("source"), rank);
  std::vector<int64_t> destination = wrapDims(ctx.ints("destination"), rank);
  if (source.size() != destination.size())
    shapeFail("movedim needs as many destinations as sources");
  // Moved dimensions go to their destinations; the others fill the
  // remaining places in order.
  std::vector<int64_t> dims(rank, -1);
  std::vector<bool> moved(rank, false);
  for (size_t i = 0; i < source.size(); ++i) {
    dims[destination[i]] = source[i];
    moved[source[i]] = true;
  }
  int64_t next = 0;
  for (int64_t &d : dims) {
    if (d >= 0)
      continue;
    while (moved[next])
      ++next;
    d = next++;
  }
  return one(permuted(self, dims));
}

/// `t` expanded to `sizes` (-1 keeps a size): new and stretched size-1
/// dimensions get stride 0.
TensorType expanded(SymContext &syms, const TensorType &t, const Sizes &sizes) {
  if (sizes.size() < t.rank())
    shapeFail("expand to " + std::to_string(sizes.size()) + " dimensions from " +
              std::to_string(t.rank()));
  const SymExpr *zero = syms.constant(0);
  const SymExpr *one = syms.constant(1);
  const SymExpr *minusOne = syms.constant(-1);
  size_t lead = sizes.size() - t.rank();
  Sizes outSizes(sizes.size()), outStrides(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    const SymExpr *want = sizes[i];
    if (i < lead) {
      if (want == minusOne)
        shapeFail("expand cannot keep (-1) a new leading dimension");
      outSizes[i] = want;
      outStrides[i] = zero;
      continue;
    }
    const SymExpr *have = t.sizes[i - lead];
    if (want == minusOne || want == have) {
      outSizes[i] = have;
      outStrides[i] = t.strides[i - lead];
    } else if (have == one) {
      outSizes[i] = want;
      outStrides[i] = zero;
    } else {
      std::optional<int> same = compareSizes(syms, want, have);
      if (same && *same != 0)
        shapeFail("cannot expand size " + have->str() + " to " + want->str());
      // Different symbolic expressions: torch.export guarantees they agree.
      outSizes[i] = want;
      outStrides[i] = t.strides[i - lead];
    }
  }
  return viewOf(t, outSizes, outStrides, t.storageOffset);
}

std::vector<Type> expand(const ShapeContext &ctx) {
  return one(expanded(ctx.syms(), ctx.tensor("self"), symInts(ctx, "size")));
}

std::vector<Type> broadcastTo(const ShapeContext &ctx) {
  return one(expanded(ctx.syms(), ctx.tensor("self"), symInts(ctx, "size")));
}
std::vector<Type> expandAs(const ShapeContext &ctx) {
  return one(expanded(ctx.syms(), ctx.tensor("self"), ctx.tensor("other").sizes));
}

std::vector<Type> broadcastTensors(const ShapeContext &ctx) {
  std::vector<const TensorType *> tensors = ctx.tensors("tensors");
  Sizes sizes;
  for (const TensorType *t : tensors)
    sizes = broadcastSizes(ctx.syms(), sizes, t->sizes);
  std::vector<Type> out;
  for (const TensorType *t : tensors)
    out.push_back(result(expanded(ctx.syms(), *t, sizes)));
  return out;
}

/// `t` narrowed along `dim` to `length` elements from `start`, taking every
/// `step`-th one.
TensorType sliced(SymContext &syms, const TensorType &t, int64_t dim, const SymExpr *start,
                  const SymExpr *length, int64_t step) {
  TensorType v = t;
  v.sizes[dim] = length;
  v.strides[dim] = syms.mul(t.strides[dim], syms.constant(step));
  v.storageOffset = syms.add(t.storageOffset, syms.mul(start, t.strides[dim]));
  return v;
}

/// A position along a dimension of `size`: a negative constant counts from
/// the end.
const SymExpr *fromEnd(SymContext &syms, const SymExpr *pos, const SymExpr *size) {
  return pos->isConst() && pos->constant() < 0 ? syms.add(size, pos) : pos;
}

/// A slice bound: negative counts from the end; clamped into [0, size] when
/// both are known (a symbolic one is taken to lie in range, which
/// torch.export guarantees).
const SymExpr *sliceBound(SymContext &syms, const SymExpr *bound, const SymExpr *size) {
  if (bound->isConst() && bound->constant() == std::numeric_limits<int64_t>::max())
    return size;
  const SymExpr *b = fromEnd(syms, bound, size);
  if (!b->isConst() || !size->isConst())
    return b;
  return syms.constant(std::clamp<int64_t>(b->constant(), 0, size->constant()));
}

std::vector<Type> slice(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  SymContext &syms = ctx.syms();
  if (self.rank() == 0)
    shapeFail("slice needs a tensor with at least one dimension");
  int64_t dim = wrapDimension(ctx.integer("dim", 0), self.rank());
  int64_t step = ctx.integer("step", 1);
  if (step <= 0)
    shapeFail("slice step must be positive");
  const SymExpr *size = self.sizes[dim];
  const SymExpr *start =
      sliceBound(syms, ctx.has("start") ? symInt(ctx, "start") : syms.constant(0), size);
  const SymExpr *end = ctx.has("end") ? sliceBound(syms, symInt(ctx, "end"), size) : size;
  if (std::optional<int> order = compareSizes(syms, end, start); order && *order < 0)
    end = start;
  const SymExpr *length =
      syms.floorDiv(syms.add(syms.sub(end, start), syms.constant(step - 1)), syms.constant(step));
  return one(sliced(syms, self, dim, start, length, step));
}

std::vector<Type> narrow(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  SymContext &syms = ctx.syms();
  if (self.rank() == 0)
    shapeFail("narrow needs a tensor with at least one dimension");
  int64_t dim = wrapDimension(ctx.integer("dim"), self.rank());
  const SymExpr *start = fromEnd(syms, symInt(ctx, "start"), self.sizes[dim]);
  const SymExpr *length = symInt(ctx, "length");
  std::optional<int> fits = compareSizes(syms, syms.add(start, length), self.sizes[dim]);
  if ((length->isConst() && length->constant() < 0) || (fits && *fits > 0))
    shapeFail("narrow goes past the end of dimension " + std::to_string(dim));
  return one(sliced(syms, self, dim, start, length, 1));
}

/// `t` at `index` along `dim`, which disappears.
TensorType selected(SymContext &syms, const TensorType &t, int64_t dim, const SymExpr *index) {
  const SymExpr *size = t.sizes[dim];
  if (index->isConst() && size->isConst() &&
      (index->constant() < -size->constant() || index->constant() >= size->constant()))
    shapeFail("index " + index->str() + " is out of range for size " + size->str());
  TensorType v = t;
  v.storageOffset =
      syms.add(t.storageOffset, syms.mul(fromEnd(syms, index, size), t.strides[dim]));
  v.sizes.erase(v.sizes.begin() + dim);
  v.strides.erase(v.strides.begin() + dim);
  return v;
}

std::vector<Type> select(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  if (self.rank() == 0)
    shapeFail("select needs a tensor with at least one dimension");
  int64_t dim = wrapDimension(ctx.integer("dim"), self.rank());
  return one(selected(ctx.syms(), self, dim, symInt(ctx, "index")));
}

std::vector<Type> unbind(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  if (self.rank() == 0)
    shapeFail("unbind needs a tensor with at least one dimension");
  int64_t dim = wrapDimension(ctx.integer("dim", 0), self.rank());
  int64_t n = constantSize(self.sizes[dim], "the size unbind splits");
  std::vector<Type> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(result(selected(ctx.syms(), self, dim, ctx.syms().constant(i))));
  return out;
}

/// `self` cut along `dim` into pieces of `lengths`, which must add up to
/// the size there.
std::vector<Type> pieces(const ShapeContext &ctx, int64_t dim, const std::vector<int64_t> &lengths) {
  const TensorType &self = ctx.tensor("self");
  SymContext &syms = ctx.syms();
  std::vector<Type> out;
  int64_t start = 0;
  for (int64_t length : lengths) {
    if (length < 0)
      shapeFail("a piece of negative size " + std::to_string(length));
    out.push_back(result(
        sliced(syms, self, dim, syms.constant(start), syms.constant(length), 1)));
    start += length;
  }
  std::optional<int> covers = compareSizes(syms, syms.constant(start), self.sizes[dim]);
  if (covers && *covers != 0)
    shapeFail("pieces of " + std::to_string(start) + " elements do not cover size " +
              self.sizes[dim]->str());
  return out;
}

/// Pieces of `splitSize` along `dim`, the last one shorter.
std::vector<Type> evenPieces(const ShapeContext &ctx, int64_t dim, int64_t splitSize) {
  const TensorType &self = ctx.tensor("self");
  int64_t size = constantSize(self.sizes[dim], "the size split cuts");
  return pieces(ctx, dim, splitLengths(size, splitSize));
}

int64_t splitDim(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  if (self.rank() == 0)
    shapeFail("cannot split a 0-dim tensor");
  return wrapDimension(ctx.integer("dim", 0), self.rank());
}

std::vector<Type> split(const ShapeContext &ctx) {
  return evenPieces(ctx, splitDim(ctx), ctx.integer("split_size"));
}

std::vector<Type> splitWithSizes(const ShapeContext &ctx) {
  return pieces(ctx, splitDim(ctx), ctx.ints("split_sizes"));
}

std::vector<Type> chunk(const ShapeContext &ctx) {
  int64_t dim = splitDim(ctx);
  int64_t chunks = ctx.integer("chunks");
  if (chunks <= 0)
    shapeFail("chunk needs a positive number of chunks");
  int64_t size = constantSize(ctx.tensor("self").sizes[dim], "the size chunk cuts");
  return evenPieces(ctx, dim, (size + chunks - 1) / chunks);
}

/// The dimensions a squeeze may drop: the listed ones, or all.
std::vector<Type> squeezeDims(const ShapeContext &ctx, std::vector<bool> candidates) {
  const TensorType &self = ctx.tensor("self");
  TensorType v = self;
  v.sizes.clear();
  v.strides.clear();
  for (size_t d = 0; d < self.rank(); ++d) {
    bool drop = candidates[d] && self.sizes[d]->isConst() && self.sizes[d]->constant() == 1;
    if (!drop) {
      v.sizes.push_back(self.sizes[d]);
      v.strides.push_back(self.strides[d]);
    }
  }
  return one(std::move(v));
}

std::vector<Type> squeeze(const ShapeContext &ctx) {
  return squeezeDims(ctx, std::vector<bool>(ctx.tensor("self").rank(), true));
}

/// squeeze.dim, squeeze.dims: only the named dimensions (an empty list
/// names none).
std::vector<Type> squeezeNamed(const ShapeContext &ctx) {
  int64_t rank = ctx.tensor("self").rank();
  std::vector<bool> candidates(rank, false);
  for (int64_t d : wrapDims(ctx.ints("dim"), rank))
    if (rank > 0)
      candidates[d] = true;
  return squeezeDims(ctx, candidates);
}

std::vector<Type> unsqueeze(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  SymContext &syms = ctx.syms();
  int64_t dim = wrapDimension(ctx.integer("dim"), self.rank() + 1);
  // The new dimension's stride makes the view as contiguous as it can be.
  const SymExpr *stride = static_cast<size_t>(dim) >= self.rank()
                              ? syms.constant(1)
                              : syms.mul(self.sizes[dim], self.strides[dim]);
  TensorType v = self;
  v.sizes.insert(v.sizes.begin() + dim, syms.constant(1));
  v.strides.insert(v.strides.begin() + dim, stride);
  return one(std::move(v));
}

/// diagonal: the elements whose indices along dim1 and dim2 differ by
/// `offset`, as a new last dimension striding both.
std::vector<Type> diagonal(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  SymContext &syms = ctx.syms();
  int64_t d1 = wrapDimension(ctx.integer("dim1", 0), self.rank());
  int64_t d2 = wrapDimension(ctx.integer("dim2", 1), self.rank());
  if (d1 == d2 || self.rank() < 2)
    shapeFail("diagonal needs two different dimensions");
  int64_t offset = ctx.integer("offset", 0);
  const SymExpr *shift = syms.constant(offset < 0 ? -offset : offset);
  const SymExpr *rows = self.sizes[d1], *cols = self.sizes[d2];
  const SymExpr *length = offset >= 0 ? syms.min(rows, syms.sub(cols, shift))
                                      : syms.min(syms.sub(rows, shift), cols);
  length = syms.max(length, syms.constant(0));
  const SymExpr *start = syms.constant(0);
  if (!length->isConst() || length->constant() > 0)
    start = syms.mul(shift, offset >= 0 ? self.strides[d2] : self.strides[d1]);
  TensorType v = self;
  for (int64_t d : {std::max(d1, d2), std::min(d1, d2)}) {
    v.sizes.erase(v.sizes.begin() + d);
    v.strides.erase(v.strides.begin() + d);
  }
  v.sizes.push_back(length);
  v.strides.push_back(syms.add(self.strides[d1], self.strides[d2]));
  v.storageOffset = syms.add(self.storageOffset, start);
  return one(std::move(v));
}

/// unfold: every `size`-long window of `dimension`, `step` apart: that dim
/// counts the windows and a new last dim walks through one. A 0-dim
/// tensor has one window of one element.
std::vector<Type> unfold(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  SymContext &syms = ctx.syms();
  int64_t size = ctx.integer("size"), step = ctx.integer("step");
  if (step <= 0)
    shapeFail("unfold needs a positive step, got " + std::to_string(step));
  TensorType v = self;
  if (self.rank() == 0) {
    wrapDimension(ctx.integer("dimension"), 1);
    if (size < 0 || size > 1)
      shapeFail("unfold of a 0-dim tensor needs a size of at most 1, got " + std::to_string(size));
    v.sizes = {syms.constant(size)};
    v.strides = {syms.constant(1)};
    return one(std::move(v));
  }
  int64_t d = wrapDimension(ctx.integer("dimension"), self.rank());
  int64_t length = constantSize(self.sizes[d], "the unfolded size");
  if (size < 0 || size > length)
    shapeFail("unfold: a window of " + std::to_string(size) + " does not fit in size " +
              std::to_string(length));
  v.sizes[d] = syms.constant((length - size) / step + 1);
  v.strides[d] = syms.mul(self.strides[d], syms.constant(step));
  v.sizes.push_back(syms.constant(size));
  v.strides.push_back(self.strides[d]);
  return one(std::move(v));
}

/// resize, resize_as: a new contiguous tensor of the given sizes (of the
/// template's for resize_as).
std::vector<Type> resize(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  Sizes sizes = ctx.has("the_template") ? ctx.tensor("the_template").sizes : symInts(ctx, "size");
  for (const SymExpr *s : sizes)
    if (s->isConst() && s->constant() < 0)
      shapeFail("resize to a negative size " + s->str());
  return one(contiguousType(ctx.syms(), self.dtype, sizes, self.device));
}

std::vector<Type> asStrided(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  Sizes sizes = symInts(ctx, "size"), strides = symInts(ctx, "stride");
  if (sizes.size() != strides.size())
    shapeFail("as_strided needs as many strides as sizes");
  const SymExpr *offset =
      ctx.has("storage_offset") ? symInt(ctx, "storage_offset")
                                : self.storageOffset;
  return one(viewOf(self, sizes, strides, offset));
}

constexpr ShapeEntry kEntries[] = {
    {ops::aten__unsafe_view_default, reshape},
    {ops::aten_as_strided_default, asStrided},
    {ops::aten_broadcast_tensors_default, broadcastTensors},
    {ops::aten_broadcast_to_default, broadcastTo},
    {ops::aten_chunk_default, chunk},
    {ops::aten_diagonal_default, diagonal},
    {ops::aten_expand_default, expand},
    {ops::aten_expand_as_default, expandAs},
    {ops::aten_flatten_using_ints, flatten},
    {ops::aten_mH_default, matrixTranspose},
    {ops::aten_mT_default, matrixTranspose},
    {ops::aten_matrix_H_default, matrixTranspose},
    {ops::aten_movedim_int, movedim},
    {ops::aten_movedim_intlist, movedim},
    {ops::aten_narrow_default, narrow},
    {ops::aten_numpy_T_default, reversedDims},
    {ops::aten_permute_default, permute},
    {ops::aten_ravel_default, ravel},
    {ops::aten_reshape_default, reshape},
    {ops::aten_reshape_as_default, reshapeAs},
    {ops::aten_resize_default, resize},
    {ops::aten_resize_as_default, resize},
    {ops::aten_select_int, select},
    {ops::aten_slice_Tensor, slice},
    {ops::aten_split_Tensor, split},
    {ops::aten_split_with_sizes_default, splitWithSizes},
    {ops::aten_squeeze_default, squeeze},
    {ops::aten_squeeze_dim, squeezeNamed},
    {ops::aten_squeeze_dims, squeezeNamed},
    {ops::aten_t_default, t},
    {ops::aten_transpose_int, transpose},
    {ops::aten_unbind_int, unbind},
    {ops::aten_unflatten_int, unflatten},
    {ops::aten_unfold_default, unfold},
    {ops::aten_unsqueeze_default, unsqueeze},
    {ops::aten_view_default, view},
    {ops::aten_view_as_default, viewAs},
};

} // namespace

void registerViewShapes(ShapeRegistry &r) { r.add(kEntries); }

} // namespace gc
