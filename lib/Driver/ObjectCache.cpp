//===- ObjectCache.cpp - Kernel object code by content hash ---------------===//
#include "gc/Driver/ObjectCache.h"

#include "gc/Support/BuildId.h"
#include "gc/Support/FileSystem.h"
#include "gc/Support/SHA256.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gc {

namespace {

// An entry: the magic, the payload's length (u64), the payload, and the
// payload's EntryChecksum (u64); integers little-endian. The length comes
// first so that a reader rejects a file cut short before reading it; the
// checksum comes last so that a writer streams the payload in one pass.
constexpr std::string_view kMagic = "gccache1";
constexpr uint64_t kHeaderBytes = 16;
constexpr uint64_t kTrailerBytes = 8;
/// Payloads move in pieces of this size: a package never lies whole in
/// memory on its way in or out.
constexpr size_t kChunkBytes = size_t(1) << 20;

/// A fast 64-bit checksum that tells a whole entry from a damaged one. Not
/// a defence against forgery: whoever can write the cache folder can put
/// any package there anyway. Four lanes of multiply-rotate over 64-bit
/// words, independent of each other so that they run in parallel (several
/// GB/s, far faster than the SHA-256 the key needs), folded with the length.
class EntryChecksum {
public:
  void update(std::string_view bytes) {
    total_ += bytes.size();
    if (pending_ > 0) {
      size_t take = std::min(bytes.size(), sizeof block_ - pending_);
      std::memcpy(block_ + pending_, bytes.data(), take);
      pending_ += take;
      bytes.remove_prefix(take);
      if (pending_ < sizeof block_)
        return;
      mix(block_);
      pending_ = 0;
    }
    for (; bytes.size() >= sizeof block_; bytes.remove_prefix(sizeof block_))
      mix(bytes.data());
    std::memcpy(block_, bytes.data(), bytes.size());
    pending_ = bytes.size();
  }

  uint64_t finish() {
    if (pending_ > 0) {
      std::memset(block_ + pending_, 0, sizeof block_ - pending_);
      mix(block_);
    }
    uint64_t h = total_;
    for (uint64_t lane : lanes_)
      h = std::rotl(h ^ lane, 27) * kMultiplier;
    return h ^ (h >> 32);
  }

private:
  static constexpr uint64_t kMultiplier = 0x9E3779B97F4A7C15ull;

  void mix(const char *block) {
    for (int i = 0; i < 4; ++i) {
      uint64_t word;
      std::memcpy(&word, block + 8 * i, 8);
      lanes_[i] = std::rotl((lanes_[i] ^ word) * kMultiplier, 29);
    }
  }

  uint64_t lanes_[4] = {1, 2, 3, 4};
  char block_[32];
  size_t pending_ = 0;
  uint64_t total_ = 0;
};

static_assert(std::endian::native == std::endian::little,
              "entries store integers as the host does: little-endian");

std::string_view asBytes(const uint64_t &v) { return {reinterpret_cast<const char *>(&v), 8}; }

/// Streams the payload of the entry in `fd` to `sink`; true where the
/// entry is whole. A sink may have seen the bytes of a damaged entry by
/// then, so it must not act on them before this returns true.
Expected<bool> streamEntry(int fd, const std::function<Error(std::string_view)> &sink) {
  char header[kHeaderBytes];
  struct stat st;
  if (::fstat(fd, &st) != 0 || !readAt(fd, header, sizeof header, 0) ||
      std::string_view(header, kMagic.size()) != kMagic)
    return false;
  uint64_t size;
  std::memcpy(&size, header + 8, 8);
  if (uint64_t(st.st_size) < kHeaderBytes + kTrailerBytes ||
      uint64_t(st.st_size) - kHeaderBytes - kTrailerBytes != size)
    return false;
  EntryChecksum checksum;
  std::string chunk(std::min<uint64_t>(kChunkBytes, size), '\0');
  for (uint64_t pos = 0; pos < size;) {
    size_t n = size_t(std::min<uint64_t>(chunk.size(), size - pos));
    if (!readAt(fd, chunk.data(), n, kHeaderBytes + pos))
      return false;
    std::string_view piece(chunk.data(), n);
    checksum.update(piece);
    GC_RETURN_IF_ERROR(sink(piece));
    pos += n;
  }
  uint64_t stored;
  if (!readAt(fd, reinterpret_cast<char *>(&stored), 8, kHeaderBytes + size) ||
      stored != checksum.finish())
    return false;
  // Used now, for evict's least-recently-used order (atime is unreliable:
  // relatime and noatime mounts). A read-only cache stays usable.
  (void)::futimens(fd, nullptr);
  return true;
}

/// The entry at `file`, streamed to `sink` as streamEntry does; false
/// where it does not exist.
Expected<bool> streamEntryFile(const std::string &file,
                               const std::function<Error(std::string_view)> &sink) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  Expected<bool> whole = streamEntry(fd, sink);
  ::close(fd);
  return whole;
}

