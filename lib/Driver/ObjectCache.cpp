//===- ObjectCache.cpp - Kernel object code by content hash ---------------===//
#include "gc/Driver/ObjectCache.h"

#include "gc/Support/FileSystem.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gc {

ObjectCache ObjectCache::fromEnvironment() {
  if (const char *dir = std::getenv("GC_CACHE_DIR"); dir && *dir)
    return ObjectCache(std::string(dir) == "off" ? "" : dir);
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return ObjectCache(std::string(xdg) + "/gc");
  if (const char *home = std::getenv("HOME"); home && *home)
    return ObjectCache(std::string(home) + "/.cache/gc");
  return disabled();
}

std::string ObjectCache::path(const std::string &key) const {
  // Two-level fan-out keeps directories small, as git's object store does.
  return dir_ + "/objects/" + key.substr(0, 2) + "/" + key.substr(2) + ".o";
}

std::optional<std::string> ObjectCache::lookup(const std::string &key) const {
  if (!enabled())
    return std::nullopt;
  std::ifstream in(path(key), std::ios::binary);
  if (!in)
    return std::nullopt;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void ObjectCache::store(const std::string &key, const std::string &bytes) const {
  if (!enabled())
    return;
  std::error_code ec;
  std::filesystem::create_directories(parentDirectory(path(key)), ec);
  if (!ec)
    (void)writeFileAtomic(path(key), bytes);
}

} // namespace gc
