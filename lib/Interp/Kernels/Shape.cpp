//===- Shape.cpp - Views and shape kernels ---------------------------------===//
//
// Ops that torch defines as views (view, permute, slice, expand, split...)
// return asStrided views over their input's storage with exactly the sizes,
// strides and offsets torch gives them, so that aliasing and the strides of
// later results match torch. Ops that torch defines as copies (repeat, flip,
// roll, cat, stack) fill a new tensor by copying into views of it, which
// leaves element conversion and broadcasting to Tensor::copyFrom.
//
//===----------------------------------------------------------------------===//

#include "gc/Interp/Kernel.h"
#include "gc/IR/ArgReader.h"
#include "gc/IR/ShapeMath.h"
#include "gc/Interp/Promotion.h"

#include <algorithm>
#include <limits>

namespace gc {
namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// A view of `t` with other sizes and strides at the same offset.
Tensor restride(const Tensor &t, Shape sizes, Shape strides) {
  return t.asStrided(std::move(sizes), std::move(strides), t.offset());
}

/// Resolves the one -1 a size list may hold, and checks the element count.
Shape inferSize(Shape sizes, int64_t count) {
  int64_t known = 1;
  std::optional<size_t> inferred;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (inferred)
        kernelFail("only one dimension can be inferred");
      inferred = i;
    } else if (sizes[i] < 0) {
      kernelFail("invalid shape dimension " + std::to_string(sizes[i]));
    } else {
      known *= sizes[i];
    }
  }
  bool fits = inferred ? known != 0 && count % known == 0 : known == count;
  if (!fits)
    kernelFail("shape '" + shapeString(sizes) + "' is invalid for input of size " +
               std::to_string(count));
  if (inferred)
    sizes[*inferred] = count / known;
  return sizes;
}

/// The strides a view of `t` with `sizes` (same element count) must have, or
/// nothing if the elements are not laid out so that one exists. The old dims
/// split into chunks that are contiguous among themselves; every new dim must
/// fall inside one chunk, and it then takes strides that continue the
/// chunk's innermost stride.
std::optional<Shape> viewStrides(const Tensor &t, const Shape &sizes) {
  const Shape &oldSizes = t.sizes(), &oldStrides = t.strides();
  if (t.numel() == 0)
    return oldSizes == sizes ? oldStrides : contiguousStrides(sizes);
  if (oldSizes.empty())
    return contiguousStrides(sizes); // sizes are all 1
  Shape strides(sizes.size());
  int64_t newDim = static_cast<int64_t>(sizes.size()) - 1;
  int64_t chunkStride = oldStrides.back(), chunkCount = 1, viewCount = 1;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    chunkCount *= oldSizes[d];
    // A size-1 dim never breaks a chunk, whatever its stride.
    bool chunkEnds =
        d == 0 || (oldSizes[d - 1] != 1 && oldStrides[d - 1] != chunkCount * chunkStride);
    if (!chunkEnds)
      continue;
    while (newDim >= 0 && (viewCount < chunkCount || sizes[newDim] == 1)) {
      strides[newDim] = viewCount * chunkStride;
      viewCount *= sizes[newDim];
      --newDim;
    }
    if (viewCount != chunkCount)
      return std::nullopt;
    if (d > 0) {
      chunkStride = oldStrides[d - 1];
      chunkCount = viewCount = 1;
    }
  }
  if (newDim != -1)
    return std::nullopt;
  return strides;
}

Tensor viewAs(const Tensor &t, const Shape &requested) {
  Shape sizes = inferSize(requested, t.numel());
  std::optional<Shape> strides = viewStrides(t, sizes);
  if (!strides)
    kernelFail("view size is not compatible with input tensor's size and stride (at least one "
               "dimension spans across two contiguous subspaces); use reshape instead");
  return restride(t, std::move(sizes), std::move(*strides));
}

