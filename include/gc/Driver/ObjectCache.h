//===- ObjectCache.h - Kernel object code by content hash -------*- C++ -*-===//
//
// Compiling kernels with LLVM is the slowest part of gc-codegen, and its
// result depends only on the scheduled loop graph, the target and gc's
// version. The cache keeps object code under the SHA-256 of those, one file
// per entry, so that a rebuild of an unchanged model skips LLVM. The
// compile cache keeps whole packages in the same store.
//
// Several processes, on one machine or on several sharing the folder, may
// use one cache at once without locks: an entry is written to a temporary
// file beside it and renamed into place (AtomicFile), so a reader sees a
// whole entry or none, and every entry carries its length and a checksum,
// so one damaged or cut short anyway (a crash before the data reached the
// disk, a full disk, a copy gone wrong) is a miss, never wrong output.
// docs/cache.md describes the entry format.
//
//===----------------------------------------------------------------------===//
#ifndef GC_DRIVER_OBJECTCACHE_H
#define GC_DRIVER_OBJECTCACHE_H

#include "gc/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gc {

class ObjectCache {
public:
  /// The cache in $GC_CACHE_DIR, else $XDG_CACHE_HOME/gc, else ~/.cache/gc;
  /// disabled (every lookup misses, stores do nothing) if none is set or
  /// $GC_CACHE_DIR is "off". $GC_CACHE_MAX_SIZE (bytes, or with a K, M or G
  /// suffix) limits its size (see evict).
  static ObjectCache fromEnvironment();
  static ObjectCache disabled() { return ObjectCache(""); }
  /// `maxBytes` 0: no limit.
  static ObjectCache inDirectory(std::string dir, uint64_t maxBytes = 0) {
    return ObjectCache(std::move(dir), maxBytes);
  }

  bool enabled() const { return !dir_.empty(); }
  /// The entry's bytes; none where it is missing, damaged or cut short.
  std::optional<std::string> lookup(const std::string &key) const;
  /// Streams the entry's bytes into the file `path` (replaced atomically)
  /// and returns true; false, writing nothing, where lookup would miss. The
  /// error is that of writing `path`.
  Expected<bool> lookupInto(const std::string &key, const std::string &path) const;

  /// Best effort: a cache that cannot be written is not an error.
  void store(const std::string &key, std::string_view bytes) const;
  /// Stores the file at `path`, streamed in pieces (never whole in memory);
  /// anything but a regular file (a device, a pipe) is not stored.
  /// The error says why it was not stored, for a caller that warns; it is
  /// no reason to fail.
  Error storeFile(const std::string &key, const std::string &path) const;

  /// Where the entry of `key` lies (a file that may not exist).
  std::string path(const std::string &key) const;

  /// Over the size limit, removes the least recently used entries (a hit
  /// touches its entry's mtime) until the cache holds 90% of the limit, and
  /// temporary files a crashed writer left (older than an hour). It walks
  /// the whole folder, so callers run it once per compile, not per entry.
  /// Concurrent evictions and lookups are safe: a reader keeps reading an
  /// entry removed under it, and a removed entry is a miss.
  void evict() const;

  /// A problem with the environment that leaves the cache usable (a
  /// $GC_CACHE_MAX_SIZE that is not a size: no limit), for a caller that
  /// warns; empty when there is none.
  const std::string &warning() const { return warning_; }

private:
  ObjectCache(std::string dir, uint64_t maxBytes = 0)
      : dir_(std::move(dir)), maxBytes_(maxBytes) {}
  std::string dir_;
  uint64_t maxBytes_ = 0;
  std::string warning_;
};

} // namespace gc

#endif // GC_DRIVER_OBJECTCACHE_H
