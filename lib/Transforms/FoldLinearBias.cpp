//===- FoldLinearBias.cpp - Merging chained bias adds ---------------------===//
//
// After decompose, a linear layer is a matmul followed by an add of its
// bias; a further add of a constant (a second bias, a folded shift) makes a
// chain (x + b1) + b2. With b1 and b2 constants and the inner add used only
// there, the chain becomes x + (b1 + b2), and b1 + b2 is computed now, so
// one add is left. addmm is not a core op, so the matmul and its bias add
// stay two nodes; they stay next to each other in the graph, as the
// decomposition emits them, for the lowering to fuse. Only aten.add.Tensor
// with alpha 1 and operands of one dtype take part, so type promotion
// cannot change the result's dtype; broadcasting is associative, so the
// result keeps its sizes. Rounding may differ in the last bit, as for any
// reassociation.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"

#include "gc/Ops/GraphBuilder.h"
#include "gc/Transforms/Passes.h"

#include <unordered_map>

namespace gc {

namespace {

/// An add of two tensors of one dtype with alpha 1: its operands.
std::optional<std::pair<const Value *, const Value *>> plainAdd(const Node &n) {
  if (n.op() != ops::aten_add_Tensor || n.results().size() != 1)
    return std::nullopt;
  const NamedArg *self = n.arg("self");
  const NamedArg *other = n.arg("other");
  const NamedArg *alpha = n.arg("alpha");
  if (!self || !other || self->value.kind != ArgKind::Tensor ||
      other->value.kind != ArgKind::Tensor)
    return std::nullopt;
  if (alpha && alpha->value.kind != ArgKind::None &&
      !(alpha->value.kind == ArgKind::Int && alpha->value.ints[0] == 1) &&
      !(alpha->value.kind == ArgKind::Float && alpha->value.floats[0] == 1))
    return std::nullopt;
  const Value *a = self->value.values[0];
  const Value *b = other->value.values[0];
  DType t = n.results()[0]->type().tensor.dtype;
  if (a->type().tensor.dtype != t || b->type().tensor.dtype != t)
    return std::nullopt;
  return std::pair(a, b);
}

/// For an add with one constant operand: (the other operand, the constant).
std::optional<std::pair<const Value *, const Value *>> addOfConstant(const Graph &g,
                                                                     const Node &n) {
  auto ops = plainAdd(n);
  if (!ops)
    return std::nullopt;
  if (isConstantInput(g, ops->second))
    return ops;
  if (isConstantInput(g, ops->first))
    return std::pair(ops->second, ops->first);
  return std::nullopt;
}

class FoldLinearBiasPass : public Pass {
public:
  std::string_view name() const override { return "fold-linear-bias"; }

  Error run(Module &m) override {
    GC_RETURN_IF_ERROR(requireFunctional(m, name()));
    // By index: the last fold may add the constant program's graph.
    for (size_t gi = 0; gi < m.graphs().size(); ++gi) {
      const auto &g = m.graphs()[gi];
      std::unordered_map<const Value *, int> uses = countUses(*g);
      // outer add -> (x, b1, b2); the inner adds go with them.
      struct Chain {
        const Value *x, *b1, *b2;
      };
      std::unordered_map<const Node *, Chain> chains;
      std::unordered_set<const Node *> inners;
      for (const auto &n : g->nodes()) {
        auto outer = addOfConstant(*g, *n);
        const Node *inner = outer ? outer->first->definingNode() : nullptr;
        auto innerOps = inner ? addOfConstant(*g, *inner) : std::nullopt;
        if (!innerOps || uses[outer->first] != 1 || chains.count(inner))
          continue;
        chains[n.get()] = {innerOps->first, innerOps->second, outer->second};
        inners.insert(inner);
      }
      if (chains.empty())
        continue;
      std::unordered_set<const Node *> biasSums;
      GC_RETURN_IF_ERROR(rewriteGraph(m, *g, [&](RewriteContext &ctx) {
        if (inners.count(&ctx.node()))
          return std::optional(std::vector<Value *>{nullptr});
        auto chain = chains.find(&ctx.node());
        if (chain == chains.end())
          return std::optional<std::vector<Value *>>();
        GraphBuilder &b = ctx.builder();
        const Chain &c = chain->second;
        Value *sum = b.create1(ops::aten_add_Tensor,
                               {{"self", ctx.map(c.b1)}, {"other", ctx.map(c.b2)}}, "bias_sum");
        biasSums.insert(sum->definingNode());
        ++statistics()["bias adds merged"];
        return std::optional(std::vector<Value *>{
            b.create1(ops::aten_add_Tensor, {{"self", ctx.map(c.x)}, {"other", sum}})});
      }));
      GC_RETURN_IF_ERROR(foldConstants(
          m, *m.graph(g->name()), [&](const Node &n) { return biasSums.count(&n) > 0; },
          statistics()));
    }
    return Error::success();
  }
};

} // namespace

std::unique_ptr<Pass> createFoldLinearBiasPass() { return std::make_unique<FoldLinearBiasPass>(); }

} // namespace gc
