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

/// A content hash of all of `file` for large inputs, computed on up to
/// `threads` threads (0: one per hardware thread): the SHA-256 of a fixed
/// label, the file's length and the SHA-256 digests of its consecutive
/// kSha256TreeLeafBytes pieces (the last one shorter). With a fixed piece size and the length hashed, two files
/// share it only where SHA-256 collides; it does not depend on the number of
/// threads or on the machine. Holes are hashed as zeros, whole-hole pieces
/// without reading them; every piece's pages are released once hashed.
std::array<uint8_t, 32> sha256Tree(const MappedFile &file, unsigned threads);
inline constexpr uint64_t kSha256TreeLeafBytes = uint64_t(4) << 20;

} // namespace gc

#endif // GC_SUPPORT_SHA256_H
