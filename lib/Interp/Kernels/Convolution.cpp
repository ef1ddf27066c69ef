//===- Convolution.cpp - Convolution and pooling kernels --------------------===//
//
// Convolution (N-d, transposed, grouped) and 2-d pooling, on raw float64
// arrays (NNCommon.h).
//
//===----------------------------------------------------------------------===//
#include "NNCommon.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

namespace gc {
namespace {

using namespace nn;

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

/// gc.qconvolution: the convolution of the integers, then int8Result.
std::vector<Tensor> quantizedConvolution(const OpCall &call) {
  Tensor weight = int8Weight(call);
  size_t spatial = static_cast<size_t>(std::max<int64_t>(weight.dim() - 2, 0));
  ConvPadding padding;
  padding.amounts = intsOfLength(call, "padding", spatial, 0);
  Tensor acc = convolve(int8Input(call), weight, std::nullopt,
                        intsOfLength(call, "stride", spatial, 1), padding,
                        intsOfLength(call, "dilation", spatial, 1), call.integer("groups", 1));
  return {int8Result(call, acc, 1)};
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

const KernelEntry kKernels[] = {
    {ops::aten_conv1d_default, convNdDefault},
    {ops::aten_conv2d_default, convNdDefault},
    {ops::aten_conv3d_default, convNdDefault},
    {ops::aten_conv1d_padding, convNdPaddingString},
    {ops::aten_conv2d_padding, convNdPaddingString},
    {ops::aten_conv3d_padding, convNdPaddingString},
    {ops::aten_convolution_default, convolution},
    {ops::gc_qconvolution_default, quantizedConvolution},
    {ops::aten_max_pool2d_default, maxPool2dValues},
    {ops::aten_max_pool2d_with_indices_default, maxPool2dWithIndices},
    {ops::aten_avg_pool2d_default, avgPool2d},
    {ops::aten_adaptive_avg_pool2d_default, adaptiveAvgPool2d},
    {ops::aten__adaptive_avg_pool2d_default, adaptiveAvgPool2d},
};

} // namespace

void registerConvolutionKernels(KernelRegistry &r) { r.add(kKernels); }

} // namespace gc
