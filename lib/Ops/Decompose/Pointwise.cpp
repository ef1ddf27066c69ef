//===- Pointwise.cpp - Decompositions of pointwise ops --------------------===//
//
// Activations, clamps, Scalar overloads (rewritten to the Tensor overloads
// with a number or a 0-dim tensor), and the pointwise ops that are formulas
// of core ones.
//
//===----------------------------------------------------------------------===//
#include "gc/Ops/Emit.h"

#include <cmath>
#include <limits>

namespace gc {

namespace {

using namespace decompose;

constexpr double kInf = std::numeric_limits<double>::infinity();

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

//===----------------------------------------------------------------------===//
// Formulas of core ops (OpInfo's op suite reaches these)
//===----------------------------------------------------------------------===//

Value *zeroOf(Emit &e, Value *like) { return e.scalar(Number::integer(0), typeOf(like).dtype); }
Value *numberOf(Emit &e, double v, Value *like) { return e.scalar(Number::real(v), typeOf(like).dtype); }
Value *isNan(Emit &e, Value *x) { return e.unary(ops::aten_isnan_default, x); }
Value *both(Emit &e, Value *a, Value *b) {
  return e.op(ops::aten_logical_and_default, {{"self", a}, {"other", b}});
}
Value *either(Emit &e, Value *a, Value *b) {
  return e.op(ops::aten_logical_or_default, {{"self", a}, {"other", b}});
}
/// 2^k in k's dtype.
Value *powerOfTwo(Emit &e, Value *k) {
  return e.op(ops::aten_pow_Tensor_Tensor, {{"self", numberOf(e, 2, k)}, {"exponent", k}});
}

/// Whether x's sign bit is set: x < 0, and -0.0 (whose reciprocal is -inf).
Value *signBit(Emit &e, Value *x) {
  if (!isFloatingPoint(typeOf(x).dtype))
    return e.compare(Cmp::Lt, x, Number::integer(0));
  Value *zeroNegative = e.compare(Cmp::Lt, e.unary(ops::aten_reciprocal_default, x), Number::integer(0));
  return e.where(e.compare(Cmp::Eq, x, Number::integer(0)), zeroNegative,
                 e.compare(Cmp::Lt, x, Number::integer(0)));
}

/// A floating predicate, constant `integers` for integer and bool inputs.
Results predicate(RewriteContext &ctx, bool integers, Value *(*test)(Emit &, Value *)) {
  Emit e(ctx);
  Value *x = self(ctx);
  if (!isFloatingPoint(typeOf(x).dtype))
    return finish(ctx, {e.fullLike(x, Number::integer(integers), DType::Bool)});
  return finish(ctx, {test(e, x)});
}
Results decomposeIsfinite(RewriteContext &ctx) {
  return predicate(ctx, true, [](Emit &e, Value *x) {
    return e.compare(Cmp::Lt, e.unary(ops::aten_abs_default, x), Number::real(kInf));
  });
}
Results decomposeIsposinf(RewriteContext &ctx) {
  return predicate(ctx, false,
                   [](Emit &e, Value *x) { return e.compare(Cmp::Eq, x, Number::real(kInf)); });
}
Results decomposeIsneginf(RewriteContext &ctx) {
  return predicate(ctx, false,
                   [](Emit &e, Value *x) { return e.compare(Cmp::Eq, x, Number::real(-kInf)); });
}
Results decomposeSignbit(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {signBit(e, self(ctx))});
}

/// A unary formula over self in the dtype torch computes it in.
Results formula(RewriteContext &ctx, Value *(*f)(Emit &, Value *)) {
  Emit e(ctx);
  return finish(ctx, {f(e, inComputeDType(ctx, e))});
}
Results decomposeSinc(RewriteContext &ctx) {
  return formula(ctx, [](Emit &e, Value *x) {
    Value *px = e.mul(x, M_PI);
    return e.where(e.compare(Cmp::Eq, x, Number::integer(0)), numberOf(e, 1, x),
                   e.div(e.unary(ops::aten_sin_default, px), px));
  });
}
Results decomposeExp2(RewriteContext &ctx) {
  return formula(ctx, powerOfTwo);
}
Results decomposeDeg2rad(RewriteContext &ctx) {
  return formula(ctx, [](Emit &e, Value *x) { return e.mul(x, M_PI / 180); });
}
Results decomposeRad2deg(RewriteContext &ctx) {
  return formula(ctx, [](Emit &e, Value *x) { return e.mul(x, 180 / M_PI); });
}
/// acosh(x) = log(x + sqrt(x^2 - 1)); atanh(x) = (log1p(x) - log1p(-x)) / 2.
Results decomposeAcosh(RewriteContext &ctx) {
  return formula(ctx, [](Emit &e, Value *x) {
    Value *root = e.unary(ops::aten_sqrt_default, e.sub(e.mul(x, x), 1.0));
    return e.unary(ops::aten_log_default, e.add(x, root));
  });
}
Results decomposeAtanh(RewriteContext &ctx) {
  return formula(ctx, [](Emit &e, Value *x) {
    Value *up = e.unary(ops::aten_log1p_default, x);
    Value *down = e.unary(ops::aten_log1p_default, e.unary(ops::aten_neg_default, x));
    return e.mul(e.sub(up, down), 0.5);
  });
}
/// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), which neither overflows
/// nor loses the tail.
Results decomposeLogSigmoid(RewriteContext &ctx) {
  return formula(ctx, [](Emit &e, Value *x) {
    Value *tail = e.unary(ops::aten_log1p_default,
                          e.unary(ops::aten_exp_default,
                                  e.unary(ops::aten_neg_default, e.unary(ops::aten_abs_default, x))));
    return e.sub(e.minimum(x, zeroOf(e, x)), tail);
  });
}
Results decomposeSelu(RewriteContext &ctx) {
  return formula(ctx, [](Emit &e, Value *x) {
    constexpr double alpha = 1.6732632423543772848170429916717;
    constexpr double scale = 1.0507009873554804934193349852946;
    Value *negative = e.mul(e.unary(ops::aten_expm1_default, x), alpha * scale);
    return e.where(e.compare(Cmp::Gt, x, Number::integer(0)), e.mul(x, scale), negative);
  });
}

Results decomposeCelu(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = inComputeDType(ctx, e);
  double alpha = optNumber(ctx, "alpha").value_or(Number::integer(1)).value();
  Value *negative = e.mul(e.unary(ops::aten_expm1_default, e.div(x, alpha)), alpha);
  return finish(ctx, {e.where(e.compare(Cmp::Gt, x, Number::integer(0)), x, negative)});
}

Results decomposeLogit(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = inComputeDType(ctx, e);
  if (std::optional<Number> eps = optNumber(ctx, "eps"))
    x = clamp(e, x, numberOf(e, eps->value(), x), numberOf(e, 1 - eps->value(), x));
  Value *odds = e.div(x, e.sub(numberOf(e, 1, x), x));
  return finish(ctx, {e.unary(ops::aten_log_default, odds)});
}

Results decomposeFrac(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  return finish(ctx, {e.sub(x, e.unary(ops::aten_trunc_default, x))});
}

Results decomposeSgn(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {e.unary(ops::aten_sign_default, self(ctx))});
}

