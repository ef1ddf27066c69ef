//===- Pooling.cpp - Decompositions of pooling, resampling and padding ----===//
//
// Pooling of one and three spatial dims through the 2-d pooling ops (core,
// with loop lowerings), adaptive pooling, unpooling as a scatter,
// interpolation as gathers with computed indices and weights, im2col,
// grid sampling, and the padding modes of aten.pad.
//
//===----------------------------------------------------------------------===//
#include "Emit.h"

namespace gc {

namespace {

using namespace decompose;

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
    {ops::aten_pad_default, decomposePad},
};

} // namespace

void registerPoolingDecompositions(DecompositionRegistry &r) { r.add(kPoolingDecompositions); }

} // namespace gc
