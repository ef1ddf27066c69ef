//===- EmbeddedKernels.cpp - gc's own CUDA kernels inside libgcrt ---------===//
#include "EmbeddedKernels.h"

#include <cstring>

namespace gc::cuda {

std::vector<uint64_t> alignedImage(const unsigned char *bytes, size_t length) {
  std::vector<uint64_t> words((length + 7) / 8, 0);
  std::memcpy(words.data(), bytes, length);
  return words;
}

const char *kernelTypeName(plan::DType t) {
  switch (t) {
  case plan::DType::Float32:
    return "f32";
  case plan::DType::BFloat16:
    return "bf16";
  case plan::DType::Float16:
    return "f16";
  default:
    return nullptr;
  }
}

} // namespace gc::cuda
