//===- SharedLibrary.cpp - Kernels from a shared library in memory --------===//
#include "gc/Package/SharedLibrary.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace gc {

namespace {

Error writeAll(int fd, std::string_view bytes, const std::string &name) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return makeError() << name << ": cannot write the kernel library to memory: "
                         << std::strerror(errno);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Error::success();
}

std::string dlerrorText() {
  const char *e = dlerror();
  return e ? e : "unknown dlopen error";
}

} // namespace

Expected<std::unique_ptr<SharedLibrary>> SharedLibrary::load(std::string_view image,
                                                             const std::string &name) {
  int fd = memfd_create("gc-kernels", MFD_CLOEXEC);
  std::string path;
  if (fd >= 0) {
    path = "/proc/self/fd/" + std::to_string(fd);
  } else {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/gc-kernels-XXXXXX";
    fd = mkostemp(pattern.data(), O_CLOEXEC);
    if (fd < 0)
      return makeError() << name << ": cannot create a file for the kernel library: "
                         << std::strerror(errno);
    path = pattern;
  }
  bool unlinkAfterOpen = path.rfind("/proc/", 0) != 0;
  if (Error e = writeAll(fd, image, name)) {
    if (unlinkAfterOpen)
      unlink(path.c_str());
    close(fd);
    return e;
  }
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string why = handle ? "" : dlerrorText();
  if (unlinkAfterOpen)
    unlink(path.c_str());
  if (!handle) {
    close(fd);
    return makeError() << name << ": cannot load the kernel library: " << why;
  }
  return std::unique_ptr<SharedLibrary>(new SharedLibrary(handle, fd));
}

SharedLibrary::~SharedLibrary() {
  dlclose(handle_);
  close(fd_);
}

KernelEntryFn SharedLibrary::lookup(const std::string &name) const {
  return reinterpret_cast<KernelEntryFn>(dlsym(handle_, name.c_str()));
}

} // namespace gc
