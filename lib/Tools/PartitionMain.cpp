//===- PartitionMain.cpp - The gc-partition driver ------------------------===//
#include "gc/Tools/PartitionMain.h"

#include "gc/Tools/ToolSupport.h"

#include <iostream>

namespace gc {

namespace {

/// --report: the saved values' count and bytes under both strategies.
Error reportPartitions(const Module &m) {
  const Graph *joint = m.graph("joint");
  if (m.level() != Level::Joint || !joint)
    return makeError() << "expected a module of level joint with a graph @joint (gc-opt --joint)";
  for (PartitionStrategy s : {PartitionStrategy::SaveAll, PartitionStrategy::MinCut}) {
    Expected<PartitionPlan> plan = planPartition(m, *joint, s);
    if (!plan)
      return plan.error();
    std::cerr << "@" << joint->name() << " " << partitionStrategyName(s) << ": "
              << plan->saved.size() << " saved values, " << plan->savedBytes << " bytes\n";
  }
  return Error::success();
}

} // namespace

int partitionMain(int argc, char **argv) {
  const std::string tool = "gc-partition";
  CLI::App app("Split a joint graph (gc-opt --joint) into a forward and a backward graph, "
               "choosing what the forward saves for the backward",
               tool);
  StageTool stage;
  stage.addTo(app);
  PipelineOptions options;
  constexpr Phase kPhases[] = {Phase::Partition};
  addPipelineFlags(app, options, kPhases);
  bool report = false;
  app.add_flag("--report", report,
               "Print the saved values' count and bytes under both partitions to stderr");
  int exitCode = 0;
  if (!parseCommandLine(app, argc, argv, exitCode))
    return exitCode;
  registerAllPasses();
  StageTool::Hooks hooks;
  if (report)
    hooks.before = reportPartitions;
  return stage.run(tool, kPhases, options, hooks);
}

} // namespace gc
