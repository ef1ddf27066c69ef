//===- View.cpp - Views, concatenation, padding, flips --------------------===//
//
// Views rewrite indices (a strided view where the index stays affine);
// cat and constant_pad_nd read their inputs under masks; flip reads backwards.
//
//===----------------------------------------------------------------------===//
#include "../GraphLowerer.h"

#include "gc/IR/ArgReader.h"
#include "gc/IR/OpId.h"

namespace gc::lower {

namespace {

/// Index map of a reshape: the row-major position, split along the base.
Exprs reshapeIndex(SymContext &sx, const Exprs &inSizes, const Exprs &outSizes, const Exprs &idx) {
  Exprs outStrides = contiguousStrides(sx, outSizes), inStrides = contiguousStrides(sx, inSizes);
  const SymExpr *linear = dot(sx, idx, outStrides, sx.constant(0));
  Exprs in;
  for (size_t d = 0; d < inSizes.size(); ++d) {
    const SymExpr *e = sx.floorDiv(linear, inStrides[d]);
    if (d > 0)
      e = sx.mod(e, inSizes[d]);
    in.push_back(e);
  }
  return in;
}

Error view(GraphLowerer &lowerer, const Node &n, const OpLowering &) {
  SymContext &sx = lowerer.syms();
  OpId op = n.op();
  LoweredPtr base = lowerer.value(n.arg("self")->value.values[0]);
  const TensorType &rt = lowerer.resultType(n);
  Exprs in = base->sizes, out = rt.sizes;
  size_t inRank = in.size(), outRank = out.size();
  ArgReader args(n.args());
  IndexMap map;
  if (isOneOf(op, {ops::aten_alias_default, ops::aten_detach_default, ops::aten_clone_default})) {
    lowerer.define(n.results()[0], base);
    return Error::success();
  } else if (op == ops::aten_view_default || op == ops::aten_reshape_default ||
             op == ops::aten__unsafe_view_default) {
    map = [in, out](SymContext &sx, const Exprs &idx) { return reshapeIndex(sx, in, out, idx); };
  } else if (op == ops::aten_permute_default) {
    std::vector<size_t> dims;
    for (int64_t d : lowerer.ints(n, "dims"))
      dims.push_back(wrap(d, inRank));
    map = [dims](SymContext &, const Exprs &idx) {
      Exprs r(idx.size());
      for (size_t j = 0; j < dims.size(); ++j)
        r[dims[j]] = idx[j];
      return r;
    };
  } else if (op == ops::aten_expand_default) {
    map = [in, out](SymContext &sx, const Exprs &idx) {
      size_t lead = out.size() - in.size();
      Exprs r;
      for (size_t d = 0; d < in.size(); ++d) {
        bool one = in[d]->isConst() && in[d]->constant() == 1;
        r.push_back(one ? sx.constant(0) : idx[lead + d]);
      }
      return r;
    };
  } else if (op == ops::aten_slice_Tensor) {
    size_t dim = wrap(args.integer("dim", 0), inRank);
    int64_t start = args.has("start") ? args.integer("start") : 0;
    int64_t step = args.integer("step", 1);
    const SymExpr *startE = sx.constant(start);
    if (start < 0) {
      startE = sx.add(in[dim], startE);
      if (in[dim]->isConst())
        startE = sx.constant(std::max<int64_t>(start + in[dim]->constant(), 0));
    } else if (in[dim]->isConst()) {
      startE = sx.constant(std::min(start, in[dim]->constant()));
    }
    map = [dim, startE, step](SymContext &sx, const Exprs &idx) {
      Exprs r = idx;
      r[dim] = sx.add(startE, sx.mul(idx[dim], sx.constant(step)));
      return r;
    };
  } else if (op == ops::aten_select_int) {
    size_t dim = wrap(args.integer("dim"), inRank);
    int64_t index = args.integer("index");
    const SymExpr *ie = index < 0 ? sx.add(in[dim], sx.constant(index)) : sx.constant(index);
    map = [dim, ie](SymContext &, const Exprs &idx) {
      Exprs r = idx;
      r.insert(r.begin() + dim, ie);
      return r;
    };
  } else if (isOneOf(op,
                     {ops::aten_squeeze_default, ops::aten_squeeze_dim, ops::aten_squeeze_dims})) {
    // Result dims are the base dims that are kept, in order; the dropped
    // ones have size 1 and read index 0.
    std::vector<bool> dropped(inRank, false);
    std::vector<size_t> candidates;
    if (op == ops::aten_squeeze_default) {
      for (size_t d = 0; d < inRank; ++d)
        candidates.push_back(d);
    } else {
      for (int64_t d : lowerer.ints(n, "dim"))
        candidates.push_back(wrap(d, inRank));
    }
    size_t drops = 0;
    for (size_t d : candidates)
      if (d < inRank && in[d]->isConst() && in[d]->constant() == 1 && !dropped[d]) {
        dropped[d] = true;
        ++drops;
      }
    if (inRank - drops != outRank)
      throw LowerError("cannot tell which dimensions squeeze removes");
    map = [dropped](SymContext &sx, const Exprs &idx) {
      Exprs r;
      size_t next = 0;
      for (bool drop : dropped)
        r.push_back(drop ? sx.constant(0) : idx[next++]);
      return r;
    };
  } else if (op == ops::aten_unsqueeze_default) {
    size_t dim = wrap(args.integer("dim"), inRank + 1);
    map = [dim](SymContext &, const Exprs &idx) {
      Exprs r = idx;
      r.erase(r.begin() + dim);
      return r;
    };
  }
  lowerer.define(n.results()[0], lowerer.makeView(base, out, std::move(map)));
  return Error::success();
}

/// A value that is not in a buffer is read through an as_strided view of
/// it, instead of being written into one first, while its body costs at
/// most this much: a padded buffer (a masked load, 7) is, so a convolution's
/// windows read the unpadded input where they lie. The windows read each
/// element once per kernel offset, so a costlier body is written once.
constexpr unsigned kStridedReadInlineCost = 8;

Error pad(GraphLowerer &lowerer, const Node &n, const OpLowering &row);

/// as_strided reads self's storage: torch's storage position p of self is
/// element `offset - storageOffset + p` of a buffer that holds self with
/// torch's own strides. A cheap value not in a buffer is read where its
/// own inputs lie: each position is split back into self's indices. Another
/// value laid out otherwise is first written into such a buffer. The result
/// is a strided view of it (no copy); its sizes, strides and offset are
/// those the shape function gave the result.
Error asStrided(GraphLowerer &lowerer, const Node &n, const OpLowering &row) {
  SymContext &sx = lowerer.syms();
  const Value *self = n.arg("self")->value.values[0];
  const TensorType &st = self->type().tensor, &rt = lowerer.resultType(n);
  for (const SymExpr *e : rt.strides)
    if (e->isConst() && e->constant() < 0)
      throw LowerError("negative strides are not supported");
  // Where every size and stride is known, the view must stay inside the
  // elements its storage holds: [0, last] from `start`.
  auto extent = [&](const Exprs &sizes, const Exprs &strides, const SymExpr *start) {
    const SymExpr *e = start;
    for (size_t d = 0; d < sizes.size(); ++d)
      e = sx.add(e, sx.mul(sx.sub(sizes[d], sx.constant(1)), strides[d]));
    return e;
  };
  bool empty = std::any_of(rt.sizes.begin(), rt.sizes.end(),
                           [](const SymExpr *e) { return e->isConst() && e->constant() == 0; });
  auto requireInside = [&](const SymExpr *offset, const SymExpr *last) {
    const SymExpr *viewLast = extent(rt.sizes, rt.strides, offset);
    if (!empty && offset->isConst() && viewLast->isConst() && last->isConst() &&
        (offset->constant() < 0 || viewLast->constant() > last->constant()))
      throw LowerError("the view reaches outside self's elements (elements " +
                       std::to_string(offset->constant()) + " to " +
                       std::to_string(viewLast->constant()) + " of " +
                       std::to_string(last->constant() + 1) + ")");
  };
  const SymExpr *shift = sx.sub(rt.storageOffset, st.storageOffset);
  LoweredPtr x = lowerer.value(self);
  // Windows of a padded value whose input costs more than a load (an
  // activation): the input is written out unpadded, where its producer's
  // kernel may take it, and the pad is read in place, as a masked load.
  const Node *def = self->definingNode();
  if (!x->view && x->cost > kStridedReadInlineCost && def &&
      def->op() == ops::aten_constant_pad_nd_default) {
    lowerer.realize(def->arg("self")->value.values[0]);
    GC_RETURN_IF_ERROR(pad(lowerer, *def, row));
    x = lowerer.value(self);
  }
  std::optional<StridedView> base = x->view;
  if (!base || base->strides != st.strides) {
    if (denseStrides(sx, st) != st.strides)
      throw LowerError("self is not dense; its storage is not known here");
    // A dim of size 1 is index 0 whatever its stride; every other stride
    // divides a position.
    auto one = [](const SymExpr *e) { return e->isConst() && e->constant() == 1; };
    bool divisible = true;
    for (size_t d = 0; d < st.rank(); ++d)
      divisible &= one(st.sizes[d]) || !st.strides[d]->isConst() || st.strides[d]->constant() > 0;
    if (!base && divisible && x->cost <= kStridedReadInlineCost) {
      requireInside(shift, extent(st.sizes, st.strides, sx.constant(0)));
      Exprs sizes = st.sizes, strides = st.strides, viewStrides = rt.strides;
      lowerer.define(n.results()[0],
                     lowerer.makeView(x, rt.sizes, [=](SymContext &s, const Exprs &idx) {
                       const SymExpr *p = dot(s, idx, viewStrides, shift);
                       Exprs in;
                       for (size_t d = 0; d < sizes.size(); ++d)
                         in.push_back(one(sizes[d]) ? s.constant(0)
                                                    : s.mod(s.floorDiv(p, strides[d]), sizes[d]));
                       return in;
                     }));
      return Error::success();
    }
    uint32_t buf = lowerer.addBuffer(self->name() + "_storage", BufferKind::Intermediate, x->dtype,
                                     x->sizes, st.strides, false);
    lowerer.writePointwise(self->name() + "_storage", lowerer.nodeName(n), *x, buf);
    base = StridedView{buf, x->sizes, st.strides, sx.constant(0)};
  }
  const SymExpr *offset = sx.add(base->offset, shift);
  const Buffer &b = lowerer.buffer(base->buffer);
  requireInside(offset, extent(b.sizes, b.strides, sx.constant(0)));
  lowerer.define(n.results()[0], lowerer.stridedLowered(
                                     x->dtype, StridedView{base->buffer, rt.sizes, rt.strides,
                                                           lowerer.builder({}).simplify(offset)}));
  return Error::success();
}

Error cat(GraphLowerer &lowerer, const Node &n, const OpLowering &) {
  SymContext &sx = lowerer.syms();
  const TensorType &rt = lowerer.resultType(n);
  int64_t rank = static_cast<int64_t>(rt.rank());
  int64_t wrapped = ArgReader(n.args()).integer("dim", 0);
  wrapped += wrapped < 0 ? rank : 0;
  if (wrapped < 0 || wrapped >= rank)
    throw LowerError("dim is out of range");
  size_t dim = static_cast<size_t>(wrapped);
  std::vector<LoweredPtr> parts;
  for (const Value *v : n.arg("tensors")->value.values) {
    LoweredPtr l = lowerer.value(v);
    bool legacyEmpty = l->sizes.size() == 1 && l->sizes[0]->isConst() &&
                       l->sizes[0]->constant() == 0 && rt.rank() != 1;
    if (!legacyEmpty)
      parts.push_back(l);
  }
  Exprs offsets{sx.constant(0)};
  for (const LoweredPtr &p : parts)
    offsets.push_back(sx.add(offsets.back(), p->sizes[dim]));
  DType dtype = rt.dtype;
  Loader f = [parts, offsets, dim, dtype](BodyBuilder &bb, const Exprs &idx) {
    SymContext &sx = bb.syms();
    std::optional<uint32_t> acc;
    for (size_t k = parts.size(); k-- > 0;) {
      const SymExpr *lo = k == 0 ? nullptr : offsets[k];
      const SymExpr *hi = k + 1 == parts.size() ? nullptr : offsets[k + 1];
      uint32_t cond = emitInRange(bb, idx[dim], lo, hi);
      Exprs shifted = idx;
      shifted[dim] = sx.sub(idx[dim], offsets[k]);
      const LoweredPtr &part = parts[k];
      auto inner = [&] { return emit(bb, *part, shifted); };
      uint32_t otherwise = acc ? *acc : bb.constant(dtype, 0);
      acc = emitMasked(bb, cond, dtype, inner, otherwise);
    }
    return acc ? *acc : bb.constant(dtype, 0);
  };
  lowerer.define(n.results()[0],
                 lowerer.pointwise(dtype, rt.sizes, 4 * static_cast<unsigned>(parts.size()), parts,
                                   std::move(f)));
  return Error::success();
}

Error pad(GraphLowerer &lowerer, const Node &n, const OpLowering &) {
  LoweredPtr x = lowerer.value(n.arg("self")->value.values[0]);
  std::vector<int64_t> p = lowerer.ints(n, "pad");
  std::optional<Number> fill = numberArg(n.arg("value"));
  double fillValue = fill ? fill->value : 0;
  const TensorType &rt = lowerer.resultType(n);
  size_t rank = rt.rank();
  if (p.size() % 2 || p.size() / 2 > rank)
    throw LowerError("pad has " + std::to_string(p.size()) + " entries");
  std::vector<int64_t> low(rank, 0);
  for (size_t k = 0; k < p.size() / 2; ++k)
    low[rank - 1 - k] = p[2 * k];
  DType dtype = rt.dtype;
  Exprs outSizes = rt.sizes;
  Loader f = [x, low, outSizes, dtype, fillValue](BodyBuilder &bb, const Exprs &idx) {
    SymContext &sx = bb.syms();
    Exprs in;
    std::optional<uint32_t> cond;
    for (size_t d = 0; d < idx.size(); ++d) {
      in.push_back(sx.sub(idx[d], sx.constant(low[d])));
      if (low[d] == 0 && x->sizes[d] == outSizes[d])
        continue;
      uint32_t c = emitInRange(bb, in[d], sx.constant(0), x->sizes[d]);
      cond = cond ? bb.compute(ScalarOp::LogicalAnd, DType::Bool, {*cond, c}) : c;
    }
    if (!cond)
      return bb.cast(emit(bb, *x, in), dtype);
    return emitMasked(bb, *cond, dtype, [&] { return emit(bb, *x, in); },
                      bb.cast(bb.constant(DType::Float64, fillValue), dtype));
  };
  lowerer.define(n.results()[0], lowerer.pointwise(dtype, rt.sizes, 6, {x}, std::move(f)));
  return Error::success();
}

/// flip reads each flipped dimension backwards. Not a strided view (its
/// strides would be negative, which the externs and bindings do not take):
/// a body its consumers inline, realized like any pointwise value.
Error flip(GraphLowerer &lowerer, const Node &n, const OpLowering &) {
  SymContext &sx = lowerer.syms();
  LoweredPtr x = lowerer.value(n.arg("self")->value.values[0]);
  size_t rank = x->sizes.size();
  std::vector<bool> flipped(rank, false);
  for (int64_t d : lowerer.ints(n, "dims"))
    flipped[wrap(d, rank)] = true;
  Exprs sizes = x->sizes;
  lowerer.define(
      n.results()[0],
      lowerer.pointwise(x->dtype, sizes, 1, {x}, [=, &sx](BodyBuilder &b, const Exprs &idx) {
        Exprs in = idx;
        for (size_t d = 0; d < rank; ++d)
          if (flipped[d])
            in[d] = sx.sub(sx.sub(sizes[d], sx.constant(1)), idx[d]);
        return emit(b, *x, in);
      }));
  return Error::success();
}

#define GC_VIEW(NAME) OpLowering{.op = NAME, .lower = &view, .view = true}

const OpLowering kRows[] = {
    GC_VIEW(ops::aten_view_default),
    GC_VIEW(ops::aten_reshape_default),
    GC_VIEW(ops::aten__unsafe_view_default),
    GC_VIEW(ops::aten_permute_default),
    GC_VIEW(ops::aten_expand_default),
    GC_VIEW(ops::aten_slice_Tensor),
    GC_VIEW(ops::aten_select_int),
    GC_VIEW(ops::aten_squeeze_default),
    GC_VIEW(ops::aten_squeeze_dim),
    GC_VIEW(ops::aten_squeeze_dims),
    GC_VIEW(ops::aten_unsqueeze_default),
    GC_VIEW(ops::aten_alias_default),
    GC_VIEW(ops::aten_detach_default),
    GC_VIEW(ops::aten_clone_default),
    OpLowering{ops::aten_as_strided_default, &asStrided},
    OpLowering{ops::aten_cat_default, &cat},
    OpLowering{ops::aten_constant_pad_nd_default, &pad},
    OpLowering{ops::aten_flip_default, &flip},
};

#undef GC_VIEW

} // namespace

void registerViewLowerings(LoweringRegistry &r) { r.add(kRows); }

} // namespace gc::lower