/// Writes an entry at `file` whose payload `fill` passes, in pieces, to
/// the function it is given.
Error writeEntry(const std::string &file, uint64_t size,
                 const std::function<Error(const std::function<Error(std::string_view)> &)> &fill) {
  // Concurrent stores create the same fan-out directories, so failing to
  // make one is no failure in itself: one that is still missing is, as
  // OutputFile reports.
  std::error_code ec;
  std::filesystem::create_directories(parentDirectory(file), ec);
  Expected<std::unique_ptr<OutputFile>> created = OutputFile::create(file);
  if (!created)
    return created.error();
  OutputFile *out = created->get();
  GC_RETURN_IF_ERROR(out->write(kMagic));
  GC_RETURN_IF_ERROR(out->write(asBytes(size)));
  EntryChecksum checksum;
  uint64_t written = 0;
  GC_RETURN_IF_ERROR(fill([&](std::string_view piece) {
    checksum.update(piece);
    written += piece.size();
    return out->write(piece);
  }));
  if (written != size)
    return makeError() << "cannot write '" << file << "': the payload changed size";
  uint64_t sum = checksum.finish();
  GC_RETURN_IF_ERROR(out->write(asBytes(sum)));
  // No fsync: a crash that loses data renamed into place leaves an entry
  // whose length or checksum is wrong, which is a miss.
  return out->commit();
}

/// `text` as a byte count: digits, then optionally K, M or G (binary).
std::optional<uint64_t> parseSize(std::string_view text) {
  uint64_t value = 0;
  size_t i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (value > (UINT64_MAX - 9) / 10)
      return std::nullopt;
    value = value * 10 + uint64_t(text[i] - '0');
  }
  if (i == 0)
    return std::nullopt;
  std::string_view suffix = text.substr(i);
  int shift = suffix.empty() ? 0 : suffix == "K" ? 10 : suffix == "M" ? 20 : suffix == "G" ? 30 : -1;
  if (shift < 0 || value > (UINT64_MAX >> shift))
    return std::nullopt;
  return value << shift;
}

} // namespace

ObjectCache ObjectCache::fromEnvironment() {
  ObjectCache cache("");
  if (const char *dir = std::getenv("GC_CACHE_DIR"); dir && *dir)
    cache.dir_ = std::string(dir) == "off" ? "" : dir;
  else if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    cache.dir_ = std::string(xdg) + "/gc";
  else if (const char *home = std::getenv("HOME"); home && *home)
    cache.dir_ = std::string(home) + "/.cache/gc";
  if (const char *max = std::getenv("GC_CACHE_MAX_SIZE"); max && *max && cache.enabled()) {
    if (std::optional<uint64_t> bytes = parseSize(max))
      cache.maxBytes_ = *bytes;
    else
      cache.warning_ = "GC_CACHE_MAX_SIZE='" + std::string(max) +
                       "' is not a size (bytes, or a number with K, M or G); the cache is "
                       "not limited";
  }
  return cache;
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
  std::string bytes;
  Expected<bool> whole = streamEntryFile(path(key), [&](std::string_view piece) {
    bytes += piece;
    return Error::success();
  });
  if (!whole || !*whole)
    return std::nullopt;
  return bytes;
}

