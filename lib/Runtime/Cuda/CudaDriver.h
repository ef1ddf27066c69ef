//===- CudaDriver.h - The CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// libgcrt must load and run CPU packages where no NVIDIA driver is
// installed, so it never links libcuda: the driver is opened with dlopen the
// first time a CUDA plan graph needs it, and the functions gc calls are
// looked up once into a table. The types below are the driver API's own
// (cuda.h), declared here so that building gc needs no CUDA headers: the
// driver's C ABI is stable, and each function is resolved under the
// versioned name cuda.h maps it to (cuMemAlloc is cuMemAlloc_v2).
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_CUDA_CUDADRIVER_H
#define GC_LIB_RUNTIME_CUDA_CUDADRIVER_H

#include "gc/Runtime/Runtime.h"
#include "gc/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace gc::cuda {

using Result = int;
using Device = int;
/// CUdeviceptr is an unsigned long long; uint64_t has its size and calling
/// convention on the 64-bit platforms the driver supports, and is what
/// CudaLibraryCall takes.
using DevicePtr = uint64_t;
using Context = struct CUctx_st *;
using Module = struct CUmod_st *;
using Function = struct CUfunc_st *;
using Stream = struct CUstream_st *;
using Graph = struct CUgraph_st *;
using GraphExec = struct CUgraphExec_st *;
using Event = struct CUevent_st *;

/// The CUresult values gc tells apart.
enum : Result {
  Success = 0,
  ErrorOutOfMemory = 2,
  ErrorNoDevice = 100,
  ErrorInvalidDevice = 101,
  ErrorNoBinaryForGpu = 209,
  ErrorNotFound = 500,
};
/// CUdevice_attribute, CUfunction_attribute and flag values gc passes.
enum : int {
  AttrMultiprocessorCount = 16,
  AttrClockRate = 13,
  AttrMemoryClockRate = 36,
  AttrGlobalMemoryBusWidth = 37,
  AttrComputeCapabilityMajor = 75,
  AttrComputeCapabilityMinor = 76,
  FuncAttrMaxThreadsPerBlock = 0,
  FuncAttrPtxVersion = 5,
  LaunchAttrProgrammaticStreamSerialization = 6,
  StreamNonBlocking = 1,
  CaptureModeThreadLocal = 1,
  EventDisableTiming = 2,
};

/// CUlaunchAttribute and CUlaunchConfig, cuLaunchKernelEx's argument.
struct LaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    int programmaticStreamSerializationAllowed;
  } value;
};
struct LaunchConfig {
  unsigned gridX, gridY, gridZ;
  unsigned blockX, blockY, blockZ;
  unsigned sharedBytes;
  Stream stream;
  LaunchAttribute *attrs;
  unsigned numAttrs;
};

/// A kernel of gc's and whether it may start early: with programmatic
/// dependent launch (sm_90 on) its blocks may be scheduled as soon as the
/// kernel before it on the stream has started all of its own, so that its
/// launch, and whatever it does before it reads another kernel's results
/// (the few-row product's first weight loads), overlaps that kernel's end.
/// Only code that waits for its predecessor at entry may (griddepcontrol.wait,
/// which gc's kernels built for sm_90 and later run: earlyCapable()).
struct Kernel {
  Function fn = nullptr;
  bool early = false;
};

/// The launch shape of a kernel: a grid of gridX x gridY blocks of
/// `threads` threads, no dynamic shared memory.
struct LaunchShape {
  unsigned gridX = 1, gridY = 1, threads = 1;
};

