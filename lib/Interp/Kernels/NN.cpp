//===- NN.cpp - Softmax, attention and loss kernels -------------------------===//
//
// Softmax and its variants, scaled dot-product attention, and losses, on
// raw float64 arrays (NNCommon.h).
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
// Softmax and attention
//===----------------------------------------------------------------------===//

enum class SoftmaxKind {
  Softmax,
  LogSoftmax,
  /// Softmax, but a line that is all -inf (fully masked) gives zeros.
  SafeSoftmax,
};

/// Softmax of n elements x[j * stride] into y[j * stride], subtracting the
/// maximum first so that exp cannot overflow.
void softmaxLine(const double *x, double *y, int64_t n, int64_t stride, SoftmaxKind kind) {
  double max = -kInf;
  bool allMasked = true;
  for (int64_t j = 0; j < n; ++j) {
    max = std::max(max, x[j * stride]);
    allMasked = allMasked && x[j * stride] == -kInf;
  }
  if (kind == SoftmaxKind::SafeSoftmax && allMasked) {
    for (int64_t j = 0; j < n; ++j)
      y[j * stride] = 0;
    return;
  }
  double sum = 0;
  for (int64_t j = 0; j < n; ++j)
    sum += std::exp(x[j * stride] - max);
  for (int64_t j = 0; j < n; ++j) {
    double shifted = x[j * stride] - max;
    y[j * stride] =
        kind == SoftmaxKind::LogSoftmax ? shifted - std::log(sum) : std::exp(shifted) / sum;
  }
}

/// Softmax of `self` along `dim`, computed in double, as a float64 tensor.
Tensor softmaxF64(const Tensor &self, int64_t dim, SoftmaxKind kind) {
  dim = wrapDim(dim, self.dim());
  Tensor x = toF64(self);
  Tensor out = Tensor::zeros(DType::Float64, self.sizes());
  // A 0-dim tensor is one line of one element.
  Shape sizes = self.dim() == 0 ? Shape{1} : self.sizes();
  int64_t n = sizes[dim];
  int64_t outer = sizeProduct(sizes, 0, dim);
  int64_t inner = sizeProduct(sizes, dim + 1, sizes.size());
  const double *in = rawData<double>(x);
  double *y = rawData<double>(out);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      softmaxLine(in + o * n * inner + i, y + o * n * inner + i, n, inner, kind);
  return out;
}

/// softmax.int, log_softmax.int and _safe_softmax: an optional dtype
/// converts the input first, and is the result's dtype.
std::vector<Tensor> softmaxWithDType(const OpCall &call, SoftmaxKind kind) {
  Tensor self = call.tensor("self");
  if (std::optional<DType> dtype = call.dtype("dtype"))
    self = self.to(*dtype);
  requireFloating(self, "softmax input");
  return {softmaxF64(self, call.integer("dim"), kind).to(self.dtype())};
}

/// _softmax and _log_softmax: half_to_float gives a float32 result for a
/// float16 or bfloat16 input.
std::vector<Tensor> softmaxHalfToFloat(const OpCall &call, SoftmaxKind kind) {
  Tensor self = call.tensor("self");
  requireFloating(self, "softmax input");
  DType dtype = self.dtype();
  if (call.boolean("half_to_float", false)) {
    if (dtype != DType::Float16 && dtype != DType::BFloat16)
      kernelFail("half_to_float needs a float16 or bfloat16 input");
    dtype = DType::Float32;
  }
  return {softmaxF64(self, call.integer("dim"), kind).to(dtype)};
}

std::vector<Tensor> softmax(const OpCall &call) {
  return softmaxWithDType(call, SoftmaxKind::Softmax);
}
std::vector<Tensor> logSoftmax(const OpCall &call) {
  return softmaxWithDType(call, SoftmaxKind::LogSoftmax);
}
std::vector<Tensor> safeSoftmax(const OpCall &call) {
  return softmaxWithDType(call, SoftmaxKind::SafeSoftmax);
}
std::vector<Tensor> softmaxInternal(const OpCall &call) {
  return softmaxHalfToFloat(call, SoftmaxKind::Softmax);
}
std::vector<Tensor> logSoftmaxInternal(const OpCall &call) {
  return softmaxHalfToFloat(call, SoftmaxKind::LogSoftmax);
}

