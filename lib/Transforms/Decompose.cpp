//===- Decompose.cpp - Down to the core op set ----------------------------===//
//
// Rewrites every op outside the core set through its decomposition. A rule
// may produce ops that are themselves decomposed, so the rewrite repeats
// until only core ops are left (or a bound is hit, which means two rules
// feed each other). The module's level becomes core. The keeping variant
// (decompose-keep-whole, which inference pipelines run) keeps the calls the
// backend of the module's target device runs whole (gc/IR/ExternOps.h:
// fused attention, on the CPU and on GPUs).
//
// torch.export records sizes for every result, and for a result nothing
// reads they can disagree with what the op computes (a one-layer batch-first
// LSTM's unused h_n). Such a result takes the type its op's shape rule
// gives, with a warning naming the node; a result that is read keeps its
// recorded type, and a decomposition that disagrees with it is an error.
//
//===----------------------------------------------------------------------===//
#include "gc/IR/ExternOps.h"
#include "gc/IR/OpSchema.h"
#include "gc/IR/TargetOf.h"
#include "gc/Ops/Decompositions.h"
#include "gc/IR/Printer.h"
#include "gc/Ops/ShapeInference.h"
#include "gc/Transforms/Passes.h"

#include "gc/IR/Describe.h"
#include "PassUtils.h"

namespace gc {

namespace {

constexpr int kMaxRounds = 16;

/// Gives each result of `g` that nothing reads the type its shape rule
/// infers where the recorded sizes disagree; returns a warning per change.
std::vector<std::string> trustRulesForUnreadResults(Module &m, Graph &g) {
  std::vector<std::string> warnings;
  std::unordered_map<const Value *, int> uses = countUses(g);
  for (const auto &n : g.nodes()) {
    bool unread = false;
    for (const Value *r : n->results())
      unread |= r->type().isTensor() && uses[r] == 0;
    if (!unread)
      continue;
    Expected<std::vector<Type>> types = inferResultTypes(n->op(), n->args(), m.syms(), &m);
    if (!types || types->size() != n->results().size())
      continue; // the decomposition, which must give the recorded types, decides
    for (size_t i = 0; i < types->size(); ++i) {
      Value *r = n->results()[i];
      const Type &rule = (*types)[i];
      if (uses[r] != 0 || !r->type().isTensor() || !rule.isTensor() ||
          rule.tensor.sizes == r->type().tensor.sizes)
        continue;
      warnings.push_back("graph @" + g.name() + ", " + describeNode(*n) + ": %" + r->name() + " is recorded as " +
                         printType(r->type()) + ", but " + opString(n->op()) + " gives " +
                         printType(rule) + "; nothing reads it, so gc takes the op's");
      r->type() = rule;
    }
  }
  return warnings;
}

class DecomposePass : public Pass {
public:
  explicit DecomposePass(bool keepsWhole) : keepsWhole_(keepsWhole) {}
  std::string_view name() const override {
    return keepsWhole_ ? "decompose-keep-whole" : "decompose";
  }

  Error run(Module &m) override {
    const DecompositionRegistry &rules = decompositions();
    device_ = targetOf(m).device;
    for (const auto &g : m.graphs()) {
      for (std::string &w : trustRulesForUnreadResults(m, *g))
        warnings().push_back(std::move(w));
      for (int round = 0;; ++round) {
        bool allCore = true;
        for (const auto &n : g->nodes())
          allCore &= keeps(*n) || (isCoreOp(n->op()) && (round > 0 || !rules.find(n->op())));
        if (allCore)
          break;
        if (round == kMaxRounds)
          return makeError() << "graph @" << g->name() << ": decompositions did not reach the "
                             << "core op set after " << kMaxRounds << " rounds";
        Graph &current = *m.graph(g->name());
        GC_RETURN_IF_ERROR(rewriteGraph(m, current, [&](RewriteContext &ctx) {
          OpId op = ctx.node().op();
          if (keeps(ctx.node()))
            return std::optional<std::vector<Value *>>();
          const DecompositionEntry *rule = rules.find(op);
          // A core op stays, unless its inputs changed so that the call no
          // longer holds (a view of what is now a non-viewable layout); then
          // its own rule legalizes it.
          if (isCoreOp(op) && (!rule || inferResultTypes(op, ctx.mappedArgs(), m.syms())))
            return std::optional<std::vector<Value *>>();
          if (!rule)
            rewriteFail("no decomposition of " + opString(op) + " to the core op set");
          std::optional<std::vector<Value *>> r = rule->fn(ctx);
          if (!r)
            rewriteFail("the decomposition of " + opString(op) + " does not handle this call");
          ++statistics()["ops decomposed"];
          return r;
        }));
      }
    }
    m.setLevel(Level::Core);
    return Error::success();
  }

private:
  bool keeps(const Node &n) const { return keepsWhole_ && runsWhole(n, device_); }

  bool keepsWhole_;
  TargetDevice device_ = TargetDevice::CPU;
};

} // namespace

std::unique_ptr<Pass> createDecomposePass() { return std::make_unique<DecomposePass>(false); }
std::unique_ptr<Pass> createDecomposeKeepWholePass() {
  return std::make_unique<DecomposePass>(true);
}

} // namespace gc
