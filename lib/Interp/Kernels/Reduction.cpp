//===- Reduction.cpp - Reduction kernels -----------------------------------===//
//
// Every reduction goes through `reduce`: it picks the dims to fold, lays out
// the result (keepdim or not) and hands each group of input elements to a
// per-op functor, which writes that group's result. Floating results are
// computed in double; integer results in int64 arithmetic that wraps, which
// agrees with torch's narrower accumulators modulo the result's width.
//
//===----------------------------------------------------------------------===//

#include "gc/Interp/Kernel.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <span>

namespace gc {
namespace {

using Result = std::vector<Tensor>;

/// Writes the result of one group: `group` holds the storage indices of the
/// input elements that fold into output element `outIndex` (a storage index
/// of `out`), in row-major order of the reduced dims.
using GroupFn = std::function<void(std::span<const int64_t> group, Tensor &out, int64_t outIndex)>;

/// How a reduction is laid out.
struct ReduceSpec {
  /// The dims to fold; none or an empty list folds them all, as in torch.
  std::optional<std::vector<int64_t>> dims;
  bool keepdim = false;
  DType outDtype = DType::Float32;
  /// Ops without an identity (amax, argmax...) refuse to fold an empty dim.
  bool hasIdentity = true;
  const char *opName = "";
};

Tensor reduce(const Tensor &in, const ReduceSpec &spec, const GroupFn &fn) {
  int64_t rank = in.dim();
  bool all = !spec.dims || spec.dims->empty();
  std::vector<bool> reduced(rank, all);
  if (!all) {
    for (int64_t d : *spec.dims) {
      int64_t w = wrapDim(d, rank);
      if (rank == 0)
        continue;
      if (reduced[w])
        kernelFail(std::string(spec.opName) + ": dim " + std::to_string(w) +
                   " appears multiple times in the list of dims");
      reduced[w] = true;
    }
  }
  Shape outSizes, keptSizes, groupSizes;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      if (!spec.hasIdentity && in.size(d) == 0)
        kernelFail(std::string(spec.opName) + ": expected reduction dim " + std::to_string(d) +
                   " to have non-zero size, since the operation has no identity");
      groupSizes.push_back(in.size(d));
      if (spec.keepdim)
        outSizes.push_back(1);
    } else {
      keptSizes.push_back(in.size(d));
      outSizes.push_back(in.size(d));
    }
  }
  Tensor out = Tensor::zeros(spec.outDtype, outSizes);
  std::vector<int64_t> group;
  Shape inIndex(rank), outIndex;
  forEachIndex(keptSizes, [&](const Shape &kept) {
    outIndex.clear();
    for (int64_t d = 0, k = 0; d < rank; ++d) {
      if (!reduced[d])
        inIndex[d] = kept[k++];
      if (!reduced[d] || spec.keepdim)
        outIndex.push_back(reduced[d] ? 0 : inIndex[d]);
    }
    group.clear();
    forEachIndex(groupSizes, [&](const Shape &g) {
      for (int64_t d = 0, k = 0; d < rank; ++d)
        if (reduced[d])
          inIndex[d] = g[k++];
      group.push_back(in.storageIndex(inIndex));
    });
    fn(group, out, out.storageIndex(outIndex));
  });
  return out;
}

//===----------------------------------------------------------------------===//
// Group functors
//===----------------------------------------------------------------------===//

/// Folds with `op` from `identity`, in double for a floating result and in
/// wrapping 64-bit integers otherwise. The input has the result's dtype or,
/// for integer results, any integer or bool dtype.
template <typename Op> GroupFn foldWith(const Tensor &in, int64_t identity, Op op) {
  return [&in, identity, op](std::span<const int64_t> group, Tensor &out, int64_t outIndex) {
    if (isFloatingPoint(out.dtype())) {
      double acc = static_cast<double>(identity);
      for (int64_t i : group)
        acc = op(acc, in.loadDouble(i));
      out.storeDouble(outIndex, acc);
    } else {
      uint64_t acc = static_cast<uint64_t>(identity);
      for (int64_t i : group)
        acc = op(acc, static_cast<uint64_t>(in.loadInt(i)));
      out.storeInt(outIndex, static_cast<int64_t>(acc));
    }
  };
}

