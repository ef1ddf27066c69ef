//===- CudaLibrariesUnavailable.cpp - Extern steps without cuBLASLt/cuDNN -===//
//
// CudaLibraries for a build that has no cuBLASLt and cuDNN support: every
// call declines, so every extern step of a CUDA graph runs on the fallback
// component, on the host.
//
//===----------------------------------------------------------------------===//
#include "CudaLibraries.h"

namespace gc {

struct CudaLibraries::Impl {};

CudaLibraries::CudaLibraries(CudaLibraryOptions) {}
CudaLibraries::~CudaLibraries() = default;

Expected<std::unique_ptr<CudaLibraryCall>>
CudaLibraries::prepare(const plan::OpStep &, const std::vector<StridedLayout> &,
                       const std::vector<StridedLayout> &) {
  return std::unique_ptr<CudaLibraryCall>();
}

std::string CudaLibraries::describe() const { return "cuBLASLt and cuDNN: not built"; }

} // namespace gc
