//===- ObjectCache.cpp - Kernel object code by content hash ---------------===//
#include "gc/Driver/ObjectCache.h"

#include "gc/Support/BuildId.h"
#include "gc/Support/FileSystem.h"
#include "gc/Support/SHA256.h"

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
  // The key says what was compiled and how; the build ID says which gc
  // compiled it. Without it a rebuilt gc of the same version would reuse
  // the results of its predecessor. (Packages and plans record the key
  // alone, so their bytes do not depend on the build.)
  std::string file = sha256Hex(key + "\n" + std::string(executableBuildId()));
  // Two-level fan-out keeps directories small, as git's object store does.
  return dir_ + "/objects/" + file.substr(0, 2) + "/" + file.substr(2) + ".o";
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
