//===- FileSystem.cpp - Mapped input files and atomic outputs -------------===//
#include "gc/Support/FileSystem.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

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
bool hasContents(const std::string &path, std::string_view bytes) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<uint64_t>(st.st_size) != bytes.size())
    return false;
  std::ifstream in(path, std::ios::binary);
  std::string chunk(1 << 16, '\0');
  size_t pos = 0;
  while (in && pos < bytes.size()) {
    in.read(chunk.data(), static_cast<std::streamsize>(std::min(chunk.size(), bytes.size() - pos)));
    size_t got = static_cast<size_t>(in.gcount());
    if (got == 0 || bytes.substr(pos, got) != std::string_view(chunk.data(), got))
      return false;
    pos += got;
  }
  return pos == bytes.size();
}
} // namespace

Error gc::writeFileAtomic(const std::string &path, std::string_view bytes) {
  auto fail = [&](const std::string &why) -> Error {
    return makeError() << "cannot write '" << path << "': " << why;
  };

  if (path == "-") {
    // Through stdio, so that text a tool printed before stays in order.
    if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() ||
        std::fflush(stdout) != 0)
      return makeError() << "cannot write to standard output: "
                         << describe(errno);
    return Error::success();
  }

  // A device or a pipe (-o /dev/null, a FIFO another process reads) is
  // written in place: renaming a temporary file over it would replace the
  // device node with a regular file, and a partial write leaves no file.
  struct stat target;
  if (::stat(path.c_str(), &target) == 0 && !S_ISREG(target.st_mode) &&
      !S_ISDIR(target.st_mode)) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
      return fail(describe(errno));
    int err = writeAll(fd, bytes);
    if (::close(fd) != 0 && !err)
      err = errno;
    return err ? fail(describe(err)) : Error::success();
  }

  // A file that already holds these bytes keeps its timestamp, so that a
  // build system that restats outputs (Ninja's restat, Make's order) does
  // not rebuild what depends on it.
  if (hasContents(path, bytes))
    return Error::success();

  std::string dir = parentDirectory(path);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return fail("directory '" + dir + "' does not exist");
    return fail(describe(errno));
  }
  if (!S_ISDIR(st.st_mode))
    return fail("'" + dir + "' is not a directory");

  // The pid and a counter keep concurrent writers (processes, threads) of
  // one path from sharing a temporary file.
  static std::atomic<unsigned> counter{0};
  std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" +
                    std::to_string(counter++);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0)
    return fail(describe(errno));
  int err = writeAll(fd, bytes);
  if (::close(fd) != 0 && !err)
    err = errno;
  if (!err && ::rename(tmp.c_str(), path.c_str()) != 0)
    err = errno;
  if (err) {
    ::unlink(tmp.c_str());
    return fail(describe(err));
  }
  return Error::success();
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