/// For grouped-query attention: key or value [..., Hkv, S, E] with each head
/// repeated to match the query's Hq heads ([k0, k0, k1, k1], as
/// repeat_interleave), contiguous.
Tensor repeatHeads(const Tensor &kv, const Tensor &query) {
  if (kv.dim() < 3 || query.dim() < 3)
    kernelFail("enable_gqa needs query, key and value with a head dimension");
  int64_t hq = query.size(query.dim() - 3), hkv = kv.size(kv.dim() - 3);
  if (hq == hkv)
    return kv;
  if (hkv == 0 || hq % hkv != 0)
    kernelFail("enable_gqa: " + std::to_string(hq) + " query heads are not a multiple of " +
               std::to_string(hkv) + " key/value heads");
  int64_t headDim = kv.dim() - 3;
  Shape sizes = kv.sizes(), strides = kv.strides();
  sizes.insert(sizes.begin() + headDim + 1, hq / hkv);
  strides.insert(strides.begin() + headDim + 1, 0);
  Tensor repeated = kv.asStrided(sizes, strides, kv.offset()).clone();
  Shape merged = kv.sizes();
  merged[headDim] = hq;
  return reshaped(repeated, merged);
}

/// `t` copied into a dense layout whose dimension order follows the strides
/// of `like`, as torch's empty_like(like) lays out a new tensor.
Tensor laidOutLike(const Tensor &t, const Tensor &like) {
  std::vector<size_t> order(t.sizes().size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return like.strides()[a] > like.strides()[b]; });
  Shape strides(order.size());
  int64_t running = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    strides[*it] = running;
    running *= std::max<int64_t>(t.sizes()[*it], 1);
  }
  Tensor out = Tensor::zeros(t.dtype(), {t.numel()}).asStrided(t.sizes(), strides, 0);
  out.copyFrom(t);
  return out;
}