/// A view where possible, else a contiguous copy, as torch's reshape.
Tensor reshapeTo(const Tensor &t, const Shape &requested) {
  Shape sizes = inferSize(requested, t.numel());
  if (std::optional<Shape> strides = viewStrides(t, sizes))
    return restride(t, std::move(sizes), std::move(*strides));
  Tensor copy = t.clone();
  return restride(copy, sizes, contiguousStrides(sizes));
}

Tensor permuteView(const Tensor &t, const std::vector<int64_t> &dims) {
  if (static_cast<int64_t>(dims.size()) != t.dim())
    kernelFail("permute: number of dims " + std::to_string(dims.size()) +
               " does not match the tensor's rank " + std::to_string(t.dim()));
  Shape sizes(dims.size()), strides(dims.size());
  std::vector<bool> seen(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrapDim(dims[i], t.dim());
    if (seen[d])
      kernelFail("permute: repeated dim " + std::to_string(dims[i]));
    seen[d] = true;
    sizes[i] = t.size(d);
    strides[i] = t.strides()[d];
  }
  return restride(t, std::move(sizes), std::move(strides));
}

Tensor transposeView(const Tensor &t, int64_t dim0, int64_t dim1) {
  if (t.dim() == 0)
    return restride(t, {}, {});
  Shape sizes = t.sizes(), strides = t.strides();
  int64_t a = wrapDim(dim0, t.dim()), b = wrapDim(dim1, t.dim());
  std::swap(sizes[a], sizes[b]);
  std::swap(strides[a], strides[b]);
  return restride(t, std::move(sizes), std::move(strides));
}

/// torch's expand: `sizes` may add leading dims, -1 keeps a size, and only
/// size-1 dims grow (to stride 0). A new leading dim of size 1 gets the
/// stride a contiguous tensor would have there, except that every dim
/// expanded from a 0-dim tensor has stride 0.
Tensor expandView(const Tensor &t, const Shape &sizes) {
  int64_t rank = static_cast<int64_t>(sizes.size());
  if (rank < t.dim())
    kernelFail("expand: the number of sizes provided (" + std::to_string(rank) +
               ") must be greater or equal to the number of dimensions in the tensor (" +
               std::to_string(t.dim()) + ")");
  Shape outSizes(rank), outStrides(rank);
  for (int64_t i = rank - 1; i >= 0; --i) {
    int64_t d = i - (rank - t.dim());
    bool isNew = d < 0;
    int64_t size = isNew ? 1 : t.size(d);
    int64_t stride = !isNew         ? t.strides()[d]
                     : i + 1 < rank ? outSizes[i + 1] * outStrides[i + 1]
                                    : 0;
    int64_t target = sizes[i];
    if (target == -1) {
      if (isNew)
        kernelFail("expand: -1 is not allowed in a leading, non-existing dimension");
      target = size;
    }
    if (target != size) {
      if (size != 1)
        kernelFail("expand: the expanded size of the tensor (" + std::to_string(target) +
                   ") must match the existing size (" + std::to_string(size) +
                   ") at non-singleton dimension " + std::to_string(i));
      stride = 0;
    }
    outSizes[i] = target;
    outStrides[i] = stride;
  }
  return restride(t, std::move(outSizes), std::move(outStrides));
}

/// Elements start, start+step, ... of `dim`, `count` of them.
Tensor stridedView(const Tensor &t, int64_t dim, int64_t start, int64_t count, int64_t step) {
  Shape sizes = t.sizes(), strides = t.strides();
  int64_t offset = t.offset() + start * strides[dim];
  sizes[dim] = count;
  strides[dim] *= step;
  return t.asStrided(std::move(sizes), std::move(strides), offset);
}

Tensor narrowView(const Tensor &t, int64_t dim, int64_t start, int64_t length) {
  return stridedView(t, dim, start, length, 1);
}

