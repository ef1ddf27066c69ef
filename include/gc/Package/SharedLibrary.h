//===- SharedLibrary.h - Kernels from a shared library in memory -*- C++ -*-===//
//
// A package carries its kernels as a shared library. Loading it must not
// leave files behind nor need a writable directory, so the bytes go into an
// anonymous memory file (memfd) that dlopen reads through /proc/self/fd; a
// temporary file, unlinked at once, is the fallback where memfd is missing.
// No LLVM is involved.
//
//===----------------------------------------------------------------------===//
#ifndef GC_PACKAGE_SHAREDLIBRARY_H
#define GC_PACKAGE_SHAREDLIBRARY_H

#include "gc/Runtime/Runtime.h"
#include "gc/Support/Error.h"

#include <memory>
#include <string>
#include <string_view>

namespace gc {

class SharedLibrary final : public KernelLibrary {
public:
  /// Loads the library whose bytes are `image`; `name` is used in messages.
  static Expected<std::unique_ptr<SharedLibrary>> load(std::string_view image,
                                                       const std::string &name);
  ~SharedLibrary() override;
  SharedLibrary(const SharedLibrary &) = delete;
  SharedLibrary &operator=(const SharedLibrary &) = delete;

  KernelEntryFn lookup(const std::string &name) const override;

private:
  SharedLibrary(void *handle, int fd) : handle_(handle), fd_(fd) {}
  void *handle_;
  /// The memfd stays open while the library is loaded: dlopen recognizes an
  /// already loaded library by its path, and a reused descriptor number
  /// would otherwise hand a later package this library.
  int fd_;
};

} // namespace gc

#endif // GC_PACKAGE_SHAREDLIBRARY_H
