//===- GeneratorBinding.cpp - A context's generator state as inputs -------===//
#include "gc/Runtime/Runtime.h"

namespace gc {

void GeneratorBinding::bind(const plan::Graph &g, std::span<TensorRef> inputs) {
  // The kernels read the 64 bits as they are; the seed is unsigned to users.
  seed_ = static_cast<int64_t>(state.seed);
  offset_ = static_cast<int64_t>(state.offset);
  for (size_t i = 0; i < g.inputs()->size() && i < inputs.size(); ++i) {
    plan::GeneratorPart part = g.inputs()->Get(i)->generator();
    if (part != plan::GeneratorPart::None)
      inputs[i] = TensorRef{part == plan::GeneratorPart::Seed ? &seed_ : &offset_, DType::Int64,
                            {}, {}};
  }
}

} // namespace gc
