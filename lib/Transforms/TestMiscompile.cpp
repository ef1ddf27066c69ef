//===- TestMiscompile.cpp - A deliberate miscompile for gc's tests ---------===//
//
// test-miscompile{op=A,with=B} calls op B wherever the graph calls op A: a
// wrong answer with a valid module, which gc-reduce's tests shrink against
// the reference interpreter. The two ops must take the same arguments
// (aten.add.Tensor and aten.sub.Tensor do), so the module stays valid. It is
// a test-only pass: left out of --list-passes and docs/passes.md.
//
//===----------------------------------------------------------------------===//
#include "gc/Transforms/Passes.h"

#include <optional>

namespace gc {

namespace {

/// The argument list of a schema, "(Tensor self, ...)", without the results.
std::string_view schemaArguments(OpId op) {
  std::string_view s = opDef(op).schema;
  return s.substr(0, s.find("->"));
}

class TestMiscompilePass : public Pass {
public:
  std::string_view name() const override { return "test-miscompile"; }

  Error setOptions(std::string_view options) override {
    while (!options.empty()) {
      std::string_view item = options.substr(0, options.find(','));
      options.remove_prefix(std::min(options.size(), item.size() + 1));
      size_t eq = item.find('=');
      std::string_view key = item.substr(0, eq);
      if (eq == std::string_view::npos || (key != "op" && key != "with"))
        return makeError() << "test-miscompile: unknown option '" << item
                           << "'; it takes op=NAME,with=NAME";
      std::optional<OpId> op = lookupOp(item.substr(eq + 1));
      if (!op)
        return makeError() << "test-miscompile: unknown op '" << item.substr(eq + 1) << "'";
      (key == "op" ? from_ : to_) = *op;
    }
    if (!from_ || !to_)
      return makeError() << "test-miscompile needs both op=NAME and with=NAME";
    if (schemaArguments(*from_) != schemaArguments(*to_))
      return makeError() << "test-miscompile: " << *from_ << " and " << *to_
                         << " take different arguments";
    return Error::success();
  }

  Error run(Module &m) override {
    if (!from_)
      return makeError() << "test-miscompile needs its options: test-miscompile{op=A,with=B}";
    for (const auto &g : m.graphs())
      for (const auto &n : g->nodes())
        if (n->op() == *from_) {
          n->setOp(*to_);
          ++statistics()["nodes miscompiled"];
        }
    return Error::success();
  }

private:
  std::optional<OpId> from_, to_;
};

} // namespace

std::unique_ptr<Pass> createTestMiscompilePass() { return std::make_unique<TestMiscompilePass>(); }

} // namespace gc
