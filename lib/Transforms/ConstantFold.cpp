//===- ConstantFold.cpp - Evaluating nodes on constants at compile time ---===//
//
// A node whose tensor arguments are all constants (weights the module holds:
// inputs of kind constant, as freeze makes them) is evaluated once, here,
// with the reference kernels, and its result becomes a new constant. Nodes
// without tensor arguments (full, arange) fold too. Only small results fold
// (at most kMaxFoldBytes each), so the module does not grow by much: a
// folded view of a large weight would copy it.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"

#include "gc/Transforms/Passes.h"

namespace gc {

namespace {

constexpr int64_t kMaxFoldBytes = int64_t(1) << 20;

class ConstantFoldPass : public Pass {
public:
  std::string_view name() const override { return "constant-fold"; }

  Error run(Module &m) override {
    GC_RETURN_IF_ERROR(requireFunctional(m, name()));
    auto small = [](const Node &n) {
      for (const Value *r : n.results())
        if (staticBytes(r->type().tensor).value_or(kMaxFoldBytes + 1) > kMaxFoldBytes)
          return false;
      return true;
    };
    // By index: a fold may add the constant program's graph.
    for (size_t i = 0; i < m.graphs().size(); ++i)
      GC_RETURN_IF_ERROR(foldConstants(m, *m.graphs()[i], small, statistics()));
    return Error::success();
  }
};

} // namespace

std::unique_ptr<Pass> createConstantFoldPass() { return std::make_unique<ConstantFoldPass>(); }

} // namespace gc
