//===- SHA256.h - Content hashes --------------------------------*- C++ -*-===//
#ifndef GC_SUPPORT_SHA256_H
#define GC_SUPPORT_SHA256_H

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace gc {

/// Incremental SHA-256 (FIPS 180-4).
class SHA256 {
public:
  SHA256();
  void update(std::string_view data);
  std::array<uint8_t, 32> finish();
  /// Whether blocks go through the CPU's SHA instructions where it has them
  /// (the default); off, the portable code runs, which tests check too.
  static void useShaExtensions(bool on);

private:
  /// Hashes `count` whole 64-byte blocks.
  void blocks(const uint8_t *p, size_t count);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t bufLen_ = 0;
  uint64_t total_ = 0;
};

/// Lowercase hex SHA-256 of `data`.
std::string sha256Hex(std::string_view data);

class MappedFile;
/// Lowercase hex SHA-256 of `length` bytes of `file` from `offset`. The
/// file's holes are hashed as the zeros they read as, without touching
/// their pages.
std::string sha256Hex(const MappedFile &file, uint64_t offset, uint64_t length);

} // namespace gc

#endif // GC_SUPPORT_SHA256_H
