//===- Emit.cpp - Building blocks of decompositions -----------------------===//
#include "gc/Ops/Emit.h"

#include "gc/Ops/ShapeInference.h"

#include <algorithm>
#include <numeric>

namespace gc::decompose {

//===----------------------------------------------------------------------===//
// Numbers, sizes and dims
//===----------------------------------------------------------------------===//

ArgValue Number::arg() const {
  switch (kind) {
  case Kind::Bool:
    return ArgValue(i != 0);
  case Kind::Int:
    return ArgValue(i);
  case Kind::Float:
    return ArgValue(f);
  }
  return ArgValue(f);
}

Number Number::as(DType dtype) const {
  if (dtype == DType::Bool)
    return {Kind::Bool, value() != 0 ? 1 : 0, value() != 0 ? 1.0 : 0.0};
  if (!isFloatingPoint(dtype))
    return integer(kind == Kind::Float ? static_cast<int64_t>(f) : i);
  return real(value());
}

DType Number::promotionDType(DType other) const {
  // A 0-dim tensor of the other operand's dtype promotes like the number
  // whenever the number's category (bool < int < float) is not higher.
  switch (kind) {
  case Kind::Bool:
    return other;
  case Kind::Int:
    return other == DType::Bool ? DType::Int64 : other;
  case Kind::Float:
    return isFloatingPoint(other) ? other : DType::Float32;
  }
  return other;
}

Number number(const RewriteContext &ctx, std::string_view name) {
  ArgValue a = ctx.passThrough(name);
  switch (a.arg.kind) {
  case ArgKind::Bool:
    return {Number::Kind::Bool, a.arg.ints[0], static_cast<double>(a.arg.ints[0])};
  case ArgKind::Int:
    return Number::integer(a.arg.ints[0]);
  case ArgKind::SymInt:
    if (!a.arg.values[0])
      return Number::integer(a.arg.ints[0]);
    break;
  case ArgKind::Float:
    return Number::real(a.arg.floats[0]);
  default:
    break;
  }
  rewriteFail("argument '" + std::string(name) + "' is not a constant number");
}

std::optional<Number> optNumber(const RewriteContext &ctx, std::string_view name) {
  if (!ctx.has(name))
    return std::nullopt;
  return number(ctx, name);
}

Dims intsOfLength(const RewriteContext &ctx, std::string_view name, size_t n, int64_t dflt) {
  if (!ctx.has(name))
    return Dims(n, dflt);
  Dims v = ctx.ints(name);
  if (v.size() == 1)
    v.assign(n, v[0]);
  if (v.size() != n)
    rewriteFail(std::string(name) + " must have " + std::to_string(n) + " entries");
  return v;
}

bool isTensorArg(const RewriteContext &ctx, std::string_view name) {
  const NamedArg *a = ctx.find(name);
  return a && a->value.kind == ArgKind::Tensor;
}

const TensorType &typeOf(const Value *v) {
  if (!v->type().isTensor())
    rewriteFail("%" + v->name() + " is not a tensor");
  return v->type().tensor;
}

const Sizes &sizesOf(const Value *v) { return typeOf(v).sizes; }

int64_t rankOf(const Value *v) { return static_cast<int64_t>(typeOf(v).rank()); }

const SymExpr *sizeProduct(SymContext &syms, const Sizes &sizes) {
  const SymExpr *p = syms.constant(1);
  for (const SymExpr *s : sizes)
    p = syms.mul(p, s);
  return p;
}

int64_t staticSize(const SymExpr *size, std::string_view what) {
  if (!size->isConst())
    rewriteFail(std::string(what) + " has the symbolic size " + size->str() +
                "; this decomposition needs a static one");
  return size->constant();
}

Dims wrapDims(std::optional<Dims> dims, int64_t rank) {
  Dims out;
  // A 0-dim tensor has nothing to name; dim 0 or -1 reduce it as a whole.
  if (rank == 0) {
    for (int64_t d : dims.value_or(Dims{}))
      wrapDimension(d, rank);
    return out;
  }
  if (!dims || dims->empty()) {
    out.resize(rank);
    std::iota(out.begin(), out.end(), 0);
    return out;
  }
  for (int64_t d : *dims)
    out.push_back(wrapDimension(d, rank));
  return out;
}

DType computeDType(DType t) {
  if (t == DType::Float16 || t == DType::BFloat16 || !isFloatingPoint(t))
    return DType::Float32;
  return t;
}

namespace {

std::string sizesString(const Sizes &sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i)
    s += (i ? ", " : "") + sizes[i]->str();
  return s + "]";
}

bool isOne(const SymExpr *e) { return e->isConst() && e->constant() == 1; }

/// a < b for sizes; symbolic pairs that differ count as "less", which makes
/// viewStrides consume more dims and then fail its equality check: a copy
/// instead of a view, never a wrong view.
bool lessThan(const SymExpr *a, const SymExpr *b) {
  if (a->isConst() && b->isConst())
    return a->constant() < b->constant();
  return a != b;
}

} // namespace