Tensor selectView(const Tensor &t, int64_t dim, int64_t index) {
  if (t.dim() == 0)
    kernelFail("select() cannot be applied to a 0-dim tensor");
  dim = wrapDim(dim, t.dim());
  int64_t size = t.size(dim);
  if (index < -size || index >= size)
    kernelFail("select(): index " + std::to_string(index) + " out of range for tensor of size " +
               shapeString(t.sizes()) + " at dimension " + std::to_string(dim));
  if (index < 0)
    index += size;
  Shape sizes = t.sizes(), strides = t.strides();
  int64_t offset = t.offset() + index * strides[dim];
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  return t.asStrided(std::move(sizes), std::move(strides), offset);
}

Tensor unsqueezeView(const Tensor &t, int64_t dim) {
  dim = wrapDim(dim, t.dim() + 1);
  Shape sizes = t.sizes(), strides = t.strides();
  // The new dim's stride is what a contiguous layout would give it there.
  int64_t stride = dim >= t.dim() ? 1 : sizes[dim] * strides[dim];
  sizes.insert(sizes.begin() + dim, 1);
  strides.insert(strides.begin() + dim, stride);
  return restride(t, std::move(sizes), std::move(strides));
}

/// Drops the size-1 dims among those `drop` marks.
Tensor squeezeView(const Tensor &t, const std::vector<bool> &drop) {
  Shape sizes, strides;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (drop[d] && t.size(d) == 1)
      continue;
    sizes.push_back(t.size(d));
    strides.push_back(t.strides()[d]);
  }
  return restride(t, std::move(sizes), std::move(strides));
}

/// A mask over the dims of `t` from a list of (possibly negative) dims.
std::vector<bool> dimMask(const Tensor &t, const std::vector<int64_t> &dims) {
  std::vector<bool> mask(t.dim());
  for (int64_t d : dims) {
    int64_t w = wrapDim(d, t.dim());
    if (t.dim() == 0)
      continue;
    if (mask[w])
      kernelFail("dim " + std::to_string(w) + " appears multiple times in the list of dims");
    mask[w] = true;
  }
  return mask;
}

/// Consecutive views of `dim` with the given lengths, which must add up to
/// its size.
std::vector<Tensor> splitView(const Tensor &t, int64_t dim, const std::vector<int64_t> &lengths) {
  if (t.dim() == 0)
    kernelFail("split expects at least a 1-dimensional tensor");
  dim = wrapDim(dim, t.dim());
  int64_t total = 0;
  for (int64_t length : lengths) {
    if (length < 0)
      kernelFail("split: negative split size " + std::to_string(length));
    total += length;
  }
  if (total != t.size(dim))
    kernelFail("split: split sizes add up to " + std::to_string(total) + " but dimension " +
               std::to_string(dim) + " has size " + std::to_string(t.size(dim)));
  std::vector<Tensor> parts;
  int64_t start = 0;
  for (int64_t length : lengths) {
    parts.push_back(narrowView(t, dim, start, length));
    start += length;
  }
  return parts;
}

/// Pieces of `pieceSize` elements along `dim`, the last one possibly smaller.
std::vector<Tensor> splitEvenly(const Tensor &t, int64_t pieceSize, int64_t dim) {
  if (t.dim() == 0)
    kernelFail("split expects at least a 1-dimensional tensor");
  int64_t size = t.size(wrapDim(dim, t.dim()));
  return splitView(t, dim, splitLengths(size, pieceSize));
}

} // namespace

//===----------------------------------------------------------------------===//
// Helpers shared with the other kernel families (declared in Kernel.h)
//===----------------------------------------------------------------------===//

int64_t wrapDim(int64_t dim, int64_t rank) {
  try {
    return normalizeDim(dim, rank);
  } catch (const ArgumentError &e) {
    kernelFail(e.what());
  }
}

