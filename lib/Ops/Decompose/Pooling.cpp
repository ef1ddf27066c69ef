//===- Pooling.cpp - Decompositions of pooling, resampling and padding ----===//
//
// Pooling of one and three spatial dims through the 2-d pooling ops (core,
// with loop lowerings), adaptive pooling, unpooling as a scatter,
// interpolation as gathers with computed indices and weights, im2col,
// grid sampling, and the padding modes of aten.pad.
//
//===----------------------------------------------------------------------===//
#include "gc/Ops/Emit.h"

#include <algorithm>
#include <cmath>

namespace gc {

namespace {

using namespace decompose;

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// The window of an n-d pooling op, one entry per pooled dim.
struct Window {
  Dims kernel, stride, padding, dilation;
  bool ceilMode = false;

  /// A 2-d window from dims `first` and `second` of this one; -1 takes a
  /// trivial dim (kernel 1, stride 1, no padding).
  Window pick(int64_t first, int64_t second) const {
    Window w;
    w.ceilMode = ceilMode;
    for (int64_t i : {first, second}) {
      w.kernel.push_back(i < 0 ? 1 : kernel[i]);
      w.stride.push_back(i < 0 ? 1 : stride[i]);
      w.padding.push_back(i < 0 ? 0 : padding[i]);
      w.dilation.push_back(i < 0 ? 1 : dilation[i]);
    }
    return w;
  }
};

/// kernel_size, stride (empty: the kernel), padding, dilation, ceil_mode.
Window windowArgs(RewriteContext &ctx, size_t n) {
  Window w;
  w.kernel = intsOfLength(ctx, "kernel_size", n, 1);
  bool strided = ctx.has("stride") && !ctx.ints("stride").empty();
  w.stride = strided ? intsOfLength(ctx, "stride", n, 1) : w.kernel;
  w.padding = intsOfLength(ctx, "padding", n, 0);
  w.dilation = intsOfLength(ctx, "dilation", n, 1);
  w.ceilMode = ctx.boolean("ceil_mode", false);
  return w;
}

/// Values and flat indices of 2-d max pooling over the last two dims.
std::pair<Value *, Value *> maxPool2d(Emit &e, Value *x, const Window &w) {
  std::vector<Value *> r = e.builder().create(ops::aten_max_pool2d_with_indices_default,
                                              {{"self", x},
                                               {"kernel_size", w.kernel},
                                               {"stride", w.stride},
                                               {"padding", w.padding},
                                               {"dilation", w.dilation},
                                               {"ceil_mode", w.ceilMode}});
  return {r.at(0), r.at(1)};
}

/// How avg_pool divides a window's sum.
struct Divisor {
  bool countIncludePad = true;
  std::optional<int64_t> override;
};

Value *avgPool2d(Emit &e, Value *x, const Window &w, const Divisor &d) {
  return e.op(ops::aten_avg_pool2d_default,
              {{"self", x},
               {"kernel_size", w.kernel},
               {"stride", w.stride},
               {"padding", w.padding},
               {"ceil_mode", w.ceilMode},
               {"count_include_pad", d.countIncludePad},
               {"divisor_override", d.override ? ArgValue(*d.override) : ArgValue::none()}});
}

/// Checks a pooled input: n spatial dims, optionally batched.
void requirePoolRank(Value *x, int64_t n, std::string_view op) {
  int64_t rank = rankOf(x);
  if (rank != n + 1 && rank != n + 2)
    rewriteFail(std::string(op) + " expects a " + std::to_string(n + 1) + "-D or " +
                std::to_string(n + 2) + "-D input, got " + std::to_string(rank) + "-D");
}

/// v // by, for int64 v.
Value *floorDiv(Emit &e, Value *v, int64_t by) {
  return e.op(ops::aten_div_Tensor_mode, {{"self", v},
                                          {"other", e.scalar(Number::integer(by), DType::Int64)},
                                          {"rounding_mode", "floor"}});
}

/// The sizes before the last n.
Sizes leading(Value *x, int64_t n) {
  const Sizes &s = sizesOf(x);
  return Sizes(s.begin(), s.end() - n);
}

Sizes concat(Sizes a, const Sizes &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// 3-d pooling runs as two 2-d stages: height and width of every depth
/// slice of x ([*, D, H, W] as [P D, H, W], P the leading sizes' product),
/// then depth over the first stage's result as rows [P, D, H' W'].
Value *depthSlices(Emit &e, Value *x) {
  SymContext &sy = e.syms();
  const Sizes &s = sizesOf(x);
  size_t k = s.size() - 3;
  return e.reshape(x, {sy.mul(sizeProduct(sy, leading(x, 3)), s[k]), s[k + 1], s[k + 2]});
}

Value *depthRows(Emit &e, Value *stage1, Value *x) {
  SymContext &sy = e.syms();
  const Sizes &s1 = sizesOf(stage1);
  return e.reshape(stage1, {sizeProduct(sy, leading(x, 3)), sizesOf(x)[rankOf(x) - 3],
                            sy.mul(s1[1], s1[2])});
}

/// The result of the two stages: x's leading sizes, the depth stage's
/// depth, the first stage's height and width.
Sizes stagedSizes(Value *x, Value *stage1, Value *stage2) {
  return concat(leading(x, 3), {sizesOf(stage2)[1], sizesOf(stage1)[1], sizesOf(stage1)[2]});
}

/// avg_pool1d/3d through avg_pool2d. A box average is separable, and so is
/// each of torch's divisors (a product of per-dim counts), so 3-d pooling
/// is two 2-d stages; with divisor_override the first stage sums.
Results avgPoolNd(RewriteContext &ctx, int64_t n) {
  Emit e(ctx);
  Value *x = ctx.value("self");
  requirePoolRank(x, n, opString(ctx.node().op()));
  Window w = windowArgs(ctx, n);
  Divisor div;
  div.countIncludePad = ctx.boolean("count_include_pad", true);
  if (ctx.has("divisor_override"))
    div.override = ctx.integer("divisor_override");
  if (n == 1)
    return finish(ctx, {e.squeeze(avgPool2d(e, e.unsqueeze(x, rankOf(x) - 1), w.pick(-1, 0), div),
                                  {rankOf(x) - 1})});
  auto staged = [&](Value *v, const Window &win, const Divisor &first, const Divisor &second) {
    Value *hw = avgPool2d(e, depthSlices(e, v), win.pick(1, 2), first);
    Value *d = avgPool2d(e, depthRows(e, hw, v), win.pick(0, -1), second);
    return e.reshape(d, stagedSizes(v, hw, d));
  };
  Divisor sum{true, 1};
  if (isFloatingPoint(typeOf(x).dtype) || div.override)
    return finish(ctx, {staged(x, w, div.override ? sum : div, div)});
  // Integer averages truncate the whole window's sum once: the sum over
  // its count (the ones it covers, padding included for count_include_pad).
  Window counted = w;
  Value *ones = e.fullLike(x, Number::integer(1), typeOf(x).dtype);
  if (div.countIncludePad) {
    if (w.ceilMode)
      rewriteFail("avg_pool3d of an integer input with ceil_mode and count_include_pad is not "
                  "supported");
    Dims pad;
    for (int64_t i = 3; i-- > 0;) {
      pad.push_back(w.padding[i]);
      pad.push_back(w.padding[i]);
    }
    ones = e.op(ops::aten_constant_pad_nd_default, {{"self", ones}, {"pad", pad}, {"value", int64_t(1)}});
    counted.padding = Dims(3, 0);
  }
  return finish(ctx, {e.op(ops::aten_div_Tensor_mode, {{"self", staged(x, w, sum, sum)},
                                                       {"other", staged(ones, counted, sum, sum)},
                                                       {"rounding_mode", "trunc"}})});
}

Results decomposeAvgPool1d(RewriteContext &ctx) { return avgPoolNd(ctx, 1); }
Results decomposeAvgPool3d(RewriteContext &ctx) { return avgPoolNd(ctx, 3); }

/// Max pooling of 1 or 3 spatial dims through max_pool2d_with_indices. In
/// 3-d the first stage pools height and width of every depth slice, the
/// second depth; the flat index d H W + h W + w gathers the first stage's
/// index at the second's. Ties go to the first maximum in (d, h, w) order,
/// as in torch.
std::pair<Value *, Value *> maxPoolNd(Emit &e, Value *x, int64_t n, const Window &w) {
  int64_t rank = rankOf(x);
  if (n == 1) {
    auto [v, i] = maxPool2d(e, e.unsqueeze(x, rank - 1), w.pick(-1, 0));
    return {e.squeeze(v, {rank - 1}), e.squeeze(i, {rank - 1})};
  }
  SymContext &sy = e.syms();
  auto [v1, i1] = maxPool2d(e, depthSlices(e, x), w.pick(1, 2));
  auto [v2, i2] = maxPool2d(e, depthRows(e, v1, x), w.pick(0, -1));
  Sizes out = stagedSizes(x, v1, v2);
  // i2 = d H' W' + (index into the first stage's plane); i1 there is h W + w.
  const Sizes &s2 = sizesOf(v2);
  Value *at = e.reshape(i2, {s2[0], sy.mul(s2[1], s2[2])});
  Value *i1Rows = depthRows(e, i1, x);
  const Sizes &rows = sizesOf(i1Rows);
  Value *inPlane = e.op(ops::aten_gather_default,
                        {{"self", e.reshape(i1Rows, {rows[0], sy.mul(rows[1], rows[2])})},
                         {"dim", int64_t(1)},
                         {"index", at}});
  Value *depth = floorDiv(e, at, staticSize(rows[2], "the pooled plane"));
  const Sizes &s = sizesOf(x);
  int64_t plane = staticSize(sy.mul(s[s.size() - 2], s.back()), "the input plane");
  return {e.reshape(v2, out), e.reshape(e.add(e.mul(depth, plane), inPlane), out)};
}

Results maxPool(RewriteContext &ctx, int64_t n, bool withIndices) {
  Emit e(ctx);
  Value *x = ctx.value("self");
  requirePoolRank(x, n, opString(ctx.node().op()));
  auto [values, indices] = maxPoolNd(e, x, n, windowArgs(ctx, n));
  if (!withIndices)
    return finish(ctx, {values});
  return finish(ctx, {values, indices});
}

Results decomposeMaxPool1d(RewriteContext &ctx) { return maxPool(ctx, 1, false); }
Results decomposeMaxPool1dWithIndices(RewriteContext &ctx) { return maxPool(ctx, 1, true); }
Results decomposeMaxPool3d(RewriteContext &ctx) { return maxPool(ctx, 3, false); }
Results decomposeMaxPool3dWithIndices(RewriteContext &ctx) { return maxPool(ctx, 3, true); }

/// adaptive_avg_pool1d through adaptive_avg_pool2d of height 1;
/// adaptive_avg_pool3d as two adaptive_avg_pool2d stages (box means are
/// separable): height and width per depth slice, then depth.
Results decomposeAdaptiveAvgPool1d(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("self");
  requirePoolRank(x, 1, "adaptive_avg_pool1d");
  int64_t r = rankOf(x);
  Dims out = intsOfLength(ctx, "output_size", 1, 1);
  Value *y = e.op(ops::aten_adaptive_avg_pool2d_default,
                  {{"self", e.unsqueeze(x, r - 1)}, {"output_size", Dims{1, out[0]}}});
  return finish(ctx, {e.squeeze(y, {r - 1})});
}

Results decomposeAdaptiveAvgPool3d(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("self");
  requirePoolRank(x, 3, "adaptive_avg_pool3d");
  Dims out = intsOfLength(ctx, "output_size", 3, 1);
  Value *hw = e.op(ops::aten_adaptive_avg_pool2d_default,
                   {{"self", depthSlices(e, x)}, {"output_size", Dims{out[1], out[2]}}});
  Value *d = e.op(ops::aten_adaptive_avg_pool2d_default,
                  {{"self", depthRows(e, hw, x)}, {"output_size", Dims{out[0], out[1] * out[2]}}});
  return finish(ctx, {e.reshape(d, stagedSizes(x, hw, d))});
}

/// The window of adaptive pooling from `in` to `out` cells along one dim,
/// when its cells [floor(i in / out), ceil((i + 1) in / out)) are evenly
/// sized and spaced (always so when out divides in, or out = in - 1, ...).
std::optional<std::pair<int64_t, int64_t>> adaptiveWindow(int64_t in, int64_t out) {
  if (out <= 0)
    return std::nullopt;
  auto start = [&](int64_t i) { return i * in / out; };
  auto end = [&](int64_t i) { return ((i + 1) * in + out - 1) / out; };
  int64_t kernel = end(0) - start(0);
  int64_t stride = out > 1 ? start(1) - start(0) : kernel;
  for (int64_t i = 0; i < out; ++i)
    if (start(i) != i * stride || end(i) - start(i) != kernel)
      return std::nullopt;
  return std::make_pair(kernel, std::max<int64_t>(stride, 1));
}

/// Adaptive max pooling along dim d, from `in` to `out` cells of any sizes:
/// each cell is read through a gather of kmax positions (kmax its longest
/// size; shorter cells repeat their last position), then its max and the
/// first position of it. Returns the values and that position along d.
std::pair<Value *, Value *> adaptiveMaxAlong(Emit &e, Value *x, int64_t d, int64_t in, int64_t out) {
  int64_t kmax = 0;
  for (int64_t i = 0; i < out; ++i)
    kmax = std::max(kmax, ((i + 1) * in + out - 1) / out - i * in / out);
  SymContext &sy = e.syms();
  Value *cell = e.unsqueeze(e.arange(out), 1);
  Value *start = floorDiv(e, e.mul(cell, in), out);
  Value *last = e.sub(floorDiv(e, e.add(e.mul(e.add(cell, int64_t(1)), in), out - 1), out), int64_t(1));
  Value *table = e.minimum(e.add(start, e.unsqueeze(e.arange(kmax), 0)), last); // [out, kmax]
  Value *read = e.op(ops::aten_index_select_default,
                     {{"self", x}, {"dim", d}, {"index", e.reshape(table, {sy.constant(out * kmax)})}});
  int64_t rank = rankOf(x);
  Sizes split = sizesOf(x);
  split[d] = sy.constant(out);
  split.insert(split.begin() + d + 1, sy.constant(kmax));
  read = e.reshape(read, split);
  Value *values = e.amax(read, {d + 1}, false);
  Value *first = e.op(ops::aten_argmax_default, {{"self", read}, {"dim", d + 1}, {"keepdim", true}});
  Sizes aligned(rank + 1, sy.constant(1));
  aligned[d] = sy.constant(out);
  aligned[d + 1] = sy.constant(kmax);
  Value *positions = e.expand(e.reshape(table, aligned), split);
  Value *index = e.op(ops::aten_gather_default, {{"self", positions}, {"dim", d + 1}, {"index", first}});
  return {values, e.squeeze(index, {d + 1})};
}

/// adaptive_max_pool1d/3d: max pooling with the window the cells make
/// where they are evenly sized and spaced in every dim; else one dim after
/// another (last first) through adaptiveMaxAlong, each step also picking
/// the positions the later dims chose, and flat indices d H W + h W + w.
Results adaptiveMaxPool(RewriteContext &ctx, int64_t n) {
  Emit e(ctx);
  Value *x = ctx.value("self");
  std::string op = opString(ctx.node().op());
  requirePoolRank(x, n, op);
  Dims out = intsOfLength(ctx, "output_size", n, 1);
  for (int64_t o : out)
    if (o <= 0)
      rewriteFail(op + ": output sizes must be positive");
  Window w;
  Dims in;
  bool even = true;
  const Sizes &s = sizesOf(x);
  for (int64_t i = 0; i < n; ++i) {
    in.push_back(staticSize(s[s.size() - n + i], "the pooled dim"));
    std::optional<std::pair<int64_t, int64_t>> cell = adaptiveWindow(in[i], out[i]);
    even &= cell.has_value();
    w.kernel.push_back(cell ? cell->first : 1);
    w.stride.push_back(cell ? cell->second : 1);
    w.padding.push_back(0);
    w.dilation.push_back(1);
  }
  if (even) {
    auto [values, indices] = maxPoolNd(e, x, n, w);
    return finish(ctx, {values, indices});
  }
  int64_t rank = rankOf(x);
  std::vector<Value *> chosen(n);
  Value *v = x;
  for (int64_t k = n; k-- > 0;) {
    int64_t d = rank - n + k;
    auto [pooled, at] = adaptiveMaxAlong(e, v, d, in[k], out[k]);
    for (int64_t j = k + 1; j < n; ++j)
      chosen[j] = e.op(ops::aten_gather_default, {{"self", chosen[j]}, {"dim", d}, {"index", at}});
    chosen[k] = at;
    v = pooled;
  }
  Value *flat = nullptr;
  int64_t stride = 1;
  for (int64_t k = n; k-- > 0;) {
    Value *term = stride == 1 ? chosen[k] : e.mul(chosen[k], stride);
    flat = flat ? e.add(flat, term) : term;
    stride *= in[k];
  }
  return finish(ctx, {v, flat});
}

Results decomposeAdaptiveMaxPool1d(RewriteContext &ctx) { return adaptiveMaxPool(ctx, 1); }
Results decomposeAdaptiveMaxPool3d(RewriteContext &ctx) { return adaptiveMaxPool(ctx, 3); }

/// x with its last n dims flattened into one.
Value *flattenLast(Emit &e, Value *x, int64_t n) {
  const Sizes &s = sizesOf(x);
  Sizes tail(s.end() - n, s.end());
  Sizes lead = leading(x, n);
  lead.push_back(sizeProduct(e.syms(), tail));
  return e.reshape(x, lead);
}

/// max_unpool2d/3d: zeros of the output size with self's values scattered
/// to the flat indices of each plane.
Results maxUnpool(RewriteContext &ctx, int64_t n) {
  Emit e(ctx);
  Value *x = ctx.value("self"), *idx = ctx.value("indices");
  std::string op = opString(ctx.node().op());
  requirePoolRank(x, n, op);
  if (sizesOf(idx) != sizesOf(x))
    rewriteFail(op + ": indices must have self's shape");
  Dims outSize = ctx.ints("output_size");
  if (static_cast<int64_t>(outSize.size()) != n)
    rewriteFail(op + ": output_size must have " + std::to_string(n) + " entries");
  SymContext &sy = e.syms();
  Sizes out = leading(x, n);
  int64_t plane = 1;
  for (int64_t v : outSize) {
    out.push_back(sy.constant(v));
    plane *= v;
  }
  Sizes flatOut = leading(x, n);
  flatOut.push_back(sy.constant(plane));
  Value *zeros = e.full(flatOut, Number::integer(0), typeOf(x).dtype);
  Value *scattered = e.op(ops::aten_scatter_src, {{"self", zeros},
                                                  {"dim", int64_t(-1)},
                                                  {"index", flattenLast(e, idx, n)},
                                                  {"src", flattenLast(e, x, n)}});
  return finish(ctx, {e.reshape(scattered, out)});
}

Results decomposeMaxUnpool2d(RewriteContext &ctx) { return maxUnpool(ctx, 2); }
Results decomposeMaxUnpool3d(RewriteContext &ctx) { return maxUnpool(ctx, 3); }

/// max_pool2d_with_indices_backward: the output gradient summed into the
/// input elements its indices name, plane by plane.
Results decomposeMaxPool2dBackward(RewriteContext &ctx) {
  Emit e(ctx);
  Value *g = ctx.value("grad_output"), *self = ctx.value("self"), *idx = ctx.value("indices");
  requirePoolRank(self, 2, "max_pool2d_with_indices_backward");
  Value *zeros = e.full(sizesOf(flattenLast(e, self, 2)), Number::integer(0), typeOf(g).dtype);
  Value *sums = e.op(ops::aten_scatter_add_default, {{"self", zeros},
                                                    {"dim", int64_t(-1)},
                                                    {"index", flattenLast(e, idx, 2)},
                                                    {"src", flattenLast(e, g, 2)}});
  return finish(ctx, {e.reshape(sums, sizesOf(self))});
}

//===----------------------------------------------------------------------===//
// Interpolation
//===----------------------------------------------------------------------===//

enum class Mode { Nearest, NearestExact, Linear, Cubic };

/// An upsample_*.vec call over the last n dims: output sizes from
/// output_size, or from scale_factors (whose reciprocals then scale).
struct Resample {
  Dims in, out;
  std::vector<std::optional<double>> scales;
};

Resample resampleArgs(RewriteContext &ctx, Value *x, int64_t n) {
  std::string op = opString(ctx.node().op());
  int64_t rank = rankOf(x);
  if (rank != n + 2)
    rewriteFail(op + " expects a " + std::to_string(n + 2) + "-D input, got " + std::to_string(rank) +
                "-D");
  Resample r;
  for (int64_t i = 0; i < n; ++i)
    r.in.push_back(staticSize(sizesOf(x)[rank - n + i], "the resampled dim"));
  r.scales.assign(n, std::nullopt);
  if (ctx.has("output_size")) {
    r.out = ctx.ints("output_size");
  } else if (ctx.has("scale_factors")) {
    const std::vector<double> &f = ctx.find("scale_factors")->value.floats;
    if (static_cast<int64_t>(f.size()) != n)
      rewriteFail(op + ": scale_factors must have " + std::to_string(n) + " entries");
    for (int64_t i = 0; i < n; ++i) {
      r.out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(r.in[i]) * f[i])));
      r.scales[i] = f[i];
    }
  } else {
    rewriteFail(op + " needs output_size or scale_factors");
  }
  if (static_cast<int64_t>(r.out.size()) != n)
    rewriteFail(op + ": output_size must have " + std::to_string(n) + " entries");
  for (int64_t v : r.out)
    if (v <= 0)
      rewriteFail(op + ": output sizes must be positive");
  return r;
}

