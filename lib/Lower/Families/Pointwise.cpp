//===- Pointwise.cpp - Elementwise ops ------------------------------------===//
//
// Arithmetic, comparisons, unary functions, where, clamp, full, arange and
// dtype conversions: each a body its consumers inline (Lowered::loader).
//
//===----------------------------------------------------------------------===//
#include "../GraphLowerer.h"

#include "gc/IR/ArgReader.h"
#include "gc/IR/OpId.h"

namespace gc::lower {

namespace {

/// Realizes argument `name` of `n` if it is an extern's epilogue that
/// `n`'s result broadcasts: computed once per element of its own rather
/// than once per point of the result (the sigmoid of a squeeze-excitation
/// gate, read at every position of its channel).
void realizeBroadcastEpilogue(GraphLowerer &lowerer, const Node &n, const char *name) {
  const NamedArg *a = n.arg(name);
  if (!a || a->value.kind != ArgKind::Tensor || !a->value.values[0])
    return;
  const Value *v = a->value.values[0];
  LoweredPtr l = lowerer.value(v);
  auto numel = [](const Exprs &sizes) -> std::optional<int64_t> {
    int64_t n = 1;
    for (const SymExpr *s : sizes) {
      if (!s->isConst())
        return std::nullopt;
      n *= s->constant();
    }
    return n;
  };
  std::optional<int64_t> own = numel(l->sizes), result = numel(lowerer.resultType(n).sizes);
  if (!l->view && l->epilogueOf && own && result && *own < *result)
    lowerer.realize(v);
}

Error binary(GraphLowerer &lowerer, const Node &n, const OpLowering &e) {
  realizeBroadcastEpilogue(lowerer, n, e.lhs);
  realizeBroadcastEpilogue(lowerer, n, e.rhs);
  Operand a = lowerer.operand(n, e.lhs), b = lowerer.operand(n, e.rhs);
  const TensorType &rt = lowerer.resultType(n);
  DType dtype = rt.dtype;
  ScalarOp op = e.scalar;
  std::string mode = ArgReader(n.args()).string("rounding_mode", "");
  if (mode == "floor")
    op = ScalarOp::FloorDiv;
  else if (mode == "trunc")
    op = ScalarOp::TruncDiv;
  std::optional<Number> alpha = numberArg(n.arg("alpha"));
  if (alpha && alpha->value == 1)
    alpha.reset();
  std::vector<LoweredPtr> ins = tensorsOf({&a, &b});
  Loader f = [a, b, dtype, op, alpha](BodyBuilder &bb, const Exprs &idx) {
    uint32_t x = emitOperand(bb, a, idx, dtype);
    uint32_t y = emitOperand(bb, b, idx, dtype);
    if (alpha)
      y = bb.compute(ScalarOp::Mul, dtype,
                     {y, bb.cast(bb.constant(alpha->dtype, alpha->value), dtype)});
    return bb.compute(op, dtype, {x, y});
  };
  lowerer.define(n.results()[0],
                 lowerer.pointwise(dtype, rt.sizes, alpha ? 3 : 1, ins, std::move(f)));
  return Error::success();
}

Error compare(GraphLowerer &lowerer, const Node &n, const OpLowering &e) {
  Operand a = lowerer.operand(n, e.lhs), b = lowerer.operand(n, e.rhs);
  PromotionOperand ops[] = {a.promotion, b.promotion};
  DType common = gc::resultType(ops);
  std::vector<LoweredPtr> ins = tensorsOf({&a, &b});
  ScalarOp op = e.scalar;
  Loader f = [a, b, common, op](BodyBuilder &bb, const Exprs &idx) {
    return bb.compute(op, DType::Bool,
                      {emitOperand(bb, a, idx, common), emitOperand(bb, b, idx, common)});
  };
  lowerer.define(n.results()[0],
                 lowerer.pointwise(DType::Bool, lowerer.resultType(n).sizes, 1, ins, std::move(f)));
  return Error::success();
}

Error logical(GraphLowerer &lowerer, const Node &n, const OpLowering &e) {
  Operand a = lowerer.operand(n, e.lhs), b = lowerer.operand(n, e.rhs);
  const TensorType &rt = lowerer.resultType(n);
  std::vector<LoweredPtr> ins = tensorsOf({&a, &b});
  ScalarOp op = e.scalar;
  DType dtype = rt.dtype;
  Loader f = [a, b, op, dtype](BodyBuilder &bb, const Exprs &idx) {
    uint32_t r = bb.compute(op, DType::Bool,
                            {emitOperand(bb, a, idx, DType::Bool),
                             emitOperand(bb, b, idx, DType::Bool)});
    return bb.cast(r, dtype);
  };
  lowerer.define(n.results()[0], lowerer.pointwise(dtype, rt.sizes, 1, ins, std::move(f)));
  return Error::success();
}

Error unary(GraphLowerer &lowerer, const Node &n, const OpLowering &e) {
  Operand a = lowerer.operand(n, e.lhs);
  const TensorType &rt = lowerer.resultType(n);
  DType dtype = rt.dtype;
  ScalarOp op = e.scalar;
  Loader f = [a, dtype, op](BodyBuilder &bb, const Exprs &idx) {
    return bb.compute(op, dtype, {emitOperand(bb, a, idx, dtype)});
  };
  lowerer.define(n.results()[0], lowerer.pointwise(dtype, rt.sizes, 1, {a.tensor}, std::move(f)));
  return Error::success();
}

Error predicate(GraphLowerer &lowerer, const Node &n, const OpLowering &e) {
  Operand a = lowerer.operand(n, "self");
  const TensorType &rt = lowerer.resultType(n);
  ScalarOp op = e.scalar;
  DType in = a.tensor->dtype, dtype = rt.dtype;
  Loader f = [a, in, op, dtype](BodyBuilder &bb, const Exprs &idx) {
    return bb.cast(bb.compute(op, DType::Bool, {emitOperand(bb, a, idx, in)}), dtype);
  };
  lowerer.define(n.results()[0], lowerer.pointwise(dtype, rt.sizes, 1, {a.tensor}, std::move(f)));
  return Error::success();
}

Error where(GraphLowerer &lowerer, const Node &n, const OpLowering &) {
  Operand c = lowerer.operand(n, "condition"), a = lowerer.operand(n, "self"),
          b = lowerer.operand(n, "other");
  const TensorType &rt = lowerer.resultType(n);
  DType dtype = rt.dtype;
  std::vector<LoweredPtr> ins = tensorsOf({&c, &a, &b});
  Loader f = [c, a, b, dtype](BodyBuilder &bb, const Exprs &idx) {
    return bb.compute(ScalarOp::Where, dtype,
                      {emitOperand(bb, c, idx, DType::Bool), emitOperand(bb, a, idx, dtype),
                       emitOperand(bb, b, idx, dtype)});
  };
  lowerer.define(n.results()[0], lowerer.pointwise(dtype, rt.sizes, 1, ins, std::move(f)));
  return Error::success();
}

Error clamp(GraphLowerer &lowerer, const Node &n, const OpLowering &) {
  Operand x = lowerer.operand(n, "self");
  ArgReader args(n.args());
  std::optional<Operand> lo, hi;
  if (args.has("min"))
    lo = lowerer.operand(n, "min");
  if (args.has("max"))
    hi = lowerer.operand(n, "max");
  const TensorType &rt = lowerer.resultType(n);
  DType dtype = rt.dtype;
  std::vector<LoweredPtr> ins =
      tensorsOf({&x, lo ? &*lo : nullptr, hi ? &*hi : nullptr});
  Loader f = [x, lo, hi, dtype](BodyBuilder &bb, const Exprs &idx) {
    uint32_t v = emitOperand(bb, x, idx, dtype);
    if (lo)
      v = bb.compute(ScalarOp::Maximum, dtype, {v, emitOperand(bb, *lo, idx, dtype)});
    if (hi)
      v = bb.compute(ScalarOp::Minimum, dtype, {v, emitOperand(bb, *hi, idx, dtype)});
    return v;
  };
  lowerer.define(n.results()[0], lowerer.pointwise(dtype, rt.sizes, 2, ins, std::move(f)));
  return Error::success();
}

Error full(GraphLowerer &lowerer, const Node &n, const OpLowering &) {
  const char *name = n.arg("fill_value") ? "fill_value" : "s";
  std::optional<Number> fill = numberArg(n.arg(name));
  if (!fill)
    throw LowerError(std::string("argument '") + name + "' is not a number");
  const TensorType &rt = lowerer.resultType(n);
  Number value = *fill;
  DType dtype = rt.dtype;
  Loader f = [value, dtype](BodyBuilder &bb, const Exprs &) {
    return bb.cast(bb.constant(value.dtype, value.value), dtype);
  };
  lowerer.define(n.results()[0], lowerer.pointwise(dtype, rt.sizes, 0, {}, std::move(f)));
  return Error::success();
}

Error arange(GraphLowerer &lowerer, const Node &n, const OpLowering &) {
  Number start{0, DType::Int64}, step{1, DType::Int64};
  if (n.arg("start"))
    start = numberArg(n.arg("start")).value_or(start);
  if (n.arg("step"))
    step = numberArg(n.arg("step")).value_or(step);
  const TensorType &rt = lowerer.resultType(n);
  DType dtype = rt.dtype;
  bool integral = start.dtype != DType::Float64 && step.dtype != DType::Float64;
  Loader f = [start, step, dtype, integral](BodyBuilder &bb, const Exprs &idx) {
    SymContext &sx = bb.syms();
    if (integral)
      return bb.cast(
          bb.index(sx.add(sx.constant(static_cast<int64_t>(start.value)),
                          sx.mul(idx[0], sx.constant(static_cast<int64_t>(step.value))))),
          dtype);
    uint32_t i = bb.cast(bb.index(idx[0]), DType::Float64);
    uint32_t v =
        bb.compute(ScalarOp::Mul, DType::Float64, {i, bb.constant(DType::Float64, step.value)});
    v = bb.compute(ScalarOp::Add, DType::Float64, {v, bb.constant(DType::Float64, start.value)});
    return bb.cast(v, dtype);
  };
  lowerer.define(n.results()[0], lowerer.pointwise(dtype, rt.sizes, 3, {}, std::move(f)));
  return Error::success();
}

Error toCopy(GraphLowerer &lowerer, const Node &n, const OpLowering &) {
  LoweredPtr x = lowerer.value(n.arg("self")->value.values[0]);
  DType dtype = lowerer.resultType(n).dtype;
  if (dtype == x->dtype) {
    lowerer.define(n.results()[0], x);
    return Error::success();
  }
  Loader f = [x, dtype](BodyBuilder &bb, const Exprs &idx) {
    return bb.cast(emit(bb, *x, idx), dtype);
  };
  lowerer.define(n.results()[0], lowerer.pointwise(dtype, x->sizes, 1, {x}, std::move(f)));
  return Error::success();
}

#define GC_BIN(NAME, OP) OpLowering{NAME, &binary, ScalarOp::OP}
#define GC_CMP(NAME, OP) OpLowering{NAME, &compare, ScalarOp::OP}
#define GC_UN(NAME, OP) OpLowering{NAME, &unary, ScalarOp::OP}
#define GC_POLY(NAME, OP) OpLowering{NAME, &binary, ScalarOp::OP, "x", "n"}
#define GC_UN_X(NAME, OP) OpLowering{NAME, &unary, ScalarOp::OP, "x"}

const OpLowering kRows[] = {
    GC_BIN(ops::aten_add_Tensor, Add),
    GC_BIN(ops::aten_add_Scalar, Add),
    GC_BIN(ops::aten_sub_Tensor, Sub),
    GC_BIN(ops::aten_sub_Scalar, Sub),
    GC_BIN(ops::aten_mul_Tensor, Mul),
    GC_BIN(ops::aten_mul_Scalar, Mul),
    GC_BIN(ops::aten_div_Tensor, Div),
    GC_BIN(ops::aten_div_Scalar, Div),
    GC_BIN(ops::aten_div_Tensor_mode, Div),
    GC_BIN(ops::aten_div_Scalar_mode, Div),
    GC_BIN(ops::aten_maximum_default, Maximum),
    GC_BIN(ops::aten_minimum_default, Minimum),
    GC_BIN(ops::aten_remainder_Tensor, Remainder),
    GC_BIN(ops::aten_remainder_Scalar, Remainder),
    GC_BIN(ops::aten_fmod_Tensor, Fmod),
    GC_BIN(ops::aten_fmod_Scalar, Fmod),
    GC_BIN(ops::aten_bitwise_and_Tensor, BitwiseAnd),
    GC_BIN(ops::aten_bitwise_and_Scalar, BitwiseAnd),
    GC_BIN(ops::aten_bitwise_or_Tensor, BitwiseOr),
    GC_BIN(ops::aten_bitwise_or_Scalar, BitwiseOr),
    GC_BIN(ops::aten_bitwise_xor_Tensor, BitwiseXor),
    GC_BIN(ops::aten_gcd_default, Gcd),
    // Special functions of two tensors.
    GC_BIN(ops::aten_igamma_default, Igamma),
    GC_BIN(ops::aten_igammac_default, Igammac),
    GC_BIN(ops::aten_special_zeta_default, Zeta),
    GC_POLY(ops::aten_special_chebyshev_polynomial_t_default, ChebyshevT),
    GC_POLY(ops::aten_special_chebyshev_polynomial_u_default, ChebyshevU),
    GC_POLY(ops::aten_special_chebyshev_polynomial_v_default, ChebyshevV),
    GC_POLY(ops::aten_special_chebyshev_polynomial_w_default, ChebyshevW),
    GC_POLY(ops::aten_special_hermite_polynomial_h_default, HermiteH),
    GC_POLY(ops::aten_special_hermite_polynomial_he_default, HermiteHe),
    GC_POLY(ops::aten_special_laguerre_polynomial_l_default, LaguerreL),
    GC_POLY(ops::aten_special_legendre_polynomial_p_default, LegendreP),
    OpLowering{ops::aten_pow_Tensor_Tensor, &binary, ScalarOp::Pow, "self",
               "exponent"},
    OpLowering{ops::aten_pow_Tensor_Scalar, &binary, ScalarOp::Pow, "self",
               "exponent"},
    OpLowering{ops::aten_pow_Scalar, &binary, ScalarOp::Pow, "self", "exponent"},
    GC_CMP(ops::aten_eq_Tensor, Eq),
    GC_CMP(ops::aten_eq_Scalar, Eq),
    GC_CMP(ops::aten_ne_Tensor, Ne),
    GC_CMP(ops::aten_ne_Scalar, Ne),
    GC_CMP(ops::aten_lt_Tensor, Lt),
    GC_CMP(ops::aten_lt_Scalar, Lt),
    GC_CMP(ops::aten_le_Tensor, Le),
    GC_CMP(ops::aten_le_Scalar, Le),
    GC_CMP(ops::aten_gt_Tensor, Gt),
    GC_CMP(ops::aten_gt_Scalar, Gt),
    GC_CMP(ops::aten_ge_Tensor, Ge),
    GC_CMP(ops::aten_ge_Scalar, Ge),
    OpLowering{ops::aten_logical_and_default, &logical, ScalarOp::LogicalAnd},
    OpLowering{ops::aten_logical_or_default, &logical, ScalarOp::LogicalOr},
    OpLowering{ops::aten_logical_xor_default, &logical, ScalarOp::Ne},
    GC_UN(ops::aten_neg_default, Neg),
    GC_UN(ops::aten_abs_default, Abs),
    // The floating unary ops: their GC_UNARY_OP rows.
#define GC_OP(ID, NAME, SET, TRAITS, SUMMARY, SCHEMA)
#define GC_UNARY_OP(ID, NAME, SCALAR_OP, SUMMARY, FORMULA, FACTOR) GC_UN(ops::ID, SCALAR_OP),
#include "gc/IR/OpDefs.def"
#undef GC_UNARY_OP
#undef GC_OP
    GC_UN(ops::aten_floor_default, Floor),
    GC_UN(ops::aten_ceil_default, Ceil),
    GC_UN(ops::aten_round_default, Round),
    GC_UN(ops::aten_trunc_default, Trunc),
    GC_UN(ops::aten_sign_default, Sign),
    GC_UN(ops::aten_bitwise_not_default, BitwiseNot),
    GC_UN_X(ops::aten_special_airy_ai_default, AiryAi),
    GC_UN_X(ops::aten_special_scaled_modified_bessel_k0_default, K0e),
    GC_UN_X(ops::aten_special_scaled_modified_bessel_k1_default, K1e),
    OpLowering{ops::aten_isnan_default, &predicate, ScalarOp::IsNan},
    OpLowering{ops::aten_logical_not_default, &predicate, ScalarOp::LogicalNot},
    OpLowering{ops::aten_where_self, &where},
    OpLowering{ops::aten_clamp_default, &clamp},
    OpLowering{ops::aten_clamp_Tensor, &clamp},
    OpLowering{ops::aten_full_default, &full},
    OpLowering{ops::aten_scalar_tensor_default, &full},
    OpLowering{ops::aten_arange_default, &arange},
    OpLowering{ops::aten_arange_start, &arange},
    OpLowering{ops::aten_arange_start_step, &arange},
    OpLowering{ops::aten__to_copy_default, &toCopy},
};

#undef GC_BIN
#undef GC_CMP
#undef GC_UN
#undef GC_POLY
#undef GC_UN_X

} // namespace

void registerPointwiseLowerings(LoweringRegistry &r) { r.add(kRows); }

} // namespace gc::lower
