//===- Reduction.cpp - Reductions, scans and sorts ------------------------===//
//
// sum, prod, amax, amin, argmax, argmin and any as Reduction nodes; cumsum
// as a scan; sort and topk by rank.
//
//===----------------------------------------------------------------------===//
#include "../GraphLowerer.h"

#include "gc/IR/ArgReader.h"

namespace gc::lower {

namespace {

Error reduction(GraphLowerer &lowerer, const Node &n, const OpLowering &) {
  SymContext &sx = lowerer.syms();
  ReduceKind kind = ReduceKind::Sum;
  switch (n.op()) {
  case ops::aten_prod_default:
  case ops::aten_prod_dim_int:
    kind = ReduceKind::Prod;
    break;
  case ops::aten_amax_default:
    kind = ReduceKind::Max;
    break;
  case ops::aten_amin_default:
    kind = ReduceKind::Min;
    break;
  case ops::aten_argmax_default:
    kind = ReduceKind::ArgMax;
    break;
  case ops::aten_argmin_default:
    kind = ReduceKind::ArgMin;
    break;
  case ops::aten_any_default:
  case ops::aten_any_dim:
  case ops::aten_any_dims:
    kind = ReduceKind::Any;
    break;
  default:
    break;
  }
  LoweredPtr x = lowerer.value(n.arg("self")->value.values[0]);
  int64_t rank = static_cast<int64_t>(x->sizes.size());
  ArgReader args(n.args());
  std::vector<int64_t> dims;
  if (args.has("dim"))
    dims = lowerer.ints(n, "dim");
  bool keepdim = args.boolean("keepdim", false);
  std::vector<bool> reduced(rank, dims.empty());
  for (int64_t d : dims) {
    // A 0-d tensor takes dim 0 and -1 (its one element), as in torch.
    size_t w = wrap(d, x->sizes.size());
    if (rank > 0)
      reduced[w] = true;
  }
  const Value *result = n.results()[0];
  const TensorType &rt = result->type().tensor;
  Exprs outer = rt.sizes, inner;
  Exprs ivars = loopVars(sx, 'i', outer.size());
  Exprs inIdx;
  size_t nextOuter = 0, nextInner = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      inner.push_back(x->sizes[d]);
      inIdx.push_back(sx.symbol(loopVar('r', nextInner++)));
      nextOuter += keepdim;
    } else {
      inIdx.push_back(ivars.at(nextOuter++));
    }
  }
  LoopNode node;
  node.reduce = kind;
  node.reductionRanges = inner;
  BodyBuilder b = lowerer.builder(outer, inner);
  uint32_t v = emit(b, *x, inIdx);
  if (kind == ReduceKind::Any)
    v = b.cast(v, DType::Bool);
  else if (kind != ReduceKind::ArgMax && kind != ReduceKind::ArgMin)
    v = b.cast(v, rt.dtype);
  lowerer.addReduction(std::move(node), std::move(b), v, result);
  return Error::success();
}