/// A number as the compute dtype holds it (torch computes these scales in
/// float for float32 and half inputs).
double rounded(double v, DType t) { return t == DType::Float64 ? v : static_cast<float>(v); }

/// Source coordinates, indices and weights along one dim, as torch's CPU
/// upsampling kernels compute them (area_pixel_compute_scale and
/// area_pixel_compute_source_index), in the compute dtype `t`.
struct Axis {
  Emit &e;
  DType t;
  int64_t in, out;
  bool align;
  std::optional<double> scale;

  Value *positions() { return e.cast(e.arange(out), t); }
  Value *intScalar(int64_t v) { return e.scalar(Number::integer(v), DType::Int64); }
  Value *clampIndex(Value *i) {
    return e.minimum(e.maximum(i, intScalar(0)), intScalar(in - 1));
  }
  Value *floorIndex(Value *src) { return e.cast(e.unary(ops::aten_floor_default, src), DType::Int64); }

  /// nearest and nearest-exact: floor(dst * s) or floor((dst + 0.5) s),
  /// at most in - 1, with s = in / out (or 1 / scale).
  Value *nearest(bool exact) {
    double s = rounded(scale && *scale > 0 ? 1 / *scale : static_cast<double>(in) / out, DType::Float32);
    Value *pos = e.cast(e.arange(out), DType::Float32);
    if (exact)
      pos = e.add(pos, 0.5);
    return e.minimum(floorIndex(e.mul(pos, s)), intScalar(in - 1));
  }

