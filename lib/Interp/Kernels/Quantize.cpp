//===- Quantize.cpp - Reference kernels of quantize and dequantize --------===//
//
// quantized_decomposed's affine maps between float32 and a small integer
// dtype, with torch's float32 arithmetic: quantize computes
// clamp(round(x * (1 / scale)) + zero_point) with 1 / scale in double
// rounded to float32 and round half to even; dequantize computes
// (q - zero_point) * scale in float32 (per channel: q - zero_point in
// int64 first).
//
//===----------------------------------------------------------------------===//
#include "gc/IR/Quantize.h"
#include "NNCommon.h"
#include "gc/Interp/Kernel.h"

#include <algorithm>
#include <cmath>

namespace gc {

namespace {

using Results = std::vector<Tensor>;

/// The scheme's quantized dtype, checked against its range.
DType checkedScheme(const OpCall &call) {
  DType dtype = *call.dtype("dtype");
  int64_t lo = call.integer("quant_min"), hi = call.integer("quant_max");
  if (std::optional<std::string> why = quantSchemeError(dtype, lo, hi))
    kernelFail(*why);
  return dtype;
}

/// A per-tensor parameter: a number, or the one element of a tensor (the
/// .tensor overloads).
double perTensor(const OpCall &call, std::string_view name) {
  const NamedArg *given = call.find(name);
  if (!given || given->value.kind != ArgKind::Tensor)
    return call.real(name);
  Tensor t = call.tensor(name);
  if (t.numel() != 1)
    kernelFail("'" + std::string(name) + "' must have one element, not " +
               std::to_string(t.numel()));
  return t.toDoubles()[0];
}

/// The float32 input quantize reads (float16 and bfloat16 widen to it).
Tensor floatInput(const OpCall &call) {
  Tensor x = call.tensor("input");
  if (isHalfPrecision(x.dtype()))
    return x.to(DType::Float32);
  if (x.dtype() != DType::Float32)
    kernelFail("quantize expects a float32 input, got " + std::string(dtypeName(x.dtype())));
  return x;
}

/// The quantized input dequantize reads, which must be of `dtype`.
Tensor quantizedInput(const OpCall &call, DType dtype) {
  Tensor q = call.tensor("input");
  if (q.dtype() != dtype)
    kernelFail("dequantize expects an input of dtype " + std::string(dtypeName(dtype)) +
               ", got " + std::string(dtypeName(q.dtype())));
  return q;
}

/// For each element in row-major order, its index along `axis` (the channel
/// whose parameters apply).
std::vector<int64_t> channelOf(const Tensor &t, int64_t axis) {
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < t.dim(); ++d)
    inner *= t.size(d);
  std::vector<int64_t> c(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < c.size(); ++i)
    c[i] = static_cast<int64_t>(i) / inner % t.size(axis);
  return c;
}

/// The channel parameters `name` ([C], C the size of the axis), as doubles.
std::vector<double> perChannel(const OpCall &call, std::string_view name, const Tensor &x,
                               int64_t axis) {
  Tensor p = call.tensor(name);
  if (p.dim() != 1 || p.size(0) != x.size(axis))
    kernelFail("'" + std::string(name) + "' must have " + std::to_string(x.size(axis)) +
               " elements, one per index of axis " + std::to_string(axis));
  return p.toDoubles();
}

float quantizeOne(float x, float invScale, double zeroPoint, int64_t lo, int64_t hi) {
  float shifted = std::nearbyint(x * invScale) + static_cast<float>(zeroPoint);
  return std::clamp(shifted, static_cast<float>(lo), static_cast<float>(hi));
}

Results quantizePerTensor(const OpCall &call) {
  DType dtype = checkedScheme(call);
  Tensor x = floatInput(call);
  auto invScale = static_cast<float>(1.0 / perTensor(call, "scale"));
  double zeroPoint = perTensor(call, "zero_point");
  int64_t lo = call.integer("quant_min"), hi = call.integer("quant_max");
  std::vector<double> in = x.toDoubles();
  Tensor out = Tensor::zeros(dtype, x.sizes());
  for (size_t i = 0; i < in.size(); ++i)
    out.storeInt(static_cast<int64_t>(i),
                 static_cast<int64_t>(
                     quantizeOne(static_cast<float>(in[i]), invScale, zeroPoint, lo, hi)));
  return {out};
}

Results quantizePerChannel(const OpCall &call) {
  DType dtype = checkedScheme(call);
  Tensor x = floatInput(call);
  int64_t axis = wrapDim(call.integer("axis"), x.dim());
  std::vector<double> scales = perChannel(call, "scales", x, axis);
  std::vector<double> zeroPoints = perChannel(call, "zero_points", x, axis);
  int64_t lo = call.integer("quant_min"), hi = call.integer("quant_max");
  std::vector<int64_t> channel = channelOf(x, axis);
  std::vector<double> in = x.toDoubles();
  Tensor out = Tensor::zeros(dtype, x.sizes());
  for (size_t i = 0; i < in.size(); ++i) {
    size_t c = static_cast<size_t>(channel[i]);
    // torch divides 1 by the float32 scales tensor: a float32 reciprocal.
    float invScale = 1.0f / static_cast<float>(scales[c]);
    out.storeInt(static_cast<int64_t>(i),
                 static_cast<int64_t>(quantizeOne(static_cast<float>(in[i]), invScale,
                                                  zeroPoints[c], lo, hi)));
  }
  return {out};
}

DType outDType(const OpCall &call) { return call.dtype("out_dtype").value_or(DType::Float32); }

Results dequantizePerTensor(const OpCall &call) {
  Tensor q = quantizedInput(call, checkedScheme(call));
  auto scale = static_cast<float>(perTensor(call, "scale"));
  auto zeroPoint = static_cast<float>(perTensor(call, "zero_point"));
  std::vector<int64_t> in = q.toInts();
  Tensor out = Tensor::zeros(DType::Float32, q.sizes());
  for (size_t i = 0; i < in.size(); ++i)
    out.storeDouble(static_cast<int64_t>(i), (static_cast<float>(in[i]) - zeroPoint) * scale);
  return {out.to(outDType(call))};
}

Results dequantizePerChannel(const OpCall &call) {
  Tensor q = quantizedInput(call, checkedScheme(call));
  int64_t axis = wrapDim(call.integer("axis"), q.dim());
  std::vector<double> scales = perChannel(call, "scales", q, axis);
  std::vector<double> zeroPoints(scales.size(), 0.0);
  if (call.optTensor("zero_points"))
    zeroPoints = perChannel(call, "zero_points", q, axis);
  std::vector<int64_t> channel = channelOf(q, axis);
  std::vector<int64_t> in = q.toInts();
  Tensor out = Tensor::zeros(DType::Float32, q.sizes());
  for (size_t i = 0; i < in.size(); ++i) {
    size_t c = static_cast<size_t>(channel[i]);
    auto shifted = in[i] - static_cast<int64_t>(zeroPoints[c]);
    out.storeDouble(static_cast<int64_t>(i),
                    static_cast<float>(shifted) * static_cast<float>(scales[c]));
  }
  return {out.to(outDType(call))};
}

} // namespace

