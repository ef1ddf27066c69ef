//===- Random.cpp - How many random numbers a graph draws -----------------===//
#include "gc/IR/Random.h"

namespace gc {

namespace {

/// The elements of a gc.rand result of type `t`; `where` names the node.
Expected<int64_t> drawsOf(const TensorType &t, const std::string &where) {
  int64_t n = 1;
  for (const SymExpr *s : t.sizes) {
    if (!s->isConst())
      return makeError() << where << ": gc.rand has the symbolic size " << s->str()
                         << "; the numbers a run draws must be a static count";
    n *= s->constant();
  }
  return n;
}

} // namespace

Expected<int64_t> randomDraws(const Graph &g) {
  int64_t total = 0;
  for (const auto &node : g.nodes()) {
    if (node->op() != ops::gc_rand_default)
      continue;
    Expected<int64_t> n =
        drawsOf(node->results()[0]->type().tensor,
                "graph @" + g.name() + ": node %" + node->results()[0]->name());
    if (!n)
      return n.error();
    total += *n;
  }
  return total;
}

Expected<int64_t> randomDraws(const LoopGraph &g) {
  int64_t total = 0;
  for (const LoopNode &node : g.nodes) {
    if (node.op != ops::gc_rand_default || node.kind != LoopNode::Kind::Fallback)
      continue;
    Expected<int64_t> n = drawsOf(node.outputs[0].type, "graph @" + g.name + ": node '" +
                                                            node.name + "'");
    if (!n)
      return n.error();
    total += *n;
  }
  return total;
}

} // namespace gc
