//===- Products.cpp - Decompositions of products and distances ------------===//
//
// The matmul family (addmm, baddbmm, addbmm, addmv, addr, dot, vdot, mv,
// outer, inner, tensordot, kron, trace) through mm, bmm, views and
// pointwise ops, and the products and distances built on them (cross,
// cdist, dist, renorm). Every contraction is one mm: the contracted dims
// are permuted together and flattened, as are the free ones. gc has no
// complex dtype, so vdot is dot.
//
//===----------------------------------------------------------------------===//
#include "gc/Ops/Emit.h"

#include "gc/Ops/ShapeInference.h"

#include <algorithm>
#include <string>

namespace gc {

namespace {

using namespace decompose;

/// `x` must have `rank` dims.
void requireRank(Value *x, int64_t rank, std::string_view what) {
  if (rankOf(x) != rank)
    rewriteFail(std::string(what) + " must have " + std::to_string(rank) + " dims, not " +
                std::to_string(rankOf(x)));
}

/// The sum over pairs of dims (dimsA[i] of a with dimsB[i] of b) as one mm;
/// the result has a's free dims, then b's.
Value *contract(Emit &e, Value *a, Value *b, Dims dimsA, Dims dimsB) {
  int64_t ra = rankOf(a), rb = rankOf(b);
  if (dimsA.size() != dimsB.size())
    rewriteFail("both operands must contract the same number of dims");
  const Sizes &as = sizesOf(a), &bs = sizesOf(b);
  Sizes contracted;
  for (size_t i = 0; i < dimsA.size(); ++i) {
    dimsA[i] = wrapDimension(dimsA[i], ra);
    dimsB[i] = wrapDimension(dimsB[i], rb);
    if (as[dimsA[i]] != bs[dimsB[i]])
      rewriteFail("contracted dims " + std::to_string(dimsA[i]) + " and " +
                  std::to_string(dimsB[i]) + " differ in size");
    contracted.push_back(as[dimsA[i]]);
  }
  auto freeDims = [&](const Dims &used, int64_t rank) {
    Dims free;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t uses = std::count(used.begin(), used.end(), d);
      if (uses > 1)
        rewriteFail("dim " + std::to_string(d) + " is contracted twice");
      if (uses == 0)
        free.push_back(d);
    }
    return free;
  };
  Dims freeA = freeDims(dimsA, ra), freeB = freeDims(dimsB, rb);
  Sizes outA, outB;
  for (int64_t d : freeA)
    outA.push_back(as[d]);
  for (int64_t d : freeB)
    outB.push_back(bs[d]);
  SymContext &s = e.syms();
  Dims permA = freeA, permB = dimsB;
  permA.insert(permA.end(), dimsA.begin(), dimsA.end());
  permB.insert(permB.end(), freeB.begin(), freeB.end());
  // Views that change nothing are left out.
  auto reshaped = [&](Value *x, const Dims &perm, const Sizes &sizes) {
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i)
      identity &= perm[i] == static_cast<int64_t>(i);
    if (!identity)
      x = e.permute(x, perm);
    return sizesOf(x) == sizes ? x : e.reshape(x, sizes);
  };
  const SymExpr *k = sizeProduct(s, contracted);
  Sizes out = outA;
  out.insert(out.end(), outB.begin(), outB.end());
  // Nothing to sum: zeros, without views of empty tensors.
  bool staticOut =
      std::all_of(out.begin(), out.end(), [](const SymExpr *d) { return d->isConst(); });
  if (k->isConst() && k->constant() == 0 && staticOut)
    return e.full(out, Number::integer(0), typeOf(a).dtype);
  Value *rows = reshaped(a, permA, {sizeProduct(s, outA), k});
  Value *cols = reshaped(b, permB, {k, sizeProduct(s, outB)});
  return reshaped(e.mm(rows, cols), {0, 1}, out);
}

/// addmm, baddbmm, addbmm, addmv, addr: beta * self + alpha * product;
/// beta = 0 ignores self, NaNs included, as torch does.
Results scaledProductPlus(RewriteContext &ctx, Value *product) {
  Emit e(ctx);
  Number alpha = optNumber(ctx, "alpha").value_or(Number::integer(1));
  Number beta = optNumber(ctx, "beta").value_or(Number::integer(1));
  if (alpha.value() != 1)
    product = e.mul(product, alpha.arg());
  if (beta.value() == 0)
    return finish(ctx, {product});
  Value *self = ctx.value("self");
  if (beta.value() != 1)
    self = e.mul(self, beta.arg());
  return finish(ctx, {e.add(product, self)});
}