Tensor nn::int8Input(const OpCall &call) {
  Tensor x = call.tensor("input");
  if (x.dtype() != DType::UInt8 && x.dtype() != DType::Int8)
    kernelFail("an int8 call expects a uint8 or int8 input, got " +
               std::string(dtypeName(x.dtype())));
  std::vector<double> v = x.toDoubles();
  double zeroPoint = static_cast<double>(call.integer("input_zero_point"));
  Tensor out = Tensor::zeros(DType::Float64, x.sizes());
  for (size_t i = 0; i < v.size(); ++i)
    out.storeDouble(static_cast<int64_t>(i), v[i] - zeroPoint);
  return out;
}

Tensor nn::int8Weight(const OpCall &call) {
  Tensor w = call.tensor("weight");
  if (w.dtype() != DType::Int8)
    kernelFail("an int8 call expects int8 weights, got " + std::string(dtypeName(w.dtype())));
  return w.to(DType::Float64);
}

Tensor nn::int8Result(const OpCall &call, const Tensor &acc, int64_t channelDim) {
  const NamedArg *given = call.find("weight_scales");
  std::vector<double> scales = given ? given->value.floats : std::vector<double>{};
  int64_t channels = acc.size(channelDim);
  if (scales.size() == 1)
    scales.assign(static_cast<size_t>(channels), scales[0]);
  if (static_cast<int64_t>(scales.size()) != channels)
    kernelFail("weight_scales must have " + std::to_string(channels) +
               " entries, one per output channel");
  std::vector<double> bias = optionalParam(call, "bias", channels);
  double inputScale = call.real("input_scale");
  bool relu = call.boolean("relu", false);
  DType dtype = call.dtype("output_dtype").value_or(DType::Float32);
  // The requantization multiplies by the float32 reciprocal, as quantize.
  auto invScale = static_cast<float>(1.0 / call.real("output_scale", 1.0));
  double zeroPoint = static_cast<double>(call.integer("output_zero_point", 0));
  int64_t lo = dtype == DType::UInt8 ? 0 : -128, hi = dtype == DType::UInt8 ? 255 : 127;
  std::vector<int64_t> channel = channelOf(acc, channelDim);
  std::vector<double> in = acc.toDoubles();
  Tensor out = Tensor::zeros(dtype, acc.sizes());
  for (size_t i = 0; i < in.size(); ++i) {
    auto c = static_cast<size_t>(channel[i]);
    auto y = static_cast<float>(in[i] * (inputScale * scales[c]) + (bias.empty() ? 0 : bias[c]));
    if (relu)
      y = std::max(y, 0.0f);
    if (dtype == DType::Float32)
      out.storeDouble(static_cast<int64_t>(i), y);
    else
      out.storeInt(static_cast<int64_t>(i),
                   static_cast<int64_t>(quantizeOne(y, invScale, zeroPoint, lo, hi)));
  }
  return out;
}

namespace {

const KernelEntry kQuantizeKernels[] = {
    {ops::quantized_decomposed_dequantize_per_channel_default, dequantizePerChannel},
    {ops::quantized_decomposed_dequantize_per_tensor_default, dequantizePerTensor},
    {ops::quantized_decomposed_dequantize_per_tensor_tensor, dequantizePerTensor},
    {ops::quantized_decomposed_quantize_per_channel_default, quantizePerChannel},
    {ops::quantized_decomposed_quantize_per_tensor_default, quantizePerTensor},
    {ops::quantized_decomposed_quantize_per_tensor_tensor, quantizePerTensor},
};

} // namespace

void registerQuantizeKernels(KernelRegistry &r) { r.add(kQuantizeKernels); }

} // namespace gc