std::optional<Sizes> viewStrides(SymContext &syms, const TensorType &t, const Sizes &sizes) {
  const Sizes &old = t.sizes;
  const SymExpr *numel = sizeProduct(syms, old);
  // Contiguous inputs, and inputs of 0 or 1 elements, view as anything.
  if (t.strides == contiguousStrides(syms, old) || (numel->isConst() && numel->constant() <= 1))
    return contiguousStrides(syms, sizes);
  if (old.empty())
    return std::nullopt;
  // torch's rule: the input splits into chunks of dims that are contiguous
  // with each other; each chunk must be covered exactly by consecutive new
  // dims, which then get strides within that chunk.
  Sizes strides(sizes.size());
  int64_t viewDim = static_cast<int64_t>(sizes.size()) - 1;
  const SymExpr *chunkBase = t.strides.back();
  const SymExpr *tensorNumel = syms.constant(1), *viewNumel = syms.constant(1);
  for (int64_t d = static_cast<int64_t>(old.size()) - 1; d >= 0; --d) {
    tensorNumel = syms.mul(tensorNumel, old[d]);
    if (d == 0 || (!isOne(old[d - 1]) && t.strides[d - 1] != syms.mul(tensorNumel, chunkBase))) {
      while (viewDim >= 0 && (lessThan(viewNumel, tensorNumel) || isOne(sizes[viewDim]))) {
        strides[viewDim] = syms.mul(viewNumel, chunkBase);
        viewNumel = syms.mul(viewNumel, sizes[viewDim]);
        --viewDim;
      }
      if (viewNumel != tensorNumel)
        return std::nullopt;
      if (d > 0) {
        chunkBase = t.strides[d - 1];
        tensorNumel = viewNumel = syms.constant(1);
      }
    }
  }
  if (viewDim != -1)
    return std::nullopt;
  return strides;
}

Results finish(RewriteContext &ctx, std::vector<Value *> values) {
  const Node &old = ctx.node();
  if (values.size() != old.results().size())
    rewriteFail("the decomposition gives " + std::to_string(values.size()) + " values for " +
                std::to_string(old.results().size()) + " results");
  Emit e(ctx);
  for (size_t i = 0; i < values.size(); ++i) {
    const Type &want = old.results()[i]->type();
    if (!values[i] || !want.isTensor())
      continue;
    const TensorType &got = typeOf(values[i]);
    if (got.sizes != want.tensor.sizes)
      rewriteFail("the decomposition gives sizes " + sizesString(got.sizes) + " for %" +
                  old.results()[i]->name() + ", which has " + sizesString(want.tensor.sizes));
    values[i] = e.cast(values[i], want.tensor.dtype);
  }
  return values;
}

//===----------------------------------------------------------------------===//
// Emit
//===----------------------------------------------------------------------===//

namespace {

Device resultDevice(const RewriteContext &ctx) {
  const auto &results = ctx.node().results();
  if (!results.empty() && results[0]->type().isTensor())
    return results[0]->type().tensor.device;
  return {};
}

ArgValue deviceArg(Device d) {
  Arg a;
  a.kind = ArgKind::Device;
  a.device = d;
  return ArgValue(std::move(a));
}

ArgValue memoryFormatArg(MemoryFormat f) {
  Arg a;
  a.kind = ArgKind::MemoryFormat;
  a.ints = {static_cast<int64_t>(f)};
  return ArgValue(std::move(a));
}

/// dims as an argument of a reduction: None (every dim) for none at all.
ArgValue dimsArg(const Dims &dims) { return dims.empty() ? ArgValue::none() : ArgValue(dims); }

} // namespace

