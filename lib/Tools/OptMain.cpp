//===- OptMain.cpp - The gc-opt driver ------------------------------------===//
#include "gc/Tools/OptMain.h"

#include "gc/Autodiff/Autodiff.h"
#include "gc/IR/OpStats.h"
#include "gc/Pass/Pass.h"
#include "gc/Tools/ToolSupport.h"
#include "gc/Transforms/Pipelines.h"

#include <iostream>

namespace gc {

int optMain(int argc, char **argv) {
  const std::string tool = "gc-opt";
  CLI::App app("Optimize a gc graph file: by default, an aten graph becomes a functional "
               "graph of core ops",
               tool);
  std::string input;
  OutputOptions output;
  std::optional<std::string> passes;
  PassManagerFlags passManager;
  CorePipelineOptions core;
  bool joint = false;
  JointOptions jointOptions;
  bool opStats = false;
  app.add_option("input", input, "Graph file, binary or text ('-' for stdin)");
  output.addTo(app);
  // expected(0, 1): "--passes=" (run nothing) must not swallow the next
  // argument as its value.
  app.add_option("--passes", passes,
                 "Comma-separated passes to run instead of the default pipeline ('' runs none)")
      ->expected(0, 1);
  addCorePipelineFlags(app, core, "Default pipeline: ");
  app.add_flag("--joint", joint,
               "Training: after the passes, build the joint forward and backward graph");
  app.add_flag("--grad-inputs", jointOptions.gradUserInputs,
               "With --joint: also return gradients for the floating user inputs");
  passManager.addTo(app, "List the passes and exit");
  app.add_flag("--op-stats", opStats, "Print how often each op occurs in the result to stderr");
  int exitCode = 0;
  if (!parseCommandLine(app, argc, argv, exitCode))
    return exitCode;
  if (passManager.listPasses) {
    for (const PassInfo &p : registeredPasses())
      std::cout << p.name << " - " << p.summary << "\n";
    return 0;
  }
  if (input.empty())
    return reportError(tool, makeError() << "no input file");
  if (Error e = passManager.resolvePrintAfter([](std::string_view name) {
        for (const PassInfo &p : registeredPasses())
          if (p.name == name)
            return true;
        return false;
      }))
    return reportError(tool, e);

  Expected<std::vector<std::unique_ptr<Pass>>> pipeline =
      parsePassPipeline(passes ? *passes : corePipeline(core));
  if (!pipeline)
    return reportError(tool, pipeline.error());
  Expected<std::unique_ptr<Module>> m = readModuleFile(input);
  if (!m)
    return reportError(tool, m.error());
  std::vector<std::string> deps = moduleDependencies(input, **m);
  PassManager manager(passManager.options, std::cerr);
  for (auto &p : *pipeline)
    manager.add(std::move(p));
  if (Error e = manager.run(**m))
    return reportError(tool, e.withContext("'" + input + "'"));
  if (joint) {
    if (Error e = buildJointModule(**m, jointOptions))
      return reportError(tool, e.withContext("'" + input + "'"));
    Expected<std::vector<std::unique_ptr<Pass>>> jointPasses = parsePassPipeline(jointPipeline());
    if (!jointPasses)
      return reportError(tool, jointPasses.error());
    PassManager jointManager(passManager.options, std::cerr);
    for (auto &p : *jointPasses)
      jointManager.add(std::move(p));
    if (Error e = jointManager.run(**m))
      return reportError(tool, e.withContext("'" + input + "'"));
  }
  if (Error e = writeModuleFile(**m, output.path, output.format))
    return reportError(tool, e);
  if (Error e = output.writeDepfile(deps))
    return reportError(tool, e);
  if (opStats)
    for (const auto &[op, count] : countOps(**m))
      std::cerr << count << " " << op << "\n";
  return 0;
}

} // namespace gc
