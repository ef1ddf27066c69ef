//===- FallbackPayload.h - What a fallback step carries ---------*- C++ -*-===//
//
// A plan's op step carries, for the optional fallback component, the loop
// node it came from as a one-node graph file: a Loops-level module whose
// graph has one buffer per view of the node (its inputs, then its outputs)
// and the node, reading and writing those buffers. The runtime hands the
// component each view's buffer base in that order. Both directions live
// here, so that writer and reader cannot disagree.
//
//===----------------------------------------------------------------------===//
#ifndef GC_RUNTIMEFALLBACK_FALLBACKPAYLOAD_H
#define GC_RUNTIMEFALLBACK_FALLBACKPAYLOAD_H

#include "gc/IR/LoopIR.h"
#include "gc/Support/Error.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace gc {

/// The payload of an Extern or Fallback node of a module.
std::string encodeFallbackPayload(const LoopNode &node);

/// The module a payload holds, checked to be one node over its views.
Expected<std::unique_ptr<Module>> decodeFallbackPayload(std::span<const uint8_t> payload);

} // namespace gc

#endif // GC_RUNTIMEFALLBACK_FALLBACKPAYLOAD_H