Emit::Emit(RewriteContext &ctx, Device device) : b_(ctx.builder()), device_(device) {}

Emit::Emit(RewriteContext &ctx) : Emit(ctx, resultDevice(ctx)) {}

Value *Emit::op(OpId op, std::vector<std::pair<std::string, ArgValue>> args) {
  return b_.create1(op, std::move(args));
}

Value *Emit::unary(OpId unaryOp, Value *x) { return op(unaryOp, {{"self", x}}); }

Value *Emit::add(Value *a, ArgValue b) {
  return op(ops::aten_add_Tensor, {{"self", a}, {"other", b}});
}
Value *Emit::sub(Value *a, ArgValue b) {
  return op(ops::aten_sub_Tensor, {{"self", a}, {"other", b}});
}
Value *Emit::mul(Value *a, ArgValue b) {
  return op(ops::aten_mul_Tensor, {{"self", a}, {"other", b}});
}
Value *Emit::div(Value *a, ArgValue b) {
  return op(ops::aten_div_Tensor, {{"self", a}, {"other", b}});
}

namespace {
// Indexed by Cmp.
constexpr OpId kTensorCompare[] = {ops::aten_eq_Tensor, ops::aten_ne_Tensor, ops::aten_lt_Tensor,
                                   ops::aten_le_Tensor, ops::aten_gt_Tensor, ops::aten_ge_Tensor};
constexpr OpId kScalarCompare[] = {ops::aten_eq_Scalar, ops::aten_ne_Scalar, ops::aten_lt_Scalar,
                                   ops::aten_le_Scalar, ops::aten_gt_Scalar, ops::aten_ge_Scalar};
} // namespace

Value *Emit::compare(Cmp cmp, Value *a, Value *b) {
  return op(kTensorCompare[static_cast<size_t>(cmp)], {{"self", a}, {"other", b}});
}

Value *Emit::compare(Cmp cmp, Value *a, Number b) {
  return op(kScalarCompare[static_cast<size_t>(cmp)], {{"self", a}, {"other", b.arg()}});
}

Value *Emit::where(Value *cond, Value *a, Value *b) {
  return op(ops::aten_where_self, {{"condition", cond}, {"self", a}, {"other", b}});
}

Value *Emit::maximum(Value *a, Value *b) {
  return op(ops::aten_maximum_default, {{"self", a}, {"other", b}});
}

Value *Emit::minimum(Value *a, Value *b) {
  return op(ops::aten_minimum_default, {{"self", a}, {"other", b}});
}

Value *Emit::logicalNot(Value *x) { return unary(ops::aten_logical_not_default, x); }

Value *Emit::cast(Value *x, DType dtype) {
  if (typeOf(x).dtype == dtype)
    return x;
  return op(ops::aten__to_copy_default, {{"self", x}, {"dtype", dtype}});
}

Value *Emit::scalar(Number v, DType dtype) { return full({}, v, dtype); }

Value *Emit::wrapNumber(Number v, DType other) {
  DType t = v.promotionDType(other);
  return scalar(v.as(t), t);
}

Value *Emit::full(const Sizes &sizes, Number v, DType dtype) {
  Dims ints;
  for (const SymExpr *s : sizes)
    ints.push_back(staticSize(s, "a created tensor"));
  return op(ops::aten_full_default, {{"size", ints},
                                  {"fill_value", v.as(dtype).arg()},
                                  {"dtype", dtype},
                                  {"device", deviceArg(device_)}});
}

Value *Emit::fullLike(Value *x, Number v, DType dtype) {
  const Sizes &sizes = sizesOf(x);
  if (std::all_of(sizes.begin(), sizes.end(), [](const SymExpr *s) { return s->isConst(); }))
    return full(sizes, v, dtype);
  Value *s = scalar(v, dtype);
  return where(allTrueLike(x), s, s);
}

Value *Emit::allTrueLike(Value *x) {
  // isnan is defined for every dtype; "nan or not nan" holds everywhere.
  Value *nan = unary(ops::aten_isnan_default, x);
  return op(ops::aten_logical_or_default, {{"self", nan}, {"other", logicalNot(nan)}});
}

