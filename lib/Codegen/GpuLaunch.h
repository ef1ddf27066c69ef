//===- GpuLaunch.h - Sizes of GPU launches ------------------------*- C++ -*-===//
#ifndef GC_LIB_CODEGEN_GPULAUNCH_H
#define GC_LIB_CODEGEN_GPULAUNCH_H

#include "gc/IR/IndexSimplify.h"
#include "gc/IR/LoopIR.h"

#include <cstdint>
#include <vector>

namespace gc {

/// The most threads a block of an NVIDIA GPU has.
inline constexpr uint32_t kGpuMaxBlockThreads = 1024;

/// The alignment, in bytes, that kernels assume of every buffer's base
/// address. The runtime gives more: intermediates lie at 64-byte aligned
/// offsets (kBufferAlignment, lib/Runtime/ExecutorBase.h) of 256-byte
/// aligned allocations, and a caller's tensor is used in place only at a
/// 256-byte aligned address (CudaExecutor's kDeviceAlignment); any other
/// is copied into such memory first.
inline constexpr uint32_t kGpuBufferAlignment = 16;

/// Inclusive bounds of the number of points of a loop space (the product of
/// its sizes) given the symbols' ranges; the maximum saturates at
/// SymRange::kUnbounded.
SymRange loopSpaceBounds(const std::vector<const SymExpr *> &space, const VarRanges &ranges);

/// How an index expression changes across the lanes of a vector: `width`
/// consecutive values base, base + 1, ... of the variable `var`, base a
/// multiple of width (KernelGroup::vectorWidth).
enum class LaneStep : uint8_t {
  /// One value for every lane (a broadcast, or the digits of outer loops).
  Same,
  /// The first lane's value plus the lane, the first a multiple of width:
  /// the lanes address one aligned vector.
  Aligned,
  /// Anything else: each lane is addressed on its own.
  Other,
};
LaneStep laneStep(const SymExpr *index, const std::string &var, uint32_t width);

/// Whether `size` is a multiple of `width` whatever its symbols' values
/// (8192*s0 is one of 8).
bool isMultipleOf(const SymExpr *size, uint32_t width);

/// Whether the lanes of a vector of `width` points of `var` access
/// `buffer` at `index` as one aligned vector of 4 to 16 bytes.
bool vectorAccess(const LoopGraph &graph, uint32_t buffer, const SymExpr *index,
                  const std::string &var, uint32_t width);
/// The vector width of a node's own loop in a block_per_point kernel (its
/// loops beyond the group's `prefix` parallel ranges for a pointwise node,
/// its reduction loops for a reduction): each thread takes that many
/// consecutive points of the innermost one at a time, chosen as rule 5
/// does (16 bytes of the widest moving element, halved until it divides
/// the loop and a pointwise node's store stays aligned; a reduction needs
/// one vector load). 1 for none, for scans and for scatters.
uint32_t innerVectorWidth(const LoopGraph &graph, const LoopNode &node, size_t prefix,
                          const VarRanges &ranges);

/// For each value of `body`, whether it is a load that the lanes make as
/// one vector access: vectorAccess, with a mask and gathered indices (t0,
/// t1, ...) that are the same for every lane (an embedding's row; the
/// halves of a rotation, i >= 32 over rows of 64). `ranges`: the symbols'.
std::vector<bool> vectorLoads(const LoopGraph &graph, const Body &body, const std::string &var,
                              uint32_t width, const VarRanges &ranges);

} // namespace gc

#endif // GC_LIB_CODEGEN_GPULAUNCH_H
