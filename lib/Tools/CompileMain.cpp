//===- CompileMain.cpp - The gc-compile driver ----------------------------===//
#include "gc/Tools/CompileMain.h"

#include "gc/Backend/Compile.h"
#include "gc/Support/FileSystem.h"
#include "gc/Tools/ToolSupport.h"

#include <filesystem>
#include <iostream>

namespace gc {

int compileMain(int argc, char **argv) {
  const std::string tool = "gc-compile";
  CLI::App app("Compile a torch.export archive (.pt2) into a package: gc-import, gc-opt, "
               "gc-lower, gc-codegen and gc-package in one process, with the same result",
               tool);
  std::string input;
  OutputOptions output;
  CompileOptions options;
  std::string compileTo = "package";
  std::string emitStage;
  bool timePasses = false;
  app.add_option("input", input, "The .pt2 archive")->required();
  output.addTo(app);
  app.add_option("--model", options.modelName, "Which models/<name>.json to read")
      ->default_val(options.modelName);
  app.add_option("--compile-to", compileTo,
                 "Stop after this level and write its graph file: aten, core, loops, kernels, "
                 "or package (the default)")
      ->check(CLI::IsMember({"aten", "core", "loops", "kernels", "package"}));
  app.add_option("--emit-stage", emitStage,
                 "Keep the stages' graph files in DIR as <stem>.<level>.gc, <stem> being the "
                 "output's name without its extension")
      ->type_name("DIR");
  // expected(0, 1): "--passes=" (run nothing) must not swallow the next
  // argument as its value.
  app.add_option("--passes", options.passes,
                 "gc-opt: comma-separated passes to run instead of the core pipeline")
      ->expected(0, 1);
  addCorePipelineFlags(app, options.core, "gc-opt: ");
  app.add_flag("--no-fallback", options.lower.noFallback,
               "gc-lower: an op without a lowering is an error instead of a reference-kernel "
               "call");
  app.add_option("--target", options.codegen.emit.target, "gc-codegen: CPU target")
      ->check(CLI::IsMember(std::vector<std::string>(cpuTargetNames().begin(),
                                                     cpuTargetNames().end())))
      ->default_val(options.codegen.emit.target);
  app.add_flag("!--no-fuse", options.codegen.schedule.fuse, "gc-codegen: one kernel per loop node");
  app.add_flag("!--no-extern-post-ops", options.codegen.schedule.externPostOps,
               "gc-codegen: do not fold bias, activations and adds into matmul and convolution "
               "calls");
  app.add_option("--linker", options.package.linker,
                 "gc-package: the ld-compatible linker that makes the kernels' shared libraries")
      ->default_val(options.package.linker);
  app.add_flag("!--no-cache", options.useCache,
               "Do not read or write the compile and object caches ($GC_CACHE_DIR, default "
               "~/.cache/gc)");
  app.add_flag("--time-passes", timePasses,
               "Print the time of every stage's passes and steps to stderr");
  int exitCode = 0;
  if (!parseCommandLine(app, argc, argv, exitCode))
    return exitCode;

  options.last = *parseCompileTarget(compileTo);
  if (options.last == CompileStage::Package && output.format == FileFormat::Text)
    return reportError(tool, makeError() << "--emit=text needs a graph file output "
                                            "(--compile-to=LEVEL); a package has one form");
  std::filesystem::path named(output.path == "-" ? input : output.path);
  options.stem = named.stem().string();
  options.stageDir = output.path == "-" ? "." : parentDirectory(output.path);
  if (!emitStage.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(emitStage, ec);
    if (ec)
      return reportError(tool, makeError() << "cannot create '" << emitStage
                                           << "': " << ec.message());
    options.stageDir = emitStage;
    options.writeStages = true;
  }

  StepTimer timer;
  Expected<CompileResult> result = [&] {
    ProgressReporter progress(std::cerr, tool + ": " + input);
    std::vector<CompileObserver *> observers = {&progress};
    if (timePasses)
      observers.push_back(&timer);
    return compileModel(input, options, observers);
  }();
  if (!result)
    return reportError(tool, result.error());
  for (const std::string &f : result->fallbacks)
    std::cerr << tool << ": warning: " << f << " has no lowering; it runs its reference kernel\n";
  Error written = options.last == CompileStage::Package
                      ? writeFileAtomic(output.path, result->package)
                      : writeModuleFile(*result->module, output.path, output.format);
  if (written)
    return reportError(tool, written);
  if (Error e = output.writeDepfile({input}))
    return reportError(tool, e);
  if (timePasses)
    timer.print(std::cerr);
  return 0;
}

} // namespace gc
