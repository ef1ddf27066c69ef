//===- NN.cpp - Reference kernels of neural-network ops -------------------===//
//
// Matrix products, convolution, pooling, normalization, softmax, attention
// and losses. These ops do nearly all of a model's arithmetic, so unlike the
// other families they copy each operand once into a contiguous float64 (or
// int64) array and loop over raw arrays with plain index arithmetic: reading
// every element through a multi-index would make one MobileNet run take
// minutes. Floating results are accumulated in double and rounded once, when
// the float64 result is converted to the result dtype.
//
//===----------------------------------------------------------------------===//
#include "gc/Interp/Kernel.h"
#include "gc/Interp/Promotion.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <limits>
#include <numeric>

namespace gc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

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
Tensor toF64(const Tensor &t) { return t.to(DType::Float64); }

/// The contiguous tensor `t` viewed with other sizes.
Tensor reshaped(const Tensor &t, Shape sizes) {
  Shape strides = contiguousStrides(sizes);
  return t.asStrided(std::move(sizes), std::move(strides), t.offset());
}

/// `t` viewed with a size-1 dimension inserted at `dim`.
Tensor unsqueezed(const Tensor &t, int64_t dim) {
  Shape sizes = t.sizes(), strides = t.strides();
  sizes.insert(sizes.begin() + dim, 1);
  strides.insert(strides.begin() + dim, 1); // any stride suits a size-1 dim
  return t.asStrided(std::move(sizes), std::move(strides), t.offset());
}

/// `t` viewed with its last two dimensions swapped; a 1-D tensor is itself.
Tensor transposedLast2(const Tensor &t) {
  if (t.dim() < 2)
    return t;
  Shape sizes = t.sizes(), strides = t.strides();
  std::swap(sizes[sizes.size() - 1], sizes[sizes.size() - 2]);
  std::swap(strides[strides.size() - 1], strides[strides.size() - 2]);
  return t.asStrided(std::move(sizes), std::move(strides), t.offset());
}

/// Product of sizes[begin, end).
int64_t sizeProduct(const Shape &sizes, size_t begin, size_t end) {
  return std::accumulate(sizes.begin() + begin, sizes.begin() + end, int64_t(1),
                         std::multiplies<>());
}

