//===- CudaLibrariesLoader.h - Finding a CUDA library at run time -*- C++ -*-===//
//
// How the GPU runtime opens the libraries it never links (cuBLASLt, cuDNN):
// by soname first, so that the system's search (LD_LIBRARY_PATH, ldconfig,
// a RUNPATH) decides, then in the directories of GC_CUDA_LIBRARY_PATH, for
// installs the system does not know of (a Python environment's
// site-packages/nvidia/*/lib, say). Needs no CUDA header.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_CUDA_CUDALIBRARIESLOADER_H
#define GC_LIB_RUNTIME_CUDA_CUDALIBRARIESLOADER_H

#include "gc/Support/Error.h"

#include <initializer_list>
#include <string>

namespace gc {

/// The environment variable naming extra directories (colon-separated).
inline constexpr const char *kCudaLibraryPathVariable = "GC_CUDA_LIBRARY_PATH";

/// The handle of the first of `names` that loads, each tried as given, then
/// in each directory of `searchPath` (colon-separated; empty entries are
/// skipped), before the next name. The library stays loaded for the life
/// of the process. The error names the names, the directories searched and
/// what the loader said.
Expected<void *> openLibrary(std::initializer_list<const char *> names,
                             const std::string &searchPath);

/// `symbol` of the library `handle`, or null.
void *librarySymbol(void *handle, const char *symbol);

} // namespace gc

#endif // GC_LIB_RUNTIME_CUDA_CUDALIBRARIESLOADER_H
