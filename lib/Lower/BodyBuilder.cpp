//===- BodyBuilder.cpp - Building loop bodies -----------------------------===//
#include "BodyBuilder.h"

#include <algorithm>
#include <optional>

namespace gc {

uint32_t BodyBuilder::add(BodyOp op) {
  auto it = std::find(body_.ops.begin(), body_.ops.end(), op);
  if (it != body_.ops.end())
    return static_cast<uint32_t>(it - body_.ops.begin());
  body_.ops.push_back(std::move(op));
  return static_cast<uint32_t>(body_.ops.size() - 1);
}

uint32_t BodyBuilder::constant(DType dtype, double value) {
  BodyOp op;
  op.kind = BodyOp::Kind::Const;
  op.dtype = dtype;
  op.constant = value;
  return add(std::move(op));
}

uint32_t BodyBuilder::index(const SymExpr *e) {
  BodyOp op;
  op.kind = BodyOp::Kind::Index;
  op.dtype = DType::Int64;
  op.index = simplify(e);
  if (op.index->isConst())
    return constant(DType::Int64, static_cast<double>(op.index->constant()));
  return add(std::move(op));
}

uint32_t BodyBuilder::compute(ScalarOp scalarOp, DType dtype, std::vector<uint32_t> operands) {
  BodyOp op;
  op.kind = BodyOp::Kind::Compute;
  op.op = scalarOp;
  op.dtype = dtype;
  op.operands = std::move(operands);
  return add(std::move(op));
}

uint32_t BodyBuilder::cast(uint32_t v, DType dtype) {
  if (dtypeOf(v) == dtype)
    return v;
  const BodyOp &src = body_.ops[v];
  if (src.kind == BodyOp::Kind::Const) {
    double c = src.constant;
    if (dtype == DType::Bool)
      c = c != 0;
    else if (!isFloatingPoint(dtype))
      c = static_cast<double>(static_cast<int64_t>(c));
    return constant(dtype, c);
  }
  BodyOp op;
  op.kind = BodyOp::Kind::Cast;
  op.dtype = dtype;
  op.operands = {v};
  return add(std::move(op));
}

uint32_t BodyBuilder::load(uint32_t buffer, DType dtype, const SymExpr *index,
                           std::vector<uint32_t> indirect, const VarRanges &indirectRanges) {
  BodyOp op;
  op.kind = BodyOp::Kind::Load;
  op.dtype = dtype;
  op.buffer = buffer;
  if (indirectRanges.empty()) {
    op.index = simplify(index);
  } else {
    VarRanges all = ranges_;
    for (const auto &[name, range] : indirectRanges)
      all[name] = range;
    op.index = simplifyIndex(syms_, index, all);
  }
  op.indirect = std::move(indirect);
  op.mask = mask_;
  return add(std::move(op));
}

uint32_t BodyBuilder::andMask(uint32_t m) {
  if (mask_ < 0)
    return m;
  return compute(ScalarOp::LogicalAnd, DType::Bool, {static_cast<uint32_t>(mask_), m});
}

Body BodyBuilder::finish(uint32_t result, std::vector<uint32_t> *roots) && {
  // Inlined producers leave operations nobody reads (a constant a cast
  // replaced, a value a view bypassed): keep only what the result needs, so
  // that later pattern matches (extern post-ops) see the plain body.
  std::vector<bool> live(body_.ops.size(), false);
  live[result] = true;
  if (roots)
    for (uint32_t r : *roots)
      live[r] = true;
  for (size_t i = body_.ops.size(); i-- > 0;) {
    if (!live[i])
      continue;
    const BodyOp &op = body_.ops[i];
    for (uint32_t o : op.operands)
      live[o] = true;
    for (uint32_t o : op.indirect)
      live[o] = true;
    if (op.mask >= 0)
      live[static_cast<uint32_t>(op.mask)] = true;
  }
  std::vector<uint32_t> newIndex(body_.ops.size(), 0);
  Body out;
  for (size_t i = 0; i < body_.ops.size(); ++i) {
    if (!live[i])
      continue;
    BodyOp op = std::move(body_.ops[i]);
    for (uint32_t &o : op.operands)
      o = newIndex[o];
    for (uint32_t &o : op.indirect)
      o = newIndex[o];
    if (op.mask >= 0)
      op.mask = static_cast<int32_t>(newIndex[static_cast<uint32_t>(op.mask)]);
    newIndex[i] = static_cast<uint32_t>(out.ops.size());
    out.ops.push_back(std::move(op));
  }
  out.result = newIndex[result];
  if (roots)
    for (uint32_t &r : *roots)
      r = newIndex[r];
  return out;
}

SymRange loopVarRange(const SymExpr *extent, const VarRanges &known) {
  if (extent->isConst())
    return {0, std::max<int64_t>(extent->constant() - 1, 0)};
  std::optional<SymRange> b = boundsOf(extent, known);
  if (!b || b->max == SymRange::kUnbounded)
    return {0, SymRange::kUnbounded};
  return {0, std::max<int64_t>(b->max - 1, 0)};
}

uint32_t emitMasked(BodyBuilder &b, uint32_t cond, DType dtype,
                    const std::function<uint32_t()> &inner, uint32_t otherwise) {
  int32_t saved = b.mask();
  b.setMask(static_cast<int32_t>(b.andMask(cond)));
  uint32_t v = b.cast(inner(), dtype);
  b.setMask(saved);
  return b.compute(ScalarOp::Where, dtype, {cond, v, otherwise});
}

uint32_t emitInRange(BodyBuilder &b, const SymExpr *e, const SymExpr *lo, const SymExpr *hi) {
  uint32_t v = b.index(e);
  std::optional<uint32_t> cond;
  auto conj = [&](uint32_t c) {
    cond = cond ? b.compute(ScalarOp::LogicalAnd, DType::Bool, {*cond, c}) : c;
  };
  if (lo)
    conj(b.compute(ScalarOp::Ge, DType::Bool, {v, b.index(lo)}));
  if (hi)
    conj(b.compute(ScalarOp::Lt, DType::Bool, {v, b.index(hi)}));
  return cond ? *cond : b.constant(DType::Bool, 1);
}

} // namespace gc
