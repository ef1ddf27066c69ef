//===- ConvAsProduct.cpp - GPU convolutions as products and sums ---------===//
//
// In inference on a GPU, gc runs a convolution (not transposed, 1 to 3
// spatial dims, static sizes, any floating-point type) through cuDNN only
// when it is neither of the two kinds below.
//
// One group: im2col and one product. cuDNN's float32 convolutions (full
// precision, no TF32) run FMA implicit-GEMM kernels that use an H100 poorly
// once the image is small: 2 TFLOP/s for 512 channels at 7x7, 4 for 256 at
// 14x14, with layout transforms of their own around them. As a cuBLASLt
// GEMM the long reduction is split over the whole GPU (resnet50 on an H100:
// 2.19 ms of GPU time a run through cuDNN, 1.13 ms as products):
//   cols = im2col(x)                 [N, C k0.., o0..]
//   y    = cols^T W^T (+ bias)       [N, o0.., Cout]   (mm for N = 1, else bmm)
//   out  = y viewed [N, o0 .., Cout], permuted to [N, Cout, o0 ..]
// The result is channels-last in memory, and the bias runs along the
// product's columns, where cuBLASLt's epilogue adds it. A kernel of size 1
// with stride 1 and no padding needs no im2col: its columns are x, viewed.
// In half precision cuDNN's convolutions of plain activations pay layout
// transforms too, and their bias, residual add and ReLU run as calls of
// their own, which the product takes into its epilogue (the zoo's bfloat16
// conv nets on an H200: resnet50 0.54 of the time, googlenet 0.81,
// densenet121 0.84, none slower; docs/gpu.md).
//
// Depthwise (groups = input channels, m output channels each): a window
// sum,
//   out = sum over k of windows(x)[N, G, 1, k.., o..] * W[1, G, m, k.., 1..]
// plus the bias, viewed [N, G m, o..] (with m = 1 the sum is [N, G, o..]
// itself, which gc-lower lays out like its input), computed in float32 for
// half precision. The pad (read in place, under a mask), the products, the sum
// and the bias are one loop reduction, which runs a GPU thread per output
// point for kernels of fewer than 64 points and shares its kernel with the
// pointwise ops after it (a batch norm, an activation) that read it in its
// own order; cuDNN's depthwise kernels left the bias and each of those a
// launch of its own. Only undilated ones in half precision, where cuDNN's
// depthwise kernels are slow: the zoo's bfloat16 depthwise nets on an H200
// took 0.23-0.50 of the time with window sums, and the bfloat16
// segmentation nets ran 5% faster with their dilated depthwise convolutions
// left to cuDNN (docs/gpu.md). In float32 only where the graph's 4-d
// activations are channels-last (gc-lower's --layout, auto on a GPU:
// gc/IR/LayoutMode.h), each thread a channel of a pixel: the zoo's float32
// depthwise nets then took 0.69-0.80 of cuDNN's time there (convnext 0.98),
// where in the plain layout efficientnet_b0 and mobilenet_v3_small took 2.1
// and 1.5 times as long as cuDNN's float32 depthwise kernels.
//
// Grouped convolutions of several input channels per group stay cuDNN's,
// and so does every convolution of a training graph, whose saved results
// the backward reads as cuDNN wrote them. The pass runs in gc-lower, on
// modules made for CUDA (targetOf).
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"

#include "gc/IR/TargetOf.h"
#include "gc/Ops/Decompositions.h"
#include "gc/Ops/GraphBuilder.h"
#include "gc/Transforms/Passes.h"

#include <algorithm>

namespace gc {

namespace {

/// Whether every size of `t` is a constant (im2col needs the image's).
bool hasStaticSizes(const TensorType &t) {
  return std::all_of(t.sizes.begin(), t.sizes.end(),
                     [](const SymExpr *s) { return s->isConst(); });
}

/// What this pass makes of a node.
enum class Rewrite { None, Product, WindowSum };

/// A convolution of one group is a product, an undilated depthwise one of a
/// 16-bit type a window sum, of any floating-point type with 2 spatial dims
/// in a channels-last graph.
Rewrite rewriteOf(const Node &n, bool channelsLast) {
  if (n.op() != ops::aten_convolution_default || n.results().size() != 1)
    return Rewrite::None;
  ArgReader args(n.args());
  const Value *x = tensorArg(n, "input"), *w = tensorArg(n, "weight");
  if (!x || !w || args.boolean("transposed", false))
    return Rewrite::None;
  const TensorType &xt = x->type().tensor, &wt = w->type().tensor;
  const TensorType &yt = n.results()[0]->type().tensor;
  if (xt.rank() < 3 || xt.rank() > 5 || wt.rank() != xt.rank() || !isFloatingPoint(xt.dtype) ||
      xt.dtype != wt.dtype || !hasStaticSizes(xt) || !hasStaticSizes(wt) || !hasStaticSizes(yt))
    return Rewrite::None;
  int64_t groups = args.integer("groups", 1);
  if (groups == 1)
    return Rewrite::Product;
  bool depthwise = xt.sizes[1]->constant() == groups && wt.sizes[1]->constant() == 1;
  std::vector<int64_t> dilation = args.has("dilation") ? args.ints("dilation") : std::vector<int64_t>{};
  bool dilated = std::any_of(dilation.begin(), dilation.end(), [](int64_t d) { return d != 1; });
  bool laidOut = channelsLast && xt.rank() == 4; // the activations channels-last lays out
  return depthwise && !dilated && (laidOut || isHalfPrecision(xt.dtype)) ? Rewrite::WindowSum
                                                                         : Rewrite::None;
}

class ConvAsProductPass : public Pass {
public:
  explicit ConvAsProductPass(LayoutMode layout) : layout_(layout) {}
  std::string_view name() const override { return "conv-as-product"; }

  Error run(Module &m) override {
    // A training forward graph saves its convolutions' results for the
    // backward: they would leave it channels-last, where cuDNN's backward
    // convolutions and the caller's GPU tensors want them plain.
    if (m.level() == Level::Partitioned || targetOf(m).device != TargetDevice::CUDA)
      return Error::success();
    bool channelsLast = resolveLayout(layout_, m) == LayoutMode::ChannelsLast;
    for (const auto &g : m.graphs()) {
      bool any = false;
      for (const auto &n : g->nodes())
        any |= rewriteOf(*n, channelsLast) != Rewrite::None;
      if (!any)
        continue;
      GC_RETURN_IF_ERROR(rewriteGraph(m, *g, [&](RewriteContext &ctx) {
        switch (rewriteOf(ctx.node(), channelsLast)) {
        case Rewrite::Product:
          ++statistics()["convolutions as products"];
          return convolutionAsProduct(ctx);
        case Rewrite::WindowSum:
          ++statistics()["depthwise convolutions as window sums"];
          return depthwiseConvolutionAsSum(ctx);
        case Rewrite::None:
          break;
        }
        return std::optional<std::vector<Value *>>();
      }));
    }
    return Error::success();
  }

private:
  LayoutMode layout_;
};

} // namespace

std::unique_ptr<Pass> createConvAsProductPass(LayoutMode layout) {
  return std::make_unique<ConvAsProductPass>(layout);
}

std::unique_ptr<Pass> createConvAsProductPass() {
  return createConvAsProductPass(LayoutMode::Auto);
}

} // namespace gc