Results decomposeAddmm(RewriteContext &ctx) {
  Emit e(ctx);
  return scaledProductPlus(ctx, e.mm(ctx.value("mat1"), ctx.value("mat2")));
}

Results decomposeBaddbmm(RewriteContext &ctx) {
  Emit e(ctx);
  return scaledProductPlus(ctx, e.bmm(ctx.value("batch1"), ctx.value("batch2")));
}

/// The sum of the batch's products: the batch dim joins the contracted one.
Results decomposeAddbmm(RewriteContext &ctx) {
  Emit e(ctx);
  Value *a = ctx.value("batch1"), *b = ctx.value("batch2");
  requireRank(a, 3, "batch1");
  requireRank(b, 3, "batch2");
  if (sizesOf(a)[0] != sizesOf(b)[0])
    rewriteFail("batch1 and batch2 must have the same number of matrices");
  return scaledProductPlus(ctx, contract(e, a, b, {0, 2}, {0, 1}));
}

/// a times the vector b over a's last dim: mv for a 2-D a, dot for a 1-D
/// one, after checking the ranks.
Value *timesVector(Emit &e, Value *a, Value *b, int64_t rank, std::string_view aName,
                   std::string_view bName) {
  requireRank(a, rank, aName);
  requireRank(b, 1, bName);
  return contract(e, a, b, {rank - 1}, {0});
}

Results decomposeAddmv(RewriteContext &ctx) {
  Emit e(ctx);
  Value *product = timesVector(e, ctx.value("mat"), ctx.value("vec"), 2, "mat", "vec");
  return scaledProductPlus(ctx, product);
}

Value *outer(Emit &e, Value *a, Value *b) {
  requireRank(a, 1, "the first vector");
  requireRank(b, 1, "the second vector");
  Value *column = e.unsqueeze(a, 1);
  return e.mul(column, e.unsqueeze(b, 0));
}

Results decomposeAddr(RewriteContext &ctx) {
  Emit e(ctx);
  return scaledProductPlus(ctx, outer(e, ctx.value("vec1"), ctx.value("vec2")));
}

Results decomposeOuter(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {outer(e, ctx.value("self"), ctx.value("vec2"))});
}

/// dot and vdot (the same for real tensors).
Results decomposeDot(RewriteContext &ctx) {
  Emit e(ctx);
  Value *other = ctx.value(ctx.has("tensor") ? "tensor" : "other");
  return finish(ctx, {timesVector(e, ctx.value("self"), other, 1, "self", "the second vector")});
}

Results decomposeMv(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {timesVector(e, ctx.value("self"), ctx.value("vec"), 2, "self", "vec")});
}

/// The product over the last dims; with a 0-dim operand, a plain product.
Results decomposeInner(RewriteContext &ctx) {
  Emit e(ctx);
  Value *a = ctx.value("self"), *b = ctx.value("other");
  if (rankOf(a) == 0 || rankOf(b) == 0)
    return finish(ctx, {e.mul(a, b)});
  return finish(ctx, {contract(e, a, b, {-1}, {-1})});
}

Results decomposeTensordot(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {contract(e, ctx.value("self"), ctx.value("other"), ctx.ints("dims_self"),
                               ctx.ints("dims_other"))});
}

/// kron: out[i * m + j] = a[i] * b[j] in every dim, the ranks first
/// aligned on the right: a's dims interleave with b's, then pairs merge.
Results decomposeKron(RewriteContext &ctx) {
  Emit e(ctx);
  Value *a = ctx.value("self"), *b = ctx.value("other");
  int64_t rank = std::max(rankOf(a), rankOf(b));
  auto padded = [&](Value *x) {
    Sizes sizes(rank - rankOf(x), e.syms().constant(1));
    sizes.insert(sizes.end(), sizesOf(x).begin(), sizesOf(x).end());
    return sizes;
  };
  Sizes as = padded(a), bs = padded(b);
  Sizes spreadA, spreadB, out;
  for (int64_t d = 0; d < rank; ++d) {
    spreadA.insert(spreadA.end(), {as[d], e.syms().constant(1)});
    spreadB.insert(spreadB.end(), {e.syms().constant(1), bs[d]});
    out.push_back(e.syms().mul(as[d], bs[d]));
  }
  Value *spread = e.reshape(a, spreadA);
  Value *product = e.mul(spread, e.reshape(b, spreadB));
  return finish(ctx, {e.reshape(product, out)});
}

