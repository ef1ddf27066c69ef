//===- FileSystem.h - Mapped input files and atomic outputs -----*- C++ -*-===//
#ifndef GC_SUPPORT_FILESYSTEM_H
#define GC_SUPPORT_FILESYSTEM_H

#include "gc/Support/Error.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gc {

/// A read-only view of a whole file, memory-mapped when it is a regular
/// file, read into memory when it is stdin ("-") or a pipe.
class MappedFile {
public:
  /// Errors name `path` and say why (missing, a directory, unreadable).
  static Expected<std::shared_ptr<MappedFile>> open(const std::string &path);
  /// A file over bytes already in memory (tests, fuzzers); `name` is used in
  /// messages.
  static std::shared_ptr<MappedFile> fromBuffer(std::string name,
                                                std::string bytes);
  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  const std::string &path() const { return path_; }
  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  std::string_view text() const {
    return {reinterpret_cast<const char *>(data_), size_};
  }
  /// The open descriptor of a mapped file (kept for kernel-side copies and
  /// finding holes), or -1 for one read into memory.
  int fd() const { return fd_; }
  /// Drops the pages of [offset, offset + length) (widened to whole pages)
  /// from this process's resident memory. The bytes stay readable: the page
  /// cache keeps them, and a later read maps them again. A no-op for a file
  /// read into memory.
  void release(uint64_t offset, uint64_t length) const;

private:
  MappedFile() = default;
  std::string path_;
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  int fd_ = -1;
  std::string owned_;
};

/// A stretch of a file: data, or a hole that reads as zeros and takes no
/// disk space.
struct FileExtent {
  uint64_t offset;
  uint64_t length;
  bool hole;
};

/// [offset, offset + length) of `file` (which must contain it) split into
/// data and holes, as the file system reports them (SEEK_DATA/SEEK_HOLE);
/// one data extent where it cannot tell.
std::vector<FileExtent> fileExtents(const MappedFile &file, uint64_t offset,
                                    uint64_t length);

/// The most that scanFile hands over, and keeps mapped, at once.
inline constexpr uint64_t kScanPieceBytes = uint64_t(4) << 20;
/// Reads [offset, offset + length) of `file` (which must contain it) front
/// to back, as a hash or a checksum does: data in pieces of at most
/// kScanPieceBytes to `data`, holes (see fileExtents) as their length to
/// `hole`. Each piece's pages are released once `data` returns, so reading
/// a file of any size adds one piece at most to the peak resident memory.
void scanFile(const MappedFile &file, uint64_t offset, uint64_t length,
              const std::function<void(std::string_view)> &data,
              const std::function<void(uint64_t)> &hole);

/// Reads exactly `size` bytes of descriptor `fd` from `offset` into `out`;
/// false where the file ends first or reading fails.
bool readAt(int fd, char *out, size_t size, uint64_t offset);

/// Where bytes written front to back go.
class ByteSink {
public:
  virtual ~ByteSink() = default;
  /// Bytes written so far.
  virtual uint64_t size() const = 0;
  virtual Error write(std::string_view bytes) = 0;
  /// Appends `length` bytes of `source` from `offset`.
  virtual Error copyFrom(const MappedFile &source, uint64_t offset, uint64_t length) = 0;
};

/// Bytes gathered in memory.
class StringSink final : public ByteSink {
public:
  uint64_t size() const override { return bytes.size(); }
  Error write(std::string_view b) override {
    bytes += b;
    return Error::success();
  }
  Error copyFrom(const MappedFile &source, uint64_t offset, uint64_t length) override {
    return write(source.text().substr(offset, length));
  }
  std::string bytes;
};

/// An output written front to back and put in place whole: a regular file
/// is written to a temporary file in the same directory that commit()
/// renames over it (and that is removed if commit() never runs), so no
/// partial output is ever left behind. "-" is stdout; a device or a pipe
/// (-o /dev/null) is written in place. A missing directory is an error that
/// names it. A file that already holds exactly the bytes written is left
/// untouched (its timestamp too), so build systems that restat outputs do
/// not rebuild what depends on it.
class OutputFile final : public ByteSink {
public:
  static Expected<std::unique_ptr<OutputFile>> create(const std::string &path);
  ~OutputFile();
  OutputFile(const OutputFile &) = delete;
  OutputFile &operator=(const OutputFile &) = delete;

  const std::string &path() const { return path_; }
  uint64_t size() const override { return size_; }
  Error write(std::string_view bytes) override;
  /// Appends `length` bytes of `source` from `offset`, copied by the kernel
  /// from the source's descriptor where it can (copy_file_range, sendfile)
  /// and from its mapping otherwise. The source's holes stay holes when the
  /// output is a regular file.
  Error copyFrom(const MappedFile &source, uint64_t offset, uint64_t length) override;
  /// Puts the output in place; nothing may be written afterwards.
  Error commit();

private:
  OutputFile() = default;
  Error fail(int err) const;
  Error writeZeros(uint64_t length);
  std::string path_;
  /// The temporary file commit() renames, for a regular file's output.
  std::string tmp_;
  int fd_ = -1;
  bool toStdout_ = false;
  uint64_t size_ = 0;
  /// The output ends in a hole that commit() must still extend it over.
  bool endsInHole_ = false;
};

/// Writes `bytes` to `path` as one OutputFile.
Error writeFileAtomic(const std::string &path, std::string_view bytes);

/// The directory part of `path` ("." when it has none).
std::string parentDirectory(const std::string &path);
/// `target` expressed relative to directory `fromDir`; both are made
/// absolute and normalized first.
std::string relativePath(const std::string &target, const std::string &fromDir);
/// `path` resolved against `baseDir` unless it is absolute.
std::string resolvePath(const std::string &path, const std::string &baseDir);

} // namespace gc

#endif // GC_SUPPORT_FILESYSTEM_H
