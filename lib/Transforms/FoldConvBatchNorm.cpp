//===- FoldConvBatchNorm.cpp - Inference batch norm into the convolution --===//
//
// In inference, batch norm after a convolution is an affine map per output
// channel, so it folds into the convolution's weight and bias:
//   scale = gamma / sqrt(var + eps)
//   w'    = w * scale (per output channel)
//   b'    = (b - mean) * scale + beta
// The pass matches aten.conv2d.default or aten.convolution.default (not
// transposed) whose only user is aten.batch_norm.default with
// training=false, or aten._native_batch_norm_legit_no_training.default
// whose statistics results are unused, where the weight, bias, gamma, beta,
// mean and variance are constants (or absent: no bias, gamma 1, beta 0).
// It writes the arithmetic above as ops on those constants and evaluates
// them at once (whatever their size), so w' and b' become new constants.
// Run after freeze, before decompose.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"

#include "gc/Ops/GraphBuilder.h"
#include "gc/Transforms/Passes.h"

#include <unordered_map>

namespace gc {

namespace {

bool isFalse(const Node &n, std::string_view name) {
  const NamedArg *a = n.arg(name);
  return !a || (a->value.kind == ArgKind::Bool && a->value.ints[0] == 0);
}

/// The convolution that batch norm `bn` folds into, or null.
const Node *foldableConv(const Graph &g, const Node &bn,
                         const std::unordered_map<const Value *, int> &uses) {
  if (bn.op() == ops::aten__native_batch_norm_legit_no_training_default) {
    for (size_t i = 1; i < bn.results().size(); ++i)
      if (uses.count(bn.results()[i]))
        return nullptr;
  } else if (bn.op() != ops::aten_batch_norm_default || !isFalse(bn, "training")) {
    return nullptr;
  }
  const Value *input = tensorArg(bn, "input");
  const Node *conv = input ? input->definingNode() : nullptr;
  if (!conv || uses.at(input) != 1 || conv->results().size() != 1 ||
      !(conv->op() == ops::aten_conv2d_default ||
        (conv->op() == ops::aten_convolution_default && isFalse(*conv, "transposed"))))
    return nullptr;
  auto constantOrNone = [&](const Node &n, std::string_view name, bool required) {
    const Value *v = tensorArg(n, name);
    return v ? isConstantInput(g, v) : !required;
  };
  if (!constantOrNone(*conv, "weight", true) || !constantOrNone(*conv, "bias", false) ||
      !constantOrNone(bn, "weight", false) || !constantOrNone(bn, "bias", false) ||
      !constantOrNone(bn, "running_mean", true) || !constantOrNone(bn, "running_var", true) ||
      !isFloatingPoint(tensorArg(*conv, "weight")->type().tensor.dtype))
    return nullptr;
  return conv;
}

class FoldConvBatchNormPass : public Pass {
public:
  std::string_view name() const override { return "fold-conv-bn"; }

  Error run(Module &m) override {
    GC_RETURN_IF_ERROR(requireFunctional(m, name()));
    // By index: the last fold may add the constant program's graph.
    for (size_t gi = 0; gi < m.graphs().size(); ++gi) {
      const auto &g = m.graphs()[gi];
      std::unordered_map<const Value *, int> uses = countUses(*g);
      std::unordered_map<const Node *, const Node *> bnOfConv;
      for (const auto &n : g->nodes())
        if (const Node *conv = foldableConv(*g, *n, uses))
          bnOfConv[conv] = n.get();
      if (bnOfConv.empty())
        continue;
      std::unordered_set<const Node *> arithmetic;
      std::unordered_map<const Node *, Value *> folded; // batch norm -> new conv result
      GC_RETURN_IF_ERROR(rewriteGraph(m, *g, [&](RewriteContext &ctx) {
        const Node &n = ctx.node();
        if (auto it = folded.find(&n); it != folded.end()) {
          std::vector<Value *> r(n.results().size(), nullptr);
          r[0] = it->second;
          return std::optional(r);
        }
        auto bn = bnOfConv.find(&n);
        if (bn == bnOfConv.end())
          return std::optional<std::vector<Value *>>();
        GraphBuilder &b = ctx.builder();
        size_t first = b.graph().nodes().size();
        Value *conv = foldedConv(ctx, *bn->second);
        for (size_t i = first; i + 1 < b.graph().nodes().size(); ++i)
          arithmetic.insert(b.graph().nodes()[i].get());
        folded[bn->second] = conv;
        ++statistics()["batch norms folded"];
        return std::optional(std::vector<Value *>{conv});
      }));
      GC_RETURN_IF_ERROR(foldConstants(
          m, *m.graph(g->name()), [&](const Node &n) { return arithmetic.count(&n) > 0; },
          statistics()));
    }
    return Error::success();
  }

private:
  /// Emits w', b' and the convolution that uses them; returns its result.
  static Value *foldedConv(RewriteContext &ctx, const Node &bn) {
    GraphBuilder &b = ctx.builder();
    const Node &conv = ctx.node();
    auto mapped = [&](const Node &n, std::string_view name) -> Value * {
      const Value *v = tensorArg(n, name);
      return v ? ctx.map(v) : nullptr;
    };
    const NamedArg *epsArg = bn.arg("eps");
    if (!epsArg)
      rewriteFail("batch norm without eps");
    ArgValue eps(epsArg->value);
    Value *w = mapped(conv, "weight");
    Value *scale =
        b.create1(ops::aten_rsqrt_default,
                  {{"self", b.create1(ops::aten_add_Tensor,
                                      {{"self", mapped(bn, "running_var")}, {"other", eps}})}});
    if (Value *gamma = mapped(bn, "weight"))
      scale = b.create1(ops::aten_mul_Tensor, {{"self", scale}, {"other", gamma}});
    std::vector<int64_t> perChannel(w->type().tensor.rank(), 1);
    perChannel[0] = -1;
    Value *newWeight = b.create1(
        ops::aten_mul_Tensor,
        {{"self", w},
         {"other", b.create1(ops::aten_view_default, {{"self", scale}, {"size", perChannel}})}},
        "folded_weight");
    Value *shifted = b.create1(ops::aten_neg_default, {{"self", mapped(bn, "running_mean")}});
    if (Value *bias = mapped(conv, "bias"))
      shifted = b.create1(ops::aten_add_Tensor, {{"self", shifted}, {"other", bias}});
    Value *beta = mapped(bn, "bias");
    Value *newBias = b.create1(ops::aten_mul_Tensor, {{"self", shifted}, {"other", scale}},
                               beta ? "" : "folded_bias");
    if (beta)
      newBias = b.create1(ops::aten_add_Tensor, {{"self", newBias}, {"other", beta}}, "folded_bias");

    // The same call with the new weight and bias; a bias left out (its
    // default, None) goes after the weight, in schema order.
    std::vector<NamedArg> args;
    for (const NamedArg &a : conv.args()) {
      if (a.name == "bias")
        continue;
      args.push_back(a);
      for (Value *&v : args.back().value.values)
        if (v)
          v = ctx.map(v);
      if (a.name == "weight") {
        args.back().value = Arg::tensor(newWeight);
        args.push_back({"bias", false, Arg::tensor(newBias)});
      }
    }
    const Value *result = conv.results()[0];
    return b
        .createWithTypes(conv.op(), std::move(args), {{result->name(), result->type()}},
                         conv.resultForm())
        ->results()[0];
  }
};

} // namespace

std::unique_ptr<Pass> createFoldConvBatchNormPass() {
  return std::make_unique<FoldConvBatchNormPass>();
}

} // namespace gc