/// softmax(q @ k^T * scale + mask) @ v over broadcast batch dimensions, as
/// torch's math implementation computes it: a bool mask keeps the positions
/// where it is true, a floating mask is added, is_causal keeps the lower
/// triangle of (L, S), and a fully masked row gives zeros. Like torch's CPU
/// kernel, the result is laid out like the query (views of the result, in
/// exported graphs, rely on that).
std::vector<Tensor> scaledDotProductAttention(const OpCall &call) {
  Tensor q = call.tensor("query"), k = call.tensor("key"), v = call.tensor("value");
  if (call.real("dropout_p", 0.0) != 0.0)
    kernelFail("scaled_dot_product_attention: the reference interpreter is deterministic and needs "
               "dropout_p = 0");
  bool causal = call.boolean("is_causal", false);
  std::optional<Tensor> mask = call.optTensor("attn_mask");
  if (causal && mask)
    kernelFail("scaled_dot_product_attention takes attn_mask or is_causal, not both");
  requireFloating(q, "query");
  requireSameDType(q, k);
  requireSameDType(q, v);
  if (q.dim() < 2 || k.dim() < 2 || v.dim() < 2)
    kernelFail("scaled_dot_product_attention needs query, key and value of rank 2 or more");
  if (call.boolean("enable_gqa", false)) {
    k = repeatHeads(k, q);
    v = repeatHeads(v, q);
  }
  int64_t l = q.size(q.dim() - 2), e = q.size(q.dim() - 1);
  int64_t s = k.size(k.dim() - 2), ev = v.size(v.dim() - 1);
  if (k.size(k.dim() - 1) != e || v.size(v.dim() - 2) != s)
    kernelFail("scaled_dot_product_attention: query " + shapeString(q.sizes()) + ", key " +
               shapeString(k.sizes()) + " and value " + shapeString(v.sizes()) + " do not fit");
  double scale = call.has("scale") ? call.real("scale") : 1 / std::sqrt(static_cast<double>(e));

  auto batchOf = [](const Tensor &t) { return Shape(t.sizes().begin(), t.sizes().end() - 2); };
  Shape batch = broadcastShapes(broadcastShapes(batchOf(q), batchOf(k)), batchOf(v));
  if (mask) {
    Shape maskBatch = mask->dim() > 2 ? batchOf(*mask) : Shape();
    batch = broadcastShapes(batch, maskBatch);
  }
  bool boolMask = mask && mask->dtype() == DType::Bool;
  if (mask && !boolMask && !isFloatingPoint(mask->dtype()))
    kernelFail("attn_mask must be bool or floating-point");
  Tensor qs = toF64(broadcastTo(q, concat(batch, {l, e})));
  Tensor ks = toF64(broadcastTo(k, concat(batch, {s, e})));
  Tensor vs = toF64(broadcastTo(v, concat(batch, {s, ev})));
  Tensor ms = mask ? toF64(broadcastTo(*mask, concat(batch, {l, s}))) : Tensor();

  Tensor out = Tensor::zeros(DType::Float64, concat(batch, {l, ev}));
  std::vector<double> scores(s), probs(s);
  int64_t batchCount = sizeProduct(batch, 0, batch.size());
  for (int64_t b = 0; b < batchCount; ++b) {
    const double *qb = rawData<double>(qs) + b * l * e;
    const double *kb = rawData<double>(ks) + b * s * e;
    const double *vb = rawData<double>(vs) + b * s * ev;
    const double *mb = mask ? rawData<double>(ms) + b * l * s : nullptr;
    double *ob = rawData<double>(out) + b * l * ev;
    for (int64_t i = 0; i < l; ++i) {
      for (int64_t j = 0; j < s; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < e; ++c)
          dot += qb[i * e + c] * kb[j * e + c];
        double bias = 0;
        if (causal && j > i)
          bias = -kInf;
        else if (mb)
          bias = boolMask ? (mb[i * s + j] != 0 ? 0 : -kInf) : mb[i * s + j];
        scores[j] = dot * scale + bias;
      }
      softmaxLine(scores.data(), probs.data(), s, 1, SoftmaxKind::SafeSoftmax);
      for (int64_t j = 0; j < s; ++j)
        for (int64_t c = 0; c < ev; ++c)
          ob[i * ev + c] += probs[j] * vb[j * ev + c];
    }
  }
  if (out.sizes() != q.sizes())
    return {out.to(q.dtype())};
  return {laidOutLike(out.to(q.dtype()), q)};
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

enum Reduction : int64_t { kReduceNone = 0, kReduceMean = 1, kReduceSum = 2 };

/// Applies a loss reduction to per-element losses of sizes `sizes`: none
/// keeps them, sum adds them, mean divides their sum by `meanDivisor`.
Tensor reduceLosses(const std::vector<double> &losses, const Shape &sizes, int64_t reduction,
                    double meanDivisor, DType dtype) {
  if (reduction == kReduceNone) {
    Tensor out = Tensor::zeros(DType::Float64, sizes);
    std::copy(losses.begin(), losses.end(), rawData<double>(out));
    return out.to(dtype);
  }
  double sum = std::accumulate(losses.begin(), losses.end(), 0.0);
  if (reduction == kReduceMean)
    return Tensor::scalar(dtype, sum / meanDivisor);
  if (reduction == kReduceSum)
    return Tensor::scalar(dtype, sum);
  kernelFail("invalid loss reduction " + std::to_string(reduction));
}

std::vector<Tensor> mseLoss(const OpCall &call) {
  Tensor self = call.tensor("self"), target = call.tensor("target");
  std::array<PromotionOperand, 2> operands = {operandOf(self), operandOf(target)};
  DType dtype = resultType(operands);
  if (!isFloatingPoint(dtype))
    kernelFail("mse_loss needs floating-point operands");
  Shape sizes = broadcastShapes(self.sizes(), target.sizes());
  std::vector<double> a = toF64(broadcastTo(self, sizes)).toDoubles();
  std::vector<double> b = toF64(broadcastTo(target, sizes)).toDoubles();
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = (a[i] - b[i]) * (a[i] - b[i]);
  return {reduceLosses(a, sizes, call.integer("reduction", kReduceMean),
                       static_cast<double>(a.size()), dtype)};
}