/// Concatenation of two shapes.
Shape concat(Shape a, const Shape &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// An int[n] argument, `dflt` in every entry when absent; as in torch's
/// schemas, a single value stands for all n.
std::vector<int64_t> intsOfLength(const OpCall &call, std::string_view name, size_t n,
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
std::vector<double> optionalParam(const OpCall &call, std::string_view name,
                                  int64_t expectedNumel) {
  std::optional<Tensor> t = call.optTensor(name);
  if (!t)
    return {};
  if (t->numel() != expectedNumel)
    kernelFail(std::string(name) + " must have " + std::to_string(expectedNumel) +
               " elements, got shape " + shapeString(t->sizes()));
  return t->toDoubles();
}

void requireFloating(const Tensor &t, std::string_view what) {
  if (!isFloatingPoint(t.dtype()))
    kernelFail(std::string(what) + " must be a floating-point tensor, got " +
               std::string(dtypeName(t.dtype())));
}

/// Integer inputs are computed in float64 and converted back (truncating),
/// as torch's CPU kernels do for the ops that accept them.
void requireNumber(const Tensor &t, std::string_view what) {
  if (t.dtype() == DType::Bool)
    kernelFail(std::string(what) + " must be a number tensor, got bool");
}

void requireSameDType(const Tensor &a, const Tensor &b) {
  if (a.dtype() != b.dtype())
    kernelFail("expected operands of one dtype, got " + std::string(dtypeName(a.dtype())) +
               " and " + std::string(dtypeName(b.dtype())));
}

void requireRank(const Tensor &t, int64_t rank, std::string_view what) {
  if (t.dim() != rank)
    kernelFail(std::string(what) + " must be " + std::to_string(rank) + "-D, got shape " +
               shapeString(t.sizes()));
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

// Products accumulate in a "wide" dtype: float64 for floating operands, and
// int64 with wraparound for integer ones (held as uint64_t, whose overflow is
// defined). The kernels convert the wide result to the operands' dtype.

DType wideDType(DType d) { return isFloatingPoint(d) ? DType::Float64 : DType::Int64; }

/// The dtype of a product of `a` and `b`: torch multiplies floating or
/// integer matrices of one dtype, never bool ones.
DType productDType(const Tensor &a, const Tensor &b) {
  requireSameDType(a, b);
  if (a.dtype() == DType::Bool)
    kernelFail("matrix products of bool tensors are not supported");
  return a.dtype();
}

/// c[i] += a[i] @ b[i] for `batch` row-major matrices a [m, k], b [k, n].
template <class T>
void matmulLoop(const T *a, const T *b, T *c, int64_t batch, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < batch; ++i, a += m * k, b += k * n, c += m * n)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < k; ++j) {
        T x = a[r * k + j];
        for (int64_t col = 0; col < n; ++col)
          c[r * n + col] += x * b[j * n + col];
      }
}

/// a [..., m, k] @ b [..., k, n], whose batch dimensions are equal, in the
/// wide dtype.
Tensor batchedProduct(const Tensor &a, const Tensor &b) {
  DType wide = wideDType(a.dtype());
  Tensor wa = a.to(wide), wb = b.to(wide);
  int64_t rank = a.dim();
  int64_t m = a.size(rank - 2), k = a.size(rank - 1), n = b.size(rank - 1);
  int64_t batch = sizeProduct(a.sizes(), 0, rank - 2);
  Shape outSizes = a.sizes();
  outSizes.back() = n;
  Tensor out = Tensor::zeros(wide, outSizes);
  if (wide == DType::Float64)
    matmulLoop(rawData<double>(wa), rawData<double>(wb), rawData<double>(out), batch, m, k, n);
  else
    matmulLoop(rawData<uint64_t>(wa), rawData<uint64_t>(wb), rawData<uint64_t>(out), batch, m, k,
               n);
  return out;
}

void requireInnerSizesMatch(const Tensor &a, const Tensor &b) {
  if (a.size(a.dim() - 1) != b.size(b.dim() - 2))
    kernelFail("shapes " + shapeString(a.sizes()) + " and " + shapeString(b.sizes()) +
               " cannot be multiplied");
}

/// torch.matmul in the wide dtype: a 1-D left operand is a row and a 1-D
/// right operand a column, each dropped from the result; batch dimensions
/// broadcast.
Tensor matmulWide(const Tensor &a, const Tensor &b) {
  if (a.dim() == 0 || b.dim() == 0)
    kernelFail("both arguments to matmul need to be at least 1-D, got shapes " +
               shapeString(a.sizes()) + " and " + shapeString(b.sizes()));
  Tensor a2 = a.dim() == 1 ? unsqueezed(a, 0) : a;
  Tensor b2 = b.dim() == 1 ? unsqueezed(b, 1) : b;
  requireInnerSizesMatch(a2, b2);
  Shape aBatch(a2.sizes().begin(), a2.sizes().end() - 2);
  Shape bBatch(b2.sizes().begin(), b2.sizes().end() - 2);
  Shape batch = broadcastShapes(aBatch, bBatch);
  int64_t m = a2.size(a2.dim() - 2), k = a2.size(a2.dim() - 1);
  int64_t n = b2.size(b2.dim() - 1);
  Tensor product = batchedProduct(broadcastTo(a2, concat(batch, {m, k})),
                                  broadcastTo(b2, concat(batch, {k, n})));
  Shape resultSizes = batch;
  if (a.dim() > 1)
    resultSizes.push_back(m);
  if (b.dim() > 1)
    resultSizes.push_back(n);
  return reshaped(product, resultSizes);
}

/// acc = alpha * acc + beta * self, where a null `self` adds nothing.
template <class T> void addScaledLoop(T *acc, const T *self, T beta, T alpha, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    acc[i] = alpha * acc[i] + (self ? beta * self[i] : T(0));
}

/// beta * self + alpha * product, with `self` broadcast to the wide
/// product's shape, converted to `dtype`. As in torch, a zero beta ignores
/// self entirely (its nans and infs too), and integer operands take no
/// floating-point beta or alpha.
Tensor addScaled(const Tensor &product, const Tensor &self, Scalar beta, Scalar alpha,
                 DType dtype) {
  bool floating = product.dtype() == DType::Float64;
  if (!floating && (beta.kind == Scalar::Kind::Float || alpha.kind == Scalar::Kind::Float))
    kernelFail("for integral input tensors, beta and alpha must not be floating-point numbers");
  Tensor acc = product.clone();
  bool useSelf = beta.toDouble() != 0;
  Tensor wideSelf;
  if (useSelf)
    wideSelf = broadcastTo(self, product.sizes()).to(product.dtype());
  if (floating)
    addScaledLoop(rawData<double>(acc), useSelf ? rawData<double>(wideSelf) : nullptr,
                  beta.toDouble(), alpha.toDouble(), acc.numel());
  else
    addScaledLoop(rawData<uint64_t>(acc), useSelf ? rawData<uint64_t>(wideSelf) : nullptr,
                  static_cast<uint64_t>(beta.i), static_cast<uint64_t>(alpha.i), acc.numel());
  return acc.to(dtype);
}

Scalar intScalar(int64_t v) {
  Scalar s;
  s.kind = Scalar::Kind::Int;
  s.i = v;
  return s;
}

Scalar scalarOr(const OpCall &call, std::string_view name, int64_t dflt) {
  return call.has(name) ? call.scalar(name) : intScalar(dflt);
}

std::vector<Tensor> mm(const OpCall &call) {
  Tensor a = call.tensor("self"), b = call.tensor("mat2");
  requireRank(a, 2, "self");
  requireRank(b, 2, "mat2");
  DType dtype = productDType(a, b);
  requireInnerSizesMatch(a, b);
  return {batchedProduct(a, b).to(dtype)};
}

std::vector<Tensor> bmm(const OpCall &call) {
  Tensor a = call.tensor("self"), b = call.tensor("mat2");
  requireRank(a, 3, "self");
  requireRank(b, 3, "mat2");
  DType dtype = productDType(a, b);
  if (a.size(0) != b.size(0))
    kernelFail("batch sizes differ: " + shapeString(a.sizes()) + " and " + shapeString(b.sizes()));
  requireInnerSizesMatch(a, b);
  return {batchedProduct(a, b).to(dtype)};
}

/// addmm and baddbmm: beta * self + alpha * (m1 @ m2) for m1, m2 of `rank`.
std::vector<Tensor> addProduct(const OpCall &call, const char *m1Name, const char *m2Name,
                               int64_t rank) {
  Tensor self = call.tensor("self");
  Tensor m1 = call.tensor(m1Name), m2 = call.tensor(m2Name);
  requireRank(m1, rank, m1Name);
  requireRank(m2, rank, m2Name);
  DType dtype = productDType(m1, m2);
  requireSameDType(self, m1);
  if (rank == 3 && m1.size(0) != m2.size(0))
    kernelFail("batch sizes differ: " + shapeString(m1.sizes()) + " and " +
               shapeString(m2.sizes()));
  requireInnerSizesMatch(m1, m2);
  return {addScaled(batchedProduct(m1, m2), self, scalarOr(call, "beta", 1),
                    scalarOr(call, "alpha", 1), dtype)};
}

std::vector<Tensor> addmm(const OpCall &call) { return addProduct(call, "mat1", "mat2", 2); }

std::vector<Tensor> baddbmm(const OpCall &call) { return addProduct(call, "batch1", "batch2", 3); }

std::vector<Tensor> matmul(const OpCall &call) {
  Tensor a = call.tensor("self"), b = call.tensor("other");
  DType dtype = productDType(a, b);
  return {matmulWide(a, b).to(dtype)};
}

/// input @ weight^T + bias.
std::vector<Tensor> linear(const OpCall &call) {
  Tensor input = call.tensor("input"), weight = call.tensor("weight");
  DType dtype = productDType(input, weight);
  Tensor product = matmulWide(input, transposedLast2(weight));
  std::optional<Tensor> bias = call.optTensor("bias");
  if (!bias)
    return {product.to(dtype)};
  requireSameDType(*bias, input);
  return {addScaled(product, *bias, intScalar(1), intScalar(1), dtype)};
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// One spatial dimension of a sliding window: the input and output extents,
/// and the window's size, stride, padding before the input and dilation.
/// Unused dimensions of a lower-rank op keep the defaults (extent 1).
struct WindowDim {
  int64_t in = 1, out = 1, kernel = 1, stride = 1, pad = 0, dilation = 1;

  /// The input position of tap `k` of output `o`, or -1 in the padding.
  int64_t inputPos(int64_t o, int64_t k) const {
    int64_t i = o * stride - pad + k * dilation;
    return i >= 0 && i < in ? i : -1;
  }
};

/// A convolution's geometry. Spatial dimensions are right-aligned in three
/// (depth, height, width), so one loop nest serves 1-D, 2-D and 3-D.
struct ConvGeometry {
  int64_t batch, inChannels, outChannels, groups;
  std::array<WindowDim, 3> dims;

  int64_t inPlane() const { return dims[0].in * dims[1].in * dims[2].in; }
  int64_t outPlane() const { return dims[0].out * dims[1].out * dims[2].out; }
  int64_t taps() const { return dims[0].kernel * dims[1].kernel * dims[2].kernel; }
};

/// One output element of a convolution at spatial position (od, oh, ow):
/// the sum over the group's input channels and the window's taps.
double convOutput(const ConvGeometry &g, const double *input, const double *weight, int64_t od,
                  int64_t oh, int64_t ow) {
  const auto &[d, h, w] = g.dims;
  int64_t channels = g.inChannels / g.groups;
  double acc = 0;
  for (int64_t c = 0; c < channels; ++c) {
    const double *x = input + c * g.inPlane();
    const double *taps = weight + c * g.taps();
    for (int64_t kd = 0; kd < d.kernel; ++kd) {
      int64_t id = d.inputPos(od, kd);
      if (id < 0)
        continue;
      for (int64_t kh = 0; kh < h.kernel; ++kh) {
        int64_t ih = h.inputPos(oh, kh);
        if (ih < 0)
          continue;
        for (int64_t kw = 0; kw < w.kernel; ++kw) {
          int64_t iw = w.inputPos(ow, kw);
          if (iw >= 0)
            acc += x[(id * h.in + ih) * w.in + iw] * taps[(kd * h.kernel + kh) * w.kernel + kw];
        }
      }
    }
  }
  return acc;
}

/// Convolution of a contiguous float64 input [N, Cin, *spatial] with weight
/// [Cout, Cin / groups, *kernel] into [N, Cout, *outSpatial].
void convolveLoop(const ConvGeometry &g, const double *input, const double *weight,
                  const double *bias, double *out) {
  int64_t outPerGroup = g.outChannels / g.groups;
  int64_t inPerGroup = g.inChannels / g.groups;
  const auto &[d, h, w] = g.dims;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oc = 0; oc < g.outChannels; ++oc) {
      int64_t firstIn = oc / outPerGroup * inPerGroup;
      const double *x = input + (n * g.inChannels + firstIn) * g.inPlane();
      const double *taps = weight + oc * inPerGroup * g.taps();
      double *y = out + (n * g.outChannels + oc) * g.outPlane();
      for (int64_t od = 0; od < d.out; ++od)
        for (int64_t oh = 0; oh < h.out; ++oh)
          for (int64_t ow = 0; ow < w.out; ++ow)
            *y++ = (bias ? bias[oc] : 0) + convOutput(g, x, taps, od, oh, ow);
    }
}

/// How a convolution pads: explicitly per spatial dimension, or torch's
/// "same" (output extent = input extent) and "valid" (no padding).
struct ConvPadding {
  enum class Kind { Explicit, Same, Valid } kind = Kind::Explicit;
  std::vector<int64_t> amounts; ///< per spatial dim, for Explicit
};

/// Convolution of a batched input [N, Cin, *spatial] (1 to 3 spatial dims),
/// in the input's dtype; integer inputs accumulate in float64 (exact below
/// 2^53), as torch's CPU kernel convolves them too.
Tensor convolve(const Tensor &input, const Tensor &weight, const std::optional<Tensor> &bias,
                const std::vector<int64_t> &stride, const ConvPadding &padding,
                const std::vector<int64_t> &dilation, int64_t groups) {
  requireNumber(input, "convolution input");
  requireSameDType(input, weight);
  if (bias)
    requireSameDType(input, *bias);
  int64_t spatial = weight.dim() - 2;
  if (spatial < 1 || spatial > 3 || input.dim() != weight.dim())
    kernelFail("convolution expects an input [N, C, *spatial] and a weight [Cout, C / groups, "
               "*kernel] with 1 to 3 spatial dims, got " +
               shapeString(input.sizes()) + " and " + shapeString(weight.sizes()));
  ConvGeometry g;
  g.batch = input.size(0);
  g.inChannels = input.size(1);
  g.outChannels = weight.size(0);
  g.groups = groups;
  if (groups <= 0 || g.inChannels != weight.size(1) * groups || g.outChannels % groups != 0)
    kernelFail("convolution with " + std::to_string(groups) + " groups cannot take input " +
               shapeString(input.sizes()) + " and weight " + shapeString(weight.sizes()));
  if (bias && bias->numel() != g.outChannels)
    kernelFail("convolution bias must have " + std::to_string(g.outChannels) +
               " elements, got shape " + shapeString(bias->sizes()));
  if (padding.kind == ConvPadding::Kind::Same &&
      std::any_of(stride.begin(), stride.end(), [](int64_t s) { return s != 1; }))
    kernelFail("padding='same' is not supported for strided convolutions");

  Shape outSizes = {g.batch, g.outChannels};
  for (int64_t i = 0; i < spatial; ++i) {
    WindowDim &dim = g.dims[3 - spatial + i];
    dim.in = input.size(2 + i);
    dim.kernel = weight.size(2 + i);
    dim.stride = stride[i];
    dim.dilation = dilation[i];
    if (dim.stride <= 0 || dim.dilation <= 0)
      kernelFail("convolution stride and dilation must be positive");
    if (padding.kind == ConvPadding::Kind::Explicit && padding.amounts[i] < 0)
      kernelFail("convolution padding must be non-negative");
    int64_t extent = dim.dilation * (dim.kernel - 1);
    // "same" pads `extent` in all, the odd one after the input, as torch.
    int64_t padAfter = 0;
    if (padding.kind == ConvPadding::Kind::Explicit)
      dim.pad = padAfter = padding.amounts[i];
    else if (padding.kind == ConvPadding::Kind::Same) {
      dim.pad = extent / 2;
      padAfter = extent - dim.pad;
    }
    int64_t span = dim.in + dim.pad + padAfter - extent - 1;
    if (span < 0)
      kernelFail("convolution kernel " + shapeString(weight.sizes()) +
                 " is larger than the padded input " + shapeString(input.sizes()));
    dim.out = span / dim.stride + 1;
    outSizes.push_back(dim.out);
  }

  Tensor x = toF64(input), w = toF64(weight);
  Tensor b = bias ? toF64(*bias) : Tensor();
  Tensor out = Tensor::zeros(DType::Float64, outSizes);
  convolveLoop(g, rawData<double>(x), rawData<double>(w), bias ? rawData<double>(b) : nullptr,
               rawData<double>(out));
  return out.to(input.dtype());
}

/// conv1d, conv2d, conv3d; an unbatched input [Cin, *spatial] gives an
/// unbatched result. `padding` decides the padding.
std::vector<Tensor> convNd(const OpCall &call, const ConvPadding &padding) {
  Tensor input = call.tensor("input"), weight = call.tensor("weight");
  size_t spatial = static_cast<size_t>(std::max<int64_t>(weight.dim() - 2, 0));
  bool unbatched = input.dim() == weight.dim() - 1;
  Tensor out = convolve(unbatched ? unsqueezed(input, 0) : input, weight, call.optTensor("bias"),
                        intsOfLength(call, "stride", spatial, 1), padding,
                        intsOfLength(call, "dilation", spatial, 1), call.integer("groups", 1));
  if (!unbatched)
    return {out};
  return {reshaped(out, Shape(out.sizes().begin() + 1, out.sizes().end()))};
}

/// conv*d.default: `padding` is an int list.
std::vector<Tensor> convNdDefault(const OpCall &call) {
  size_t spatial = static_cast<size_t>(std::max<int64_t>(call.tensor("weight").dim() - 2, 0));
  ConvPadding padding;
  padding.amounts = intsOfLength(call, "padding", spatial, 0);
  return convNd(call, padding);
}

/// conv*d.padding: `padding` is "same" or "valid".
std::vector<Tensor> convNdPaddingString(const OpCall &call) {
  std::string mode = call.string("padding", "valid");
  ConvPadding padding;
  if (mode == "same")
    padding.kind = ConvPadding::Kind::Same;
  else if (mode == "valid")
    padding.kind = ConvPadding::Kind::Valid;
  else
    kernelFail("invalid padding string '" + mode + "', expected 'same' or 'valid'");
  return convNd(call, padding);
}

std::vector<Tensor> convolution(const OpCall &call) {
  if (call.boolean("transposed", false))
    kernelFail("transposed convolution is not supported by the reference interpreter");
  Tensor input = call.tensor("input"), weight = call.tensor("weight");
  size_t spatial = static_cast<size_t>(std::max<int64_t>(weight.dim() - 2, 0));
  ConvPadding padding;
  padding.amounts = intsOfLength(call, "padding", spatial, 0);
  return {convolve(input, weight, call.optTensor("bias"), intsOfLength(call, "stride", spatial, 1),
                   padding, intsOfLength(call, "dilation", spatial, 1), call.integer("groups", 1))};
}

/// The input of a 2-D pooling op, [C, H, W] or [N, C, H, W], as a float64
/// array of planes of H x W.
struct PoolInput {
  Tensor data;
  Shape leading; ///< the sizes before H and W
  int64_t planes, height, width;

  /// The result's sizes for `oh` x `ow` outputs per plane.
  Shape resultSizes(int64_t oh, int64_t ow) const { return concat(leading, {oh, ow}); }
};

PoolInput poolInput(const Tensor &self) {
  if (self.dim() != 3 && self.dim() != 4)
    kernelFail("pooling expects a 3-D or 4-D input, got shape " + shapeString(self.sizes()));
  PoolInput p;
  p.data = toF64(self);
  p.leading = Shape(self.sizes().begin(), self.sizes().end() - 2);
  p.planes = sizeProduct(self.sizes(), 0, self.dim() - 2);
  p.height = self.size(self.dim() - 2);
  p.width = self.size(self.dim() - 1);
  return p;
}

/// The windows of max_pool2d and avg_pool2d along height and width, from
/// kernel_size, stride (empty: the kernel size), padding, dilation (if the
/// op has it) and ceil_mode.
std::array<WindowDim, 2> poolWindows(const OpCall &call, const PoolInput &in) {
  std::vector<int64_t> kernel = intsOfLength(call, "kernel_size", 2, 1);
  std::vector<int64_t> stride = kernel;
  if (call.has("stride") && !call.ints("stride").empty())
    stride = intsOfLength(call, "stride", 2, 1);
  std::vector<int64_t> pad = intsOfLength(call, "padding", 2, 0);
  std::vector<int64_t> dilation = intsOfLength(call, "dilation", 2, 1);
  bool ceilMode = call.boolean("ceil_mode", false);

  std::array<WindowDim, 2> dims;
  for (size_t i = 0; i < 2; ++i) {
    WindowDim &d = dims[i];
    d.in = i == 0 ? in.height : in.width;
    d.kernel = kernel[i];
    d.stride = stride[i];
    d.pad = pad[i];
    d.dilation = dilation[i];
    if (d.kernel <= 0 || d.stride <= 0 || d.dilation <= 0 || d.pad < 0)
      kernelFail("pooling kernel size, stride and dilation must be positive, padding non-negative");
    if (d.pad > d.kernel / 2)
      kernelFail("pooling padding must be at most half the kernel size");
    // torch's pooling_output_shape: in ceil mode a last, partial window is
    // kept only if it starts inside the input or its left padding.
    int64_t span =
        d.in + 2 * d.pad - d.dilation * (d.kernel - 1) - 1 + (ceilMode ? d.stride - 1 : 0);
    int64_t out = (span >= 0 ? span / d.stride : -1) + 1;
    if (ceilMode && out > 0 && (out - 1) * d.stride >= d.in + d.pad)
      --out;
    if (out <= 0)
      kernelFail("pooling output would be empty for input " + std::to_string(d.in) +
                 " and kernel " + std::to_string(d.kernel));
    d.out = out;
  }
  return dims;
}

/// max_pool2d's values and, per output, the flat index (ih * W + iw) of the
/// maximum within its plane. A nan wins, as in torch.
std::pair<Tensor, Tensor> maxPool2d(const OpCall &call) {
  Tensor self = call.tensor("self");
  if (self.dtype() == DType::Bool)
    kernelFail("max_pool2d does not support bool tensors");
  PoolInput in = poolInput(self);
  auto [h, w] = poolWindows(call, in);
  Shape outSizes = in.resultSizes(h.out, w.out);
  Tensor values = Tensor::zeros(DType::Float64, outSizes);
  Tensor indices = Tensor::zeros(DType::Int64, outSizes);
  const double *x = rawData<double>(in.data);
  double *v = rawData<double>(values);
  int64_t *idx = rawData<int64_t>(indices);
  for (int64_t p = 0; p < in.planes; ++p, x += in.height * in.width)
    for (int64_t oh = 0; oh < h.out; ++oh)
      for (int64_t ow = 0; ow < w.out; ++ow, ++v, ++idx) {
        double best = -kInf;
        int64_t bestIndex = -1;
        for (int64_t kh = 0; kh < h.kernel; ++kh) {
          int64_t ih = h.inputPos(oh, kh);
          if (ih < 0)
            continue;
          for (int64_t kw = 0; kw < w.kernel; ++kw) {
            int64_t iw = w.inputPos(ow, kw);
            if (iw < 0)
              continue;
            double e = x[ih * in.width + iw];
            if (bestIndex < 0 || e > best || std::isnan(e)) {
              best = e;
              bestIndex = ih * in.width + iw;
            }
          }
        }
        *v = best;
        *idx = bestIndex;
      }
  return {values.to(self.dtype()), indices};
}

std::vector<Tensor> maxPool2dValues(const OpCall &call) { return {maxPool2d(call).first}; }

std::vector<Tensor> maxPool2dWithIndices(const OpCall &call) {
  auto [values, indices] = maxPool2d(call);
  return {values, indices};
}

/// avg_pool2d as torch computes it: a window is clipped to the padded input
/// for its default divisor, and to the input itself for its sum and for the
/// divisor when count_include_pad is false.
std::vector<Tensor> avgPool2d(const OpCall &call) {
  Tensor self = call.tensor("self");
  requireNumber(self, "avg_pool2d input");
  PoolInput in = poolInput(self);
  auto [h, w] = poolWindows(call, in);
  bool countPad = call.boolean("count_include_pad", true);
  std::optional<int64_t> divisorOverride;
  if (call.has("divisor_override")) {
    divisorOverride = call.integer("divisor_override");
    if (*divisorOverride == 0)
      kernelFail("avg_pool2d divisor_override must not be zero");
  }
  Tensor out = Tensor::zeros(DType::Float64, in.resultSizes(h.out, w.out));
  const double *x = rawData<double>(in.data);
  double *y = rawData<double>(out);
  for (int64_t p = 0; p < in.planes; ++p, x += in.height * in.width)
    for (int64_t oh = 0; oh < h.out; ++oh)
      for (int64_t ow = 0; ow < w.out; ++ow) {
        int64_t h0 = oh * h.stride - h.pad, w0 = ow * w.stride - w.pad;
        int64_t h1 = std::min(h0 + h.kernel, h.in + h.pad);
        int64_t w1 = std::min(w0 + w.kernel, w.in + w.pad);
        int64_t paddedCount = (h1 - h0) * (w1 - w0);
        h0 = std::max<int64_t>(h0, 0);
        w0 = std::max<int64_t>(w0, 0);
        h1 = std::min(h1, h.in);
        w1 = std::min(w1, w.in);
        double sum = 0;
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw)
            sum += x[ih * in.width + iw];
        int64_t divisor = divisorOverride ? *divisorOverride
                          : countPad      ? paddedCount
                                          : (h1 - h0) * (w1 - w0);
        *y++ = sum / static_cast<double>(divisor);
      }
  return {out.to(self.dtype())};
}