Results decomposeRelu6(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  DType t = typeOf(x).dtype;
  return finish(ctx, {clamp(e, x, e.scalar(Number::integer(0), t), e.scalar(Number::integer(6), t))});
}

Results decomposeHardshrink(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Number lambd = optNumber(ctx, "lambd").value_or(Number::real(0.5));
  Value *outside = e.compare(Cmp::Gt, e.unary(ops::aten_abs_default, x), lambd);
  return finish(ctx, {e.where(outside, x, zeroOf(e, x))});
}

Results decomposeSoftshrink(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Number lambd = optNumber(ctx, "lambd").value_or(Number::real(0.5));
  Value *below = e.where(e.compare(Cmp::Lt, x, Number::real(-lambd.value())), e.add(x, lambd.arg()),
                         zeroOf(e, x));
  return finish(ctx, {e.where(e.compare(Cmp::Gt, x, lambd), e.sub(x, lambd.arg()), below)});
}

Results decomposeThreshold(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  Value *value = e.scalar(number(ctx, "value"), typeOf(x).dtype);
  return finish(ctx, {e.where(e.compare(Cmp::Gt, x, number(ctx, "threshold")), x, value)});
}

/// nan_to_num: NaN, +inf and -inf become the given numbers, by default 0
/// and the dtype's largest and lowest finite values.
Results decomposeNanToNum(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  DType t = typeOf(x).dtype;
  if (!isFloatingPoint(t))
    return finish(ctx, {x});
  double largest = t == DType::Float64 ? std::numeric_limits<double>::max()
                   : t == DType::Float32 ? double(std::numeric_limits<float>::max())
                   : t == DType::Float16 ? 65504.0 : 3.3895313892515355e38;
  auto value = [&](const char *name, double dflt) {
    return numberOf(e, optNumber(ctx, name).value_or(Number::real(dflt)).value(), x);
  };
  Value *out = e.where(e.compare(Cmp::Eq, x, Number::real(kInf)), value("posinf", largest), x);
  out = e.where(e.compare(Cmp::Eq, x, Number::real(-kInf)), value("neginf", -largest), out);
  return finish(ctx, {e.where(isNan(e, x), value("nan", 0), out)});
}

