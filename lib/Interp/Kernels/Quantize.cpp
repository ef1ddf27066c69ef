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
