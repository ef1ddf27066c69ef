//===- Autocast.h - torch.autocast's dtype rules per op ---------*- C++ -*-===//
//
// Inside a torch.autocast region, PyTorch changes the dtype some ops compute
// in: matrix products and convolutions run in the region's lower precision,
// ops that lose accuracy there run in float32, and a few ops that take
// several tensors cast them to the widest one. The rules differ by device.
// gc-import applies them when it inlines wrap_with_autocast, so the graph
// says in its own casts what autocast did at run time.
//
//===----------------------------------------------------------------------===//
#ifndef GC_IMPORT_AUTOCAST_H
#define GC_IMPORT_AUTOCAST_H

#include "gc/IR/OpId.h"

#include <optional>
#include <string_view>

namespace gc {

/// The devices whose autocast rules gc knows.
enum class AutocastDevice : uint8_t { Cpu, Cuda };

/// The device named as torch.autocast's device_type ("cpu", "cuda").
std::optional<AutocastDevice> autocastDevice(std::string_view deviceType);

/// What autocast does to an op's floating-point tensor arguments.
enum class AutocastRule : uint8_t {
  Keep,    ///< nothing: the op runs in its inputs' dtypes
  Lower,   ///< float32, float16 and bfloat16 arguments cast to the region's dtype
  Float32, ///< float16 and bfloat16 arguments cast to float32 (unless the call passes a dtype)
  Widest,  ///< arguments of different floating dtypes cast to the widest of them
};

AutocastRule autocastRule(OpId op, AutocastDevice device);

} // namespace gc

#endif // GC_IMPORT_AUTOCAST_H
