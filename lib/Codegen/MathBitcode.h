//===- MathBitcode.h - The math library's bitcode, embedded -----*- C++ -*-===//
#ifndef GC_LIB_CODEGEN_MATHBITCODE_H
#define GC_LIB_CODEGEN_MATHBITCODE_H

#include <cstddef>

namespace gc {

/// MathLibrary.c compiled to LLVM bitcode at build time, for x86-64.
extern const unsigned char kMathBitcode[];
extern const std::size_t kMathBitcodeSize;
/// The same for NVIDIA GPUs (nvptx64-nvidia-cuda).
extern const unsigned char kGpuMathBitcode[];
extern const std::size_t kGpuMathBitcodeSize;

} // namespace gc

#endif // GC_LIB_CODEGEN_MATHBITCODE_H