Tensor concatenate(const std::vector<Tensor> &tensors, int64_t dim) {
  if (tensors.empty())
    kernelFail("cat expects a non-empty list of tensors");
  DType dtype = tensors[0].dtype();
  for (const Tensor &t : tensors)
    dtype = promoteTypes(dtype, t.dtype());
  // For backward compatibility torch skips 1-D empty tensors, whatever the
  // other tensors' ranks.
  auto skipped = [](const Tensor &t) { return t.sizes() == Shape{0}; };
  std::vector<const Tensor *> parts;
  for (const Tensor &t : tensors)
    if (!skipped(t))
      parts.push_back(&t);
  if (parts.empty())
    return Tensor::zeros(dtype, {0});
  const Tensor &first = *parts[0];
  if (first.dim() == 0)
    kernelFail("zero-dimensional tensor cannot be concatenated");
  dim = wrapDim(dim, first.dim());
  Shape sizes = first.sizes();
  sizes[dim] = 0;
  for (const Tensor *t : parts) {
    bool compatible = t->dim() == first.dim();
    for (int64_t d = 0; compatible && d < first.dim(); ++d)
      compatible = d == dim || t->size(d) == first.size(d);
    if (!compatible)
      kernelFail("cat: sizes of tensors must match except in dimension " + std::to_string(dim) +
                 "; got " + shapeString(first.sizes()) + " and " + shapeString(t->sizes()));
    sizes[dim] += t->size(dim);
  }
  Tensor out = Tensor::zeros(dtype, sizes);
  int64_t start = 0;
  for (const Tensor *t : parts) {
    narrowView(out, dim, start, t->size(dim)).copyFrom(*t);
    start += t->size(dim);
  }
  return out;
}