/// round(x, decimals): torch scales by 10^|decimals| and rounds.
Results decomposeRoundDecimals(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx);
  int64_t decimals = ctx.integer("decimals");
  double scale = std::pow(10.0, double(std::abs(decimals)));
  Value *scaled = decimals >= 0 ? e.mul(x, scale) : e.div(x, scale);
  Value *rounded = e.unary(ops::aten_round_default, scaled);
  return finish(ctx, {decimals >= 0 ? e.div(rounded, scale) : e.mul(rounded, scale)});
}

/// A binary formula over self and other in the dtype torch computes it in.
Results binaryFormula(RewriteContext &ctx, Value *(*f)(Emit &, Value *, Value *)) {
  Emit e(ctx);
  DType t = ctx.resultType().dtype;
  return finish(ctx, {f(e, e.cast(self(ctx), t), e.cast(ctx.value("other"), t))});
}
/// x * logOp(y), 0 where x is 0, NaN where y is (xlogy, xlog1py).
template <OpId LogOp> Results xTimesLog(RewriteContext &ctx) {
  return binaryFormula(ctx, [](Emit &e, Value *x, Value *y) {
    Value *product = e.mul(x, e.unary(LogOp, y));
    Value *zeroed = e.where(e.compare(Cmp::Eq, x, Number::integer(0)), zeroOf(e, x), product);
    return e.where(isNan(e, y), y, zeroed);
  });
}
Results decomposeXlogy(RewriteContext &ctx) { return xTimesLog<ops::aten_log_default>(ctx); }
Results decomposeCopysign(RewriteContext &ctx) {
  return binaryFormula(ctx, [](Emit &e, Value *x, Value *y) {
    Value *magnitude = e.unary(ops::aten_abs_default, x);
    return e.where(signBit(e, y), e.unary(ops::aten_neg_default, magnitude), magnitude);
  });
}
Results decomposeHypot(RewriteContext &ctx) {
  return binaryFormula(ctx, [](Emit &e, Value *x, Value *y) {
    return e.unary(ops::aten_sqrt_default, e.add(e.mul(x, x), e.mul(y, y)));
  });
}
/// log(exp(x) + exp(y)) = max + log1p(exp(-|x - y|)); equal operands (the
/// infinite ones included) give x + log 2.
Results decomposeLogaddexp(RewriteContext &ctx) {
  return binaryFormula(ctx, [](Emit &e, Value *x, Value *y) {
    Value *gap = e.unary(ops::aten_abs_default, e.sub(x, y));
    Value *tail = e.unary(ops::aten_log1p_default,
                          e.unary(ops::aten_exp_default, e.unary(ops::aten_neg_default, gap)));
    Value *general = e.add(e.maximum(x, y), tail);
    return e.where(e.compare(Cmp::Eq, x, y), e.add(x, M_LN2), general);
  });
}
/// atan2(y, x): atan(y / x), moved by pi into the left half plane (by the
/// sign bits, so that -0.0 counts), and +-0 or +-pi when both are zero.
Results decomposeAtan2(RewriteContext &ctx) {
  return binaryFormula(ctx, [](Emit &e, Value *y, Value *x) {
    Value *base = e.unary(ops::aten_atan_default, e.div(y, x));
    Value *yNegative = signBit(e, y), *xNegative = signBit(e, x);
    Value *left = e.where(yNegative, e.sub(base, M_PI), e.add(base, M_PI));
    Value *angle = e.where(xNegative, left, base);
    Value *halfTurn = e.where(yNegative, numberOf(e, -M_PI, y), numberOf(e, M_PI, y));
    Value *origin = e.where(xNegative, halfTurn, y);
    Value *zero = both(e, e.compare(Cmp::Eq, x, Number::integer(0)),
                       e.compare(Cmp::Eq, y, Number::integer(0)));
    return e.where(zero, origin, angle);
  });
}
/// fmax, fmin: a NaN operand gives way to the other.
Results ignoringNan(RewriteContext &ctx, bool isMax) {
  Emit e(ctx);
  DType t = ctx.resultType().dtype;
  Value *x = e.cast(self(ctx), t), *y = e.cast(ctx.value("other"), t);
  Value *pick = isMax ? e.maximum(x, y) : e.minimum(x, y);
  if (!isFloatingPoint(t))
    return finish(ctx, {pick});
  return finish(ctx, {e.where(isNan(e, x), y, e.where(isNan(e, y), x, pick))});
}
Results decomposeFmax(RewriteContext &ctx) { return ignoringNan(ctx, true); }
Results decomposeFmin(RewriteContext &ctx) { return ignoringNan(ctx, false); }

Results decomposeFloorDivide(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {e.op(ops::aten_div_Tensor_mode, {{"self", self(ctx)},
                                                       {"other", ctx.value("other")},
                                                       {"rounding_mode", "floor"}})});
}

