//===- Indexing.cpp - Indexing, scatter and scan kernels -------------------===//
//
// Ops that pick elements by index tensors (index, gather, embedding...) or
// write them by index (scatter, index_add), masks of triangles, and scans
// along a dim. Elements are copied in their own domain (int64 for integer
// dtypes, double for floating ones) so that no value changes on the way.
//
//===----------------------------------------------------------------------===//

#include "gc/Interp/Kernel.h"
#include "gc/Interp/Promotion.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

namespace gc {
namespace {

using Result = std::vector<Tensor>;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Copies one element between tensors of the same dtype.
void copyElement(Tensor &dst, int64_t dstIndex, const Tensor &src, int64_t srcIndex) {
  if (isFloatingPoint(src.dtype()))
    dst.storeDouble(dstIndex, src.loadDouble(srcIndex));
  else
    dst.storeInt(dstIndex, src.loadInt(srcIndex));
}

/// dst += alpha * src for one element, with torch's add on the dst dtype
/// (wrapping integers; logical or for bool).
void addElement(Tensor &dst, int64_t dstIndex, const Tensor &src, int64_t srcIndex,
                const Scalar &alpha) {
  if (isFloatingPoint(dst.dtype())) {
    dst.storeDouble(dstIndex,
                    dst.loadDouble(dstIndex) + alpha.toDouble() * src.loadDouble(srcIndex));
    return;
  }
  uint64_t sum = static_cast<uint64_t>(dst.loadInt(dstIndex)) +
                 static_cast<uint64_t>(alpha.i) * static_cast<uint64_t>(src.loadInt(srcIndex));
  dst.storeInt(dstIndex, static_cast<int64_t>(sum));
}

/// a / b rounded down (b > 0).
int64_t floorDivide(int64_t a, int64_t b) {
  int64_t q = a / b;
  return q * b != a && a < 0 ? q - 1 : q;
}

void requireIndexDtype(const Tensor &index, const char *opName) {
  if (index.dtype() != DType::Int64 && index.dtype() != DType::Int32)
    kernelFail(std::string(opName) + ": expected an int64 or int32 index tensor, got " +
               std::string(dtypeName(index.dtype())));
}

/// An index value read from `index` for a dim of `size`. Only advanced
/// indexing lets a negative value count from the end; the other ops reject
/// it, as torch does.
int64_t indexAt(const Tensor &index, const Shape &position, int64_t size,
                bool wrapNegative = false) {
  int64_t i = index.getInt(position);
  if (i >= size || i < (wrapNegative ? -size : 0))
    kernelFail("index " + std::to_string(i) + " is out of bounds for dimension with size " +
               std::to_string(size));
  return i < 0 ? i + size : i;
}

/// A new tensor of `src`'s dtype and `sizes` whose element at each index is
/// the element of `src` at `source(index)`.
Tensor gatherElements(const Tensor &src, const Shape &sizes,
                      const std::function<Shape(const Shape &)> &source) {
  Tensor out = Tensor::zeros(src.dtype(), sizes);
  forEachIndex(sizes, [&](const Shape &i) {
    copyElement(out, out.storageIndex(i), src, src.storageIndex(source(i)));
  });
  return out;
}

/// The scatter family and gather index a tensor along `dim` with an index
/// of the same rank; a 0-dim tensor acts as a 1-element vector.
Tensor atLeast1d(const Tensor &t) { return t.dim() == 0 ? t.asStrided({1}, {1}, t.offset()) : t; }

/// Checks that `index` fits in `t` on every dim (all of them, or all but
/// `dim`), as gather and scatter require.
void checkIndexFits(const Tensor &index, const Tensor &t, int64_t dim, const char *opName) {
  if (index.dim() != t.dim())
    kernelFail(std::string(opName) + ": index tensor must have the same number of dimensions " +
               "as the indexed tensor");
  for (int64_t d = 0; d < t.dim(); ++d)
    if (d != dim && index.size(d) > t.size(d))
      kernelFail(std::string(opName) + ": size of index " + shapeString(index.sizes()) +
                 " does not fit " + shapeString(t.sizes()) + " at dimension " + std::to_string(d));
}

//===----------------------------------------------------------------------===//
// Advanced indexing
//===----------------------------------------------------------------------===//

/// Turns a bool or uint8 mask over dims [first, first + mask.dim()) of
/// `self` into one int64 index tensor per masked dim, listing the positions
/// of its true elements in row-major order.
std::vector<Tensor> maskToIndices(const Tensor &mask, const Tensor &self, int64_t first) {
  if (mask.dim() == 0)
    kernelFail("index: a 0-dim mask index is not supported");
  for (int64_t k = 0; k < mask.dim(); ++k)
    if (first + k >= self.dim() || mask.size(k) != self.size(first + k))
      kernelFail("index: the shape of the mask " + shapeString(mask.sizes()) +
                 " does not match the shape of the indexed tensor " + shapeString(self.sizes()) +
                 " at index " + std::to_string(k));
  std::vector<Shape> hits;
  forEachIndex(mask.sizes(), [&](const Shape &i) {
    if (mask.getInt(i) != 0)
      hits.push_back(i);
  });
  int64_t count = static_cast<int64_t>(hits.size());
  std::vector<Tensor> out;
  for (int64_t k = 0; k < mask.dim(); ++k) {
    Tensor column = Tensor::zeros(DType::Int64, {count});
    for (int64_t h = 0; h < count; ++h)
      column.storeInt(h, hits[h][k]);
    out.push_back(column);
  }
  return out;
}

/// torch's x[i0, i1, ...] with index tensors (and None for a full slice),
/// as index and index_put see it: the shape of the selection and, for each
/// of its points, the element of self it stands for. The index tensors
/// broadcast together; their dims replace the indexed dims in place when
/// the indexed dims are adjacent, and go first otherwise.
class AdvancedIndex {
public:
  AdvancedIndex(const Tensor &self, const std::vector<Tensor> &entries, const char *opName)
      : sizes_(self.sizes()) {
    int64_t rank = self.dim();
    // One entry per dim of self after masks are expanded; undefined = slice.
    for (const Tensor &e : entries) {
      if (!e.defined()) {
        perDim_.push_back(e);
      } else if (e.dtype() == DType::Bool || e.dtype() == DType::UInt8) {
        for (Tensor &t : maskToIndices(e, self, static_cast<int64_t>(perDim_.size())))
          perDim_.push_back(t);
      } else {
        requireIndexDtype(e, opName);
        perDim_.push_back(e);
      }
    }
    if (static_cast<int64_t>(perDim_.size()) > rank)
      kernelFail(std::string(opName) + ": too many indices for tensor of dimension " +
                 std::to_string(rank));
    perDim_.resize(rank);
    std::vector<int64_t> indexed;
    Shape broadcast;
    for (int64_t d = 0; d < rank; ++d) {
      if (perDim_[d].defined()) {
        indexed.push_back(d);
        broadcast = broadcastShapes(broadcast, perDim_[d].sizes());
      }
    }
    for (int64_t d : indexed)
      perDim_[d] = broadcastTo(perDim_[d], broadcast);
    bool adjacent = !indexed.empty() &&
                    indexed.back() - indexed.front() + 1 == static_cast<int64_t>(indexed.size());
    // Sliced dims before an adjacent indexed block keep their place; the
    // other sliced dims follow the broadcast dims, in order.
    bStart_ = adjacent ? indexed.front() : 0;
    bRank_ = static_cast<int64_t>(broadcast.size());
    outDimOf_.resize(rank);
    outSizes_.assign(sizes_.begin(), sizes_.begin() + bStart_);
    for (int64_t d = 0; d < bStart_; ++d)
      outDimOf_[d] = d;
    outSizes_.insert(outSizes_.end(), broadcast.begin(), broadcast.end());
    for (int64_t d = bStart_; d < rank; ++d) {
      if (perDim_[d].defined())
        continue;
      outDimOf_[d] = static_cast<int64_t>(outSizes_.size());
      outSizes_.push_back(sizes_[d]);
    }
  }

