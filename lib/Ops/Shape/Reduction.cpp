//===- Reduction.cpp - Shapes of reductions, scans, sorts and softmax -----===//
//
// A reduction drops the dimensions it reduces, or keeps them as size 1 with
// keepdim; with no dimension list (None, or an empty list) it reduces them
// all. Its dtype depends on the kind of reduction (sums widen integers to
// int64, means need floating point, predicates give bool, arg-reductions
// give int64). Results are contiguous, as torch allocates them.
//
// This file also defines the dimension helpers of ShapeUtil.h.
//
//===----------------------------------------------------------------------===//
#include "ShapeUtil.h"

namespace gc {
namespace shape {

std::vector<int64_t> wrapDims(const std::vector<int64_t> &dims, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t d : dims) {
    int64_t w = wrapDimension(d, rank);
    if (std::find(out.begin(), out.end(), w) != out.end())
      shapeFail("dimension " + std::to_string(d) + " appears more than once");
    out.push_back(w);
  }
  return out;
}

std::vector<bool> reducedDims(const ShapeContext &ctx, std::string_view name, int64_t rank) {
  std::vector<int64_t> dims = ctx.has(name) ? ctx.ints(name) : std::vector<int64_t>{};
  std::vector<bool> reduced(rank, dims.empty());
  for (int64_t d : wrapDims(dims, rank))
    if (rank > 0)
      reduced[d] = true;
  return reduced;
}

Sizes reducedSizes(SymContext &syms, const Sizes &sizes, const std::vector<bool> &reduced,
                   bool keepdim) {
  Sizes out;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (!reduced[d])
      out.push_back(sizes[d]);
    else if (keepdim)
      out.push_back(syms.constant(1));
  return out;
}

std::vector<int64_t> expandedInts(const ShapeContext &ctx, std::string_view name, size_t n,
                                  const std::vector<int64_t> &dflt) {
  std::vector<int64_t> v = ctx.has(name) ? ctx.ints(name) : std::vector<int64_t>{};
  if (v.empty())
    v = dflt;
  if (v.size() == 1)
    v.assign(n, v[0]);
  if (v.size() != n)
    shapeFail("argument '" + std::string(name) + "' needs " + std::to_string(n) + " values, not " +
              std::to_string(v.size()));
  return v;
}

} // namespace shape

