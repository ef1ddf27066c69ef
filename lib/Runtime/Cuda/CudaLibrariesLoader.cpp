//===- CudaLibrariesLoader.cpp - Finding a CUDA library at run time -------===//
#include "CudaLibrariesLoader.h"

#include <dlfcn.h>

#include <sstream>
#include <vector>

namespace gc {

Expected<void *> openLibrary(std::initializer_list<const char *> names,
                             const std::string &searchPath) {
  std::vector<std::string> dirs;
  std::istringstream in(searchPath);
  for (std::string dir; std::getline(in, dir, ':');)
    if (!dir.empty())
      dirs.push_back(dir);

  // What the loader said first, unless a library that was there failed to
  // load (a missing dependency, a wrong architecture): that says more.
  std::string problem;
  bool foundOne = false;
  auto tryOpen = [&](const std::string &path) -> void * {
    // RTLD_LOCAL: the symbols are reached through dlsym only, and must not
    // stand in for those of another copy the process may hold.
    void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    const char *why = h ? nullptr : dlerror();
    if (why && !foundOne) {
      bool absent = std::string(why).find("No such file") != std::string::npos;
      if (problem.empty() || !absent)
        problem = why;
      foundOne = !absent;
    }
    return h;
  };
  // A name in any directory before the next name anywhere: the versioned
  // soname, found in GC_CUDA_LIBRARY_PATH, beats an unversioned fallback
  // the system knows.
  for (const char *name : names) {
    if (void *h = tryOpen(name))
      return h;
    for (const std::string &dir : dirs)
      if (void *h = tryOpen(dir + "/" + name))
        return h;
  }

  ErrorBuilder e;
  e << "cannot load " << *names.begin();
  if (names.size() > 1) {
    e << " (or";
    for (auto it = names.begin() + 1; it != names.end(); ++it)
      e << " " << *it;
    e << ")";
  }
  e << " from the system's library path";
  if (!dirs.empty())
    e << " nor from " << kCudaLibraryPathVariable << " (" << searchPath << ")";
  else
    e << "; " << kCudaLibraryPathVariable << " may name its directory";
  if (!problem.empty())
    e << ": " << problem;
  return Error(e);
}

void *librarySymbol(void *handle, const char *symbol) { return dlsym(handle, symbol); }

} // namespace gc
