//===- CallerMemory.h - Which caller tensors a GPU run uses in place -*- C++ -*-===//
//
// A caller's tensor in GPU memory that is laid out exactly as the graph's
// buffer it feeds (or comes from) need not be copied: the run can read (or
// write) it where it lies, as AOTInductor's wrappers and ONNX Runtime's
// IOBinding do. Copying instead costs a launch per tensor per call, which on
// small graphs is most of the call.
//
// When a tensor is taken in place:
// - an input: its buffer is a graph input or weight that no step writes;
//   or one the graph writes (a mutated buffer) whose output the caller
//   gives in the same memory: state updated where it lies, such as a KV
//   cache, which is then never copied;
// - an output: its buffer is a graph output and its memory overlaps no
//   input's, which the steps may still read after writing it;
// - either: it starts on the executor's buffer alignment (its kernels and
//   cuBLASLt's fast algorithms are chosen for aligned operands), and holds
//   the whole buffer.
// A CUDA graph's library calls hold the addresses they were captured with
// (kernels read theirs from the tables, re-uploaded as needed), so a buffer
// a library call uses is taken in place only at the address it had in the
// last call: a caller who passes new tensors each call gets copies, not a
// new capture per call; one who reuses them (a serving loop) gets neither
// from the second call on.
//
// The decision needs no GPU, and is unit-tested on any machine.
//
//===----------------------------------------------------------------------===//
#ifndef GC_RUNTIME_CUDA_CALLERMEMORY_H
#define GC_RUNTIME_CUDA_CALLERMEMORY_H

#include "gc/Runtime/plan_generated.h"

#include <cstdint>
#include <span>
#include <vector>

namespace gc::cuda {

/// A graph buffer as the decision sees it, for the current call.
struct BufferFacts {
  plan::BufferKind kind = plan::BufferKind::Intermediate;
  uint64_t bytes = 0;
  /// A graph output views it (for an input or weight: the graph mutates it).
  bool written = false;
  /// A library call step uses it: a captured launch holds its address.
  bool heldByCalls = false;
};

/// A caller's tensor of one call.
struct CallerTensor {
  uint32_t buffer = 0;
  /// Its first byte in GPU memory; 0: not in GPU memory.
  uint64_t address = 0;
  /// How many bytes from `address` its elements reach.
  uint64_t spanBytes = 0;
  /// Laid out as its buffer's whole memory (and, for an output, of a size
  /// that does not depend on the data).
  bool asBuffer = false;
};

struct InPlace {
  std::vector<bool> inputs, outputs;
};

/// Which inputs and outputs a call uses where they lie (the rules above).
/// `lastAddress` holds, per buffer, the caller address of the previous call
/// and is updated; `alignment` is the executor's buffer alignment.
InPlace chooseInPlace(std::span<const BufferFacts> buffers, std::span<const CallerTensor> inputs,
                      std::span<const CallerTensor> outputs, bool capturing, uint64_t alignment,
                      std::vector<uint64_t> &lastAddress);

} // namespace gc::cuda

#endif
