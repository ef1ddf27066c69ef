//===- DCE.cpp - Dead code elimination ------------------------------------===//
//
// A node is live if a graph output or a live node uses one of its results,
// if it writes an argument in place, or if it returns nothing (a check).
// Everything else goes. The constant program's outputs live while a graph
// reads their weights.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "gc/IR/OpSchema.h"
#include "gc/Ops/GraphBuilder.h"
#include "gc/Transforms/Passes.h"

#include <unordered_set>

namespace gc {

namespace {

/// An op that writes in place, or one that returns nothing: it runs only
/// for the check it makes (_assert_scalar, sym_constrain_range), which must
/// not be dropped.
bool hasSideEffects(const Node &n) {
  return writesInPlace(n.op()) || opSchema(n.op()).returns.empty();
}

class DCEPass : public Pass {
public:
  std::string_view name() const override { return "dce"; }

  Error run(Module &m) override {
    GC_RETURN_IF_ERROR(pruneConstantProgram(m, statistics()));
    for (const auto &g : m.graphs()) {
      std::unordered_set<const Value *> live(g->outputs().begin(), g->outputs().end());
      std::unordered_set<const Node *> liveNodes;
      for (auto it = g->nodes().rbegin(); it != g->nodes().rend(); ++it) {
        const Node &n = **it;
        bool used = hasSideEffects(n);
        for (const Value *r : n.results())
          used |= live.count(r) > 0;
        if (!used)
          continue;
        liveNodes.insert(&n);
        for (const NamedArg &a : n.args())
          live.insert(a.value.values.begin(), a.value.values.end());
      }
      if (liveNodes.size() == g->nodes().size())
        continue;
      statistics()["nodes removed"] += g->nodes().size() - liveNodes.size();
      GC_RETURN_IF_ERROR(rewriteGraph(m, *g, [&](RewriteContext &ctx) {
        return liveNodes.count(&ctx.node())
                   ? std::nullopt
                   : std::optional(std::vector<Value *>(ctx.node().results().size(), nullptr));
      }));
    }
    return Error::success();
  }
};

} // namespace

std::unique_ptr<Pass> createDCEPass() { return std::make_unique<DCEPass>(); }

} // namespace gc
