//===- CudaLibraries.h - Extern steps run by cuBLASLt and cuDNN -*- C++ -*-===//
//
// The GPU counterpart of DnnlExtern.h: matrix products (cuBLASLt, with the
// bias, ReLU, GELU and residual-add epilogues it can fuse) and convolutions
// (cuDNN 9, with the bias added) on device memory. Both libraries are
// loaded at run time (dlopen), so that libgcrt links neither and still
// runs where they are missing: then every call declines and the executor
// runs the step's reference kernel instead.
//
// A call is prepared for one set of evaluated layouts and kept by the
// caller for as long as those layouts hold. Preparing needs the CUDA
// context current on the calling thread (the executor's).
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_CUDA_CUDALIBRARIES_H
#define GC_LIB_RUNTIME_CUDA_CUDALIBRARIES_H

#include "ExternCall.h"

#include "gc/Runtime/RuntimePlan.h"
#include "gc/Runtime/StridedLayout.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace gc {

/// One prepared cuBLASLt or cuDNN call.
class CudaLibraryCall : public ExternCall {
public:
  Error run(const ExternArgs &args) final {
    return enqueue(args.deviceBuffers, args.stream, args.workspace);
  }
  /// The same, for callers that hold the three arguments.
  Error run(const uint64_t *buffers, void *stream, uint64_t workspace) {
    return enqueue(buffers, stream, workspace);
  }

protected:
  /// Enqueues the call on `stream` (a CUstream). `buffers` holds the device
  /// address of every plan buffer, by index; the step's views are offsets
  /// into them. `workspace` has at least workspaceBytes() bytes.
  virtual Error enqueue(const uint64_t *buffers, void *stream, uint64_t workspace) = 0;
};

struct CudaLibraryOptions {
  /// Let float32 products and convolutions use TF32 tensor cores (torch's
  /// allow_tf32). Off: full float32 accuracy.
  bool allowTF32 = false;
};

/// The loaded libraries and their handles, shared by the calls they prepare.
/// One per executor (handles are not shared between threads).
class CudaLibraries {
public:
  explicit CudaLibraries(CudaLibraryOptions options = {});
  ~CudaLibraries();
  CudaLibraries(const CudaLibraries &) = delete;
  CudaLibraries &operator=(const CudaLibraries &) = delete;

  /// The call `step` describes (its `dnnl` is set: the same description
  /// oneDNN reads) with these evaluated layouts, or null when the library
  /// cannot do it or is not installed (a dtype it lacks, an empty tensor, a
  /// layout it refuses, a post-op sequence it cannot fuse). An error only
  /// for a library failure worth reporting (out of memory, say).
  Expected<std::unique_ptr<CudaLibraryCall>> prepare(const plan::OpStep &step,
                                                     const std::vector<StridedLayout> &inputs,
                                                     const std::vector<StridedLayout> &outputs);

  /// "cuBLASLt 13.0.2, cuDNN 9.13.0", or what is missing: for messages.
  std::string describe() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace gc

#endif // GC_LIB_RUNTIME_CUDA_CUDALIBRARIES_H
