//===- Compile.h - The whole chain in one process ---------------*- C++ -*-===//
//
// gc-compile runs gc-import, gc-opt, gc-lower, gc-codegen and gc-package in
// one process. Between stages the module travels through its graph file's
// bytes, with weight paths rebased as writeModuleFile rebases them, so each
// stage reads exactly what the separate tool would have read from the stage
// file "<stageDir>/<stem>.<level>.gc": the result is byte-identical to the
// staged build that writes its files there. A package does not depend on
// those names: the kernels' object hash covers the loop graphs' text but not
// where the weights lie, and the package holds its own weights (with
// external weights it names the archive relative to the output's directory).
//
// A package can come from the compile cache instead: its key is the SHA-256
// of the archive's bytes, every option that changes the output and gc's
// version; entries are the package's bytes in the object cache's store,
// streamed in and out, never whole in memory.
//
//===----------------------------------------------------------------------===//
#ifndef GC_DRIVER_COMPILE_H
#define GC_DRIVER_COMPILE_H

#include "gc/Driver/Pipeline.h"
#include "gc/Driver/ObjectCache.h"
#include "gc/IR/Level.h"
#include "gc/PackageWriter/PackageWriter.h"
#include "gc/Support/FileSystem.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace gc {

struct CompileOptions {
  /// Which models/<name>.json of the archive to read (gc-import --model).
  std::string modelName = "model";
  PipelineOptions pipeline;
  PackageOptions package;
  /// Training: the joint and partition phases run, and the package has a
  /// forward and a backward graph.
  bool train = false;
  /// The phase whose result is the output.
  Phase last = Phase::Package;
  /// last == Package: where compileModel writes the package ("-": stdout,
  /// which the compile cache does not serve), as an OutputFile.
  std::string packagePath = "-";
  /// Where the stage files lie: "<stageDir>/<stem>.<level>.gc".
  std::string stageDir = ".";
  std::string stem = "model";
  /// Write the stage files (and read each back), as the staged build does.
  bool writeStages = false;
  /// Use the compile cache (packages only) and the object cache.
  bool useCache = true;
  /// Plugin libraries that give custom ops the model calls
  /// (gc/Ops/PluginOps.h), loaded before the archive is read; their bytes
  /// are part of the compile cache's key.
  std::vector<std::string> plugins;

  std::string stagePath(Level level) const;
};

/// Told about every phase and pass as the compile runs.
class CompileObserver {
public:
  virtual ~CompileObserver() = default;
  virtual void phaseStarted(Phase phase) {}
  virtual void phaseFinished(Phase phase) {}
  /// A pass of a phase, or a step that is not a pass (reading the archive,
  /// handing a module to the next phase, packaging), took `seconds`.
  virtual void stepTimed(Phase phase, std::string_view step, double seconds) {}
};

struct CompileResult {
  /// last != Package: the last phase's module, to be written with writeModuleFile.
  std::unique_ptr<Module> module;
  /// The passes' warnings (the lowering's fallbacks to reference kernels),
  /// and why the compile cache could not store the package.
  std::vector<std::string> warnings;
  /// The package came from the compile cache; nothing was compiled.
  bool cacheHit = false;
};

/// Runs the phases up to options.last on the torch.export archive at `input`.
Expected<CompileResult> compileModel(const std::string &input, const CompileOptions &options,
                                     std::span<CompileObserver *const> observers = {});

/// The compile cache's key for `archive` compiled with `options`, or none
/// where the output is not cached: graph-file outputs and written stage
/// files (they are more than one file), a package written to stdout, and
/// the "native" target (the host's CPU is an input the key does not see).
std::optional<std::string> compileCacheKey(const MappedFile &archive,
                                           const CompileOptions &options);

/// Packages by compile-cache key in the object cache's store ($GC_CACHE_DIR;
/// "off" disables it), copied file to file in pieces. Entries are renamed
/// into place and checked when read (ObjectCache), so concurrent compiles
/// of one model, on one machine or several, are safe; a damaged entry is a
/// miss.
class CompileCache {
public:
  explicit CompileCache(ObjectCache store) : store_(std::move(store)) {}
  bool enabled() const { return store_.enabled(); }
  /// Writes the package of `key` to `outputPath` and returns true; false on
  /// a miss, writing nothing. The error is that of writing `outputPath`.
  Expected<bool> lookup(const std::string &key, const std::string &outputPath) const;
  /// Best effort: the error says why the package file at `packagePath` was
  /// not stored. Then keeps the cache within its size limit
  /// (ObjectCache::evict).
  Error store(const std::string &key, const std::string &packagePath) const;

private:
  ObjectCache store_;
};

/// --time-passes for the whole chain: one report over every phase's steps.
class StepTimer final : public CompileObserver {
public:
  void stepTimed(Phase phase, std::string_view step, double seconds) override;
  void print(std::ostream &out) const;

private:
  struct Entry {
    Phase phase;
    std::string step;
    double seconds;
  };
  std::vector<Entry> entries_;
};

/// --time-trace for the whole chain: one event per phase and one per step
/// (kernel batches are recorded by the emitter, CodegenOptions::emit.trace).
class PhaseTracer final : public CompileObserver {
public:
  explicit PhaseTracer(TimeTrace &trace) : trace_(trace) {}
  void phaseStarted(Phase phase) override;
  void phaseFinished(Phase phase) override;
  void stepTimed(Phase phase, std::string_view step, double seconds) override;

private:
  TimeTrace &trace_;
  std::chrono::steady_clock::time_point phaseStart_;
};

/// A line on `out` when a phase has run longer than `threshold`, and one
/// when it ends, so that a long compile shows where it is; quick phases
/// print nothing.
class ProgressReporter final : public CompileObserver {
public:
  ProgressReporter(std::ostream &out, std::string what,
                   std::chrono::milliseconds threshold = std::chrono::milliseconds(1000));
  ~ProgressReporter() override;
  void phaseStarted(Phase phase) override;
  void phaseFinished(Phase phase) override;

private:
  void watch();

  std::ostream &out_;
  std::string what_;
  std::chrono::milliseconds threshold_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<Phase> running_;
  std::chrono::steady_clock::time_point started_;
  bool announced_ = false;
  bool stop_ = false;
  std::thread thread_;
};

} // namespace gc

#endif // GC_DRIVER_COMPILE_H
