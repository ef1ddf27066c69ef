//===- Core.cpp - Reference kernels for the rest of the core op set -------===//
//
// The core ops that no other family covered: dtype copies, rounding toward
// zero, sorting and top-k, as_strided views, constant padding, and gc's
// functional random numbers (gc.rand).
//
//===----------------------------------------------------------------------===//

#include "gc/Interp/Kernel.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <type_traits>

namespace gc {
namespace {

using Results = std::vector<Tensor>;

/// A 0-dim tensor seen as shape [1], so that dim 0 exists; torch's sort and
/// topk treat a 0-dim input so.
Tensor atLeast1d(const Tensor &t) { return t.dim() ? t : t.asStrided({1}, {1}, t.offset()); }

/// `t` (of shape [1]) back as a 0-dim tensor when `like` is 0-dim.
Tensor shapedLike(const Tensor &t, const Tensor &like) {
  return like.dim() ? t : t.asStrided({}, {}, t.offset());
}

//===----------------------------------------------------------------------===//
// Copies and rounding
//===----------------------------------------------------------------------===//

/// _to_copy: always a new tensor, converted to `dtype` if given. Layout,
/// device and memory format do not change values.
Results toCopy(const OpCall &call) {
  Tensor self = call.tensor("self");
  return {self.to(call.dtype("dtype").value_or(self.dtype()))};
}

/// trunc keeps integer dtypes (their values are already whole).
Results trunc(const OpCall &call) {
  Tensor out = call.tensor("self").clone();
  if (isFloatingPoint(out.dtype()))
    forEachIndex(out.sizes(),
                 [&](const Shape &i) { out.setDouble(i, std::trunc(out.getDouble(i))); });
  return {out};
}

//===----------------------------------------------------------------------===//
// Sorting
//===----------------------------------------------------------------------===//

/// torch's order for sorting: NaN is greater than every number.
template <typename T> bool sortsBefore(T a, T b, bool descending) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b))
      return descending ? std::isnan(a) && !std::isnan(b) : !std::isnan(a) && std::isnan(b);
  }
  return descending ? a > b : a < b;
}

/// The first `k` elements of each line of `self` along `dim` after a stable
/// sort, and their positions in the line.
template <typename T>
void sortLines(const Tensor &self, int64_t dim, bool descending, Tensor &values,
               Tensor &indices) {
  int64_t n = self.size(dim), k = values.size(dim);
  Shape lines = self.sizes();
  lines[dim] = 1;
  std::vector<T> line(n);
  std::vector<int64_t> order(n);
  forEachIndex(lines, [&](const Shape &start) {
    Shape at = start;
    for (int64_t i = 0; i < n; ++i) {
      at[dim] = i;
      if constexpr (std::is_floating_point_v<T>)
        line[i] = self.getDouble(at);
      else
        line[i] = self.getInt(at);
    }
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return sortsBefore(line[a], line[b], descending);
    });
    for (int64_t j = 0; j < k; ++j) {
      at[dim] = j;
      if constexpr (std::is_floating_point_v<T>)
        values.setDouble(at, line[order[j]]);
      else
        values.setInt(at, line[order[j]]);
      indices.setInt(at, order[j]);
    }
  });
}

/// sort and topk: the first `k` of every line after a stable sort, as
/// (values, int64 indices). Ties keep their input order.
Results sortedPrefix(const Tensor &input, int64_t dim, bool descending,
                     std::optional<int64_t> k) {
  Tensor self = atLeast1d(input);
  dim = wrapDim(dim, input.dim());
  int64_t n = self.size(dim);
  if (k && (*k < 0 || *k > n))
    kernelFail("selected index k out of range: k = " + std::to_string(*k) + ", size " +
               std::to_string(n));
  Shape sizes = self.sizes();
  sizes[dim] = k.value_or(n);
  Tensor values = Tensor::zeros(self.dtype(), sizes);
  Tensor indices = Tensor::zeros(DType::Int64, sizes);
  if (isFloatingPoint(self.dtype()))
    sortLines<double>(self, dim, descending, values, indices);
  else
    sortLines<int64_t>(self, dim, descending, values, indices);
  return {shapedLike(values, input), shapedLike(indices, input)};
}

