//===- AssignTarget.h - The target, chosen once -----------------*- C++ -*-===//
//
// What a module is compiled for (gc/IR/Module.h, Target) is chosen once, by
// the opt phase, and recorded on the module; every later phase reads it
// there (targetOf). The tools that run a later phase take the same flags
// only to check them: a flag that contradicts the module is an error that
// says where the choice is made. A module without a record (a hand-written
// text, or a file of format 1.5 or older) takes the flags of the first later
// phase given any, and the defaults until then.
//
//===----------------------------------------------------------------------===//
#ifndef GC_DRIVER_ASSIGNTARGET_H
#define GC_DRIVER_ASSIGNTARGET_H

#include "gc/IR/Module.h"
#include "gc/Pass/Pass.h"

#include <memory>
#include <optional>
#include <string>

namespace gc {

/// The target flags a tool was given, each unset where it was not:
/// --device, --target (CPU levels), --gpu-arch, --weights, --precision and
/// --conv-algorithm.
struct TargetFlags {
  std::optional<TargetDevice> device;
  /// As cpuTargetList writes them: lowest level first.
  std::optional<std::string> cpuLevels;
  /// As cudaTarget writes them, without "cuda:".
  std::optional<std::string> gpuArchs;
  std::optional<WeightsMode> weights;
  std::optional<Precision> precision;
  std::optional<ConvAlgorithm> convAlgorithm;
  bool any() const {
    return device || cpuLevels || gpuArchs || weights || precision || convAlgorithm;
  }
};

/// Records the target on `m` when it has none: the flags given, else the
/// defaults (targetOf). When `m` has one, checks that every flag given
/// agrees with it.
Error assignTarget(Module &m, const TargetFlags &flags);

/// assignTarget as a pass, the first of the opt, lower and codegen phases.
/// Where `m` has no record it makes one only when `decide` (the opt phase)
/// or when a flag is given.
std::unique_ptr<Pass> createAssignTargetPass(const TargetFlags &flags, bool decide);

} // namespace gc

#endif // GC_DRIVER_ASSIGNTARGET_H
