//===- Target.h - What a plan's kernels run on ------------------*- C++ -*-===//
//
// A plan's target names the machine its kernels need: CPU levels, one or
// several ("x86-64-v3" or "x86-64-v3,x86-64-v4": the kernels were built once
// per level and any one of them runs), or NVIDIA GPUs, written "cuda:" and
// the architectures the kernels were built for ("cuda:sm_80,sm_90"). The
// compiler writes it, the runtime reads it; both go through this one
// spelling.
//
//===----------------------------------------------------------------------===//
#ifndef GC_SUPPORT_TARGET_H
#define GC_SUPPORT_TARGET_H

#include "gc/Support/Error.h"

#include <array>
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

/// The CPU levels gc builds for, lowest first: a CPU that runs one runs
/// those before it (the x86-64 psABI's microarchitecture levels).
inline constexpr std::array<std::string_view, 3> kCpuLevels = {"x86-64", "x86-64-v3",
                                                                "x86-64-v4"};

/// What gc-codegen and gc-compile build for unless told: a package that
/// runs on any CPU of level v3 and uses AVX-512 where the CPU has it.
inline constexpr std::string_view kDefaultCpuTargets = "x86-64-v3,x86-64-v4";

/// The environment variable that makes the runtime load the kernels of
/// this CPU level rather than the best one the CPU runs.
inline constexpr const char *kCpuTargetEnv = "GC_CPU_TARGET";

/// The CPU targets of a list ("x86-64-v4,x86-64-v3", empty entries and
/// repeats allowed), lowest level first and without repeats. "native"
/// (this machine, whatever it is) may only stand alone. Errors name an
/// unknown entry.
Expected<std::vector<std::string>> cpuTargetList(std::string_view list);

/// `targets` as a target string: comma-separated, in order.
std::string joinTargets(const std::vector<std::string> &targets);

/// The highest of kCpuLevels this CPU runs, as CPUID and the operating
/// system's saved register state say.
std::string_view hostCpuLevel();

/// Which of a CPU plan's targets to load on this machine: the highest level
/// the CPU runs, or the one $GC_CPU_TARGET names. Errors say which targets
/// `targets` holds and what the CPU runs, when the CPU runs none of them,
/// or when the forced one is not among them or not runnable here.
Expected<std::string> selectCpuTarget(std::string_view targets);

} // namespace gc

#endif // GC_SUPPORT_TARGET_H
