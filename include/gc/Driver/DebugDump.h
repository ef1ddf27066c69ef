//===- DebugDump.h - gc-compile --debug-dump --------------------*- C++ -*-===//
//
// One folder a user can attach to a bug report: what was run, every stage's
// graph file in both forms, the passes' times, the kernels' source and, if
// the compile failed, the error. The compile itself writes the stage files
// there (CompileOptions::writeStages), so a dump changes none of the
// output's bytes: the kernels' source is emitted again from the kernels
// stage file, afterwards, rather than by the compile (asking the emitter
// for LLVM IR during the compile would put every kernel in one batch).
//
//===----------------------------------------------------------------------===//
#ifndef GC_DRIVER_DEBUGDUMP_H
#define GC_DRIVER_DEBUGDUMP_H

#include "gc/Driver/Compile.h"

#include <string>
#include <vector>

namespace gc {

class DebugDump final : public CompileObserver {
public:
  /// Creates `dir` (and its parents) and records the command line in it.
  static Expected<DebugDump> create(std::string dir, std::vector<std::string> commandLine);

  const std::string &dir() const { return dir_; }
  void stepTimed(Phase phase, std::string_view step, double seconds) override {
    timer_.stepTimed(phase, step, seconds);
  }

  /// Writes what the compile left behind: the text form of every stage
  /// file found in dir(), time-passes.txt, the kernels' LLVM IR (CPU, the
  /// first level's) or PTX (CUDA) under kernels/, and error.txt and
  /// warnings.txt. `failure` is the compile's error, if it failed.
  Error finish(const CompileOptions &options, const std::vector<std::string> &warnings,
               const Error *failure) const;

private:
  DebugDump(std::string dir) : dir_(std::move(dir)) {}
  Error writeKernelSources(const std::string &kernelsFile) const;

  std::string dir_;
  StepTimer timer_;
};

} // namespace gc

#endif // GC_DRIVER_DEBUGDUMP_H
