//===- PartitionPass.cpp - The forward/backward split as a pass -----------===//
#include "gc/Partition/Partition.h"

namespace gc {

namespace {

class PartitionPass final : public Pass {
public:
  explicit PartitionPass(PartitionStrategy strategy) : strategy_(strategy) {}
  std::string_view name() const override { return "partition"; }
  Error run(Module &m) override {
    const Graph *joint = m.graph("joint");
    if (m.level() != Level::Joint || !joint)
      return makeError() << "partition reads a module of level joint with a graph @joint "
                            "(gc-opt --joint), not level "
                         << levelName(m.level());
    Expected<PartitionPlan> plan = planPartition(m, *joint, strategy_);
    if (!plan)
      return plan.error();
    statistics()["saved values"] += static_cast<int64_t>(plan->saved.size());
    statistics()["saved bytes"] += static_cast<int64_t>(plan->savedBytes);
    return applyPartition(m, *plan);
  }

private:
  PartitionStrategy strategy_;
};

std::unique_ptr<Pass> createDefaultPartitionPass() {
  return createPartitionPass(PartitionStrategy::MinCut);
}

constexpr PassInfo kPartitionPasses[] = {
    {"partition",
     "Split the joint graph into forward and backward graphs, saving a minimum-byte set of "
     "values (min-cut); the module becomes level partitioned",
     &createDefaultPartitionPass},
};

} // namespace

std::unique_ptr<Pass> createPartitionPass(PartitionStrategy strategy) {
  return std::make_unique<PartitionPass>(strategy);
}

void registerPartitionPasses() { registerPasses(kPartitionPasses); }

} // namespace gc
