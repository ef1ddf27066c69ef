//===- NN.cpp - Decompositions of neural-network ops ----------------------===//
//
// Linear layers, matmul and einsum (to mm and bmm with views, expands and
// permutes; the other products are in Products.cpp), convolution and pooling wrappers, normalizations (their
// statistics through core reductions), attention in its math form, and
// losses. Dropout is with the other random ops (Random.cpp).
//
//===----------------------------------------------------------------------===//
#include "gc/Ops/Emit.h"

#include "gc/IR/OpSchema.h"
#include "gc/IR/TypePromotion.h"
#include "gc/Ops/ShapeInference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

namespace gc {

namespace {

using namespace decompose;

constexpr double kInf = std::numeric_limits<double>::infinity();

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

/// The last two dims swapped (a vector stays as it is).
Value *transposeLast2(Emit &e, Value *x) { return rankOf(x) < 2 ? x : e.transpose(x, -2, -1); }

Results decomposeLinear(RewriteContext &ctx) {
  Emit e(ctx);
  Value *out = e.matmul(ctx.value("input"), transposeLast2(e, ctx.value("weight")));
  if (ctx.has("bias"))
    out = e.add(out, ctx.value("bias"));
  return finish(ctx, {out});
}

Results decomposeMatmul(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {e.matmul(ctx.value("self"), ctx.value("other"))});
}

/// One einsum operand: its value and one letter per dim.
struct Labeled {
  Value *value;
  std::string labels;
};

/// Sums out the labels of `x` that are not in `keep`.
Labeled sumOutExcept(Emit &e, Labeled x, const std::string &keep) {
  Dims dims;
  std::string rest;
  for (size_t i = 0; i < x.labels.size(); ++i) {
    if (keep.find(x.labels[i]) == std::string::npos)
      dims.push_back(static_cast<int64_t>(i));
    else
      rest += x.labels[i];
  }
  if (dims.empty())
    return x;
  return {e.sum(x.value, dims, false), rest};
}

/// x permuted so that its labels read `order`.
Value *permuteTo(Emit &e, const Labeled &x, const std::string &order) {
  Dims perm;
  for (char c : order)
    perm.push_back(static_cast<int64_t>(x.labels.find(c)));
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity &= perm[i] == static_cast<int64_t>(i);
  return identity ? x.value : e.permute(x.value, perm);
}

/// The size each label of `order` has in `x`.
Sizes labelSizes(const Labeled &x, const std::string &order) {
  Sizes out;
  for (char c : order)
    out.push_back(sizesOf(x.value)[x.labels.find(c)]);
  return out;
}

/// The product of two operands keeping the labels in `keep` (in a's order,
/// then b's): batch labels (in both, kept), contracted ones (in both, not
/// kept) and free ones become one bmm.
Labeled contract(Emit &e, Labeled a, Labeled b, const std::string &keep) {
  auto in = [](const std::string &s, char c) { return s.find(c) != std::string::npos; };
  // Labels only one operand has and nobody keeps are summed out first.
  a = sumOutExcept(e, a, keep + b.labels);
  b = sumOutExcept(e, b, keep + a.labels);
  std::string batch, contracted, freeA, freeB;
  for (char c : a.labels) {
    if (in(b.labels, c))
      (in(keep, c) ? batch : contracted) += c;
    else
      freeA += c;
  }
  for (char c : b.labels)
    if (!in(a.labels, c))
      freeB += c;
  SymContext &s = e.syms();
  Sizes batchSizes = labelSizes(a, batch);
  const SymExpr *nb = sizeProduct(s, batchSizes);
  const SymExpr *m = sizeProduct(s, labelSizes(a, freeA));
  const SymExpr *k = sizeProduct(s, labelSizes(a, contracted));
  const SymExpr *n = sizeProduct(s, labelSizes(b, freeB));
  Value *a3 = e.reshape(permuteTo(e, a, batch + freeA + contracted), {nb, m, k});
  Value *b3 = e.reshape(permuteTo(e, b, batch + contracted + freeB), {nb, k, n});
  Sizes out = batchSizes;
  for (const Sizes &part : {labelSizes(a, freeA), labelSizes(b, freeB)})
    out.insert(out.end(), part.begin(), part.end());
  return {e.reshape(e.bmm(a3, b3), out), batch + freeA + freeB};
}

/// einsum without ellipses or repeated labels in one operand: operands are
/// contracted left to right, each step keeping the labels still needed.
Results decomposeEinsum(RewriteContext &ctx) {
  Emit e(ctx);
  std::string eq;
  for (char c : ctx.string("equation", ""))
    if (c != ' ')
      eq += c;
  std::vector<Value *> xs = ctx.values("tensors");
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<Labeled> ops;
  for (size_t start = 0, i = 0; i < xs.size(); ++i) {
    size_t comma = lhs.find(',', start);
    std::string labels = lhs.substr(start, comma == std::string::npos ? comma : comma - start);
    start = comma + 1;
    if (labels.find('.') != std::string::npos)
      rewriteFail("einsum: ellipses ('...') are not supported");
    if (static_cast<int64_t>(labels.size()) != rankOf(xs[i]))
      rewriteFail("einsum: operand " + std::to_string(i) + " has " + std::to_string(rankOf(xs[i])) +
                  " dims, the equation names " + std::to_string(labels.size()));
    std::map<char, int> seen;
    for (char c : labels)
      if (++seen[c] > 1)
        rewriteFail("einsum: repeated labels within one operand (diagonals) are not supported");
    ops.push_back({xs[i], labels});
  }
  std::string output;
  if (arrow != std::string::npos) {
    output = eq.substr(arrow + 2);
  } else {
    // Implicit output: the labels that occur once, in alphabetical order.
    std::map<char, int> counts;
    for (char c : lhs)
      if (c != ',')
        ++counts[c];
    for (auto [c, n] : counts)
      if (n == 1)
        output += c;
  }
  if (ops.empty())
    rewriteFail("einsum needs at least one operand");
  Labeled acc = ops[0];
  for (size_t i = 1; i < ops.size(); ++i) {
    std::string later = output;
    for (size_t j = i + 1; j < ops.size(); ++j)
      later += ops[j].labels;
    acc = contract(e, acc, ops[i], later);
  }
  acc = sumOutExcept(e, acc, output);
  return finish(ctx, {permuteTo(e, acc, output)});
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// conv1d/2d/3d, with numeric or string ("valid", "same") padding, as one
/// convolution; an unbatched input gets a batch dim of 1 for the call.
Results decomposeConv(RewriteContext &ctx) {
  Emit e(ctx);
  Value *input = ctx.value("input"), *weight = ctx.value("weight");
  size_t n = typeOf(weight).rank() - 2;
  Dims stride = intsOfLength(ctx, "stride", n, 1);
  Dims dilation = intsOfLength(ctx, "dilation", n, 1);
  Dims padding;
  bool unbatched = rankOf(input) == static_cast<int64_t>(n) + 1;
  if (unbatched)
    input = e.unsqueeze(input, 0);
  if (ctx.has("padding") && ctx.find("padding")->value.kind == ArgKind::String) {
    std::string mode = ctx.string("padding", "valid");
    padding.assign(n, 0);
    if (mode == "same") {
      // Total padding d*(k-1), split evenly; an odd one goes to the end,
      // through an explicit pad.
      Dims extra;
      bool uneven = false;
      for (size_t i = 0; i < n; ++i) {
        int64_t k = staticSize(sizesOf(weight)[i + 2], "the kernel");
        int64_t total = dilation[i] * (k - 1);
        padding[i] = total / 2;
        extra.push_back(total - 2 * padding[i]);
        uneven |= extra.back() != 0;
      }
      if (uneven) {
        Dims pad; // last dim first, (before, after) pairs
        for (size_t i = n; i-- > 0;) {
          pad.push_back(0);
          pad.push_back(extra[i]);
        }
        input = e.op(ops::aten_constant_pad_nd_default,
                     {{"self", input}, {"pad", pad}, {"value", int64_t(0)}});
      }
    } else if (mode != "valid") {
      rewriteFail("conv: unknown padding '" + mode + "'");
    }
  } else {
    padding = intsOfLength(ctx, "padding", n, 0);
  }
  Value *out =
      e.op(ops::aten_convolution_default, {{"input", input},
                                        {"weight", weight},
                                        {"bias", ctx.has("bias") ? ctx.value("bias") : nullptr},
                                        {"stride", stride},
                                        {"padding", padding},
                                        {"dilation", dilation},
                                        {"transposed", false},
                                        {"output_padding", Dims(n, 0)},
                                        {"groups", ctx.integer("groups", 1)}});
  return finish(ctx, {unbatched ? e.squeeze(out, {0}) : out});
}

/// x with s - 1 zeros inserted between neighbours along dim d.
Value *dilateDim(Emit &e, Value *x, int64_t d, int64_t s) {
  int64_t n = staticSize(sizesOf(x)[d], "the input size");
  if (s == 1 || n == 0)
    return x;
  SymContext &syms = e.syms();
  Value *wide = e.unsqueeze(x, d + 1);
  Dims pad(2 * (rankOf(wide) - d - 2), 0);
  pad.push_back(0);
  pad.push_back(s - 1);
  wide = e.op(ops::aten_constant_pad_nd_default, {{"self", wide}, {"pad", pad}, {"value", int64_t(0)}});
  Sizes merged = sizesOf(x);
  merged[d] = syms.constant(n * s);
  return e.slice(e.reshape(wide, merged), d, 0, (n - 1) * s + 1);
}

/// conv_transpose1d/2d/3d as a plain convolution: the input dilated by the
/// stride and padded by dilation * (k - 1) - padding (plus output_padding
/// at the end), the weight's channels swapped per group and its kernel
/// flipped, stride 1.
Results decomposeConvTranspose(RewriteContext &ctx) {
  Emit e(ctx);
  Value *input = ctx.value("input"), *weight = ctx.value("weight");
  int64_t n = rankOf(weight) - 2;
  if (n < 1)
    rewriteFail("conv_transpose: the weight needs at least 3 dims");
  Dims stride = intsOfLength(ctx, "stride", n, 1);
  Dims padding = intsOfLength(ctx, "padding", n, 0);
  Dims outPad = intsOfLength(ctx, "output_padding", n, 0);
  Dims dilation = intsOfLength(ctx, "dilation", n, 1);
  int64_t groups = ctx.integer("groups", 1);
  bool unbatched = rankOf(input) == n + 1;
  if (unbatched)
    input = e.unsqueeze(input, 0);
  SymContext &syms = e.syms();
  Dims pad; // constant_pad_nd's list: last dim first
  for (int64_t i = n; i-- > 0;) {
    int64_t d = i + 2;
    input = dilateDim(e, input, d, stride[i]);
    int64_t k = staticSize(sizesOf(weight)[d], "the kernel");
    int64_t edge = dilation[i] * (k - 1) - padding[i];
    pad.push_back(edge);
    pad.push_back(edge + outPad[i]);
  }
  bool padded = std::any_of(pad.begin(), pad.end(), [](int64_t p) { return p != 0; });
  if (padded)
    input = e.op(ops::aten_constant_pad_nd_default, {{"self", input}, {"pad", pad}, {"value", int64_t(0)}});
  // [Cin, Cout/g, k...] -> [g, Cin/g, Cout/g, k...] -> [Cout, Cin/g, k...].
  const Sizes &ws = sizesOf(weight);
  const SymExpr *g = syms.constant(groups);
  const SymExpr *inPerGroup = syms.floorDiv(ws[0], g);
  Sizes grouped = {g, inPerGroup, ws[1]};
  Sizes swapped = {syms.mul(ws[1], g), inPerGroup};
  for (int64_t i = 0; i < n; ++i) {
    grouped.push_back(ws[i + 2]);
    swapped.push_back(ws[i + 2]);
  }
  Value *w = e.reshape(e.transpose(e.reshape(weight, grouped), 1, 2), swapped);
  Dims spatial(n);
  std::iota(spatial.begin(), spatial.end(), 2);
  w = e.op(ops::aten_flip_default, {{"self", w}, {"dims", spatial}});
  Value *out =
      e.op(ops::aten_convolution_default, {{"input", input},
                                        {"weight", w},
                                        {"bias", ctx.has("bias") ? ctx.value("bias") : nullptr},
                                        {"stride", Dims(n, 1)},
                                        {"padding", Dims(n, 0)},
                                        {"dilation", dilation},
                                        {"transposed", false},
                                        {"output_padding", Dims(n, 0)},
                                        {"groups", groups}});
  return finish(ctx, {unbatched ? e.squeeze(out, {0}) : out});
}

Results decomposeMaxPool2d(RewriteContext &ctx) {
  std::vector<std::pair<std::string, ArgValue>> args;
  for (const NamedArg &a : ctx.node().args())
    args.emplace_back(a.name, ctx.passThrough(a.name));
  std::vector<Value *> r =
      ctx.builder().create(ops::aten_max_pool2d_with_indices_default, std::move(args));
  return finish(ctx, {r.at(0)});
}

/// Adaptive average pooling of one dim (-2 or -1) to `out` cells: cell i
/// averages [floor(i n / out), ceil((i + 1) n / out)).
Value *adaptiveMeans(Emit &e, Value *x, int64_t dim, int64_t out) {
  int64_t n = staticSize(sizesOf(x)[rankOf(x) + dim], "the pooled dim");
  int64_t d = rankOf(x) + dim;
  std::vector<Value *> cells;
  for (int64_t i = 0; i < out; ++i) {
    int64_t start = i * n / out, end = ((i + 1) * n + out - 1) / out;
    cells.push_back(e.mean(e.slice(x, d, start, end), {d}, true));
  }
  return cells.size() == 1 ? cells[0] : e.cat(cells, d);
}

/// adaptive_avg_pool2d: a mean for a 1x1 output, avg_pool2d when the cells
/// tile the input evenly, else means of slices, one dim at a time.
Results decomposeAdaptiveAvgPool2d(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("self");
  Dims out = intsOfLength(ctx, "output_size", 2, 1);
  int64_t rank = rankOf(x);
  if (rank < 3)
    rewriteFail("adaptive_avg_pool2d needs a 3-D or 4-D input");
  if (out[0] == 1 && out[1] == 1)
    return finish(ctx, {e.mean(x, {rank - 2, rank - 1}, true)});
  const Sizes &s = sizesOf(x);
  int64_t h = staticSize(s[rank - 2], "the pooled height");
  int64_t w = staticSize(s[rank - 1], "the pooled width");
  if (out[0] > 0 && out[1] > 0 && h % out[0] == 0 && w % out[1] == 0) {
    Dims kernel = {h / out[0], w / out[1]};
    return finish(ctx, {e.op(ops::aten_avg_pool2d_default, {{"self", x},
                                                         {"kernel_size", kernel},
                                                         {"stride", kernel},
                                                         {"padding", Dims{0, 0}}})});
  }
  return finish(ctx, {adaptiveMeans(e, adaptiveMeans(e, x, -2, out[0]), -1, out[1])});
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

/// y * weight + bias, either of which may be absent.
Value *affine(Emit &e, Value *y, Value *weight, Value *bias) {
  if (weight)
    y = e.mul(y, weight);
  if (bias)
    y = e.add(y, bias);
  return y;
}

/// (x - mean) * rstd, then the affine part; each of mean, rstd, weight and
/// bias already broadcasts against x.
Value *normalize(Emit &e, Value *x, Value *mean, Value *rstd, Value *weight, Value *bias) {
  return affine(e, e.mul(e.sub(x, mean), rstd), weight, bias);
}

/// A Tensor? argument, null for None.
Value *valueOrNull(RewriteContext &ctx, std::string_view name) {
  return ctx.optValue(name).value_or(nullptr);
}

/// A per-channel vector (or null) broadcast along dim 1 of a rank-`rank`
/// tensor.
Value *perChannel(Emit &e, Value *v, int64_t rank) { return v ? e.alongDim(v, 1, rank) : nullptr; }

Value *rsqrtPlus(Emit &e, Value *var, double eps) { return e.unary(ops::aten_rsqrt_default, e.add(var, eps)); }

/// The dims batch norm reduces: all but the channel dim.
Dims batchNormDims(Value *x) {
  Dims dims;
  for (int64_t d = 0; d < rankOf(x); ++d)
    if (d != 1)
      dims.push_back(d);
  return dims;
}

/// What every batch norm variant computes.
struct BatchNormResult {
  Value *out;
  Value *mean = nullptr, *rstd = nullptr;              // batch statistics [C]
  Value *runningMean = nullptr, *runningVar = nullptr; // updated running stats
};

/// Batch norm of `x` (cast to its compute dtype). With `training`, batch
/// statistics normalize, and running stats (if given) are updated with
/// `momentum` and the unbiased variance; else the running stats normalize.
BatchNormResult batchNorm(RewriteContext &ctx, Emit &e, bool training) {
  Value *input = ctx.value("input");
  Value *x = e.cast(input, computeDType(typeOf(input).dtype));
  int64_t rank = rankOf(x);
  Value *weight = perChannel(e, valueOrNull(ctx, "weight"), rank);
  Value *bias = perChannel(e, valueOrNull(ctx, "bias"), rank);
  Value *runningMean = valueOrNull(ctx, "running_mean"),
        *runningVar = valueOrNull(ctx, "running_var");
  double eps = ctx.real("eps", 1e-5);
  BatchNormResult r;
  if (!training) {
    if (!runningMean || !runningVar)
      rewriteFail("batch_norm in inference mode needs running statistics");
    Value *rstd = rsqrtPlus(e, runningVar, eps);
    r.out =
        normalize(e, x, perChannel(e, runningMean, rank), perChannel(e, rstd, rank), weight, bias);
    r.runningMean = runningMean;
    r.runningVar = runningVar;
    return r;
  }
  Dims dims = batchNormDims(x);
  Value *mean = e.mean(x, dims, true);
  Value *centered = e.sub(x, mean);
  Value *squares = e.sum(e.mul(centered, centered), dims, false);
  ArgValue n = e.count(x, dims);
  Value *var = e.div(squares, n);
  Value *rstd = rsqrtPlus(e, var, eps);
  r.out = normalize(e, x, mean, perChannel(e, rstd, rank), weight, bias);
  r.mean = e.squeeze(mean, dims);
  r.rstd = rstd;
  if (runningMean && runningVar) {
    double momentum = ctx.real("momentum", 0.1);
    Value *unbiased = n.arg.kind == ArgKind::Int
                          ? e.div(squares, static_cast<double>(n.arg.ints[0] - 1))
                          : e.div(squares, e.sub(n.arg.values[0], int64_t(1)));
    auto update = [&](Value *running, Value *batch) {
      Value *b = e.cast(batch, typeOf(running).dtype);
      return e.add(e.mul(running, 1 - momentum), e.mul(b, momentum));
    };
    r.runningMean = update(runningMean, r.mean);
    r.runningVar = update(runningVar, unbiased);
  }
  return r;
}

/// The empty [0] tensor torch returns for statistics it does not compute.
Value *emptyStats(RewriteContext &ctx, Emit &e, size_t result) {
  return e.full({e.syms().constant(0)}, Number::integer(0), ctx.resultType(result).dtype);
}

/// Statistics or the empty placeholder, as the recorded result has.
Value *statsOrEmpty(RewriteContext &ctx, Emit &e, size_t result, Value *stats) {
  const Sizes &want = ctx.resultType(result).sizes;
  bool empty = want.size() == 1 && want[0]->isConst() && want[0]->constant() == 0;
  if (empty || !stats)
    return emptyStats(ctx, e, result);
  return stats;
}

/// batch_norm in training mode writes the running statistics; the
/// functionalize pass turns such calls into the functional form first.
void requireNoRunningStatsUpdate(RewriteContext &ctx, bool training) {
  if (training && ctx.has("running_mean"))
    rewriteFail(opString(ctx.node().op()) +
                " in training mode updates running statistics in place; run the functionalize "
                "pass first, which makes it aten._native_batch_norm_legit_functional");
}

Results decomposeBatchNorm(RewriteContext &ctx) {
  Emit e(ctx);
  bool training = ctx.boolean("training", false);
  requireNoRunningStatsUpdate(ctx, training);
  return finish(ctx, {batchNorm(ctx, e, training || !ctx.has("running_mean")).out});
}

Results decomposeNativeBatchNorm(RewriteContext &ctx) {
  Emit e(ctx);
  bool training = ctx.boolean("training", false);
  requireNoRunningStatsUpdate(ctx, training);
  BatchNormResult r = batchNorm(ctx, e, training);
  return finish(ctx, {r.out, statsOrEmpty(ctx, e, 1, r.mean), statsOrEmpty(ctx, e, 2, r.rstd)});
}

Results decomposeBatchNormNoTraining(RewriteContext &ctx) {
  Emit e(ctx);
  BatchNormResult r = batchNorm(ctx, e, false);
  return finish(ctx, {r.out, emptyStats(ctx, e, 1), emptyStats(ctx, e, 2)});
}

Results decomposeBatchNormNoStats(RewriteContext &ctx) {
  Emit e(ctx);
  BatchNormResult r = batchNorm(ctx, e, true);
  return finish(ctx, {r.out, r.mean, r.rstd});
}

/// The functional form the functionalize pass makes: the new running
/// statistics are results instead of writes.
Results decomposeBatchNormFunctional(RewriteContext &ctx) {
  Emit e(ctx);
  BatchNormResult r = batchNorm(ctx, e, ctx.boolean("training", false));
  return finish(ctx, {r.out, statsOrEmpty(ctx, e, 1, r.mean), statsOrEmpty(ctx, e, 2, r.rstd),
                      r.runningMean, r.runningVar});
}

/// layer_norm and native_layer_norm: statistics over the trailing
/// normalized dims, kept as size-1 dims.
Results layerNorm(RewriteContext &ctx, bool withStats) {
  Emit e(ctx);
  Value *input = ctx.value("input");
  Value *x = e.cast(input, computeDType(typeOf(input).dtype));
  int64_t k = static_cast<int64_t>(ctx.ints("normalized_shape").size());
  int64_t rank = rankOf(x);
  if (k > rank)
    rewriteFail("layer_norm: normalized_shape has more dims than the input");
  Dims dims(k);
  std::iota(dims.begin(), dims.end(), rank - k);
  Value *mean = e.mean(x, dims, true);
  Value *centered = e.sub(x, mean);
  Value *rstd = rsqrtPlus(e, e.mean(e.mul(centered, centered), dims, true), ctx.real("eps", 1e-5));
  Value *out = normalize(e, x, mean, rstd, valueOrNull(ctx, "weight"), valueOrNull(ctx, "bias"));
  if (!withStats)
    return finish(ctx, {out});
  return finish(ctx, {out, mean, rstd});
}
Results decomposeLayerNorm(RewriteContext &ctx) { return layerNorm(ctx, false); }
Results decomposeNativeLayerNorm(RewriteContext &ctx) { return layerNorm(ctx, true); }

/// _weight_norm (torch.nn.utils.weight_norm's reparametrization):
/// v * (g / ||v||), the 2-norm over every dim but `dim`, kept as size-1 dims
/// so that it broadcasts against g; dim -1 takes the norm of all of v.
Results decomposeWeightNorm(RewriteContext &ctx) {
  Emit e(ctx);
  Value *v = ctx.value("v");
  int64_t dim = ctx.integer("dim", 0), rank = rankOf(v);
  if (dim < -1 || dim >= rank)
    rewriteFail("_weight_norm: dim " + std::to_string(dim) + " is neither -1 nor a dim of v (rank " +
                std::to_string(rank) + ")");
  Dims dims;
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim)
      dims.push_back(d);
  Value *norm = dims.empty() ? e.unary(ops::aten_abs_default, v)
                             : e.unary(ops::aten_sqrt_default, e.sum(e.mul(v, v), dims, dim != -1));
  return finish(ctx, {e.mul(v, e.div(ctx.value("g"), norm))});
}

/// group_norm and native_group_norm: statistics per (sample, group) over
/// [N, G, C/G * spatial], per-channel affine.
Results groupNorm(RewriteContext &ctx, int64_t groups, bool withStats) {
  Emit e(ctx);
  Value *input = ctx.value("input");
  Value *x = e.cast(input, computeDType(typeOf(input).dtype));
  int64_t rank = rankOf(x);
  const Sizes &s = sizesOf(x);
  SymContext &syms = e.syms();
  const SymExpr *rest = syms.constant(1);
  for (int64_t d = 1; d < rank; ++d)
    rest = syms.mul(rest, s[d]);
  const SymExpr *perGroup = syms.floorDiv(rest, syms.constant(groups));
  Value *grouped = e.reshape(x, {s[0], syms.constant(groups), perGroup});
  Value *mean = e.mean(grouped, {2}, true);
  Value *centered = e.sub(grouped, mean);
  Value *rstd = rsqrtPlus(e, e.mean(e.mul(centered, centered), {2}, true), ctx.real("eps", 1e-5));
  Value *out = affine(e, e.reshape(e.mul(centered, rstd), s),
                      perChannel(e, valueOrNull(ctx, "weight"), rank),
                      perChannel(e, valueOrNull(ctx, "bias"), rank));
  if (!withStats)
    return finish(ctx, {out});
  return finish(ctx, {out, e.squeeze(mean, {2}), e.squeeze(rstd, {2})});
}
Results decomposeGroupNorm(RewriteContext &ctx) {
  return groupNorm(ctx, ctx.integer("num_groups"), false);
}
Results decomposeNativeGroupNorm(RewriteContext &ctx) {
  return groupNorm(ctx, ctx.integer("group"), true);
}

/// rms_norm: x / sqrt(mean(x^2) + eps) over the trailing normalized dims,
/// times weight; eps defaults to the compute dtype's machine epsilon.
Results decomposeRmsNorm(RewriteContext &ctx) {
  Emit e(ctx);
  Value *input = ctx.value("input");
  DType t = computeDType(typeOf(input).dtype);
  Value *x = e.cast(input, t);
  int64_t k = static_cast<int64_t>(ctx.ints("normalized_shape").size());
  int64_t rank = rankOf(x);
  if (k > rank)
    rewriteFail("rms_norm: normalized_shape has more dims than the input");
  Dims dims(k);
  std::iota(dims.begin(), dims.end(), rank - k);
  double eps = ctx.has("eps") ? ctx.real("eps", 0)
               : t == DType::Float64 ? std::numeric_limits<double>::epsilon()
                                     : std::numeric_limits<float>::epsilon();
  Value *out = e.mul(x, rsqrtPlus(e, e.mean(e.mul(x, x), dims, true), eps));
  out = e.cast(out, typeOf(input).dtype);
  return finish(ctx, {affine(e, out, valueOrNull(ctx, "weight"), nullptr)});
}

/// instance_norm: each (sample, channel) normalized over its spatial
/// elements with its own statistics (use_input_stats), else with the
/// running statistics; per-channel affine. The running statistics are not
/// written back.
Results decomposeInstanceNorm(RewriteContext &ctx) {
  Emit e(ctx);
  Value *input = ctx.value("input");
  Value *x = e.cast(input, computeDType(typeOf(input).dtype));
  int64_t rank = rankOf(x);
  if (rank < 2)
    rewriteFail("instance_norm needs an input with at least 2 dims");
  double eps = ctx.real("eps", 1e-5);
  Value *weight = perChannel(e, valueOrNull(ctx, "weight"), rank);
  Value *bias = perChannel(e, valueOrNull(ctx, "bias"), rank);
  if (!ctx.boolean("use_input_stats", true)) {
    Value *mean = valueOrNull(ctx, "running_mean"), *var = valueOrNull(ctx, "running_var");
    if (!mean || !var)
      rewriteFail("instance_norm without input statistics needs running statistics");
    return finish(ctx, {normalize(e, x, perChannel(e, mean, rank),
                                  perChannel(e, rsqrtPlus(e, var, eps), rank), weight, bias)});
  }
  Dims dims;
  for (int64_t d = 2; d < rank; ++d)
    dims.push_back(d);
  Value *mean = e.mean(x, dims, true);
  Value *centered = e.sub(x, mean);
  Value *rstd = rsqrtPlus(e, e.mean(e.mul(centered, centered), dims, true), eps);
  return finish(ctx, {affine(e, e.mul(centered, rstd), weight, bias)});
}

//===----------------------------------------------------------------------===//
// Other layers
//===----------------------------------------------------------------------===//

/// glu: the first half of dim times the sigmoid of the second half.
Results decomposeGlu(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("self");
  if (rankOf(x) == 0)
    rewriteFail("glu needs an input with at least 1 dim");
  int64_t d = wrapDims(Dims{ctx.integer("dim", -1)}, rankOf(x))[0];
  int64_t n = staticSize(sizesOf(x)[d], "the halved dim");
  if (n % 2 != 0)
    rewriteFail("glu: dim " + std::to_string(d) + " has odd size " + std::to_string(n));
  return finish(ctx, {e.mul(e.slice(x, d, 0, n / 2),
                            e.unary(ops::aten_sigmoid_default, e.slice(x, d, n / 2, n)))});
}

/// prelu: x where x > 0, else weight x; a weight of several elements is per
/// channel (dim 1).
Results decomposePrelu(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("self"), *w = ctx.value("weight");
  int64_t rank = rankOf(x);
  bool single = rankOf(w) == 0 || (rankOf(w) == 1 && staticSize(sizesOf(w)[0], "the weight") == 1);
  if (!single) {
    if (rankOf(w) != 1 || rank < 2)
      rewriteFail("prelu: a weight of several elements must be a vector of the input's channels");
    w = e.alongDim(w, 1, rank);
  } else if (rankOf(w) == 1 && rank == 0) {
    w = e.squeeze(w, {0});
  }
  return finish(ctx, {e.where(e.compare(Cmp::Gt, x, Number::integer(0)), x, e.mul(x, w))});
}

/// The leading (batch) dims of x, all but the last `keep`.
Sizes leadingSizes(Value *x, int64_t keep) {
  const Sizes &s = sizesOf(x);
  return Sizes(s.begin(), s.end() - keep);
}

/// x viewed with `inner` in place of its last `keep` dims, permuted by
/// `perm` (over those inner dims), viewed as `out` (also inner only).
Value *regroup(Emit &e, Value *x, int64_t keep, const Sizes &inner, const Dims &perm,
               const Sizes &out) {
  Sizes lead = leadingSizes(x, keep);
  int64_t k = static_cast<int64_t>(lead.size());
  Sizes viewed = lead, result = lead;
  viewed.insert(viewed.end(), inner.begin(), inner.end());
  result.insert(result.end(), out.begin(), out.end());
  Dims full(k);
  std::iota(full.begin(), full.end(), 0);
  for (int64_t p : perm)
    full.push_back(k + p);
  return e.reshape(e.permute(e.reshape(x, viewed), full), result);
}

/// pixel_shuffle ([*, C r^2, H, W] -> [*, C, H r, W r]) and
/// pixel_unshuffle (its inverse), as a view, a permute and a view.
Results pixelShuffle(RewriteContext &ctx, bool up) {
  Emit e(ctx);
  Value *x = ctx.value("self");
  std::string op = up ? "pixel_shuffle" : "pixel_unshuffle";
  int64_t r = ctx.integer(up ? "upscale_factor" : "downscale_factor");
  int64_t rank = rankOf(x);
  if (rank < 3 || r <= 0)
    rewriteFail(op + " needs an input of at least 3 dims and a positive factor");
  SymContext &sy = e.syms();
  const Sizes &s = sizesOf(x);
  const SymExpr *f = sy.constant(r), *c = s[rank - 3], *h = s[rank - 2], *w = s[rank - 1];
  if (up) {
    int64_t channels = staticSize(c, "the channels");
    if (channels % (r * r) != 0)
      rewriteFail(op + ": channels must be divisible by the factor squared");
    const SymExpr *cr = sy.constant(channels / (r * r));
    return finish(ctx, {regroup(e, x, 3, {cr, f, f, h, w}, {0, 3, 1, 4, 2},
                                {cr, sy.mul(h, f), sy.mul(w, f)})});
  }
  int64_t hr = staticSize(h, "the height"), wr = staticSize(w, "the width");
  if (hr % r != 0 || wr % r != 0)
    rewriteFail(op + ": height and width must be divisible by the factor");
  h = sy.constant(hr / r);
  w = sy.constant(wr / r);
  return finish(ctx, {regroup(e, x, 3, {c, h, f, w, f}, {0, 2, 4, 1, 3},
                              {sy.mul(c, sy.constant(r * r)), h, w})});
}
Results decomposePixelShuffle(RewriteContext &ctx) { return pixelShuffle(ctx, true); }
Results decomposePixelUnshuffle(RewriteContext &ctx) { return pixelShuffle(ctx, false); }

/// channel_shuffle: channels [g, C/g] transposed to [C/g, g].
Results decomposeChannelShuffle(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("self");
  int64_t g = ctx.integer("groups");
  int64_t rank = rankOf(x);
  if (rank < 3 || g <= 0)
    rewriteFail("channel_shuffle needs an input of at least 3 dims and positive groups");
  int64_t c = staticSize(sizesOf(x)[1], "the channels");
  if (c % g != 0)
    rewriteFail("channel_shuffle: channels must be divisible by groups");
  SymContext &sy = e.syms();
  Sizes inner(sizesOf(x).begin() + 1, sizesOf(x).end());
  Sizes split = {sy.constant(g), sy.constant(c / g)};
  split.insert(split.end(), inner.begin() + 1, inner.end());
  Dims perm = {1, 0};
  for (int64_t d = 2; d < rank; ++d)
    perm.push_back(d);
  return finish(ctx, {regroup(e, x, rank - 1, split, perm, inner)});
}

/// one_hot: x == arange(num_classes) along a new last dim, as int64.
Results decomposeOneHot(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("self");
  int64_t n = ctx.integer("num_classes", -1);
  if (n < 0)
    rewriteFail("one_hot: num_classes = -1 (the size taken from the data) is not supported");
  Value *hit = e.compare(Cmp::Eq, e.unsqueeze(x, rankOf(x)), e.arange(n));
  return finish(ctx, {e.cast(hit, DType::Int64)});
}

/// cosine_similarity: sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps)) along
/// dim of the broadcast inputs.
Results decomposeCosineSimilarity(RewriteContext &ctx) {
  Emit e(ctx);
  Value *a = ctx.value("x1"), *b = ctx.value("x2");
  DType t = computeDType(promoteTypes(typeOf(a).dtype, typeOf(b).dtype));
  a = e.cast(a, t);
  b = e.cast(b, t);
  int64_t rank = std::max(rankOf(a), rankOf(b));
  int64_t d = wrapDims(Dims{ctx.integer("dim", 1)}, std::max<int64_t>(rank, 1))[0];
  Value *eps = e.scalar(Number::real(ctx.real("eps", 1e-8)), t);
  auto unit = [&](Value *v) {
    Value *norm = e.op(ops::aten_linalg_vector_norm_default,
                       {{"self", v}, {"ord", 2.0}, {"dim", Dims{d}}, {"keepdim", true}});
    return e.div(v, e.maximum(norm, eps));
  };
  return finish(ctx, {e.sum(e.mul(unit(a), unit(b)), {d}, false)});
}

/// pdist: the p-norm distance of every pair of rows i < j, row by row.
Results decomposePdist(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("self");
  if (rankOf(x) != 2)
    rewriteFail("pdist needs a 2-D input");
  int64_t n = staticSize(sizesOf(x)[0], "the row count");
  double p = ctx.real("p", 2);
  std::vector<Value *> rows;
  for (int64_t i = 0; i + 1 < n; ++i) {
    Value *d = e.sub(e.slice(x, 0, i + 1, n), e.slice(x, 0, i, i + 1));
    rows.push_back(e.op(ops::aten_linalg_vector_norm_default,
                        {{"self", d}, {"ord", p}, {"dim", Dims{1}}, {"keepdim", false}}));
  }
  if (rows.empty())
    return finish(ctx, {e.full({e.syms().constant(0)}, Number::integer(0), typeOf(x).dtype)});
  return finish(ctx, {rows.size() == 1 ? rows[0] : e.cat(rows, 0)});
}

/// bilinear: out[b, o] = x1[b] W[o] x2[b] + bias[o], as one mm of x1 with
/// W's [I, O J] view, then a product with x2 summed over J.
Results decomposeBilinear(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x1 = ctx.value("input1"), *x2 = ctx.value("input2"), *w = ctx.value("weight");
  if (rankOf(w) != 3 || rankOf(x1) < 1 || rankOf(x1) != rankOf(x2))
    rewriteFail("bilinear: needs inputs of one rank >= 1 and a 3-D weight");
  SymContext &sy = e.syms();
  const Sizes &ws = sizesOf(w);
  Sizes lead = leadingSizes(x1, 1);
  const SymExpr *batch = sizeProduct(sy, lead);
  Value *a = e.reshape(x1, {batch, ws[1]});
  Value *b = e.reshape(x2, {batch, ws[2]});
  Value *wm = e.reshape(e.permute(w, {1, 0, 2}), {ws[1], sy.mul(ws[0], ws[2])});
  Value *t = e.reshape(e.mm(a, wm), {batch, ws[0], ws[2]});
  Value *out = e.sum(e.mul(t, e.unsqueeze(b, 1)), {2}, false);
  if (Value *bias = valueOrNull(ctx, "bias"))
    out = e.add(out, bias);
  Sizes outSizes = lead;
  outSizes.push_back(ws[0]);
  return finish(ctx, {e.reshape(out, outSizes)});
}

/// embedding_bag (sum and mean): each index's weight row (times its
/// per-sample weight; 0 for padding_idx) summed into its bag with a
/// scatter_add; a mean divides by the bag's count of non-padding indices
/// (an empty bag gives 0). A bag spans offsets[b] up to the next offset
/// (1-D indices); 2-D indices are one bag per row.
Results decomposeEmbeddingBag(RewriteContext &ctx) {
  Emit e(ctx);
  Value *weight = ctx.value("weight"), *indices = ctx.value("indices");
  int64_t mode = ctx.integer("mode", 0);
  if (mode != 0 && mode != 1)
    rewriteFail("embedding_bag: mode 'max' is not supported");
  if (rankOf(weight) != 2 || (rankOf(indices) != 1 && rankOf(indices) != 2))
    rewriteFail("embedding_bag expects a 2-D weight and 1-D or 2-D indices");
  SymContext &sy = e.syms();
  DType t = typeOf(weight).dtype;
  int64_t length = staticSize(sizeProduct(sy, sizesOf(indices)), "the index count");
  int64_t bags;
  Value *bag; // [L] the bag of each index
  if (rankOf(indices) == 2) {
    bags = staticSize(sizesOf(indices)[0], "the bag count");
    int64_t per = staticSize(sizesOf(indices)[1], "the bag size");
    indices = e.reshape(indices, {sy.constant(length)});
    bag = e.op(ops::aten_div_Tensor_mode, {{"self", e.arange(length)},
                                        {"other", e.scalar(Number::integer(std::max<int64_t>(per, 1)), DType::Int64)},
                                        {"rounding_mode", "floor"}});
  } else {
    Value *offsets = ctx.value("offsets");
    bags = staticSize(sizesOf(offsets)[0], "the offset count");
    if (ctx.boolean("include_last_offset", false)) {
      bags = std::max<int64_t>(bags - 1, 0);
      offsets = e.slice(offsets, 0, 0, bags);
    }
    Value *started = e.compare(Cmp::Ge, e.unsqueeze(e.arange(length), 1), e.unsqueeze(offsets, 0));
    bag = e.sub(e.sum(e.cast(started, DType::Int64), {1}, false), int64_t(1));
  }
  Value *rows = e.op(ops::aten_index_Tensor, {{"self", weight}, {"indices", std::vector<Value *>{indices}}});
  Value *kept = e.fullLike(indices, Number::integer(1), t);
  if (ctx.has("padding_idx"))
    kept = e.cast(e.compare(Cmp::Ne, indices, Number::integer(ctx.integer("padding_idx"))), t);
  Value *scale = kept;
  if (std::optional<Value *> psw = ctx.optValue("per_sample_weights"); psw && *psw) {
    if (mode != 0)
      rewriteFail("embedding_bag: per_sample_weights need mode 'sum'");
    scale = e.mul(scale, e.reshape(*psw, {sy.constant(length)}));
  }
  rows = e.mul(rows, e.unsqueeze(scale, 1));
  const SymExpr *dim = sizesOf(weight)[1];
  Sizes outSizes = {sy.constant(bags), dim};
  auto bagSum = [&](Value *v, const Sizes &sizes) {
    Value *index = rankOf(v) == 2 ? e.expand(e.unsqueeze(bag, 1), sizesOf(v)) : bag;
    return e.op(ops::aten_scatter_add_default, {{"self", e.full(sizes, Number::integer(0), typeOf(v).dtype)},
                                             {"dim", int64_t(0)},
                                             {"index", index},
                                             {"src", v}});
  };
  Value *out = bagSum(rows, outSizes);
  Value *count = bagSum(e.cast(kept, DType::Int64), {sy.constant(bags)});
  if (mode == 1) {
    Value *c = e.unsqueeze(e.cast(count, t), 1);
    Value *safe = e.maximum(c, e.scalar(Number::integer(1), t));
    out = e.div(out, safe);
  }
  // torch's other results: each index's bag (empty where its sum kernel
  // skips it), and for a mean the bag sizes twice (zeros for a sum).
  auto zerosOf = [&](size_t result) {
    return e.full(ctx.resultType(result).sizes, Number::integer(0), ctx.resultType(result).dtype);
  };
  const Sizes &bagSizes = ctx.resultType(1).sizes;
  bool emptyBags = bagSizes.size() == 1 && bagSizes[0]->isConst() && bagSizes[0]->constant() == 0;
  Value *offset2bag = emptyBags ? zerosOf(1) : bag;
  Value *sizes = mode == 1 ? count : zerosOf(2);
  return finish(ctx, {out, offset2bag, sizes, mode == 1 ? count : zerosOf(3)});
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// k or v with each of its heads repeated `times` times in place (dim -3),
/// for grouped-query attention.
Value *repeatHeads(Emit &e, Value *x, int64_t times) {
  Sizes s = sizesOf(x);
  int64_t rank = rankOf(x);
  Value *wide = e.unsqueeze(x, rank - 2);
  Sizes expanded = s;
  expanded.insert(expanded.begin() + (rank - 2), e.syms().constant(times));
  Sizes merged = s;
  merged[rank - 3] = e.syms().mul(s[rank - 3], e.syms().constant(times));
  return e.reshape(e.expand(wide, expanded), merged);
}

/// scaled_dot_product_attention in its math form: softmax(q k^T * scale +
/// mask) v. A boolean mask keeps where true; is_causal keeps the lower
/// triangle (aligned top-left). Rows that are masked entirely give 0, as
/// torch's math kernel does.
Results decomposeSdpa(RewriteContext &ctx) {
  Emit e(ctx);
  Value *q = ctx.value("query"), *k = ctx.value("key"), *v = ctx.value("value");
  int64_t rank = rankOf(q);
  if (rank < 2 || rankOf(k) != rank || rankOf(v) != rank)
    rewriteFail("scaled_dot_product_attention needs query, key and value of one rank >= 2");
  double scale;
  if (ctx.has("scale"))
    scale = ctx.real("scale", 1);
  else
    scale = 1 / std::sqrt(static_cast<double>(staticSize(sizesOf(q).back(), "the head dim")));
  if (ctx.boolean("enable_gqa", false) && rank >= 3) {
    int64_t hq = staticSize(sizesOf(q)[rank - 3], "the query heads");
    int64_t hk = staticSize(sizesOf(k)[rank - 3], "the key heads");
    if (hq != hk) {
      if (hk == 0 || hq % hk != 0)
        rewriteFail("enable_gqa: query heads must be a multiple of key heads");
      k = repeatHeads(e, k, hq / hk);
      v = repeatHeads(e, v, hq / hk);
    }
  }
  Value *scores = e.mul(e.matmul(q, transposeLast2(e, k)), scale);
  bool mayMaskRows = false;
  if (ctx.boolean("is_causal", false)) {
    int64_t l = staticSize(sizesOf(q)[rank - 2], "the query length");
    int64_t s = staticSize(sizesOf(k)[rank - 2], "the key length");
    Value *keep = e.compare(Cmp::Le, e.unsqueeze(e.arange(s), 0), e.unsqueeze(e.arange(l), 1));
    // Row i keeps columns up to i, so no row is masked entirely.
    scores = e.where(keep, scores, e.scalar(Number::real(-kInf), typeOf(scores).dtype));
  }
  if (ctx.has("attn_mask")) {
    Value *mask = ctx.value("attn_mask");
    if (typeOf(mask).dtype == DType::Bool)
      scores = e.where(mask, scores, e.scalar(Number::real(-kInf), typeOf(scores).dtype));
    else
      scores = e.add(scores, mask);
    mayMaskRows = true;
  }
  Value *max;
  Value *attn = e.softmax(scores, -1, &max);
  if (mayMaskRows)
    attn = e.where(e.compare(Cmp::Eq, max, Number::real(-kInf)),
                   e.scalar(Number::integer(0), typeOf(attn).dtype), attn);
  double p = ctx.real("dropout_p", 0);
  if (p > 0)
    attn = e.op(ops::aten_dropout_default, {{"input", attn}, {"p", p}, {"train", true}});
  return finish(ctx, {e.matmul(attn, v)});
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

Results decomposeMseLoss(RewriteContext &ctx) {
  Emit e(ctx);
  Value *d = e.sub(ctx.value("self"), ctx.value("target"));
  return finish(ctx, {e.reduceLoss(e.mul(d, d), ctx.integer("reduction", kMean))});
}

/// The negative log-likelihood part of nll_loss and cross_entropy with
/// class-index targets: per-element losses (0 where ignored) and, for the
/// mean, the total weight of the elements not ignored.
struct Nll {
  Value *loss;        ///< -w[t] * logp[t], per element
  Value *totalWeight; ///< sum of w[t] where not ignored
  Value *valid;       ///< target != ignore_index
  Value *safeTarget;  ///< target, 0 where ignored
};

Nll negativeLogLikelihood(RewriteContext &ctx, Emit &e, Value *logp, Value *target) {
  int64_t classDim = rankOf(logp) == 1 ? 0 : 1;
  DType t = typeOf(logp).dtype;
  Nll r;
  r.valid = e.compare(Cmp::Ne, target, Number::integer(ctx.integer("ignore_index", -100)));
  r.safeTarget = e.where(r.valid, target, e.scalar(Number::integer(0), typeOf(target).dtype));
  Value *picked = e.squeeze(
      e.op(ops::aten_gather_default,
           {{"self", logp}, {"dim", classDim}, {"index", e.unsqueeze(r.safeTarget, classDim)}}),
      {classDim});
  Value *zero = e.scalar(Number::integer(0), t);
  Value *w = ctx.has("weight")
                 ? e.op(ops::aten_index_Tensor, {{"self", ctx.value("weight")},
                                              {"indices", std::vector<Value *>{r.safeTarget}}})
                 : e.cast(r.valid, t);
  w = e.where(r.valid, w, zero);
  r.loss = e.mul(e.unary(ops::aten_neg_default, picked), w);
  r.totalWeight = e.sum(w, {}, false);
  return r;
}

/// The reduced nll: a mean divides by the total weight.
Value *reduceNll(Emit &e, const Nll &nll, Value *loss, int64_t reduction) {
  if (reduction == kMean)
    return e.div(e.sum(loss, {}, false), nll.totalWeight);
  return e.reduceLoss(loss, reduction);
}

Results nllLoss(RewriteContext &ctx, bool withTotalWeight) {
  Emit e(ctx);
  Value *logp = ctx.value("self");
  Nll nll = negativeLogLikelihood(ctx, e, logp, ctx.value("target"));
  int64_t reduction = ctx.integer("reduction", kMean);
  Value *out = reduceNll(e, nll, nll.loss, reduction);
  if (!withTotalWeight)
    return finish(ctx, {out});
  return finish(ctx, {out, nll.totalWeight});
}
Results decomposeNllLoss(RewriteContext &ctx) { return nllLoss(ctx, false); }
Results decomposeNllLossForward(RewriteContext &ctx) { return nllLoss(ctx, true); }

/// cross_entropy: log_softmax over the class dim, then the nll of class
/// indices or the cross entropy with class probabilities, with optional
/// label smoothing (a blend with the uniform distribution).
Results decomposeCrossEntropy(RewriteContext &ctx) {
  Emit e(ctx);
  Value *input = ctx.value("self"), *target = ctx.value("target");
  int64_t rank = rankOf(input);
  int64_t classDim = rank == 1 ? 0 : 1;
  int64_t classes = staticSize(sizesOf(input)[classDim], "the class dim");
  Value *logp = e.logSoftmax(input, classDim);
  int64_t reduction = ctx.integer("reduction", kMean);
  double smoothing = ctx.real("label_smoothing", 0);
  Value *classWeight =
      ctx.has("weight") ? e.alongDim(ctx.value("weight"), classDim, rank) : nullptr;
  auto weighted = [&](Value *v) { return classWeight ? e.mul(v, classWeight) : v; };

  if (isFloatingPoint(typeOf(target).dtype)) {
    if (smoothing > 0)
      target = e.add(e.mul(target, 1 - smoothing), smoothing / static_cast<double>(classes));
    Value *loss = e.unary(ops::aten_neg_default, e.sum(weighted(e.mul(logp, target)), {classDim}, false));
    return finish(ctx, {e.reduceLoss(loss, reduction)});
  }
  Nll nll = negativeLogLikelihood(ctx, e, logp, target);
  Value *out = reduceNll(e, nll, nll.loss, reduction);
  if (smoothing > 0) {
    Value *zero = e.scalar(Number::integer(0), typeOf(logp).dtype);
    Value *smooth = e.unary(ops::aten_neg_default, e.sum(weighted(logp), {classDim}, false));
    smooth = e.where(nll.valid, smooth, zero);
    out = e.add(e.mul(out, 1 - smoothing), e.mul(reduceNll(e, nll, smooth, reduction),
                                                 smoothing / static_cast<double>(classes)));
  }
  return finish(ctx, {out});
}

const DecompositionEntry kNNDecompositions[] = {
    {ops::aten__adaptive_avg_pool2d_default, decomposeAdaptiveAvgPool2d},
    {ops::aten__native_batch_norm_legit_no_stats, decomposeBatchNormNoStats},
    {ops::aten__native_batch_norm_legit_functional_default, decomposeBatchNormFunctional},
    {ops::aten__native_batch_norm_legit_no_training_default, decomposeBatchNormNoTraining},
    {ops::aten__weight_norm_default, decomposeWeightNorm},
    {ops::aten_adaptive_avg_pool2d_default, decomposeAdaptiveAvgPool2d},
    {ops::aten_batch_norm_default, decomposeBatchNorm},
    {ops::aten_bilinear_default, decomposeBilinear},
    {ops::aten_channel_shuffle_default, decomposeChannelShuffle},
    {ops::aten_conv1d_default, decomposeConv},
    {ops::aten_conv1d_padding, decomposeConv},
    {ops::aten_conv2d_default, decomposeConv},
    {ops::aten_conv2d_padding, decomposeConv},
    {ops::aten_conv3d_default, decomposeConv},
    {ops::aten_conv3d_padding, decomposeConv},
    {ops::aten_conv_transpose1d_default, decomposeConvTranspose},
    {ops::aten_conv_transpose2d_input, decomposeConvTranspose},
    {ops::aten_conv_transpose3d_input, decomposeConvTranspose},
    {ops::aten_cosine_similarity_default, decomposeCosineSimilarity},
    {ops::aten_cross_entropy_loss_default, decomposeCrossEntropy},
    {ops::aten_einsum_default, decomposeEinsum},
    {ops::aten_embedding_bag_padding_idx, decomposeEmbeddingBag},
    {ops::aten_glu_default, decomposeGlu},
    {ops::aten_group_norm_default, decomposeGroupNorm},
    {ops::aten_instance_norm_default, decomposeInstanceNorm},
    {ops::aten_layer_norm_default, decomposeLayerNorm},
    {ops::aten_linear_default, decomposeLinear},
    {ops::aten_matmul_default, decomposeMatmul},
    {ops::aten_max_pool2d_default, decomposeMaxPool2d},
    {ops::aten_mse_loss_default, decomposeMseLoss},
    {ops::aten_native_batch_norm_default, decomposeNativeBatchNorm},
    {ops::aten_native_group_norm_default, decomposeNativeGroupNorm},
    {ops::aten_native_layer_norm_default, decomposeNativeLayerNorm},
    {ops::aten_nll_loss_default, decomposeNllLoss},
    {ops::aten_nll_loss2d_forward_default, decomposeNllLossForward},
    {ops::aten_nll_loss_forward_default, decomposeNllLossForward},
    {ops::aten_nll_loss_nd_default, decomposeNllLoss},
    {ops::aten_one_hot_default, decomposeOneHot},
    {ops::aten_pdist_default, decomposePdist},
    {ops::aten_pixel_shuffle_default, decomposePixelShuffle},
    {ops::aten_pixel_unshuffle_default, decomposePixelUnshuffle},
    {ops::aten_prelu_default, decomposePrelu},
    {ops::aten_rms_norm_default, decomposeRmsNorm},
    {ops::aten_scaled_dot_product_attention_default, decomposeSdpa},
};

} // namespace

void registerNNDecompositions(DecompositionRegistry &r) { r.add(kNNDecompositions); }

} // namespace gc
