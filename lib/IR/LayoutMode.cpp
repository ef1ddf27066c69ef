//===- LayoutMode.cpp - Activation layouts of convolution networks --------===//
#include "gc/IR/LayoutMode.h"

#include "gc/IR/Permutation.h"
#include "gc/IR/TargetOf.h"

namespace gc {

namespace {

/// A permute of a 4-d tensor to [N, H, W, C] order.
bool movesChannelsInnermost(const Node &n) {
  std::optional<std::vector<int64_t>> p = permutationOf(n);
  return p && *p == std::vector<int64_t>{0, 2, 3, 1};
}

} // namespace

std::string_view layoutModeName(LayoutMode m) {
  switch (m) {
  case LayoutMode::Auto:
    return "auto";
  case LayoutMode::Plain:
    return "plain";
  case LayoutMode::ChannelsLast:
    return "channels-last";
  }
  return "auto";
}

std::optional<LayoutMode> parseLayoutMode(std::string_view s) {
  for (LayoutMode m : {LayoutMode::Auto, LayoutMode::Plain, LayoutMode::ChannelsLast})
    if (layoutModeName(m) == s)
      return m;
  return std::nullopt;
}

LayoutMode resolveLayout(LayoutMode mode, const Module &m) {
  if (mode != LayoutMode::Auto)
    return mode;
  if (targetOf(m).device != TargetDevice::CUDA)
    return LayoutMode::ChannelsLast;
  // A training graph's saved activations and gradients cross to the
  // backward and to the caller's tensors as cuDNN and torch lay them out;
  // channels-last was measured only for inference.
  if (m.level() == Level::Partitioned)
    return LayoutMode::Plain;
  for (const auto &g : m.graphs())
    for (const auto &n : g->nodes())
      if (movesChannelsInnermost(*n))
        return LayoutMode::Plain;
  return LayoutMode::ChannelsLast;
}

} // namespace gc
