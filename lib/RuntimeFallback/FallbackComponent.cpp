//===- FallbackComponent.cpp - Reference kernels for plan steps -----------===//
#include "ReferenceStep.h"

#include "gc/Runtime/Fallback.h"
#include "gc/RuntimeFallback/FallbackPayload.h"

namespace gc {

namespace {

/// A ReferenceStep with the module its node lives in.
class ReferenceFallback final : public FallbackCall {
public:
  ReferenceFallback(std::unique_ptr<Module> module, std::unique_ptr<ReferenceStep> step)
      : module_(std::move(module)), step_(std::move(step)) {}
  Error run(char *const *bases, const std::vector<StridedLayout> &inputs,
            const std::vector<StridedLayout> &outputs) const override {
    return step_->run(bases, inputs, outputs);
  }
  Error runSized(char *const *bases, const std::vector<StridedLayout> &inputs,
                 const PlaceOutputs &place) const override {
    return step_->runSized(bases, inputs, place);
  }

private:
  std::unique_ptr<Module> module_;
  std::unique_ptr<ReferenceStep> step_;
};

class ReferenceComponent final : public FallbackComponent {
public:
  Expected<std::unique_ptr<FallbackCall>>
  prepare(std::span<const uint8_t> payload, const std::vector<DType> &inputs,
          const std::vector<DType> &outputs) const override {
    Expected<std::unique_ptr<Module>> m = decodeFallbackPayload(payload);
    if (!m)
      return m.error();
    const LoopNode &node = (*m)->loopGraphs()[0]->nodes[0];
    auto dtypes = [](const std::vector<BufferView> &views) {
      std::vector<DType> out;
      for (const BufferView &v : views)
        out.push_back(v.type.dtype);
      return out;
    };
    if (dtypes(node.inputs) != inputs || dtypes(node.outputs) != outputs)
      return makeError() << "node '" << node.name
                         << "': its fallback payload does not match the step's views";
    Expected<std::unique_ptr<ReferenceStep>> step = ReferenceStep::create(node);
    if (!step)
      return step.error();
    return std::unique_ptr<FallbackCall>(new ReferenceFallback(m.take(), step.take()));
  }
};

} // namespace

const FallbackComponent &linkedFallbackComponent() {
  static const ReferenceComponent component;
  return component;
}

} // namespace gc
