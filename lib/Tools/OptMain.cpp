//===- OptMain.cpp - The gc-opt driver ------------------------------------===//
#include "gc/Tools/OptMain.h"

#include "gc/IR/OpStats.h"
#include "gc/Tools/ToolSupport.h"

#include <iostream>

namespace gc {

int optMain(int argc, char **argv) {
  const std::string tool = "gc-opt";
  CLI::App app("Optimize a gc graph file: by default, an aten graph becomes a functional "
               "graph of core ops",
               tool);
  StageTool stage;
  stage.addTo(app);
  PipelineOptions options;
  // expected(0, 1): "--passes=" (run nothing) must not swallow the next
  // argument as its value.
  app.add_option("--passes", options.passes,
                 "Comma-separated passes to run instead of the default pipeline ('' runs none)")
      ->expected(0, 1);
  constexpr Phase kPhases[] = {Phase::Opt, Phase::Joint};
  addPipelineFlags(app, options, kPhases);
  bool joint = false;
  app.add_flag("--joint", joint,
               "Training: after the passes, build the joint forward and backward graph");
  bool opStats = false;
  app.add_flag("--op-stats", opStats, "Print how often each op occurs in the result to stderr");
  int exitCode = 0;
  if (!parseCommandLine(app, argc, argv, exitCode))
    return exitCode;
  registerAllPasses();
  // Inference keeps the calls the CPU runs whole, as gc-compile does.
  options.core.keepWholeCalls = !joint;
  if (stage.passManager.listPasses) {
    for (const PassInfo &p : registeredPasses())
      if (!p.testOnly)
        std::cout << p.name << " - " << p.summary << "\n";
    return 0;
  }
  StageTool::Hooks hooks;
  hooks.write = [&](Module &m) -> Error {
    GC_RETURN_IF_ERROR(writeModuleFile(m, stage.output.path, stage.output.format));
    if (opStats)
      for (const auto &[op, count] : countOps(m))
        std::cerr << count << " " << op << "\n";
    return Error::success();
  };
  return stage.run(tool, std::span(kPhases).first(joint ? 2 : 1), options, hooks);
}

} // namespace gc