namespace {

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

using Result = std::vector<Tensor>;

Result view(const OpCall &call) { return {viewAs(call.tensor("self"), call.ints("size"))}; }

Result reshape(const OpCall &call) { return {reshapeTo(call.tensor("self"), call.ints("shape"))}; }

Result permute(const OpCall &call) { return {permuteView(call.tensor("self"), call.ints("dims"))}; }

Result transpose(const OpCall &call) {
  return {transposeView(call.tensor("self"), call.integer("dim0"), call.integer("dim1"))};
}

Result t(const OpCall &call) {
  Tensor self = call.tensor("self");
  if (self.dim() > 2)
    kernelFail("t() expects a tensor with <= 2 dimensions, but self is " +
               std::to_string(self.dim()) + "D");
  return {transposeView(self, 0, -1)};
}

Result expand(const OpCall &call) { return {expandView(call.tensor("self"), call.ints("size"))}; }

/// The view slice(self, dim, start, end, step) reads, the other arguments
/// taken from `call`.
Tensor sliceView(const Tensor &self, const OpCall &call) {
  if (self.dim() == 0)
    kernelFail("slice() cannot be applied to a 0-dim tensor");
  int64_t dim = wrapDim(call.integer("dim", 0), self.dim());
  int64_t size = self.size(dim);
  int64_t start = call.has("start") ? call.integer("start") : 0;
  int64_t end = call.has("end") ? call.integer("end") : std::numeric_limits<int64_t>::max();
  int64_t step = call.integer("step", 1);
  if (step <= 0)
    kernelFail("slice step must be positive");
  // Python slicing: negative bounds count from the end, then clamp.
  auto clampBound = [size](int64_t b) {
    if (b < 0)
      b += size;
    return std::clamp<int64_t>(b, 0, size);
  };
  start = clampBound(start);
  end = std::max(clampBound(end), start);
  return stridedView(self, dim, start, (end - start + step - 1) / step, step);
}

Result slice(const OpCall &call) { return {sliceView(call.tensor("self"), call)}; }

/// slice_scatter: a copy of self with src written where slice reads.
Result sliceScatter(const OpCall &call) {
  Tensor out = call.tensor("self").clone();
  Tensor view = sliceView(out, call);
  Tensor src = call.tensor("src");
  if (src.sizes() != view.sizes())
    kernelFail("slice_scatter: src has shape " + shapeString(src.sizes()) +
               ", the slice has shape " + shapeString(view.sizes()));
  view.copyFrom(src);
  return {out};
}

Result select(const OpCall &call) {
  return {selectView(call.tensor("self"), call.integer("dim"), call.integer("index"))};
}

Result squeezeDefault(const OpCall &call) {
  Tensor self = call.tensor("self");
  return {squeezeView(self, std::vector<bool>(self.dim(), true))};
}

Result squeezeDim(const OpCall &call) {
  Tensor self = call.tensor("self");
  return {squeezeView(self, dimMask(self, {call.integer("dim")}))};
}

Result squeezeDims(const OpCall &call) {
  Tensor self = call.tensor("self");
  return {squeezeView(self, dimMask(self, call.ints("dim")))};
}

Result unsqueeze(const OpCall &call) {
  return {unsqueezeView(call.tensor("self"), call.integer("dim"))};
}

Result flatten(const OpCall &call) {
  Tensor self = call.tensor("self");
  if (self.dim() == 0)
    return {reshapeTo(self, {1})};
  int64_t start = wrapDim(call.integer("start_dim", 0), self.dim());
  int64_t end = wrapDim(call.integer("end_dim", -1), self.dim());
  if (start > end)
    kernelFail("flatten() has invalid args: start_dim cannot come after end_dim");
  if (start == end)
    return {restride(self, self.sizes(), self.strides())};
  const Shape &old = self.sizes();
  Shape sizes(old.begin(), old.begin() + start);
  sizes.push_back(numel(Shape(old.begin() + start, old.begin() + end + 1)));
  sizes.insert(sizes.end(), old.begin() + end + 1, old.end());
  return {reshapeTo(self, sizes)};
}

Result unflatten(const OpCall &call) {
  Tensor self = call.tensor("self");
  if (self.dim() == 0)
    kernelFail("unflatten: cannot be applied to a 0-dim tensor");
  int64_t dim = wrapDim(call.integer("dim"), self.dim());
  Shape inner = call.ints("sizes");
  if (inner.empty())
    kernelFail("unflatten: sizes must be non-empty");
  inner = inferSize(inner, self.size(dim));
  Shape sizes = self.sizes();
  sizes.erase(sizes.begin() + dim);
  sizes.insert(sizes.begin() + dim, inner.begin(), inner.end());
  return {viewAs(self, sizes)};
}

Result split(const OpCall &call) {
  return splitEvenly(call.tensor("self"), call.integer("split_size"), call.integer("dim", 0));
}

Result splitWithSizes(const OpCall &call) {
  return splitView(call.tensor("self"), call.integer("dim", 0), call.ints("split_sizes"));
}

Result unbind(const OpCall &call) {
  Tensor self = call.tensor("self");
  if (self.dim() == 0)
    kernelFail("unbind: dimension specified as 0 but tensor has no dimensions");
  int64_t dim = wrapDim(call.integer("dim", 0), self.dim());
  Result parts;
  for (int64_t i = 0; i < self.size(dim); ++i)
    parts.push_back(selectView(self, dim, i));
  return parts;
}

Result chunk(const OpCall &call) {
  Tensor self = call.tensor("self");
  int64_t chunks = call.integer("chunks");
  if (chunks <= 0)
    kernelFail("chunk expects `chunks` to be greater than 0, got: " + std::to_string(chunks));
  if (self.dim() == 0)
    kernelFail("chunk expects at least a 1-dimensional tensor");
  int64_t dim = call.integer("dim", 0);
  int64_t size = self.size(wrapDim(dim, self.dim()));
  // An empty dim still gives `chunks` empty pieces.
  if (size == 0)
    return splitView(self, dim, std::vector<int64_t>(chunks, 0));
  return splitEvenly(self, (size + chunks - 1) / chunks, dim);
}

Result narrow(const OpCall &call) {
  Tensor self = call.tensor("self");
  if (self.dim() == 0)
    kernelFail("narrow() cannot be applied to a 0-dim tensor");
  int64_t dim = wrapDim(call.integer("dim"), self.dim());
  int64_t size = self.size(dim);
  int64_t start = call.integer("start"), length = call.integer("length");
  if (start < -size || start > size)
    kernelFail("narrow(): start " + std::to_string(start) + " out of range for dimension of size " +
               std::to_string(size));
  if (start < 0)
    start += size;
  if (length < 0 || start + length > size)
    kernelFail("narrow(): start (" + std::to_string(start) + ") + length (" +
               std::to_string(length) + ") exceeds dimension size (" + std::to_string(size) + ")");
  return {narrowView(self, dim, start, length)};
}

Result movedim(const OpCall &call) {
  Tensor self = call.tensor("self");
  std::vector<int64_t> source = call.ints("source"), destination = call.ints("destination");
  if (source.size() != destination.size())
    kernelFail("movedim: Invalid source or destination dims: source and destination must have "
               "the same number of dims");
  return {permuteView(self, movedimPermutation(source, destination, self.dim()))};
}

Result broadcastTensors(const OpCall &call) {
  std::vector<Tensor> tensors = call.tensors("tensors");
  Shape sizes;
  for (const Tensor &t : tensors)
    sizes = broadcastShapes(sizes, t.sizes());
  Result out;
  for (const Tensor &t : tensors)
    out.push_back(expandView(t, sizes));
  return out;
}

Result repeat(const OpCall &call) {
  Tensor self = call.tensor("self");
  std::vector<int64_t> repeats = call.ints("repeats");
  int64_t rank = static_cast<int64_t>(repeats.size());
  if (rank < self.dim())
    kernelFail("Number of dimensions of repeat dims can not be smaller than number of "
               "dimensions of tensor");
  Shape inSizes(rank - self.dim(), 1), inStrides(rank - self.dim(), 0);
  inSizes.insert(inSizes.end(), self.sizes().begin(), self.sizes().end());
  inStrides.insert(inStrides.end(), self.strides().begin(), self.strides().end());
  Shape outSizes(rank);
  for (int64_t i = 0; i < rank; ++i) {
    if (repeats[i] < 0)
      kernelFail("repeat: negative repeat count " + std::to_string(repeats[i]));
    outSizes[i] = inSizes[i] * repeats[i];
  }
  Tensor out = Tensor::zeros(self.dtype(), outSizes);
  // Out seen as [r0, s0, r1, s1, ...] takes the input broadcast over each r.
  Shape outStrides = contiguousStrides(outSizes), tiledSizes, tiledOut, tiledIn;
  for (int64_t i = 0; i < rank; ++i) {
    tiledSizes.insert(tiledSizes.end(), {repeats[i], inSizes[i]});
    tiledOut.insert(tiledOut.end(), {inSizes[i] * outStrides[i], outStrides[i]});
    tiledIn.insert(tiledIn.end(), {0, inStrides[i]});
  }
  if (out.numel() != 0)
    restride(out, tiledSizes, tiledOut).copyFrom(restride(self, tiledSizes, tiledIn));
  return {out};
}

Result flip(const OpCall &call) {
  Tensor self = call.tensor("self");
  std::vector<bool> flipped = dimMask(self, call.ints("dims"));
  // A view that walks the flipped dims backwards, then a copy of it.
  Shape strides = self.strides();
  int64_t offset = self.offset();
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!flipped[d] || self.size(d) == 0)
      continue;
    offset += (self.size(d) - 1) * strides[d];
    strides[d] = -strides[d];
  }
  return {self.asStrided(self.sizes(), strides, offset).clone()};
}

