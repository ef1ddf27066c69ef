//===- MathBitcode.h - The math library's bitcode, embedded -----*- C++ -*-===//
#ifndef GC_LIB_CODEGEN_MATHBITCODE_H
#define GC_LIB_CODEGEN_MATHBITCODE_H

#include <cstddef>

namespace gc {

/// MathLibrary.c compiled to LLVM bitcode at build time.
extern const unsigned char kMathBitcode[];
extern const std::size_t kMathBitcodeSize;

} // namespace gc

#endif // GC_LIB_CODEGEN_MATHBITCODE_H
