//===- ProductEpilogue.cpp - What a GPU product fuses after itself --------===//
#include "ProductEpilogue.h"

namespace gc::cuda {

std::optional<ProductEpilogue> productEpilogue(const plan::DnnlCall &call, size_t inputs) {
  using Activation = ProductEpilogue::Activation;
  ProductEpilogue e;
  if (int32_t bias = call.bias(); bias >= 0)
    e.bias = uint32_t(bias);
  const auto *postOps = call.post_ops();
  for (size_t k = 0; postOps && k < postOps->size(); ++k) {
    const plan::PostOp &p = *postOps->Get(k);
    if (e.activation != Activation::None)
      return std::nullopt;
    switch (p.kind()) {
    case plan::PostOpKind::AddBias:
      if (e.bias)
        return std::nullopt;
      e.bias = p.input();
      break;
    case plan::PostOpKind::Add:
      if (e.residual)
        return std::nullopt;
      e.residual = p.input();
      break;
    case plan::PostOpKind::Relu:
      e.activation = Activation::Relu;
      break;
    case plan::PostOpKind::GeluTanh:
      e.activation = Activation::GeluTanh;
      break;
    case plan::PostOpKind::GeluErf:
    case plan::PostOpKind::Swish:
      return std::nullopt; // cuBLASLt's epilogues have neither
    case plan::PostOpKind::GatedSilu:
      if (postOps->size() != 1 || e.bias)
        return std::nullopt;
      e.up = p.input();
      break;
    }
  }
  if (const plan::RmsNormPrologue *norm = call.rms_norm())
    e.rmsNorm = ProductEpilogue::RmsNorm{norm->weight(), norm->eps()};
  std::optional<uint32_t> normWeight;
  if (e.rmsNorm)
    normWeight = e.rmsNorm->weight;
  for (const std::optional<uint32_t> &input : {e.bias, e.residual, e.up, normWeight})
    if (input && *input >= inputs)
      return std::nullopt;
  return e;
}

} // namespace gc::cuda
