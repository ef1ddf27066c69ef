//===- BackendMain.cpp - The gc-lower and gc-codegen drivers --------------===//
#include "gc/Tools/BackendMain.h"

#include "gc/Backend/Codegen.h"
#include "gc/Support/FileSystem.h"
#include "gc/Tools/ToolSupport.h"

#include <iostream>

namespace gc {

namespace {

/// What both drivers share: input, output, pass-manager flags.
struct StageCommandLine {
  std::string input;
  OutputOptions output;
  PassManagerFlags passManager;

  void addTo(CLI::App &app, bool offerLLVM) {
    app.add_option("input", input, "Graph file, binary or text ('-' for stdin)");
    output.addTo(app, offerLLVM);
    passManager.addTo(app, "List the passes this tool runs and exit");
  }

  /// Runs `passes` over the input and writes the result; returns the exit code.
  int run(const std::string &tool, std::vector<std::unique_ptr<Pass>> passes,
          const std::function<Error(Module &)> &writeResult) {
    if (passManager.listPasses) {
      for (const auto &p : passes)
        for (std::span<const PassInfo> infos : {registeredPasses(), backendPasses()})
          for (const PassInfo &info : infos)
            if (info.name == p->name())
              std::cout << info.name << " - " << info.summary << "\n";
      return 0;
    }
    if (input.empty())
      return reportError(tool, makeError() << "no input file");
    if (Error e = passManager.resolvePrintAfter([&](std::string_view name) {
          for (const auto &p : passes)
            if (p->name() == name)
              return true;
          return false;
        }))
      return reportError(tool, e);
    Expected<std::unique_ptr<Module>> m = readModuleFile(input);
    if (!m)
      return reportError(tool, m.error());
    std::vector<std::string> deps = moduleDependencies(input, **m);
    PassManager manager(passManager.options, std::cerr);
    for (auto &p : passes)
      manager.add(std::move(p));
    if (Error e = manager.run(**m))
      return reportError(tool, e.withContext("'" + input + "'"));
    if (Error e = writeResult(**m))
      return reportError(tool, e);
    if (Error e = output.writeDepfile(deps))
      return reportError(tool, e);
    return 0;
  }
};

} // namespace

int lowerMain(int argc, char **argv) {
  const std::string tool = "gc-lower";
  CLI::App app("Lower core graphs to loop IR: buffers, pointwise and reduction loops, extern "
               "calls",
               tool);
  StageCommandLine cl;
  cl.addTo(app, /*offerLLVM=*/false);
  LowerOptions options;
  app.add_flag("--no-fallback", options.noFallback,
               "An op without a lowering is an error instead of a reference-kernel call");
  int exitCode = 0;
  if (!parseCommandLine(app, argc, argv, exitCode))
    return exitCode;
  LowerReport report;
  return cl.run(tool, lowerPipeline(options, report), [&](Module &m) -> Error {
    for (const std::string &f : report.fallbacks)
      std::cerr << tool << ": warning: " << f << " has no lowering; it runs its reference kernel\n";
    return writeModuleFile(m, cl.output.path, cl.output.format);
  });
}

int codegenMain(int argc, char **argv) {
  const std::string tool = "gc-codegen";
  CLI::App app("Schedule and fuse loop graphs into kernels, plan their memory and compile the "
               "kernels with LLVM",
               tool);
  StageCommandLine cl;
  cl.addTo(app, /*offerLLVM=*/true);
  CodegenOptions options;
  app.add_option("--target", options.emit.target, "CPU target")
      ->check(CLI::IsMember(std::vector<std::string>(cpuTargetNames().begin(),
                                                     cpuTargetNames().end())))
      ->default_val(options.emit.target);
  app.add_flag("!--no-fuse", options.schedule.fuse, "One kernel per loop node");
  app.add_flag("!--no-extern-post-ops", options.schedule.externPostOps,
               "Do not fold bias, activations and adds into matmul and convolution calls");
  app.add_flag("!--no-cache", options.useCache,
               "Do not read or write the object cache ($GC_CACHE_DIR, default ~/.cache/gc)");
  int exitCode = 0;
  if (!parseCommandLine(app, argc, argv, exitCode))
    return exitCode;
  std::string llvmIR;
  if (cl.output.llvm)
    options.emit.optimizedLLVMIR = &llvmIR;
  return cl.run(tool, codegenPipeline(options), [&](Module &m) -> Error {
    if (!cl.output.llvm)
      return writeModuleFile(m, cl.output.path, cl.output.format);
    if (cl.output.path == "-") {
      std::cout << llvmIR;
      return Error::success();
    }
    return writeFileAtomic(cl.output.path, llvmIR);
  });
}

} // namespace gc