Value *Emit::arange(int64_t n) {
  return op(ops::aten_arange_start_step, {{"start", int64_t(0)},
                                       {"end", n},
                                       {"step", int64_t(1)},
                                       {"dtype", DType::Int64},
                                       {"device", deviceArg(device_)}});
}

Value *Emit::sum(Value *x, const Dims &dims, bool keepdim, std::optional<DType> dtype) {
  std::vector<std::pair<std::string, ArgValue>> args = {
      {"self", x}, {"dim", dimsArg(dims)}, {"keepdim", keepdim}};
  if (dtype)
    args.emplace_back("dtype", *dtype);
  return op(ops::aten_sum_dim_IntList, std::move(args));
}

Value *Emit::amax(Value *x, const Dims &dims, bool keepdim) {
  return op(ops::aten_amax_default, {{"self", x}, {"dim", dims}, {"keepdim", keepdim}});
}

Value *Emit::amin(Value *x, const Dims &dims, bool keepdim) {
  return op(ops::aten_amin_default, {{"self", x}, {"dim", dims}, {"keepdim", keepdim}});
}

ArgValue Emit::count(Value *x, const Dims &dims) {
  const Sizes &sizes = sizesOf(x);
  int64_t known = 1;
  Value *symbolic = nullptr;
  for (int64_t d : dims) {
    if (sizes[d]->isConst()) {
      known *= sizes[d]->constant();
      continue;
    }
    // The length of dim d as a tensor: count an all-true mask over a slice
    // of x that keeps only dim d.
    Value *line = x;
    for (int64_t other = 0; other < rankOf(x); ++other)
      if (other != d)
        line = slice(line, other, 0, 1);
    Value *n = sum(allTrueLike(line), {}, false, DType::Int64);
    symbolic = symbolic ? mul(symbolic, n) : n;
  }
  if (!symbolic)
    return ArgValue(known);
  return known == 1 ? ArgValue(symbolic) : ArgValue(mul(symbolic, known));
}

Value *Emit::mean(Value *x, const Dims &dims, bool keepdim) {
  return div(sum(x, dims, keepdim), count(x, dims));
}

Value *Emit::variance(Value *x, const Dims &dims, double correction, bool keepdim) {
  Value *centered = sub(x, mean(x, dims, true));
  Value *squares = sum(mul(centered, centered), dims, keepdim);
  ArgValue n = count(x, dims);
  if (n.arg.kind == ArgKind::Int)
    return div(squares, std::max(static_cast<double>(n.arg.ints[0]) - correction, 0.0));
  Value *divisor = sub(n.arg.values[0], correction);
  return div(squares, maximum(divisor, scalar(Number::real(0), typeOf(divisor).dtype)));
}

Value *Emit::softmax(Value *x, int64_t dim, Value **rowMax) {
  Value *max = amax(x, {dim}, true);
  if (rowMax)
    *rowMax = max;
  Value *exps = unary(ops::aten_exp_default, sub(x, max));
  return div(exps, sum(exps, {dim}, true));
}

Value *Emit::logSoftmax(Value *x, int64_t dim) {
  Value *shifted = sub(x, amax(x, {dim}, true));
  return sub(shifted, unary(ops::aten_log_default, sum(unary(ops::aten_exp_default, shifted), {dim}, true)));
}

Value *Emit::reduceLoss(Value *loss, int64_t reduction) {
  switch (reduction) {
  case kNone:
    return loss;
  case kMean:
    return mean(loss, wrapDims({}, rankOf(loss)), false);
  case kSum:
    return sum(loss, {}, false);
  }
  rewriteFail("unknown loss reduction " + std::to_string(reduction));
}

ArgValue Emit::sizeArg(const Sizes &sizes) {
  size_t symbolic = 0;
  for (const SymExpr *s : sizes)
    symbolic += !s->isConst();
  if (symbolic <= 1) {
    Dims ints;
    for (const SymExpr *s : sizes)
      ints.push_back(s->isConst() ? s->constant() : -1);
    return ArgValue(ints);
  }
  return symIntsArg(sizes);
}

ArgValue Emit::symIntArg(const SymExpr *e) {
  if (e->isConst())
    return ArgValue(e->constant());
  Arg a;
  a.kind = ArgKind::SymInt;
  a.values.push_back(sizeValue(e));
  a.ints.push_back(0);
  return ArgValue(std::move(a));
}

