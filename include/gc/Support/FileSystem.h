//===- FileSystem.h - Mapped input files and atomic outputs -----*- C++ -*-===//
#ifndef GC_SUPPORT_FILESYSTEM_H
#define GC_SUPPORT_FILESYSTEM_H

#include "gc/Support/Error.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

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

private:
  MappedFile() = default;
  std::string path_;
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  std::string owned_;
};

/// Writes `bytes` to `path` through a temporary file in the same directory
/// and a rename, so no partial output is ever left behind. "-" writes to
/// stdout. A missing directory is an error that names it. A file that
/// already holds exactly `bytes` is left untouched (its timestamp too).
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
