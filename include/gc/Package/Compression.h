//===- Compression.h - zstd for package sections ----------------*- C++ -*-===//
#ifndef GC_PACKAGE_COMPRESSION_H
#define GC_PACKAGE_COMPRESSION_H

#include "gc/Support/Error.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace gc {

/// The level of package sections, part of the format's determinism. 12,
/// not 19: resnet50's 1.1 MB of CUDA kernels take 0.04 s at 12 and 0.31 s
/// at 19 (a tenth of the whole GPU compile) for a frame 9% larger.
inline constexpr int kPackageZstdLevel = 12;

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