/// Rolls `t` by `shift` along `dim` into a new tensor.
Tensor rollDim(const Tensor &t, int64_t shift, int64_t dim) {
  Tensor out = Tensor::zeros(t.dtype(), t.sizes());
  int64_t n = t.size(dim);
  if (n == 0)
    return out;
  int64_t s = ((shift % n) + n) % n;
  narrowView(out, dim, s, n - s).copyFrom(narrowView(t, dim, 0, n - s));
  narrowView(out, dim, 0, s).copyFrom(narrowView(t, dim, n - s, s));
  return out;
}

Result roll(const OpCall &call) {
  Tensor self = call.tensor("self");
  std::vector<int64_t> shifts = call.ints("shifts");
  std::vector<int64_t> dims = call.has("dims") ? call.ints("dims") : std::vector<int64_t>{};
  if (dims.empty()) {
    // Without dims the tensor rolls as if flattened.
    if (shifts.size() != 1)
      kernelFail("roll: shifts must have one element when dims is empty");
    Tensor flat = rollDim(reshapeTo(self, {self.numel()}), shifts[0], 0);
    return {viewAs(flat, self.sizes())};
  }
  if (shifts.size() != dims.size())
    kernelFail("roll: shifts and dimensions must align. shifts: " + std::to_string(shifts.size()) +
               ", dims: " + std::to_string(dims.size()));
  if (self.dim() == 0)
    kernelFail("roll: cannot roll a 0-dim tensor along a dimension");
  Tensor cur = self;
  for (size_t i = 0; i < dims.size(); ++i)
    cur = rollDim(cur, shifts[i], wrapDim(dims[i], self.dim()));
  return {cur};
}