Results decomposeHeaviside(RewriteContext &ctx) {
  Emit e(ctx);
  DType t = ctx.resultType().dtype;
  Value *x = e.cast(self(ctx), t), *values = e.cast(ctx.value("values"), t);
  Value *step = e.where(e.compare(Cmp::Gt, x, Number::integer(0)), e.scalar(Number::integer(1), t),
                        e.scalar(Number::integer(0), t));
  return finish(ctx, {e.where(e.compare(Cmp::Eq, x, Number::integer(0)), values, step)});
}

/// addcmul, addcdiv: self + value * (tensor1 op tensor2).
Results addcombined(RewriteContext &ctx, bool divide) {
  Emit e(ctx);
  Value *t1 = ctx.value("tensor1"), *t2 = ctx.value("tensor2");
  Value *combined = divide ? e.div(t1, t2) : e.mul(t1, t2);
  if (ctx.has("value"))
    combined = e.mul(combined, number(ctx, "value").arg());
  return finish(ctx, {e.add(self(ctx), combined)});
}
Results decomposeAddcmul(RewriteContext &ctx) { return addcombined(ctx, false); }
Results decomposeAddcdiv(RewriteContext &ctx) { return addcombined(ctx, true); }

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
// mul.Scalar and the multiply aliases.
Results decomposeMulScalar(RewriteContext &ctx) { return renamed(ctx, ops::aten_mul_Tensor); }
Results decomposeDivScalar(RewriteContext &ctx) { return renamed(ctx, ops::aten_div_Tensor); }
Results decomposeDivide(RewriteContext &ctx) { return renamed(ctx, ops::aten_div_Tensor); }
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

//===----------------------------------------------------------------------===//
// Special functions that are formulas of core ones (the rest are core ops
// of their own: ScalarOps.def's SPECIAL rows)
//===----------------------------------------------------------------------===//

/// Op applied to self: i0 for special_modified_bessel_i0, ...
template <OpId Op> Results sameFunction(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {e.unary(Op, inComputeDType(ctx, e))});
}

/// sin(x) / x, 1 at 0 and 0 at infinity.
Results decomposeSphericalBesselJ0(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = inComputeDType(ctx, e, "x");
  Value *ratio = e.div(e.unary(ops::aten_sin_default, x), x);
  Value *finite = e.where(e.compare(Cmp::Eq, x, Number::integer(0)), numberOf(e, 1, x), ratio);
  Value *infinite = e.compare(Cmp::Eq, e.unary(ops::aten_abs_default, x), Number::real(kInf));
  return finish(ctx, {e.where(infinite, zeroOf(e, x), finite)});
}

/// -x ln(x) for x > 0, 0 at 0, -inf below; NaN stays.
Results decomposeEntr(RewriteContext &ctx) {
  return formula(ctx, [](Emit &e, Value *x) {
    Value *positive = e.unary(ops::aten_neg_default, e.mul(x, e.unary(ops::aten_log_default, x)));
    Value *rest = e.where(e.compare(Cmp::Eq, x, Number::integer(0)), zeroOf(e, x),
                          numberOf(e, -kInf, x));
    Value *value = e.where(e.compare(Cmp::Gt, x, Number::integer(0)), positive, rest);
    return e.where(isNan(e, x), x, value);
  });
}

/// Phi(x) = erfc(-x / sqrt(2)) / 2.
Value *ndtr(Emit &e, Value *x) {
  return e.mul(e.unary(ops::aten_erfc_default, e.mul(x, -M_SQRT1_2)), 0.5);
}
Results decomposeNdtr(RewriteContext &ctx) { return formula(ctx, ndtr); }

/// log Phi(x): log1p(-Phi(-x)) from -1 up, and below, where Phi(x)
/// underflows, log(erfcx(-x / sqrt(2)) / 2) - x^2 / 2.
Results decomposeLogNdtr(RewriteContext &ctx) {
  return formula(ctx, [](Emit &e, Value *x) {
    Value *upper = e.unary(ops::aten_log1p_default,
                           e.unary(ops::aten_neg_default, ndtr(e, e.unary(ops::aten_neg_default, x))));
    Value *scaled = e.unary(ops::aten_special_erfcx_default, e.mul(x, -M_SQRT1_2));
    Value *lower = e.sub(e.unary(ops::aten_log_default, e.mul(scaled, 0.5)), e.mul(e.mul(x, x), 0.5));
    return e.where(e.compare(Cmp::Lt, x, Number::integer(-1)), lower, upper);
  });
}

Results decomposeXlog1py(RewriteContext &ctx) {
  return xTimesLog<ops::aten_log1p_default>(ctx);
}

/// polygamma(n, x): digamma for n = 0, else (-1)^(n+1) n! zeta(n + 1, x).
Results decomposePolygamma(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = inComputeDType(ctx, e);
  int64_t n = ctx.integer("n");
  if (n < 0)
    return std::nullopt;
  if (n == 0)
    return finish(ctx, {e.unary(ops::aten_digamma_default, x)});
  double factor = n % 2 ? 1 : -1;
  for (int64_t k = 2; k <= n; ++k)
    factor *= static_cast<double>(k);
  Value *order = numberOf(e, static_cast<double>(n + 1), x);
  Value *zeta = e.op(ops::aten_special_zeta_default, {{"self", order}, {"other", x}});
  return finish(ctx, {e.mul(zeta, factor)});
}

