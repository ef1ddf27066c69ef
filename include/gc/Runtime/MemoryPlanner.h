//===- MemoryPlanner.h - Arena offsets from buffer lifetimes ----*- C++ -*-===//
#ifndef GC_RUNTIME_MEMORYPLANNER_H
#define GC_RUNTIME_MEMORYPLANNER_H

#include "gc/IR/LoopIR.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace gc {

/// Byte offsets in one arena for every intermediate buffer of `graph`, given
/// its byte size (`bytesOf`, by buffer index; only intermediates are asked),
/// the plan's steps and their in-place candidates. A buffer lives from the
/// step that first writes it to the step that last reads it; two buffers
/// whose lives overlap never overlap in memory, except an InplacePair whose
/// input dies at that step, which may share its input's memory. Offsets are
/// 64-byte aligned. Deterministic: ties break by buffer index.
struct ArenaLayout {
  std::vector<int64_t> offsets; ///< per buffer index; -1 if not in the arena
  std::vector<std::vector<uint32_t>> frees; ///< per step: buffers that die there
  int64_t arenaBytes = 0;
  int64_t sumBytes = 0; ///< all intermediates laid end to end
};
ArenaLayout planArena(const LoopGraph &graph, const std::function<int64_t(uint32_t)> &bytesOf);

} // namespace gc

#endif // GC_RUNTIME_MEMORYPLANNER_H