/// Scores over classes viewed as [N, C, D]: the class dimension is 1, or 0
/// for an input without a batch dimension (then N = 1). Each sample (n, d)
/// has C scores at stride D.
struct ClassScores {
  Tensor data; ///< float64, contiguous
  int64_t n, c, d;
  Shape sampleSizes; ///< the input's sizes without the class dimension

  const double *sample(int64_t i) const { return rawData<double>(data) + (i / d * c) * d + i % d; }
  int64_t samples() const { return n * d; }
};

/// Reads `self` as class scores; log_softmax over the classes if `logits`.
ClassScores classScores(const Tensor &self, bool logits) {
  requireFloating(self, "loss input");
  if (self.dim() < 1)
    kernelFail("loss input must have a class dimension");
  int64_t classDim = self.dim() == 1 ? 0 : 1;
  ClassScores s;
  s.data = logits ? softmaxF64(self, classDim, SoftmaxKind::LogSoftmax) : toF64(self);
  s.n = sizeProduct(self.sizes(), 0, classDim);
  s.c = self.size(classDim);
  s.d = sizeProduct(self.sizes(), classDim + 1, self.sizes().size());
  s.sampleSizes = self.sizes();
  s.sampleSizes.erase(s.sampleSizes.begin() + classDim);
  return s;
}

/// Per-sample losses of class-index targets against log-probabilities:
/// nll = -w[t] * logp[t], and smooth = -sum_c w[c] * logp[c] (for label
/// smoothing), both 0 where the target is ignore_index; and the sum of w[t]
/// over the targets not ignored, which a mean divides by.
struct ClassLosses {
  std::vector<double> nll, smooth;
  double totalWeight = 0;
};

ClassLosses classLosses(const ClassScores &s, const Tensor &target,
                        const std::vector<double> &weight, int64_t ignoreIndex) {
  if (isFloatingPoint(target.dtype()) || target.dtype() == DType::Bool)
    kernelFail("class targets must be integers");
  if (target.sizes() != s.sampleSizes)
    kernelFail("target shape " + shapeString(target.sizes()) +
               " does not match the input's samples " + shapeString(s.sampleSizes));
  std::vector<int64_t> classes = target.toInts();
  auto w = [&](int64_t c) { return weight.empty() ? 1.0 : weight[c]; };
  ClassLosses r;
  r.nll.assign(s.samples(), 0);
  r.smooth.assign(s.samples(), 0);
  for (int64_t i = 0; i < s.samples(); ++i) {
    int64_t t = classes[i];
    if (t == ignoreIndex)
      continue;
    if (t < 0 || t >= s.c)
      kernelFail("target " + std::to_string(t) + " is out of bounds for " + std::to_string(s.c) +
                 " classes");
    const double *logp = s.sample(i);
    r.nll[i] = -w(t) * logp[t * s.d];
    for (int64_t c = 0; c < s.c; ++c)
      r.smooth[i] -= w(c) * logp[c * s.d];
    r.totalWeight += w(t);
  }
  return r;
}

/// nll_loss_forward and nll_loss2d_forward: the loss of log-probabilities,
/// and the total weight of the targets not ignored (0 without reduction).
std::vector<Tensor> nllLossForward(const OpCall &call) {
  Tensor self = call.tensor("self");
  ClassScores s = classScores(self, false);
  int64_t reduction = call.integer("reduction", kReduceMean);
  ClassLosses losses = classLosses(s, call.tensor("target"), optionalParam(call, "weight", s.c),
                                   call.integer("ignore_index", -100));
  return {reduceLosses(losses.nll, s.sampleSizes, reduction, losses.totalWeight, self.dtype()),
          Tensor::scalar(self.dtype(), reduction == kReduceNone ? 0 : losses.totalWeight)};
}

std::vector<Tensor> nllLoss(const OpCall &call) { return {nllLossForward(call)[0]}; }

