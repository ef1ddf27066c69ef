//===- PartitionMain.cpp - The gc-partition driver ------------------------===//
#include "gc/Tools/PartitionMain.h"

#include "gc/Partition/Partition.h"
#include "gc/Tools/ToolSupport.h"

#include <iostream>

namespace gc {

int partitionMain(int argc, char **argv) {
  const std::string tool = "gc-partition";
  CLI::App app("Split a joint graph (gc-opt --joint) into a forward and a backward graph, "
               "choosing what the forward saves for the backward",
               tool);
  std::string input;
  OutputOptions output;
  std::string strategyName = "min-cut";
  bool report = false;
  app.add_option("input", input, "Joint graph file, binary or text ('-' for stdin)");
  output.addTo(app);
  app.add_option("--partition", strategyName,
                 "What to save: min-cut (the fewest bytes, recomputing the rest) or save-all "
                 "(every forward value the backward reads)")
      ->check(CLI::IsMember({"min-cut", "save-all"}));
  app.add_flag("--report", report,
               "Print the saved values' count and bytes under both partitions to stderr");
  int exitCode = 0;
  if (!parseCommandLine(app, argc, argv, exitCode))
    return exitCode;
  if (input.empty())
    return reportError(tool, makeError() << "no input file");
  PartitionStrategy strategy = *parsePartitionStrategy(strategyName);

  Expected<std::unique_ptr<Module>> m = readModuleFile(input);
  if (!m)
    return reportError(tool, m.error());
  std::vector<std::string> deps = moduleDependencies(input, **m);
  if ((*m)->level() != Level::Joint || !(*m)->graph("joint"))
    return reportError(tool, makeError() << "'" << input
                                         << "': expected a module of level joint with a graph "
                                            "@joint (gc-opt --joint)");
  const Graph &joint = *(*m)->graph("joint");
  if (report)
    for (PartitionStrategy s : {PartitionStrategy::SaveAll, PartitionStrategy::MinCut}) {
      Expected<PartitionPlan> plan = planPartition(**m, joint, s);
      if (!plan)
        return reportError(tool, plan.error().withContext("'" + input + "'"));
      std::cerr << "@" << joint.name() << " " << partitionStrategyName(s) << ": "
                << plan->saved.size() << " saved values, " << plan->savedBytes << " bytes\n";
    }
  Expected<PartitionPlan> plan = planPartition(**m, joint, strategy);
  if (!plan)
    return reportError(tool, plan.error().withContext("'" + input + "'"));
  if (Error e = applyPartition(**m, *plan))
    return reportError(tool, e.withContext("'" + input + "'"));
  if (Error e = writeModuleFile(**m, output.path, output.format))
    return reportError(tool, e);
  if (Error e = output.writeDepfile(deps))
    return reportError(tool, e);
  return 0;
}

} // namespace gc
