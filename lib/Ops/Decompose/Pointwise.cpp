//===- Pointwise.cpp - Decompositions of pointwise ops --------------------===//
//
// Activations, clamps, Scalar overloads (rewritten to the Tensor overloads
// with a number or a 0-dim tensor), and the pointwise ops that are formulas
// of core ones.
//
//===----------------------------------------------------------------------===//
#include "Emit.h"

#include <cmath>
#include <limits>

namespace gc {

namespace {

using namespace decompose;

Value *self(RewriteContext &ctx) { return ctx.value("self"); }

/// `name` in the dtype torch computes the op's formula in: float32 for
/// float16, bfloat16 and integer results, else the result's own dtype.
/// finish() casts the result back.
Value *inComputeDType(RewriteContext &ctx, Emit &e, std::string_view name = "self") {
  return e.cast(ctx.value(name), computeDType(ctx.resultType().dtype));
}

/// A clamp bound that may be a tensor or a number, as a tensor.
Value *bound(RewriteContext &ctx, Emit &e, std::string_view name, DType selfType) {
  if (isTensorArg(ctx, name))
    return ctx.value(name);
  return e.wrapNumber(number(ctx, name), selfType);
}

/// min(max(x, lo), hi): torch's clamp, NaN in x stays NaN and lo > hi gives
/// hi. Either bound may be absent.
Value *clamp(Emit &e, Value *x, Value *lo, Value *hi) {
  if (lo)
    x = e.maximum(x, lo);
  if (hi)
    x = e.minimum(x, hi);
  return x;
}

/// clamp, clamp.Tensor, clamp_min(.Tensor), clamp_max(.Tensor), and
/// hardtanh with its own argument names.
Results clampBetween(RewriteContext &ctx, std::string_view minName, std::string_view maxName) {
  Emit e(ctx);
  Value *x = self(ctx);
  DType t = typeOf(x).dtype;
  Value *lo = ctx.has(minName) ? bound(ctx, e, minName, t) : nullptr;
  Value *hi = ctx.has(maxName) ? bound(ctx, e, maxName, t) : nullptr;
  return finish(ctx, {clamp(e, x, lo, hi)});
}

Results decomposeClamp(RewriteContext &ctx) { return clampBetween(ctx, "min", "max"); }
Results decomposeHardtanh(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  DType t = typeOf(x).dtype;
  Value *lo = e.wrapNumber(optNumber(ctx, "min_val").value_or(Number::integer(-1)), t);
  Value *hi = e.wrapNumber(optNumber(ctx, "max_val").value_or(Number::integer(1)), t);
  return finish(ctx, {clamp(e, x, lo, hi)});
}

Results decomposeRelu(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  return finish(ctx, {e.maximum(x, e.scalar(Number::integer(0), typeOf(x).dtype))});
}

Results decomposeLeakyRelu(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Number slope = optNumber(ctx, "negative_slope").value_or(Number::real(0.01));
  Value *positive = e.compare(Cmp::Gt, x, Number::integer(0));
  return finish(ctx, {e.where(positive, x, e.mul(x, slope.arg()))});
}

/// softplus(x) = log(1 + exp(beta x)) / beta, and x itself where beta x
/// passes the threshold (torch's guard against overflow).
Value *softplus(Emit &e, Value *x, Number beta, Number threshold) {
  Value *scaled = e.mul(x, beta.arg());
  Value *soft = e.div(e.unary(ops::aten_log1p_default, e.unary(ops::aten_exp_default, scaled)),
                      beta.arg());
  return e.where(e.compare(Cmp::Gt, scaled, threshold), x, soft);
}

Results decomposeSoftplus(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = inComputeDType(ctx, e);
  return finish(ctx, {softplus(e, x, optNumber(ctx, "beta").value_or(Number::integer(1)),
                               optNumber(ctx, "threshold").value_or(Number::integer(20)))});
}

/// mish(x) = x tanh(softplus(x)).
Results decomposeMish(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = inComputeDType(ctx, e);
  Value *soft = softplus(e, x, Number::integer(1), Number::integer(20));
  return finish(ctx, {e.mul(x, e.unary(ops::aten_tanh_default, soft))});
}

/// elu(x) = scale x for x > 0, else scale alpha (exp(input_scale x) - 1).
Results decomposeElu(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = inComputeDType(ctx, e);
  Number alpha = optNumber(ctx, "alpha").value_or(Number::integer(1));
  Number scale = optNumber(ctx, "scale").value_or(Number::integer(1));
  Number inputScale = optNumber(ctx, "input_scale").value_or(Number::integer(1));
  Value *negative = e.mul(e.unary(ops::aten_expm1_default, e.mul(x, inputScale.arg())),
                          alpha.value() * scale.value());
  Value *positive = e.mul(x, scale.arg());
  return finish(ctx, {e.where(e.compare(Cmp::Gt, x, Number::integer(0)), positive, negative)});
}

/// isinf: |x| == inf; integers are never infinite.
Results decomposeIsinf(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  if (!isFloatingPoint(typeOf(x).dtype))
    return finish(ctx, {e.fullLike(x, Number::integer(0), DType::Bool)});
  return finish(ctx, {e.compare(Cmp::Eq, e.unary(ops::aten_abs_default, x),
                                Number::real(std::numeric_limits<double>::infinity()))});
}

/// logical_xor: the truth values differ.
Results decomposeLogicalXor(RewriteContext &ctx) {
  Emit e(ctx);
  Value *a = e.cast(self(ctx), DType::Bool), *b = e.cast(ctx.value("other"), DType::Bool);
  return finish(ctx, {e.compare(Cmp::Ne, a, b)});
}

/// bitwise_xor: (a | b) & ~(a & b) in the promoted dtype; for bool, a != b.
Results decomposeBitwiseXor(RewriteContext &ctx) {
  Emit e(ctx);
  DType t = ctx.resultType().dtype;
  Value *a = e.cast(self(ctx), t);
  Value *b = isTensorArg(ctx, "other") ? e.cast(ctx.value("other"), t)
                                       : e.wrapNumber(number(ctx, "other"), t);
  if (t == DType::Bool)
    return finish(ctx, {e.compare(Cmp::Ne, a, b)});
  Value *either = e.op(ops::aten_bitwise_or_Tensor, {{"self", a}, {"other", b}});
  Value *both = e.op(ops::aten_bitwise_and_Tensor, {{"self", a}, {"other", b}});
  Value *notBoth = e.unary(ops::aten_bitwise_not_default, both);
  return finish(ctx, {e.op(ops::aten_bitwise_and_Tensor, {{"self", either}, {"other", notBoth}})});
}

Results decomposeSilu(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = inComputeDType(ctx, e);
  return finish(ctx, {e.mul(x, e.unary(ops::aten_sigmoid_default, x))});
}

Results decomposeGelu(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = inComputeDType(ctx, e);
  std::string approximate = ctx.string("approximate", "none");
  Value *inner;
  if (approximate == "none") {
    // x/2 * (1 + erf(x / sqrt(2)))
    inner = e.unary(ops::aten_erf_default, e.mul(x, M_SQRT1_2));
  } else if (approximate == "tanh") {
    // x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
    Value *cube = e.mul(e.mul(x, x), x);
    Value *poly = e.add(x, e.mul(cube, 0.044715));
    inner = e.unary(ops::aten_tanh_default, e.mul(poly, M_2_SQRTPI * M_SQRT1_2));
  } else {
    rewriteFail("gelu: unknown approximate='" + approximate + "'");
  }
  return finish(ctx, {e.mul(e.mul(x, 0.5), e.add(inner, 1.0))});
}

/// min(max(x + 3, 0), 6), the common part of hardsigmoid and hardswish.
Value *relu6OfShifted(Emit &e, Value *x) {
  DType t = typeOf(x).dtype;
  return clamp(e, e.add(x, 3.0), e.scalar(Number::integer(0), t), e.scalar(Number::integer(6), t));
}

Results decomposeHardsigmoid(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {e.div(relu6OfShifted(e, inComputeDType(ctx, e)), 6.0)});
}

Results decomposeHardswish(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = inComputeDType(ctx, e);
  return finish(ctx, {e.div(e.mul(x, relu6OfShifted(e, x)), 6.0)});
}

Results decomposeSquare(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  return finish(ctx, {e.mul(x, x)});
}

/// log2 and log10: the natural log over ln(base).
Results logBase(RewriteContext &ctx, double lnBase) {
  Emit e(ctx);
  Value *x = inComputeDType(ctx, e);
  return finish(ctx, {e.div(e.unary(ops::aten_log_default, x), lnBase)});
}
Results decomposeLog2(RewriteContext &ctx) { return logBase(ctx, M_LN2); }
Results decomposeLog10(RewriteContext &ctx) { return logBase(ctx, M_LN10); }

/// torch's lerp: start + w (end - start) for |w| < 1/2, else
/// end - (end - start)(1 - w), which is exact at w = 1.
Results decomposeLerp(RewriteContext &ctx) {
  Emit e(ctx);
  Value *start = inComputeDType(ctx, e), *end = inComputeDType(ctx, e, "end");
  Value *diff = e.sub(end, start);
  if (!isTensorArg(ctx, "weight")) {
    Number w = number(ctx, "weight");
    if (std::abs(w.value()) < 0.5)
      return finish(ctx, {e.add(start, e.mul(diff, w.arg()))});
    return finish(ctx, {e.sub(end, e.mul(diff, 1.0 - w.value()))});
  }
  Value *w = ctx.value("weight");
  Value *low = e.compare(Cmp::Lt, e.unary(ops::aten_abs_default, w), Number::real(0.5));
  Value *fromStart = e.add(start, e.mul(diff, w));
  Value *fromEnd = e.sub(end, e.mul(diff, e.sub(e.scalar(Number::integer(1), typeOf(w).dtype), w)));
  return finish(ctx, {e.where(low, fromStart, fromEnd)});
}

Results decomposeMaskedFill(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  DType t = typeOf(x).dtype;
  Value *fill =
      isTensorArg(ctx, "value") ? e.cast(ctx.value("value"), t) : e.scalar(number(ctx, "value"), t);
  return finish(ctx, {e.where(ctx.value("mask"), fill, x)});
}

/// Copies the call to `op` with the same arguments: Scalar overloads whose
/// Tensor overload takes a number too, and aliases such as __and__.
Results renamed(RewriteContext &ctx, OpId op) {
  std::vector<std::pair<std::string, ArgValue>> args;
  for (const NamedArg &a : ctx.node().args())
    args.emplace_back(a.name, ctx.passThrough(a.name));
  return finish(ctx, {Emit(ctx).op(op, std::move(args))});
}
Results decomposeAddScalar(RewriteContext &ctx) { return renamed(ctx, ops::aten_add_Tensor); }
Results decomposeSubScalar(RewriteContext &ctx) { return renamed(ctx, ops::aten_sub_Tensor); }
Results decomposeMulScalar(RewriteContext &ctx) { return renamed(ctx, ops::aten_mul_Tensor); }
Results decomposeDivScalar(RewriteContext &ctx) { return renamed(ctx, ops::aten_div_Tensor); }
Results decomposeAnd(RewriteContext &ctx) { return renamed(ctx, ops::aten_bitwise_and_Tensor); }
Results decomposeOr(RewriteContext &ctx) { return renamed(ctx, ops::aten_bitwise_or_Tensor); }
Results decomposeMaxOther(RewriteContext &ctx) { return renamed(ctx, ops::aten_maximum_default); }
Results decomposeMinOther(RewriteContext &ctx) { return renamed(ctx, ops::aten_minimum_default); }

/// A binary Scalar overload whose Tensor overload needs a tensor `other`.
Results withWrappedOther(RewriteContext &ctx, OpId op) {
  Emit e(ctx);
  Value *x = self(ctx);
  std::vector<std::pair<std::string, ArgValue>> args = {
      {"self", x}, {"other", e.wrapNumber(number(ctx, "other"), typeOf(x).dtype)}};
  for (const NamedArg &a : ctx.node().args())
    if (a.name != "self" && a.name != "other")
      args.emplace_back(a.name, ctx.passThrough(a.name));
  return finish(ctx, {e.op(op, std::move(args))});
}
Results decomposeDivScalarMode(RewriteContext &ctx) {
  return withWrappedOther(ctx, ops::aten_div_Tensor_mode);
}
Results decomposeFmodScalar(RewriteContext &ctx) {
  return withWrappedOther(ctx, ops::aten_fmod_Tensor);
}
Results decomposeRemainderScalar(RewriteContext &ctx) {
  return withWrappedOther(ctx, ops::aten_remainder_Tensor);
}
Results decomposeBitwiseAndScalar(RewriteContext &ctx) {
  return withWrappedOther(ctx, ops::aten_bitwise_and_Tensor);
}
Results decomposeBitwiseOrScalar(RewriteContext &ctx) {
  return withWrappedOther(ctx, ops::aten_bitwise_or_Tensor);
}

Results decomposePowScalar(RewriteContext &ctx) {
  Emit e(ctx);
  Value *exponent = ctx.value("exponent");
  Value *base = e.wrapNumber(number(ctx, "self"), typeOf(exponent).dtype);
  return finish(ctx, {e.op(ops::aten_pow_Tensor_Tensor, {{"self", base}, {"exponent", exponent}})});
}

/// rsub: other - alpha * self.
Results decomposeRsub(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  ArgValue alpha = ctx.has("alpha") ? ctx.passThrough("alpha") : ArgValue(int64_t(1));
  Value *other = isTensorArg(ctx, "other") ? ctx.value("other")
                                           : e.wrapNumber(number(ctx, "other"), typeOf(x).dtype);
  return finish(ctx, {e.op(ops::aten_sub_Tensor, {{"self", other}, {"other", x}, {"alpha", alpha}})});
}

/// where with number branches: each number becomes a 0-dim tensor that
/// promotes with the other branch as the number would.
Results decomposeWhereScalar(RewriteContext &ctx) {
  Emit e(ctx);
  DType result = ctx.resultType().dtype;
  auto branch = [&](std::string_view name) {
    if (isTensorArg(ctx, name))
      return ctx.value(name);
    return e.scalar(number(ctx, name), result);
  };
  return finish(ctx, {e.where(ctx.value("condition"), branch("self"), branch("other"))});
}

const DecompositionEntry kPointwiseDecompositions[] = {
    {ops::aten___and___Tensor, decomposeAnd},
    {ops::aten___or___Tensor, decomposeOr},
    {ops::aten_add_Scalar, decomposeAddScalar},
    {ops::aten_bitwise_and_Scalar, decomposeBitwiseAndScalar},
    {ops::aten_bitwise_or_Scalar, decomposeBitwiseOrScalar},
    {ops::aten_bitwise_xor_Tensor, decomposeBitwiseXor},
    {ops::aten_clamp_Tensor, decomposeClamp},
    {ops::aten_clamp_default, decomposeClamp},
    {ops::aten_clamp_max_Tensor, decomposeClamp},
    {ops::aten_clamp_max_default, decomposeClamp},
    {ops::aten_clamp_min_Tensor, decomposeClamp},
    {ops::aten_clamp_min_default, decomposeClamp},
    {ops::aten_div_Scalar, decomposeDivScalar},
    {ops::aten_max_other, decomposeMaxOther},
    {ops::aten_min_other, decomposeMinOther},
    {ops::aten_div_Scalar_mode, decomposeDivScalarMode},
    {ops::aten_elu_default, decomposeElu},
    {ops::aten_fmod_Scalar, decomposeFmodScalar},
    {ops::aten_gelu_default, decomposeGelu},
    {ops::aten_hardsigmoid_default, decomposeHardsigmoid},
    {ops::aten_hardswish_default, decomposeHardswish},
    {ops::aten_hardtanh_default, decomposeHardtanh},
    {ops::aten_isinf_default, decomposeIsinf},
    {ops::aten_leaky_relu_default, decomposeLeakyRelu},
    {ops::aten_lerp_Scalar, decomposeLerp},
    {ops::aten_lerp_Tensor, decomposeLerp},
    {ops::aten_log10_default, decomposeLog10},
    {ops::aten_log2_default, decomposeLog2},
    {ops::aten_logical_xor_default, decomposeLogicalXor},
    {ops::aten_masked_fill_Scalar, decomposeMaskedFill},
    {ops::aten_masked_fill_Tensor, decomposeMaskedFill},
    {ops::aten_mish_default, decomposeMish},
    {ops::aten_mul_Scalar, decomposeMulScalar},
    {ops::aten_pow_Scalar, decomposePowScalar},
    {ops::aten_relu_default, decomposeRelu},
    {ops::aten_remainder_Scalar, decomposeRemainderScalar},
    {ops::aten_rsub_Scalar, decomposeRsub},
    {ops::aten_rsub_Tensor, decomposeRsub},
    {ops::aten_silu_default, decomposeSilu},
    {ops::aten_softplus_default, decomposeSoftplus},
    {ops::aten_square_default, decomposeSquare},
    {ops::aten_sub_Scalar, decomposeSubScalar},
    {ops::aten_where_Scalar, decomposeWhereScalar},
    {ops::aten_where_ScalarOther, decomposeWhereScalar},
    {ops::aten_where_ScalarSelf, decomposeWhereScalar},
};

} // namespace

void registerPointwiseDecompositions(DecompositionRegistry &r) { r.add(kPointwiseDecompositions); }

} // namespace gc
