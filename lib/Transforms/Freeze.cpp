//===- Freeze.cpp - Parameters and buffers become constants ---------------===//
//
// For inference: a parameter or buffer that no graph output mutates keeps
// its value for the model's life, so it becomes a constant (same target,
// same weight), which constant folding and the conv/batch-norm fold may
// then compute with. Mutated buffers (a buffer_mutation or
// parameter_mutation output names them, as functionalize records) stay.
// Run after functionalize: before it, an in-place op could still write one.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"

#include "gc/Transforms/Passes.h"

namespace gc {

namespace {

class FreezePass : public Pass {
public:
  std::string_view name() const override { return "freeze"; }

  Error run(Module &m) override {
    GC_RETURN_IF_ERROR(requireFunctional(m, name()));
    std::unordered_set<std::string> mutated;
    for (const auto &g : m.graphs())
      for (const OutputSpec &s : g->outputSpecs())
        if (s.kind == OutputKind::BufferMutation || s.kind == OutputKind::ParameterMutation)
          mutated.insert(s.target);
    for (const auto &g : m.graphs()) {
      GraphEdit edit;
      bool changed = false;
      for (const InputSpec &s : g->inputSpecs()) {
        InputSpec spec = s;
        if ((s.kind == InputKind::Parameter || s.kind == InputKind::Buffer) &&
            !mutated.count(s.target)) {
          ++statistics()[s.kind == InputKind::Parameter ? "parameters frozen" : "buffers frozen"];
          spec = InputSpec{InputKind::Constant, s.target};
          changed = true;
        }
        edit.specs.push_back(spec);
      }
      if (changed)
        GC_RETURN_IF_ERROR(rebuildGraph(m, *g, edit));
    }
    return Error::success();
  }
};

} // namespace

std::unique_ptr<Pass> createFreezePass() { return std::make_unique<FreezePass>(); }

} // namespace gc