/// The multivariate log-gamma function of order p:
/// sum_{i < p} lgamma(x - i/2) + p (p - 1) / 4 ln(pi).
Results decomposeMvlgamma(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = inComputeDType(ctx, e);
  int64_t p = ctx.integer("p");
  if (p < 1)
    return std::nullopt;
  Value *sum = e.unary(ops::aten_lgamma_default, x);
  for (int64_t i = 1; i < p; ++i)
    sum = e.add(sum, e.unary(ops::aten_lgamma_default, e.sub(x, 0.5 * static_cast<double>(i))));
  return finish(ctx, {e.add(sum, static_cast<double>(p * (p - 1)) / 4 * std::log(M_PI))});
}

/// The shifted polynomials: P*_n(x) = P_n(2x - 1), Op being P.
template <OpId Op> Results shiftedPolynomial(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = inComputeDType(ctx, e, "x");
  Value *shifted = e.sub(e.mul(x, 2.0), 1.0);
  return finish(ctx, {e.op(Op, {{"x", shifted}, {"n", ctx.value("n")}})});
}

//===----------------------------------------------------------------------===//
// Complex-number ops on real tensors, and floating-point utilities
//===----------------------------------------------------------------------===//

/// angle of a real number: pi below 0, else 0; NaN stays.
Results decomposeAngle(RewriteContext &ctx) {
  return formula(ctx, [](Emit &e, Value *x) {
    Value *angle = e.where(e.compare(Cmp::Lt, x, Number::integer(0)), numberOf(e, M_PI, x), zeroOf(e, x));
    return e.where(isNan(e, x), x, angle);
  });
}
/// real and conj_physical of a real tensor: the tensor itself.
Results decomposeRealIdentity(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {e.clone(self(ctx))});
}
Results decomposeIsreal(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {e.fullLike(self(ctx), Number::integer(1), DType::Bool)});
}

/// float_power: pow in float64.
Results decomposeFloatPower(RewriteContext &ctx) {
  Emit e(ctx);
  Value *base = e.cast(self(ctx), DType::Float64);
  Value *exponent = e.cast(ctx.value("exponent"), DType::Float64);
  return finish(ctx, {e.op(ops::aten_pow_Tensor_Tensor, {{"self", base}, {"exponent", exponent}})});
}

/// ldexp(x, k) = x * 2^k.
Results decomposeLdexp(RewriteContext &ctx) {
  return binaryFormula(ctx, [](Emit &e, Value *x, Value *k) {
    return e.mul(x, powerOfTwo(e, k));
  });
}

/// log2(2^x + 2^y) = max + log1p(2^-|x - y|) / ln 2, and x + 1 where x = y
/// (which keeps infinities).
Results decomposeLogaddexp2(RewriteContext &ctx) {
  return binaryFormula(ctx, [](Emit &e, Value *x, Value *y) {
    Value *gap = e.unary(ops::aten_abs_default, e.sub(x, y));
    Value *power = e.unary(ops::aten_exp_default, e.mul(gap, -M_LN2));
    Value *general = e.add(e.maximum(x, y), e.div(e.unary(ops::aten_log1p_default, power), M_LN2));
    return e.where(e.compare(Cmp::Eq, x, y), e.add(x, 1.0), general);
  });
}

/// |x - y| <= atol + rtol |y| with a finite difference, or x == y; NaNs
/// equal each other with equal_nan.
Results decomposeIsclose(RewriteContext &ctx) {
  Emit e(ctx);
  DType t = computeDType(typeOf(self(ctx)).dtype);
  Value *x = e.cast(self(ctx), t), *y = e.cast(ctx.value("other"), t);
  double rtol = optNumber(ctx, "rtol").value_or(Number::real(1e-5)).value();
  double atol = optNumber(ctx, "atol").value_or(Number::real(1e-8)).value();
  Value *error = e.unary(ops::aten_abs_default, e.sub(x, y));
  Value *allowed = e.add(e.mul(e.unary(ops::aten_abs_default, y), rtol), atol);
  Value *close = both(e, e.compare(Cmp::Lt, error, Number::real(kInf)), e.compare(Cmp::Le, error, allowed));
  close = either(e, close, e.compare(Cmp::Eq, x, y));
  if (ctx.boolean("equal_nan", false))
    close = either(e, close, both(e, isNan(e, x), isNan(e, y)));
  return finish(ctx, {close});
}

