//===- StridedCopy.h - Copies between GPU tensors of any layout -*- C++ -*-===//
//
// A caller's tensor in GPU memory rarely has the layout of the graph's
// buffer it feeds or comes from (a permuted, sliced or broadcast view), so
// the CUDA executor copies it on the GPU with one kernel that takes the
// sizes and both stride vectors as arguments: gc_strided_copy, whose PTX is
// part of libgcrt (kStridedCopyPtx) and which the driver compiles for the
// GPU when a context first needs it.
//
// Why the runtime holds the kernel rather than each package: it then works
// for every CUDA package, those made before it and those whose graphs have
// no kernel of their own (library calls only); packages stay byte for byte
// what they were; and libgcrt still compiles nothing itself: the driver's
// PTX compiler, which every package's PTX already goes through on GPUs
// newer than its cubins, does it.
//
// What is decided here needs no GPU (unit-tested on any machine): whether a
// copy is one block of bytes, and the kernel's arguments otherwise.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_CUDA_STRIDEDCOPY_H
#define GC_LIB_RUNTIME_CUDA_STRIDEDCOPY_H

#include "gc/Support/Error.h"

#include <cstdint>
#include <vector>

namespace gc::cuda {

/// The most dimensions the kernel takes once dimensions that merge have
/// merged (a copy between two layouts rarely keeps more than three).
constexpr size_t kMaxCopyRank = 8;

/// How to copy the elements of `sizes` between two strided layouts.
struct StridedCopyPlan {
  int64_t numel = 0;
  /// Both layouts walk the elements in the same order without gaps: the
  /// copy is numel * elemBytes bytes from the start of each.
  bool block = false;
  /// Otherwise the kernel's dimensions, outermost first: sizes above 1
  /// only, neighbours that are contiguous on both sides merged.
  std::vector<int64_t> sizes, dstStrides, srcStrides;
};

/// Plans the copy of `sizes` elements from strides `srcStrides` to
/// `dstStrides` (elements). Zero strides (a broadcast source) are allowed;
/// an error says when more than kMaxCopyRank dimensions remain.
Expected<StridedCopyPlan> planStridedCopy(const std::vector<int64_t> &sizes,
                                          const std::vector<int64_t> &dstStrides,
                                          const std::vector<int64_t> &srcStrides);

/// gc_strided_copy's one parameter, passed by value (its PTX declares the
/// same 224 bytes): addresses, element count and size, then the plan's
/// dimensions, unused entries left 0.
struct StridedCopyArgs {
  uint64_t dst = 0, src = 0;
  uint64_t numel = 0;
  uint32_t elemBytes = 0, rank = 0;
  int64_t sizes[kMaxCopyRank] = {};
  int64_t dstStrides[kMaxCopyRank] = {};
  int64_t srcStrides[kMaxCopyRank] = {};
};
static_assert(sizeof(StridedCopyArgs) == 224, "the PTX declares 224 bytes");

/// The arguments for `plan` (not a block copy) between `dst` and `src`.
StridedCopyArgs stridedCopyArgs(const StridedCopyPlan &plan, uint64_t dst, uint64_t src,
                                unsigned elemBytes);

/// Threads per block, and the blocks of a launch (grid-stride beyond it).
constexpr unsigned kCopyBlockThreads = 256;
unsigned stridedCopyBlocks(int64_t numel);

/// The kernel's name and its PTX (ISA 7.0, sm_80: what the driver compiles
/// for any GPU gc runs on).
constexpr const char *kStridedCopyKernel = "gc_strided_copy";
extern const char *const kStridedCopyPtx;

} // namespace gc::cuda

#endif // GC_LIB_RUNTIME_CUDA_STRIDEDCOPY_H
