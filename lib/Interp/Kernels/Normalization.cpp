//===- Normalization.cpp - Normalization kernels ----------------------------===//
//
// Batch, layer and group normalization, on raw float64 arrays (NNCommon.h).
// Batch norm in training writes its running statistics in place.
//
//===----------------------------------------------------------------------===//
#include "NNCommon.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

namespace gc {
namespace {

using namespace nn;

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

/// Per-group statistics: the mean and the biased variance.
struct Moments {
  std::vector<double> mean, var;
};

/// Moments of each group g of x viewed as [outer, groups, inner], over
/// outer and inner (two passes, for accuracy). Empty groups get nan.
Moments momentsOf(const double *x, int64_t outer, int64_t groups, int64_t inner) {
  Moments m{std::vector<double>(groups, 0), std::vector<double>(groups, 0)};
  double count = static_cast<double>(outer * inner);
  for (int64_t g = 0; g < groups; ++g) {
    double sum = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        sum += x[(o * groups + g) * inner + i];
    double mean = sum / count, squares = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        double d = x[(o * groups + g) * inner + i] - mean;
        squares += d * d;
      }
    m.mean[g] = mean;
    m.var[g] = squares / count;
  }
  return m;
}

std::vector<double> invStd(const std::vector<double> &var, double eps) {
  std::vector<double> r(var.size());
  for (size_t i = 0; i < var.size(); ++i)
    r[i] = 1 / std::sqrt(var[i] + eps);
  return r;
}

/// (x - mean[g]) * invstd[g] * weight[a] + bias[a] for each element (o, g, i)
/// of x viewed as [outer, groups, inner], where a = affineIndex(g, i); an
/// empty weight or bias is left out. The result has x's sizes and `dtype`.
template <class AffineIndex>
Tensor normalize(const Tensor &x, int64_t outer, int64_t groups, int64_t inner,
                 const std::vector<double> &mean, const std::vector<double> &invstd,
                 const std::vector<double> &weight, const std::vector<double> &bias,
                 AffineIndex affineIndex, DType dtype) {
  Tensor out = Tensor::zeros(DType::Float64, x.sizes());
  const double *in = rawData<double>(x);
  double *y = rawData<double>(out);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t i = 0; i < inner; ++i, ++in, ++y) {
        int64_t a = affineIndex(g, i);
        double v = (*in - mean[g]) * invstd[g];
        if (!weight.empty())
          v *= weight[a];
        if (!bias.empty())
          v += bias[a];
        *y = v;
      }
  return out.to(dtype);
}

/// A 1-D tensor of `dtype` holding `values`.
Tensor vectorTensor(const std::vector<double> &values, DType dtype) {
  Tensor t = Tensor::zeros(DType::Float64, {static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), rawData<double>(t));
  return t.to(dtype);
}

/// Batch normalization of input [N, C, *] per channel.
struct BatchNorm {
  Tensor out;
  /// Training only: the batch statistics (empty in evaluation).
  std::vector<double> saveMean, saveInvstd;
  /// Training with running statistics only: their updated values, the
  /// variance updated with the unbiased batch variance, as in torch.
  std::vector<double> newRunningMean, newRunningVar;
};

BatchNorm batchNorm(const OpCall &call, bool training, const std::optional<Tensor> &runningMean,
                    const std::optional<Tensor> &runningVar) {
  Tensor input = call.tensor("input");
  requireFloating(input, "batch_norm input");
  if (input.dim() < 2)
    kernelFail("batch_norm expects an input [N, C, *], got shape " + shapeString(input.sizes()));
  int64_t n = input.size(0), c = input.size(1);
  int64_t inner = sizeProduct(input.sizes(), 2, input.sizes().size());
  double eps = call.real("eps", 1e-5), momentum = call.real("momentum", 0.1);
  std::vector<double> weight = optionalParam(call, "weight", c);
  std::vector<double> bias = optionalParam(call, "bias", c);
  if (runningMean.has_value() != runningVar.has_value())
    kernelFail("batch_norm needs both running_mean and running_var, or neither");
  if (runningMean && (runningMean->numel() != c || runningVar->numel() != c))
    kernelFail("batch_norm running statistics must have " + std::to_string(c) + " elements");
  if (!training && !runningMean)
    kernelFail("batch_norm in evaluation mode needs running statistics");

  Tensor x = toF64(input);
  BatchNorm r;
  std::vector<double> mean, invstd;
  if (training) {
    Moments m = momentsOf(rawData<double>(x), n, c, inner);
    mean = m.mean;
    invstd = invStd(m.var, eps);
    r.saveMean = mean;
    r.saveInvstd = invstd;
    if (runningMean) {
      double count = static_cast<double>(n * inner);
      r.newRunningMean = runningMean->toDoubles();
      r.newRunningVar = runningVar->toDoubles();
      for (int64_t i = 0; i < c; ++i) {
        double unbiased = m.var[i] * count / (count - 1);
        r.newRunningMean[i] = (1 - momentum) * r.newRunningMean[i] + momentum * m.mean[i];
        r.newRunningVar[i] = (1 - momentum) * r.newRunningVar[i] + momentum * unbiased;
      }
    }
  } else {
    mean = runningMean->toDoubles();
    invstd = invStd(runningVar->toDoubles(), eps);
  }
  r.out = normalize(
      x, n, c, inner, mean, invstd, weight, bias, [](int64_t g, int64_t) { return g; },
      input.dtype());
  return r;
}

