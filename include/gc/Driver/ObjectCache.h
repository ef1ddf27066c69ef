//===- ObjectCache.h - Kernel object code by content hash -------*- C++ -*-===//
//
// Compiling kernels with LLVM is the slowest part of gc-codegen, and its
// result depends only on the scheduled loop graph, the target and gc's
// version. The cache keeps object code under the SHA-256 of those, one file
// per entry, so that a rebuild of an unchanged model skips LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef GC_DRIVER_OBJECTCACHE_H
#define GC_DRIVER_OBJECTCACHE_H

#include <optional>
#include <string>

namespace gc {

class ObjectCache {
public:
  /// The cache in $GC_CACHE_DIR, else $XDG_CACHE_HOME/gc, else ~/.cache/gc;
  /// disabled (every lookup misses, stores do nothing) if none is set or
  /// $GC_CACHE_DIR is "off".
  static ObjectCache fromEnvironment();
  static ObjectCache disabled() { return ObjectCache(""); }

  bool enabled() const { return !dir_.empty(); }
  std::optional<std::string> lookup(const std::string &key) const;
  /// Best effort: a cache that cannot be written is not an error.
  void store(const std::string &key, const std::string &bytes) const;

private:
  explicit ObjectCache(std::string dir) : dir_(std::move(dir)) {}
  std::string path(const std::string &key) const;
  std::string dir_;
};

} // namespace gc

#endif // GC_DRIVER_OBJECTCACHE_H