/// cross_entropy_loss with class-index targets (nll of log_softmax, mixed
/// with the smoothing term) or class-probability targets (of the input's
/// shape, smoothed toward uniform).
std::vector<Tensor> crossEntropyLoss(const OpCall &call) {
  Tensor self = call.tensor("self"), target = call.tensor("target");
  ClassScores s = classScores(self, true);
  std::vector<double> weight = optionalParam(call, "weight", s.c);
  int64_t reduction = call.integer("reduction", kReduceMean);
  double smoothing = call.real("label_smoothing", 0.0);
  if (smoothing < 0 || smoothing > 1)
    kernelFail("label_smoothing must be between 0 and 1");
  double uniform = s.c > 0 ? smoothing / static_cast<double>(s.c) : 0;

  if (!isFloatingPoint(target.dtype())) {
    ClassLosses l = classLosses(s, target, weight, call.integer("ignore_index", -100));
    for (size_t i = 0; i < l.nll.size(); ++i)
      l.nll[i] = (1 - smoothing) * l.nll[i] + uniform * l.smooth[i];
    return {reduceLosses(l.nll, s.sampleSizes, reduction, l.totalWeight, self.dtype())};
  }

  if (target.sizes() != self.sizes())
    kernelFail("class-probability targets must have the input's shape, got " +
               shapeString(target.sizes()) + " for " + shapeString(self.sizes()));
  ClassScores probs = classScores(target, false);
  std::vector<double> losses(s.samples(), 0);
  for (int64_t i = 0; i < s.samples(); ++i)
    for (int64_t c = 0; c < s.c; ++c) {
      double p = probs.sample(i)[c * s.d] * (1 - smoothing) + uniform;
      losses[i] -= (weight.empty() ? 1 : weight[c]) * s.sample(i)[c * s.d] * p;
    }
  return {reduceLosses(losses, s.sampleSizes, reduction, static_cast<double>(s.samples()),
                       self.dtype())};
}

/// _weight_norm: v * g / ||v||, the 2-norm taken over every dim of v but
/// `dim` (over all of v for dim -1); g has v's rank with size 1 on those dims
/// (or is a scalar for dim -1), so it is read by v's index along `dim`.
std::vector<Tensor> weightNorm(const OpCall &call) {
  Tensor v = call.tensor("v"), g = call.tensor("g");
  int64_t dim = call.integer("dim", 0), rank = v.dim();
  if (dim < -1 || dim >= rank)
    throw KernelError("_weight_norm: dim " + std::to_string(dim) + " is neither -1 nor a dim of v");
  int64_t groups = dim == -1 ? 1 : v.size(dim);
  std::vector<double> sumSq(groups, 0), gains = g.to(DType::Float64).toDoubles();
  Tensor x = toF64(v).clone();
  Tensor out = Tensor::zeros(DType::Float64, v.sizes());
  Shape index(rank, 0);
  auto group = [&] { return dim == -1 ? 0 : index[dim]; };
  auto forEach = [&](auto &&f) {
    for (int64_t i = 0, n = v.numel(); i < n; ++i) {
      f();
      for (int64_t d = rank - 1; d >= 0 && ++index[d] == v.size(d); --d)
        index[d] = 0;
    }
  };
  forEach([&] { sumSq[group()] += x.getDouble(index) * x.getDouble(index); });
  forEach([&] {
    int64_t k = group();
    out.setDouble(index, x.getDouble(index) * gains[gains.size() == 1 ? 0 : k] / std::sqrt(sumSq[k]));
  });
  return {out.to(v.dtype())};
}

const KernelEntry kKernels[] = {
    {ops::aten__weight_norm_default, weightNorm},
    {ops::aten_softmax_int, softmax},
    {ops::aten_log_softmax_int, logSoftmax},
    {ops::aten__safe_softmax_default, safeSoftmax},
    {ops::aten__softmax_default, softmaxInternal},
    {ops::aten__log_softmax_default, logSoftmaxInternal},
    {ops::aten_scaled_dot_product_attention_default, scaledDotProductAttention},
    {ops::aten_mse_loss_default, mseLoss},
    {ops::aten_cross_entropy_loss_default, crossEntropyLoss},
    {ops::aten_nll_loss_default, nllLoss},
    {ops::aten_nll_loss_nd_default, nllLoss},
    {ops::aten_nll_loss_forward_default, nllLossForward},
    {ops::aten_nll_loss2d_forward_default, nllLossForward},
};

} // namespace

void registerNNKernels(KernelRegistry &r) { r.add(kKernels); }

} // namespace gc
