//===- FileSystem.cpp - Mapped input files and atomic outputs -------------===//
#include "gc/Support/FileSystem.h"
#include "gc/Support/AtomicFile.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace gc;
namespace fs = std::filesystem;

namespace {

/// strerror text in the lowercase style of gc's other messages.
std::string describe(int err) {
  std::string s = std::strerror(err);
  // Only a capitalized word is lowered: "No such file" but not "I/O error".
  if (s.size() > 1 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'a' && s[1] <= 'z')
    s[0] = char(s[0] - 'A' + 'a');
  return s;
}

/// Reads `fd` to its end. Returns 0 or an errno value.
int readAll(int fd, std::string &out) {
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0)
      return 0;
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return errno;
    }
    out.append(buf, size_t(n));
  }
}

/// Writes all of `bytes` to `fd`. Returns 0 or an errno value.
int writeAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return errno;
    }
    bytes.remove_prefix(size_t(n));
  }
  return 0;
}

/// `p` made absolute, with symlinks of its existing prefix resolved and
/// "." and ".." folded, so that two spellings of a place compare equal.
fs::path normalized(const std::string &p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  if (ec)
    abs = p;
  fs::path canon = fs::weakly_canonical(abs, ec);
  fs::path result = (ec ? abs : canon).lexically_normal();
  // "a/b/" would count as one level deeper than "a/b".
  if (!result.has_filename() && result.has_relative_path())
    result = result.parent_path();
  return result;
}

} // namespace

Expected<std::shared_ptr<MappedFile>>
MappedFile::open(const std::string &path) {
  std::shared_ptr<MappedFile> file(new MappedFile());
  auto fail = [&](int err) -> Error {
    return makeError() << "cannot open '" << path << "': " << describe(err);
  };

  if (path == "-") {
    file->path_ = "<stdin>";
    if (int err = readAll(STDIN_FILENO, file->owned_))
      return makeError() << "cannot read standard input: " << describe(err);
    file->data_ = reinterpret_cast<const uint8_t *>(file->owned_.data());
    file->size_ = file->owned_.size();
    return file;
  }

  file->path_ = path;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return fail(err);
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return fail(EISDIR);
  }

  // Only non-empty regular files are mapped: mmap rejects length 0, and
  // pipes and devices cannot be mapped at all.
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    void *p =
        ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    int err = errno;
    ::close(fd);
    if (p == MAP_FAILED)
      return fail(err);
    file->data_ = static_cast<const uint8_t *>(p);
    file->size_ = size_t(st.st_size);
    file->mapped_ = true;
    return file;
  }

  int err = readAll(fd, file->owned_);
  ::close(fd);
  if (err)
    return makeError() << "cannot read '" << path << "': " << describe(err);
  file->data_ = reinterpret_cast<const uint8_t *>(file->owned_.data());
  file->size_ = file->owned_.size();
  return file;
}

std::shared_ptr<MappedFile> MappedFile::fromBuffer(std::string name,
                                                   std::string bytes) {
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = std::move(name);
  file->owned_ = std::move(bytes);
  file->data_ = reinterpret_cast<const uint8_t *>(file->owned_.data());
  file->size_ = file->owned_.size();
  return file;
}

MappedFile::~MappedFile() {
  if (mapped_)
    ::munmap(const_cast<uint8_t *>(data_), size_);
}

namespace {

/// A name no other writer of `path` uses: see AtomicFile.h.
std::string temporaryName(const std::string &path) {
  static const std::string host = [] {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0)
      return std::string("host");
    std::string safe;
    // Kept short, and to characters that need no quoting in a file name.
    for (const char *c = name; *c && safe.size() < 32; ++c)
      safe += std::isalnum(static_cast<unsigned char>(*c)) || *c == '-' ? *c : '_';
    return safe;
  }();
  static const uint32_t random = std::random_device{}();
  static std::atomic<unsigned> counter{0};
  char suffix[64];
  std::snprintf(suffix, sizeof suffix, "-%ld-%08x-%u", static_cast<long>(::getpid()), random,
                counter++);
  return path + ".tmp-" + host + suffix;
}

/// Copies the first `size` bytes of `from` to the end of `to`. Returns 0
/// or an errno value (EIO where `from` is shorter).
int copyPrefix(int from, uint64_t size, int to) {
  char buf[1 << 16];
  for (uint64_t pos = 0; pos < size;) {
    ssize_t n = ::pread(from, buf, std::min<uint64_t>(sizeof buf, size - pos), off_t(pos));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return n < 0 ? errno : EIO;
    if (int err = writeAll(to, std::string_view(buf, size_t(n))))
      return err;
    pos += uint64_t(n);
  }
  return 0;
}