ArgValue Emit::symIntsArg(const Sizes &sizes) {
  if (std::all_of(sizes.begin(), sizes.end(), [](const SymExpr *s) { return s->isConst(); }))
    return sizeArg(sizes);
  Arg a;
  a.kind = ArgKind::SymInts;
  for (const SymExpr *s : sizes) {
    a.values.push_back(s->isConst() ? nullptr : sizeValue(s));
    a.ints.push_back(s->isConst() ? s->constant() : 0);
  }
  return ArgValue(std::move(a));
}

Value *Emit::sizeValue(const SymExpr *e) {
  auto operand = [this](const SymExpr *x) {
    if (x->isConst())
      return Arg::integer(x->constant());
    Arg a;
    a.kind = ArgKind::SymInt;
    a.values.push_back(sizeValue(x));
    a.ints.push_back(0);
    return a;
  };
  switch (e->kind()) {
  case SymExpr::Kind::Symbol:
    for (Value *in : b_.graph().inputs()) {
      if (!in->type().isTensor())
        continue;
      const auto &sizes = in->type().tensor.sizes;
      for (size_t d = 0; d < sizes.size(); ++d)
        if (sizes[d] == e)
          return op(ops::aten_sym_size_int, {{"self", in}, {"dim", static_cast<int64_t>(d)}});
    }
    rewriteFail("no graph input has the size " + e->str() + " as a dimension");
  case SymExpr::Kind::Add:
  case SymExpr::Kind::Mul: {
    OpId combine = e->kind() == SymExpr::Kind::Add ? ops::_operator_add : ops::_operator_mul;
    auto terms = e->operands();
    Value *acc = nullptr;
    Arg first = operand(terms[0]);
    for (size_t i = 1; i < terms.size(); ++i) {
      Arg lhs = acc ? Arg{ArgKind::SymInt, {acc}, {0}, {}, {}, {}} : first;
      acc = op(combine, {{"a", ArgValue(lhs)}, {"b", ArgValue(operand(terms[i]))}});
    }
    return acc;
  }
  case SymExpr::Kind::FloorDiv:
  case SymExpr::Kind::Mod:
    return op(e->kind() == SymExpr::Kind::FloorDiv ? ops::_operator_floordiv : ops::_operator_mod,
              {{"a", ArgValue(operand(e->operands()[0]))}, {"b", ArgValue(operand(e->operands()[1]))}});
  default:
    rewriteFail("the size " + e->str() + " cannot be computed by a node yet (min or max)");
  }
}

Value *Emit::reshape(Value *x, const Sizes &sizes, std::optional<ArgValue> size) {
  ArgValue arg = size ? *size : sizeArg(sizes);
  if (!viewStrides(syms(), typeOf(x), sizes))
    x = clone(x);
  return op(ops::aten_view_default, {{"self", x}, {"size", arg}});
}

Value *Emit::permute(Value *x, const Dims &dims) {
  return op(ops::aten_permute_default, {{"self", x}, {"dims", dims}});
}

Value *Emit::transpose(Value *x, int64_t dim0, int64_t dim1) {
  int64_t rank = rankOf(x);
  Dims dims(rank);
  std::iota(dims.begin(), dims.end(), 0);
  if (rank > 0)
    std::swap(dims[wrapDimension(dim0, rank)], dims[wrapDimension(dim1, rank)]);
  return permute(x, dims);
}

Value *Emit::unsqueeze(Value *x, int64_t dim) {
  return op(ops::aten_unsqueeze_default, {{"self", x}, {"dim", dim}});
}

Value *Emit::squeeze(Value *x, const Dims &dims) {
  return op(ops::aten_squeeze_dims, {{"self", x}, {"dim", dims}});
}

Value *Emit::expand(Value *x, const Sizes &sizes) {
  const Sizes &from = sizesOf(x);
  if (from == sizes)
    return x;
  size_t lead = sizes.size() - from.size();
  Dims ints;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i >= lead && from[i - lead] == sizes[i])
      ints.push_back(-1); // kept as it is, even when symbolic
    else
      ints.push_back(staticSize(sizes[i], "an expanded dim"));
  }
  return op(ops::aten_expand_default, {{"self", x}, {"size", ints}});
}

