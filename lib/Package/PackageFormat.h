//===- PackageFormat.h - Entry names shared by writer and reader -*- C++ -*-===//
#ifndef GC_LIB_PACKAGE_PACKAGEFORMAT_H
#define GC_LIB_PACKAGE_PACKAGEFORMAT_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace gc::package {

inline constexpr const char *kFormatEntry = "archive_format";
inline constexpr const char *kVersionEntry = "version";
inline constexpr const char *kWeightsEntry = "weights";
inline constexpr const char *kMetadataEntry = "metadata.json.zst";
inline constexpr const char *kModuleEntry = "module.gcm.zst";
/// Weights start on this boundary within the file.
inline constexpr uint64_t kAlignment = 64;
/// The classic zip format's limit (no zip64 yet).
inline constexpr uint64_t kMaxArchiveBytes = 0xFFFFFFFFull;

inline std::string kernelsEntry(size_t graph) {
  return "kernels/" + std::to_string(graph) + ".so.zst";
}

} // namespace gc::package

#endif // GC_LIB_PACKAGE_PACKAGEFORMAT_H
