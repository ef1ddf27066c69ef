//===- AssignTarget.cpp - The target, chosen once -------------------------===//
#include "gc/Driver/AssignTarget.h"

#include "gc/IR/Fields.h"

namespace gc {

namespace {

/// Whether a graph input of `m` lives on a GPU: a model exported there is
/// compiled for one unless told otherwise.
bool exportedOnGpu(const Module &m) {
  for (const auto &g : m.graphs())
    for (const Value *v : g->inputs())
      if (v->type().isTensor() && v->type().tensor.device.kind == DeviceKind::CUDA)
        return true;
  for (const auto &g : m.loopGraphs())
    for (const LoopBinding &b : g->inputs)
      if (b.type.device.kind == DeviceKind::CUDA)
        return true;
  return false;
}

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
  explicit AssignTargetPass(TargetFlags flags) : flags_(std::move(flags)) {}
  std::string_view name() const override { return "assign-target"; }
  Error run(Module &m) override { return assignTarget(m, flags_); }

private:
  TargetFlags flags_;
};

} // namespace

Error assignTarget(Module &m, const TargetFlags &flags) {
  if (!m.target()) {
    Target t;
    t.device = flags.device.value_or(exportedOnGpu(m) ? TargetDevice::CUDA : TargetDevice::CPU);
    t.cpuLevels = flags.cpuLevels.value_or(t.cpuLevels);
    t.gpuArchs = flags.gpuArchs.value_or(t.gpuArchs);
    t.weights = flags.weights.value_or(t.weights);
    m.setTarget(std::move(t));
    return Error::success();
  }
  const Target &t = *m.target();
  auto plain = [](const std::string &s) { return s; };
  auto named = [](auto e) { return std::string(EnumInfo<decltype(e)>::name(e)); };
  GC_RETURN_IF_ERROR(agree("--device", flags.device, t.device, named));
  GC_RETURN_IF_ERROR(agree("--target", flags.cpuLevels, t.cpuLevels, plain));
  GC_RETURN_IF_ERROR(agree("--gpu-arch", flags.gpuArchs, t.gpuArchs, plain));
  return agree("--weights", flags.weights, t.weights, named);
}

std::unique_ptr<Pass> createAssignTargetPass(const TargetFlags &flags) {
  return std::make_unique<AssignTargetPass>(flags);
}

} // namespace gc
