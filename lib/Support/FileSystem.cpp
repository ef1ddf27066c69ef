//===- FileSystem.cpp - Mapped input files and atomic outputs -------------===//
#include "gc/Support/FileSystem.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <fcntl.h>
#include <sys/sendfile.h>
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
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return fail(err);
    }
    file->data_ = static_cast<const uint8_t *>(p);
    file->size_ = size_t(st.st_size);
    file->mapped_ = true;
    file->fd_ = fd;
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
  if (fd_ >= 0)
    ::close(fd_);
}

bool gc::readAt(int fd, char *out, size_t size, uint64_t offset) {
  while (size > 0) {
    ssize_t n = ::pread(fd, out, size, off_t(offset));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    out += n;
    size -= size_t(n);
    offset += uint64_t(n);
  }
  return true;
}

void MappedFile::release(uint64_t offset, uint64_t length) const {
  if (!mapped_ || length == 0)
    return;
  static const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  uint64_t begin = offset / page * page;
  uint64_t end = std::min<uint64_t>((offset + length + page - 1) / page * page, size_);
  // The mapping is private and never written, so dropping a page loses
  // nothing: its next read faults it in again from the page cache.
  (void)::madvise(const_cast<uint8_t *>(data_) + begin, end - begin, MADV_DONTNEED);
}

void gc::scanFile(const MappedFile &file, uint64_t offset, uint64_t length,
                  const std::function<void(std::string_view)> &data,
                  const std::function<void(uint64_t)> &hole) {
  for (const FileExtent &x : fileExtents(file, offset, length)) {
    if (x.hole) {
      hole(x.length);
      continue;
    }
    for (uint64_t pos = x.offset, end = x.offset + x.length; pos < end;) {
      uint64_t n = std::min(end - pos, kScanPieceBytes);
      data(file.text().substr(pos, n));
      file.release(pos, n);
      pos += n;
    }
  }
}

std::vector<FileExtent> gc::fileExtents(const MappedFile &file, uint64_t offset,
                                        uint64_t length) {
  std::vector<FileExtent> extents;
  const uint64_t end = offset + length;
  auto add = [&](uint64_t from, uint64_t to, bool hole) {
    if (to <= from)
      return;
    if (!extents.empty() && extents.back().hole == hole)
      extents.back().length += to - from;
    else
      extents.push_back({from, to - from, hole});
  };
  uint64_t pos = offset;
  while (file.fd() >= 0 && pos < end) {
    off_t data = ::lseek(file.fd(), off_t(pos), SEEK_DATA);
    if (data < 0) {
      // ENXIO: only a hole follows. Anything else: the file system cannot
      // tell, so the rest counts as data.
      add(pos, end, errno == ENXIO);
      return extents;
    }
    add(pos, std::min(end, uint64_t(data)), true);
    pos = std::min(end, uint64_t(data));
    if (pos == end)
      break;
    off_t hole = ::lseek(file.fd(), off_t(pos), SEEK_HOLE);
    uint64_t dataEnd = hole < 0 ? end : std::min(end, uint64_t(hole));
    add(pos, dataEnd, false);
    pos = dataEnd;
  }
  add(pos, end, false);
  return extents;
}

namespace {

/// Whether regular files `a` and `b`, both `size` bytes long, hold the
/// same bytes. Read through a small buffer, not mapped: they may be as
/// large as a package, and comparing must not make them resident.
bool sameContents(const std::string &a, const std::string &b, uint64_t size) {
  int fa = ::open(a.c_str(), O_RDONLY | O_CLOEXEC);
  int fb = ::open(b.c_str(), O_RDONLY | O_CLOEXEC);
  bool same = fa >= 0 && fb >= 0;
  std::string bufA(1 << 20, '\0'), bufB(bufA.size(), '\0');
  for (uint64_t pos = 0, n; same && pos < size; pos += n) {
    n = std::min<uint64_t>(size - pos, bufA.size());
    same = readAt(fa, bufA.data(), n, pos) && readAt(fb, bufB.data(), n, pos) &&
           std::memcmp(bufA.data(), bufB.data(), n) == 0;
  }
  if (fa >= 0)
    ::close(fa);
  if (fb >= 0)
    ::close(fb);
  return same;
}

/// A name for `path`'s temporary file that no other writer uses: the host
/// name, the process ID, a random number drawn once per process and a
/// counter keep apart writers on several machines sharing a folder (a
/// cache on NFS), in containers with equal PIDs, and on several threads.
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

} // namespace