namespace {

using namespace shape;

/// What dtype a reduction gives.
enum class Out {
  Accumulate,  ///< `dtype`, else int64 for integers and bool (sum, prod, cumsum)
  Same,        ///< the input's (amax, max, var)
  FloatingArg, ///< `dtype`, else the input's, which must be floating (mean, norms)
  Floating,    ///< floating point: integers give float32 (logsumexp)
  Bool,        ///< bool, or uint8 for uint8 (any, all)
  Index,       ///< int64 (argmax, argmin)
};

DType reductionDType(const ShapeContext &ctx, Out out, DType self) {
  switch (out) {
  case Out::Accumulate:
    return ctx.dtype("dtype").value_or(isFloatingPoint(self) ? self : DType::Int64);
  case Out::Same:
    return self;
  case Out::FloatingArg: {
    DType t = ctx.dtype("dtype").value_or(self);
    if (!isFloatingPoint(t))
      shapeFail("needs a floating-point dtype, not " + std::string(dtypeName(t)));
    return t;
  }
  case Out::Floating:
    return isFloatingPoint(self) ? self : DType::Float32;
  case Out::Bool:
    return self == DType::UInt8 ? DType::UInt8 : DType::Bool;
  case Out::Index:
    return DType::Int64;
  }
  return self;
}

/// The result of reducing `self` over the dimensions `dim` names (all if
/// absent), keeping them with `keepdim`.
TensorType reduced(const ShapeContext &ctx, Out out) {
  const TensorType &self = ctx.tensor("self");
  std::vector<bool> dims = reducedDims(ctx, "dim", self.rank());
  Sizes sizes = reducedSizes(ctx.syms(), self.sizes, dims, ctx.boolean("keepdim", false));
  return contiguousType(ctx.syms(), reductionDType(ctx, out, self.dtype), sizes, self.device);
}

template <Out O> std::vector<Type> reduce(const ShapeContext &ctx) {
  return one(reduced(ctx, O));
}

/// max.dim, min.dim: the values and their int64 indices.
std::vector<Type> reduceWithIndices(const ShapeContext &ctx) {
  return {result(reduced(ctx, Out::Same)), result(reduced(ctx, Out::Index))};
}

/// var_mean, std_mean: two results of the input's dtype.
std::vector<Type> reducePair(const ShapeContext &ctx) {
  TensorType t = reduced(ctx, Out::Same);
  return {result(t), result(t)};
}

/// cumsum, cumprod: the input's shape along a valid `dim`.
std::vector<Type> scan(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  wrapDimension(ctx.integer("dim"), self.rank());
  DType dtype = reductionDType(ctx, Out::Accumulate, self.dtype);
  return one(contiguousType(ctx.syms(), dtype, self.sizes, self.device));
}

/// sort: values and int64 indices, laid out like the input.
std::vector<Type> sort(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  wrapDimension(ctx.integer("dim", -1), self.rank());
  return {result(preservedLayoutType(ctx.syms(), self, self.dtype)),
          result(preservedLayoutType(ctx.syms(), self, DType::Int64))};
}

std::vector<Type> topk(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  int64_t dim = wrapDimension(ctx.integer("dim", -1), self.rank());
  const SymExpr *k = symInt(ctx, "k");
  Sizes sizes = self.sizes;
  const SymExpr *available = sizes.empty() ? ctx.syms().constant(1) : sizes[dim];
  std::optional<int> fits = compareSizes(ctx.syms(), k, available);
  if ((k->isConst() && k->constant() < 0) || (fits && *fits > 0))
    shapeFail("k " + k->str() + " is out of range for size " + available->str());
  if (!sizes.empty())
    sizes[dim] = k;
  return {result(contiguousType(ctx.syms(), self.dtype, sizes, self.device)),
          result(contiguousType(ctx.syms(), DType::Int64, sizes, self.device))};
}

/// softmax.int, log_softmax.int, _safe_softmax: `dtype` or the input's.
std::vector<Type> softmax(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  wrapDimension(ctx.integer("dim"), self.rank());
  DType dtype = ctx.dtype("dtype").value_or(self.dtype);
  return one(contiguousType(ctx.syms(), dtype, self.sizes, self.device));
}

/// _softmax, _log_softmax: half_to_float computes half inputs in float32.
std::vector<Type> softmaxInternal(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  wrapDimension(ctx.integer("dim"), self.rank());
  DType dtype = ctx.boolean("half_to_float", false) ? DType::Float32 : self.dtype;
  return one(contiguousType(ctx.syms(), dtype, self.sizes, self.device));
}

constexpr ShapeEntry kEntries[] = {
    {ops::aten__log_softmax_default, softmaxInternal},
    {ops::aten__safe_softmax_default, softmax},
    {ops::aten__softmax_default, softmaxInternal},
    {ops::aten_all_default, reduce<Out::Bool>},
    {ops::aten_all_dim, reduce<Out::Bool>},
    {ops::aten_all_dims, reduce<Out::Bool>},
    {ops::aten_amax_default, reduce<Out::Same>},
    {ops::aten_amin_default, reduce<Out::Same>},
    {ops::aten_any_default, reduce<Out::Bool>},
    {ops::aten_any_dim, reduce<Out::Bool>},
    {ops::aten_any_dims, reduce<Out::Bool>},
    {ops::aten_argmax_default, reduce<Out::Index>},
    {ops::aten_argmin_default, reduce<Out::Index>},
    {ops::aten_cumprod_default, scan},
    {ops::aten_cumsum_default, scan},
    {ops::aten_linalg_vector_norm_default, reduce<Out::FloatingArg>},
    {ops::aten_log_softmax_int, softmax},
    {ops::aten_logsumexp_default, reduce<Out::Floating>},
    {ops::aten_max_default, reduce<Out::Same>},
    {ops::aten_max_dim, reduceWithIndices},
    {ops::aten_mean_default, reduce<Out::FloatingArg>},
    {ops::aten_mean_dim, reduce<Out::FloatingArg>},
    {ops::aten_min_default, reduce<Out::Same>},
    {ops::aten_min_dim, reduceWithIndices},
    {ops::aten_prod_default, reduce<Out::Accumulate>},
    {ops::aten_prod_dim_int, reduce<Out::Accumulate>},
    {ops::aten_softmax_int, softmax},
    {ops::aten_sort_default, sort},
    {ops::aten_sort_stable, sort},
    {ops::aten_std_correction, reduce<Out::Same>},
    {ops::aten_std_default, reduce<Out::Same>},
    {ops::aten_std_dim, reduce<Out::Same>},
    {ops::aten_std_mean_correction, reducePair},
    {ops::aten_std_mean_dim, reducePair},
    {ops::aten_sum_default, reduce<Out::Accumulate>},
    {ops::aten_sum_dim_IntList, reduce<Out::Accumulate>},
    {ops::aten_topk_default, topk},
    {ops::aten_var_correction, reduce<Out::Same>},
    {ops::aten_var_default, reduce<Out::Same>},
    {ops::aten_var_dim, reduce<Out::Same>},
    {ops::aten_var_mean_correction, reducePair},
    {ops::aten_var_mean_dim, reducePair},
};

} // namespace

void registerReductionShapes(ShapeRegistry &r) { r.add(kEntries); }

} // namespace gc
