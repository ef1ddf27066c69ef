//===- BackendMain.cpp - The gc-lower and gc-codegen drivers --------------===//
#include "gc/Tools/BackendMain.h"

#include "gc/Support/FileSystem.h"
#include "gc/Support/Target.h"
#include "gc/Tools/ToolSupport.h"

#include <algorithm>
#include <iostream>

namespace gc {

int lowerMain(int argc, char **argv) {
  const std::string tool = "gc-lower";
  CLI::App app("Lower core graphs to loop IR: buffers, pointwise and reduction loops, extern "
               "calls",
               tool);
  StageTool stage;
  stage.addTo(app);
  PipelineOptions options;
  constexpr Phase kPhases[] = {Phase::Lower};
  addPipelineFlags(app, options, kPhases);
  int exitCode = 0;
  if (!parseCommandLine(app, argc, argv, exitCode))
    return exitCode;
  registerAllPasses();
  return stage.run(tool, kPhases, options);
}

int codegenMain(int argc, char **argv) {
  const std::string tool = "gc-codegen";
  CLI::App app("Schedule and fuse loop graphs into kernels, plan their memory and compile the "
               "kernels with LLVM",
               tool);
  StageTool stage;
  stage.addTo(app, /*offerLLVM=*/true);
  PipelineOptions options;
  constexpr Phase kPhases[] = {Phase::Codegen};
  addPipelineFlags(app, options, kPhases);
  app.add_flag("!--no-cache", options.codegen.useCache,
               "Do not read or write the object cache ($GC_CACHE_DIR, default ~/.cache/gc)");
  int exitCode = 0;
  if (!parseCommandLine(app, argc, argv, exitCode))
    return exitCode;
  registerAllPasses();
  // --emit=llvm and --emit=ptx write what the kernel emitter hands back
  // instead of the module.
  std::string code;
  StageTool::Hooks hooks;
  if (stage.output.llvm)
    options.codegen.emit.optimizedLLVMIR = &code;
  if (stage.output.ptx)
    options.codegen.emit.ptx = &code;
  if (stage.output.llvm || stage.output.ptx) {
    hooks.write = [&](Module &m) -> Error {
      if (stage.output.ptx && std::none_of(m.loopGraphs().begin(), m.loopGraphs().end(),
                                           [](const auto &g) {
                                             return targetDevice(g->plan.target) ==
                                                    TargetDevice::CUDA;
                                           }))
        return makeError() << "--emit=ptx needs kernels for a GPU (--device cuda)";
      if (stage.output.path == "-") {
        std::cout << code;
        return Error::success();
      }
      return writeFileAtomic(stage.output.path, code);
    };
  }
  return stage.run(tool, kPhases, options, hooks);
}

} // namespace gc