  /// The real source coordinate of each output position.
  Value *source(bool cubic) {
    double s;
    if (align)
      s = out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0;
    else
      s = scale && *scale > 0 ? 1 / *scale : static_cast<double>(in) / out;
    s = rounded(s, t);
    if (align)
      return e.mul(positions(), s);
    Value *src = e.sub(e.mul(e.add(positions(), 0.5), s), 0.5);
    return cubic ? src : e.maximum(src, e.scalar(Number::integer(0), t));
  }

  /// guard_index_and_lambda: the index floor(src) (at most in - 1) and the
  /// fraction src - index clamped to [0, 1].
  std::pair<Value *, Value *> indexAndFraction(Value *src) {
    Value *i = e.minimum(floorIndex(src), intScalar(in - 1));
    Value *f = e.sub(src, e.cast(i, t));
    f = e.minimum(e.maximum(f, e.scalar(Number::integer(0), t)), e.scalar(Number::integer(1), t));
    return {i, f};
  }
};

Value *gatherAlong(Emit &e, Value *x, int64_t d, Value *index) {
  return e.op(ops::aten_index_select_default, {{"self", x}, {"dim", d}, {"index", index}});
}

/// Keys's cubic convolution kernel with a = -0.75, for |x| <= 1 and for
/// 1 < |x| < 2.
Value *cubicNear(Emit &e, Value *x) {
  constexpr double a = -0.75;
  return e.add(e.mul(e.mul(e.sub(e.mul(x, a + 2), a + 3), x), x), int64_t(1));
}
Value *cubicFar(Emit &e, Value *x) {
  constexpr double a = -0.75;
  return e.sub(e.mul(e.add(e.mul(e.sub(e.mul(x, a), 5 * a), x), 8 * a), x), 4 * a);
}