/// adaptive_avg_pool2d: output i along a dimension averages the input range
/// [floor(i * in / out), ceil((i + 1) * in / out)).
std::vector<Tensor> adaptiveAvgPool2d(const OpCall &call) {
  Tensor self = call.tensor("self");
  requireFloating(self, "adaptive_avg_pool2d input");
  PoolInput in = poolInput(self);
  std::vector<int64_t> outSize = intsOfLength(call, "output_size", 2, 1);
  int64_t oh = outSize[0], ow = outSize[1];
  if (oh < 0 || ow < 0 || in.height == 0 || in.width == 0)
    kernelFail(
        "adaptive_avg_pool2d needs non-empty planes and a non-negative output size, got input " +
        shapeString(self.sizes()));
  auto start = [](int64_t i, int64_t inSize, int64_t outSize) { return i * inSize / outSize; };
  auto end = [](int64_t i, int64_t inSize, int64_t outSize) {
    return ((i + 1) * inSize + outSize - 1) / outSize;
  };
  Tensor out = Tensor::zeros(DType::Float64, in.resultSizes(oh, ow));
  const double *x = rawData<double>(in.data);
  double *y = rawData<double>(out);
  for (int64_t p = 0; p < in.planes; ++p, x += in.height * in.width)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        int64_t h0 = start(i, in.height, oh), h1 = end(i, in.height, oh);
        int64_t w0 = start(j, in.width, ow), w1 = end(j, in.width, ow);
        double sum = 0;
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw)
            sum += x[ih * in.width + iw];
        *y++ = sum / static_cast<double>((h1 - h0) * (w1 - w0));
      }
  return {out.to(self.dtype())};
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

