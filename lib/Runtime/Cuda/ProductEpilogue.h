//===- ProductEpilogue.h - What a GPU product fuses after itself -*- C++ -*-===//
//
// Both of the GPU's matrix product paths, cuBLASLt's (CudaLibraries.cpp)
// and gc's few-row kernel (CudaFewRowProduct.cpp), fuse the same epilogue,
// so that the choice between them never adds a launch: read here once from
// the step's call. The exceptions are a gated pair (GatedSilu) and an
// RMSNorm of the left rows (a prologue), which only the few-row kernel
// computes; cuBLASLt declines them.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_CUDA_PRODUCTEPILOGUE_H
#define GC_LIB_RUNTIME_CUDA_PRODUCTEPILOGUE_H

#include "gc/Runtime/RuntimePlan.h"

#include <cstddef>
#include <cstdint>
#include <optional>

namespace gc::cuda {

struct ProductEpilogue {
  enum class Activation { None, Relu, GeluTanh };
  /// Input indices of the step.
  std::optional<uint32_t> bias, residual;
  Activation activation = Activation::None;
  /// A gated pair's second weight (an input index): the result is
  /// silu(src weights) * (src up), and there is nothing else.
  std::optional<uint32_t> up;
  /// The left rows' RMSNorm, read before the product: its weight (an
  /// input index) and epsilon.
  struct RmsNorm {
    uint32_t weight;
    float eps;
  };
  std::optional<RmsNorm> rmsNorm;
};

/// The call's bias and post-ops as one epilogue, when it is one both paths
/// compute: at most one bias (the call's own or an AddBias post-op) and one
/// residual add, then at most one activation (ReLU, or GELU's tanh form),
/// last; or a GatedSilu post-op alone on a call without a bias (`up`);
/// either after the call's RMSNorm prologue, if any; every input among
/// the step's `inputs`. Null for anything else.
std::optional<ProductEpilogue> productEpilogue(const plan::DnnlCall &call, size_t inputs);

} // namespace gc::cuda

#endif // GC_LIB_RUNTIME_CUDA_PRODUCTEPILOGUE_H
