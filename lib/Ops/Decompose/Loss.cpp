//===- Loss.cpp - Decompositions of loss functions ------------------------===//
//
// The elementwise and margin losses of torch.nn.functional, each as its
// per-element formula followed by the `reduction` argument (none, mean,
// sum). mse_loss, nll_loss and cross_entropy live with the other neural-
// network ops (NN.cpp).
//
//===----------------------------------------------------------------------===//
#include "gc/Ops/Emit.h"

#include <cmath>
#include <numbers>
#include <sstream>

namespace gc {

namespace {

using namespace decompose;

/// A number for an error message: 3, 0.5.
std::string numberText(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

Value *zeroOf(Emit &e, Value *like) { return e.scalar(Number::integer(0), typeOf(like).dtype); }

/// max(x, 0); NaN stays NaN, as torch's clamp_min.
Value *clampMin0(Emit &e, Value *x) { return e.maximum(x, zeroOf(e, x)); }

Value *absOf(Emit &e, Value *x) { return e.unary(ops::aten_abs_default, x); }

/// `value` where `cond`, else 0.
Value *onlyWhere(Emit &e, Value *cond, Value *value) {
  return e.where(cond, value, zeroOf(e, value));
}

/// self - target, the difference every regression loss starts from.
Value *difference(RewriteContext &ctx, Emit &e) {
  return e.sub(ctx.value("self"), ctx.value("target"));
}

Results reduced(RewriteContext &ctx, Emit &e, Value *loss) {
  return finish(ctx, {e.reduceLoss(loss, ctx.integer("reduction", kMean))});
}

Results decomposeL1Loss(RewriteContext &ctx) {
  Emit e(ctx);
  return reduced(ctx, e, absOf(e, difference(ctx, e)));
}

/// smooth_l1_loss: 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta;
/// plain l1 for beta = 0.
Results decomposeSmoothL1Loss(RewriteContext &ctx) {
  Emit e(ctx);
  double beta = ctx.real("beta", 1);
  if (beta < 0)
    rewriteFail("smooth_l1_loss: beta must be non-negative, got " + numberText(beta));
  Value *d = difference(ctx, e);
  Value *a = absOf(e, d);
  if (beta == 0)
    return reduced(ctx, e, a);
  Value *quadratic = e.div(e.mul(e.mul(d, d), 0.5), beta);
  return reduced(ctx, e, e.where(e.compare(Cmp::Lt, a, Number::real(beta)), quadratic,
                                 e.sub(a, 0.5 * beta)));
}

/// huber_loss: 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta).
Results decomposeHuberLoss(RewriteContext &ctx) {
  Emit e(ctx);
  double delta = ctx.real("delta", 1);
  if (delta <= 0)
    rewriteFail("huber_loss: delta must be positive, got " + numberText(delta));
  Value *d = difference(ctx, e);
  Value *a = absOf(e, d);
  return reduced(ctx, e, e.where(e.compare(Cmp::Lt, a, Number::real(delta)), e.mul(e.mul(d, d), 0.5),
                                 e.mul(e.sub(a, 0.5 * delta), delta)));
}

/// soft_margin_loss: log(1 + exp(-target * self)).
Results decomposeSoftMarginLoss(RewriteContext &ctx) {
  Emit e(ctx);
  Value *z = e.unary(ops::aten_neg_default, e.mul(ctx.value("target"), ctx.value("self")));
  return reduced(ctx, e, e.unary(ops::aten_log1p_default, e.unary(ops::aten_exp_default, z)));
}

/// margin_ranking_loss: max(0, -target (input1 - input2) + margin).
Results decomposeMarginRankingLoss(RewriteContext &ctx) {
  Emit e(ctx);
  Value *d = e.sub(ctx.value("input1"), ctx.value("input2"));
  Value *z = e.add(e.unary(ops::aten_neg_default, e.mul(ctx.value("target"), d)),
                   ctx.real("margin", 0));
  return reduced(ctx, e, clampMin0(e, z));
}

/// hinge_embedding_loss: self where target != -1, plus max(0, margin -
/// self) where target != 1.
Results decomposeHingeEmbeddingLoss(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("self"), *t = ctx.value("target");
  Value *margin = clampMin0(e, e.sub(e.wrapNumber(Number::real(ctx.real("margin", 1)),
                                                  typeOf(x).dtype),
                                     x));
  Value *loss = e.add(onlyWhere(e, e.compare(Cmp::Ne, t, Number::integer(1)), margin),
                      onlyWhere(e, e.compare(Cmp::Ne, t, Number::integer(-1)), x));
  return reduced(ctx, e, loss);
}

/// kl_div: target (log target - self), as exp(target) (target - self) for
/// a log target, else xlogy(target, target) - target * self.
Results decomposeKlDiv(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("self"), *t = ctx.value("target");
  Value *loss;
  if (ctx.boolean("log_target", false))
    loss = e.mul(e.unary(ops::aten_exp_default, t), e.sub(t, x));
  else
    loss = e.sub(e.op(ops::aten_xlogy_Tensor, {{"self", t}, {"other", t}}), e.mul(t, x));
  return reduced(ctx, e, loss);
}

Value *optionalWeight(Emit &e, RewriteContext &ctx, Value *loss, std::string_view name = "weight") {
  std::optional<Value *> w = ctx.optValue(name);
  return w && *w ? e.mul(loss, *w) : loss;
}

/// binary_cross_entropy: -(target log(self) + (1 - target) log(1 - self)),
/// each log clamped at -100 as torch does, times the weight.
Results decomposeBinaryCrossEntropy(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("self"), *t = ctx.value("target");
  Value *floor = e.scalar(Number::real(-100), typeOf(x).dtype);
  Value *logX = e.maximum(e.unary(ops::aten_log_default, x), floor);
  Value *log1mX =
      e.maximum(e.unary(ops::aten_log1p_default, e.unary(ops::aten_neg_default, x)), floor);
  Value *loss = e.sub(e.mul(e.sub(t, int64_t(1)), log1mX), e.mul(t, logX));
  return reduced(ctx, e, optionalWeight(e, ctx, loss));
}

/// binary_cross_entropy_with_logits: (1 - target) self - log_sigmoid(self)
/// (1 + (pos_weight - 1) target), times the weight.
Results decomposeBinaryCrossEntropyWithLogits(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("self"), *t = ctx.value("target");
  Value *logSig = e.unary(ops::aten_log_sigmoid_default, x);
  if (std::optional<Value *> pw = ctx.optValue("pos_weight"); pw && *pw)
    logSig = e.mul(logSig, e.add(e.mul(e.sub(*pw, int64_t(1)), t), int64_t(1)));
  Value *oneMinusT = e.sub(e.scalar(Number::integer(1), typeOf(t).dtype), t);
  Value *loss = e.sub(e.mul(oneMinusT, x), logSig);
  return reduced(ctx, e, optionalWeight(e, ctx, loss));
}

/// poisson_nll_loss: exp(input) - target input for a log input, else
/// input - target log(input + eps); `full` adds Stirling's approximation
/// of log(target!) where target > 1.
Results decomposePoissonNllLoss(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("input"), *t = ctx.value("target");
  Value *loss;
  if (ctx.boolean("log_input", true))
    loss = e.sub(e.unary(ops::aten_exp_default, x), e.mul(t, x));
  else
    loss = e.sub(x, e.mul(t, e.unary(ops::aten_log_default, e.add(x, ctx.real("eps", 1e-8)))));
  if (ctx.boolean("full", false)) {
    Value *logT = e.unary(ops::aten_log_default, t);
    Value *stirling = e.add(e.sub(e.mul(t, logT), t),
                            e.mul(e.unary(ops::aten_log_default, e.mul(t, 2 * std::numbers::pi)), 0.5));
    loss = e.add(loss, onlyWhere(e, e.compare(Cmp::Gt, t, Number::integer(1)), stirling));
  }
  return reduced(ctx, e, loss);
}

/// The dim the distance and similarity losses reduce: the last one of the
/// broadcast inputs.
int64_t lastDim(Value *a, Value *b) { return std::max<int64_t>(std::max(rankOf(a), rankOf(b)) - 1, 0); }

/// cosine_embedding_loss: 1 - cos where target = 1, max(0, cos - margin)
/// where target = -1; cos = <x1, x2> / sqrt((|x1|^2 + eps)(|x2|^2 + eps)).
Results decomposeCosineEmbeddingLoss(RewriteContext &ctx) {
  Emit e(ctx);
  Value *a = ctx.value("input1"), *b = ctx.value("input2"), *t = ctx.value("target");
  constexpr double kEps = 1e-12;
  int64_t d = lastDim(a, b);
  Dims dims = rankOf(a) == 0 ? Dims{} : Dims{d};
  auto sumOf = [&](Value *v) { return dims.empty() ? v : e.sum(v, dims, false); };
  Value *dot = sumOf(e.mul(a, b));
  Value *na = e.add(sumOf(e.mul(a, a)), kEps), *nb = e.add(sumOf(e.mul(b, b)), kEps);
  Value *cos = e.div(dot, e.unary(ops::aten_sqrt_default, e.mul(na, nb)));
  Value *pos = e.sub(e.scalar(Number::integer(1), typeOf(cos).dtype), cos);
  Value *neg = clampMin0(e, e.sub(cos, ctx.real("margin", 0)));
  Value *loss = e.add(onlyWhere(e, e.compare(Cmp::Eq, t, Number::integer(1)), pos),
                      onlyWhere(e, e.compare(Cmp::Eq, t, Number::integer(-1)), neg));
  return reduced(ctx, e, loss);
}

/// ||x1 - x2 + eps||_p over the last dim.
Value *pairwiseDistance(Emit &e, Value *a, Value *b, double p, double eps, bool keepdim) {
  int64_t d = lastDim(a, b);
  Value *diff = e.add(e.sub(a, b), eps);
  return e.op(ops::aten_linalg_vector_norm_default,
              {{"self", diff}, {"ord", p}, {"dim", Dims{rankOf(diff) == 0 ? -1 : d}}, {"keepdim", keepdim}});
}

Results decomposePairwiseDistance(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {pairwiseDistance(e, ctx.value("x1"), ctx.value("x2"), ctx.real("p", 2),
                                       ctx.real("eps", 1e-6), ctx.boolean("keepdim", false))});
}

/// triplet_margin_loss: max(0, margin + d(a, p) - d(a, n)), d the pairwise
/// distance; `swap` takes min(d(a, n), d(p, n)) for the negative.
Results decomposeTripletMarginLoss(RewriteContext &ctx) {
  Emit e(ctx);
  Value *a = ctx.value("anchor"), *p = ctx.value("positive"), *n = ctx.value("negative");
  double norm = ctx.real("p", 2), eps = ctx.real("eps", 1e-6);
  Value *dPos = pairwiseDistance(e, a, p, norm, eps, false);
  Value *dNeg = pairwiseDistance(e, a, n, norm, eps, false);
  if (ctx.boolean("swap", false))
    dNeg = e.minimum(dNeg, pairwiseDistance(e, p, n, norm, eps, false));
  return reduced(ctx, e, clampMin0(e, e.sub(e.add(dPos, ctx.real("margin", 1)), dNeg)));
}

/// A margin loss's input as [N, C] (a 0-dim one as [1, 1], a vector as
/// [1, C]) with its class count.
std::pair<Value *, int64_t> asBatchOfRows(Emit &e, Value *x, std::string_view op) {
  int64_t rank = rankOf(x);
  if (rank > 2)
    rewriteFail(std::string(op) + ": input must have at most 2 dims, got " + std::to_string(rank));
  const Sizes &s = sizesOf(x);
  SymContext &syms = e.syms();
  int64_t classes = rank == 0 ? 1 : staticSize(s.back(), "the class dim");
  if (rank == 2)
    return {x, classes};
  return {e.reshape(x, {syms.constant(1), syms.constant(classes)}), classes};
}

/// The per-sample loss [N] back in torch's shape for its input's rank: a
/// 0-dim value for a vector or 0-dim input.
Value *perSample(Emit &e, Value *loss, Value *input) {
  return rankOf(input) == 2 ? loss : e.squeeze(loss, {0});
}

/// multi_margin_loss: per sample, the sum over classes i != y of
/// max(0, margin - x[y] + x[i])^p (times weight[y]), over C.
Results decomposeMultiMarginLoss(RewriteContext &ctx) {
  Emit e(ctx);
  Value *input = ctx.value("self");
  auto [x, classes] = asBatchOfRows(e, input, "multi_margin_loss");
  Value *t = ctx.value("target");
  t = rankOf(t) == 0 ? e.unsqueeze(t, 0) : t;
  Number p = number(ctx, "p");
  if (p.value() != 1 && p.value() != 2)
    rewriteFail("multi_margin_loss: p must be 1 or 2, got " + numberText(p.value()));
  Value *col = e.unsqueeze(t, 1);
  Value *picked = e.op(ops::aten_gather_default, {{"self", x}, {"dim", int64_t(1)}, {"index", col}});
  Value *z = clampMin0(e, e.add(e.sub(x, picked), optNumber(ctx, "margin").value_or(Number::integer(1)).arg()));
  if (p.value() == 2)
    z = e.mul(z, z);
  if (std::optional<Value *> w = ctx.optValue("weight"); w && *w)
    z = e.mul(z, e.unsqueeze(e.op(ops::aten_index_Tensor,
                                  {{"self", *w}, {"indices", std::vector<Value *>{t}}}),
                             1));
  Value *isTarget = e.compare(Cmp::Eq, e.unsqueeze(e.arange(classes), 0), col);
  Value *loss = e.div(e.sum(e.where(isTarget, zeroOf(e, z), z), {1}, false), classes);
  return reduced(ctx, e, perSample(e, loss, input));
}

/// multilabel_margin_loss: the target row lists class indices up to the
/// first -1; per sample, the sum over listed j and unlisted i of
/// max(0, 1 - (x[j] - x[i])), over C.
Results decomposeMultilabelMarginLoss(RewriteContext &ctx) {
  Emit e(ctx);
  Value *input = ctx.value("self");
  auto [x, classes] = asBatchOfRows(e, input, "multilabel_margin_loss");
  Value *t = ctx.value("target");
  if (rankOf(t) != rankOf(input))
    rewriteFail("multilabel_margin_loss: target must have the input's shape");
  t = rankOf(t) == 2 ? t : e.reshape(t, sizesOf(x));
  // Entries before the first -1 are listed.
  Value *ended = e.op(ops::aten_cumsum_default,
                      {{"self", e.cast(e.compare(Cmp::Eq, t, Number::integer(-1)), DType::Int64)},
                       {"dim", int64_t(1)}});
  Value *listed = e.compare(Cmp::Eq, ended, Number::integer(0));
  Value *safe = e.where(listed, t, e.scalar(Number::integer(0), typeOf(t).dtype));
  // isTarget[n, i]: some listed j names class i.
  Value *names = e.op(ops::aten_logical_and_default,
                      {{"self", e.compare(Cmp::Eq, e.unsqueeze(safe, 2), e.arange(classes))},
                       {"other", e.unsqueeze(listed, 2)}});
  Value *isTarget = e.op(ops::aten_any_dim, {{"self", names}, {"dim", int64_t(1)}});
  Value *picked = e.op(ops::aten_gather_default, {{"self", x}, {"dim", int64_t(1)}, {"index", safe}});
  // z[n, j, i] = max(0, 1 - x[n, t[n, j]] + x[n, i]) for listed j, unlisted i.
  Value *z = clampMin0(e, e.add(e.sub(e.unsqueeze(x, 1), e.unsqueeze(picked, 2)), int64_t(1)));
  Value *keep = e.op(ops::aten_logical_and_default,
                     {{"self", e.unsqueeze(listed, 2)}, {"other", e.unsqueeze(e.logicalNot(isTarget), 1)}});
  Value *loss = e.div(e.sum(onlyWhere(e, keep, z), {1, 2}, false), classes);
  return finish(ctx, {e.reduceLoss(perSample(e, loss, input), ctx.integer("reduction", kMean))});
}

/// The reduction named by a string argument (torch_nn's ops), as the
/// integer code the aten losses take.
int64_t reductionNamed(const std::string &name) {
  if (name == "none")
    return kNone;
  if (name == "sum")
    return kSum;
  if (name == "mean")
    return kMean;
  rewriteFail("unknown reduction '" + name + "'");
}

/// torch_nn._linear_cross_entropy_batch_chunked: cross_entropy of
/// linear(input); the chunking only bounds torch's memory. The gradient
/// results are the empty tensors torch returns when not asked for them.
Results decomposeLinearCrossEntropy(RewriteContext &ctx) {
  Emit e(ctx);
  for (const char *flag :
       {"compute_input_grad", "compute_linear_weight_grad", "compute_linear_bias_grad"})
    if (ctx.boolean(flag, false))
      rewriteFail(std::string(flag) + " (gradients computed in the forward pass) is not supported");
  Value *logits = e.op(ops::aten_linear_default,
                       {{"input", ctx.value("input")},
                        {"weight", ctx.value("linear_weight")},
                        {"bias", ctx.optValue("linear_bias").value_or(nullptr)}});
  Value *loss = e.op(ops::aten_cross_entropy_loss_default,
                     {{"self", logits},
                      {"target", ctx.value("target")},
                      {"weight", ctx.optValue("weight").value_or(nullptr)},
                      {"reduction", reductionNamed(ctx.string("reduction", "mean"))},
                      {"ignore_index", ctx.integer("ignore_index", -100)},
                      {"label_smoothing", ctx.real("label_smoothing", 0.0)}});
  std::vector<Value *> results = {loss};
  for (size_t i = 1; i < 4; ++i)
    results.push_back(e.full(ctx.resultType(i).sizes, Number::integer(0), ctx.resultType(i).dtype));
  return finish(ctx, results);
}

const DecompositionEntry kLossDecompositions[] = {
    {ops::aten_binary_cross_entropy_default, decomposeBinaryCrossEntropy},
    {ops::aten_binary_cross_entropy_with_logits_default, decomposeBinaryCrossEntropyWithLogits},
    {ops::aten_cosine_embedding_loss_default, decomposeCosineEmbeddingLoss},
    {ops::aten_hinge_embedding_loss_default, decomposeHingeEmbeddingLoss},
    {ops::aten_huber_loss_default, decomposeHuberLoss},
    {ops::aten_kl_div_default, decomposeKlDiv},
    {ops::aten_l1_loss_default, decomposeL1Loss},
    {ops::aten_margin_ranking_loss_default, decomposeMarginRankingLoss},
    {ops::aten_multi_margin_loss_default, decomposeMultiMarginLoss},
    {ops::aten_multilabel_margin_loss_default, decomposeMultilabelMarginLoss},
    {ops::aten_pairwise_distance_default, decomposePairwiseDistance},
    {ops::aten_poisson_nll_loss_default, decomposePoissonNllLoss},
    {ops::aten_smooth_l1_loss_default, decomposeSmoothL1Loss},
    {ops::aten_soft_margin_loss_default, decomposeSoftMarginLoss},
    {ops::aten_triplet_margin_loss_default, decomposeTripletMarginLoss},
    {ops::torch_nn__linear_cross_entropy_batch_chunked_default, decomposeLinearCrossEntropy},
};

} // namespace

void registerLossDecompositions(DecompositionRegistry &r) { r.add(kLossDecompositions); }

} // namespace gc
