//===- Target.h - What a plan's kernels run on ------------------*- C++ -*-===//
//
// A plan's target names the machine its kernels need: a CPU level
// ("x86-64-v3") or NVIDIA GPUs, written "cuda:" and the architectures the
// kernels were built for ("cuda:sm_80,sm_90"). The compiler writes it, the
// runtime reads it; both go through this one spelling.
//
//===----------------------------------------------------------------------===//
#ifndef GC_SUPPORT_TARGET_H
#define GC_SUPPORT_TARGET_H

#include "gc/Support/Error.h"

#include <string>
#include <string_view>
#include <vector>

namespace gc {

/// Where a plan's kernels run.
enum class TargetDevice : uint8_t { CPU, CUDA };

/// The prefix of a CUDA target.
inline constexpr std::string_view kCudaTargetPrefix = "cuda:";

/// The GPU architectures gc builds for when none are named.
inline constexpr std::string_view kDefaultGpuArchs = "sm_80,sm_90";

inline TargetDevice targetDevice(std::string_view target) {
  return target.substr(0, kCudaTargetPrefix.size()) == kCudaTargetPrefix ? TargetDevice::CUDA
                                                                          : TargetDevice::CPU;
}

/// The architectures of a CUDA target, as compute capabilities times ten
/// (sm_90 is 90), in the order written. Errors name a malformed entry.
Expected<std::vector<int>> cudaArchs(std::string_view target);

/// "cuda:sm_80,sm_90" from a --gpu-arch list ("sm_80,sm_90" or "80,90"),
/// sorted and without repeats; errors for an architecture gc cannot build
/// for (below sm_75, which CUDA 13 dropped, or above what LLVM 16's NVPTX
/// backend knows).
Expected<std::string> cudaTarget(std::string_view archList);

} // namespace gc

#endif // GC_SUPPORT_TARGET_H
