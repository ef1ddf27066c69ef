//===- EmbeddedKernels.h - gc's own CUDA kernels inside libgcrt -*- C++ -*-===//
//
// gc's hand-written kernels (the fused attention, the few-row product) are
// compiled by nvcc at gc's build time and embedded in libgcrt as bin2c
// arrays of their fatbinaries (lib/Runtime/CMakeLists.txt), one entry per
// element type. What every such user shares: the image as the driver loads
// it, the type suffix of the entries' names, and how an entry is found.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_CUDA_EMBEDDEDKERNELS_H
#define GC_LIB_RUNTIME_CUDA_EMBEDDEDKERNELS_H

#include "CudaDriver.h"

#include "gc/Runtime/RuntimePlan.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gc::cuda {

/// `length` bytes of a bin2c array copied to 8-byte aligned words, as
/// cuModuleLoadData reads a fatbinary.
std::vector<uint64_t> alignedImage(const unsigned char *bytes, size_t length);

/// The suffix of an embedded kernel's entry for elements of `t`: "f32",
/// "bf16" or "f16", the types they are built for; null for any other.
const char *kernelTypeName(plan::DType t);

/// The entry `entry` of the embedded fatbinary `image`, whose kernels are
/// the `what`s ("few-row product kernel"), loaded into `module` on first
/// use (the caller unloads it); early where `early` and its code allow
/// (Kernel).
Expected<Kernel> embeddedKernel(const Driver &d, Module &module,
                                const std::vector<uint64_t> &image, const std::string &entry,
                                bool early, const std::string &what);

} // namespace gc::cuda

#endif // GC_LIB_RUNTIME_CUDA_EMBEDDEDKERNELS_H