Results sort(const OpCall &call) {
  return sortedPrefix(call.tensor("self"), call.integer("dim", -1),
                      call.boolean("descending", false), std::nullopt);
}

/// topk's `sorted=False` leaves the order to the implementation; sorted is
/// one valid order.
Results topk(const OpCall &call) {
  return sortedPrefix(call.tensor("self"), call.integer("dim", -1),
                      call.boolean("largest", true), call.integer("k"));
}

//===----------------------------------------------------------------------===//
// Views and padding
//===----------------------------------------------------------------------===//

/// as_strided: a view of self's storage; the offset defaults to self's.
Results asStrided(const OpCall &call) {
  Tensor self = call.tensor("self");
  std::vector<int64_t> strides = call.ints("stride");
  if (std::any_of(strides.begin(), strides.end(), [](int64_t s) { return s < 0; }))
    kernelFail("as_strided: negative strides are not supported");
  int64_t offset = call.integer("storage_offset", self.offset());
  if (offset < 0)
    kernelFail("as_strided: negative storage offset " + std::to_string(offset));
  return {self.asStrided(call.ints("size"), strides, offset)};
}

/// The window of `t` that starts at `start` and spans `sizes`, as a view.
Tensor window(const Tensor &t, const Shape &start, const Shape &sizes) {
  int64_t offset = t.offset();
  for (size_t d = 0; d < start.size(); ++d)
    offset += start[d] * t.strides()[d];
  return t.asStrided(sizes, t.strides(), offset);
}

/// constant_pad_nd: `pad` holds (before, after) pairs from the last dim
/// backwards; negative amounts crop. The kept part of self is copied into a
/// tensor filled with `value`.
Results constantPadNd(const OpCall &call) {
  Tensor self = call.tensor("self");
  std::vector<int64_t> pad = call.ints("pad");
  int64_t rank = self.dim();
  if (pad.size() % 2)
    kernelFail("Length of pad must be even but instead it equals " + std::to_string(pad.size()));
  if (static_cast<int64_t>(pad.size()) > 2 * rank)
    kernelFail("Length of pad should be no more than twice the number of dimensions of the "
               "input. Pad length is " +
               std::to_string(pad.size()) + " while the input has " + std::to_string(rank) +
               " dimensions.");
  Shape outSizes = self.sizes(), srcStart(rank, 0), dstStart(rank, 0), kept = self.sizes();
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    int64_t d = rank - 1 - static_cast<int64_t>(i);
    int64_t before = pad[2 * i], after = pad[2 * i + 1];
    outSizes[d] = self.size(d) + before + after;
    if (outSizes[d] < 0)
      kernelFail("The input size " + std::to_string(self.size(d)) + ", plus negative padding " +
                 std::to_string(before) + " and " + std::to_string(after) +
                 " resulted in a negative output size, which is invalid. Check dimension " +
                 std::to_string(d) + " of your input.");
    srcStart[d] = std::max<int64_t>(0, -before);
    dstStart[d] = std::max<int64_t>(0, before);
    kept[d] = std::max<int64_t>(0, self.size(d) + std::min<int64_t>(0, before) +
                                       std::min<int64_t>(0, after));
  }
  Tensor out = Tensor::zeros(self.dtype(), outSizes);
  out.copyFrom(numberTensor(call.has("value") ? call.scalar("value") : Scalar{}));
  window(out, dstStart, kept).copyFrom(window(self, srcStart, kept));
  return {out};
}

//===----------------------------------------------------------------------===//
// Random numbers
//===----------------------------------------------------------------------===//

/// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
/// 3", SC 2011): ten rounds over a 128-bit counter with a 64-bit key. A
/// round multiplies c0 and c2 by fixed constants into 64-bit products and
/// mixes their high halves with the other words and the key; the key grows
/// by the Weyl constants between rounds. Pure 32-bit integer arithmetic, so
/// every platform gives the same bits.
std::array<uint32_t, 4> philox4x32x10(std::array<uint32_t, 4> c, std::array<uint32_t, 2> key) {
  constexpr uint64_t kMul0 = 0xD2511F53, kMul1 = 0xCD9E8D57;
  constexpr uint32_t kWeyl0 = 0x9E3779B9, kWeyl1 = 0xBB67AE85;
  for (int round = 0; round < 10; ++round) {
    if (round) {
      key[0] += kWeyl0;
      key[1] += kWeyl1;
    }
    uint64_t p0 = kMul0 * c[0], p1 = kMul1 * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ key[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ key[1], static_cast<uint32_t>(p0)};
  }
  return c;
}

