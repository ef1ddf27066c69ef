//===- CudaToolkit.h - The CUDA toolkit's tools, run as programs -*- C++ -*-===//
#ifndef GC_LIB_CODEGEN_CUDATOOLKIT_H
#define GC_LIB_CODEGEN_CUDATOOLKIT_H

#include "gc/Support/Error.h"

#include <span>
#include <string>
#include <string_view>

namespace gc {

/// The toolkit's directory: $CUDA_HOME, else the one CMake found
/// (GC_CUDA_HOME, default /usr/local/cuda).
std::string cudaToolkitDir();

/// The path of a toolkit file (`relative` to its directory), or the error
/// "compiling for cuda needs the CUDA toolkit's <what>: not found in
/// <dir>; set CUDA_HOME".
Expected<std::string> cudaToolkitFile(std::string_view relative, std::string_view what);

/// What `ptxas --version` prints (the toolkit's release), or "" when there
/// is no ptxas: part of the object cache's key, so that code assembled by
/// another toolkit is not reused. Run once per process and directory.
std::string cudaToolkitVersion();

/// Checks that ptxas and fatbinary are there, before any work is done.
Error checkCudaAssemblers();

/// PTX for the architectures from `arch` on (compute capability times ten).
struct PtxImage {
  int arch = 0;
  std::string text;
};

/// Assembles with ptxas, for every architecture in `archs` (lowest first),
/// the image of `images` (lowest `arch` first, the first one's no higher
/// than archs' first) with the highest `arch` not above it, and bundles the
/// cubins and every image's PTX (which newer GPUs compile at load time)
/// with fatbinary. Temporary files live in a private directory that is
/// removed afterwards. Errors quote the tool's messages.
/// `optimization` is ptxas's -O level (0 to 3).
Expected<std::string> assembleFatbinary(std::span<const PtxImage> images,
                                        std::span<const int> archs, int optimization = 3);

} // namespace gc

#endif // GC_LIB_CODEGEN_CUDATOOLKIT_H