Value *Emit::slice(Value *x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return op(ops::aten_slice_Tensor,
            {{"self", x}, {"dim", dim}, {"start", start}, {"end", end}, {"step", step}});
}

Value *Emit::select(Value *x, int64_t dim, int64_t index) {
  return op(ops::aten_select_int, {{"self", x}, {"dim", dim}, {"index", index}});
}

Value *Emit::cat(std::vector<Value *> xs, int64_t dim) {
  return op(ops::aten_cat_default, {{"tensors", std::move(xs)}, {"dim", dim}});
}

Value *Emit::clone(Value *x) {
  return op(ops::aten_clone_default,
            {{"self", x}, {"memory_format", memoryFormatArg(MemoryFormat::Contiguous)}});
}

Value *Emit::asStrided(Value *x, const TensorType &view) {
  return op(ops::aten_as_strided_default,
            {{"self", x},
             {"size", symIntsArg(view.sizes)},
             {"stride", symIntsArg(view.strides)},
             {"storage_offset", symIntArg(view.storageOffset)}});
}

Value *Emit::flip(Value *x, const Dims &dims) {
  return op(ops::aten_flip_default, {{"self", x}, {"dims", dims}});
}

Value *Emit::alongDim(Value *x, int64_t dim, int64_t rank) {
  Sizes sizes = sizesOf(x);
  for (int64_t i = dim + 1; i < rank; ++i)
    sizes.push_back(syms().constant(1));
  return sizes.size() == sizesOf(x).size() ? x : reshape(x, sizes);
}

Value *Emit::mm(Value *a, Value *b) { return op(ops::aten_mm_default, {{"self", a}, {"mat2", b}}); }

Value *Emit::bmm(Value *a, Value *b) { return op(ops::aten_bmm_default, {{"self", a}, {"mat2", b}}); }

Value *Emit::matmul(Value *a, Value *b) {
  int64_t ra = rankOf(a), rb = rankOf(b);
  if (ra == 0 || rb == 0)
    rewriteFail("matmul needs operands of at least one dim");
  SymContext &s = syms();
  if (ra <= 2 && rb <= 2) {
    // Vectors become a row (left) or a column (right) and go away again.
    Value *m = mm(ra == 1 ? unsqueeze(a, 0) : a, rb == 1 ? unsqueeze(b, 1) : b);
    Dims drop;
    if (ra == 1)
      drop.push_back(0);
    if (rb == 1)
      drop.push_back(1);
    return drop.empty() ? m : squeeze(m, drop);
  }
  const Sizes &as = sizesOf(a), &bs = sizesOf(b);
  if (rb <= 2) {
    // A batch of matrices times one matrix: fold the batch into the rows.
    Sizes rows = {sizeProduct(s, Sizes(as.begin(), as.end() - 1)), as[ra - 1]};
    Value *m = mm(reshape(a, rows), rb == 1 ? unsqueeze(b, 1) : b);
    Sizes out(as.begin(), as.end() - 1);
    if (rb == 2)
      out.push_back(bs[1]);
    return reshape(m, out);
  }
  Value *a2 = ra == 1 ? unsqueeze(a, 0) : a;
  Value *b2 = b;
  const Sizes &sa = sizesOf(a2), &sb = sizesOf(b2);
  Sizes batchA(sa.begin(), sa.end() - 2), batchB(sb.begin(), sb.end() - 2);
  Sizes batch = broadcastSizes(s, batchA, batchB);
  const SymExpr *m = sa[sa.size() - 2], *k = sa.back(), *n = sb.back();
  auto withMatrix = [&](const SymExpr *r, const SymExpr *c) {
    Sizes v = batch;
    v.push_back(r);
    v.push_back(c);
    return v;
  };
  const SymExpr *count = sizeProduct(s, batch);
  Value *a3 = reshape(expand(a2, withMatrix(m, k)), {count, m, k});
  Value *b3 = reshape(expand(b2, withMatrix(k, n)), {count, k, n});
  Sizes out = batch;
  if (ra > 1)
    out.push_back(m);
  out.push_back(n);
  return reshape(bmm(a3, b3), out);
}

} // namespace gc::decompose