/// Significant bits of a floating dtype: every multiple of 2^-bits in
/// [0, 1) is exact in it, so no value rounds up to 1.
int mantissaBits(DType t) {
  switch (t) {
  case DType::Float16:
    return 11;
  case DType::BFloat16:
    return 8;
  case DType::Float32:
    return 24;
  case DType::Float64:
    return 53;
  default:
    kernelFail("gc.rand needs a floating dtype, got " + std::string(dtypeName(t)));
  }
}

/// The single integer a seed or offset tensor holds.
int64_t counterPart(const OpCall &call, std::string_view name) {
  Tensor t = call.tensor(name);
  if (t.numel() != 1 || isFloatingPoint(t.dtype()))
    kernelFail("gc.rand: " + std::string(name) + " must be one integer, got " +
               std::string(dtypeName(t.dtype())) + shapeString(t.sizes()));
  return t.loadInt(t.offset());
}

/// gc.rand(size, seed, offset, dtype=float32): element i (row-major) is
///   (c0, c1, c2, c3) = (low, high 32 bits of offset + i mod 2^64, 0, 0)
///   (k0, k1)         = (low, high 32 bits of seed)
///   (x0, x1, ...)    = Philox-4x32-10(c, k)
///   r                = x0 * 2^32 + x1
///   value            = floor(r / 2^(64 - b)) * 2^-b, b = mantissaBits(dtype)
/// which is uniform on the multiples of 2^-b in [0, 1). Each element depends
/// on its own counter only, so any subset can be computed alone (and the
/// next call continues at offset + numel).
Results rand(const OpCall &call) {
  return {uniformNumbers(call.dtype("dtype").value_or(DType::Float32), call.ints("size"),
                         static_cast<uint64_t>(counterPart(call, "seed")),
                         static_cast<uint64_t>(counterPart(call, "offset")))};
}

const KernelEntry kKernels[] = {
    {ops::aten__to_copy_default, toCopy},
    {ops::aten_trunc_default, trunc},
    {ops::aten_sort_default, sort},
    {ops::aten_topk_default, topk},
    {ops::aten_as_strided_default, asStrided},
    {ops::aten_constant_pad_nd_default, constantPadNd},
    {ops::gc_rand_default, rand},
};

} // namespace

Tensor uniformNumbers(DType dtype, const Shape &sizes, uint64_t seed, uint64_t offset) {
  int bits = mantissaBits(dtype);
  std::array<uint32_t, 2> key = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  // 2^-bits is a power of two: the product is exact, as ldexp would be.
  const double scale = std::ldexp(1.0, -bits);
  auto value = [&](int64_t i) {
    uint64_t counter = offset + static_cast<uint64_t>(i);
    std::array<uint32_t, 4> x = philox4x32x10(
        {static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32), 0, 0}, key);
    uint64_t r = (static_cast<uint64_t>(x[0]) << 32) | x[1];
    return static_cast<double>(r >> (64 - bits)) * scale;
  };
  Tensor out = Tensor::zeros(dtype, sizes);
  int64_t n = out.numel();
  // The fallback runs gc.rand for compiled models too, so the common dtypes
  // store straight into the new contiguous storage.
  uint8_t *data = out.storage()->data();
  if (dtype == DType::Float32) {
    auto *p = reinterpret_cast<float *>(data);
    for (int64_t i = 0; i < n; ++i)
      p[i] = static_cast<float>(value(i));
  } else if (dtype == DType::Float64) {
    auto *p = reinterpret_cast<double *>(data);
    for (int64_t i = 0; i < n; ++i)
      p[i] = value(i);
  } else {
    for (int64_t i = 0; i < n; ++i)
      out.storeDouble(i, value(i));
  }
  return out;
}

void registerCoreKernels(KernelRegistry &r) { r.add(kKernels); }

} // namespace gc