/// Whether `bytes` are what `fd` holds at `offset`.
bool holdsAt(int fd, uint64_t offset, std::string_view bytes) {
  char buf[1 << 16];
  while (!bytes.empty()) {
    ssize_t n = ::pread(fd, buf, std::min(sizeof buf, bytes.size()), off_t(offset));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0 || std::memcmp(buf, bytes.data(), size_t(n)) != 0)
      return false;
    bytes.remove_prefix(size_t(n));
    offset += uint64_t(n);
  }
  return true;
}

} // namespace

Expected<AtomicFile> AtomicFile::create(const std::string &path) {
  auto fail = [&](const std::string &why) -> Error {
    return makeError() << "cannot write '" << path << "': " << why;
  };
  std::string dir = parentDirectory(path);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return fail("directory '" + dir + "' does not exist");
    return fail(describe(errno));
  }
  if (!S_ISDIR(st.st_mode))
    return fail("'" + dir + "' is not a directory");
  AtomicFile file(path);
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    file.existing_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } else if (::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
    // A device or a pipe (-o /dev/null, a FIFO another process reads) is
    // written in place: renaming a temporary file over it would replace
    // the node with a regular file.
    file.fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (file.fd_ < 0)
      return fail(describe(errno));
  }
  return file;
}

AtomicFile::AtomicFile(AtomicFile &&other) noexcept
    : path_(std::move(other.path_)), tmp_(std::move(other.tmp_)), fd_(other.fd_),
      existing_(other.existing_), written_(other.written_), done_(other.done_) {
  other.fd_ = other.existing_ = -1;
  other.tmp_.clear();
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() {
  if (fd_ >= 0)
    ::close(fd_);
  if (existing_ >= 0)
    ::close(existing_);
  if (!tmp_.empty() && !done_)
    ::unlink(tmp_.c_str());
  fd_ = existing_ = -1;
  tmp_.clear();
}

Error AtomicFile::fail(int err) const {
  return makeError() << "cannot write '" << path_ << "': " << describe(err);
}

Error AtomicFile::diverge() {
  if (fd_ < 0) {
    // O_EXCL: a name taken anyway (a stale file of a crashed writer that
    // happened to draw the same numbers) is skipped, never shared.
    for (int attempt = 0; fd_ < 0 && attempt < 8; ++attempt) {
      tmp_ = temporaryName(path_);
      fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ < 0 && errno != EEXIST) {
        int err = errno;
        tmp_.clear();
        return fail(err);
      }
    }
    if (fd_ < 0) {
      tmp_.clear();
      return fail(EEXIST);
    }
  }
  if (existing_ >= 0) {
    int err = copyPrefix(existing_, written_, fd_);
    ::close(existing_);
    existing_ = -1;
    if (err)
      return fail(err);
  }
  return Error::success();
}

Error AtomicFile::write(std::string_view bytes) {
  if (existing_ >= 0 && holdsAt(existing_, written_, bytes)) {
    written_ += bytes.size();
    return Error::success();
  }
  GC_RETURN_IF_ERROR(diverge());
  if (int err = writeAll(fd_, bytes))
    return fail(err);
  written_ += bytes.size();
  return Error::success();
}

Error AtomicFile::commit() {
  struct stat st;
  if (existing_ >= 0 && ::fstat(existing_, &st) == 0 && uint64_t(st.st_size) == written_) {
    done_ = true;
    discard();
    return Error::success();
  }
  GC_RETURN_IF_ERROR(diverge());
  int err = ::close(fd_) != 0 ? errno : 0;
  fd_ = -1;
  if (!err && !tmp_.empty() && ::rename(tmp_.c_str(), path_.c_str()) != 0)
    err = errno;
  if (err)
    return fail(err);
  done_ = true;
  discard();
  return Error::success();
}

Error gc::writeFileAtomic(const std::string &path, std::string_view bytes) {
  if (path == "-") {
    // Through stdio, so that text a tool printed before stays in order.
    if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() ||
        std::fflush(stdout) != 0)
      return makeError() << "cannot write to standard output: "
                         << describe(errno);
    return Error::success();
  }

  Expected<AtomicFile> file = AtomicFile::create(path);
  if (!file)
    return file.error();
  GC_RETURN_IF_ERROR(file->write(bytes));
  return file->commit();
}

std::string gc::parentDirectory(const std::string &path) {
  std::string parent = fs::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

std::string gc::relativePath(const std::string &target,
                             const std::string &fromDir) {
  fs::path to = normalized(target);
  fs::path rel = to.lexically_relative(normalized(fromDir));
  // No relative spelling exists (different roots): the absolute path works.
  return rel.empty() ? to.string() : rel.string();
}

std::string gc::resolvePath(const std::string &path,
                            const std::string &baseDir) {
  if (path == "-" || fs::path(path).is_absolute())
    return path;
  return (fs::path(baseDir) / path).lexically_normal().string();
}