/// Writes updated running statistics into their tensors' storage.
void updateInPlace(Tensor &running, const std::vector<double> &values) {
  for (size_t i = 0; i < values.size(); ++i)
    running.setDouble({static_cast<int64_t>(i)}, values[i]);
}

/// The saved mean and inverse standard deviation results of the native
/// batch norms: the batch statistics in training, and (on CPU, as torch)
/// empty [0] tensors in evaluation, in the input's dtype.
std::vector<Tensor> withSavedStats(const BatchNorm &bn, DType dtype) {
  return {bn.out, vectorTensor(bn.saveMean, dtype), vectorTensor(bn.saveInvstd, dtype)};
}

/// The batch norms whose running statistics (if given) are updated in
/// place: batch_norm, native_batch_norm and _native_batch_norm_legit.
BatchNorm batchNormInPlace(const OpCall &call, bool training) {
  std::optional<Tensor> runningMean = call.optTensor("running_mean");
  std::optional<Tensor> runningVar = call.optTensor("running_var");
  BatchNorm bn = batchNorm(call, training, runningMean, runningVar);
  if (!bn.newRunningMean.empty()) {
    updateInPlace(*runningMean, bn.newRunningMean);
    updateInPlace(*runningVar, bn.newRunningVar);
  }
  return bn;
}

std::vector<Tensor> batchNormComposite(const OpCall &call) {
  Tensor input = call.tensor("input");
  // torch returns an empty input unchanged, whatever the mode.
  if (input.numel() == 0)
    return {input.clone()};
  return {batchNormInPlace(call, call.boolean("training", false)).out};
}

std::vector<Tensor> nativeBatchNorm(const OpCall &call) {
  BatchNorm bn = batchNormInPlace(call, call.boolean("training", false));
  return withSavedStats(bn, call.tensor("input").dtype());
}

std::vector<Tensor> nativeBatchNormLegitNoTraining(const OpCall &call) {
  BatchNorm bn = batchNorm(call, false, call.tensor("running_mean"), call.tensor("running_var"));
  return withSavedStats(bn, call.tensor("input").dtype());
}

std::vector<Tensor> nativeBatchNormLegitNoStats(const OpCall &call) {
  BatchNorm bn = batchNorm(call, call.boolean("training", false), std::nullopt, std::nullopt);
  return withSavedStats(bn, call.tensor("input").dtype());
}

/// The functional form: the updated running statistics are new results, in
/// the running statistics' dtype, and the inputs stay as they were.
std::vector<Tensor> nativeBatchNormLegitFunctional(const OpCall &call) {
  Tensor runningMean = call.tensor("running_mean");
  Tensor runningVar = call.tensor("running_var");
  bool training = call.boolean("training", false);
  BatchNorm bn = batchNorm(call, training, runningMean, runningVar);
  std::vector<Tensor> results = withSavedStats(bn, call.tensor("input").dtype());
  results.push_back(training ? vectorTensor(bn.newRunningMean, runningMean.dtype())
                             : runningMean.clone());
  results.push_back(training ? vectorTensor(bn.newRunningVar, runningVar.dtype())
                             : runningVar.clone());
  return results;
}