/// One dim of x resampled.
Value *resampleDim(Emit &e, Value *x, int64_t d, Axis axis, Mode mode) {
  int64_t rank = rankOf(x);
  if (mode == Mode::Nearest || mode == Mode::NearestExact) {
    if (axis.in == axis.out)
      return x;
    return gatherAlong(e, x, d, axis.nearest(mode == Mode::NearestExact));
  }
  if (mode == Mode::Linear) {
    if (axis.in == axis.out)
      return x;
    auto [i0, f] = axis.indexAndFraction(axis.source(false));
    Value *i1 = e.minimum(e.add(i0, int64_t(1)), axis.intScalar(axis.in - 1));
    Value *w1 = e.alongDim(f, d, rank);
    Value *w0 = e.alongDim(e.sub(e.scalar(Number::integer(1), axis.t), f), d, rank);
    return e.add(e.mul(gatherAlong(e, x, d, i0), w0), e.mul(gatherAlong(e, x, d, i1), w1));
  }
  auto [i, t] = axis.indexAndFraction(axis.source(true));
  Value *one = e.scalar(Number::integer(1), axis.t);
  Value *weights[4] = {cubicFar(e, e.add(t, one)), cubicNear(e, t), cubicNear(e, e.sub(one, t)),
                       cubicFar(e, e.sub(e.add(one, one), t))};
  Value *sum = nullptr;
  for (int64_t k = 0; k < 4; ++k) {
    Value *tap = gatherAlong(e, x, d, axis.clampIndex(e.add(i, k - 1)));
    Value *term = e.mul(tap, e.alongDim(weights[k], d, rank));
    sum = sum ? e.add(sum, term) : term;
  }
  return sum;
}