Expected<bool> ObjectCache::lookupInto(const std::string &key, const std::string &path) const {
  if (!enabled())
    return false;
  // The output is opened only for an entry that exists, and replaced only
  // when the entry proved whole: a damaged one leaves it as it was.
  std::unique_ptr<OutputFile> out;
  Error outError = Error::success();
  Expected<bool> whole = streamEntryFile(this->path(key), [&](std::string_view piece) -> Error {
    if (!out) {
      Expected<std::unique_ptr<OutputFile>> created = OutputFile::create(path);
      if (!created)
        return outError = created.error();
      out = created.take();
    }
    if (Error e = out->write(piece))
      return outError = e;
    return Error::success();
  });
  if (outError)
    return outError;
  if (!whole || !*whole)
    return false;
  if (!out) {
    // An empty payload: nothing was streamed.
    Expected<std::unique_ptr<OutputFile>> created = OutputFile::create(path);
    if (!created)
      return created.error();
    out = created.take();
  }
  GC_RETURN_IF_ERROR(out->commit());
  return true;
}

void ObjectCache::store(const std::string &key, std::string_view bytes) const {
  if (enabled())
    (void)writeEntry(path(key), bytes.size(),
                     [&](const std::function<Error(std::string_view)> &sink) { return sink(bytes); });
}

Error ObjectCache::storeFile(const std::string &key, const std::string &path) const {
  if (!enabled())
    return Error::success();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    Error e = makeError() << "cannot read '" << path << "': " << std::strerror(errno);
    if (fd >= 0)
      ::close(fd);
    return e;
  }
  // A device or a pipe (-o /dev/null) cannot be read back: nothing to store.
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error::success();
  }
  Error e = writeEntry(this->path(key), uint64_t(st.st_size),
                       [&](const std::function<Error(std::string_view)> &sink) -> Error {
    std::string chunk(kChunkBytes, '\0');
    for (uint64_t pos = 0;; ) {
      ssize_t n = ::pread(fd, chunk.data(), chunk.size(), off_t(pos));
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return makeError() << "cannot read '" << path << "': " << std::strerror(errno);
      if (n == 0)
        return Error::success();
      GC_RETURN_IF_ERROR(sink(std::string_view(chunk.data(), size_t(n))));
      pos += uint64_t(n);
    }
  });
  ::close(fd);
  return e;
}

void ObjectCache::evict() const {
  namespace fs = std::filesystem;
  if (!enabled() || maxBytes_ == 0)
    return;
  struct Entry {
    fs::file_time_type used;
    uint64_t size;
    fs::path path;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  const auto staleBefore = fs::file_time_type::clock::now() - std::chrono::hours(1);
  std::error_code ec;
  // Files vanish while the walk runs (other processes evict too); each
  // error skips one file, or ends the walk early.
  for (fs::recursive_directory_iterator it(dir_ + "/objects", ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code fileEc;
    if (!it->is_regular_file(fileEc))
      continue;
    Entry e{it->last_write_time(fileEc), it->file_size(fileEc), it->path()};
    if (fileEc)
      continue;
    if (e.path.extension() != ".o") {
      if (e.used < staleBefore)
        fs::remove(e.path, fileEc);
      continue;
    }
    total += e.size;
    entries.push_back(std::move(e));
  }
  if (total <= maxBytes_)
    return;
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    return a.used != b.used ? a.used < b.used : a.path < b.path;
  });
  // Down to 90%, so that the stores that follow do not each evict.
  const uint64_t target = maxBytes_ - maxBytes_ / 10;
  for (const Entry &e : entries) {
    if (total <= target)
      break;
    std::error_code removeEc;
    fs::remove(e.path, removeEc);
    total -= e.size;
  }
}

} // namespace gc