/// The sum of a matrix's diagonal: every (columns + 1)-th element of the
/// flattened matrix, as many as the shorter side.
Results decomposeTrace(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("self");
  requireRank(x, 2, "self");
  int64_t rows = staticSize(sizesOf(x)[0], "trace's rows");
  int64_t cols = staticSize(sizesOf(x)[1], "trace's columns");
  int64_t n = std::min(rows, cols);
  Value *flat = e.reshape(x, {e.syms().constant(rows * cols)});
  Value *diagonal = e.slice(flat, 0, 0, n == 0 ? 0 : (n - 1) * (cols + 1) + 1, cols + 1);
  return finish(ctx, {e.sum(diagonal, {0}, false)});
}

//===----------------------------------------------------------------------===//
// Cross products and distances
//===----------------------------------------------------------------------===//

/// x's elements along `dim` (of size 3) rotated by `by` places: element i
/// becomes element (i + by) mod 3.
Value *rotate3(Emit &e, Value *x, int64_t dim, int64_t by) {
  return e.cat({e.slice(x, dim, by, 3), e.slice(x, dim, 0, by)}, dim);
}

/// a x b along a dim of size 3: a[i+1] b[i+2] - a[i+2] b[i+1] (mod 3),
/// after broadcasting. Without a dim, cross.default takes the first dim of
/// size 3 and linalg_cross the last.
Results decomposeCross(RewriteContext &ctx) {
  Emit e(ctx);
  Value *a = ctx.value("self"), *b = ctx.value("other");
  bool linalg = ctx.node().op() == ops::aten_linalg_cross_default;
  if (!linalg && rankOf(a) != rankOf(b))
    rewriteFail("self and other must have the same number of dims");
  Sizes sizes = broadcastSizes(e.syms(), sizesOf(a), sizesOf(b));
  a = e.expand(a, sizes);
  b = e.expand(b, sizes);
  int64_t rank = static_cast<int64_t>(sizes.size());
  auto isThree = [&](int64_t d) { return sizes[d]->isConst() && sizes[d]->constant() == 3; };
  int64_t dim = -1;
  if (ctx.has("dim") || linalg) {
    dim = wrapDimension(ctx.integer("dim", -1), rank);
  } else {
    for (int64_t d = 0; d < rank && dim < 0; ++d)
      if (isThree(d))
        dim = d;
  }
  if (dim < 0 || !isThree(dim))
    rewriteFail("the dim must have size 3");
  Value *left = e.mul(rotate3(e, a, dim, 1), rotate3(e, b, dim, 2));
  Value *right = e.mul(rotate3(e, a, dim, 2), rotate3(e, b, dim, 1));
  return finish(ctx, {e.sub(left, right)});
}

/// The p-norm of x over `dims` (all for none), through linalg_vector_norm.
Value *vectorNorm(Emit &e, Value *x, ArgValue p, Dims dims, bool keepdim) {
  return e.op(ops::aten_linalg_vector_norm_default,
              {{"self", x},
               {"ord", p},
               {"dim", dims.empty() ? ArgValue::none() : ArgValue(dims)},
               {"keepdim", keepdim}});
}

/// Distances between the rows of x1 [..., P, M] and x2 [..., R, M]: the
/// p-norm of every difference (batch dims broadcast).
Results decomposeCdist(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x1 = ctx.value("x1"), *x2 = ctx.value("x2");
  if (rankOf(x1) < 2 || rankOf(x2) < 2)
    rewriteFail("x1 and x2 must have at least 2 dims");
  if (sizesOf(x1).back() != sizesOf(x2).back())
    rewriteFail("x1 and x2 must have the same number of columns");
  double p = ctx.real("p", 2);
  if (p < 0)
    rewriteFail("p must be non-negative");
  Value *diff = e.sub(e.unsqueeze(x1, -2), e.unsqueeze(x2, -3));
  return finish(ctx, {vectorNorm(e, diff, p, {-1}, false)});
}

Results decomposeDist(RewriteContext &ctx) {
  Emit e(ctx);
  Value *diff = e.sub(ctx.value("self"), ctx.value("other"));
  ArgValue p = ctx.has("p") ? ctx.passThrough("p") : ArgValue(int64_t(2));
  return finish(ctx, {vectorNorm(e, diff, p, {}, false)});
}

