//===- CudaDriver.cpp - The CUDA driver API, loaded at run time -----------===//
#include "CudaDriver.h"

#include <charconv>
#include <cstdlib>
#include <cstring>

#include <dlfcn.h>

namespace gc {

namespace cuda {

namespace {

/// Looks up `name` into `slot`; the error names the function.
template <typename Fn> Error resolve(void *handle, const char *name, Fn &slot) {
  slot = reinterpret_cast<Fn>(dlsym(handle, name));
  if (!slot)
    return makeError() << "the NVIDIA driver has no " << name
                       << " (a driver older than CUDA 12?)";
  return Error::success();
}

Error resolveAll(void *h, Driver &d) {
  // The versioned names are those cuda.h maps each function to.
  GC_RETURN_IF_ERROR(resolve(h, "cuInit", d.init));
  GC_RETURN_IF_ERROR(resolve(h, "cuDriverGetVersion", d.driverGetVersion));
  GC_RETURN_IF_ERROR(resolve(h, "cuGetErrorName", d.getErrorName));
  GC_RETURN_IF_ERROR(resolve(h, "cuGetErrorString", d.getErrorString));
  GC_RETURN_IF_ERROR(resolve(h, "cuDeviceGetCount", d.deviceGetCount));
  GC_RETURN_IF_ERROR(resolve(h, "cuDeviceGet", d.deviceGet));
  GC_RETURN_IF_ERROR(resolve(h, "cuDeviceGetName", d.deviceGetName));
  GC_RETURN_IF_ERROR(resolve(h, "cuDeviceGetAttribute", d.deviceGetAttribute));
  GC_RETURN_IF_ERROR(resolve(h, "cuDeviceTotalMem_v2", d.deviceTotalMem));
  GC_RETURN_IF_ERROR(resolve(h, "cuDevicePrimaryCtxRetain", d.primaryCtxRetain));
  GC_RETURN_IF_ERROR(resolve(h, "cuDevicePrimaryCtxRelease_v2", d.primaryCtxRelease));
  GC_RETURN_IF_ERROR(resolve(h, "cuCtxSetCurrent", d.ctxSetCurrent));
  GC_RETURN_IF_ERROR(resolve(h, "cuModuleLoadData", d.moduleLoadData));
  GC_RETURN_IF_ERROR(resolve(h, "cuModuleUnload", d.moduleUnload));
  GC_RETURN_IF_ERROR(resolve(h, "cuModuleGetFunction", d.moduleGetFunction));
  GC_RETURN_IF_ERROR(resolve(h, "cuFuncGetAttribute", d.funcGetAttribute));
  GC_RETURN_IF_ERROR(resolve(h, "cuMemAlloc_v2", d.memAlloc));
  GC_RETURN_IF_ERROR(resolve(h, "cuMemFree_v2", d.memFree));
  GC_RETURN_IF_ERROR(resolve(h, "cuMemcpyHtoDAsync_v2", d.memcpyHtoDAsync));
  GC_RETURN_IF_ERROR(resolve(h, "cuMemcpyDtoHAsync_v2", d.memcpyDtoHAsync));
  GC_RETURN_IF_ERROR(resolve(h, "cuMemcpyDtoDAsync_v2", d.memcpyDtoDAsync));
  GC_RETURN_IF_ERROR(resolve(h, "cuMemsetD8Async", d.memsetD8Async));
  GC_RETURN_IF_ERROR(resolve(h, "cuLaunchKernel", d.launchKernel));
  GC_RETURN_IF_ERROR(resolve(h, "cuLaunchKernelEx", d.launchKernelEx));
  GC_RETURN_IF_ERROR(resolve(h, "cuStreamCreate", d.streamCreate));
  GC_RETURN_IF_ERROR(resolve(h, "cuStreamDestroy_v2", d.streamDestroy));
  GC_RETURN_IF_ERROR(resolve(h, "cuStreamSynchronize", d.streamSynchronize));
  GC_RETURN_IF_ERROR(resolve(h, "cuStreamBeginCapture_v2", d.streamBeginCapture));
  GC_RETURN_IF_ERROR(resolve(h, "cuStreamEndCapture", d.streamEndCapture));
  GC_RETURN_IF_ERROR(resolve(h, "cuGraphInstantiateWithFlags", d.graphInstantiate));
  GC_RETURN_IF_ERROR(resolve(h, "cuGraphLaunch", d.graphLaunch));
  GC_RETURN_IF_ERROR(resolve(h, "cuGraphExecDestroy", d.graphExecDestroy));
  GC_RETURN_IF_ERROR(resolve(h, "cuGraphDestroy", d.graphDestroy));
  GC_RETURN_IF_ERROR(resolve(h, "cuEventCreate", d.eventCreate));
  GC_RETURN_IF_ERROR(resolve(h, "cuEventDestroy_v2", d.eventDestroy));
  GC_RETURN_IF_ERROR(resolve(h, "cuEventRecord", d.eventRecord));
  GC_RETURN_IF_ERROR(resolve(h, "cuStreamWaitEvent", d.streamWaitEvent));
  GC_RETURN_IF_ERROR(resolve(h, "cuEventSynchronize", d.eventSynchronize));
  // The _v2 name (CUDA 12.8 on) where the driver has it; the two take the
  // same arguments.
  if (Error e = resolve(h, "cuEventElapsedTime_v2", d.eventElapsedTime))
    GC_RETURN_IF_ERROR(resolve(h, "cuEventElapsedTime", d.eventElapsedTime));
  return Error::success();
}

Expected<CudaDevice> describeDevice(const Driver &d, int ordinal) {
  std::string what = "CUDA device " + std::to_string(ordinal);
  Device dev = 0;
  GC_RETURN_IF_ERROR(d.check(d.deviceGet(&dev, ordinal), what));
  CudaDevice out;
  out.ordinal = ordinal;
  char name[256] = {0};
  GC_RETURN_IF_ERROR(d.check(d.deviceGetName(name, sizeof name - 1, dev), what + ": its name"));
  out.name = name;
  int major = 0, minor = 0;
  GC_RETURN_IF_ERROR(d.check(d.deviceGetAttribute(&major, AttrComputeCapabilityMajor, dev),
                             what + ": its compute capability"));
  GC_RETURN_IF_ERROR(d.check(d.deviceGetAttribute(&minor, AttrComputeCapabilityMinor, dev),
                             what + ": its compute capability"));
  out.arch = major * 10 + minor;
  GC_RETURN_IF_ERROR(d.check(d.deviceGetAttribute(&out.multiprocessors,
                                                  AttrMultiprocessorCount, dev),
                             what + ": its multiprocessors"));
  // Only the profile's peaks need these (newer drivers may drop the
  // clocks): one the driver does not give stays 0.
  for (const auto &[attribute, value] : {std::pair{AttrClockRate, &out.clockKHz},
                                         std::pair{AttrMemoryClockRate, &out.memoryClockKHz},
                                         std::pair{AttrGlobalMemoryBusWidth, &out.memoryBusBits}})
    if (d.deviceGetAttribute(value, attribute, dev) != Success)
      *value = 0;
  size_t bytes = 0;
  GC_RETURN_IF_ERROR(d.check(d.deviceTotalMem(&bytes, dev), what + ": its memory"));
  out.memoryBytes = bytes;
  return out;
}

Expected<int> deviceCount(const Driver &d) {
  int count = 0;
  GC_RETURN_IF_ERROR(d.check(d.deviceGetCount(&count), "counting CUDA devices"));
  if (count <= 0)
    return makeError() << "no CUDA device: the NVIDIA driver shows none";
  return count;
}

} // namespace

Result Driver::launch(Kernel k, LaunchShape shape, Stream stream, void **params) const {
  if (!k.early)
    return launchKernel(k.fn, shape.gridX, shape.gridY, 1, shape.threads, 1, 1, 0, stream, params,
                        nullptr);
  LaunchAttribute early{};
  early.id = LaunchAttrProgrammaticStreamSerialization;
  early.value.programmaticStreamSerializationAllowed = 1;
  LaunchConfig config{shape.gridX, shape.gridY, 1, shape.threads, 1, 1, 0, stream, &early, 1};
  return launchKernelEx(&config, k.fn, params, nullptr);
}

bool Driver::earlyCapable(Function fn) const {
  int ptx = 0;
  return funcGetAttribute(&ptx, FuncAttrPtxVersion, fn) == Success && ptx >= 90;
}

std::string Driver::describe(Result r) const {
  const char *name = nullptr, *text = nullptr;
  if (getErrorName(r, &name) != Success || !name)
    name = "unknown CUDA error";
  if (getErrorString(r, &text) != Success || !text)
    text = "no description";
  return std::string(name) + " (" + text + ")";
}

Expected<std::unique_ptr<Driver>> loadDriver(const char *soname) {
  // Kept loaded for the process: the driver does not support unloading.
  void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return makeError() << "no NVIDIA driver: " << soname << " not found";
  auto d = std::make_unique<Driver>();
  GC_RETURN_IF_ERROR(resolveAll(handle, *d));
  Result r = d->init(0);
  if (r == ErrorNoDevice)
    return makeError() << "no CUDA device: " << d->describe(r);
  GC_RETURN_IF_ERROR(d->check(r, "initializing the NVIDIA driver (cuInit)"));
  return d;
}

Expected<const Driver *> driver() {
  static const Expected<std::unique_ptr<Driver>> loaded = loadDriver("libcuda.so.1");
  if (!loaded)
    return loaded.error();
  return loaded->get();
}

Expected<CudaDevice> selectDevice(const Driver &d, int requested) {
  Expected<int> count = deviceCount(d);
  if (!count)
    return count.error();
  int ordinal = requested;
  std::string source = "device " + std::to_string(requested);
  if (requested < 0) {
    // The one setting read from the environment: like CUDA_VISIBLE_DEVICES,
    // it picks hardware for programs that have no option for it.
    const char *env = std::getenv("GC_CUDA_DEVICE");
    ordinal = 0;
    if (env && *env) {
      const char *end = env + std::strlen(env);
      auto [p, ec] = std::from_chars(env, end, ordinal);
      if (ec != std::errc() || p != end || ordinal < 0)
        return makeError() << "GC_CUDA_DEVICE='" << env << "' is not a device number";
      source = "GC_CUDA_DEVICE=" + std::string(env);
    }
  }
  if (ordinal >= *count)
    return makeError() << source << ": the NVIDIA driver shows " << *count << " CUDA device"
                       << (*count == 1 ? "" : "s") << " (0 to " << *count - 1 << ")";
  return describeDevice(d, ordinal);
}

} // namespace cuda

std::string CudaDevice::describe() const {
  return "cuda:sm_" + std::to_string(arch) + " " + name;
}

Expected<std::vector<CudaDevice>> cudaDevices() {
  Expected<const cuda::Driver *> d = cuda::driver();
  if (!d)
    return d.error();
  Expected<int> count = cuda::deviceCount(**d);
  if (!count)
    return count.error();
  std::vector<CudaDevice> out;
  for (int i = 0; i < *count; ++i) {
    Expected<CudaDevice> dev = cuda::describeDevice(**d, i);
    if (!dev)
      return dev.error();
    out.push_back(dev.take());
  }
  return out;
}

Expected<CudaDevice> cudaDeviceFor(const RuntimeOptions &options) {
  Expected<const cuda::Driver *> d = cuda::driver();
  if (!d)
    return d.error();
  return cuda::selectDevice(**d, options.cudaDevice);
}

} // namespace gc
