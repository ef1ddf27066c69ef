//===- ModelRunner.h - Running a graph of any level -------------*- C++ -*-===//
//
// gc-run checks every stage the same way: whatever the level of a module, a
// ModelRunner takes user inputs and gives outputs and mutated buffers. Core
// and aten graphs run on the reference interpreter, loop graphs on the loop
// interpreter, and kernel plans on the runtime with their compiled code.
//
//===----------------------------------------------------------------------===//
#ifndef GC_TOOLS_MODELRUNNER_H
#define GC_TOOLS_MODELRUNNER_H

#include "gc/IR/Module.h"
#include "gc/Interp/Interpreter.h"
#include "gc/Runtime/Runtime.h"
#include "gc/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace gc {

struct RunnerOptions {
  unsigned threads = 0; ///< kernel plans: worker threads (0: one per core)
  bool profile = false; ///< kernel plans: time every step (ModelRunner::profile)
  uint64_t seed = RandomState::kDefaultSeed; ///< the generator's seed (docs/random.md)
};

/// Which CPU kernels a plan runs with ("x86-64-v4") of those it has
/// ("x86-64-v3,x86-64-v4").
struct KernelTargets {
  std::string loaded, available;
};

class ModelRunner {
public:
  virtual ~ModelRunner() = default;
  virtual const std::vector<InputSpec> &inputSpecs() const = 0;
  virtual const std::vector<OutputSpec> &outputSpecs() const = 0;
  /// The generator state random ops draw from; each run moves its offset
  /// past the numbers the run drew.
  virtual RandomState &randomState() = 0;
  /// Runs once. May be called many times (benchmarks); weights stay loaded.
  /// Runs carry state, as a package's context does: the buffers one run
  /// mutates are what the next one reads, and a user input the graph writes
  /// gets its new value in the caller's tensor.
  virtual Expected<RunResult> run(const std::vector<Tensor> &userInputs) = 0;
  /// Kernel plans run with RunnerOptions::profile: the time of each step so
  /// far. Empty for interpreters.
  virtual std::vector<StepProfile> profile() const { return {}; }
  /// Kernel plans on the CPU: the level whose kernels run and the levels
  /// there are kernels for (LoadedPackage::kernelTarget). Empty otherwise.
  virtual KernelTargets kernelTargets() const { return {}; }
};

/// A runner for the graph named `graphName` of `module` (the first graph if
/// empty). The module must outlive the runner.
Expected<std::unique_ptr<ModelRunner>> makeModelRunner(const Module &module,
                                                       const std::string &graphName,
                                                       const RunnerOptions &options);

/// A runner for a graph file of any level or a package (gc-package), read
/// from `path`; the runner owns what it read.
Expected<std::unique_ptr<ModelRunner>> openModelRunner(const std::string &path,
                                                       const std::string &graphName,
                                                       const RunnerOptions &options);

} // namespace gc

#endif // GC_TOOLS_MODELRUNNER_H