/// The driver functions gc calls.
struct Driver {
  Result (*init)(unsigned flags);
  Result (*driverGetVersion)(int *version);
  Result (*getErrorName)(Result, const char **name);
  Result (*getErrorString)(Result, const char **text);
  Result (*deviceGetCount)(int *count);
  Result (*deviceGet)(Device *device, int ordinal);
  Result (*deviceGetName)(char *name, int length, Device device);
  Result (*deviceGetAttribute)(int *value, int attribute, Device device);
  Result (*deviceTotalMem)(size_t *bytes, Device device);
  Result (*primaryCtxRetain)(Context *ctx, Device device);
  Result (*primaryCtxRelease)(Device device);
  Result (*ctxSetCurrent)(Context ctx);
  Result (*moduleLoadData)(Module *module, const void *image);
  Result (*moduleUnload)(Module module);
  Result (*moduleGetFunction)(Function *fn, Module module, const char *name);
  Result (*funcGetAttribute)(int *value, int attribute, Function fn);
  Result (*memAlloc)(DevicePtr *ptr, size_t bytes);
  Result (*memFree)(DevicePtr ptr);
  Result (*memcpyHtoDAsync)(DevicePtr dst, const void *src, size_t bytes, Stream stream);
  Result (*memcpyDtoHAsync)(void *dst, DevicePtr src, size_t bytes, Stream stream);
  Result (*memcpyDtoDAsync)(DevicePtr dst, DevicePtr src, size_t bytes, Stream stream);
  Result (*memsetD8Async)(DevicePtr dst, unsigned char value, size_t bytes, Stream stream);
  Result (*launchKernel)(Function fn, unsigned gridX, unsigned gridY, unsigned gridZ,
                         unsigned blockX, unsigned blockY, unsigned blockZ, unsigned sharedBytes,
                         Stream stream, void **params, void **extra);
  Result (*launchKernelEx)(const LaunchConfig *config, Function fn, void **params, void **extra);
  Result (*streamCreate)(Stream *stream, unsigned flags);
  Result (*streamDestroy)(Stream stream);
  Result (*streamSynchronize)(Stream stream);
  Result (*streamBeginCapture)(Stream stream, int mode);
  Result (*streamEndCapture)(Stream stream, Graph *graph);
  Result (*graphInstantiate)(GraphExec *exec, Graph graph, unsigned long long flags);
  Result (*graphLaunch)(GraphExec exec, Stream stream);
  Result (*graphExecDestroy)(GraphExec exec);
  Result (*graphDestroy)(Graph graph);
  Result (*eventCreate)(Event *event, unsigned flags);
  Result (*eventDestroy)(Event event);
  Result (*eventRecord)(Event event, Stream stream);
  Result (*streamWaitEvent)(Stream stream, Event event, unsigned flags);
  Result (*eventSynchronize)(Event event);
  Result (*eventElapsedTime)(float *ms, Event start, Event end);

  /// Launches `k` on `stream`: early where k.early says it may.
  Result launch(Kernel k, LaunchShape shape, Stream stream, void **params) const;
  /// Whether `fn`'s loaded code waits for its predecessor at entry, as gc's
  /// kernels compiled for sm_90 or later do: its PTX architecture is 9.0 or
  /// later. (A cubin made for sm_90 from sm_80 PTX, or PTX that the driver
  /// compiles for a newer GPU, reports the PTX's.)
  bool earlyCapable(Function fn) const;

  /// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)"
  std::string describe(Result r) const;
  /// Success, or an error "<doing>: CUDA_ERROR_X (text)".
  Error check(Result r, const std::string &doing) const {
    return r == Success ? Error::success() : Error::failure(doing + ": " + describe(r));
  }
};

/// Loads the driver from `soname` and initializes it (cuInit). Errors:
/// "no NVIDIA driver: <soname> not found", a missing function, a failed
/// cuInit ("no CUDA device: ..." when the driver sees none).
Expected<std::unique_ptr<Driver>> loadDriver(const char *soname);

/// The process's driver, libcuda.so.1, loaded on first use (thread-safe)
/// and kept; the same error every time when it cannot be.
Expected<const Driver *> driver();

/// The device RuntimeOptions::cudaDevice names (negative: the
/// GC_CUDA_DEVICE environment variable, else 0), checked against the
/// devices there are.
Expected<CudaDevice> selectDevice(const Driver &d, int requested);

} // namespace gc::cuda

#endif // GC_LIB_RUNTIME_CUDA_CUDADRIVER_H