/// cumsum: a scan along `dim`, serial along it (r0) and parallel over the
/// other dims, accumulating in the result's dtype (int64 for integer and
/// bool inputs, or `dtype`), as torch's result type says.
Error cumsum(GraphLowerer &lowerer, const Node &n, const OpLowering &) {
  SymContext &sx = lowerer.syms();
  LoweredPtr x = lowerer.value(n.arg("self")->value.values[0]);
  const Value *result = n.results()[0];
  const TensorType &rt = result->type().tensor;
  size_t rank = x->sizes.size();
  size_t dim = wrap(ArgReader(n.args()).integer("dim"), rank);
  Exprs outer, inner{rank == 0 ? sx.constant(1) : x->sizes[dim]};
  Exprs idx;
  for (size_t d = 0, next = 0; d < rank; ++d) {
    if (d == dim) {
      idx.push_back(sx.symbol(loopVar('r', 0)));
      continue;
    }
    outer.push_back(x->sizes[d]);
    idx.push_back(sx.symbol(loopVar('i', next++)));
  }
  LoopNode node;
  node.kind = LoopNode::Kind::Reduction;
  node.reduce = ReduceKind::Sum;
  node.scan = true;
  node.name = result->name();
  node.origin = result->name();
  node.ranges = outer;
  node.reductionRanges = inner;
  BodyBuilder b = lowerer.builder(outer, inner);
  uint32_t v = b.cast(emit(b, *x, idx), rt.dtype);
  node.body = std::move(b).finish(v);
  node.output = lowerer.resultBuffer(result, rt, true);
  const Exprs &strides = lowerer.buffer(node.output).strides;
  node.storeIndex = lowerer.builder(outer, inner).simplify(dot(sx, idx, strides, sx.constant(0)));
  StridedView view{node.output, rt.sizes, strides, sx.constant(0)};
  lowerer.addNode(std::move(node));
  lowerer.setValue(result, lowerer.stridedLowered(rt.dtype, view));
  return Error::success();
}

/// sort and topk (stable; NaN sorts as the largest value, as in torch) as
/// loops, by rank: element j of a row goes to position rank(j), the number
/// of elements that come before it (smaller, or equal and earlier; larger
/// for a descending order). Three nodes, all parallel over the rows: a Sum
/// over the row computes every rank, a second Sum finds the source index of
/// each output position (the one element whose rank it is), and the values
/// are a gather of self at those indices. The work grows with the square of
/// the row, so rows longer than kMaxRankSortRow (or of symbolic length)
/// keep the reference kernel, and --no-fallback says why.
constexpr int64_t kMaxRankSortRow = 2048;

