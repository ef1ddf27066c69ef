//===- Quantize.cpp - Decompositions of quantize and dequantize -----------===//
//
// quantized_decomposed's affine maps as core pointwise ops with torch's
// float32 arithmetic (lib/Interp/Kernels/Quantize.cpp states it), so a
// quantized program runs correctly through every stage even where no pass
// fuses the maps into an integer library call. gc-opt's constant folding
// turns the dequantize of a frozen int8 weight into a float32 weight.
//
//===----------------------------------------------------------------------===//
#include "gc/IR/Quantize.h"
#include "gc/Ops/Emit.h"

namespace gc {

namespace {

using namespace decompose;

/// The scheme's quantized dtype, checked against its range.
DType checkedScheme(RewriteContext &ctx) {
  DType dtype = *ctx.dtype("dtype");
  if (std::optional<std::string> why =
          quantSchemeError(dtype, ctx.integer("quant_min"), ctx.integer("quant_max")))
    rewriteFail(*why);
  return dtype;
}

/// The one element of a .tensor overload's parameter `name`, as a 0-dim
/// tensor of `dtype`.
Value *oneElement(RewriteContext &ctx, Emit &e, std::string_view name, DType dtype) {
  Value *t = ctx.value(name);
  if (sizeProduct(e.syms(), sizesOf(t)) != e.syms().constant(1))
    rewriteFail("'" + std::string(name) + "' must have one element");
  return e.cast(e.reshape(t, Sizes{}), dtype);
}

/// A per-tensor parameter as an operand: the number, or the one element of
/// the tensor of a .tensor overload.
ArgValue perTensor(RewriteContext &ctx, Emit &e, std::string_view name, DType dtype) {
  if (!isTensorArg(ctx, name))
    return number(ctx, name).arg();
  return oneElement(ctx, e, name, dtype);
}

/// 1 / scale rounded to float32, the factor quantize multiplies by: torch
/// takes the reciprocal of the Python float (double) scale.
ArgValue inverseScale(RewriteContext &ctx, Emit &e) {
  if (!isTensorArg(ctx, "scale"))
    return 1.0 / ctx.real("scale");
  Value *scale = oneElement(ctx, e, "scale", DType::Float64);
  return e.cast(e.unary(ops::aten_reciprocal_default, scale), DType::Float32);
}

Value *floatInput(RewriteContext &ctx, Emit &e) {
  Value *x = ctx.value("input");
  DType t = typeOf(x).dtype;
  if (isHalfPrecision(t))
    return e.cast(x, DType::Float32);
  if (t != DType::Float32)
    rewriteFail("quantize expects a float32 input, got " + std::string(dtypeName(t)));
  return x;
}

Value *quantizedInput(RewriteContext &ctx, DType dtype) {
  Value *q = ctx.value("input");
  if (typeOf(q).dtype != dtype)
    rewriteFail("dequantize expects an input of dtype " + std::string(dtypeName(dtype)) +
                ", got " + std::string(dtypeName(typeOf(q).dtype)));
  return q;
}

/// clamp(round(scaled) + zeroPoint, quant_min, quant_max) as `dtype`.
Value *roundAndClamp(RewriteContext &ctx, Emit &e, Value *scaled, ArgValue zeroPoint,
                     DType dtype) {
  Value *shifted = e.add(e.unary(ops::aten_round_default, scaled), std::move(zeroPoint));
  Value *lo = e.scalar(Number::integer(ctx.integer("quant_min")), DType::Float32);
  Value *hi = e.scalar(Number::integer(ctx.integer("quant_max")), DType::Float32);
  return e.cast(e.minimum(e.maximum(shifted, lo), hi), dtype);
}

/// A per-channel parameter shaped to broadcast along the axis.
Value *perChannel(RewriteContext &ctx, Emit &e, std::string_view name, Value *x, int64_t axis) {
  Value *p = ctx.value(name);
  if (rankOf(p) != 1 || sizesOf(p)[0] != sizesOf(x)[static_cast<size_t>(axis)])
    rewriteFail("'" + std::string(name) + "' must have one element per index of axis " +
                std::to_string(axis));
  return e.alongDim(p, axis, rankOf(x));
}

int64_t axisOf(RewriteContext &ctx, Value *x) {
  int64_t rank = rankOf(x), axis = ctx.integer("axis");
  if (axis < -rank || axis >= rank)
    rewriteFail("axis " + std::to_string(axis) + " is out of range for a tensor of rank " +
                std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

DType outDType(RewriteContext &ctx) { return ctx.dtype("out_dtype").value_or(DType::Float32); }

Results decomposeQuantizePerTensor(RewriteContext &ctx) {
  Emit e(ctx);
  DType dtype = checkedScheme(ctx);
  Value *x = floatInput(ctx, e);
  Value *scaled = e.mul(x, inverseScale(ctx, e));
  return finish(ctx, {roundAndClamp(ctx, e, scaled, perTensor(ctx, e, "zero_point",
                                                              DType::Float32), dtype)});
}

Results decomposeQuantizePerChannel(RewriteContext &ctx) {
  Emit e(ctx);
  DType dtype = checkedScheme(ctx);
  Value *x = floatInput(ctx, e);
  int64_t axis = axisOf(ctx, x);
  // torch divides 1 by the float32 scales tensor: a float32 reciprocal.
  Value *inv = e.unary(ops::aten_reciprocal_default,
                       e.cast(perChannel(ctx, e, "scales", x, axis), DType::Float32));
  Value *zeroPoints = perChannel(ctx, e, "zero_points", x, axis);
  return finish(ctx, {roundAndClamp(ctx, e, e.mul(x, inv), zeroPoints, dtype)});
}

Results decomposeDequantizePerTensor(RewriteContext &ctx) {
  Emit e(ctx);
  Value *q = e.cast(quantizedInput(ctx, checkedScheme(ctx)), DType::Float32);
  Value *shifted = e.sub(q, perTensor(ctx, e, "zero_point", DType::Float32));
  Value *x = e.mul(shifted, perTensor(ctx, e, "scale", DType::Float32));
  return finish(ctx, {e.cast(x, outDType(ctx))});
}

Results decomposeDequantizePerChannel(RewriteContext &ctx) {
  Emit e(ctx);
  Value *q = quantizedInput(ctx, checkedScheme(ctx));
  int64_t axis = axisOf(ctx, q);
  // torch subtracts the int64 zero points in int64, then scales in float32.
  if (std::optional<Value *> zeroPoints = ctx.optValue("zero_points"); zeroPoints && *zeroPoints)
    q = e.sub(e.cast(q, DType::Int64), perChannel(ctx, e, "zero_points", q, axis));
  Value *scales = e.cast(perChannel(ctx, e, "scales", q, axis), DType::Float32);
  Value *x = e.mul(e.cast(q, DType::Float32), scales);
  return finish(ctx, {e.cast(x, outDType(ctx))});
}

const DecompositionEntry kQuantizeDecompositions[] = {
    {ops::quantized_decomposed_dequantize_per_channel_default, decomposeDequantizePerChannel},
    {ops::quantized_decomposed_dequantize_per_tensor_default, decomposeDequantizePerTensor},
    {ops::quantized_decomposed_dequantize_per_tensor_tensor, decomposeDequantizePerTensor},
    {ops::quantized_decomposed_quantize_per_channel_default, decomposeQuantizePerChannel},
    {ops::quantized_decomposed_quantize_per_tensor_default, decomposeQuantizePerTensor},
    {ops::quantized_decomposed_quantize_per_tensor_tensor, decomposeQuantizePerTensor},
};

} // namespace

void registerQuantizeDecompositions(DecompositionRegistry &r) { r.add(kQuantizeDecompositions); }

} // namespace gc
