//===- CompileMain.cpp - The gc-compile driver ----------------------------===//
#include "gc/Tools/CompileMain.h"

#include "gc/Driver/Compile.h"
#include "gc/Driver/DebugDump.h"
#include "gc/Support/FileSystem.h"
#include "gc/Tools/ToolSupport.h"

#include <filesystem>
#include <iostream>
#include <optional>

namespace gc {

int compileMain(int argc, char **argv) {
  const std::string tool = "gc-compile";
  CLI::App app("Compile a torch.export archive (.pt2) into a package: gc-import, gc-opt, "
               "(for training gc-opt --joint and gc-partition,) gc-lower, gc-codegen and "
               "gc-package in one process, with the same result",
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
  // Each phase's result, named by its level (the package by its name).
  std::vector<std::string> targets;
  std::vector<Phase> all;
  for (const PhaseInfo &p : phaseInfos()) {
    targets.emplace_back(p.level ? levelName(*p.level) : p.name);
    all.push_back(p.phase);
  }
  app.add_option("--compile-to", compileTo,
                 "Stop after this level and write its graph file: aten, core, joint and "
                 "partitioned (with --train), loops, kernels, or package (the default)")
      ->check(CLI::IsMember(targets));
  app.add_option("--emit-stage", emitStage,
                 "Keep the stages' graph files in DIR as <stem>.<level>.gc, <stem> being the "
                 "output's name without its extension")
      ->type_name("DIR");
  std::string debugDump;
  app.add_option("--debug-dump", debugDump,
                 "Write a folder for a bug report to DIR: the command, every stage's graph "
                 "file and its text, the passes' times, the kernels' LLVM IR or PTX, the "
                 "warnings and the error (docs/debugging.md)")
      ->type_name("DIR");
  // expected(0, 1): "--passes=" (run nothing) must not swallow the next
  // argument as its value.
  app.add_option("--passes", options.pipeline.passes,
                 "gc-opt: comma-separated passes to run instead of the core pipeline")
      ->expected(0, 1);
  app.add_flag("--train", options.train,
               "Training: the package has a forward and a backward graph (gc-opt --joint, "
               "gc-partition)");
  addPipelineFlags(app, options.pipeline, all, "gc-compile");
  app.add_option("--linker", options.package.linker,
                 "gc-package: the ld-compatible linker that makes the kernels' shared libraries")
      ->default_val(options.package.linker);
  app.add_flag("!--no-cache", options.useCache,
               "Do not read or write the compile and object caches ($GC_CACHE_DIR, default "
               "~/.cache/gc)");
  app.add_flag("--time-passes", timePasses,
               "Print the time of every stage's passes and steps to stderr");
  TimeTraceFlag timeTrace;
  timeTrace.addTo(app);
  PluginFlag plugins;
  plugins.addTo(app);
  int exitCode = 0;
  if (!parseCommandLine(app, argc, argv, exitCode))
    return exitCode;
  registerAllPasses();

  options.plugins = plugins.paths;
  options.last = *phaseProducing(compileTo);
  options.package.outputDir = output.path == "-" ? "." : parentDirectory(output.path);
  options.packagePath = output.path;
  if (phaseInfo(options.last).training && !options.train)
    return reportError(tool, makeError() << "--compile-to=" << compileTo
                                         << " is a training level; add --train");
  if (options.last == Phase::Package && output.format == FileFormat::Text)
    return reportError(tool, makeError() << "--emit=text needs a graph file output "
                                            "(--compile-to=LEVEL); a package has one form");
  std::filesystem::path named(output.path == "-" ? input : output.path);
  options.stem = named.stem().string();
  options.stageDir = output.path == "-" ? "." : parentDirectory(output.path);
  if (!emitStage.empty() && !debugDump.empty())
    return reportError(tool, makeError() << "--debug-dump writes the stage files too: give "
                                            "--debug-dump or --emit-stage, not both");
  std::optional<DebugDump> dump;
  if (!debugDump.empty()) {
    Expected<DebugDump> made = DebugDump::create(debugDump, {argv, argv + argc});
    if (!made)
      return reportError(tool, made.error());
    dump.emplace(made.take());
    options.stageDir = debugDump;
    options.writeStages = true;
  } else if (!emitStage.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(emitStage, ec);
    if (ec)
      return reportError(tool, makeError() << "cannot create '" << emitStage
                                           << "': " << ec.message());
    options.stageDir = emitStage;
    options.writeStages = true;
  }

  TimeTrace *trace = timeTrace.trace();
  options.pipeline.codegen.emit.trace = trace;
  std::optional<TraceScope> whole(std::in_place, trace, tool, "tool");
  StepTimer timer;
  Expected<CompileResult> result = [&] {
    ProgressReporter progress(std::cerr, tool + ": " + input);
    std::vector<CompileObserver *> observers = {&progress};
    if (timePasses)
      observers.push_back(&timer);
    if (dump)
      observers.push_back(&*dump);
    std::optional<PhaseTracer> tracer;
    if (trace)
      observers.push_back(&tracer.emplace(*trace));
    return compileModel(input, options, observers);
  }();
  if (dump) {
    static const std::vector<std::string> kNone;
    Error written = dump->finish(options, result ? result->warnings : kNone,
                                 result ? nullptr : &result.error());
    if (written)
      return reportError(tool, written);
  }
  if (!result)
    return reportError(tool, result.error());
  for (const std::string &w : result->warnings)
    std::cerr << tool << ": warning: " << w << "\n";
  // compileModel wrote the package.
  if (options.last != Phase::Package) {
    TraceScope scope(trace, "write", "stage");
    if (Error e = writeModuleFile(*result->module, output.path, output.format))
      return reportError(tool, e);
  }
  if (Error e = output.writeDepfile({input}))
    return reportError(tool, e);
  if (timePasses)
    timer.print(std::cerr);
  whole.reset();
  if (Error e = timeTrace.write())
    return reportError(tool, e);
  return 0;
}

} // namespace gc