/// Each slice along `dim` whose p-norm exceeds maxnorm is scaled to
/// maxnorm / (norm + 1e-7), torch's factor.
Results decomposeRenorm(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("self");
  int64_t rank = rankOf(x);
  if (rank < 2)
    rewriteFail("self must have at least 2 dims");
  int64_t dim = wrapDimension(ctx.integer("dim"), rank);
  Number p = number(ctx, "p");
  Number maxnorm = number(ctx, "maxnorm");
  if (p.value() <= 0)
    rewriteFail("p must be positive");
  if (maxnorm.value() < 0)
    rewriteFail("maxnorm must be non-negative");
  Dims others;
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim)
      others.push_back(d);
  Value *norm = vectorNorm(e, x, p.arg(), others, true);
  DType t = typeOf(norm).dtype;
  Value *factor = e.where(e.compare(Cmp::Gt, norm, maxnorm),
                          e.div(e.scalar(maxnorm, t), e.add(norm, 1e-7)),
                          e.scalar(Number::integer(1), t));
  return finish(ctx, {e.mul(x, factor)});
}

//===----------------------------------------------------------------------===//
// Backward helpers of softmax and dropout
//===----------------------------------------------------------------------===//

/// The gradient of softmax from its output y: y * (g - sum(g * y)).
Results decomposeSoftmaxBackwardData(RewriteContext &ctx) {
  Emit e(ctx);
  Value *y = ctx.value("output");
  DType t = computeDType(typeOf(y).dtype);
  y = e.cast(y, t);
  Value *g = e.cast(ctx.value("grad_output"), t);
  int64_t dim = rankOf(y) == 0 ? 0 : wrapDimension(ctx.integer("dim"), rankOf(y));
  Value *dot = rankOf(y) == 0 ? e.mul(g, y) : e.sum(e.mul(g, y), {dim}, true);
  return finish(ctx, {e.mul(y, e.sub(g, dot))});
}

/// grad * (mask * scale), the mask as grad's dtype.
Results decomposeNativeDropoutBackward(RewriteContext &ctx) {
  Emit e(ctx);
  Value *grad = ctx.value("grad_output");
  Value *mask = e.cast(ctx.value("mask"), typeOf(grad).dtype);
  return finish(ctx, {e.mul(grad, e.mul(mask, ctx.real("scale")))});
}

const DecompositionEntry kProductDecompositions[] = {
    {ops::aten__softmax_backward_data_default, decomposeSoftmaxBackwardData},
    {ops::aten_addbmm_default, decomposeAddbmm},
    {ops::aten_addmm_default, decomposeAddmm},
    {ops::aten_addmv_default, decomposeAddmv},
    {ops::aten_addr_default, decomposeAddr},
    {ops::aten_baddbmm_default, decomposeBaddbmm},
    {ops::aten_cdist_default, decomposeCdist},
    {ops::aten_cross_default, decomposeCross},
    {ops::aten_dist_default, decomposeDist},
    {ops::aten_dot_default, decomposeDot},
    {ops::aten_inner_default, decomposeInner},
    {ops::aten_kron_default, decomposeKron},
    {ops::aten_linalg_cross_default, decomposeCross},
    {ops::aten_mv_default, decomposeMv},
    {ops::aten_native_dropout_backward_default, decomposeNativeDropoutBackward},
    {ops::aten_outer_default, decomposeOuter},
    {ops::aten_renorm_default, decomposeRenorm},
    {ops::aten_tensordot_default, decomposeTensordot},
    {ops::aten_trace_default, decomposeTrace},
    {ops::aten_vdot_default, decomposeDot},
};

} // namespace

void registerProductDecompositions(DecompositionRegistry &r) { r.add(kProductDecompositions); }

