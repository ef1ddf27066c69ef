//===- MemoryPlanner.h - Arena offsets from buffer lifetimes ----*- C++ -*-===//
#ifndef GC_RUNTIME_MEMORYPLANNER_H
#define GC_RUNTIME_MEMORYPLANNER_H

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace gc {

/// What the planner needs of a plan: which buffers live in the arena, which
/// buffers each step reads or writes, in order, where a step may write in
/// place ({output, input} pairs), and the graph's outputs (read after the
/// last step). The compiler makes one from a LoopGraph (gc/Plan/PlanBuilder.h),
/// the runtime from a runtime plan.
struct ArenaProblem {
  std::vector<bool> intermediate; ///< per buffer
  std::vector<std::vector<uint32_t>> uses; ///< per step
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> inplace; ///< per step
  std::vector<uint32_t> outputs;
};

/// Byte offsets in one arena for every intermediate buffer, given its byte
/// size (`bytesOf`, by buffer index; only intermediates are asked). A buffer
/// lives from the step that first uses it to the step that last does; two
/// buffers whose lives overlap never overlap in memory, except an in-place
/// pair whose input dies at that step, which may share its input's memory.
/// Offsets are 64-byte aligned. Deterministic: ties break by buffer index.
struct ArenaLayout {
  std::vector<int64_t> offsets; ///< per buffer index; -1 if not in the arena
  std::vector<std::vector<uint32_t>> frees; ///< per step: buffers that die there
  int64_t arenaBytes = 0;
  int64_t sumBytes = 0; ///< all intermediates laid end to end
};
ArenaLayout planArena(const ArenaProblem &problem,
                      const std::function<int64_t(uint32_t)> &bytesOf);

} // namespace gc

#endif // GC_RUNTIME_MEMORYPLANNER_H