/// The position within `group` of its maximum (or minimum): the first one,
/// or the first NaN, since NaN propagates through max and min.
int64_t extremumPosition(const Tensor &in, std::span<const int64_t> group, bool wantMax) {
  int64_t best = 0;
  if (isFloatingPoint(in.dtype())) {
    for (size_t p = 1; p < group.size() && !std::isnan(in.loadDouble(group[best])); ++p) {
      double v = in.loadDouble(group[p]), b = in.loadDouble(group[best]);
      if (std::isnan(v) || (wantMax ? v > b : v < b))
        best = static_cast<int64_t>(p);
    }
  } else {
    for (size_t p = 1; p < group.size(); ++p) {
      int64_t v = in.loadInt(group[p]), b = in.loadInt(group[best]);
      if (wantMax ? v > b : v < b)
        best = static_cast<int64_t>(p);
    }
  }
  return best;
}

/// Sum of squared deviations from the mean, divided by max(0, n - correction).
double variance(const Tensor &in, std::span<const int64_t> group, double correction) {
  double mean = 0;
  for (int64_t i : group)
    mean += in.loadDouble(i);
  mean /= static_cast<double>(group.size());
  double squares = 0;
  for (int64_t i : group) {
    double d = in.loadDouble(i) - mean;
    squares += d * d;
  }
  return squares / std::max(0.0, static_cast<double>(group.size()) - correction);
}

//===----------------------------------------------------------------------===//
// Argument handling
//===----------------------------------------------------------------------===//

DType longIfIntegral(DType t) { return isFloatingPoint(t) ? t : DType::Int64; }

/// `self`, converted to the optional `dtype` argument as torch does before
/// reducing.
Tensor castInput(const OpCall &call) {
  Tensor self = call.tensor("self");
  std::optional<DType> dtype = call.dtype("dtype");
  return dtype && *dtype != self.dtype() ? self.to(*dtype) : self;
}

std::optional<std::vector<int64_t>> optDims(const OpCall &call) { return call.optInts("dim"); }

std::optional<std::vector<int64_t>> oneDim(const OpCall &call) {
  return std::vector<int64_t>{call.integer("dim")};
}

bool keepdim(const OpCall &call) { return call.boolean("keepdim", false); }