namespace {

/// A convolution's static sizes and window arguments, d spatial dims.
/// A convolution call's operands and its static shape.
struct ConvCall {
  Value *x = nullptr, *w = nullptr;
  std::optional<Value *> bias;
  Dims weight, result, kernel, out, stride, padding, dilation;
  size_t d = 0;
};

ConvCall readConv(RewriteContext &ctx) {
  auto constants = [](const Sizes &s, std::string_view what) {
    Dims d;
    for (const SymExpr *e : s)
      d.push_back(staticSize(e, what));
    return d;
  };
  ConvCall c;
  c.x = ctx.value("input");
  c.w = ctx.value("weight");
  c.bias = ctx.optValue("bias");
  c.weight = constants(sizesOf(c.w), "the weight's size");
  c.result = constants(ctx.resultType().sizes, "the result's size");
  if (c.weight.size() < 3 || c.weight.size() > 5 || c.result.size() != c.weight.size())
    rewriteFail("a convolution of 1 to 3 spatial dims needs a weight and a result of 3 to 5 dims");
  c.d = c.weight.size() - 2;
  c.kernel.assign(c.weight.begin() + 2, c.weight.end());
  c.out.assign(c.result.begin() + 2, c.result.end());
  c.stride = intsOfLength(ctx, "stride", c.d, 1);
  c.padding = intsOfLength(ctx, "padding", c.d, 0);
  c.dilation = intsOfLength(ctx, "dilation", c.d, 1);
  return c;
}

Sizes constantSizes(SymContext &sy, const Dims &d) {
  Sizes s;
  for (int64_t v : d)
    s.push_back(sy.constant(v));
  return s;
}

int64_t product(const Dims &d) {
  int64_t p = 1;
  for (int64_t v : d)
    p *= v;
  return p;
}

Dims concat(Dims a, const Dims &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

} // namespace

std::optional<std::vector<Value *>> convolutionAsProduct(RewriteContext &ctx) {
  Emit e(ctx);
  ConvCall c = readConv(ctx);
  SymContext &sy = e.syms();
  int64_t n = c.result[0], cout = c.weight[0], columns = product(c.weight) / cout,
          positions = product(c.out);
  // A kernel of size 1 and stride 1 without padding sees x itself.
  bool pointwise = product(c.kernel) == 1 && c.stride == Dims(c.d, 1) && c.padding == Dims(c.d, 0);
  Value *cols = pointwise ? e.reshape(c.x, constantSizes(sy, {n, columns, positions}))
                          : im2col(e, c.x, c.kernel, c.dilation, c.padding, c.stride);
  Value *rows = e.permute(cols, {0, 2, 1});
  Value *weights = e.permute(e.reshape(c.w, constantSizes(sy, {cout, columns})), {1, 0});
  Value *y = n == 1 ? e.mm(e.select(rows, 0, 0), weights)
                    : e.bmm(rows, e.expand(weights, constantSizes(sy, {n, columns, cout})));
  if (c.bias && *c.bias)
    y = e.add(y, *c.bias);
  // [N, o0.., Cout] in memory, viewed [N, Cout, o0..].
  Value *image = e.reshape(y, constantSizes(sy, concat(concat({n}, c.out), {cout})));
  Dims order{0, static_cast<int64_t>(c.d) + 1};
  for (size_t k = 0; k < c.d; ++k)
    order.push_back(static_cast<int64_t>(k) + 1);
  return finish(ctx, {e.permute(image, order)});
}

std::optional<std::vector<Value *>> depthwiseConvolutionAsSum(RewriteContext &ctx) {
  Emit e(ctx);
  ConvCall c = readConv(ctx);
  SymContext &sy = e.syms();
  int64_t groups = ctx.integer("groups");
  if (groups <= 0 || c.weight[1] != 1 || c.weight[0] % groups != 0)
    rewriteFail("a depthwise convolution has one input channel per group");
  int64_t multiplier = c.weight[0] / groups;
  // Half-precision operands are multiplied and summed in float32, rounded
  // once at the end, as cuDNN accumulates.
  DType t = computeDType(typeOf(c.x).dtype);
  // Windows [N, G, 1, k0.., o0..] times weights [1, G, m, k0.., 1..],
  // summed over the kernel dims: [N, G, m, o0..].
  // With one output channel a group the sum is [N, G, o0..] itself, an
  // activation of the result's rank, which gc-lower may lay out like its
  // input (channels-last) and walk in that order.
  Value *windows = e.cast(convWindows(e, c.x, c.kernel, c.dilation, c.padding, c.stride), t);
  Dims lead{1, groups};
  if (multiplier != 1) {
    windows = e.unsqueeze(windows, 2);
    lead.push_back(multiplier);
  }
  Dims ones(c.d, 1);
  Sizes weightView = constantSizes(sy, concat(concat(lead, c.kernel), ones));
  Value *weights = e.cast(e.reshape(c.w, weightView), t);
  Dims kernelDims;
  for (size_t k = 0; k < c.d; ++k)
    kernelDims.push_back(static_cast<int64_t>(k + lead.size()));
  Value *y = e.sum(e.mul(windows, weights), kernelDims, false);
  if (c.bias && *c.bias) {
    Dims channels(lead.begin() + 1, lead.end());
    y = e.add(y, e.cast(e.reshape(*c.bias, constantSizes(sy, concat(channels, ones))), t));
  }
  return finish(ctx, {e.reshape(y, ctx.resultType().sizes)});
}

} // namespace gc
