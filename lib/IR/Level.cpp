//===- Level.cpp - The stages a module passes through ---------------------===//
#include "gc/IR/Level.h"

#include <array>

namespace gc {

namespace {
constexpr std::array<LevelInfo, 6> kLevels = {{
    {Level::Aten, "aten", "ATen ops as torch.export recorded them (gc-import)"},
    {Level::Core, "core", "the core op set, functional (gc-opt)"},
    {Level::Joint, "joint", "forward and backward in one graph (gc-opt --joint)"},
    {Level::Partitioned, "partitioned", "forward and backward graphs (gc-partition)"},
    {Level::Loops, "loops", "loop IR: buffers, pointwise, reductions (gc-lower)"},
    {Level::Kernels, "kernels", "kernels and an execution plan (gc-codegen)"},
}};
} // namespace

std::span<const LevelInfo> levelInfos() { return kLevels; }

std::string_view levelName(Level l) {
  return kLevels[static_cast<size_t>(l)].name;
}

std::optional<Level> parseLevel(std::string_view name) {
  for (const LevelInfo &info : kLevels)
    if (info.name == name)
      return info.level;
  return std::nullopt;
}

} // namespace gc
