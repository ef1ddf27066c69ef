//===- Products.cpp - Shapes of products, distances, FFTs, integrals -------===//
//
// The result types of the ops lib/Ops/Decompose/{Products,Spectral,Numeric}
// decompose: the matmul family, cross products and distances, the real
// inverse FFTs and the STFT, the trapezoid rule, gradient and the ranges
// with tensor endpoints. Results are contiguous.
//
//===----------------------------------------------------------------------===//
#include "ShapeUtil.h"

#include "gc/IR/TypePromotion.h"

#include <algorithm>

namespace gc {
namespace {

using namespace shape;

void requireRank(const TensorType &t, size_t rank, const char *what) {
  if (t.rank() != rank)
    shapeFail(std::string(what) + " must have " + std::to_string(rank) + " dims, not " +
              std::to_string(t.rank()));
}

void requireSame(SymContext &syms, const SymExpr *a, const SymExpr *b, const char *what) {
  std::optional<int> order = compareSizes(syms, a, b);
  if (order && *order != 0)
    shapeFail(std::string(what) + ": sizes " + a->str() + " and " + b->str() + " do not match");
}

std::vector<Type> contiguous(const ShapeContext &ctx, DType dtype, Sizes sizes,
                             const TensorType &like) {
  return one(contiguousType(ctx.syms(), dtype, std::move(sizes), like.device));
}

/// A floating dtype for results torch computes in floating point.
DType floating(DType t) { return isFloatingPoint(t) ? t : DType::Float32; }

/// Products with an added `self` (beta * self + alpha * product): the
/// product's sizes, to which self must broadcast.
std::vector<Type> plusSelf(const ShapeContext &ctx, const TensorType &like, Sizes sizes) {
  const TensorType &self = ctx.tensor("self");
  if (broadcastSizes(ctx.syms(), self.sizes, sizes) != sizes)
    shapeFail("self does not broadcast to the product's shape");
  return contiguous(ctx, promoteTypes(self.dtype, like.dtype), std::move(sizes), like);
}

std::vector<Type> addbmm(const ShapeContext &ctx) {
  const TensorType &a = ctx.tensor("batch1"), &b = ctx.tensor("batch2");
  requireRank(a, 3, "batch1");
  requireRank(b, 3, "batch2");
  requireSame(ctx.syms(), a.sizes[0], b.sizes[0], "addbmm batch");
  requireSame(ctx.syms(), a.sizes[2], b.sizes[1], "addbmm");
  return plusSelf(ctx, a, {a.sizes[1], b.sizes[2]});
}

std::vector<Type> addmv(const ShapeContext &ctx) {
  const TensorType &mat = ctx.tensor("mat"), &vec = ctx.tensor("vec");
  requireRank(mat, 2, "mat");
  requireRank(vec, 1, "vec");
  requireSame(ctx.syms(), mat.sizes[1], vec.sizes[0], "addmv");
  return plusSelf(ctx, mat, {mat.sizes[0]});
}

std::vector<Type> addr(const ShapeContext &ctx) {
  const TensorType &a = ctx.tensor("vec1"), &b = ctx.tensor("vec2");
  requireRank(a, 1, "vec1");
  requireRank(b, 1, "vec2");
  return plusSelf(ctx, a, {a.sizes[0], b.sizes[0]});
}

std::vector<Type> dot(const ShapeContext &ctx) {
  const TensorType &a = ctx.tensor("self");
  const TensorType &b = ctx.tensor(ctx.has("tensor") ? "tensor" : "other");
  requireRank(a, 1, "self");
  requireRank(b, 1, "the second vector");
  requireSame(ctx.syms(), a.sizes[0], b.sizes[0], "dot");
  return contiguous(ctx, promoteTypes(a.dtype, b.dtype), {}, a);
}

std::vector<Type> mv(const ShapeContext &ctx) {
  const TensorType &mat = ctx.tensor("self"), &vec = ctx.tensor("vec");
  requireRank(mat, 2, "self");
  requireRank(vec, 1, "vec");
  requireSame(ctx.syms(), mat.sizes[1], vec.sizes[0], "mv");
  return contiguous(ctx, promoteTypes(mat.dtype, vec.dtype), {mat.sizes[0]}, mat);
}

std::vector<Type> outer(const ShapeContext &ctx) {
  const TensorType &a = ctx.tensor("self"), &b = ctx.tensor("vec2");
  requireRank(a, 1, "self");
  requireRank(b, 1, "vec2");
  return contiguous(ctx, promoteTypes(a.dtype, b.dtype), {a.sizes[0], b.sizes[0]}, a);
}

/// a's free dims, then b's, after contracting dimsA of a with dimsB of b.
Sizes contractedSizes(const ShapeContext &ctx, const TensorType &a, const TensorType &b,
                      std::vector<int64_t> dimsA, std::vector<int64_t> dimsB) {
  if (dimsA.size() != dimsB.size())
    shapeFail("both operands must contract the same number of dims");
  dimsA = wrapDims(dimsA, static_cast<int64_t>(a.rank()));
  dimsB = wrapDims(dimsB, static_cast<int64_t>(b.rank()));
  for (size_t i = 0; i < dimsA.size(); ++i)
    requireSame(ctx.syms(), a.sizes[dimsA[i]], b.sizes[dimsB[i]], "contracted dims");
  Sizes out;
  for (int64_t d = 0; d < static_cast<int64_t>(a.rank()); ++d)
    if (std::find(dimsA.begin(), dimsA.end(), d) == dimsA.end())
      out.push_back(a.sizes[d]);
  for (int64_t d = 0; d < static_cast<int64_t>(b.rank()); ++d)
    if (std::find(dimsB.begin(), dimsB.end(), d) == dimsB.end())
      out.push_back(b.sizes[d]);
  return out;
}

std::vector<Type> inner(const ShapeContext &ctx) {
  const TensorType &a = ctx.tensor("self"), &b = ctx.tensor("other");
  DType dtype = promoteTypes(a.dtype, b.dtype);
  if (a.rank() == 0 || b.rank() == 0)
    return contiguous(ctx, dtype, broadcastSizes(ctx.syms(), a.sizes, b.sizes), a);
  return contiguous(ctx, dtype, contractedSizes(ctx, a, b, {-1}, {-1}), a);
}

std::vector<Type> tensordot(const ShapeContext &ctx) {
  const TensorType &a = ctx.tensor("self"), &b = ctx.tensor("other");
  return contiguous(ctx, promoteTypes(a.dtype, b.dtype),
                    contractedSizes(ctx, a, b, ctx.ints("dims_self"), ctx.ints("dims_other")), a);
}

std::vector<Type> kron(const ShapeContext &ctx) {
  const TensorType &a = ctx.tensor("self"), &b = ctx.tensor("other");
  size_t rank = std::max(a.rank(), b.rank());
  SymContext &s = ctx.syms();
  Sizes out;
  for (size_t d = 0; d < rank; ++d) {
    auto at = [&](const TensorType &t) {
      size_t lead = rank - t.rank();
      return d < lead ? s.constant(1) : t.sizes[d - lead];
    };
    out.push_back(s.mul(at(a), at(b)));
  }
  return contiguous(ctx, promoteTypes(a.dtype, b.dtype), out, a);
}

std::vector<Type> trace(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  requireRank(self, 2, "self");
  DType dtype = isFloatingPoint(self.dtype) ? self.dtype : DType::Int64;
  return contiguous(ctx, dtype, {}, self);
}

std::vector<Type> cross(const ShapeContext &ctx) {
  const TensorType &a = ctx.tensor("self"), &b = ctx.tensor("other");
  if (a.rank() != b.rank())
    shapeFail("self and other must have the same number of dims");
  return contiguous(ctx, promoteTypes(a.dtype, b.dtype),
                    broadcastSizes(ctx.syms(), a.sizes, b.sizes), a);
}

std::vector<Type> cdist(const ShapeContext &ctx) {
  const TensorType &x1 = ctx.tensor("x1"), &x2 = ctx.tensor("x2");
  if (x1.rank() < 2 || x2.rank() < 2)
    shapeFail("x1 and x2 must have at least 2 dims");
  requireSame(ctx.syms(), x1.sizes.back(), x2.sizes.back(), "cdist columns");
  Sizes batch = broadcastSizes(ctx.syms(), Sizes(x1.sizes.begin(), x1.sizes.end() - 2),
                               Sizes(x2.sizes.begin(), x2.sizes.end() - 2));
  batch.push_back(x1.sizes[x1.rank() - 2]);
  batch.push_back(x2.sizes[x2.rank() - 2]);
  return contiguous(ctx, promoteTypes(x1.dtype, x2.dtype), batch, x1);
}

std::vector<Type> dist(const ShapeContext &ctx) {
  const TensorType &a = ctx.tensor("self"), &b = ctx.tensor("other");
  broadcastSizes(ctx.syms(), a.sizes, b.sizes);
  return contiguous(ctx, promoteTypes(a.dtype, b.dtype), {}, a);
}

/// renorm, _softmax_backward_data, native_dropout_backward: the sizes of
/// the named tensor, in `dtype`.
std::vector<Type> likeTensor(const ShapeContext &ctx, std::string_view name, DType dtype) {
  const TensorType &t = ctx.tensor(name);
  return contiguous(ctx, dtype, t.sizes, t);
}

std::vector<Type> renorm(const ShapeContext &ctx) {
  if (ctx.tensor("self").rank() < 2)
    shapeFail("self must have at least 2 dims");
  return likeTensor(ctx, "self", ctx.tensor("self").dtype);
}

std::vector<Type> softmaxBackwardData(const ShapeContext &ctx) {
  return likeTensor(ctx, "output", *ctx.dtype("input_dtype"));
}

std::vector<Type> nativeDropoutBackward(const ShapeContext &ctx) {
  PromotionOperand ops[] = {ctx.operand("grad_output"),
                            {DType::Float32, PromotionOperand::Rank::Scalar}};
  return likeTensor(ctx, "grad_output", resultType(ops));
}

//===----------------------------------------------------------------------===//
// FFTs and the STFT
//===----------------------------------------------------------------------===//

/// irfft*/hfft* over `dims` with output lengths `lengths` (-1: the
/// default, the input's size, or 2 * (size - 1) for the last dim).
std::vector<Type> inverseRealFft(const ShapeContext &ctx, std::vector<int64_t> dims,
                                 std::vector<int64_t> lengths) {
  const TensorType &self = ctx.tensor("self");
  int64_t rank = static_cast<int64_t>(self.rank());
  SymContext &s = ctx.syms();
  Sizes sizes = self.sizes;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t dim = wrapDimension(dims[i], rank);
    if (lengths[i] != -1)
      sizes[dim] = s.constant(lengths[i]);
    else if (i + 1 == dims.size())
      sizes[dim] = s.add(s.mul(s.constant(2), sizes[dim]), s.constant(-2));
  }
  return contiguous(ctx, floating(self.dtype), sizes, self);
}

std::vector<Type> inverseRealFft1(const ShapeContext &ctx) {
  return inverseRealFft(ctx, {ctx.integer("dim", -1)}, {ctx.has("n") ? ctx.integer("n") : -1});
}

/// The 2-D forms default to the last two dims, the n-D ones to all (or the
/// last len(s)).
std::vector<Type> inverseRealFftN(const ShapeContext &ctx) {
  int64_t rank = static_cast<int64_t>(ctx.tensor("self").rank());
  bool twoD = isOneOf(ctx.op(), {ops::aten_fft_irfft2_default, ops::aten_fft_hfft2_default});
  std::vector<int64_t> dims;
  if (ctx.has("dim")) {
    dims = ctx.ints("dim");
  } else if (twoD) {
    dims = {-2, -1};
  } else {
    int64_t count = ctx.has("s") ? static_cast<int64_t>(ctx.ints("s").size()) : rank;
    for (int64_t d = rank - count; d < rank; ++d)
      dims.push_back(d);
  }
  std::vector<int64_t> lengths(dims.size(), -1);
  if (ctx.has("s")) {
    lengths = ctx.ints("s");
    if (lengths.size() != dims.size())
      shapeFail("s and dim must have the same length");
  }
  return inverseRealFft(ctx, dims, lengths);
}

std::vector<Type> fftshift(const ShapeContext &ctx) {
  return likeTensor(ctx, "self", ctx.tensor("self").dtype);
}

/// [B,] F, T, 2 for a signal [B,] L.
std::vector<Type> stft(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  if (self.rank() != 1 && self.rank() != 2)
    shapeFail("the signal must have 1 or 2 dims");
  int64_t nfft = ctx.integer("n_fft");
  int64_t hop = ctx.has("hop_length") ? ctx.integer("hop_length") : nfft / 4;
  int64_t length = constantSize(self.sizes.back(), "the signal's length");
  if (nfft <= 0 || nfft > length || hop <= 0)
    shapeFail("need 0 < n_fft <= the signal's length and 0 < hop_length");
  SymContext &s = ctx.syms();
  Sizes sizes(self.sizes.begin(), self.sizes.end() - 1);
  sizes.push_back(s.constant(ctx.boolean("onesided", true) ? nfft / 2 + 1 : nfft));
  sizes.push_back(s.constant(1 + (length - nfft) / hop));
  sizes.push_back(s.constant(2));
  return contiguous(ctx, floating(self.dtype), sizes, self);
}

//===----------------------------------------------------------------------===//
// Integrals, differences, ranges
//===----------------------------------------------------------------------===//

/// trapezoid and cumulative_trapezoid: y's sizes without the integrated
/// dim, or with one sample fewer there.
std::vector<Type> trapezoidShape(const ShapeContext &ctx, bool cumulative) {
  const TensorType &y = ctx.tensor("y"), &x = ctx.tensor("x");
  if (y.rank() == 0)
    shapeFail("y must have at least one dim");
  int64_t dim = wrapDimension(ctx.integer("dim", -1), static_cast<int64_t>(y.rank()));
  SymContext &s = ctx.syms();
  Sizes sizes = y.sizes;
  if (cumulative)
    sizes[dim] = s.max(s.add(sizes[dim], s.constant(-1)), s.constant(0));
  else
    sizes.erase(sizes.begin() + dim);
  return contiguous(ctx, floating(promoteTypes(y.dtype, x.dtype)), sizes, y);
}

std::vector<Type> trapezoid(const ShapeContext &ctx) { return trapezoidShape(ctx, false); }
std::vector<Type> cumulativeTrapezoid(const ShapeContext &ctx) { return trapezoidShape(ctx, true); }

/// One result per differentiated dim (all without `dim`), self's sizes.
std::vector<Type> gradient(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  size_t count = ctx.has("dim") ? 1 : self.rank();
  TensorType t = contiguousType(ctx.syms(), floating(self.dtype), self.sizes, self.device);
  return std::vector<Type>(count, result(t));
}

std::vector<Type> evenlySpaced(const ShapeContext &ctx) {
  int64_t steps = ctx.integer("steps");
  if (steps < 0)
    shapeFail("steps must be non-negative");
  DType dtype = ctx.dtype("dtype").value_or(DType::Float32);
  return contiguous(ctx, dtype, {ctx.syms().constant(steps)}, ctx.tensor("start"));
}

constexpr ShapeEntry kEntries[] = {
    {ops::aten__softmax_backward_data_default, softmaxBackwardData},
    {ops::aten_addbmm_default, addbmm},
    {ops::aten_addmv_default, addmv},
    {ops::aten_addr_default, addr},
    {ops::aten_cdist_default, cdist},
    {ops::aten_cross_default, cross},
    {ops::aten_cumulative_trapezoid_x, cumulativeTrapezoid},
    {ops::aten_dist_default, dist},
    {ops::aten_dot_default, dot},
    {ops::aten_fft_fftshift_default, fftshift},
    {ops::aten_fft_hfft_default, inverseRealFft1},
    {ops::aten_fft_hfft2_default, inverseRealFftN},
    {ops::aten_fft_hfftn_default, inverseRealFftN},
    {ops::aten_fft_ifftshift_default, fftshift},
    {ops::aten_fft_irfft_default, inverseRealFft1},
    {ops::aten_fft_irfft2_default, inverseRealFftN},
    {ops::aten_fft_irfftn_default, inverseRealFftN},
    {ops::aten_gradient_scalarint, gradient},
    {ops::aten_inner_default, inner},
    {ops::aten_kron_default, kron},
    {ops::aten_linspace_Tensor_Scalar, evenlySpaced},
    {ops::aten_linspace_Tensor_Tensor, evenlySpaced},
    {ops::aten_logspace_Tensor_Scalar, evenlySpaced},
    {ops::aten_logspace_Tensor_Tensor, evenlySpaced},
    {ops::aten_mv_default, mv},
    {ops::aten_native_dropout_backward_default, nativeDropoutBackward},
    {ops::aten_outer_default, outer},
    {ops::aten_renorm_default, renorm},
    {ops::aten_stft_default, stft},
    {ops::aten_tensordot_default, tensordot},
    {ops::aten_trace_default, trace},
    {ops::aten_trapezoid_x, trapezoid},
    {ops::aten_trapz_x, trapezoid},
    {ops::aten_vdot_default, dot},
};

} // namespace

void registerProductShapes(ShapeRegistry &r) { r.add(kEntries); }

} // namespace gc
