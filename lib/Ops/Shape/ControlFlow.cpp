//===- ControlFlow.cpp - Shapes of ops that call graphs -------------------===//
//
// cond returns what its branches return, and while_loop what its body
// returns (the carried values' types). The verifier checks that both
// branches, and the body and the carried inputs, agree; here the result
// types are read from the graph that gives them.
//
//===----------------------------------------------------------------------===//
#include "ShapeUtil.h"

namespace gc {

namespace {

std::vector<Type> outputTypes(const Graph &g) {
  std::vector<Type> out;
  for (const Value *v : g.outputs())
    out.push_back(v->type());
  return out;
}

std::vector<Type> cond(const ShapeContext &ctx) { return outputTypes(ctx.callee("true_fn")); }

std::vector<Type> whileLoop(const ShapeContext &ctx) {
  return outputTypes(ctx.callee("body_fn"));
}

constexpr ShapeEntry kEntries[] = {
    {ops::higher_order_cond, cond},
    {ops::higher_order_while_loop, whileLoop},
};

} // namespace

void registerControlFlowShapes(ShapeRegistry &r) { r.add(kEntries); }

} // namespace gc
