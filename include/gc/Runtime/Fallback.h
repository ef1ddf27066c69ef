//===- Fallback.h - The optional fallback component -------------*- C++ -*-===//
//
// Steps no kernel and no oneDNN call covers run the reference kernel of
// their core op. That needs the compiler's IR and reference interpreter, so
// it lives in a component of its own (libgcrt_fallback.so, or linked in by
// tools): libgcrt loads it only when a plan needs it. The component reads
// the step's payload, which the runtime never looks into.
//
//===----------------------------------------------------------------------===//
#ifndef GC_RUNTIME_FALLBACK_H
#define GC_RUNTIME_FALLBACK_H

#include "gc/Runtime/StridedLayout.h"
#include "gc/Support/Error.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace gc {

/// One prepared step.
class FallbackCall {
public:
  virtual ~FallbackCall() = default;
  /// `bases` holds the base address of each view's buffer, the step's
  /// inputs first, then its outputs; `inputs` and `outputs` are the views'
  /// evaluated layouts. Errors name the step.
  virtual Error run(char *const *bases, const std::vector<StridedLayout> &inputs,
                    const std::vector<StridedLayout> &outputs) const = 0;
  /// Gives the output views' layouts for the results' sizes (binding the
  /// unbacked size symbols they carry), or an error.
  using PlaceOutputs = std::function<Expected<std::vector<StridedLayout>>(
      const std::vector<std::vector<int64_t>> &sizes)>;
  /// As run, for a step whose result sizes depend on the data (nonzero,
  /// unique): computes the results, asks `place` where they go, writes them.
  virtual Error runSized(char *const *bases, const std::vector<StridedLayout> &inputs,
                         const PlaceOutputs &place) const = 0;
};

class FallbackComponent {
public:
  virtual ~FallbackComponent() = default;
  /// The call a plan step's payload describes. `inputs` and `outputs` are
  /// the dtypes of the step's views, which the payload's must match (the
  /// runtime checked the views against their buffers, not the payload).
  virtual Expected<std::unique_ptr<FallbackCall>>
  prepare(std::span<const uint8_t> payload, const std::vector<DType> &inputs,
          const std::vector<DType> &outputs) const = 0;
};

/// The function libgcrt_fallback.so exports (C linkage, no arguments),
/// returning its component; the version in the name changes with this
/// interface.
inline constexpr const char *kFallbackEntry = "gc_fallback_component_v2";
using FallbackEntryFn = const FallbackComponent *(*)();

/// The component linked into this program (gcRuntimeFallback).
const FallbackComponent &linkedFallbackComponent();

} // namespace gc

#endif // GC_RUNTIME_FALLBACK_H
