//===- Spectral.cpp - Decompositions of FFTs and the STFT -----------------===//
//
// gc has no complex dtype, so only the transforms whose input and output
// are real decompose: the inverse real FFTs (irfft, irfft2, irfftn) and the
// Hermitian FFTs (hfft, hfft2, hfftn) of a real tensor, whose imaginary
// part is zero, and the STFT with real results (return_complex=False).
// Each transform is a product with DFT matrices of cosines and sines,
// which the graph computes from exact integer phases (j * k mod n) in
// float64: an O(n^2) DFT through mm, exact to rounding (lengths whose
// matrices would pass 2^24 elements are refused). fftshift and ifftshift
// are rolls.
//
//===----------------------------------------------------------------------===//
#include "gc/Ops/Emit.h"

#include "gc/Ops/ShapeInference.h"

#include <cmath>
#include <numbers>
#include <string>

namespace gc {

namespace {

using namespace decompose;

/// The largest DFT matrix built (64 MiB of float32).
constexpr int64_t kMaxDftElements = int64_t(1) << 24;

/// cos and sin of 2 pi j k / n for k < rows and j < columns, as `dtype`.
struct DftMatrices {
  Value *cos, *sin;
};

DftMatrices dftMatrices(Emit &e, int64_t rows, int64_t columns, int64_t n, DType dtype) {
  if (rows * columns > kMaxDftElements)
    rewriteFail("a DFT of length " + std::to_string(n) + " over " + std::to_string(columns) +
                " inputs is not supported: gc computes it as a product with a dense " +
                std::to_string(rows) + " x " + std::to_string(columns) +
                " matrix, and allows at most 2^24 elements");
  Value *k = e.unsqueeze(e.arange(rows), 1);
  Value *products = e.mul(k, e.unsqueeze(e.arange(columns), 0));
  Value *phase = e.op(ops::aten_remainder_Scalar, {{"self", products}, {"other", n}});
  double radians = 2 * std::numbers::pi / static_cast<double>(n);
  Value *angle = e.mul(e.cast(phase, DType::Float64), radians);
  return {e.cast(e.unary(ops::aten_cos_default, angle), dtype),
          e.cast(e.unary(ops::aten_sin_default, angle), dtype)};
}

/// y[..., k, ...] = sum over j of matrix[k, j] * x[..., j, ...] along `dim`.
Value *applyAlong(Emit &e, Value *x, Value *matrix, int64_t dim) {
  Value *last = e.transpose(x, dim, -1);
  return e.transpose(e.matmul(last, e.transpose(matrix, 0, 1)), dim, -1);
}

/// The first `m` elements of x along `dim` (all of them if it has fewer:
/// the zeros torch pads with add nothing to a DFT).
Value *leading(Emit &e, Value *x, int64_t dim, int64_t m) {
  int64_t size = staticSize(sizesOf(x)[dim], "a transformed dim");
  return size > m ? e.slice(x, dim, 0, m) : x;
}

/// A complex tensor as its real and imaginary parts; a null imaginary part
/// is zero.
struct Complex {
  Value *re, *im = nullptr;
};

/// The inverse DFT of length n along `dim` (unscaled): sum over j of
/// z[j] e^{+2 pi i j k / n}.
Complex inverseDft(Emit &e, Complex z, int64_t dim, int64_t n) {
  z.re = leading(e, z.re, dim, n);
  int64_t m = staticSize(sizesOf(z.re)[dim], "a transformed dim");
  DftMatrices w = dftMatrices(e, n, m, n, typeOf(z.re).dtype);
  Value *re = applyAlong(e, z.re, w.cos, dim);
  Value *im = applyAlong(e, z.re, w.sin, dim);
  if (z.im) {
    Value *zi = leading(e, z.im, dim, n);
    re = e.sub(re, applyAlong(e, zi, w.sin, dim));
    im = e.add(im, applyAlong(e, zi, w.cos, dim));
  }
  return {re, im};
}

/// The real inverse DFT of length n along `dim` of the n / 2 + 1 bins of a
/// Hermitian signal (unscaled): the bins between 0 and n / 2 stand for
/// themselves and their mirror images, so they count twice, and the
/// imaginary parts of bins 0 and n / 2 drop out (their sines are 0).
Value *hermitianToReal(Emit &e, Complex z, int64_t dim, int64_t n) {
  int64_t bins = n / 2 + 1;
  z.re = leading(e, z.re, dim, bins);
  int64_t m = staticSize(sizesOf(z.re)[dim], "a transformed dim");
  DType t = typeOf(z.re).dtype;
  DftMatrices w = dftMatrices(e, n, m, n, t);
  Value *j = e.arange(m);
  Value *single = e.op(ops::aten_logical_or_default,
                       {{"self", e.compare(Cmp::Eq, j, Number::integer(0))},
                        {"other", e.compare(Cmp::Eq, e.mul(j, int64_t(2)), Number::integer(n))}});
  Value *weight = e.where(single, e.scalar(Number::integer(1), t), e.scalar(Number::integer(2), t));
  Value *out = applyAlong(e, z.re, e.mul(w.cos, weight), dim);
  if (z.im)
    out = e.sub(out, applyAlong(e, leading(e, z.im, dim, bins), e.mul(w.sin, weight), dim));
  return out;
}

enum class Norm { Backward, Ortho, Forward };

Norm normArg(RewriteContext &ctx) {
  std::string norm = ctx.has("norm") ? ctx.string("norm", "") : "backward";
  if (norm == "backward")
    return Norm::Backward;
  if (norm == "ortho")
    return Norm::Ortho;
  if (norm == "forward")
    return Norm::Forward;
  rewriteFail("unknown norm \"" + norm + "\"");
}

/// irfft, irfft2, irfftn (hermitian = false) and hfft, hfft2, hfftn (true)
/// of a real tensor. `dims` are the transformed dims, the last one the
/// real one; `sizes` the output lengths (-1 for the default). For a real
/// input hfft is irfft without its 1 / N (conj changes nothing).
Results inverseRealFft(RewriteContext &ctx, Dims dims, std::vector<int64_t> sizes, bool hermitian) {
  Emit e(ctx);
  Value *x = ctx.value("self");
  x = e.cast(x, computeDType(typeOf(x).dtype));
  int64_t rank = rankOf(x);
  if (dims.empty())
    rewriteFail("no dims to transform");
  double count = 1;
  Complex z{x};
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t dim = wrapDimension(dims[i], rank);
    int64_t size = staticSize(sizesOf(x)[dim], "a transformed dim");
    bool last = i + 1 == dims.size();
    int64_t n = sizes[i] != -1 ? sizes[i] : last ? 2 * (size - 1) : size;
    if (n < 1)
      rewriteFail("invalid number of data points (" +
                  std::to_string(n) + ")");
    count *= static_cast<double>(n);
    if (last)
      z = {hermitianToReal(e, z, dim, n)};
    else
      z = inverseDft(e, z, dim, n);
  }
  Norm norm = normArg(ctx);
  double scale = norm == Norm::Ortho ? 1 / std::sqrt(count)
                 : (norm == Norm::Backward) != hermitian ? 1 / count
                                                          : 1;
  return finish(ctx, {scale == 1 ? z.re : e.mul(z.re, scale)});
}

/// The 1-D forms: one dim, one optional length.
Results inverseRealFft1(RewriteContext &ctx, bool hermitian) {
  return inverseRealFft(ctx, {ctx.integer("dim", -1)}, {ctx.has("n") ? ctx.integer("n") : -1},
                        hermitian);
}

/// The 2-D and n-D forms: dims given (all, or the last len(s) with s only),
/// lengths s given or defaulted.
Results inverseRealFftN(RewriteContext &ctx, bool hermitian, std::optional<Dims> dflt) {
  int64_t rank = rankOf(ctx.value("self"));
  std::optional<Dims> s;
  if (ctx.has("s"))
    s = ctx.ints("s");
  Dims dims;
  if (ctx.has("dim")) {
    dims = ctx.ints("dim");
  } else if (dflt) {
    dims = *dflt;
  } else {
    int64_t count = s ? static_cast<int64_t>(s->size()) : rank;
    for (int64_t d = rank - count; d < rank; ++d)
      dims.push_back(d);
  }
  std::vector<int64_t> sizes(dims.size(), -1);
  if (s) {
    if (s->size() != dims.size())
      rewriteFail("s and dim must have the same length");
    sizes = *s;
  }
  return inverseRealFft(ctx, dims, sizes, hermitian);
}

Results decomposeIrfft(RewriteContext &ctx) { return inverseRealFft1(ctx, false); }
Results decomposeHfft(RewriteContext &ctx) { return inverseRealFft1(ctx, true); }
Results decomposeIrfft2(RewriteContext &ctx) { return inverseRealFftN(ctx, false, Dims{-2, -1}); }
Results decomposeHfft2(RewriteContext &ctx) { return inverseRealFftN(ctx, true, Dims{-2, -1}); }
Results decomposeIrfftn(RewriteContext &ctx) { return inverseRealFftN(ctx, false, std::nullopt); }
Results decomposeHfftn(RewriteContext &ctx) { return inverseRealFftN(ctx, true, std::nullopt); }

/// fftshift rolls each dim (all for none) by half its size, rounded down;
/// ifftshift rolls it back.
Results shiftSpectrum(RewriteContext &ctx, bool inverse) {
  Emit e(ctx);
  Value *x = ctx.value("self");
  std::optional<Dims> given;
  if (ctx.has("dim"))
    given = ctx.ints("dim");
  Dims dims = wrapDims(given, rankOf(x));
  if (dims.empty())
    return finish(ctx, {x});
  Dims shifts;
  for (int64_t d : dims) {
    int64_t half = staticSize(sizesOf(x)[d], "a shifted dim") / 2;
    shifts.push_back(inverse ? -half : half);
  }
  return finish(ctx,
                {e.op(ops::aten_roll_default, {{"self", x}, {"shifts", shifts}, {"dims", dims}})});
}

Results decomposeFftshift(RewriteContext &ctx) { return shiftSpectrum(ctx, false); }
Results decomposeIfftshift(RewriteContext &ctx) { return shiftSpectrum(ctx, true); }

/// The STFT of a real signal [L] or [B, L] with real results [.., F, T, 2]:
/// a strided 1-D convolution with 2F filters, the windowed cosines and
/// negated sines of the F frequencies.
Results decomposeStft(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("self");
  if (ctx.boolean("return_complex", false))
    rewriteFail("return_complex=True is not supported (gc has no complex "
                "dtype)");
  int64_t rank = rankOf(x);
  if (rank != 1 && rank != 2)
    rewriteFail("the signal must have 1 or 2 dims");
  int64_t nfft = ctx.integer("n_fft");
  int64_t hop = ctx.has("hop_length") ? ctx.integer("hop_length") : nfft / 4;
  int64_t win = ctx.has("win_length") ? ctx.integer("win_length") : nfft;
  int64_t length = staticSize(sizesOf(x).back(), "the signal's length");
  if (nfft <= 0 || nfft > length || hop <= 0 || win <= 0 || win > nfft)
    rewriteFail("need 0 < n_fft <= the signal's length, 0 < hop_length and "
                "0 < win_length <= n_fft");
  bool onesided = ctx.boolean("onesided", true);
  int64_t freqs = onesided ? nfft / 2 + 1 : nfft;
  DType t = computeDType(typeOf(x).dtype);
  x = e.cast(x, t);
  // The window, centred in n_fft samples with zeros around it.
  Value *window = ctx.has("window") ? e.cast(ctx.value("window"), t)
                                    : e.full({e.syms().constant(win)}, Number::integer(1), t);
  if (rankOf(window) != 1 || staticSize(sizesOf(window)[0], "the window") != win)
    rewriteFail("the window must have win_length elements");
  int64_t left = (nfft - win) / 2, right = nfft - win - left;
  std::vector<Value *> parts;
  if (left > 0)
    parts.push_back(e.full({e.syms().constant(left)}, Number::integer(0), t));
  parts.push_back(window);
  if (right > 0)
    parts.push_back(e.full({e.syms().constant(right)}, Number::integer(0), t));
  if (parts.size() > 1)
    window = e.cat(parts, 0);
  DftMatrices w = dftMatrices(e, freqs, nfft, nfft, t);
  Value *filters = e.mul(e.cat({w.cos, e.unary(ops::aten_neg_default, w.sin)}, 0), window);
  if (ctx.boolean("normalized", false))
    filters = e.mul(filters, 1 / std::sqrt(static_cast<double>(nfft)));
  Value *signal = rank == 1 ? e.unsqueeze(e.unsqueeze(x, 0), 0) : e.unsqueeze(x, 1);
  Value *spectrum = e.op(ops::aten_conv1d_default, {{"input", signal},
                                                    {"weight", e.unsqueeze(filters, 1)},
                                                    {"stride", std::vector<int64_t>{hop}}});
  Value *re = e.unsqueeze(e.slice(spectrum, 1, 0, freqs), -1);
  Value *im = e.unsqueeze(e.slice(spectrum, 1, freqs, 2 * freqs), -1);
  Value *out = e.cat({re, im}, -1);
  return finish(ctx, {rank == 1 ? e.squeeze(out, {0}) : out});
}

const DecompositionEntry kSpectralDecompositions[] = {
    {ops::aten_fft_fftshift_default, decomposeFftshift},
    {ops::aten_fft_hfft_default, decomposeHfft},
    {ops::aten_fft_hfft2_default, decomposeHfft2},
    {ops::aten_fft_hfftn_default, decomposeHfftn},
    {ops::aten_fft_ifftshift_default, decomposeIfftshift},
    {ops::aten_fft_irfft_default, decomposeIrfft},
    {ops::aten_fft_irfft2_default, decomposeIrfft2},
    {ops::aten_fft_irfftn_default, decomposeIrfftn},
    {ops::aten_stft_default, decomposeStft},
};

} // namespace

void registerSpectralDecompositions(DecompositionRegistry &r) { r.add(kSpectralDecompositions); }

} // namespace gc
