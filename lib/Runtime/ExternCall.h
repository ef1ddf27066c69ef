//===- ExternCall.h - A prepared library call of an extern step -*- C++ -*-===//
//
// An extern step (a matrix product, a convolution, the fused attention)
// runs as a call that its device's executor prepares for one set of
// evaluated layouts and keeps in the step's instance for as long as those
// layouts hold: a oneDNN primitive or the runtime's own attention step on
// the CPU (DnnlExtern.h, AttentionStep.h), a cuBLASLt or cuDNN call on a
// GPU (CudaLibraries.h). What the executors share (ExecutorBase.h) sees
// only this interface; each executor fills in its device's part of the
// arguments.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_EXTERNCALL_H
#define GC_LIB_RUNTIME_EXTERNCALL_H

#include "gc/Support/Error.h"

#include <cstdint>

namespace gc {

/// The layout reorders of activations one call ran (those of constant
/// weights, made once, are not counted), for the profile.
struct ExternReorders {
  int64_t count = 0;
  double seconds = 0;
};

/// What a call runs on: the address of every plan buffer, by index (the
/// step's views are offsets into them), in the memory of the call's device.
struct ExternArgs {
  /// On the CPU: host addresses.
  char *const *hostBuffers = nullptr;
  /// On a GPU: device addresses, the stream the call is enqueued on (a
  /// CUstream), and device scratch memory of the call's workspaceBytes().
  const uint64_t *deviceBuffers = nullptr;
  void *stream = nullptr;
  uint64_t workspace = 0;
  /// Where given, the call adds the reorders it ran.
  ExternReorders *reorders = nullptr;
};

/// One prepared extern call.
class ExternCall {
public:
  virtual ~ExternCall() = default;
  /// Device scratch memory run() needs (0: none).
  virtual uint64_t workspaceBytes() const { return 0; }
  /// Runs the call (on a GPU: enqueues it).
  virtual Error run(const ExternArgs &args) = 0;
};

} // namespace gc

#endif // GC_LIB_RUNTIME_EXTERNCALL_H