  const Shape &sizes() const { return outSizes_; }

  /// The element of self that point `o` of the selection stands for.
  Shape source(const Shape &o) const {
    Shape position(o.begin() + bStart_, o.begin() + bStart_ + bRank_);
    Shape src(sizes_.size());
    for (size_t d = 0; d < sizes_.size(); ++d)
      src[d] = perDim_[d].defined() ? indexAt(perDim_[d], position, sizes_[d], true)
                                    : o[outDimOf_[d]];
    return src;
  }

private:
  Shape sizes_, outSizes_;
  std::vector<Tensor> perDim_;
  std::vector<int64_t> outDimOf_;
  int64_t bStart_ = 0, bRank_ = 0;
};

Result index(const OpCall &call) {
  Tensor self = call.tensor("self");
  AdvancedIndex at(self, call.optTensors("indices"), "index");
  return {gatherElements(self, at.sizes(), [&](const Shape &o) { return at.source(o); })};
}

/// index_put: a copy of self with `values` (broadcast to the selection)
/// written, or with accumulate added, at the elements self[indices] picks,
/// in the selection's row-major order.
Result indexPut(const OpCall &call) {
  Tensor self = call.tensor("self"), values = call.tensor("values");
  if (values.dtype() != self.dtype())
    kernelFail("index_put: values must have self's dtype, got " +
               std::string(dtypeName(values.dtype())));
  AdvancedIndex at(self, call.optTensors("indices"), "index_put");
  bool accumulate = call.boolean("accumulate", false);
  Tensor out = self.clone();
  Tensor from = broadcastTo(values, at.sizes());
  Scalar one;
  one.i = 1;
  forEachIndex(at.sizes(), [&](const Shape &o) {
    int64_t dst = out.storageIndex(at.source(o));
    if (accumulate)
      addElement(out, dst, from, from.storageIndex(o), one);
    else
      copyElement(out, dst, from, from.storageIndex(o));
  });
  return {out};
}

/// self[..., index, ...] with `index` (any shape) taking the place of `dim`.
Tensor takeAlong(const Tensor &self, int64_t dim, const Tensor &index, const char *opName) {
  requireIndexDtype(index, opName);
  int64_t k = index.dim();
  Shape sizes(self.sizes().begin(), self.sizes().begin() + dim);
  sizes.insert(sizes.end(), index.sizes().begin(), index.sizes().end());
  sizes.insert(sizes.end(), self.sizes().begin() + dim + 1, self.sizes().end());
  return gatherElements(self, sizes, [&](const Shape &o) {
    Shape src(o.begin(), o.begin() + dim);
    src.push_back(indexAt(index, Shape(o.begin() + dim, o.begin() + dim + k), self.size(dim)));
    src.insert(src.end(), o.begin() + dim + k, o.end());
    return src;
  });
}

Result embedding(const OpCall &call) {
  Tensor weight = call.tensor("weight");
  if (weight.dim() != 2)
    kernelFail("embedding: 'weight' must be 2-D");
  return {takeAlong(weight, 0, call.tensor("indices"), "embedding")};
}

Result indexSelect(const OpCall &call) {
  Tensor self = call.tensor("self"), index = call.tensor("index");
  if (index.dim() > 1)
    kernelFail("index_select(): Index is supposed to be a vector");
  Tensor in = atLeast1d(self);
  Tensor out =
      takeAlong(in, wrapDim(call.integer("dim"), self.dim()), atLeast1d(index), "index_select");
  return {self.dim() == 0 ? out.asStrided({}, {}, 0) : out};
}

Result gather(const OpCall &call) {
  Tensor self = call.tensor("self"), index = call.tensor("index");
  requireIndexDtype(index, "gather");
  int64_t dim = wrapDim(call.integer("dim"), self.dim());
  Tensor in = atLeast1d(self), idx = atLeast1d(index);
  checkIndexFits(idx, in, dim, "gather");
  Tensor out = gatherElements(in, idx.sizes(), [&](const Shape &o) {
    Shape src = o;
    src[dim] = indexAt(idx, o, in.size(dim));
    return src;
  });
  return {index.dim() == 0 ? out.asStrided({}, {}, 0) : out};
}

/// How the scatter family meets the element already there.
enum class ScatterReduce { None, Sum, Prod, Mean, Amax, Amin };

/// A copy of `self` with `src`'s elements written or reduced (in the
/// index's row-major order) at the positions `index` gives along `dim`.
/// Without `includeSelf`, an element the index names starts from its first
/// src value instead of self's; mean divides by the number of values that
/// went in (floor division for integers), as torch's scatter_reduce.
Tensor scatterInto(const Tensor &self, int64_t dimArg, const Tensor &index, const Tensor &src,
                   ScatterReduce reduce, bool includeSelf, const char *opName) {
  requireIndexDtype(index, opName);
  if (src.dtype() != self.dtype())
    kernelFail(std::string(opName) + ": expected self.dtype to be equal to src.dtype");
  int64_t dim = wrapDim(dimArg, self.dim());
  Tensor out = self.clone();
  Tensor dst = atLeast1d(out), idx = atLeast1d(index), from = atLeast1d(src);
  checkIndexFits(idx, dst, dim, opName);
  checkIndexFits(idx, from, -1, opName);
  bool isFloat = isFloatingPoint(self.dtype());
  std::map<int64_t, int64_t> counts; // how many src values each element took
  forEachIndex(idx.sizes(), [&](const Shape &i) {
    Shape target = i;
    target[dim] = indexAt(idx, i, dst.size(dim));
    int64_t at = dst.storageIndex(target), f = from.storageIndex(i);
    bool first = counts[at]++ == 0 && !includeSelf;
    if (reduce == ScatterReduce::None || first) {
      copyElement(dst, at, from, f);
      return;
    }
    if (isFloat) {
      double x = dst.loadDouble(at), y = from.loadDouble(f);
      switch (reduce) {
      case ScatterReduce::Prod: x *= y; break;
      case ScatterReduce::Amax: x = std::isnan(x) || x >= y ? x : y; break;
      case ScatterReduce::Amin: x = std::isnan(x) || x <= y ? x : y; break;
      default: x += y; break;
      }
      dst.storeDouble(at, x);
      return;
    }
    uint64_t x = static_cast<uint64_t>(dst.loadInt(at)), y = static_cast<uint64_t>(from.loadInt(f));
    int64_t sx = static_cast<int64_t>(x), sy = static_cast<int64_t>(y);
    bool isBool = self.dtype() == DType::Bool;
    switch (reduce) {
    case ScatterReduce::Prod: x = isBool ? (x && y) : x * y; break;
    case ScatterReduce::Amax: x = static_cast<uint64_t>(std::max(sx, sy)); break;
    case ScatterReduce::Amin: x = static_cast<uint64_t>(std::min(sx, sy)); break;
    default: x = isBool ? (x || y) : x + y; break;
    }
    dst.storeInt(at, static_cast<int64_t>(x));
  });
  if (reduce == ScatterReduce::Mean)
    for (auto [at, count] : counts) {
      int64_t n = count + (includeSelf ? 1 : 0);
      if (isFloat)
        dst.storeDouble(at, dst.loadDouble(at) / static_cast<double>(n));
      else
        dst.storeInt(at, floorDivide(dst.loadInt(at), n));
    }
  return out;
}

Tensor scatterCall(const OpCall &call, ScatterReduce reduce, const char *opName) {
  return scatterInto(call.tensor("self"), call.integer("dim"), call.tensor("index"),
                     call.tensor("src"), reduce, true, opName);
}

Result scatterSrc(const OpCall &call) {
  return {scatterCall(call, ScatterReduce::None, "scatter")};
}
Result scatterAdd(const OpCall &call) {
  return {scatterCall(call, ScatterReduce::Sum, "scatter_add")};
}

/// scatter.value: scatter of a tensor full of the number, in self's dtype.
Result scatterValue(const OpCall &call) {
  Tensor self = call.tensor("self"), index = call.tensor("index");
  Tensor src = Tensor::zeros(self.dtype(), index.sizes());
  Scalar v = call.scalar("value");
  forEachIndex(index.sizes(), [&](const Shape &i) {
    if (isFloatingPoint(self.dtype()))
      src.storeDouble(src.storageIndex(i), v.toDouble());
    else
      src.storeInt(src.storageIndex(i), v.kind == Scalar::Kind::Float
                                            ? static_cast<int64_t>(v.f)
                                            : v.i);
  });
  return {scatterInto(self, call.integer("dim"), index, src, ScatterReduce::None, true,
                      "scatter")};
}

Result scatterReduceTwo(const OpCall &call) {
  static const std::map<std::string, ScatterReduce> kReduces = {
      {"sum", ScatterReduce::Sum},   {"prod", ScatterReduce::Prod}, {"mean", ScatterReduce::Mean},
      {"amax", ScatterReduce::Amax}, {"amin", ScatterReduce::Amin}};
  std::string name = call.string("reduce", "");
  auto reduce = kReduces.find(name);
  if (reduce == kReduces.end())
    kernelFail("scatter_reduce: reduce argument must be either sum, prod, mean, amax or amin, "
               "got " + name);
  return {scatterInto(call.tensor("self"), call.integer("dim"), call.tensor("index"),
                      call.tensor("src"), reduce->second, call.boolean("include_self", true),
                      "scatter_reduce")};
}

/// A copy of `self` with the slices of `source` along `dim` added
/// (index_add, times alpha) or written (index_copy) at the positions
/// `index` gives.
Tensor indexInto(const OpCall &call, bool accumulate) {
  std::string op = accumulate ? "index_add()" : "index_copy()";
  Tensor self = call.tensor("self"), index = call.tensor("index"), source = call.tensor("source");
  requireIndexDtype(index, accumulate ? "index_add" : "index_copy");
  if (source.dtype() != self.dtype())
    kernelFail(op + ": self and source must have the same scalar type");
  if (index.dim() > 1)
    kernelFail(op + ": Index is supposed to be a vector");
  int64_t dim = wrapDim(call.integer("dim"), self.dim());
  Scalar alpha;
  alpha.i = 1;
  if (accumulate && call.has("alpha"))
    alpha = call.scalar("alpha");
  Tensor out = self.clone();
  Tensor dst = atLeast1d(out), idx = atLeast1d(index), from = atLeast1d(source);
  if (from.dim() != dst.dim() || from.size(dim) != idx.numel())
    kernelFail(op + ": source " + shapeString(source.sizes()) + " does not match index " +
               shapeString(index.sizes()) + " along dim " + std::to_string(dim));
  for (int64_t d = 0; d < dst.dim(); ++d)
    if (d != dim && from.size(d) != dst.size(d))
      kernelFail(op + ": source " + shapeString(source.sizes()) + " and self " +
                 shapeString(self.sizes()) + " differ outside dim " + std::to_string(dim));
  forEachIndex(from.sizes(), [&](const Shape &s) {
    Shape target = s;
    target[dim] = indexAt(idx, {s[dim]}, dst.size(dim));
    if (accumulate)
      addElement(dst, dst.storageIndex(target), from, from.storageIndex(s), alpha);
    else
      copyElement(dst, dst.storageIndex(target), from, from.storageIndex(s));
  });
  return out;
}

Result indexAdd(const OpCall &call) { return {indexInto(call, true)}; }
Result indexCopy(const OpCall &call) { return {indexInto(call, false)}; }

//===----------------------------------------------------------------------===//
// Triangles
//===----------------------------------------------------------------------===//

/// Keeps the elements on and below (tril) or above (triu) the diagonal
/// `diagonal` of the last two dims, zeroing the rest.
Tensor triangle(const OpCall &call, bool lower) {
  Tensor self = call.tensor("self");
  if (self.dim() < 2)
    kernelFail(std::string(lower ? "tril" : "triu") +
               ": input tensor must have at least 2 dimensions");
  int64_t diagonal = call.integer("diagonal", 0);
  Tensor out = Tensor::zeros(self.dtype(), self.sizes());
  int64_t rows = self.dim() - 2, cols = self.dim() - 1;
  forEachIndex(self.sizes(), [&](const Shape &i) {
    int64_t offset = i[cols] - i[rows];
    if (lower ? offset <= diagonal : offset >= diagonal)
      copyElement(out, out.storageIndex(i), self, self.storageIndex(i));
  });
  return out;
}

Result tril(const OpCall &call) { return {triangle(call, true)}; }
Result triu(const OpCall &call) { return {triangle(call, false)}; }

//===----------------------------------------------------------------------===//
// Scans and differences along a dim
//===----------------------------------------------------------------------===//

/// Calls `fn` once per line of `sizes` along `dim`, with the index of the
/// line's first element.
void forEachLine(const Shape &sizes, int64_t dim, const std::function<void(Shape &)> &fn) {
  Shape starts = sizes;
  starts[dim] = 1;
  forEachIndex(starts, [&](const Shape &s) {
    Shape i = s;
    fn(i);
  });
}

/// Inclusive scan of `in` along `dim` with `op` in the domain T (double or
/// wrapping uint64), into `out` of the same shape.
template <typename T, typename Op>
void scanLines(const Tensor &in, Tensor &out, int64_t dim, T identity, Op op) {
  auto load = [&in](const Shape &i) -> T {
    if constexpr (std::is_same_v<T, double>)
      return in.getDouble(i);
    else
      return static_cast<uint64_t>(in.getInt(i));
  };
  forEachLine(in.sizes(), dim, [&](Shape &i) {
    T acc = identity;
    for (int64_t k = 0; k < in.size(dim); ++k) {
      i[dim] = k;
      acc = op(acc, load(i));
      if constexpr (std::is_same_v<T, double>)
        out.setDouble(i, acc);
      else
        out.setInt(i, static_cast<int64_t>(acc));
    }
  });
}

/// cumsum and cumprod: integer and bool inputs give int64 unless a dtype is
/// asked for; the input is converted to the result dtype first.
Tensor cumulative(const OpCall &call, bool isProd) {
  Tensor self = call.tensor("self");
  std::optional<DType> dtype = call.dtype("dtype");
  DType outDtype = dtype ? *dtype : isFloatingPoint(self.dtype()) ? self.dtype() : DType::Int64;
  int64_t dim = wrapDim(call.integer("dim"), self.dim());
  // A 0-dim tensor scans as a 1-element vector.
  Tensor in = atLeast1d(self.to(outDtype));
  Tensor out = Tensor::zeros(outDtype, in.sizes());
  auto mul = [](auto a, auto b) { return a * b; };
  auto add = [](auto a, auto b) { return a + b; };
  if (isFloatingPoint(outDtype)) {
    if (isProd)
      scanLines<double>(in, out, dim, 1.0, mul);
    else
      scanLines<double>(in, out, dim, 0.0, add);
  } else {
    if (isProd)
      scanLines<uint64_t>(in, out, dim, 1, mul);
    else
      scanLines<uint64_t>(in, out, dim, 0, add);
  }
  return self.dim() == 0 ? out.asStrided({}, {}, 0) : out;
}

Result cumsum(const OpCall &call) { return {cumulative(call, false)}; }
Result cumprod(const OpCall &call) { return {cumulative(call, true)}; }

/// x[1:] - x[:-1] along `dim` (x[1:] != x[:-1] for bool).
Tensor adjacentDifference(const Tensor &x, int64_t dim) {
  Shape sizes = x.sizes();
  sizes[dim] = std::max<int64_t>(sizes[dim] - 1, 0);
  Tensor out = Tensor::zeros(x.dtype(), sizes);
  forEachIndex(sizes, [&](const Shape &i) {
    Shape next = i;
    ++next[dim];
    if (isFloatingPoint(x.dtype()))
      out.setDouble(i, x.getDouble(next) - x.getDouble(i));
    else if (x.dtype() == DType::Bool)
      out.setInt(i, x.getInt(next) != x.getInt(i));
    else
      out.setInt(i, static_cast<int64_t>(static_cast<uint64_t>(x.getInt(next)) -
                                         static_cast<uint64_t>(x.getInt(i))));
  });
  return out;
}

Result diff(const OpCall &call) {
  Tensor self = call.tensor("self");
  if (self.dim() == 0)
    kernelFail("diff expects input to be at least one-dimensional");
  int64_t n = call.integer("n", 1);
  if (n < 0)
    kernelFail("order must be non-negative but got " + std::to_string(n));
  int64_t dim = wrapDim(call.integer("dim", -1), self.dim());
  std::vector<Tensor> parts;
  if (std::optional<Tensor> prepend = call.optTensor("prepend"))
    parts.push_back(*prepend);
  parts.push_back(self);
  if (std::optional<Tensor> append = call.optTensor("append"))
    parts.push_back(*append);
  Tensor x = parts.size() == 1 ? self.clone() : concatenate(parts, dim);
  for (int64_t step = 0; step < n && x.size(dim) > 0; ++step)
    x = adjacentDifference(x, dim);
  return {x};
}

const KernelEntry kKernels[] = {
    {ops::aten_index_Tensor, index},
    {ops::aten_embedding_default, embedding},
    {ops::aten_gather_default, gather},
    {ops::aten_scatter_src, scatterSrc},
    {ops::aten_scatter_add_default, scatterAdd},
    {ops::aten_scatter_value, scatterValue},
    {ops::aten_scatter_reduce_two, scatterReduceTwo},
    {ops::aten_index_put_default, indexPut},
    {ops::aten_index_select_default, indexSelect},
    {ops::aten_index_add_default, indexAdd},
    {ops::aten_index_copy_default, indexCopy},
    {ops::aten_tril_default, tril},
    {ops::aten_triu_default, triu},
    {ops::aten_cumsum_default, cumsum},
    {ops::aten_cumprod_default, cumprod},
    {ops::aten_diff_default, diff},
};

} // namespace

void registerIndexingKernels(KernelRegistry &r) { r.add(kKernels); }

} // namespace gc