/// upsample_{nearest,linear,bilinear,bicubic,trilinear}*.vec: one gather
/// (nearest) or a weighted sum of gathers (linear, cubic) per resampled
/// dim, the dims one after another (the kernels are separable).
Results resample(RewriteContext &ctx, int64_t n, Mode mode) {
  Emit e(ctx);
  Value *x = ctx.value("input");
  Resample r = resampleArgs(ctx, x, n);
  bool interpolates = mode == Mode::Linear || mode == Mode::Cubic;
  DType t = computeDType(typeOf(x).dtype);
  if (interpolates) {
    if (!isFloatingPoint(typeOf(x).dtype))
      rewriteFail(opString(ctx.node().op()) + " of an integer input is not supported");
    x = e.cast(x, t);
  }
  bool align = interpolates && ctx.boolean("align_corners", false);
  int64_t rank = rankOf(x);
  for (int64_t i = 0; i < n; ++i)
    x = resampleDim(e, x, rank - n + i, Axis{e, t, r.in[i], r.out[i], align, r.scales[i]}, mode);
  return finish(ctx, {x});
}

Results decomposeUpsampleNearest1d(RewriteContext &ctx) { return resample(ctx, 1, Mode::Nearest); }
Results decomposeUpsampleNearestExact1d(RewriteContext &ctx) { return resample(ctx, 1, Mode::NearestExact); }
Results decomposeUpsampleLinear1d(RewriteContext &ctx) { return resample(ctx, 1, Mode::Linear); }
Results decomposeUpsampleBilinear2d(RewriteContext &ctx) { return resample(ctx, 2, Mode::Linear); }
Results decomposeUpsampleTrilinear3d(RewriteContext &ctx) { return resample(ctx, 3, Mode::Linear); }
Results decomposeUpsampleBicubic2d(RewriteContext &ctx) { return resample(ctx, 2, Mode::Cubic); }

