//===- NNCommon.h - What the neural-network kernel families share -*- C++ -*-===//
//
// The families of neural-network kernels (Products.cpp, Convolution.cpp,
// Normalization.cpp, NN.cpp) do nearly all of a model's arithmetic, so
// unlike the other families they copy each operand once into a contiguous
// float64 (or int64) array and loop over raw arrays with plain index
// arithmetic: reading every element through a multi-index would make one
// MobileNet run take minutes. Floating results are accumulated in double and
// rounded once, when the float64 result is converted to the result dtype.
// This header holds the helpers they share.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_INTERP_KERNELS_NNCOMMON_H
#define GC_LIB_INTERP_KERNELS_NNCOMMON_H

#include "gc/Interp/Kernel.h"
#include "gc/Interp/Promotion.h"

#include <cassert>
#include <limits>
#include <numeric>
#include <string_view>

namespace gc::nn {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

//===----------------------------------------------------------------------===//
// Raw arrays, shapes and arguments
//===----------------------------------------------------------------------===//

/// The elements of a contiguous tensor as a plain array. T must have the
/// dtype's size: double for Float64, int64_t or uint64_t for Int64.
template <class T> T *rawData(const Tensor &t) {
  assert((t.numel() == 0 || t.isContiguous()) && dtypeSize(t.dtype()) == sizeof(T));
  return reinterpret_cast<T *>(t.storage()->data()) + t.offset();
}

/// A contiguous float64 copy of `t`, to be read as a raw array.
inline Tensor toF64(const Tensor &t) { return t.to(DType::Float64); }

/// The contiguous tensor `t` viewed with other sizes.
inline Tensor reshaped(const Tensor &t, Shape sizes) {
  Shape strides = contiguousStrides(sizes);
  return t.asStrided(std::move(sizes), std::move(strides), t.offset());
}

/// `t` viewed with a size-1 dimension inserted at `dim`.
inline Tensor unsqueezed(const Tensor &t, int64_t dim) {
  Shape sizes = t.sizes(), strides = t.strides();
  sizes.insert(sizes.begin() + dim, 1);
  strides.insert(strides.begin() + dim, 1); // any stride suits a size-1 dim
  return t.asStrided(std::move(sizes), std::move(strides), t.offset());
}

/// `t` viewed with its last two dimensions swapped; a 1-D tensor is itself.
inline Tensor transposedLast2(const Tensor &t) {
  if (t.dim() < 2)
    return t;
  Shape sizes = t.sizes(), strides = t.strides();
  std::swap(sizes[sizes.size() - 1], sizes[sizes.size() - 2]);
  std::swap(strides[strides.size() - 1], strides[strides.size() - 2]);
  return t.asStrided(std::move(sizes), std::move(strides), t.offset());
}

/// Product of sizes[begin, end).
inline int64_t sizeProduct(const Shape &sizes, size_t begin, size_t end) {
  return std::accumulate(sizes.begin() + begin, sizes.begin() + end, int64_t(1),
                         std::multiplies<>());
}

/// Concatenation of two shapes.
inline Shape concat(Shape a, const Shape &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// An int[n] argument, `dflt` in every entry when absent; as in torch's
/// schemas, a single value stands for all n.
inline std::vector<int64_t> intsOfLength(const OpCall &call, std::string_view name, size_t n,
                                  int64_t dflt) {
  if (!call.has(name))
    return std::vector<int64_t>(n, dflt);
  std::vector<int64_t> v = call.ints(name);
  if (v.size() == 1)
    v.assign(n, v[0]);
  if (v.size() != n)
    kernelFail(std::string(name) + " must have " + std::to_string(n) + " entries, got " +
               std::to_string(v.size()));
  return v;
}

/// An optional per-channel (or per-feature) tensor argument's elements, or
/// an empty vector when it is absent.
inline std::vector<double> optionalParam(const OpCall &call, std::string_view name,
                                  int64_t expectedNumel) {
  std::optional<Tensor> t = call.optTensor(name);
  if (!t)
    return {};
  if (t->numel() != expectedNumel)
    kernelFail(std::string(name) + " must have " + std::to_string(expectedNumel) +
               " elements, got shape " + shapeString(t->sizes()));
  return t->toDoubles();
}

inline void requireFloating(const Tensor &t, std::string_view what) {
  if (!isFloatingPoint(t.dtype()))
    kernelFail(std::string(what) + " must be a floating-point tensor, got " +
               std::string(dtypeName(t.dtype())));
}

/// Integer inputs are computed in float64 and converted back (truncating),
/// as torch's CPU kernels do for the ops that accept them.
inline void requireNumber(const Tensor &t, std::string_view what) {
  if (t.dtype() == DType::Bool)
    kernelFail(std::string(what) + " must be a number tensor, got bool");
}

inline void requireSameDType(const Tensor &a, const Tensor &b) {
  if (a.dtype() != b.dtype())
    kernelFail("expected operands of one dtype, got " + std::string(dtypeName(a.dtype())) +
               " and " + std::string(dtypeName(b.dtype())));
}

inline void requireRank(const Tensor &t, int64_t rank, std::string_view what) {
  if (t.dim() != rank)
    kernelFail(std::string(what) + " must be " + std::to_string(rank) + "-D, got shape " +
               shapeString(t.sizes()));
}

//===----------------------------------------------------------------------===//
// The int8 calls (gc.qconvolution, gc.qlinear; Quantize.cpp)
//===----------------------------------------------------------------------===//

/// The input less its zero point and the int8 weights, as float64: exact
/// integers, so that the product is the int32 accumulator the library
/// computes.
Tensor int8Input(const OpCall &call);
Tensor int8Weight(const OpCall &call);
/// The call's result from its float64 accumulator `acc`, whose output
/// channels run along `channelDim`: acc x input scale x weight scale, plus
/// bias, ReLU, and requantized (round half to even, saturated) unless the
/// result is float32.
Tensor int8Result(const OpCall &call, const Tensor &acc, int64_t channelDim);

} // namespace gc::nn

#endif // GC_LIB_INTERP_KERNELS_NNCOMMON_H
