//===- Pointwise.cpp - Derivatives of elementwise ops ---------------------===//
//
// g is the gradient of the result y, x the input (self). Binary rules give
// gradients of the broadcast shape; the joint builder sums them back.
//
//===----------------------------------------------------------------------===//
#include "Rules.h"

#include "gc/IR/OpId.h"

#include <cmath>
#include <numbers>

namespace gc {

namespace {

using namespace autodiff;

Value *self(DerivativeContext &ctx) { return ctx.value("self"); }
Value *other(DerivativeContext &ctx) { return ctx.value("other"); }
InputGrads selfGrad(Value *g) { return InputGrads().set("self", g); }
Value *oneMinus(Emit &e, Value *v) { return e.sub(scalarLike(e, v, 1), v); }

/// A rule whose gradient is g times a factor of x and y.
template <Value *(*Factor)(Emit &, Value *x, Value *y)> InputGrads chain(DerivativeContext &ctx) {
  Emit e(ctx);
  return selfGrad(e.mul(ctx.grad(), Factor(e, self(ctx), ctx.result())));
}

/// erf's derivative is exp(-x^2) times this.
const double kTwoOverSqrtPi = 2 / std::sqrt(std::numbers::pi);
/// erfinv's and ndtri's derivatives are exp(y^2) and exp(y^2 / 2) times these.
const double kSqrtPiOverTwo = std::sqrt(std::numbers::pi) / 2;
const double kSqrtTwoPi = std::sqrt(2 * std::numbers::pi);

/// polygamma(1, x) = zeta(2, x), digamma's derivative.
Value *trigamma(Emit &e, Value *x) {
  return e.op(ops::aten_special_zeta_default, {{"self", scalarLike(e, x, 2)}, {"other", x}});
}

/// lower - y / x, 1/2 at x = 0: the derivative of J1, I1 and I1e from their
/// neighbours of order 0 (lower), whose value at 0 is 1.
Value *lowerMinusOverX(Emit &e, Value *lower, Value *x, Value *y) {
  Value *atZero = e.compare(decompose::Cmp::Eq, x, Number::integer(0));
  return e.where(atZero, scalarLike(e, y, 0.5), e.sub(lower, e.div(y, x)));
}

// The factors of the GC_UNARY_OP rows' derivatives: factor_aten_exp_default.
#define GC_OP(ID, NAME, SET, TRAITS, SUMMARY, SCHEMA)
#define GC_UNARY_OP(ID, NAME, SCALAR_OP, SUMMARY, FORMULA, FACTOR)                                \
  [[maybe_unused]] Value *factor_##ID(Emit &e, Value *x, Value *y) {                              \
    (void)e, (void)x, (void)y;                                                                    \
    return FACTOR;                                                                                \
  }
#include "gc/IR/OpDefs.def"
#undef GC_UNARY_OP
#undef GC_OP

Value *fAbs(Emit &e, Value *x, Value *) { return e.unary(ops::aten_sign_default, x); }

InputGrads dIdentity(DerivativeContext &ctx) { return selfGrad(ctx.grad()); }

InputGrads dNeg(DerivativeContext &ctx) {
  Emit e(ctx);
  return selfGrad(e.unary(ops::aten_neg_default, ctx.grad()));
}

/// alpha * g, without the multiplication for alpha = 1.
Value *scaled(Emit &e, Value *g, decompose::Number alpha) {
  return alpha.value() == 1 ? g : e.mul(g, alpha.arg());
}

decompose::Number alpha(DerivativeContext &ctx) {
  return decompose::optNumber(ctx, "alpha").value_or(Number::integer(1));
}

InputGrads dAdd(DerivativeContext &ctx) {
  Emit e(ctx);
  InputGrads grads = selfGrad(ctx.grad());
  if (decompose::isTensorArg(ctx, "other"))
    grads.set("other", scaled(e, ctx.grad(), alpha(ctx)));
  return grads;
}

InputGrads dSub(DerivativeContext &ctx) {
  Emit e(ctx);
  InputGrads grads = selfGrad(ctx.grad());
  if (decompose::isTensorArg(ctx, "other")) {
    Number a = alpha(ctx);
    grads.set("other", a.value() == 1 ? e.unary(ops::aten_neg_default, ctx.grad())
                                      : e.mul(ctx.grad(), Number::real(-a.value()).arg()));
  }
  return grads;
}

InputGrads dMul(DerivativeContext &ctx) {
  Emit e(ctx);
  InputGrads grads = selfGrad(e.mul(ctx.grad(), ctx.passThrough("other")));
  if (decompose::isTensorArg(ctx, "other"))
    grads.set("other", e.mul(ctx.grad(), self(ctx)));
  return grads;
}

InputGrads dDiv(DerivativeContext &ctx) {
  Emit e(ctx);
  InputGrads grads = selfGrad(e.div(ctx.grad(), ctx.passThrough("other")));
  if (decompose::isTensorArg(ctx, "other"))
    grads.set("other", e.unary(ops::aten_neg_default, e.mul(ctx.grad(), e.div(ctx.result(), other(ctx)))));
  return grads;
}

/// Rounded quotients are piecewise constant: no gradient flows.
InputGrads dDivMode(DerivativeContext &ctx) {
  return ctx.has("rounding_mode") ? InputGrads() : dDiv(ctx);
}

InputGrads dPowScalar(DerivativeContext &ctx) {
  Emit e(ctx);
  Number n = decompose::number(ctx, "exponent");
  if (n.value() == 0)
    return InputGrads();
  if (n.value() == 1)
    return selfGrad(ctx.grad());
  Number less = n.kind == Number::Kind::Float ? Number::real(n.f - 1) : Number::integer(n.i - 1);
  Value *power = e.op(ops::aten_pow_Tensor_Scalar, {{"self", self(ctx)}, {"exponent", less.arg()}});
  return selfGrad(e.mul(ctx.grad(), e.mul(power, n.arg())));
}

InputGrads dPowTensor(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx), *n = ctx.value("exponent"), *g = ctx.grad();
  Value *power = e.op(ops::aten_pow_Tensor_Tensor, {{"self", x}, {"exponent", e.sub(n, 1.0)}});
  // d/dn x^n = x^n log x, taken as 0 at x = 0 for n >= 0 (the limit).
  Value *atZero =
      e.op(ops::aten_logical_and_default, {{"self", e.compare(Cmp::Eq, x, Number::integer(0))},
                                        {"other", e.compare(Cmp::Ge, n, Number::integer(0))}});
  Value *dn = e.mul(g, e.mul(ctx.result(), e.unary(ops::aten_log_default, x)));
  return selfGrad(e.mul(g, e.mul(n, power)))
      .set("exponent", e.where(atZero, scalarLike(e, dn, 0), dn));
}

