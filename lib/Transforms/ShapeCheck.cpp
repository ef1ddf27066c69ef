//===- ShapeCheck.cpp - Inferred types against recorded ones --------------===//
//
// Runs every node's shape function and compares the result with the type
// the graph records (for an imported graph, what torch.export computed).
// dtype and sizes must agree; strides that differ are counted, since gc's
// layouts are allowed to differ from torch's where nothing observes them.
//
//===----------------------------------------------------------------------===//
#include "gc/IR/Printer.h"
#include "gc/Ops/ShapeInference.h"
#include "gc/Transforms/Passes.h"

namespace gc {

namespace {

class ShapeCheckPass : public Pass {
public:
  std::string_view name() const override { return "shape-check"; }

  Error run(Module &m) override {
    for (const auto &g : m.graphs())
      for (const auto &n : g->nodes()) {
        std::string where = "graph @" + g->name() + ", node " +
                            (n->results().empty() ? "" : "%" + n->results()[0]->name() + " ") +
                            "(" + opString(n->op()) + ")";
        Expected<std::vector<Type>> types = inferResultTypes(n->op(), n->args(), m.syms(), &m);
        if (!types)
          return types.error().withContext(where);
        if (types->size() != n->results().size())
          return makeError() << where << ": inferred " << types->size() << " results, the graph has "
                             << n->results().size();
        for (size_t i = 0; i < types->size(); ++i) {
          const Type &want = n->results()[i]->type();
          const Type &got = (*types)[i];
          bool same = want.kind == got.kind;
          if (same && want.isTensor())
            same = want.tensor.dtype == got.tensor.dtype && want.tensor.sizes == got.tensor.sizes;
          if (!same)
            return makeError() << where << ": inferred " << printType(got) << " for %"
                               << n->results()[i]->name() << ", the graph records "
                               << printType(want);
          if (want.isTensor() && want.tensor.strides != got.tensor.strides)
            ++statistics()["results with other strides than recorded"];
          ++statistics()["results checked"];
        }
      }
    return Error::success();
  }
};

} // namespace

std::unique_ptr<Pass> createShapeCheckPass() { return std::make_unique<ShapeCheckPass>(); }

} // namespace gc
