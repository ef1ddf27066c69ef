//===- Indexing.cpp - Gathers and scatters --------------------------------===//
//
// index.Tensor and gather as indirect loads; scatter and index_put as a copy
// of self and scattering stores.
//
//===----------------------------------------------------------------------===//
#include "../GraphLowerer.h"

#include "gc/IR/ArgReader.h"

#include <map>

namespace gc::lower {

namespace {

Error index(GraphLowerer &lowerer, const Node &n, const OpLowering &) {
  const Value *self = n.arg("self")->value.values[0];
  const std::vector<Value *> &indices = n.arg("indices")->value.values;
  for (const Value *v : indices)
    // Boolean masks select a data-dependent number of elements.
    if (v && (v->type().tensor.dtype == DType::Bool || v->type().tensor.dtype == DType::UInt8))
      return lowerer.fallback(n);
  StridedView base = lowerer.realize(self);
  DType dtype = lowerer.value(self)->dtype;
  const TensorType &rt = lowerer.resultType(n);
  size_t selfRank = base.sizes.size();
  std::vector<size_t> indexed;
  std::vector<LoweredPtr> idxVals;
  for (size_t d = 0; d < indices.size(); ++d)
    if (indices[d]) {
      indexed.push_back(d);
      idxVals.push_back(lowerer.value(indices[d]));
    }
  if (indexed.empty())
    throw LowerError("index.Tensor without index tensors");
  size_t bRank = rt.rank() + indexed.size() - selfRank;
  bool adjacent = indexed.back() - indexed.front() + 1 == indexed.size();
  size_t bStart = adjacent ? indexed.front() : 0;
  Loader f = [base, indexed, idxVals, bRank, bStart, dtype](BodyBuilder &bb, const Exprs &idx) {
    SymContext &sx = bb.syms();
    Exprs bIdx(idx.begin() + bStart, idx.begin() + bStart + bRank);
    Exprs in(base.sizes.size(), nullptr);
    std::vector<uint32_t> indirect;
    VarRanges tRanges;
    for (size_t k = 0; k < indexed.size(); ++k) {
      size_t d = indexed[k];
      uint32_t t = bb.cast(emitBroadcast(bb, *idxVals[k], bIdx), DType::Int64);
      uint32_t neg = bb.compute(ScalarOp::Lt, DType::Bool, {t, bb.constant(DType::Int64, 0)});
      uint32_t wrapped = bb.compute(ScalarOp::Add, DType::Int64, {t, bb.index(base.sizes[d])});
      indirect.push_back(bb.compute(ScalarOp::Where, DType::Int64, {neg, wrapped, t}));
      in[d] = sx.symbol(loopVar('t', k));
      tRanges[loopVar('t', k)] = loopVarRange(base.sizes[d], bb.ranges());
    }
    size_t next = 0;
    for (size_t d = 0; d < in.size(); ++d) {
      if (in[d])
        continue;
      if (next == bStart)
        next += bRank;
      in[d] = idx[next++];
    }
    return bb.load(base.buffer, dtype, dot(sx, in, base.strides, base.offset), std::move(indirect),
                   tRanges);
  };
  lowerer.define(n.results()[0],
                 lowerer.pointwise(dtype, rt.sizes, 1 + 4 * static_cast<unsigned>(indexed.size()),
                                   idxVals, std::move(f)));
  return Error::success();
}

/// gather reads self where the index says along `dim` (no bounds check, as
/// index.Tensor: a bad index reads another element, or past the buffer).
Error gather(GraphLowerer &lowerer, const Node &n, const OpLowering &) {
  const Value *self = n.arg("self")->value.values[0];
  LoweredPtr index = lowerer.value(n.arg("index")->value.values[0]);
  StridedView base = lowerer.realize(self);
  size_t rank = base.sizes.size();
  size_t dim = wrap(ArgReader(n.args()).integer("dim"), rank);
  if (index->sizes.size() != rank)
    throw LowerError("gather needs an index of self's rank");
  DType dtype = lowerer.value(self)->dtype;
  Loader f = [base, index, dim, rank, dtype](BodyBuilder &bb, const Exprs &idx) {
    SymContext &sx = bb.syms();
    uint32_t t = bb.cast(emit(bb, *index, idx), DType::Int64);
    if (rank == 0)
      return bb.load(base.buffer, dtype, base.offset);
    Exprs in = idx;
    in[dim] = sx.symbol(loopVar('t', 0));
    VarRanges tRanges{{loopVar('t', 0), loopVarRange(base.sizes[dim], bb.ranges())}};
    return bb.load(base.buffer, dtype, dot(sx, in, base.strides, base.offset), {t}, tRanges);
  };
  lowerer.define(n.results()[0],
                 lowerer.pointwise(dtype, lowerer.resultType(n).sizes, 2, {index}, std::move(f)));
  return Error::success();
}

/// scatter.src, scatter_add and scatter_reduce.two: a copy of self in the
/// result's buffer, then scattering nodes over the index's points that
/// write (or combine) src's element at the same point into the element the
/// index names along `dim`. Indices are not checked (see gather).
Error scatter(GraphLowerer &lowerer, const Node &n, const OpLowering &) {
  SymContext &sx = lowerer.syms();
  ArgReader args(n.args());
  LoweredPtr self = lowerer.value(n.arg("self")->value.values[0]);
  LoweredPtr index = lowerer.value(n.arg("index")->value.values[0]);
  LoweredPtr src = lowerer.value(n.arg("src")->value.values[0]);
  size_t rank = self->sizes.size();
  size_t dim = wrap(args.integer("dim"), rank);
  if (index->sizes.size() != rank)
    throw LowerError("scatter needs an index of self's rank");
  std::string reduce = n.op() == ops::aten_scatter_add_default ? "sum"
                       : n.op() == ops::aten_scatter_src     ? ""
                                                             : args.string("reduce", "");
  bool includeSelf = args.boolean("include_self", true);
  static const std::map<std::string, StoreCombine> kCombines = {
      {"", StoreCombine::None},     {"sum", StoreCombine::Add}, {"mean", StoreCombine::Add},
      {"prod", StoreCombine::Mul},  {"amax", StoreCombine::Max}, {"amin", StoreCombine::Min}};
  auto combine = kCombines.find(reduce);
  if (combine == kCombines.end())
    throw LowerError("reduce '" + reduce + "' is not one of sum, prod, mean, amax, amin");
  const Value *result = n.results()[0];
  const TensorType &rt = result->type().tensor;
  DType dtype = rt.dtype;
  const std::string &name = result->name();
  Exprs ranges = index->sizes;
  auto fromSrc = [&](BodyBuilder &b, const Exprs &iv) { return emit(b, *src, iv); };
  auto constant = [&](double c) {
    return [c](BodyBuilder &b, const Exprs &) { return b.constant(DType::Float64, c); };
  };
  // One scattering node into `buffer`.
  auto pass = [&](const std::string &suffix, uint32_t buffer, StoreCombine how,
                  const std::function<uint32_t(BodyBuilder &, const Exprs &)> &valueOf) {
    BodyBuilder b = lowerer.builder(ranges);
    Exprs iv = loopVars(sx, 'i', ranges.size());
    uint32_t t = b.cast(emit(b, *index, iv), DType::Int64);
    uint32_t v = valueOf(b, iv);
    Exprs target = iv;
    if (rank > 0)
      target[dim] = sx.symbol(loopVar('t', 0));
    lowerer.addScatter(name + suffix, name, buffer, ranges, std::move(b), v, {t}, target, how);
  };
  // A buffer holding a copy of self, where the scatters go (self's own
  // buffer, already holding it, when the scatter updates a mutated buffer
  // in place).
  auto copyOfSelf = [&](uint32_t buffer, bool inPlace) {
    if (!inPlace)
      lowerer.writePointwise(lowerer.buffer(buffer).name + "_self", name, *self, buffer);
    // Without self, an element the index names starts from the
    // reduction's identity; for amax and amin one of its own values
    // serves (max(x, x) = x), which needs no extreme constant.
    if (!includeSelf && combine->second != StoreCombine::None)
      pass("_init", buffer, StoreCombine::None,
           reduce == "amax" || reduce == "amin" ? std::function(fromSrc)
                                                : std::function(constant(reduce == "prod")));
  };
  if (reduce != "mean") {
    std::optional<uint32_t> inPlace = lowerer.inPlaceBuffer(result, n.arg("self")->value.values[0]);
    uint32_t buf = inPlace ? *inPlace : lowerer.resultBuffer(result, rt, false);
    copyOfSelf(buf, inPlace.has_value());
    pass("", buf, combine->second, fromSrc);
    lowerer.setValue(result, lowerer.stridedLowered(dtype, StridedView{buf, rt.sizes,
                                                                       lowerer.buffer(buf).strides,
                                                                       sx.constant(0)}));
    return Error::success();
  }
  // mean: the sum over self (if included) and src, divided by how many
  // values went in (at least 1), with floor division for integers, as
  // torch computes it.
  Exprs strides = contiguousStrides(sx, rt.sizes);
  uint32_t sums =
      lowerer.addBuffer(name + "_sum", BufferKind::Intermediate, dtype, rt.sizes, strides, false);
  uint32_t counts =
      lowerer.addBuffer(name + "_count", BufferKind::Intermediate, dtype, rt.sizes, strides, false);
  copyOfSelf(sums, false);
  pass("", sums, StoreCombine::Add, fromSrc);
  LoweredPtr start = lowerer.pointwise(dtype, rt.sizes, 0, {},
                                       [dtype, includeSelf](BodyBuilder &b, const Exprs &) {
                                         return b.constant(dtype, includeSelf ? 1 : 0);
                                       });
  lowerer.writePointwise(name + "_count_init", name, *start, counts);
  pass("_count", counts, StoreCombine::Add, constant(1));
  LoweredPtr sumL =
      lowerer.stridedLowered(dtype, StridedView{sums, rt.sizes, strides, sx.constant(0)});
  LoweredPtr countL =
      lowerer.stridedLowered(dtype, StridedView{counts, rt.sizes, strides, sx.constant(0)});
  ScalarOp div = isFloatingPoint(dtype) ? ScalarOp::Div : ScalarOp::FloorDiv;
  lowerer.define(
      result, lowerer.pointwise(
                  dtype, rt.sizes, 4, {sumL, countL},
                  [sumL, countL, dtype, div](BodyBuilder &b, const Exprs &idx) {
                    uint32_t c = emit(b, *countL, idx);
                    uint32_t zero = b.compute(ScalarOp::Eq, DType::Bool, {c, b.constant(dtype, 0)});
                    c = b.compute(ScalarOp::Where, dtype, {zero, b.constant(dtype, 1), c});
                    return b.compute(div, dtype, {emit(b, *sumL, idx), c});
                  }));
  return Error::success();
}

/// index_put: a copy of self (none when it updates a mutated buffer in
/// place: GraphLowerer::inPlaceBuffer), then one scattering node over the points of
/// self[indices] (the shape index.Tensor gives) that writes (accumulate:
/// adds) the broadcast values there. Negative indices count from the end,
/// as in index.Tensor; others are not checked.
Error indexPut(GraphLowerer &lowerer, const Node &n, const OpLowering &) {
  SymContext &sx = lowerer.syms();
  LoweredPtr self = lowerer.value(n.arg("self")->value.values[0]);
  LoweredPtr values = lowerer.value(n.arg("values")->value.values[0]);
  const std::vector<Value *> &indices = n.arg("indices")->value.values;
  for (const Value *v : indices)
    // Boolean masks select a data-dependent number of elements.
    if (v && (v->type().tensor.dtype == DType::Bool || v->type().tensor.dtype == DType::UInt8))
      return lowerer.fallback(n);
  bool accumulate = ArgReader(n.args()).boolean("accumulate", false);
  size_t rank = self->sizes.size();
  if (indices.size() > rank)
    throw LowerError("too many indices for a tensor of rank " + std::to_string(rank));
  std::vector<size_t> indexed;
  std::vector<LoweredPtr> idxVals;
  Exprs broadcast;
  for (size_t d = 0; d < indices.size(); ++d) {
    if (!indices[d])
      continue;
    indexed.push_back(d);
    idxVals.push_back(lowerer.value(indices[d]));
    // Index tensors broadcast together, trailing dims lined up.
    const Exprs &s = idxVals.back()->sizes;
    if (s.size() > broadcast.size())
      broadcast.insert(broadcast.begin(), s.size() - broadcast.size(), sx.constant(1));
    for (size_t k = 0; k < s.size(); ++k) {
      const SymExpr *&b = broadcast[broadcast.size() - s.size() + k];
      if (b->isConst() && b->constant() == 1)
        b = s[k];
    }
  }
  if (indexed.empty())
    throw LowerError("index_put without index tensors");
  size_t bRank = broadcast.size();
  bool adjacent = indexed.back() - indexed.front() + 1 == indexed.size();
  size_t bStart = adjacent ? indexed.front() : 0;
  // The points: self's dims before the indexed block, the broadcast index
  // dims, then self's other dims.
  Exprs ranges(self->sizes.begin(), self->sizes.begin() + bStart);
  ranges.insert(ranges.end(), broadcast.begin(), broadcast.end());
  std::vector<bool> isIndexed(rank, false);
  for (size_t d : indexed)
    isIndexed[d] = true;
  for (size_t d = bStart; d < rank; ++d)
    if (!isIndexed[d])
      ranges.push_back(self->sizes[d]);

  const Value *result = n.results()[0];
  const TensorType &rt = result->type().tensor;
  std::optional<uint32_t> inPlace = lowerer.inPlaceBuffer(result, n.arg("self")->value.values[0]);
  uint32_t buf = inPlace ? *inPlace : lowerer.resultBuffer(result, rt, false);
  if (!inPlace)
    lowerer.writePointwise(lowerer.buffer(buf).name + "_self", result->name(), *self, buf);
  BodyBuilder b = lowerer.builder(ranges);
  Exprs iv = loopVars(sx, 'i', ranges.size());
  Exprs bIdx(iv.begin() + bStart, iv.begin() + bStart + bRank);
  std::vector<uint32_t> at;
  Exprs target(rank, nullptr);
  for (size_t k = 0; k < indexed.size(); ++k) {
    size_t d = indexed[k];
    uint32_t t = b.cast(emitBroadcast(b, *idxVals[k], bIdx), DType::Int64);
    uint32_t neg = b.compute(ScalarOp::Lt, DType::Bool, {t, b.constant(DType::Int64, 0)});
    uint32_t wrapped = b.compute(ScalarOp::Add, DType::Int64, {t, b.index(self->sizes[d])});
    at.push_back(b.compute(ScalarOp::Where, DType::Int64, {neg, wrapped, t}));
    target[d] = sx.symbol(loopVar('t', k));
  }
  size_t next = 0;
  for (size_t d = 0; d < rank; ++d) {
    if (target[d])
      continue;
    if (next == bStart)
      next += bRank;
    target[d] = iv[next++];
  }
  uint32_t v = emitBroadcast(b, *values, iv);
  lowerer.addScatter(result->name(), result->name(), buf, ranges, std::move(b), v, std::move(at),
                     target, accumulate ? StoreCombine::Add : StoreCombine::None);
  lowerer.setValue(result, lowerer.stridedLowered(rt.dtype, StridedView{buf, rt.sizes,
                                                                        lowerer.buffer(buf).strides,
                                                                        sx.constant(0)}));
  return Error::success();
}

const OpLowering kRows[] = {
    OpLowering{ops::aten_index_Tensor, &index},
    OpLowering{ops::aten_gather_default, &gather},
    OpLowering{ops::aten_scatter_src, &scatter},
    OpLowering{ops::aten_scatter_add_default, &scatter},
    OpLowering{ops::aten_scatter_reduce_two, &scatter},
    OpLowering{ops::aten_index_put_default, &indexPut},
};

} // namespace

void registerIndexingLowerings(LoweringRegistry &r) { r.add(kRows); }

} // namespace gc::lower