Result cat(const OpCall &call) {
  return {concatenate(call.tensors("tensors"), call.integer("dim", 0))};
}

Result stack(const OpCall &call) {
  std::vector<Tensor> tensors = call.tensors("tensors");
  if (tensors.empty())
    kernelFail("stack expects a non-empty TensorList");
  Shape sizes = tensors[0].sizes();
  int64_t dim = wrapDim(call.integer("dim", 0), tensors[0].dim() + 1);
  for (Tensor &t : tensors) {
    if (t.sizes() != sizes)
      kernelFail("stack expects each tensor to be equal size, but got " + shapeString(sizes) +
                 " and " + shapeString(t.sizes()));
    t = unsqueezeView(t, dim);
  }
  return {concatenate(tensors, dim)};
}

const KernelEntry kKernels[] = {
    {ops::aten_view_default, view},
    {ops::aten_reshape_default, reshape},
    {ops::aten_permute_default, permute},
    {ops::aten_transpose_int, transpose},
    {ops::aten_t_default, t},
    {ops::aten_expand_default, expand},
    {ops::aten_slice_Tensor, slice},
    {ops::aten_slice_scatter_default, sliceScatter},
    {ops::aten_select_int, select},
    {ops::aten_squeeze_default, squeezeDefault},
    {ops::aten_squeeze_dim, squeezeDim},
    {ops::aten_squeeze_dims, squeezeDims},
    {ops::aten_unsqueeze_default, unsqueeze},
    {ops::aten_flatten_using_ints, flatten},
    {ops::aten_unflatten_int, unflatten},
    {ops::aten_split_Tensor, split},
    {ops::aten_split_with_sizes_default, splitWithSizes},
    {ops::aten_unbind_int, unbind},
    {ops::aten_chunk_default, chunk},
    {ops::aten_narrow_default, narrow},
    {ops::aten_movedim_intlist, movedim},
    {ops::aten_broadcast_tensors_default, broadcastTensors},
    {ops::aten_repeat_default, repeat},
    {ops::aten_flip_default, flip},
    {ops::aten_roll_default, roll},
    {ops::aten_cat_default, cat},
    {ops::aten_stack_default, stack},
};

} // namespace

void registerShapeKernels(KernelRegistry &r) { r.add(kKernels); }

} // namespace gc
