//===- RecordAliases.cpp - Outputs that are views of inputs ---------------===//
//
// An output that is a graph input, or a view of one (through ops whose
// schema returns `Tensor(a)`, aliasing their first argument), shares the
// input's storage. The output spec records which input, so that a runtime
// can return a view of the caller's tensor instead of a copy, as
// AOTAutograd's runtime wrapper does. Mutation outputs are left alone: they
// are new values by construction.
//
//===----------------------------------------------------------------------===//
#include "gc/IR/OpSchema.h"
#include "gc/Transforms/Passes.h"

#include <unordered_map>

namespace gc {

namespace {

/// The graph input that `v` is or views, or null.
const Value *aliasedInput(const Value *v) {
  while (const Node *n = v->definingNode()) {
    if (n->resultForm() != ResultForm::Single || !returnsView(n->op()) || n->args().empty() ||
        n->args()[0].value.kind != ArgKind::Tensor)
      return nullptr;
    v = n->args()[0].value.values[0];
  }
  return v;
}

class RecordAliasesPass : public Pass {
public:
  std::string_view name() const override { return "record-aliases"; }

  Error run(Module &m) override {
    for (const auto &g : m.graphs())
      for (size_t i = 0; i < g->outputs().size(); ++i) {
        OutputSpec &spec = g->outputSpec(i);
        if (spec.kind != OutputKind::UserOutput && spec.kind != OutputKind::LossOutput)
          continue;
        const Value *input = aliasedInput(g->outputs()[i]);
        std::string alias = input ? input->name() : std::string();
        if (alias != spec.aliasOf)
          ++statistics()["aliasing outputs recorded"];
        spec.aliasOf = alias;
      }
    return Error::success();
  }
};

} // namespace

std::unique_ptr<Pass> createRecordAliasesPass() { return std::make_unique<RecordAliasesPass>(); }

} // namespace gc