//===----------------------------------------------------------------------===//
// im2col and grid sampling
//===----------------------------------------------------------------------===//

} // namespace

Value *decompose::convWindows(Emit &e, Value *x, const Dims &kernel, const Dims &dilation,
                               const Dims &padding, const Dims &stride) {
  int64_t d = static_cast<int64_t>(kernel.size()), rank = rankOf(x);
  if (d < 1 || d > 3 || dilation.size() != kernel.size() || padding.size() != kernel.size() ||
      stride.size() != kernel.size())
    rewriteFail("convolution windows take 1 to 3 spatial dims, each with a kernel size, dilation, "
                "padding and stride");
  if (rank <= d)
    rewriteFail("convolution windows of " + std::to_string(d) + " spatial dims need a " +
                std::to_string(d + 1) + "-D or larger input, got " + std::to_string(rank) + "-D");
  for (int64_t k = 0; k < d; ++k)
    if (kernel[k] <= 0 || dilation[k] <= 0 || stride[k] <= 0 || padding[k] < 0)
      rewriteFail("convolution windows: kernel size, dilation and stride must be positive, padding "
                  "non-negative");
  // constant_pad_nd lists (before, after) pairs from the last dim backwards.
  Dims pad;
  for (int64_t k = d; k-- > 0;)
    pad.insert(pad.end(), {padding[k], padding[k]});
  if (std::any_of(padding.begin(), padding.end(), [](int64_t p) { return p != 0; }))
    x = e.op(ops::aten_constant_pad_nd_default, {{"self", x}, {"pad", pad}, {"value", int64_t(0)}});
  const Sizes &s = sizesOf(x);
  // Kernel offset k at output position o reads the padded input at
  // o * stride + k * dilation in each spatial dim: the windows
  // [..., C, k0.., o0..] are one strided view of the padded input, so a
  // consumer computes each element's address directly. (Stacking one
  // strided slice per kernel offset instead made each element choose among
  // all of them through masked loads: 49 for a 7x7 stem, whose kernel then
  // took ptxas seconds.)
  SymContext &sy = e.syms();
  const TensorType &t = typeOf(x);
  std::vector<const SymExpr *> xs = t.strides.empty() ? contiguousStrides(sy, s) : t.strides;
  TensorType window = t;
  window.sizes = leading(x, d);
  window.strides.assign(xs.begin(), xs.begin() + (rank - d));
  for (int64_t k = 0; k < d; ++k) {
    window.sizes.push_back(sy.constant(kernel[k]));
    window.strides.push_back(sy.mul(xs[rank - d + k], sy.constant(dilation[k])));
  }
  for (int64_t k = 0; k < d; ++k) {
    int64_t span =
        staticSize(s[rank - d + k], "the image size") - dilation[k] * (kernel[k] - 1) - 1;
    if (span < 0)
      rewriteFail("convolution windows: the kernel does not fit the padded input");
    window.sizes.push_back(sy.constant(span / stride[k] + 1));
    window.strides.push_back(sy.mul(xs[rank - d + k], sy.constant(stride[k])));
  }
  if (!window.storageOffset)
    window.storageOffset = sy.constant(0);
  return e.asStrided(x, window);
}

Value *decompose::im2col(Emit &e, Value *x, const Dims &kernel, const Dims &dilation,
                         const Dims &padding, const Dims &stride) {
  Value *windows = convWindows(e, x, kernel, dilation, padding, stride);
  // [..., C, k0.., o0..] as [..., C k0.., o0..].
  size_t d = kernel.size();
  const Sizes &ws = sizesOf(windows);
  auto first = ws.begin() + (ws.size() - 2 * d - 1);
  Sizes result(ws.begin(), first);
  result.push_back(sizeProduct(e.syms(), Sizes(first, first + d + 1)));
  result.push_back(sizeProduct(e.syms(), Sizes(first + d + 1, ws.end())));
  return e.reshape(windows, result);
}

