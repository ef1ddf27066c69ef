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

Value *fExp(Emit &, Value *, Value *y) { return y; }
Value *fLog(Emit &e, Value *x, Value *) { return e.unary("reciprocal", x); }
Value *fTanh(Emit &e, Value *, Value *y) { return oneMinus(e, e.mul(y, y)); }
Value *fErf(Emit &e, Value *x, Value *) {
  return e.mul(e.unary("exp", e.unary("neg", e.mul(x, x))), 2 / std::sqrt(std::numbers::pi));
}
Value *fErfc(Emit &e, Value *x, Value *y) { return e.unary("neg", fErf(e, x, y)); }
Value *fRsqrt(Emit &e, Value *, Value *y) { return e.mul(e.mul(y, e.mul(y, y)), -0.5); }
Value *fSqrt(Emit &e, Value *, Value *y) { return e.unary("reciprocal", e.mul(y, 2.0)); }
Value *fSigmoid(Emit &e, Value *, Value *y) { return e.mul(y, oneMinus(e, y)); }
Value *fSin(Emit &e, Value *x, Value *) { return e.unary("cos", x); }
Value *fCos(Emit &e, Value *x, Value *) { return e.unary("neg", e.unary("sin", x)); }
Value *fTan(Emit &e, Value *, Value *y) { return e.add(e.mul(y, y), 1.0); }
Value *fSinh(Emit &e, Value *x, Value *) { return e.unary("cosh", x); }
Value *fCosh(Emit &e, Value *x, Value *) { return e.unary("sinh", x); }
Value *fAsin(Emit &e, Value *x, Value *) { return e.unary("rsqrt", oneMinus(e, e.mul(x, x))); }
Value *fAcos(Emit &e, Value *x, Value *y) { return e.unary("neg", fAsin(e, x, y)); }
Value *fAtan(Emit &e, Value *x, Value *) { return e.unary("reciprocal", e.add(e.mul(x, x), 1.0)); }
Value *fExpm1(Emit &e, Value *, Value *y) { return e.add(y, 1.0); }
Value *fLog1p(Emit &e, Value *x, Value *) { return e.unary("reciprocal", e.add(x, 1.0)); }
Value *fReciprocal(Emit &e, Value *, Value *y) { return e.unary("neg", e.mul(y, y)); }
Value *fAbs(Emit &e, Value *x, Value *) { return e.unary("sign", x); }

InputGrads dIdentity(DerivativeContext &ctx) { return selfGrad(ctx.grad()); }

InputGrads dNeg(DerivativeContext &ctx) {
  Emit e(ctx);
  return selfGrad(e.unary("neg", ctx.grad()));
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
    grads.set("other", a.value() == 1 ? e.unary("neg", ctx.grad())
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
    grads.set("other", e.unary("neg", e.mul(ctx.grad(), e.div(ctx.result(), other(ctx)))));
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
  Value *power = e.op("aten.pow.Tensor_Scalar", {{"self", self(ctx)}, {"exponent", less.arg()}});
  return selfGrad(e.mul(ctx.grad(), e.mul(power, n.arg())));
}

InputGrads dPowTensor(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx), *n = ctx.value("exponent"), *g = ctx.grad();
  Value *power = e.op("aten.pow.Tensor_Tensor", {{"self", x}, {"exponent", e.sub(n, 1.0)}});
  // d/dn x^n = x^n log x, taken as 0 at x = 0 for n >= 0 (the limit).
  Value *atZero =
      e.op("aten.logical_and.default", {{"self", e.compare("eq", x, Number::integer(0))},
                                        {"other", e.compare("ge", n, Number::integer(0))}});
  Value *dn = e.mul(g, e.mul(ctx.result(), e.unary("log", x)));
  return selfGrad(e.mul(g, e.mul(n, power)))
      .set("exponent", e.where(atZero, scalarLike(e, dn, 0), dn));
}

/// Ties split the gradient evenly, as torch does.
template <const char *Wins> InputGrads dExtremum(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *x = self(ctx), *o = other(ctx), *g = ctx.grad();
  DType t = typeOf(g).dtype;
  Value *share =
      e.add(e.cast(e.compare(Wins, x, o), t), e.mul(e.cast(e.compare("eq", x, o), t), 0.5));
  Value *gx = e.mul(g, share);
  return selfGrad(gx).set("other", e.sub(g, gx));
}
constexpr char kGt[] = "gt";
constexpr char kLt[] = "lt";