/// frexp's parts of a float64 x: x = m 2^e with 0.5 <= |m| < 1 (m = x,
/// e = 0 for 0, inf and NaN), e from log2|x| and corrected by one where
/// that rounded across a power of two.
struct FrexpParts {
  Value *mantissa, *exponent;
};
FrexpParts frexpParts(Emit &e, Value *x) {
  Value *magnitude = e.unary(ops::aten_abs_default, x);
  Value *exponent = e.add(e.unary(ops::aten_floor_default,
                                  e.div(e.unary(ops::aten_log_default, magnitude), M_LN2)), 1.0);
  Value *mantissa = e.mul(x, powerOfTwo(e, e.unary(ops::aten_neg_default, exponent)));
  Value *m = e.unary(ops::aten_abs_default, mantissa);
  Value *high = e.compare(Cmp::Ge, m, Number::integer(1));
  Value *low = e.compare(Cmp::Lt, m, Number::real(0.5));
  mantissa = e.where(high, e.mul(mantissa, 0.5), e.where(low, e.mul(mantissa, 2.0), mantissa));
  exponent = e.where(high, e.add(exponent, 1.0), e.where(low, e.sub(exponent, 1.0), exponent));
  Value *special = either(e, e.compare(Cmp::Eq, x, Number::integer(0)),
                          e.logicalNot(e.compare(Cmp::Lt, magnitude, Number::real(kInf))));
  return {e.where(special, x, mantissa), e.where(special, zeroOf(e, x), exponent)};
}

Results decomposeFrexp(RewriteContext &ctx) {
  Emit e(ctx);
  FrexpParts parts = frexpParts(e, e.cast(self(ctx), DType::Float64));
  return finish(ctx, {parts.mantissa, parts.exponent});
}

/// nextafter(x, y): x moved by one unit in the last place of its dtype
/// towards y, computed exactly in float64: the unit is 2^(e - digits) for
/// x = m 2^e, half that below a power of two, and never below the smallest
/// subnormal; y itself where x = y.
Results decomposeNextafter(RewriteContext &ctx) {
  Emit e(ctx);
  DType t = ctx.resultType().dtype;
  int digits = t == DType::Float64 ? 53 : t == DType::Float32 ? 24 : t == DType::Float16 ? 11 : 8;
  int minExponent = t == DType::Float64 ? -1074 : t == DType::Float32 ? -149 : t == DType::Float16 ? -24 : -133;
  if (!isFloatingPoint(t))
    return std::nullopt;
  Value *x = e.cast(self(ctx), DType::Float64), *y = e.cast(ctx.value("other"), DType::Float64);
  FrexpParts parts = frexpParts(e, x);
  Value *up = e.compare(Cmp::Gt, y, x);
  Value *positive = e.compare(Cmp::Gt, x, Number::integer(0));
  Value *towardZero = e.compare(Cmp::Ne, up, positive);
  Value *atPower = e.compare(Cmp::Eq, e.unary(ops::aten_abs_default, parts.mantissa), Number::real(0.5));
  Value *exponent = e.sub(parts.exponent, static_cast<double>(digits));
  exponent = e.where(both(e, towardZero, atPower), e.sub(exponent, 1.0), exponent);
  exponent = e.maximum(exponent, numberOf(e, minExponent, x));
  Value *unit = powerOfTwo(e, exponent);
  Value *moved = e.where(up, e.add(x, unit), e.sub(x, unit));
  double tiny = std::ldexp(1.0, minExponent);
  Value *fromZero = e.where(up, numberOf(e, tiny, x), numberOf(e, -tiny, x));
  moved = e.where(e.compare(Cmp::Eq, x, Number::integer(0)), fromZero, moved);
  moved = e.where(e.compare(Cmp::Eq, x, y), y, moved);
  return finish(ctx, {e.where(either(e, isNan(e, x), isNan(e, y)), e.add(x, y), moved)});
}

//===----------------------------------------------------------------------===//
// Integer ops
//===----------------------------------------------------------------------===//

/// lcm(a, b) = |a / gcd(a, b) * b|, 0 where both are 0.
Results decomposeLcm(RewriteContext &ctx) {
  Emit e(ctx);
  DType t = ctx.resultType().dtype;
  Value *a = e.cast(self(ctx), t), *b = e.cast(ctx.value("other"), t);
  Value *g = e.op(ops::aten_gcd_default, {{"self", a}, {"other", b}});
  Value *zero = e.compare(Cmp::Eq, g, Number::integer(0));
  Value *divisor = e.where(zero, e.scalar(Number::integer(1), t), g);
  Value *quotient = e.op(ops::aten_div_Tensor_mode,
                         {{"self", a}, {"other", divisor}, {"rounding_mode", "trunc"}});
  Value *lcm = e.unary(ops::aten_abs_default, e.mul(quotient, b));
  return finish(ctx, {e.where(zero, e.scalar(Number::integer(0), t), lcm)});
}

