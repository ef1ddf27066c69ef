//===- Pipeline.h - gc's pipeline, phase by phase ---------------*- C++ -*-===//
//
// The whole pipeline is one table (Pipeline.cpp): each phase, the tool that
// runs it on its own, the level of the module it makes, and the passes it
// runs. gc-opt, gc-partition, gc-lower and gc-codegen each run a span of
// it; gc-compile walks it from the archive to the package, training phases
// included when asked for.
//
//===----------------------------------------------------------------------===//
#ifndef GC_DRIVER_PIPELINE_H
#define GC_DRIVER_PIPELINE_H

#include "gc/Autodiff/Autodiff.h"
#include "gc/Driver/AssignTarget.h"
#include "gc/Driver/BackendPasses.h"
#include "gc/IR/Level.h"
#include "gc/Partition/Partition.h"
#include "gc/Pass/Pass.h"

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gc {

/// The phases in pipeline order.
enum class Phase : uint8_t { Import, Opt, Joint, Partition, Lower, Codegen, Package };

struct PhaseInfo {
  Phase phase;
  std::string_view name;
  /// The command that runs this phase alone.
  std::string_view tool;
  /// The level of the module the phase makes; none for the package.
  std::optional<Level> level;
  /// Only a training pipeline has the phase.
  bool training;
  std::string_view description;
};

/// One row per phase, in pipeline order.
std::span<const PhaseInfo> phaseInfos();
const PhaseInfo &phaseInfo(Phase p);

struct CorePipelineOptions {
  /// Inference: parameters become constants and fold into their users.
  bool freeze = false;
  /// A model exported on another device (cuda) is compiled for the CPU on
  /// purpose: every tensor and device argument becomes cpu first.
  bool retargetCPU = false;
  /// Inference (no joint graph follows): the calls the target device's
  /// backend runs as one step of their own stay whole (gc/IR/ExternOps.h:
  /// runsWhole; decompose-keep-whole).
  bool keepWholeCalls = false;
};

/// What the phases' passes are made from.
struct PipelineOptions {
  /// The opt phase runs these passes (a --passes list) instead of its own.
  std::optional<std::string> passes;
  /// The target flags: the opt phase records them on the module, later
  /// phases check them against it (AssignTarget.h).
  TargetFlags target;
  CorePipelineOptions core;
  JointOptions joint;
  PartitionStrategy partition = PartitionStrategy::MinCut;
  LowerOptions lower;
  CodegenOptions codegen;
};

/// The opt phase's passes as a --passes list. With external weights the
/// package will reference the archive's weights in place, so freezing makes
/// no new weight-sized tensors from them: what folds derive from weights is
/// computed at load time (a constant program).
std::string corePassList(const CorePipelineOptions &options, WeightsMode weights);

/// The passes `phase` runs, in order. Import and Package are not passes:
/// they read an archive and write a package.
Expected<std::vector<std::unique_ptr<Pass>>> phasePasses(Phase phase,
                                                         const PipelineOptions &options);

/// The phases from the archive up to and including `last`; the training
/// phases only when `train` is set.
std::vector<Phase> pipelinePhases(Phase last, bool train);

/// The phase whose result `name` names: a level ("aten" ... "kernels") or
/// "package".
std::optional<Phase> phaseProducing(std::string_view name);

/// Registers every library's passes (transforms, autodiff, partition,
/// backend); tools call it once before reading pass names.
void registerAllPasses();

} // namespace gc

#endif // GC_DRIVER_PIPELINE_H
