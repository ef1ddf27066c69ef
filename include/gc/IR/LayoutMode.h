//===- LayoutMode.h - Activation layouts of convolution networks -*- C++ -*-===//
//
// How gc-lower lays out the 4-d activations of convolution networks
// (lib/Lower/ActivationLayout.h): row-major as torch gave them (plain),
// channels-last between convolutions, or auto. The choice is read by two
// steps of gc-lower, conv-as-product (which of a GPU's convolutions become
// window sums) and the lowering itself (which buffers are channels-last),
// so both resolve it here, from the graphs as gc-lower receives them.
//
//===----------------------------------------------------------------------===//
#ifndef GC_IR_LAYOUTMODE_H
#define GC_IR_LAYOUTMODE_H

#include "gc/IR/Module.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace gc {

enum class LayoutMode : uint8_t { Auto, Plain, ChannelsLast };
std::string_view layoutModeName(LayoutMode m);
std::optional<LayoutMode> parseLayoutMode(std::string_view s);

/// What `mode` means for `m`: Auto is ChannelsLast, but Plain for a module
/// compiled for a GPU that is a training module (Level::Partitioned) or
/// whose graphs move a 4-d activation's channels innermost themselves (a permute to [N, H, W, C]: convnext's blocks do,
/// for their layer norms and linears), which ran 1.09 to 1.63 times slower
/// channels-last on an H200 (docs/gpu.md).
LayoutMode resolveLayout(LayoutMode mode, const Module &m);

} // namespace gc

#endif // GC_IR_LAYOUTMODE_H
