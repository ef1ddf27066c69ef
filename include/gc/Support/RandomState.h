//===- RandomState.h - A runner's random-number generator state -*- C++ -*-===//
//
// Every runner of a graph (the interpreters, the runtime, libgcrt's
// contexts) owns one: the seed keys Philox-4x32-10, the offset is the
// counter where the next run's numbers start. A run binds the graph's
// rng_seed and rng_offset inputs to them, then the runner moves the offset
// past the numbers the run drew (docs/random.md).
//
//===----------------------------------------------------------------------===//

#ifndef GC_SUPPORT_RANDOMSTATE_H
#define GC_SUPPORT_RANDOMSTATE_H

#include <cstdint>

namespace gc {

struct RandomState {
  /// The seed a runner starts with unless told otherwise.
  static constexpr uint64_t kDefaultSeed = 0;
  uint64_t seed = kDefaultSeed;
  uint64_t offset = 0;
};

} // namespace gc

#endif // GC_SUPPORT_RANDOMSTATE_H
