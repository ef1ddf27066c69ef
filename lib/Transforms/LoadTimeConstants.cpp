//===- LoadTimeConstants.cpp - Folds computed when the package loads ------===//
//
// With external weights (gc-compile --freeze --weights=external) a package
// maps its weights from the archive, and what freezing derives from them
// (a batch norm folded into a convolution's weight, a cast or transpose of
// a weight) must follow the archive it is loaded with. This pass gives the
// module a weight source of kind Program; from then on constant-fold,
// fold-conv-bn and fold-linear-bias move the nodes they fold into the graph
// @constant_program instead of evaluating them: its inputs are the weights
// they read, its outputs the new constants, each one a weight of that
// source. Decisions stay the same as without it, so the model's graph is
// the one an embedded package gets. libgcrt runs the program when the
// package is loaded and again when its weights are swapped.
// Run after freeze, before the folds.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"

#include "gc/Transforms/Passes.h"

#include <algorithm>

namespace gc {

namespace {

class LoadTimeConstantsPass : public Pass {
public:
  std::string_view name() const override { return "load-time-constants"; }

  Error run(Module &m) override {
    auto &sources = m.weightSources();
    if (std::none_of(sources.begin(), sources.end(), [](const WeightSource &s) {
          return s.kind == WeightSource::Kind::Program;
        }))
      sources.push_back({WeightSource::Kind::Program, ""});
    return Error::success();
  }
};

} // namespace

std::unique_ptr<Pass> createLoadTimeConstantsPass() {
  return std::make_unique<LoadTimeConstantsPass>();
}

} // namespace gc
