//===- ActivationLayout.cpp - Channels-last activations of conv nets ------===//
#include "ActivationLayout.h"

#include "gc/IR/ExternOps.h"
#include "gc/IR/Permutation.h"
#include "gc/Support/DType.h"

namespace gc {

namespace {

/// A 4-d floating-point tensor, or an 8-bit one (the int8 convolutions'
/// activations: oneDNN's int8 kernels want them channels-last too).
bool isActivation(const Value *v) {
  if (!v || !v->type().isTensor())
    return false;
  const TensorType &t = v->type().tensor;
  return t.rank() == 4 &&
         (isFloatingPoint(t.dtype) || t.dtype == DType::UInt8 || t.dtype == DType::Int8);
}

const Value *tensorArg(const Node &n, const char *name) {
  const NamedArg *a = n.arg(name);
  return a && a->value.kind == ArgKind::Tensor && !a->value.values.empty() ? a->value.values[0]
                                                                          : nullptr;
}

/// A 2-d convolution, not transposed, of floating-point activations.
bool isConv2d(const Node &n) {
  const ExternOp *ext = externOp(n.op());
  if (!ext || ext->call != ExternCall::Convolution || n.results().empty() ||
      !isActivation(n.results()[0]) || !isActivation(tensorArg(n, "input")))
    return false;
  const NamedArg *t = n.arg("transposed");
  return !t || t->value.ints.empty() || t->value.ints[0] == 0;
}

/// A view presenting a [N, H, W, C] tensor as [N, C, H, W]: a convolution
/// that conv-as-product made a matrix product (earlier in gc-lower) gives
/// its result so, its channels already innermost in memory.
bool isChannelsLastView(const Node &n) {
  std::optional<std::vector<int64_t>> p = permutationOf(n);
  return p && *p == std::vector<int64_t>{0, 3, 1, 2} && isActivation(n.results()[0]);
}

} // namespace

std::vector<const SymExpr *> channelsLastStrides(SymContext &sx,
                                                 const std::vector<const SymExpr *> &sizes) {
  const SymExpr *c = sizes[1], *cw = sx.mul(c, sizes[3]), *chw = sx.mul(cw, sizes[2]);
  return {chw, sx.constant(1), cw, c};
}

std::unordered_set<const Value *> channelsLastValues(const Graph &g, LayoutMode mode) {
  std::unordered_set<const Value *> out;
  if (mode == LayoutMode::Plain)
    return out;
  bool hasConv = false;
  for (const auto &n : g.nodes())
    hasConv |= isConv2d(*n) || isChannelsLastView(*n);
  if (!hasConv)
    return out;
  // Forward, in graph order: convolutions and views of channels-last
  // memory start channels-last values, and a 4-d result of a node that
  // reads one stays channels-last, also through values of a higher rank (a
  // convolution's windows, summed by a depthwise convolution or a pooling);
  // a lower rank (a flatten) ends it, and so does any other permutation of
  // the dims: its result's dim 1 is no longer the channels.
  std::unordered_set<const Value *> derived;
  for (const auto &n : g.nodes()) {
    bool start = isConv2d(*n) || isChannelsLastView(*n), fromChannelsLast = start;
    if (!start && permutationOf(*n))
      continue;
    for (const NamedArg &a : n->args())
      for (const Value *v : a.value.values)
        fromChannelsLast |= v && derived.count(v);
    if (!fromChannelsLast)
      continue;
    for (const Value *r : n->results()) {
      if (isActivation(r))
        out.insert(r);
      if (isActivation(r) || (r->type().isTensor() && r->type().tensor.rank() > 4))
        derived.insert(r);
    }
  }
  // A convolution's input computed in the graph is written channels-last
  // where it is computed, so that the convolution need not reorder it.
  for (const auto &n : g.nodes())
    if (isConv2d(*n))
      if (const Value *x = tensorArg(*n, "input"); x->definingNode())
        out.insert(x);
  return out;
}

} // namespace gc
