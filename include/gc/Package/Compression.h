//===- Compression.h - zstd for package sections ----------------*- C++ -*-===//
#ifndef GC_PACKAGE_COMPRESSION_H
#define GC_PACKAGE_COMPRESSION_H

#include "gc/Support/Error.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace gc {

/// The level of package sections: small artifacts, and part of the
/// format's determinism.
inline constexpr int kPackageZstdLevel = 19;

/// One zstd frame holding `data`, with its size in the frame header. The
/// bytes depend only on `data` and `level` (single thread).
std::string compressZstd(std::string_view data, int level = kPackageZstdLevel);

/// The contents of the single zstd frame `frame`. The frame must declare its
/// size, which must be at most `maxSize`; anything else is an error naming
/// `what`.
Expected<std::string> decompressZstd(std::string_view frame, uint64_t maxSize,
                                     const std::string &what);

} // namespace gc

#endif // GC_PACKAGE_COMPRESSION_H