/// Per-group statistics: the mean and the biased variance.
struct Moments {
  std::vector<double> mean, var;
};

/// Moments of each group g of x viewed as [outer, groups, inner], over
/// outer and inner (two passes, for accuracy). Empty groups get nan.
Moments momentsOf(const double *x, int64_t outer, int64_t groups, int64_t inner) {
  Moments m{std::vector<double>(groups, 0), std::vector<double>(groups, 0)};
  double count = static_cast<double>(outer * inner);
  for (int64_t g = 0; g < groups; ++g) {
    double sum = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        sum += x[(o * groups + g) * inner + i];
    double mean = sum / count, squares = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        double d = x[(o * groups + g) * inner + i] - mean;
        squares += d * d;
      }
    m.mean[g] = mean;
    m.var[g] = squares / count;
  }
  return m;
}

std::vector<double> invStd(const std::vector<double> &var, double eps) {
  std::vector<double> r(var.size());
  for (size_t i = 0; i < var.size(); ++i)
    r[i] = 1 / std::sqrt(var[i] + eps);
  return r;
}

/// (x - mean[g]) * invstd[g] * weight[a] + bias[a] for each element (o, g, i)
/// of x viewed as [outer, groups, inner], where a = affineIndex(g, i); an
/// empty weight or bias is left out. The result has x's sizes and `dtype`.
template <class AffineIndex>
Tensor normalize(const Tensor &x, int64_t outer, int64_t groups, int64_t inner,
                 const std::vector<double> &mean, const std::vector<double> &invstd,
                 const std::vector<double> &weight, const std::vector<double> &bias,
                 AffineIndex affineIndex, DType dtype) {
  Tensor out = Tensor::zeros(DType::Float64, x.sizes());
  const double *in = rawData<double>(x);
  double *y = rawData<double>(out);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t i = 0; i < inner; ++i, ++in, ++y) {
        int64_t a = affineIndex(g, i);
        double v = (*in - mean[g]) * invstd[g];
        if (!weight.empty())
          v *= weight[a];
        if (!bias.empty())
          v += bias[a];
        *y = v;
      }
  return out.to(dtype);
}