/// Shifts as torch defines them: by a count outside [0, bits) a left shift
/// gives 0 and a right shift the sign; a right shift is a floor division by
/// 2^count (arithmetic for signed types).
template <bool Left> Results shift(RewriteContext &ctx) {
  Emit e(ctx);
  DType t = ctx.resultType().dtype;
  if (isFloatingPoint(t) || t == DType::Bool)
    return std::nullopt;
  Value *a = e.cast(self(ctx), t), *count = e.cast(ctx.value("other"), t);
  int64_t bits = 8 * static_cast<int64_t>(dtypeSize(t));
  // A right shift by bits - 1 is the sign too, and 2^(bits - 1) overflows.
  int64_t limit = Left ? bits : bits - 1;
  Value *outside = either(e, e.compare(Cmp::Lt, count, Number::integer(0)),
                         e.compare(Cmp::Ge, count, Number::integer(limit)));
  Value *safeCount = e.where(outside, e.scalar(Number::integer(0), t), count);
  Value *power = e.op(ops::aten_pow_Tensor_Tensor,
                      {{"self", e.scalar(Number::integer(2), t)}, {"exponent", safeCount}});
  if (Left)
    return finish(ctx, {e.where(outside, e.scalar(Number::integer(0), t), e.mul(a, power))});
  Value *quotient = e.op(ops::aten_div_Tensor_mode,
                         {{"self", a}, {"other", power}, {"rounding_mode", "floor"}});
  Value *sign = e.where(e.compare(Cmp::Lt, a, Number::integer(0)), e.scalar(Number::integer(-1), t),
                        e.scalar(Number::integer(0), t));
  return finish(ctx, {e.where(outside, sign, quotient)});
}

