//===- ToolSupport.h - What every gc tool shares ----------------*- C++ -*-===//
#ifndef GC_TOOLS_TOOLSUPPORT_H
#define GC_TOOLS_TOOLSUPPORT_H

#include "gc/Bytecode/ModuleIO.h"
#include "gc/Pass/Pass.h"
#include "gc/Support/Error.h"
#include "gc/Transforms/Pipelines.h"

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace gc {

/// Options every tool that writes a module has: `-o FILE` and `--emit`.
/// gc-codegen also offers --emit=llvm (the kernels' LLVM IR).
struct OutputOptions {
  std::string path = "-";
  FileFormat format = FileFormat::Binary;
  bool llvm = false;
  /// -MF FILE: a Makefile-syntax depfile naming what the output was made from.
  std::string depfile;
  void addTo(CLI::App &app, bool offerLLVM = false);
  /// Writes the depfile (if asked for): the output depends on `inputs`.
  Error writeDepfile(const std::vector<std::string> &inputs) const;
};

/// The pass manager's flags, as every tool that runs passes offers them:
/// --print-after, --time-passes, --stats, --no-verify-each, --list-passes.
struct PassManagerFlags {
  std::vector<std::string> printAfter;
  PassManagerOptions options;
  bool listPasses = false;
  void addTo(CLI::App &app, const std::string &listHelp);
  /// Checks that every --print-after name is "all" or a pass `isKnown`
  /// accepts, and puts them into `options`.
  Error resolvePrintAfter(const std::function<bool(std::string_view)> &isKnown);
};

/// gc-opt's core-pipeline flags (--freeze, --retarget-cpu), offered by gc-opt
/// and gc-compile; `helpPrefix` names the stage in gc-compile's help.
void addCorePipelineFlags(CLI::App &app, CorePipelineOptions &core, const std::string &helpPrefix);

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