/// A 1-D tensor of `dtype` holding `values`.
Tensor vectorTensor(const std::vector<double> &values, DType dtype) {
  Tensor t = Tensor::zeros(DType::Float64, {static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), rawData<double>(t));
  return t.to(dtype);
}

/// Batch normalization of input [N, C, *] per channel.
struct BatchNorm {
  Tensor out;
  /// Training only: the batch statistics (empty in evaluation).
  std::vector<double> saveMean, saveInvstd;
  /// Training with running statistics only: their updated values, the
  /// variance updated with the unbiased batch variance, as in torch.
  std::vector<double> newRunningMean, newRunningVar;
};

BatchNorm batchNorm(const OpCall &call, bool training, const std::optional<Tensor> &runningMean,
                    const std::optional<Tensor> &runningVar) {
  Tensor input = call.tensor("input");
  requireFloating(input, "batch_norm input");
  if (input.dim() < 2)
    kernelFail("batch_norm expects an input [N, C, *], got shape " + shapeString(input.sizes()));
  int64_t n = input.size(0), c = input.size(1);
  int64_t inner = sizeProduct(input.sizes(), 2, input.sizes().size());
  double eps = call.real("eps", 1e-5), momentum = call.real("momentum", 0.1);
  std::vector<double> weight = optionalParam(call, "weight", c);
  std::vector<double> bias = optionalParam(call, "bias", c);
  if (runningMean.has_value() != runningVar.has_value())
    kernelFail("batch_norm needs both running_mean and running_var, or neither");
  if (runningMean && (runningMean->numel() != c || runningVar->numel() != c))
    kernelFail("batch_norm running statistics must have " + std::to_string(c) + " elements");
  if (!training && !runningMean)
    kernelFail("batch_norm in evaluation mode needs running statistics");

  Tensor x = toF64(input);
  BatchNorm r;
  std::vector<double> mean, invstd;
  if (training) {
    Moments m = momentsOf(rawData<double>(x), n, c, inner);
    mean = m.mean;
    invstd = invStd(m.var, eps);
    r.saveMean = mean;
    r.saveInvstd = invstd;
    if (runningMean) {
      double count = static_cast<double>(n * inner);
      r.newRunningMean = runningMean->toDoubles();
      r.newRunningVar = runningVar->toDoubles();
      for (int64_t i = 0; i < c; ++i) {
        double unbiased = m.var[i] * count / (count - 1);
        r.newRunningMean[i] = (1 - momentum) * r.newRunningMean[i] + momentum * m.mean[i];
        r.newRunningVar[i] = (1 - momentum) * r.newRunningVar[i] + momentum * unbiased;
      }
    }
  } else {
    mean = runningMean->toDoubles();
    invstd = invStd(runningVar->toDoubles(), eps);
  }
  r.out = normalize(
      x, n, c, inner, mean, invstd, weight, bias, [](int64_t g, int64_t) { return g; },
      input.dtype());
  return r;
}

/// Writes updated running statistics into their tensors' storage.
void updateInPlace(Tensor &running, const std::vector<double> &values) {
  for (size_t i = 0; i < values.size(); ++i)
    running.setDouble({static_cast<int64_t>(i)}, values[i]);
}

/// The saved mean and inverse standard deviation results of the native
/// batch norms: the batch statistics in training, and (on CPU, as torch)
/// empty [0] tensors in evaluation, in the input's dtype.
std::vector<Tensor> withSavedStats(const BatchNorm &bn, DType dtype) {
  return {bn.out, vectorTensor(bn.saveMean, dtype), vectorTensor(bn.saveInvstd, dtype)};
}

/// The batch norms whose running statistics (if given) are updated in
/// place: batch_norm, native_batch_norm and _native_batch_norm_legit.
BatchNorm batchNormInPlace(const OpCall &call, bool training) {
  std::optional<Tensor> runningMean = call.optTensor("running_mean");
  std::optional<Tensor> runningVar = call.optTensor("running_var");
  BatchNorm bn = batchNorm(call, training, runningMean, runningVar);
  if (!bn.newRunningMean.empty()) {
    updateInPlace(*runningMean, bn.newRunningMean);
    updateInPlace(*runningVar, bn.newRunningVar);
  }
  return bn;
}

std::vector<Tensor> batchNormComposite(const OpCall &call) {
  Tensor input = call.tensor("input");
  // torch returns an empty input unchanged, whatever the mode.
  if (input.numel() == 0)
    return {input.clone()};
  return {batchNormInPlace(call, call.boolean("training", false)).out};
}

std::vector<Tensor> nativeBatchNorm(const OpCall &call) {
  BatchNorm bn = batchNormInPlace(call, call.boolean("training", false));
  return withSavedStats(bn, call.tensor("input").dtype());
}

std::vector<Tensor> nativeBatchNormLegitNoTraining(const OpCall &call) {
  BatchNorm bn = batchNorm(call, false, call.tensor("running_mean"), call.tensor("running_var"));
  return withSavedStats(bn, call.tensor("input").dtype());
}

std::vector<Tensor> nativeBatchNormLegitNoStats(const OpCall &call) {
  BatchNorm bn = batchNorm(call, call.boolean("training", false), std::nullopt, std::nullopt);
  return withSavedStats(bn, call.tensor("input").dtype());
}

/// The functional form: the updated running statistics are new results, in
/// the running statistics' dtype, and the inputs stay as they were.
std::vector<Tensor> nativeBatchNormLegitFunctional(const OpCall &call) {
  Tensor runningMean = call.tensor("running_mean");
  Tensor runningVar = call.tensor("running_var");
  bool training = call.boolean("training", false);
  BatchNorm bn = batchNorm(call, training, runningMean, runningVar);
  std::vector<Tensor> results = withSavedStats(bn, call.tensor("input").dtype());
  results.push_back(training ? vectorTensor(bn.newRunningMean, runningMean.dtype())
                             : runningMean.clone());
  results.push_back(training ? vectorTensor(bn.newRunningVar, runningVar.dtype())
                             : runningVar.clone());
  return results;
}

