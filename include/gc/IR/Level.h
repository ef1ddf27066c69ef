//===- Level.h - The stages a module passes through -------------*- C++ -*-===//
#ifndef GC_IR_LEVEL_H
#define GC_IR_LEVEL_H

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace gc {

/// Each stage of the pipeline produces a module of one level and checks the
/// level of what it reads. The order is the pipeline's order.
enum class Level : uint8_t {
  Aten,        ///< gc-import: ops as torch.export recorded them
  Core,        ///< gc-opt: the small core op set, functional
  Joint,       ///< gc-opt --joint: forward and backward in one graph
  Partitioned, ///< gc-partition: forward and backward graphs
  Loops,       ///< gc-lower: loop IR
  Kernels,     ///< gc-codegen: kernels and an execution plan
};

struct LevelInfo {
  Level level;
  std::string_view name;
  std::string_view description;
};

/// One row per level, in pipeline order; drives flags, headers and docs.
std::span<const LevelInfo> levelInfos();
std::string_view levelName(Level l);
std::optional<Level> parseLevel(std::string_view name);

} // namespace gc

#endif // GC_IR_LEVEL_H