namespace {

/// im2col (unfold) of a 2-d image, batched or not: its windows
/// [N, C, kh, kw, oh, ow] copied as [N, C kh kw, oh ow].
Results decomposeIm2col(RewriteContext &ctx) {
  Emit e(ctx);
  int64_t rank = rankOf(ctx.value("self"));
  if (rank != 3 && rank != 4)
    rewriteFail("im2col expects a 3-D or 4-D input, got " + std::to_string(rank) + "-D");
  Dims kernel = intsOfLength(ctx, "kernel_size", 2, 1), dilation = intsOfLength(ctx, "dilation", 2, 1);
  Dims padding = intsOfLength(ctx, "padding", 2, 0), stride = intsOfLength(ctx, "stride", 2, 1);
  return finish(ctx, {im2col(e, ctx.value("self"), kernel, dilation, padding, stride)});
}

/// grid_sampler (2-d and 3-d): each output point reads the input at the
/// grid's coordinates in [-1, 1] (x for width first), bilinearly (the 2^n
/// corners, weighted) or at the nearest element; with zeros padding a
/// corner outside the input counts 0, with border padding coordinates are
/// clamped to the input. Corners are gathers from [N, C, spatial product].
Results decomposeGridSampler(RewriteContext &ctx) {
  Emit e(ctx);
  Value *input = ctx.value("input"), *grid = ctx.value("grid");
  int64_t n = rankOf(input) - 2;
  if ((n != 2 && n != 3) || rankOf(grid) != n + 2)
    rewriteFail("grid_sampler expects a 4-D or 5-D input and a grid of the same rank");
  int64_t interp = ctx.integer("interpolation_mode"), padMode = ctx.integer("padding_mode");
  if (interp != 0 && interp != 1)
    rewriteFail("grid_sampler: bicubic interpolation is not supported");
  if (padMode != 0 && padMode != 1)
    rewriteFail("grid_sampler: reflection padding is not supported");
  bool align = ctx.boolean("align_corners", false);
  DType t = computeDType(typeOf(input).dtype);
  Value *x = e.cast(input, t);
  grid = e.cast(grid, t);
  SymContext &sy = e.syms();
  const Sizes &is = sizesOf(x), &gs = sizesOf(grid);
  Sizes spatialIn(is.begin() + 2, is.end()), spatialOut(gs.begin() + 1, gs.end() - 1);
  const SymExpr *points = sizeProduct(sy, spatialOut);
  Value *flat = e.reshape(x, {is[0], is[1], sizeProduct(sy, spatialIn)});
  // Coordinates per dim, outermost (depth or height) first: [N, points].
  std::vector<Value *> coord(n);
  Dims size(n);
  for (int64_t k = 0; k < n; ++k) {
    size[k] = staticSize(spatialIn[k], "the input size");
    Value *c = e.reshape(e.select(grid, n + 1, n - 1 - k), {gs[0], points});
    // Unnormalize from [-1, 1] to pixel coordinates.
    c = align ? e.mul(e.add(c, int64_t(1)), 0.5 * static_cast<double>(size[k] - 1))
              : e.div(e.sub(e.mul(e.add(c, int64_t(1)), static_cast<double>(size[k])), int64_t(1)), 2.0);
    if (padMode == 1)
      c = e.minimum(e.maximum(c, e.scalar(Number::integer(0), t)),
                    e.scalar(Number::integer(size[k] - 1), t));
    if (interp == 1)
      c = e.unary(ops::aten_round_default, c);
    coord[k] = c;
  }
  Value *zero = e.scalar(Number::integer(0), t);
  auto sample = [&](const std::vector<Value *> &at, Value *weight) {
    // at: integer coordinates [N, points]; weight [N, points].
    Value *flatIndex = nullptr, *inside = nullptr;
    for (int64_t k = 0; k < n; ++k) {
      Value *ok = e.op(ops::aten_logical_and_default,
                       {{"self", e.compare(Cmp::Ge, at[k], Number::integer(0))},
                        {"other", e.compare(Cmp::Lt, at[k], Number::integer(size[k]))}});
      inside = inside ? e.op(ops::aten_logical_and_default, {{"self", inside}, {"other", ok}}) : ok;
      Value *c = e.minimum(e.maximum(at[k], e.scalar(Number::integer(0), DType::Int64)),
                           e.scalar(Number::integer(size[k] - 1), DType::Int64));
      flatIndex = flatIndex ? e.add(e.mul(flatIndex, size[k]), c) : c;
    }
    Value *index = e.expand(e.unsqueeze(flatIndex, 1), {is[0], is[1], points});
    Value *v = e.op(ops::aten_gather_default, {{"self", flat}, {"dim", int64_t(2)}, {"index", index}});
    Value *w = e.where(inside, weight, zero);
    return e.mul(v, e.unsqueeze(w, 1));
  };
  Value *out = nullptr;
  if (interp == 1) {
    std::vector<Value *> at;
    for (Value *c : coord)
      at.push_back(e.cast(c, DType::Int64));
    out = sample(at, e.fullLike(coord[0], Number::integer(1), t));
  } else {
    std::vector<Value *> lo(n), frac(n);
    for (int64_t k = 0; k < n; ++k) {
      Value *f = e.unary(ops::aten_floor_default, coord[k]);
      lo[k] = e.cast(f, DType::Int64);
      frac[k] = e.sub(coord[k], f);
    }
    for (int64_t corner = 0; corner < (int64_t(1) << n); ++corner) {
      std::vector<Value *> at(n);
      Value *w = nullptr;
      for (int64_t k = 0; k < n; ++k) {
        bool high = (corner >> (n - 1 - k)) & 1;
        at[k] = high ? e.add(lo[k], int64_t(1)) : lo[k];
        Value *wk = high ? frac[k] : e.sub(e.scalar(Number::integer(1), t), frac[k]);
        w = w ? e.mul(w, wk) : wk;
      }
      Value *term = sample(at, w);
      out = out ? e.add(out, term) : term;
    }
  }
  return finish(ctx, {e.reshape(out, concat({is[0], is[1]}, spatialOut))});
}

//===----------------------------------------------------------------------===//
// Padding
//===----------------------------------------------------------------------===//

/// The slice [start, end) of dim d, flipped along d when `flip`.
Value *edge(Emit &e, Value *x, int64_t d, int64_t start, int64_t end, bool flip) {
  Value *s = e.slice(x, d, start, end);
  return flip ? e.op(ops::aten_flip_default, {{"self", s}, {"dims", Dims{d}}}) : s;
}

/// aten.pad: "constant" is constant_pad_nd; "circular", "reflect" and
/// "replicate" concatenate slices of the input (wrapped around, mirrored
/// without the edge, or the edge repeated) before and after each padded dim.
Results decomposePad(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("self");
  Dims pad = ctx.ints("pad");
  std::string mode = ctx.string("mode", "constant");
  if (mode == "constant") {
    double value = ctx.has("value") ? ctx.real("value", 0) : 0;
    return finish(ctx, {e.op(ops::aten_constant_pad_nd_default,
                             {{"self", x}, {"pad", pad}, {"value", value}})});
  }
  if (mode != "circular" && mode != "reflect" && mode != "replicate")
    rewriteFail("pad: mode '" + mode + "' is not supported");
  int64_t rank = rankOf(x);
  if (pad.size() % 2 != 0 || static_cast<int64_t>(pad.size()) / 2 > rank)
    rewriteFail("pad: the pad list must hold (before, after) pairs for at most " +
                std::to_string(rank) + " dims");
  for (size_t k = 0; k < pad.size() / 2; ++k) {
    int64_t d = rank - 1 - static_cast<int64_t>(k);
    int64_t before = pad[2 * k], after = pad[2 * k + 1];
    int64_t n = staticSize(sizesOf(x)[d], "the padded dim");
    if (before < 0 || after < 0)
      rewriteFail("pad: negative padding in mode '" + mode + "' is not supported");
    int64_t limit = mode == "reflect" ? n - 1 : n;
    if (mode != "replicate" && (before > limit || after > limit))
      rewriteFail("pad: padding (" + std::to_string(before) + ", " + std::to_string(after) +
                  ") is too large for a dim of size " + std::to_string(n) + " in mode '" + mode + "'");
    if (mode == "replicate" && n == 0 && before + after > 0)
      rewriteFail("pad: mode 'replicate' needs a non-empty dim to pad");
    std::vector<Value *> parts;
    if (before > 0) {
      if (mode == "circular")
        parts.push_back(edge(e, x, d, n - before, n, false));
      else if (mode == "reflect")
        parts.push_back(edge(e, x, d, 1, before + 1, true));
      else {
        Sizes s = sizesOf(x);
        s[d] = e.syms().constant(before);
        parts.push_back(e.expand(e.slice(x, d, 0, 1), s));
      }
    }
    parts.push_back(x);
    if (after > 0) {
      if (mode == "circular")
        parts.push_back(edge(e, x, d, 0, after, false));
      else if (mode == "reflect")
        parts.push_back(edge(e, x, d, n - 1 - after, n - 1, true));
      else {
        Sizes s = sizesOf(x);
        s[d] = e.syms().constant(after);
        parts.push_back(e.expand(e.slice(x, d, n - 1, n), s));
      }
    }
    if (parts.size() > 1)
      x = e.cat(parts, d);
  }
  return finish(ctx, {x});
}

const DecompositionEntry kPoolingDecompositions[] = {
    {ops::aten__upsample_nearest_exact1d_vec, decomposeUpsampleNearestExact1d},
    {ops::aten_adaptive_avg_pool1d_default, decomposeAdaptiveAvgPool1d},
    {ops::aten_adaptive_avg_pool3d_default, decomposeAdaptiveAvgPool3d},
    {ops::aten_adaptive_max_pool1d_default, decomposeAdaptiveMaxPool1d},
    {ops::aten_adaptive_max_pool3d_default, decomposeAdaptiveMaxPool3d},
    {ops::aten_avg_pool1d_default, decomposeAvgPool1d},
    {ops::aten_avg_pool3d_default, decomposeAvgPool3d},
    {ops::aten_grid_sampler_2d_default, decomposeGridSampler},
    {ops::aten_grid_sampler_3d_default, decomposeGridSampler},
    {ops::aten_grid_sampler_default, decomposeGridSampler},
    {ops::aten_im2col_default, decomposeIm2col},
    {ops::aten_max_pool1d_default, decomposeMaxPool1d},
    {ops::aten_max_pool1d_with_indices_default, decomposeMaxPool1dWithIndices},
    {ops::aten_max_pool2d_with_indices_backward_default, decomposeMaxPool2dBackward},
    {ops::aten_max_pool3d_default, decomposeMaxPool3d},
    {ops::aten_max_pool3d_with_indices_default, decomposeMaxPool3dWithIndices},
    {ops::aten_max_unpool2d_default, decomposeMaxUnpool2d},
    {ops::aten_max_unpool3d_default, decomposeMaxUnpool3d},
    {ops::aten_pad_default, decomposePad},
    {ops::aten_upsample_bicubic2d_vec, decomposeUpsampleBicubic2d},
    {ops::aten_upsample_bilinear2d_vec, decomposeUpsampleBilinear2d},
    {ops::aten_upsample_linear1d_vec, decomposeUpsampleLinear1d},
    {ops::aten_upsample_nearest1d_vec, decomposeUpsampleNearest1d},
    {ops::aten_upsample_trilinear3d_vec, decomposeUpsampleTrilinear3d},
};

} // namespace

void registerPoolingDecompositions(DecompositionRegistry &r) { r.add(kPoolingDecompositions); }

} // namespace gc