/// Layer normalization over the trailing `normalized_shape` dimensions:
/// the result, and the mean and inverse standard deviation with the
/// normalized dimensions kept as size 1.
std::vector<Tensor> layerNorm(const OpCall &call) {
  Tensor input = call.tensor("input");
  requireFloating(input, "layer_norm input");
  std::vector<int64_t> normalized = call.ints("normalized_shape");
  int64_t axis = input.dim() - static_cast<int64_t>(normalized.size());
  if (axis < 0 || !std::equal(normalized.begin(), normalized.end(), input.sizes().begin() + axis))
    kernelFail("layer_norm: normalized_shape " + shapeString(normalized) +
               " does not match the end of the input shape " + shapeString(input.sizes()));
  int64_t rows = sizeProduct(input.sizes(), 0, axis);
  int64_t len = sizeProduct(normalized, 0, normalized.size());
  std::vector<double> weight = optionalParam(call, "weight", len);
  std::vector<double> bias = optionalParam(call, "bias", len);
  Tensor x = toF64(input);
  Moments m = momentsOf(rawData<double>(x), 1, rows, len);
  std::vector<double> invstd = invStd(m.var, call.real("eps", 1e-5));
  Tensor out = normalize(
      x, 1, rows, len, m.mean, invstd, weight, bias, [](int64_t, int64_t i) { return i; },
      input.dtype());
  Shape statSizes(input.sizes().begin(), input.sizes().begin() + axis);
  statSizes.resize(input.sizes().size(), 1);
  return {out, reshaped(vectorTensor(m.mean, input.dtype()), statSizes),
          reshaped(vectorTensor(invstd, input.dtype()), statSizes)};
}

std::vector<Tensor> layerNormComposite(const OpCall &call) { return {layerNorm(call)[0]}; }

/// Group normalization of input [N, C, *] in `groups` groups of channels:
/// the result, and the mean and inverse standard deviation [N, groups].
std::vector<Tensor> groupNorm(const OpCall &call, int64_t groups) {
  Tensor input = call.tensor("input");
  requireFloating(input, "group_norm input");
  if (input.dim() < 2)
    kernelFail("group_norm expects an input [N, C, *], got shape " + shapeString(input.sizes()));
  int64_t n = input.size(0), c = input.size(1);
  if (groups <= 0 || c % groups != 0)
    kernelFail("group_norm: " + std::to_string(c) + " channels cannot form " +
               std::to_string(groups) + " groups");
  int64_t spatial = sizeProduct(input.sizes(), 2, input.sizes().size());
  int64_t perGroup = c / groups;
  std::vector<double> weight = optionalParam(call, "weight", c);
  std::vector<double> bias = optionalParam(call, "bias", c);
  Tensor x = toF64(input);
  Moments m = momentsOf(rawData<double>(x), 1, n * groups, perGroup * spatial);
  std::vector<double> invstd = invStd(m.var, call.real("eps", 1e-5));
  auto channel = [&](int64_t g, int64_t i) { return g % groups * perGroup + i / spatial; };
  Tensor out = normalize(x, 1, n * groups, perGroup * spatial, m.mean, invstd, weight, bias,
                         channel, input.dtype());
  return {out, reshaped(vectorTensor(m.mean, input.dtype()), {n, groups}),
          reshaped(vectorTensor(invstd, input.dtype()), {n, groups})};
}

std::vector<Tensor> groupNormComposite(const OpCall &call) {
  return {groupNorm(call, call.integer("num_groups"))[0]};
}

std::vector<Tensor> nativeGroupNorm(const OpCall &call) {
  return groupNorm(call, call.integer("group"));
}

//===----------------------------------------------------------------------===//
// Softmax and attention
//===----------------------------------------------------------------------===//

enum class SoftmaxKind {
  Softmax,
  LogSoftmax,
  /// Softmax, but a line that is all -inf (fully masked) gives zeros.
  SafeSoftmax,
};

/// Softmax of n elements x[j * stride] into y[j * stride], subtracting the
/// maximum first so that exp cannot overflow.
void softmaxLine(const double *x, double *y, int64_t n, int64_t stride, SoftmaxKind kind) {
  double max = -kInf;
  bool allMasked = true;
  for (int64_t j = 0; j < n; ++j) {
    max = std::max(max, x[j * stride]);
    allMasked = allMasked && x[j * stride] == -kInf;
  }
  if (kind == SoftmaxKind::SafeSoftmax && allMasked) {
    for (int64_t j = 0; j < n; ++j)
      y[j * stride] = 0;
    return;
  }
  double sum = 0;
  for (int64_t j = 0; j < n; ++j)
    sum += std::exp(x[j * stride] - max);
  for (int64_t j = 0; j < n; ++j) {
    double shifted = x[j * stride] - max;
    y[j * stride] =
        kind == SoftmaxKind::LogSoftmax ? shifted - std::log(sum) : std::exp(shifted) / sum;
  }
}

/// Softmax of `self` along `dim`, computed in double, as a float64 tensor.
Tensor softmaxF64(const Tensor &self, int64_t dim, SoftmaxKind kind) {
  dim = wrapDim(dim, self.dim());
  Tensor x = toF64(self);
  Tensor out = Tensor::zeros(DType::Float64, self.sizes());
  // A 0-dim tensor is one line of one element.
  Shape sizes = self.dim() == 0 ? Shape{1} : self.sizes();
  int64_t n = sizes[dim];
  int64_t outer = sizeProduct(sizes, 0, dim);
  int64_t inner = sizeProduct(sizes, dim + 1, sizes.size());
  const double *in = rawData<double>(x);
  double *y = rawData<double>(out);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      softmaxLine(in + o * n * inner + i, y + o * n * inner + i, n, inner, kind);
  return out;
}

/// softmax.int, log_softmax.int and _safe_softmax: an optional dtype
/// converts the input first, and is the result's dtype.
std::vector<Tensor> softmaxWithDType(const OpCall &call, SoftmaxKind kind) {
  Tensor self = call.tensor("self");
  if (std::optional<DType> dtype = call.dtype("dtype"))
    self = self.to(*dtype);
  requireFloating(self, "softmax input");
  return {softmaxF64(self, call.integer("dim"), kind).to(self.dtype())};
}

/// _softmax and _log_softmax: half_to_float gives a float32 result for a
/// float16 or bfloat16 input.
std::vector<Tensor> softmaxHalfToFloat(const OpCall &call, SoftmaxKind kind) {
  Tensor self = call.tensor("self");
  requireFloating(self, "softmax input");
  DType dtype = self.dtype();
  if (call.boolean("half_to_float", false)) {
    if (dtype != DType::Float16 && dtype != DType::BFloat16)
      kernelFail("half_to_float needs a float16 or bfloat16 input");
    dtype = DType::Float32;
  }
  return {softmaxF64(self, call.integer("dim"), kind).to(dtype)};
}

std::vector<Tensor> softmax(const OpCall &call) {
  return softmaxWithDType(call, SoftmaxKind::Softmax);
}
std::vector<Tensor> logSoftmax(const OpCall &call) {
  return softmaxWithDType(call, SoftmaxKind::LogSoftmax);
}
std::vector<Tensor> safeSoftmax(const OpCall &call) {
  return softmaxWithDType(call, SoftmaxKind::SafeSoftmax);
}
std::vector<Tensor> softmaxInternal(const OpCall &call) {
  return softmaxHalfToFloat(call, SoftmaxKind::Softmax);
}
std::vector<Tensor> logSoftmaxInternal(const OpCall &call) {
  return softmaxHalfToFloat(call, SoftmaxKind::LogSoftmax);
}

/// For grouped-query attention: key or value [..., Hkv, S, E] with each head
/// repeated to match the query's Hq heads ([k0, k0, k1, k1], as
/// repeat_interleave), contiguous.
Tensor repeatHeads(const Tensor &kv, const Tensor &query) {
  if (kv.dim() < 3 || query.dim() < 3)
    kernelFail("enable_gqa needs query, key and value with a head dimension");
  int64_t hq = query.size(query.dim() - 3), hkv = kv.size(kv.dim() - 3);
  if (hq == hkv)
    return kv;
  if (hkv == 0 || hq % hkv != 0)
    kernelFail("enable_gqa: " + std::to_string(hq) + " query heads are not a multiple of " +
               std::to_string(hkv) + " key/value heads");
  int64_t headDim = kv.dim() - 3;
  Shape sizes = kv.sizes(), strides = kv.strides();
  sizes.insert(sizes.begin() + headDim + 1, hq / hkv);
  strides.insert(strides.begin() + headDim + 1, 0);
  Tensor repeated = kv.asStrided(sizes, strides, kv.offset()).clone();
  Shape merged = kv.sizes();
  merged[headDim] = hq;
  return reshaped(repeated, merged);
}

