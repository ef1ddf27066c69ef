//===- Package.h - Deployable packages --------------------------*- C++ -*-===//
//
// A package (.gcpkg) is what gc-package makes from a Kernels-level module: a
// zip archive, in the manner of torch.export's .pt2, holding everything a
// deployment needs and nothing it does not (docs/package.md):
//
//   archive_format       "gc-package"
//   version              "<major>.<minor>"
//   weights              every weight, each 64-byte aligned, never compressed
//                        (with --weights=external: only those the source
//                        archive does not hold)
//   metadata.json.zst    inputs, outputs, symbols, versions, target, flags
//   plan.gcpl.zst        the runtime plan (formats/plan.fbs): all libgcrt
//                        reads to run the graphs
//   kernels/<i>.so.zst   loop graph i's kernels, linked as a shared library
//   kernels/<i>.fatbin.zst  for a graph compiled for CUDA: its kernels as a
//                        fatbinary, which the NVIDIA driver loads (docs/gpu.md)
//   external_weights.json.zst   --weights=external only: the source archive
//                        and, per weight it holds, entry, offset, size,
//                        dtype, shape and SHA-256
//
// Entries are stored and 64-byte aligned, so the weights are used in place
// in the mapped file. The plan's weights give their offsets in the file.
//
// This header says what every package is; PackageWriter.h makes them (the
// compiler's side) and PackageReader.h opens and runs them (libgcrt's side),
// in two libraries.
//
//===----------------------------------------------------------------------===//
#ifndef GC_PACKAGE_PACKAGE_H
#define GC_PACKAGE_PACKAGE_H

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gc {

/// The format this build writes. A reader accepts the same major version
/// and any minor version up to its own.
inline constexpr const char *kPackageFormat = "gc-package";
/// 1.1 added external weights (an external_weights.json.zst entry); 2.0
/// replaced the module's graph file with the runtime plan; 2.1 added the
/// constant program (weights computed at load time, plan 1.2); 2.2 added
/// kernels for several CPU levels, one library per graph and level (plan
/// 1.3).
inline constexpr uint32_t kPackageMajor = 2;
inline constexpr uint32_t kPackageMinor = 2;

/// Where an external weight lies in the source archive, as the
/// external_weights entry records it.
struct ExternalWeight {
  std::string name;
  std::string entry;   ///< the archive's zip entry
  uint64_t entryBytes = 0; ///< the entry's size, which another archive must match
  uint64_t offset = 0; ///< within the entry's data
  uint64_t bytes = 0;
  std::string sha256;
  /// The CRC-32 of the whole entry when the package was made, which libgcrt
  /// checks at load (faster than the SHA-256, which readers before it
  /// check); absent in packages made before it.
  std::optional<uint32_t> entryCrc32;
};

/// True if `bytes` start like a package (a zip whose first entry is
/// archive_format); a cheap test for tools that take any kind of file.
bool isPackage(std::span<const uint8_t> bytes);

} // namespace gc

#endif // GC_PACKAGE_PACKAGE_H
