//===- AssignTarget.cpp - The target, chosen once -------------------------===//
#include "gc/Driver/AssignTarget.h"

#include "gc/IR/Fields.h"
#include "gc/IR/TargetOf.h"

namespace gc {

namespace {

/// An error unless the flag `given` (if any) equals `recorded`.
template <class T, class Show>
Error agree(std::string_view flag, const std::optional<T> &given, const T &recorded, Show show) {
  if (!given || *given == recorded)
    return Error::success();
  return makeError() << flag << " " << show(*given) << " contradicts the module, which was made "
                     << "for " << flag << " " << show(recorded)
                     << ": the target and the weights are chosen once, by gc-opt (or "
                        "gc-compile); pass the flag there";
}

class AssignTargetPass final : public Pass {
public:
  AssignTargetPass(TargetFlags flags, bool decide) : flags_(std::move(flags)), decide_(decide) {}
  std::string_view name() const override { return "assign-target"; }
  Error run(Module &m) override {
    return m.target() || decide_ || flags_.any() ? assignTarget(m, flags_) : Error::success();
  }

private:
  TargetFlags flags_;
  bool decide_;
};

} // namespace

Error assignTarget(Module &m, const TargetFlags &flags) {
  if (!m.target()) {
    Target t = targetOf(m);
    t.device = flags.device.value_or(t.device);
    t.cpuLevels = flags.cpuLevels.value_or(t.cpuLevels);
    t.gpuArchs = flags.gpuArchs.value_or(t.gpuArchs);
    t.weights = flags.weights.value_or(t.weights);
    t.precision = flags.precision.value_or(t.precision);
    t.convAlgorithm = flags.convAlgorithm.value_or(t.convAlgorithm);
    m.setTarget(std::move(t));
    return Error::success();
  }
  const Target &t = *m.target();
  auto plain = [](const std::string &s) { return s; };
  auto named = [](auto e) { return std::string(EnumInfo<decltype(e)>::name(e)); };
  GC_RETURN_IF_ERROR(agree("--device", flags.device, t.device, named));
  GC_RETURN_IF_ERROR(agree("--target", flags.cpuLevels, t.cpuLevels, plain));
  GC_RETURN_IF_ERROR(agree("--gpu-arch", flags.gpuArchs, t.gpuArchs, plain));
  GC_RETURN_IF_ERROR(agree("--weights", flags.weights, t.weights, named));
  GC_RETURN_IF_ERROR(agree("--precision", flags.precision, t.precision, named));
  return agree("--conv-algorithm", flags.convAlgorithm, t.convAlgorithm, named);
}

std::unique_ptr<Pass> createAssignTargetPass(const TargetFlags &flags, bool decide) {
  return std::make_unique<AssignTargetPass>(flags, decide);
}

} // namespace gc
