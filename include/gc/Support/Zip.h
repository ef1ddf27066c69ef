//===- Zip.h - Reading zip archives in place --------------------*- C++ -*-===//
//
// torch.export archives (.pt2) are zip files whose entries are stored, not
// compressed, so that weights can be memory-mapped. ZipArchive reads the
// central directory and hands out views of entry data inside the mapped
// file; nothing is copied.
//
//===----------------------------------------------------------------------===//
#ifndef GC_SUPPORT_ZIP_H
#define GC_SUPPORT_ZIP_H

#include "gc/Support/Error.h"
#include "gc/Support/FileSystem.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gc {

struct ZipEntry {
  std::string name;
  uint16_t method = 0;          ///< 0 = stored, 8 = deflate
  uint64_t dataOffset = 0;      ///< where the entry's bytes start in the file
  uint64_t compressedSize = 0;
  uint64_t uncompressedSize = 0;
  uint32_t crc32 = 0;
};

class ZipArchive {
public:
  /// Reads the end-of-central-directory record (zip64 too) and every entry.
  /// Errors name the file: "not a zip archive", "truncated", an entry whose
  /// data runs past the end of the file.
  static Expected<ZipArchive> open(std::shared_ptr<MappedFile> file);

  const std::string &path() const { return file_->path(); }
  const std::vector<ZipEntry> &entries() const { return entries_; }
  /// The entry with exactly this name, or null.
  const ZipEntry *find(std::string_view name) const;
  /// The bytes of a stored entry, in place. A compressed entry is an error
  /// that names it. With `checkCrc` the CRC-32 is verified (through the
  /// file, as crc32(file, ...) reads it).
  Expected<std::string_view> read(const ZipEntry &e, bool checkCrc = false) const;
  const std::shared_ptr<MappedFile> &file() const { return file_; }

private:
  std::shared_ptr<MappedFile> file_;
  std::vector<ZipEntry> entries_;
  /// Indices into entries_, sorted by name, for find().
  std::vector<size_t> byName_;
};

/// A stretch of a zip entry's data: bytes in memory, or in the mapping of
/// `file`, from which the kernel copies them (its holes stay holes).
struct ZipPiece {
  std::string_view bytes;
  const MappedFile *file = nullptr;
};

/// Writes a zip archive with stored entries whose data start on `alignment`
/// byte boundaries (padding goes into the local header's extra field), as
/// torch.export.save does, straight to `out` (a file, for packages). Entries keep the order they
/// are added in. zip64 records are written only where a size, an offset or
/// the entry count passes the classic format's limits, so smaller archives
/// keep the classic layout byte for byte.
class ZipWriter {
public:
  explicit ZipWriter(ByteSink &out, uint32_t alignment = 64)
      : out_(out), alignment_(alignment) {}
  Error add(std::string name, std::string_view data);
  /// An entry whose data are `pieces` in order.
  Error add(std::string name, std::span<const ZipPiece> pieces);
  /// Where the data of an entry named `name` of `size` bytes would start if
  /// it were added next.
  uint64_t nextDataOffset(std::string_view name, uint64_t size) const;
  /// Writes the central directory. Nothing may be added afterwards.
  Error finish();

private:
  struct Pending {
    std::string name;
    uint64_t headerOffset;
    uint64_t size;
    uint32_t crc;
  };
  /// The local header's extra field: zip64 sizes (for `size` past the
  /// classic limit), then alignment padding.
  std::string localExtra(std::string_view name, uint64_t size) const;
  ByteSink &out_;
  uint32_t alignment_;
  std::vector<Pending> entries_;
};

/// A small archive built in memory (tests, fuzzers, probes): a ZipWriter
/// over a string, which cannot fail.
class ZipBuffer {
public:
  explicit ZipBuffer(uint32_t alignment = 64) : writer_(sink_, alignment) {}
  void add(std::string name, std::string_view data) {
    (void)writer_.add(std::move(name), data);
  }
  /// The whole archive.
  std::string finish() {
    (void)writer_.finish();
    return std::move(sink_.bytes);
  }

private:
  StringSink sink_;
  ZipWriter writer_;
};

/// The CRC-32 of `data`; with `crc`, of the bytes it is the CRC-32 of,
/// followed by `data`.
uint32_t crc32(std::string_view data, uint32_t crc = 0);
/// Whether crc32 folds with the CPU's carry-less multiplication where it has
/// it (the default); off, the portable table code runs, which tests check
/// too. The results are the same.
void useCarrylessCrc32(bool on);
/// The CRC-32 of the bytes `crc` is the CRC-32 of, followed by `count`
/// zero bytes, in O(log count) steps (sparse files' holes).
uint32_t crc32Zeros(uint32_t crc, uint64_t count);
/// crc32 of `length` bytes of `file` from `offset`, read as scanFile reads
/// them: holes are not read, and each piece's pages are released once
/// folded, so checking an entry of any size leaves it no more resident.
uint32_t crc32(const MappedFile &file, uint64_t offset, uint64_t length, uint32_t crc = 0);

} // namespace gc

#endif // GC_SUPPORT_ZIP_H