void requireFloating(const Tensor &t, const char *opName) {
  if (!isFloatingPoint(t.dtype()))
    kernelFail(std::string(opName) + ": expected a floating point input, got " +
               std::string(dtypeName(t.dtype())));
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// sum and prod: integer and bool inputs give int64 unless a dtype is asked.
Tensor sumOrProd(const OpCall &call, std::optional<std::vector<int64_t>> dims, bool isProd) {
  Tensor in = castInput(call);
  ReduceSpec spec{std::move(dims), keepdim(call), longIfIntegral(in.dtype()), true,
                  isProd ? "prod" : "sum"};
  if (isProd)
    return reduce(in, spec, foldWith(in, 1, [](auto a, auto b) { return a * b; }));
  return reduce(in, spec, foldWith(in, 0, [](auto a, auto b) { return a + b; }));
}

Result sumDefault(const OpCall &call) { return {sumOrProd(call, std::nullopt, false)}; }
Result sumDims(const OpCall &call) { return {sumOrProd(call, optDims(call), false)}; }
Result prodDefault(const OpCall &call) { return {sumOrProd(call, std::nullopt, true)}; }
Result prodDim(const OpCall &call) { return {sumOrProd(call, oneDim(call), true)}; }

Tensor meanOf(const OpCall &call, std::optional<std::vector<int64_t>> dims) {
  Tensor in = castInput(call);
  if (!isFloatingPoint(in.dtype()))
    kernelFail("mean(): could not infer output dtype. Input dtype must be either a floating "
               "point or complex dtype. Got: " +
               std::string(dtypeName(in.dtype())));
  ReduceSpec spec{std::move(dims), keepdim(call), in.dtype(), true, "mean"};
  return reduce(in, spec, [&in](std::span<const int64_t> group, Tensor &out, int64_t o) {
    double sum = 0;
    for (int64_t i : group)
      sum += in.loadDouble(i);
    // An empty group gives 0/0 = nan, as in torch.
    out.storeDouble(o, sum / static_cast<double>(group.size()));
  });
}

Result meanDefault(const OpCall &call) { return {meanOf(call, std::nullopt)}; }
Result meanDim(const OpCall &call) { return {meanOf(call, optDims(call))}; }

Tensor extremum(const OpCall &call, bool wantMax) {
  Tensor in = call.tensor("self");
  std::optional<std::vector<int64_t>> dims;
  if (call.has("dim"))
    dims = call.ints("dim");
  ReduceSpec spec{std::move(dims), keepdim(call), in.dtype(), false, wantMax ? "amax" : "amin"};
  return reduce(in, spec, [&in, wantMax](std::span<const int64_t> group, Tensor &out, int64_t o) {
    int64_t i = group[extremumPosition(in, group, wantMax)];
    // Copy the element in its own domain so that large int64 values survive.
    if (isFloatingPoint(in.dtype()))
      out.storeDouble(o, in.loadDouble(i));
    else
      out.storeInt(o, in.loadInt(i));
  });
}

Result amax(const OpCall &call) { return {extremum(call, true)}; }
Result amin(const OpCall &call) { return {extremum(call, false)}; }

/// argmax and argmin: without a dim, the position in the flattened input
/// (keepdim then keeps every dim as size 1).
Tensor argExtremum(const OpCall &call, bool wantMax) {
  Tensor in = call.tensor("self");
  std::optional<std::vector<int64_t>> dims;
  if (call.has("dim"))
    dims = oneDim(call);
  ReduceSpec spec{std::move(dims), keepdim(call), DType::Int64, false,
                  wantMax ? "argmax" : "argmin"};
  return reduce(in, spec, [&in, wantMax](std::span<const int64_t> group, Tensor &out, int64_t o) {
    out.storeInt(o, extremumPosition(in, group, wantMax));
  });
}

Result argmax(const OpCall &call) { return {argExtremum(call, true)}; }
Result argmin(const OpCall &call) { return {argExtremum(call, false)}; }

/// any and all give bool, except for uint8 input, which keeps uint8.
Tensor anyOrAll(const OpCall &call, std::optional<std::vector<int64_t>> dims, bool isAll) {
  Tensor in = call.tensor("self");
  DType outDtype = in.dtype() == DType::UInt8 ? DType::UInt8 : DType::Bool;
  ReduceSpec spec{std::move(dims), keepdim(call), outDtype, true, isAll ? "all" : "any"};
  return reduce(in, spec, [&in, isAll](std::span<const int64_t> group, Tensor &out, int64_t o) {
    auto nonzero = [&in](int64_t i) {
      return isFloatingPoint(in.dtype()) ? in.loadDouble(i) != 0 : in.loadInt(i) != 0;
    };
    bool r = isAll ? std::all_of(group.begin(), group.end(), nonzero)
                   : std::any_of(group.begin(), group.end(), nonzero);
    out.storeInt(o, r ? 1 : 0);
  });
}

Result anyDefault(const OpCall &call) { return {anyOrAll(call, std::nullopt, false)}; }
Result anyDim(const OpCall &call) { return {anyOrAll(call, oneDim(call), false)}; }
Result allDefault(const OpCall &call) { return {anyOrAll(call, std::nullopt, true)}; }
Result allDim(const OpCall &call) { return {anyOrAll(call, oneDim(call), true)}; }

Tensor varOrStd(const OpCall &call, double correction, bool isStd) {
  Tensor in = call.tensor("self");
  if (!isFloatingPoint(in.dtype()))
    kernelFail("std and var only support floating point and complex dtypes");
  ReduceSpec spec{optDims(call), keepdim(call), in.dtype(), true, isStd ? "std" : "var"};
  return reduce(in, spec,
                [&in, correction, isStd](std::span<const int64_t> group, Tensor &out, int64_t o) {
                  double v = variance(in, group, correction);
                  out.storeDouble(o, isStd ? std::sqrt(v) : v);
                });
}

double correctionArg(const OpCall &call) {
  return call.has("correction") ? call.scalar("correction").toDouble() : 1.0;
}
double unbiasedArg(const OpCall &call) { return call.boolean("unbiased", true) ? 1.0 : 0.0; }

Result varCorrection(const OpCall &call) { return {varOrStd(call, correctionArg(call), false)}; }
Result stdCorrection(const OpCall &call) { return {varOrStd(call, correctionArg(call), true)}; }
Result varDim(const OpCall &call) { return {varOrStd(call, unbiasedArg(call), false)}; }
Result stdDim(const OpCall &call) { return {varOrStd(call, unbiasedArg(call), true)}; }

Result logsumexp(const OpCall &call) {
  Tensor self = call.tensor("self");
  // Integer inputs are computed in the default float dtype.
  Tensor in = isFloatingPoint(self.dtype()) ? self : self.to(DType::Float32);
  ReduceSpec spec{call.ints("dim"), keepdim(call), in.dtype(), true, "logsumexp"};
  return {reduce(in, spec, [&in](std::span<const int64_t> group, Tensor &out, int64_t o) {
    double shift = -std::numeric_limits<double>::infinity();
    for (int64_t i : group)
      shift = std::max(shift, in.loadDouble(i));
    // An infinite maximum cannot be subtracted out; exp then gives the right
    // infinity or zero on its own.
    if (std::isinf(shift))
      shift = 0;
    double sum = 0;
    for (int64_t i : group)
      sum += std::exp(in.loadDouble(i) - shift);
    out.storeDouble(o, std::log(sum) + shift);
  })};
}

Result linalgVectorNorm(const OpCall &call) {
  Tensor in = castInput(call);
  requireFloating(in, "linalg.vector_norm");
  double ord = call.has("ord") ? call.scalar("ord").toDouble() : 2.0;
  // Max, min and negative powers have no value on an empty set.
  bool hasIdentity = ord >= 0 && !std::isinf(ord);
  ReduceSpec spec{optDims(call), keepdim(call), in.dtype(), hasIdentity, "linalg.vector_norm"};
  return {reduce(in, spec, [&in, ord](std::span<const int64_t> group, Tensor &out, int64_t o) {
    double r = 0;
    if (std::isinf(ord)) {
      r = ord > 0 ? 0 : INFINITY;
      for (int64_t i : group) {
        double a = std::fabs(in.loadDouble(i));
        r = std::isnan(r) || std::isnan(a) ? NAN : ord > 0 ? std::max(r, a) : std::min(r, a);
      }
    } else if (ord == 0) {
      for (int64_t i : group)
        r += in.loadDouble(i) != 0 ? 1 : 0;
    } else {
      for (int64_t i : group)
        r += std::pow(std::fabs(in.loadDouble(i)), ord);
      r = ord == 1 ? r : ord == 2 ? std::sqrt(r) : std::pow(r, 1.0 / ord);
    }
    out.storeDouble(o, r);
  })};
}

const KernelEntry kKernels[] = {
    {ops::aten_sum_default, sumDefault},
    {ops::aten_sum_dim_IntList, sumDims},
    {ops::aten_mean_default, meanDefault},
    {ops::aten_mean_dim, meanDim},
    {ops::aten_prod_default, prodDefault},
    {ops::aten_prod_dim_int, prodDim},
    {ops::aten_amax_default, amax},
    {ops::aten_amin_default, amin},
    {ops::aten_argmax_default, argmax},
    {ops::aten_argmin_default, argmin},
    {ops::aten_any_default, anyDefault},
    {ops::aten_any_dim, anyDim},
    {ops::aten_all_default, allDefault},
    {ops::aten_all_dim, allDim},
    {ops::aten_var_correction, varCorrection},
    {ops::aten_var_dim, varDim},
    {ops::aten_std_correction, stdCorrection},
    {ops::aten_std_dim, stdDim},
    {ops::aten_logsumexp_default, logsumexp},
    {ops::aten_linalg_vector_norm_default, linalgVectorNorm},
};

} // namespace

void registerReductionKernels(KernelRegistry &r) { r.add(kKernels); }

} // namespace gc