/// Layer normalization over the trailing `normalized_shape` dimensions:
/// the result, and the mean and inverse standard deviation with the
/// normalized dimensions kept as size 1.
std::vector<Tensor> layerNorm(const OpCall &call) {
  Tensor input = call.tensor("input");
  requireFloating(input, "layer_norm input");
  std::vector<int64_t> normalized = call.ints("normalized_shape");
  int64_t axis = input.dim() - static_cast<int64_t>(normalized.size());
  if (axis < 0 || !std::equal(normalized.begin(), normalized.end(), input.sizes().begin() + axis))
    kernelFail("layer_norm: normalized_shape " + shapeString(normalized) +
               " does not match the end of the input shape " + shapeString(input.sizes()));
  int64_t rows = sizeProduct(input.sizes(), 0, axis);
  int64_t len = sizeProduct(normalized, 0, normalized.size());
  std::vector<double> weight = optionalParam(call, "weight", len);
  std::vector<double> bias = optionalParam(call, "bias", len);
  Tensor x = toF64(input);
  Moments m = momentsOf(rawData<double>(x), 1, rows, len);
  std::vector<double> invstd = invStd(m.var, call.real("eps", 1e-5));
  Tensor out = normalize(
      x, 1, rows, len, m.mean, invstd, weight, bias, [](int64_t, int64_t i) { return i; },
      input.dtype());
  Shape statSizes(input.sizes().begin(), input.sizes().begin() + axis);
  statSizes.resize(input.sizes().size(), 1);
  return {out, reshaped(vectorTensor(m.mean, input.dtype()), statSizes),
          reshaped(vectorTensor(invstd, input.dtype()), statSizes)};
}

std::vector<Tensor> layerNormComposite(const OpCall &call) { return {layerNorm(call)[0]}; }

/// Group normalization of input [N, C, *] in `groups` groups of channels:
/// the result, and the mean and inverse standard deviation [N, groups].
std::vector<Tensor> groupNorm(const OpCall &call, int64_t groups) {
  Tensor input = call.tensor("input");
  requireFloating(input, "group_norm input");
  if (input.dim() < 2)
    kernelFail("group_norm expects an input [N, C, *], got shape " + shapeString(input.sizes()));
  int64_t n = input.size(0), c = input.size(1);
  if (groups <= 0 || c % groups != 0)
    kernelFail("group_norm: " + std::to_string(c) + " channels cannot form " +
               std::to_string(groups) + " groups");
  int64_t spatial = sizeProduct(input.sizes(), 2, input.sizes().size());
  int64_t perGroup = c / groups;
  std::vector<double> weight = optionalParam(call, "weight", c);
  std::vector<double> bias = optionalParam(call, "bias", c);
  Tensor x = toF64(input);
  Moments m = momentsOf(rawData<double>(x), 1, n * groups, perGroup * spatial);
  std::vector<double> invstd = invStd(m.var, call.real("eps", 1e-5));
  auto channel = [&](int64_t g, int64_t i) { return g % groups * perGroup + i / spatial; };
  Tensor out = normalize(x, 1, n * groups, perGroup * spatial, m.mean, invstd, weight, bias,
                         channel, input.dtype());
  return {out, reshaped(vectorTensor(m.mean, input.dtype()), {n, groups}),
          reshaped(vectorTensor(invstd, input.dtype()), {n, groups})};
}

std::vector<Tensor> groupNormComposite(const OpCall &call) {
  return {groupNorm(call, call.integer("num_groups"))[0]};
}

std::vector<Tensor> nativeGroupNorm(const OpCall &call) {
  return groupNorm(call, call.integer("group"));
}

const KernelEntry kKernels[] = {
    {ops::aten_batch_norm_default, batchNormComposite, "running_mean,running_var"},
    {ops::aten_native_batch_norm_default, nativeBatchNorm, "running_mean,running_var"},
    {ops::aten__native_batch_norm_legit_default, nativeBatchNorm, "running_mean,running_var"},
    {ops::aten__native_batch_norm_legit_no_stats, nativeBatchNormLegitNoStats},
    {ops::aten__native_batch_norm_legit_no_training_default, nativeBatchNormLegitNoTraining},
    {ops::aten__native_batch_norm_legit_functional_default, nativeBatchNormLegitFunctional},
    {ops::aten_layer_norm_default, layerNormComposite},
    {ops::aten_native_layer_norm_default, layerNorm},
    {ops::aten_group_norm_default, groupNormComposite},
    {ops::aten_native_group_norm_default, nativeGroupNorm},
};

} // namespace

void registerNormalizationKernels(KernelRegistry &r) { r.add(kKernels); }

} // namespace gc
