//===- ConvAsProduct.cpp - GPU convolutions as matrix products -----------===//
//
// cuDNN's float32 convolutions (full precision, no TF32) run FMA
// implicit-GEMM kernels that use an H100 poorly once the image is small:
// 2 TFLOP/s for 512 channels at 7x7, 4 for 256 at 14x14, with layout
// transforms of their own around them. As im2col and one product, the same
// convolution is a cuBLASLt GEMM, which splits the long reduction over the
// whole GPU (resnet50 on an H100: 2.19 ms of GPU time a run through cuDNN,
// 1.13 ms as products):
//   cols = im2col(x)                     [N, C kh kw, Ho Wo]
//   y    = cols^T W^T (+ bias)           [N, Ho Wo, Cout]  (mm for N = 1, else bmm)
//   out  = y viewed [N, Ho, Wo, Cout], permuted to [N, Cout, Ho, Wo]
// The result is channels-last in memory, and the bias runs along the
// product's columns, where cuBLASLt's epilogue adds it. A 1x1 convolution of
// stride 1 without padding needs no im2col: its columns are x, viewed.
//
// Half precision gains too, for another reason: cuDNN's bfloat16
// convolutions of plain (NCHW) activations pay layout transforms of their
// own, and their bias, residual add and ReLU run as separate calls, where
// the product takes them into cuBLASLt's epilogue (the zoo's bfloat16 conv
// nets on an H200: resnet50 0.54 of the time, googlenet 0.81, densenet121
// 0.84, none slower; docs/gpu.md).
//
// Only 2-d convolutions of one group with static sizes change, of any
// floating-point type: depthwise and grouped ones stay cuDNN's, and so does
// every convolution of a training graph, whose saved results the backward
// reads as cuDNN wrote them. The pass runs in gc-lower, on modules made for
// CUDA (targetOf).
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

Rewrite rewriteOf(const Node &n) {
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
  return depthwise ? Rewrite::WindowSum : Rewrite::None;
}

class ConvAsProductPass : public Pass {
public:
  std::string_view name() const override { return "conv-as-product"; }

  Error run(Module &m) override {
    // A training forward graph saves its convolutions' results for the
    // backward: they would leave it channels-last, where cuDNN's backward
    // convolutions and the caller's GPU tensors want them plain.
    if (m.level() == Level::Partitioned || targetOf(m).device != TargetDevice::CUDA)
      return Error::success();
    for (const auto &g : m.graphs()) {
      bool any = false;
      for (const auto &n : g->nodes())
        any |= rewriteOf(*n) != Rewrite::None;
      if (!any)
        continue;
      GC_RETURN_IF_ERROR(rewriteGraph(m, *g, [&](RewriteContext &ctx) {
        switch (rewriteOf(ctx.node())) {
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
};

} // namespace

std::unique_ptr<Pass> createConvAsProductPass() { return std::make_unique<ConvAsProductPass>(); }

} // namespace gc
