//===- JointPass.cpp - Autodiff as a pass ----------------------------------===//
#include "gc/Autodiff/Autodiff.h"

namespace gc {

namespace {

class JointPass final : public Pass {
public:
  explicit JointPass(JointOptions options) : options_(options) {}
  std::string_view name() const override { return "joint"; }
  Error run(Module &m) override {
    GC_RETURN_IF_ERROR(buildJointModule(m, options_));
    for (const auto &g : m.graphs())
      for (const OutputSpec &s : g->outputSpecs())
        if (s.kind == OutputKind::GradientToParameter || s.kind == OutputKind::GradientToUserInput)
          ++statistics()["gradients"];
    return Error::success();
  }

private:
  JointOptions options_;
};

std::unique_ptr<Pass> createDefaultJointPass() { return createJointPass({}); }

constexpr PassInfo kAutodiffPasses[] = {
    {"joint",
     "Build the joint forward and backward graph by reverse-mode autodiff; the module becomes "
     "level joint (gradients for parameters; gc-opt --grad-inputs adds user inputs)",
     &createDefaultJointPass},
};

} // namespace

std::unique_ptr<Pass> createJointPass(const JointOptions &options) {
  return std::make_unique<JointPass>(options);
}

void registerAutodiffPasses() { registerPasses(kAutodiffPasses); }

} // namespace gc