InputGrads dWhere(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *c = ctx.value("condition"), *g = ctx.grad();
  Value *zero = scalarLike(e, g, 0);
  return selfGrad(e.where(c, g, zero)).set("other", e.where(c, zero, g));
}

/// x - rounded(x / o) * o: the quotient is piecewise constant.
template <const char *Round> InputGrads dRemainder(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *g = ctx.grad();
  Value *q = e.unary(Round, e.div(self(ctx), other(ctx)));
  return selfGrad(g).set("other", e.unary("neg", e.mul(g, q)));
}
constexpr char kTrunc[] = "trunc";
constexpr char kFloor[] = "floor";

const DerivativeEntry kEntries[] = {
    // The floating unary ops, one row each in UnaryOps.def.
#define GC_UNARY(ID, SCALAR_OP, FORMULA)                                                          \
  {opName(ops::ID).data(), chain<f##SCALAR_OP>, FORMULA},
#include "gc/IR/UnaryOps.def"
#undef GC_UNARY
    {"aten.abs.default", chain<fAbs>, "g * sign(x)"},
    {"aten.add.Tensor", dAdd, "self: g; other: alpha * g"},
    {"aten.bitwise_and.Tensor", nullptr, "none (integer)"},
    {"aten.bitwise_not.default", nullptr, "none (integer)"},
    {"aten.bitwise_or.Tensor", nullptr, "none (integer)"},
    {"aten.ceil.default", nullptr, "0 (piecewise constant)"},
    {"aten.clone.default", dIdentity, "g"},
    {"aten._to_copy.default", dIdentity, "g, cast back to x's dtype"},
    {"aten.div.Tensor", dDiv, "self: g / other; other: -g * y / other"},
    {"aten.div.Tensor_mode", dDivMode, "as div.Tensor; 0 when rounded"},
    {"aten.eq.Scalar", nullptr, "none (bool)"},
    {"aten.eq.Tensor", nullptr, "none (bool)"},
    {"aten.floor.default", nullptr, "0 (piecewise constant)"},
    {"aten.fmod.Tensor", dRemainder<kTrunc>, "self: g; other: -g * trunc(self / other)"},
    {"aten.ge.Scalar", nullptr, "none (bool)"},
    {"aten.ge.Tensor", nullptr, "none (bool)"},
    {"aten.gt.Scalar", nullptr, "none (bool)"},
    {"aten.gt.Tensor", nullptr, "none (bool)"},
    {"aten.isnan.default", nullptr, "none (bool)"},
    {"aten.le.Scalar", nullptr, "none (bool)"},
    {"aten.le.Tensor", nullptr, "none (bool)"},
    {"aten.logical_and.default", nullptr, "none (bool)"},
    {"aten.logical_not.default", nullptr, "none (bool)"},
    {"aten.logical_or.default", nullptr, "none (bool)"},
    {"aten.lt.Scalar", nullptr, "none (bool)"},
    {"aten.lt.Tensor", nullptr, "none (bool)"},
    {"aten.maximum.default", dExtremum<kGt>, "g to the larger operand, split on ties"},
    {"aten.minimum.default", dExtremum<kLt>, "g to the smaller operand, split on ties"},
    {"aten.mul.Tensor", dMul, "self: g * other; other: g * self"},
    {"aten.ne.Scalar", nullptr, "none (bool)"},
    {"aten.ne.Tensor", nullptr, "none (bool)"},
    {"aten.neg.default", dNeg, "-g"},
    {"aten.pow.Tensor_Scalar", dPowScalar, "g * n * x^(n - 1)"},
    {"aten.pow.Tensor_Tensor", dPowTensor, "self: g * n * x^(n - 1); exponent: g * y * log(x)"},
    {"aten.remainder.Tensor", dRemainder<kFloor>, "self: g; other: -g * floor(self / other)"},
    {"aten.round.default", nullptr, "0 (piecewise constant)"},
    {"aten.sign.default", nullptr, "0 (piecewise constant)"},
    {"aten.sub.Tensor", dSub, "self: g; other: -alpha * g"},
    {"aten.trunc.default", nullptr, "0 (piecewise constant)"},
    {"aten.where.self", dWhere, "self: g where condition; other: g elsewhere"},
    {"gc.rand.default", nullptr, "none (random numbers)"},
    {"aten.arange.start_step", nullptr, "none (no tensor inputs)"},
    {"aten.full.default", nullptr, "none (no tensor inputs)"},
};

} // namespace

void registerPointwiseDerivatives(DerivativeRegistry &r) { r.add(kEntries); }

} // namespace gc