Expected<std::unique_ptr<OutputFile>> OutputFile::create(const std::string &path) {
  std::unique_ptr<OutputFile> out(new OutputFile());
  out->path_ = path;
  if (path == "-") {
    out->toStdout_ = true;
    return out;
  }

  // A device or a pipe (-o /dev/null, a FIFO another process reads) is
  // written in place: renaming a temporary file over it would replace the
  // device node with a regular file, and a partial write leaves no file.
  struct stat target;
  if (::stat(path.c_str(), &target) == 0 && !S_ISREG(target.st_mode) &&
      !S_ISDIR(target.st_mode)) {
    out->fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (out->fd_ < 0)
      return out->fail(errno);
    return out;
  }

  std::string dir = parentDirectory(path);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return makeError() << "cannot write '" << path << "': directory '" << dir
                         << "' does not exist";
    return out->fail(errno);
  }
  if (!S_ISDIR(st.st_mode))
    return makeError() << "cannot write '" << path << "': '" << dir
                       << "' is not a directory";

  std::string tmp = temporaryName(path);
  out->fd_ = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (out->fd_ < 0)
    return out->fail(errno);
  out->tmp_ = std::move(tmp);
  return out;
}

OutputFile::~OutputFile() {
  if (fd_ >= 0)
    ::close(fd_);
  if (!tmp_.empty())
    ::unlink(tmp_.c_str());
}

Error OutputFile::fail(int err) const {
  if (toStdout_)
    return makeError() << "cannot write to standard output: " << describe(err);
  return makeError() << "cannot write '" << path_ << "': " << describe(err);
}

Error OutputFile::write(std::string_view bytes) {
  if (toStdout_) {
    // Through stdio, so that text a tool printed before stays in order.
    if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size())
      return fail(errno);
  } else if (int err = writeAll(fd_, bytes)) {
    return fail(err);
  }
  size_ += bytes.size();
  endsInHole_ = false;
  return Error::success();
}

Error OutputFile::writeZeros(uint64_t length) {
  // A temporary file is a regular file: skipping ahead leaves a hole.
  if (!tmp_.empty()) {
    if (::lseek(fd_, off_t(size_ + length), SEEK_SET) < 0)
      return fail(errno);
    size_ += length;
    endsInHole_ = length > 0 || endsInHole_;
    return Error::success();
  }
  static const char zeros[1 << 16] = {};
  for (uint64_t left = length; left;) {
    uint64_t n = std::min<uint64_t>(left, sizeof zeros);
    GC_RETURN_IF_ERROR(write(std::string_view(zeros, n)));
    left -= n;
  }
  return Error::success();
}

Error OutputFile::copyFrom(const MappedFile &source, uint64_t offset, uint64_t length) {
  for (const FileExtent &x : fileExtents(source, offset, length)) {
    if (x.hole) {
      GC_RETURN_IF_ERROR(writeZeros(x.length));
      continue;
    }
    uint64_t pos = x.offset, end = x.offset + x.length;
    // The kernel copies page cache to page cache: no pass through user
    // memory. copy_file_range needs a regular output, sendfile does not;
    // either may refuse a pair of files, and write() from the mapping is
    // the fallback.
    if (source.fd() >= 0 && !toStdout_) {
      bool regular = !tmp_.empty();
      while (pos < end) {
        size_t chunk = size_t(std::min<uint64_t>(end - pos, 1u << 30));
        off_t in = off_t(pos);
        ssize_t n = regular ? ::copy_file_range(source.fd(), &in, fd_, nullptr, chunk, 0)
                            : ::sendfile(fd_, source.fd(), &in, chunk);
        if (n <= 0) {
          if (n < 0 && errno == EINTR)
            continue;
          break;
        }
        pos += uint64_t(n);
        size_ += uint64_t(n);
      }
      if (pos > x.offset)
        endsInHole_ = false;
    }
    // The rest goes from the mapping, a piece at a time, each released once
    // written, so that no more than a piece of the source stays resident.
    for (uint64_t n; pos < end; pos += n) {
      n = std::min(end - pos, kScanPieceBytes);
      GC_RETURN_IF_ERROR(write(source.text().substr(pos, n)));
      source.release(pos, n);
    }
  }
  return Error::success();
}

Error OutputFile::commit() {
  if (toStdout_) {
    if (std::fflush(stdout) != 0)
      return fail(errno);
    return Error::success();
  }
  int err = 0;
  if (endsInHole_ && ::ftruncate(fd_, off_t(size_)) != 0)
    err = errno;
  if (::close(fd_) != 0 && !err)
    err = errno;
  fd_ = -1;
  if (err)
    return fail(err);
  if (tmp_.empty())
    return Error::success();
  // A file that already holds these bytes keeps its timestamp, so that a
  // build system that restats outputs (Ninja's restat, Make's order) does
  // not rebuild what depends on it.
  struct stat old;
  if (::stat(path_.c_str(), &old) == 0 && S_ISREG(old.st_mode) &&
      uint64_t(old.st_size) == size_ && sameContents(path_, tmp_, size_))
    return Error::success(); // the destructor removes the temporary file
  if (::rename(tmp_.c_str(), path_.c_str()) != 0)
    return fail(errno);
  tmp_.clear();
  return Error::success();
}

Error gc::writeFileAtomic(const std::string &path, std::string_view bytes) {
  Expected<std::unique_ptr<OutputFile>> out = OutputFile::create(path);
  if (!out)
    return out.error();
  GC_RETURN_IF_ERROR((*out)->write(bytes));
  return (*out)->commit();
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