Error sortRows(GraphLowerer &lowerer, const Node &n, const OpLowering &) {
  SymContext &sx = lowerer.syms();
  bool isTopk = n.op() == ops::aten_topk_default;
  ArgReader args(n.args());
  const Value *self = n.arg("self")->value.values[0];
  LoweredPtr x = lowerer.value(self);
  size_t rank = x->sizes.size();
  size_t dim = wrap(args.integer("dim", -1), rank);
  bool descending = isTopk ? args.boolean("largest", true) : args.boolean("descending", false);
  const SymExpr *row = rank == 0 ? sx.constant(1) : x->sizes[dim];
  if (!row->isConst() || row->constant() > kMaxRankSortRow)
    return lowerer.fallback(n, "rows of more than " + std::to_string(kMaxRankSortRow) +
                                   " elements or of symbolic length (this one has " + row->str() +
                                   ")");
  if (n.results().size() != 2)
    throw LowerError("expected values and indices");
  const Value *values = n.results()[0], *indices = n.results()[1];
  const TensorType &vt = values->type().tensor;
  DType dtype = x->dtype;
  bool floating = isFloatingPoint(dtype);
  StridedView in = lowerer.realize(self);
  LoweredPtr src = lowerer.value(self);
  Exprs ivars = loopVars(sx, 'i', rank);
  const SymExpr *r0 = sx.symbol(loopVar('r', 0));
  // Index of the row element at position `at` along dim, the others at idx.
  auto along = [=](const Exprs &idx, const SymExpr *at) {
    Exprs e = idx;
    if (rank > 0)
      e[dim] = at;
    return e;
  };
  const SymExpr *own = rank == 0 ? sx.constant(0) : ivars[dim];

  // rank(j) = #{k : k comes before j}, k = r0, j = the point's own element.
  Exprs sizes = x->sizes;
  BodyBuilder rb = lowerer.builder(sizes, {row});
  uint32_t a = emit(rb, *src, along(ivars, r0)), b = emit(rb, *src, ivars);
  ScalarOp order = descending ? ScalarOp::Gt : ScalarOp::Lt;
  uint32_t first = rb.compute(order, DType::Bool, {a, b});
  uint32_t same = rb.compute(ScalarOp::Eq, DType::Bool, {a, b});
  if (floating) {
    uint32_t an = rb.compute(ScalarOp::IsNan, DType::Bool, {a});
    uint32_t bn = rb.compute(ScalarOp::IsNan, DType::Bool, {b});
    // NaN is the largest value, and equal to itself.
    uint32_t nanFirst = descending
                            ? rb.compute(ScalarOp::LogicalAnd, DType::Bool,
                                         {an, rb.compute(ScalarOp::LogicalNot, DType::Bool, {bn})})
                            : rb.compute(ScalarOp::LogicalAnd, DType::Bool,
                                         {rb.compute(ScalarOp::LogicalNot, DType::Bool, {an}), bn});
    first = rb.compute(ScalarOp::LogicalOr, DType::Bool, {first, nanFirst});
    same = rb.compute(ScalarOp::LogicalOr, DType::Bool,
                      {same, rb.compute(ScalarOp::LogicalAnd, DType::Bool, {an, bn})});
  }
  uint32_t earlier = rb.compute(ScalarOp::Lt, DType::Bool, {rb.index(r0), rb.index(own)});
  uint32_t before = rb.compute(
      ScalarOp::LogicalOr, DType::Bool,
      {first, rb.compute(ScalarOp::LogicalAnd, DType::Bool, {same, earlier})});
  uint32_t counted = rb.cast(before, DType::Int64);
  LoweredPtr ranks =
      lowerer.scratchReduction(values->name() + "_rank", values->name(), ReduceKind::Sum, sizes,
                               {row}, std::move(rb), counted);

  // The source index of output position p: the r0 whose rank is p.
  Exprs outSizes = vt.sizes;
  LoopNode source;
  source.reduce = ReduceKind::Sum;
  source.reductionRanges = {row};
  BodyBuilder sb = lowerer.builder(outSizes, {row});
  uint32_t rk = emit(sb, *ranks, along(ivars, r0));
  uint32_t hit = sb.compute(ScalarOp::Eq, DType::Bool, {rk, sb.index(own)});
  uint32_t pos = sb.compute(ScalarOp::Where, DType::Int64,
                            {hit, sb.index(r0), sb.constant(DType::Int64, 0)});
  lowerer.addReduction(std::move(source), std::move(sb), pos, indices);
  LoweredPtr idx = lowerer.value(indices);

  VarRanges tRanges;
  tRanges[loopVar('t', 0)] = loopVarRange(row, lowerer.symRanges());
  lowerer.define(
      values,
      lowerer.pointwise(dtype, outSizes, 2, {idx}, [=, &sx](BodyBuilder &bb, const Exprs &o) {
        uint32_t t = emit(bb, *idx, o);
        Exprs at = along(o, sx.symbol(loopVar('t', 0)));
        return bb.load(in.buffer, dtype, dot(sx, at, in.strides, in.offset), {t}, tRanges);
      }));
  return Error::success();
}

const OpLowering kRows[] = {
    OpLowering{ops::aten_sum_default, &reduction},
    OpLowering{ops::aten_sum_dim_IntList, &reduction},
    OpLowering{ops::aten_prod_default, &reduction},
    OpLowering{ops::aten_prod_dim_int, &reduction},
    OpLowering{ops::aten_amax_default, &reduction},
    OpLowering{ops::aten_amin_default, &reduction},
    OpLowering{ops::aten_argmax_default, &reduction},
    OpLowering{ops::aten_argmin_default, &reduction},
    OpLowering{ops::aten_any_default, &reduction},
    OpLowering{ops::aten_any_dim, &reduction},
    OpLowering{ops::aten_any_dims, &reduction},
    OpLowering{ops::aten_cumsum_default, &cumsum},
    OpLowering{ops::aten_sort_default, &sortRows},
    OpLowering{ops::aten_topk_default, &sortRows},
};

} // namespace

void registerReductionLowerings(LoweringRegistry &r) { r.add(kRows); }

} // namespace gc::lower