/// `t` copied into a dense layout whose dimension order follows the strides
/// of `like`, as torch's empty_like(like) lays out a new tensor.
Tensor laidOutLike(const Tensor &t, const Tensor &like) {
  std::vector<size_t> order(t.sizes().size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return like.strides()[a] > like.strides()[b]; });
  Shape strides(order.size());
  int64_t running = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    strides[*it] = running;
    running *= std::max<int64_t>(t.sizes()[*it], 1);
  }
  Tensor out = Tensor::zeros(t.dtype(), {t.numel()}).asStrided(t.sizes(), strides, 0);
  out.copyFrom(t);
  return out;
}

/// softmax(q @ k^T * scale + mask) @ v over broadcast batch dimensions, as
/// torch's math implementation computes it: a bool mask keeps the positions
/// where it is true, a floating mask is added, is_causal keeps the lower
/// triangle of (L, S), and a fully masked row gives zeros. Like torch's CPU
/// kernel, the result is laid out like the query (views of the result, in
/// exported graphs, rely on that).
std::vector<Tensor> scaledDotProductAttention(const OpCall &call) {
  Tensor q = call.tensor("query"), k = call.tensor("key"), v = call.tensor("value");
  if (call.real("dropout_p", 0.0) != 0.0)
    kernelFail("scaled_dot_product_attention: the reference interpreter is deterministic and needs "
               "dropout_p = 0");
  bool causal = call.boolean("is_causal", false);
  std::optional<Tensor> mask = call.optTensor("attn_mask");
  if (causal && mask)
    kernelFail("scaled_dot_product_attention takes attn_mask or is_causal, not both");
  requireFloating(q, "query");
  requireSameDType(q, k);
  requireSameDType(q, v);
  if (q.dim() < 2 || k.dim() < 2 || v.dim() < 2)
    kernelFail("scaled_dot_product_attention needs query, key and value of rank 2 or more");
  if (call.boolean("enable_gqa", false)) {
    k = repeatHeads(k, q);
    v = repeatHeads(v, q);
  }
  int64_t l = q.size(q.dim() - 2), e = q.size(q.dim() - 1);
  int64_t s = k.size(k.dim() - 2), ev = v.size(v.dim() - 1);
  if (k.size(k.dim() - 1) != e || v.size(v.dim() - 2) != s)
    kernelFail("scaled_dot_product_attention: query " + shapeString(q.sizes()) + ", key " +
               shapeString(k.sizes()) + " and value " + shapeString(v.sizes()) + " do not fit");
  double scale = call.has("scale") ? call.real("scale") : 1 / std::sqrt(static_cast<double>(e));

  auto batchOf = [](const Tensor &t) { return Shape(t.sizes().begin(), t.sizes().end() - 2); };
  Shape batch = broadcastShapes(broadcastShapes(batchOf(q), batchOf(k)), batchOf(v));
  if (mask) {
    Shape maskBatch = mask->dim() > 2 ? batchOf(*mask) : Shape();
    batch = broadcastShapes(batch, maskBatch);
  }
  bool boolMask = mask && mask->dtype() == DType::Bool;
  if (mask && !boolMask && !isFloatingPoint(mask->dtype()))
    kernelFail("attn_mask must be bool or floating-point");
  Tensor qs = toF64(broadcastTo(q, concat(batch, {l, e})));
  Tensor ks = toF64(broadcastTo(k, concat(batch, {s, e})));
  Tensor vs = toF64(broadcastTo(v, concat(batch, {s, ev})));
  Tensor ms = mask ? toF64(broadcastTo(*mask, concat(batch, {l, s}))) : Tensor();

  Tensor out = Tensor::zeros(DType::Float64, concat(batch, {l, ev}));
  std::vector<double> scores(s), probs(s);
  int64_t batchCount = sizeProduct(batch, 0, batch.size());
  for (int64_t b = 0; b < batchCount; ++b) {
    const double *qb = rawData<double>(qs) + b * l * e;
    const double *kb = rawData<double>(ks) + b * s * e;
    const double *vb = rawData<double>(vs) + b * s * ev;
    const double *mb = mask ? rawData<double>(ms) + b * l * s : nullptr;
    double *ob = rawData<double>(out) + b * l * ev;
    for (int64_t i = 0; i < l; ++i) {
      for (int64_t j = 0; j < s; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < e; ++c)
          dot += qb[i * e + c] * kb[j * e + c];
        double bias = 0;
        if (causal && j > i)
          bias = -kInf;
        else if (mb)
          bias = boolMask ? (mb[i * s + j] != 0 ? 0 : -kInf) : mb[i * s + j];
        scores[j] = dot * scale + bias;
      }
      softmaxLine(scores.data(), probs.data(), s, 1, SoftmaxKind::SafeSoftmax);
      for (int64_t j = 0; j < s; ++j)
        for (int64_t c = 0; c < ev; ++c)
          ob[i * ev + c] += probs[j] * vb[j * ev + c];
    }
  }
  if (out.sizes() != q.sizes())
    return {out.to(q.dtype())};
  return {laidOutLike(out.to(q.dtype()), q)};
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

enum Reduction : int64_t { kReduceNone = 0, kReduceMean = 1, kReduceSum = 2 };

/// Applies a loss reduction to per-element losses of sizes `sizes`: none
/// keeps them, sum adds them, mean divides their sum by `meanDivisor`.
Tensor reduceLosses(const std::vector<double> &losses, const Shape &sizes, int64_t reduction,
                    double meanDivisor, DType dtype) {
  if (reduction == kReduceNone) {
    Tensor out = Tensor::zeros(DType::Float64, sizes);
    std::copy(losses.begin(), losses.end(), rawData<double>(out));
    return out.to(dtype);
  }
  double sum = std::accumulate(losses.begin(), losses.end(), 0.0);
  if (reduction == kReduceMean)
    return Tensor::scalar(dtype, sum / meanDivisor);
  if (reduction == kReduceSum)
    return Tensor::scalar(dtype, sum);
  kernelFail("invalid loss reduction " + std::to_string(reduction));
}

std::vector<Tensor> mseLoss(const OpCall &call) {
  Tensor self = call.tensor("self"), target = call.tensor("target");
  std::array<PromotionOperand, 2> operands = {operandOf(self), operandOf(target)};
  DType dtype = resultType(operands);
  if (!isFloatingPoint(dtype))
    kernelFail("mse_loss needs floating-point operands");
  Shape sizes = broadcastShapes(self.sizes(), target.sizes());
  std::vector<double> a = toF64(broadcastTo(self, sizes)).toDoubles();
  std::vector<double> b = toF64(broadcastTo(target, sizes)).toDoubles();
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = (a[i] - b[i]) * (a[i] - b[i]);
  return {reduceLosses(a, sizes, call.integer("reduction", kReduceMean),
                       static_cast<double>(a.size()), dtype)};
}

/// Scores over classes viewed as [N, C, D]: the class dimension is 1, or 0
/// for an input without a batch dimension (then N = 1). Each sample (n, d)
/// has C scores at stride D.
struct ClassScores {
  Tensor data; ///< float64, contiguous
  int64_t n, c, d;
  Shape sampleSizes; ///< the input's sizes without the class dimension

  const double *sample(int64_t i) const { return rawData<double>(data) + (i / d * c) * d + i % d; }
  int64_t samples() const { return n * d; }
};

