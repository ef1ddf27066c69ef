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

Expected<Kernel> embeddedKernel(const Driver &d, Module &module,
                                const std::vector<uint64_t> &image, const std::string &entry,
                                bool early, const std::string &what) {
  if (!module)
    GC_RETURN_IF_ERROR(
        d.check(d.moduleLoadData(&module, image.data()), "loading gc's " + what + "s"));
  Function fn = nullptr;
  GC_RETURN_IF_ERROR(d.check(d.moduleGetFunction(&fn, module, entry.c_str()),
                             "finding the " + what + " " + entry));
  return Kernel{fn, early && d.earlyCapable(fn)};
}

} // namespace gc::cuda
