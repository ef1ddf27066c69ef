//===- PackageFormat.h - Entry names shared by writer and reader -*- C++ -*-===//
#ifndef GC_PACKAGE_PACKAGEFORMAT_H
#define GC_PACKAGE_PACKAGEFORMAT_H

#include "gc/Support/Target.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gc::package {

inline constexpr const char *kFormatEntry = "archive_format";
inline constexpr const char *kVersionEntry = "version";
inline constexpr const char *kWeightsEntry = "weights";
inline constexpr const char *kMetadataEntry = "metadata.json.zst";
/// The runtime plan (formats/plan.fbs), zstd; format 2.0 replaced the
/// module's graph file (module.gcm.zst) with it.
inline constexpr const char *kPlanEntry = "plan.gcpl.zst";
/// Present in packages made with --weights=external (format 1.1): the
/// source archive's path and, per weight it holds, where (docs/package.md).
inline constexpr const char *kExternalWeightsEntry = "external_weights.json.zst";
/// In such a package, the module's weight source that stands for the
/// archive when the plan is built; source 0 is the package itself.
inline constexpr uint32_t kArchiveSource = 1;
/// Weights start on this boundary within the file.
inline constexpr uint64_t kAlignment = 64;

/// Plan graph `graph`'s kernels: a shared library for the CPU, a CUDA
/// fatbinary for NVIDIA GPUs. A graph built for several CPU levels has one
/// library per `level` (format 2.2), "kernels/<graph>.<level>.so.zst".
inline std::string kernelsEntry(size_t graph, TargetDevice device, std::string_view level = {}) {
  return "kernels/" + std::to_string(graph) + (level.empty() ? "" : "." + std::string(level)) +
         (device == TargetDevice::CUDA ? ".fatbin.zst" : ".so.zst");
}

} // namespace gc::package

#endif // GC_PACKAGE_PACKAGEFORMAT_H