/// Reads `self` as class scores; log_softmax over the classes if `logits`.
ClassScores classScores(const Tensor &self, bool logits) {
  requireFloating(self, "loss input");
  if (self.dim() < 1)
    kernelFail("loss input must have a class dimension");
  int64_t classDim = self.dim() == 1 ? 0 : 1;
  ClassScores s;
  s.data = logits ? softmaxF64(self, classDim, SoftmaxKind::LogSoftmax) : toF64(self);
  s.n = sizeProduct(self.sizes(), 0, classDim);
  s.c = self.size(classDim);
  s.d = sizeProduct(self.sizes(), classDim + 1, self.sizes().size());
  s.sampleSizes = self.sizes();
  s.sampleSizes.erase(s.sampleSizes.begin() + classDim);
  return s;
}

/// Per-sample losses of class-index targets against log-probabilities:
/// nll = -w[t] * logp[t], and smooth = -sum_c w[c] * logp[c] (for label
/// smoothing), both 0 where the target is ignore_index; and the sum of w[t]
/// over the targets not ignored, which a mean divides by.
struct ClassLosses {
  std::vector<double> nll, smooth;
  double totalWeight = 0;
};

ClassLosses classLosses(const ClassScores &s, const Tensor &target,
                        const std::vector<double> &weight, int64_t ignoreIndex) {
  if (isFloatingPoint(target.dtype()) || target.dtype() == DType::Bool)
    kernelFail("class targets must be integers");
  if (target.sizes() != s.sampleSizes)
    kernelFail("target shape " + shapeString(target.sizes()) +
               " does not match the input's samples " + shapeString(s.sampleSizes));
  std::vector<int64_t> classes = target.toInts();
  auto w = [&](int64_t c) { return weight.empty() ? 1.0 : weight[c]; };
  ClassLosses r;
  r.nll.assign(s.samples(), 0);
  r.smooth.assign(s.samples(), 0);
  for (int64_t i = 0; i < s.samples(); ++i) {
    int64_t t = classes[i];
    if (t == ignoreIndex)
      continue;
    if (t < 0 || t >= s.c)
      kernelFail("target " + std::to_string(t) + " is out of bounds for " + std::to_string(s.c) +
                 " classes");
    const double *logp = s.sample(i);
    r.nll[i] = -w(t) * logp[t * s.d];
    for (int64_t c = 0; c < s.c; ++c)
      r.smooth[i] -= w(c) * logp[c * s.d];
    r.totalWeight += w(t);
  }
  return r;
}

/// nll_loss_forward and nll_loss2d_forward: the loss of log-probabilities,
/// and the total weight of the targets not ignored (0 without reduction).
std::vector<Tensor> nllLossForward(const OpCall &call) {
  Tensor self = call.tensor("self");
  ClassScores s = classScores(self, false);
  int64_t reduction = call.integer("reduction", kReduceMean);
  ClassLosses losses = classLosses(s, call.tensor("target"), optionalParam(call, "weight", s.c),
                                   call.integer("ignore_index", -100));
  return {reduceLosses(losses.nll, s.sampleSizes, reduction, losses.totalWeight, self.dtype()),
          Tensor::scalar(self.dtype(), reduction == kReduceNone ? 0 : losses.totalWeight)};
}

std::vector<Tensor> nllLoss(const OpCall &call) { return {nllLossForward(call)[0]}; }

/// cross_entropy_loss with class-index targets (nll of log_softmax, mixed
/// with the smoothing term) or class-probability targets (of the input's
/// shape, smoothed toward uniform).
std::vector<Tensor> crossEntropyLoss(const OpCall &call) {
  Tensor self = call.tensor("self"), target = call.tensor("target");
  ClassScores s = classScores(self, true);
  std::vector<double> weight = optionalParam(call, "weight", s.c);
  int64_t reduction = call.integer("reduction", kReduceMean);
  double smoothing = call.real("label_smoothing", 0.0);
  if (smoothing < 0 || smoothing > 1)
    kernelFail("label_smoothing must be between 0 and 1");
  double uniform = s.c > 0 ? smoothing / static_cast<double>(s.c) : 0;

  if (!isFloatingPoint(target.dtype())) {
    ClassLosses l = classLosses(s, target, weight, call.integer("ignore_index", -100));
    for (size_t i = 0; i < l.nll.size(); ++i)
      l.nll[i] = (1 - smoothing) * l.nll[i] + uniform * l.smooth[i];
    return {reduceLosses(l.nll, s.sampleSizes, reduction, l.totalWeight, self.dtype())};
  }

  if (target.sizes() != self.sizes())
    kernelFail("class-probability targets must have the input's shape, got " +
               shapeString(target.sizes()) + " for " + shapeString(self.sizes()));
  ClassScores probs = classScores(target, false);
  std::vector<double> losses(s.samples(), 0);
  for (int64_t i = 0; i < s.samples(); ++i)
    for (int64_t c = 0; c < s.c; ++c) {
      double p = probs.sample(i)[c * s.d] * (1 - smoothing) + uniform;
      losses[i] -= (weight.empty() ? 1 : weight[c]) * s.sample(i)[c * s.d] * p;
    }
  return {reduceLosses(losses, s.sampleSizes, reduction, static_cast<double>(s.samples()),
                       self.dtype())};
}

const KernelEntry kKernels[] = {
    // Matrix products.
    {ops::aten_mm_default, mm},
    {ops::aten_bmm_default, bmm},
    {ops::aten_addmm_default, addmm},
    {ops::aten_baddbmm_default, baddbmm},
    {ops::aten_matmul_default, matmul},
    {ops::aten_linear_default, linear},
    // Convolution and pooling.
    {ops::aten_conv1d_default, convNdDefault},
    {ops::aten_conv2d_default, convNdDefault},
    {ops::aten_conv3d_default, convNdDefault},
    {ops::aten_conv1d_padding, convNdPaddingString},
    {ops::aten_conv2d_padding, convNdPaddingString},
    {ops::aten_conv3d_padding, convNdPaddingString},
    {ops::aten_convolution_default, convolution},
    {ops::aten_max_pool2d_default, maxPool2dValues},
    {ops::aten_max_pool2d_with_indices_default, maxPool2dWithIndices},
    {ops::aten_avg_pool2d_default, avgPool2d},
    {ops::aten_adaptive_avg_pool2d_default, adaptiveAvgPool2d},
    {ops::aten__adaptive_avg_pool2d_default, adaptiveAvgPool2d},
    // Normalization.
    {ops::aten_batch_norm_default, batchNormComposite, "running_mean,running_var"},
    {ops::aten_native_batch_norm_default, nativeBatchNorm, "running_mean,running_var"},
    {ops::aten__native_batch_norm_legit_default, nativeBatchNorm, "running_mean,running_var"},
    {ops::aten__native_batch_norm_legit_no_stats, nativeBatchNormLegitNoStats},
    {ops::aten__native_batch_norm_legit_no_training_default, nativeBatchNormLegitNoTraining},
    {ops::aten__native_batch_norm_legit_functional_default, nativeBatchNormLegitFunctional},
    {ops::aten_layer_norm_default, layerNormComposite},
    {ops::aten_native_layer_norm_default, layerNorm},
    {ops::aten_group_norm_default, groupNormComposite},
    {ops::aten_native_group_norm_default, nativeGroupNorm},
    // Softmax and attention.
    {ops::aten_softmax_int, softmax},
    {ops::aten_log_softmax_int, logSoftmax},
    {ops::aten__safe_softmax_default, safeSoftmax},
    {ops::aten__softmax_default, softmaxInternal},
    {ops::aten__log_softmax_default, logSoftmaxInternal},
    {ops::aten_scaled_dot_product_attention_default, scaledDotProductAttention},
    // Losses.
    {ops::aten_mse_loss_default, mseLoss},
    {ops::aten_cross_entropy_loss_default, crossEntropyLoss},
    {ops::aten_nll_loss_default, nllLoss},
    {ops::aten_nll_loss_nd_default, nllLoss},
    {ops::aten_nll_loss_forward_default, nllLossForward},
    {ops::aten_nll_loss2d_forward_default, nllLossForward},
};

} // namespace

void registerNNKernels(KernelRegistry &r) { r.add(kKernels); }

} // namespace gc
