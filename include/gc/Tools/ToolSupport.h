//===- ToolSupport.h - What every gc tool shares ----------------*- C++ -*-===//
#ifndef GC_TOOLS_TOOLSUPPORT_H
#define GC_TOOLS_TOOLSUPPORT_H

#include "gc/ModuleIO/ModuleIO.h"
#include "gc/Driver/Pipeline.h"
#include "gc/Ops/PluginOps.h"
#include "gc/Pass/Pass.h"
#include "gc/Support/Error.h"
#include "gc/Support/TimeTrace.h"

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace gc {

/// Options every tool that writes a module has: `-o FILE` and `--emit`.
/// gc-codegen also offers --emit=llvm (the kernels' LLVM IR) and --emit=ptx
/// (a CUDA target's PTX).
struct OutputOptions {
  std::string path = "-";
  FileFormat format = FileFormat::Binary;
  bool llvm = false;
  bool ptx = false;
  /// -MF FILE: a Makefile-syntax depfile naming what the output was made from.
  std::string depfile;
  void addTo(CLI::App &app, bool offerLLVM = false);
  /// Writes the depfile (if asked for): the output depends on `inputs`.
  Error writeDepfile(const std::vector<std::string> &inputs) const;
};

/// --time-trace FILE: where the time of every stage, pass and kernel batch
/// went, as Chrome trace JSON (Support/TimeTrace.h). Every tool that runs
/// passes offers it, and gc-package.
struct TimeTraceFlag {
  std::string path;
  void addTo(CLI::App &app);
  /// The trace to record into, started at the first call; null without the
  /// flag.
  TimeTrace *trace();
  /// Writes the trace, if one was asked for.
  Error write() const;

private:
  std::unique_ptr<TimeTrace> trace_;
};

/// The pass manager's flags, as every tool that runs passes offers them:
/// --print-after, --time-passes, --time-trace, --stats, --no-verify-each,
/// --list-passes.
struct PassManagerFlags {
  std::vector<std::string> printAfter;
  PassManagerOptions options;
  TimeTraceFlag timeTrace;
  bool listPasses = false;
  void addTo(CLI::App &app, const std::string &listHelp);
  /// Checks that every --print-after name is "all" or a pass `isKnown`
  /// accepts, and puts them into `options`.
  Error resolvePrintAfter(const std::function<bool(std::string_view)> &isKnown);
};

/// Refuses the old spelling `old` of a renamed flag with a one-line hint
/// naming `now`; hidden from --help.
void addRenamedFlag(CLI::App &app, const std::string &old, const std::string &now);

/// --weights=embed|external (gc-opt, gc-package, gc-compile); unset when
/// not given.
void addWeightsFlag(CLI::App &app, std::optional<WeightsMode> &mode, const std::string &help);

/// The flags of the phases a tool runs (--freeze, --grad-inputs,
/// --partition, --no-fallback, ...), each declared once for every tool that
/// runs its phase. The target flags (--device, --target, --gpu-arch) come
/// with the opt, lower and codegen phases: the opt phase records them, the
/// others check them (Driver/AssignTarget.h). With a non-empty `helpPrefix` each help text
/// names the phase's tool (gc-compile runs them all).
void addPipelineFlags(CLI::App &app, PipelineOptions &options, std::span<const Phase> phases,
                      const std::string &helpPrefix = "");

/// `--plugin=PATH`, repeatable: plugins that give ops the input calls
/// (gc/Ops/PluginOps.h), loaded before it is read.
struct PluginFlag {
  std::vector<std::string> paths;
  void addTo(CLI::App &app);
  Error load() const { return loadCompilerPlugins(paths); }
};

/// What the stage tools (gc-opt, gc-partition, gc-lower, gc-codegen) share:
/// read a graph file, run passes with the pass manager's flags, print the
/// passes' warnings, write the result and its depfile.
struct StageTool {
  std::string input;
  OutputOptions output;
  PassManagerFlags passManager;
  PluginFlag plugins;

  struct Hooks {
    /// Runs on the module before the passes (gc-partition --report).
    std::function<Error(Module &)> before;
    /// Writes the result instead of writeModuleFile (gc-codegen --emit=llvm).
    std::function<Error(Module &)> write;
  };

  void addTo(CLI::App &app, bool offerLLVM = false);
  /// Runs `passes`; returns the exit code.
  int run(const std::string &tool, std::vector<std::unique_ptr<Pass>> passes,
          const Hooks &hooks = {});
  /// Runs the passes of `phases` made from `options`.
  int run(const std::string &tool, std::span<const Phase> phases, const PipelineOptions &options,
          const Hooks &hooks = {});
};

/// The files a module was read from that its meaning depends on: the file
/// itself and its weight sources.
std::vector<std::string> moduleDependencies(const std::string &file, const Module &m);

/// Prints "<tool>: error: <message>" to stderr and returns the exit code 1.
int reportError(const std::string &tool, const Error &e);

/// Parses the command line; on --help or a usage error sets `exitCode` and
/// returns false.
bool parseCommandLine(CLI::App &app, int argc, char **argv, int &exitCode);

} // namespace gc

#endif // GC_TOOLS_TOOLSUPPORT_H