const DecompositionEntry kPointwiseDecompositions[] = {
    {ops::aten___and___Tensor, decomposeAnd},
    {ops::aten___or___Tensor, decomposeOr},
    {ops::aten_acosh_default, decomposeAcosh},
    {ops::aten_add_Scalar, decomposeAddScalar},
    {ops::aten_addcdiv_default, decomposeAddcdiv},
    {ops::aten_addcmul_default, decomposeAddcmul},
    {ops::aten_angle_default, decomposeAngle},
    {ops::aten_atan2_default, decomposeAtan2},
    {ops::aten_atanh_default, decomposeAtanh},
    {ops::aten_bitwise_and_Scalar, decomposeBitwiseAndScalar},
    {ops::aten_bitwise_left_shift_Tensor, shift<true>},
    {ops::aten_bitwise_or_Scalar, decomposeBitwiseOrScalar},
    {ops::aten_bitwise_right_shift_Tensor, shift<false>},
    {ops::aten_bitwise_xor_Tensor, decomposeBitwiseXor},
    {ops::aten_celu_default, decomposeCelu},
    {ops::aten_clamp_Tensor, decomposeClamp},
    {ops::aten_clamp_default, decomposeClamp},
    {ops::aten_clamp_max_Tensor, decomposeClamp},
    {ops::aten_clamp_max_default, decomposeClamp},
    {ops::aten_clamp_min_Tensor, decomposeClamp},
    {ops::aten_clamp_min_default, decomposeClamp},
    {ops::aten_conj_physical_default, decomposeRealIdentity},
    {ops::aten_copysign_Tensor, decomposeCopysign},
    {ops::aten_deg2rad_default, decomposeDeg2rad},
    {ops::aten_div_Scalar, decomposeDivScalar},
    {ops::aten_div_Scalar_mode, decomposeDivScalarMode},
    {ops::aten_divide_Tensor, decomposeDivide},
    {ops::aten_elu_default, decomposeElu},
    {ops::aten_exp2_default, decomposeExp2},
    {ops::aten_float_power_Tensor_Tensor, decomposeFloatPower},
    {ops::aten_floor_divide_default, decomposeFloorDivide},
    {ops::aten_fmax_default, decomposeFmax},
    {ops::aten_fmin_default, decomposeFmin},
    {ops::aten_fmod_Scalar, decomposeFmodScalar},
    {ops::aten_frac_default, decomposeFrac},
    {ops::aten_frexp_Tensor, decomposeFrexp},
    {ops::aten_gelu_default, decomposeGelu},
    {ops::aten_hardshrink_default, decomposeHardshrink},
    {ops::aten_hardsigmoid_default, decomposeHardsigmoid},
    {ops::aten_hardswish_default, decomposeHardswish},
    {ops::aten_hardtanh_default, decomposeHardtanh},
    {ops::aten_heaviside_default, decomposeHeaviside},
    {ops::aten_hypot_default, decomposeHypot},
    {ops::aten_isclose_default, decomposeIsclose},
    {ops::aten_isfinite_default, decomposeIsfinite},
    {ops::aten_isinf_default, decomposeIsinf},
    {ops::aten_isneginf_default, decomposeIsneginf},
    {ops::aten_isposinf_default, decomposeIsposinf},
    {ops::aten_isreal_default, decomposeIsreal},
    {ops::aten_lcm_default, decomposeLcm},
    {ops::aten_ldexp_Tensor, decomposeLdexp},
    {ops::aten_leaky_relu_default, decomposeLeakyRelu},
    {ops::aten_lerp_Scalar, decomposeLerp},
    {ops::aten_lerp_Tensor, decomposeLerp},
    {ops::aten_log10_default, decomposeLog10},
    {ops::aten_log2_default, decomposeLog2},
    {ops::aten_log_sigmoid_default, decomposeLogSigmoid},
    {ops::aten_logaddexp2_default, decomposeLogaddexp2},
    {ops::aten_logaddexp_default, decomposeLogaddexp},
    {ops::aten_logical_xor_default, decomposeLogicalXor},
    {ops::aten_logit_default, decomposeLogit},
    {ops::aten_masked_fill_Scalar, decomposeMaskedFill},
    {ops::aten_masked_fill_Tensor, decomposeMaskedFill},
    {ops::aten_max_other, decomposeMaxOther},
    {ops::aten_min_other, decomposeMinOther},
    {ops::aten_mish_default, decomposeMish},
    {ops::aten_mul_Scalar, decomposeMulScalar},
    {ops::aten_multiply_Scalar, decomposeMulScalar},
    {ops::aten_multiply_Tensor, decomposeMulScalar},
    {ops::aten_mvlgamma_default, decomposeMvlgamma},
    {ops::aten_nan_to_num_default, decomposeNanToNum},
    {ops::aten_nextafter_default, decomposeNextafter},
    {ops::aten_polygamma_default, decomposePolygamma},
    {ops::aten_pow_Scalar, decomposePowScalar},
    {ops::aten_rad2deg_default, decomposeRad2deg},
    {ops::aten_real_default, decomposeRealIdentity},
    {ops::aten_relu6_default, decomposeRelu6},
    {ops::aten_relu_default, decomposeRelu},
    {ops::aten_remainder_Scalar, decomposeRemainderScalar},
    {ops::aten_round_decimals, decomposeRoundDecimals},
    {ops::aten_rsub_Scalar, decomposeRsub},
    {ops::aten_rsub_Tensor, decomposeRsub},
    {ops::aten_selu_default, decomposeSelu},
    {ops::aten_sgn_default, decomposeSgn},
    {ops::aten_signbit_default, decomposeSignbit},
    {ops::aten_silu_default, decomposeSilu},
    {ops::aten_sinc_default, decomposeSinc},
    {ops::aten_softplus_default, decomposeSoftplus},
    {ops::aten_softshrink_default, decomposeSoftshrink},
    {ops::aten_special_entr_default, decomposeEntr},
    {ops::aten_special_log_ndtr_default, decomposeLogNdtr},
    {ops::aten_special_modified_bessel_i0_default, sameFunction<ops::aten_i0_default>},
    {ops::aten_special_modified_bessel_i1_default, sameFunction<ops::aten_special_i1_default>},
    {ops::aten_special_ndtr_default, decomposeNdtr},
    {ops::aten_special_polygamma_default, decomposePolygamma},
    {ops::aten_special_shifted_chebyshev_polynomial_t_default, shiftedPolynomial<ops::aten_special_chebyshev_polynomial_t_default>},
    {ops::aten_special_shifted_chebyshev_polynomial_u_default, shiftedPolynomial<ops::aten_special_chebyshev_polynomial_u_default>},
    {ops::aten_special_shifted_chebyshev_polynomial_v_default, shiftedPolynomial<ops::aten_special_chebyshev_polynomial_v_default>},
    {ops::aten_special_shifted_chebyshev_polynomial_w_default, shiftedPolynomial<ops::aten_special_chebyshev_polynomial_w_default>},
    {ops::aten_special_spherical_bessel_j0_default, decomposeSphericalBesselJ0},
    {ops::aten_special_xlog1py_default, decomposeXlog1py},
    {ops::aten_square_default, decomposeSquare},
    {ops::aten_sub_Scalar, decomposeSubScalar},
    {ops::aten_subtract_Tensor, decomposeSubScalar},
    {ops::aten_threshold_default, decomposeThreshold},
    {ops::aten_true_divide_Tensor, decomposeDivide},
    {ops::aten_where_Scalar, decomposeWhereScalar},
    {ops::aten_where_ScalarOther, decomposeWhereScalar},
    {ops::aten_where_ScalarSelf, decomposeWhereScalar},
    {ops::aten_xlogy_Tensor, decomposeXlogy},
};

} // namespace

void registerPointwiseDecompositions(DecompositionRegistry &r) { r.add(kPointwiseDecompositions); }

} // namespace gc
