//===- GpuLaunch.h - Sizes of GPU launches ------------------------*- C++ -*-===//
#ifndef GC_LIB_CODEGEN_GPULAUNCH_H
#define GC_LIB_CODEGEN_GPULAUNCH_H

#include "gc/IR/IndexSimplify.h"

#include <cstdint>
#include <vector>

namespace gc {

/// The most threads a block of an NVIDIA GPU has.
inline constexpr uint32_t kGpuMaxBlockThreads = 1024;

/// Inclusive bounds of the number of points of a loop space (the product of
/// its sizes) given the symbols' ranges; the maximum saturates at
/// SymRange::kUnbounded.
SymRange loopSpaceBounds(const std::vector<const SymExpr *> &space, const VarRanges &ranges);

} // namespace gc

#endif // GC_LIB_CODEGEN_GPULAUNCH_H