/// Ties split the gradient evenly, as torch does.
template <Cmp Wins> InputGrads dExtremum(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx), *o = other(ctx), *g = ctx.grad();
  DType t = typeOf(g).dtype;
  Value *share =
      e.add(e.cast(e.compare(Wins, x, o), t), e.mul(e.cast(e.compare(Cmp::Eq, x, o), t), 0.5));
  Value *gx = e.mul(g, share);
  return selfGrad(gx).set("other", e.sub(g, gx));
}

InputGrads dWhere(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *c = ctx.value("condition"), *g = ctx.grad();
  Value *zero = scalarLike(e, g, 0);
  return selfGrad(e.where(c, g, zero)).set("other", e.where(c, zero, g));
}

/// x - rounded(x / o) * o: the quotient is piecewise constant.
template <OpId Round> InputGrads dRemainder(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *g = ctx.grad();
  Value *q = e.unary(Round, e.div(self(ctx), other(ctx)));
  return selfGrad(g).set("other", e.unary(ops::aten_neg_default, e.mul(g, q)));
}

const DerivativeEntry kEntries[] = {
    // The floating unary ops: their GC_UNARY_OP rows.
#define GC_OP(ID, NAME, SET, TRAITS, SUMMARY, SCHEMA)
#define GC_UNARY_OP(ID, NAME, SCALAR_OP, SUMMARY, FORMULA, FACTOR)                                \
  {ops::ID, chain<factor_##ID>, FORMULA},
#include "gc/IR/OpDefs.def"
#undef GC_UNARY_OP
#undef GC_OP
    {ops::aten_abs_default, chain<fAbs>, "g * sign(x)"},
    {ops::aten_add_Tensor, dAdd, "self: g; other: alpha * g"},
    {ops::aten_bitwise_and_Tensor, nullptr, "none (integer)"},
    {ops::aten_bitwise_not_default, nullptr, "none (integer)"},
    {ops::aten_bitwise_or_Tensor, nullptr, "none (integer)"},
    {ops::aten_ceil_default, nullptr, "0 (piecewise constant)"},
    {ops::aten_clone_default, dIdentity, "g"},
    {ops::aten_detach_default, nullptr, "none (cut from autograd)"},
    {ops::aten__to_copy_default, dIdentity, "g, cast back to x's dtype"},
    {ops::aten_div_Tensor, dDiv, "self: g / other; other: -g * y / other"},
    {ops::aten_div_Tensor_mode, dDivMode, "as div.Tensor; 0 when rounded"},
    {ops::aten_eq_Scalar, nullptr, "none (bool)"},
    {ops::aten_eq_Tensor, nullptr, "none (bool)"},
    {ops::aten_floor_default, nullptr, "0 (piecewise constant)"},
    {ops::aten_fmod_Tensor, dRemainder<ops::aten_trunc_default>, "self: g; other: -g * trunc(self / other)"},
    {ops::aten_gcd_default, nullptr, "none (integer)"},
    {ops::aten_ge_Scalar, nullptr, "none (bool)"},
    {ops::aten_ge_Tensor, nullptr, "none (bool)"},
    {ops::aten_gt_Scalar, nullptr, "none (bool)"},
    {ops::aten_gt_Tensor, nullptr, "none (bool)"},
    {ops::aten_isnan_default, nullptr, "none (bool)"},
    {ops::aten_le_Scalar, nullptr, "none (bool)"},
    {ops::aten_le_Tensor, nullptr, "none (bool)"},
    {ops::aten_logical_and_default, nullptr, "none (bool)"},
    {ops::aten_logical_not_default, nullptr, "none (bool)"},
    {ops::aten_logical_or_default, nullptr, "none (bool)"},
    {ops::aten_lt_Scalar, nullptr, "none (bool)"},
    {ops::aten_lt_Tensor, nullptr, "none (bool)"},
    {ops::aten_maximum_default, dExtremum<Cmp::Gt>, "g to the larger operand, split on ties"},
    {ops::aten_minimum_default, dExtremum<Cmp::Lt>, "g to the smaller operand, split on ties"},
    {ops::aten_mul_Tensor, dMul, "self: g * other; other: g * self"},
    {ops::aten_ne_Scalar, nullptr, "none (bool)"},
    {ops::aten_ne_Tensor, nullptr, "none (bool)"},
    {ops::aten_neg_default, dNeg, "-g"},
    {ops::aten_pow_Tensor_Scalar, dPowScalar, "g * n * x^(n - 1)"},
    {ops::aten_pow_Tensor_Tensor, dPowTensor, "self: g * n * x^(n - 1); exponent: g * y * log(x)"},
    {ops::aten_remainder_Tensor, dRemainder<ops::aten_floor_default>, "self: g; other: -g * floor(self / other)"},
    {ops::aten_round_default, nullptr, "0 (piecewise constant)"},
    {ops::aten_sign_default, nullptr, "0 (piecewise constant)"},
    {ops::aten_sub_Tensor, dSub, "self: g; other: -alpha * g"},
    {ops::aten_trunc_default, nullptr, "0 (piecewise constant)"},
    {ops::aten_where_self, dWhere, "self: g where condition; other: g elsewhere"},
    {ops::gc_rand_default, nullptr, "none (random numbers)"},
    {ops::aten_arange_start_step, nullptr, "none (no tensor inputs)"},
    {ops::aten_full_default, nullptr, "none (no tensor inputs)"},
};

} // namespace

void registerPointwiseDerivatives(DerivativeRegistry &r) { r.add(kEntries); }

} // namespace gc
