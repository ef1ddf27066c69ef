//===- AtomicFile.h - A file written in pieces, renamed into place -*- C++ -*-===//
//
// Outputs and cache entries appear whole or not at all: the bytes go to a
// temporary file in the destination's directory (the same filesystem, so
// the final rename(2) is atomic, on NFS too for a rename within one
// directory), and commit() renames it over the destination. Temporary
// names carry the host name, the process ID, a random number drawn once per
// process and a counter, so writers on several machines sharing a folder,
// in containers with equal PIDs, or on several threads never share one.
//
//===----------------------------------------------------------------------===//
#ifndef GC_SUPPORT_ATOMICFILE_H
#define GC_SUPPORT_ATOMICFILE_H

#include "gc/Support/Error.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace gc {

class AtomicFile {
public:
  /// Starts writing `path`. A regular file is (re)placed; a device or a pipe
  /// is written in place. Errors name `path` and say why (a missing
  /// directory, one that is not a directory).
  static Expected<AtomicFile> create(const std::string &path);
  AtomicFile(AtomicFile &&other) noexcept;
  AtomicFile &operator=(AtomicFile &&) = delete;
  /// An uncommitted file leaves nothing behind.
  ~AtomicFile();

  Error write(std::string_view bytes);
  /// Puts the bytes written at `path`. Where `path` already held exactly
  /// these bytes it is left untouched, timestamp included, so that a build
  /// system that restats outputs (Ninja's restat) stops there.
  Error commit();

  const std::string &path() const { return path_; }

private:
  explicit AtomicFile(std::string path) : path_(std::move(path)) {}
  Error fail(int err) const;
  /// Opens the temporary file and copies into it the prefix written so
  /// far, which still lies in the existing file.
  Error diverge();
  void discard();

  std::string path_;
  std::string tmp_;
  /// The temporary file (or the device written in place); -1 while every
  /// byte written matches the existing file, so rewriting an unchanged
  /// output writes nothing.
  int fd_ = -1;
  /// The file at `path` while the bytes written match its prefix, else -1.
  int existing_ = -1;
  uint64_t written_ = 0;
  bool done_ = false;
};

} // namespace gc

#endif // GC_SUPPORT_ATOMICFILE_H
