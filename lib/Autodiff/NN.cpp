//===- NN.cpp - Derivatives of matrix products, convolution, pooling ------===//
//
// Convolution's gradients are themselves convolutions, so that the backward
// needs no op beyond the core set (the reference interpreter has no
// transposed convolution): the input's gradient convolves the stride-spread
// and padded g with the flipped weight; the weight's gradient convolves the
// input with g, batch and channels swapped, stride and dilation swapped.
//
//===----------------------------------------------------------------------===//
#include "Rules.h"

#include "gc/Ops/ShapeInference.h"

namespace gc {

namespace {

using namespace autodiff;

/// mat2's gradient is computed transposed, (g^T self)^T: mat2 is mostly a
/// transposed weight (linear layers), whose gradient then comes out of the
/// mm contiguous once canonicalization cancels the two transposes.
InputGrads dMm(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *a = ctx.value("self"), *b = ctx.value("mat2"), *g = ctx.grad();
  return InputGrads()
      .set("self", e.mm(g, e.transpose(b, 0, 1)))
      .set("mat2", e.transpose(e.mm(e.transpose(g, 0, 1), a), 0, 1));
}

InputGrads dBmm(DerivativeContext &ctx) {
  Emit e(ctx);
  Value *a = ctx.value("self"), *b = ctx.value("mat2"), *g = ctx.grad();
  return InputGrads()
      .set("self", e.bmm(g, e.transpose(b, 1, 2)))
      .set("mat2", e.bmm(e.transpose(a, 1, 2), g));
}

/// A per-spatial-dim list argument: one value repeated, or one per dim.
Dims spatialArg(DerivativeContext &ctx, std::string_view name, size_t n, Dims dflt) {
  Dims v = ctx.has(name) ? ctx.ints(name) : dflt;
  if (v.empty())
    v = dflt;
  if (v.size() == 1)
    v.assign(n, v[0]);
  if (v.size() != n)
    rewriteFail("argument '" + std::string(name) + "' has " + std::to_string(v.size()) +
                " entries for " + std::to_string(n) + " spatial dims");
  return v;
}

struct ConvGeometry {
  Dims stride, padding, dilation;
  int64_t groups = 1;
};

Value *convolve(Emit &e, Value *x, Value *w, const Dims &stride, const Dims &padding,
                const Dims &dilation, int64_t groups) {
  return e.op(ops::aten_convolution_default, {{"input", x},
                                           {"weight", w},
                                           {"bias", ArgValue::none()},
                                           {"stride", stride},
                                           {"padding", padding},
                                           {"dilation", dilation},
                                           {"transposed", false},
                                           {"output_padding", Dims(stride.size(), 0)},
                                           {"groups", groups}});
}

Dims iota(int64_t from, int64_t to) {
  Dims d;
  for (int64_t i = from; i < to; ++i)
    d.push_back(i);
  return d;
}

/// The gradient of a convolution's input of sizes `xSizes` with weight w.
Value *convInputGrad(Emit &e, Value *g, const Sizes &xSizes, Value *w, const ConvGeometry &c) {
  SymContext &syms = e.syms();
  int64_t nd = rankOf(w) - 2;
  Dims pad;
  for (int64_t i = nd - 1; i >= 0; --i) {
    int64_t size = decompose::staticSize(xSizes[2 + i], "a convolution input");
    int64_t k = staticDim(w, 2 + i);
    int64_t span = c.dilation[i] * (k - 1) + 1;
    int64_t out = staticDim(g, 2 + i);
    int64_t rest = size + 2 * c.padding[i] - span - (out - 1) * c.stride[i];
    pad.push_back(span - 1 - c.padding[i]);
    pad.push_back(span - 1 - c.padding[i] + rest);
  }
  for (int64_t i = 0; i < nd; ++i)
    g = spread(e, g, 2 + i, c.stride[i]);
  g = e.op(ops::aten_constant_pad_nd_default, {{"self", g}, {"pad", pad}});
  // [Cout, Cin/G, k...] -> [G, Cout/G, Cin/G, k...] -> [Cin, Cout/G, k...].
  Value *wt = e.transpose(w, 0, 1);
  if (c.groups != 1) {
    const Sizes &ws = sizesOf(w);
    const SymExpr *groups = syms.constant(c.groups);
    Sizes split = {groups, syms.floorDiv(ws[0], groups), ws[1]};
    split.insert(split.end(), ws.begin() + 2, ws.end());
    Dims order = {0, 2, 1};
    for (int64_t i = 0; i < nd; ++i)
      order.push_back(3 + i);
    Sizes merged = {syms.mul(ws[1], groups), split[1]};
    merged.insert(merged.end(), ws.begin() + 2, ws.end());
    wt = e.reshape(e.permute(e.reshape(w, split), order), merged);
  }
  wt = e.op(ops::aten_flip_default, {{"self", wt}, {"dims", iota(2, 2 + nd)}});
  return convolve(e, g, wt, Dims(nd, 1), Dims(nd, 0), c.dilation, c.groups);
}

Value *convWeightGrad(Emit &e, Value *g, Value *x, Value *w, const ConvGeometry &c) {
  SymContext &syms = e.syms();
  int64_t nd = rankOf(w) - 2;
  const Sizes &xs = sizesOf(x);
  const SymExpr *groups = syms.constant(c.groups);
  // x as [Cin/G, G * N, spatial...]: its channels are the batch, grouped.
  Value *xt = e.transpose(x, 0, 1);
  if (c.groups != 1) {
    Sizes split = {xs[0], groups, syms.floorDiv(xs[1], groups)};
    split.insert(split.end(), xs.begin() + 2, xs.end());
    Dims order = {2, 1, 0};
    for (int64_t i = 0; i < nd; ++i)
      order.push_back(3 + i);
    Sizes merged = {split[2], syms.mul(groups, xs[0])};
    merged.insert(merged.end(), xs.begin() + 2, xs.end());
    xt = e.reshape(e.permute(e.reshape(x, split), order), merged);
  }
  Dims swap = {1, 0};
  for (int64_t i = 0; i < nd; ++i)
    swap.push_back(2 + i);
  Value *gw = convolve(e, xt, e.permute(g, swap), c.dilation, c.padding, c.stride, c.groups);
  // Positions past the last kernel tap are computed too: drop them.
  for (int64_t i = 0; i < nd; ++i)
    if (staticDim(gw, 2 + i) != staticDim(w, 2 + i))
      gw = e.slice(gw, 2 + i, 0, staticDim(w, 2 + i));
  return e.permute(gw, swap);
}

InputGrads dConvolution(DerivativeContext &ctx) {
  Emit e(ctx);
  if (ctx.boolean("transposed", false))
    rewriteFail("the derivative of a transposed convolution is not supported");
  Value *x = ctx.value("input"), *w = ctx.value("weight"), *g = ctx.grad();
  size_t nd = static_cast<size_t>(rankOf(w) - 2);
  ConvGeometry c{spatialArg(ctx, "stride", nd, {1}), spatialArg(ctx, "padding", nd, {0}),
                 spatialArg(ctx, "dilation", nd, {1}), ctx.integer("groups", 1)};
  InputGrads grads;
  grads.set("input", convInputGrad(e, g, sizesOf(x), w, c));
  grads.set("weight", convWeightGrad(e, g, x, w, c));
  if (ctx.has("bias")) {
    Dims dims = {0};
    for (size_t i = 0; i < nd; ++i)
      dims.push_back(static_cast<int64_t>(2 + i));
    grads.set("bias", e.sum(g, dims, false));
  }
  return grads;
}

/// Each maximum's gradient goes back to the flat position its index names.
InputGrads dMaxPool2d(DerivativeContext &ctx) {
  Emit e(ctx);
  SymContext &syms = e.syms();
  Value *x = ctx.value("self"), *indices = ctx.result(1), *g = ctx.grad(0);
  const Sizes &xs = sizesOf(x), &os = sizesOf(indices);
  size_t r = xs.size();
  Sizes flatIn(xs.begin(), xs.end() - 2), flatOut(xs.begin(), xs.end() - 2);
  flatIn.push_back(syms.mul(xs[r - 2], xs[r - 1]));
  flatOut.push_back(syms.mul(os[r - 2], os[r - 1]));
  Value *zeros = e.full(flatIn, Number::integer(0), typeOf(g).dtype);
  Value *sum = e.op(ops::aten_scatter_add_default, {{"self", zeros},
                                                 {"dim", static_cast<int64_t>(r - 2)},
                                                 {"index", e.reshape(indices, flatOut)},
                                                 {"src", e.reshape(g, flatOut)}});
  return InputGrads().set("self", e.reshape(sum, xs));
}

/// A 1-d constant tensor: one full per run of equal values.
Value *constantVector(Emit &e, const std::vector<double> &values, DType dtype) {
  std::vector<Value *> runs;
  for (size_t i = 0, j; i < values.size(); i = j) {
    for (j = i; j < values.size() && values[j] == values[i];)
      ++j;
    runs.push_back(
        e.full({e.syms().constant(static_cast<int64_t>(j - i))}, Number::real(values[i]), dtype));
  }
  return runs.size() == 1 ? runs[0] : e.cat(runs, 0);
}

/// How many elements each output window of one spatial dim divides by, as
/// torch counts them: the window clipped to the padded input, or to the
/// input itself without count_include_pad.
std::vector<double> windowLengths(int64_t size, int64_t out, int64_t k, int64_t stride, int64_t pad,
                                  bool includePad) {
  std::vector<double> lengths;
  for (int64_t o = 0; o < out; ++o) {
    int64_t start = o * stride - pad, end = std::min(start + k, size + pad);
    if (!includePad) {
      start = std::max<int64_t>(start, 0);
      end = std::min(end, size);
    }
    lengths.push_back(static_cast<double>(end - start));
  }
  return lengths;
}

/// Average pooling is a depthwise convolution with a kernel of ones, the
/// gradient divided first by each window's element count.
InputGrads dAvgPool2d(DerivativeContext &ctx) {
  Emit e(ctx);
  SymContext &syms = e.syms();
  Value *x = ctx.value("self"), *g = ctx.grad();
  Dims kernel = spatialArg(ctx, "kernel_size", 2, {});
  ConvGeometry geometry{
      spatialArg(ctx, "stride", 2, kernel), spatialArg(ctx, "padding", 2, {0}), {1, 1}, 1};
  bool batched = rankOf(x) == 4;
  Value *x4 = batched ? x : e.unsqueeze(x, 0);
  Value *g4 = batched ? g : e.unsqueeze(g, 0);
  DType dtype = typeOf(g).dtype;
  if (ctx.has("divisor_override")) {
    g4 = e.div(g4, ctx.integer("divisor_override"));
  } else {
    std::vector<Value *> counts;
    for (int64_t i = 0; i < 2; ++i)
      counts.push_back(constantVector(
          e,
          windowLengths(staticDim(x4, 2 + i), staticDim(g4, 2 + i), kernel[i], geometry.stride[i],
                        geometry.padding[i], ctx.boolean("count_include_pad", true)),
          dtype));
    g4 = e.div(g4, e.mul(e.unsqueeze(counts[0], 1), counts[1]));
  }
  const SymExpr *channels = sizesOf(x4)[1];
  geometry.groups = decompose::staticSize(channels, "the channel count");
  Value *ones =
      e.full({channels, syms.constant(1), syms.constant(kernel[0]), syms.constant(kernel[1])},
             Number::integer(1), dtype);
  Value *grad = convInputGrad(e, g4, sizesOf(x4), ones, geometry);
  return InputGrads().set("self", batched ? grad : e.squeeze(grad, {0}));
}

const DerivativeEntry kEntries[] = {
    {ops::aten_avg_pool2d_default, dAvgPool2d,
     "g divided by each window's count, spread back over it"},
    {ops::aten_bmm_default, dBmm, "self: g @ mat2^T; mat2: self^T @ g"},
    {ops::aten_convolution_default, dConvolution,
     "input: conv(spread g, flipped weight); weight: conv(input, g); bias: sum of g"},
    {ops::aten_max_pool2d_with_indices_default, dMaxPool2d, "g scatter-added at the indices"},
    {ops::aten_mm_default, dMm, "self: g @ mat2^T; mat2: self^T @ g"},
};

} // namespace

void registerNNDerivatives(DerivativeRegistry &r) { r.add(kEntries); }

} // namespace gc
