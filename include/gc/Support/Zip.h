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
  /// that names it. With `checkCrc` the CRC-32 is verified.
  Expected<std::string_view> read(const ZipEntry &e, bool checkCrc = false) const;
  const std::shared_ptr<MappedFile> &file() const { return file_; }

private:
  std::shared_ptr<MappedFile> file_;
  std::vector<ZipEntry> entries_;
  /// Indices into entries_, sorted by name, for find().
  std::vector<size_t> byName_;
};

/// Writes a zip archive with stored entries whose data start on `alignment`
/// byte boundaries (padding goes into the local header's extra field), as
/// torch.export.save does. Entries keep the order they are added in.
class ZipWriter {
public:
  explicit ZipWriter(uint32_t alignment = 64) : alignment_(alignment) {}
  void add(std::string name, std::string_view data);
  /// The whole archive; the writer is empty afterwards.
  std::string finish();

private:
  struct Pending {
    std::string name;
    uint64_t headerOffset;
    uint64_t size;
    uint32_t crc;
  };
  uint32_t alignment_;
  std::string out_;
  std::vector<Pending> entries_;
};

uint32_t crc32(std::string_view data);

} // namespace gc

#endif // GC_SUPPORT_ZIP_H
