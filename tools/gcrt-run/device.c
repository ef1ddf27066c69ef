/*===- device.c - GPU memory for gcrt-run --device-io ---------------------===*/
#define _POSIX_C_SOURCE 200809L
#include "device.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The driver API's types, as its documentation gives them. */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef unsigned long long CUdeviceptr;

struct DeviceIo {
  void *library;
  CUdevice device;
  CUcontext context;
  CUresult (*init)(unsigned);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*retain)(CUcontext *, CUdevice);
  CUresult (*release)(CUdevice);
  CUresult (*setCurrent)(CUcontext);
  CUresult (*alloc)(CUdeviceptr *, size_t);
  CUresult (*free)(CUdeviceptr);
  CUresult (*toDevice)(CUdeviceptr, const void *, size_t);
  CUresult (*toHost)(void *, CUdeviceptr, size_t);
  CUresult (*errorName)(CUresult, const char **);
};

static const char *nameOf(DeviceIo *d, CUresult r) {
  const char *name = NULL;
  if (!d->errorName || d->errorName(r, &name) != 0 || !name)
    return "an unknown CUDA error";
  return name;
}

/* 0 with the message "DOING: CUDA_ERROR_..." unless `r` is success. */
static int check(DeviceIo *d, CUresult r, const char *doing, char *error, size_t capacity) {
  if (r == 0)
    return 1;
  snprintf(error, capacity, "%s: %s", doing, nameOf(d, r));
  return 0;
}

static int resolve(DeviceIo *d, void **slot, const char *symbol, char *error, size_t capacity) {
  *slot = dlsym(d->library, symbol);
  if (!*slot)
    snprintf(error, capacity, "the NVIDIA driver library has no %s", symbol);
  return *slot != NULL;
}

DeviceIo *deviceOpen(char *error, size_t capacity) {
  DeviceIo *d = calloc(1, sizeof *d);
  if (!d) {
    snprintf(error, capacity, "out of memory");
    return NULL;
  }
  d->library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!d->library) {
    snprintf(error, capacity, "--device-io needs the NVIDIA driver: libcuda.so.1 not found");
    free(d);
    return NULL;
  }
  struct {
    void **slot;
    const char *symbol;
  } symbols[] = {{(void **)&d->init, "cuInit"},
                 {(void **)&d->deviceGet, "cuDeviceGet"},
                 {(void **)&d->retain, "cuDevicePrimaryCtxRetain"},
                 {(void **)&d->release, "cuDevicePrimaryCtxRelease_v2"},
                 {(void **)&d->setCurrent, "cuCtxSetCurrent"},
                 {(void **)&d->alloc, "cuMemAlloc_v2"},
                 {(void **)&d->free, "cuMemFree_v2"},
                 {(void **)&d->toDevice, "cuMemcpyHtoD_v2"},
                 {(void **)&d->toHost, "cuMemcpyDtoH_v2"},
                 {(void **)&d->errorName, "cuGetErrorName"}};
  for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; ++i)
    if (!resolve(d, symbols[i].slot, symbols[i].symbol, error, capacity)) {
      dlclose(d->library);
      free(d);
      return NULL;
    }
  /* libgcrt's rule for which GPU runs the package. */
  const char *env = getenv("GC_CUDA_DEVICE");
  int ordinal = env && *env ? atoi(env) : 0;
  char doing[64];
  snprintf(doing, sizeof doing, "opening CUDA device %d", ordinal);
  if (!check(d, d->init(0), "starting the NVIDIA driver", error, capacity) ||
      !check(d, d->deviceGet(&d->device, ordinal), doing, error, capacity) ||
      !check(d, d->retain(&d->context, d->device), doing, error, capacity) ||
      !check(d, d->setCurrent(d->context), doing, error, capacity)) {
    if (d->context)
      d->release(d->device);
    dlclose(d->library);
    free(d);
    return NULL;
  }
  return d;
}

void deviceClose(DeviceIo *d) {
  if (!d)
    return;
  d->release(d->device);
  dlclose(d->library);
  free(d);
}

/* libgcrt makes its own context current on this thread; every call here
 * makes the primary one current again (they are the same context). */
void *deviceAlloc(DeviceIo *d, size_t bytes, char *error, size_t capacity) {
  CUdeviceptr p = 0;
  char doing[96];
  snprintf(doing, sizeof doing, "allocating %zu bytes of GPU memory", bytes);
  if (!check(d, d->setCurrent(d->context), doing, error, capacity) ||
      !check(d, d->alloc(&p, bytes ? bytes : 1), doing, error, capacity))
    return NULL;
  return (void *)(uintptr_t)p;
}

void deviceFree(DeviceIo *d, void *p) {
  if (d && p && d->setCurrent(d->context) == 0)
    d->free((CUdeviceptr)(uintptr_t)p);
}

int deviceUpload(DeviceIo *d, void *dst, const void *src, size_t bytes, char *error,
                 size_t capacity) {
  return check(d, d->setCurrent(d->context), "copying to the GPU", error, capacity) &&
         check(d, d->toDevice((CUdeviceptr)(uintptr_t)dst, src, bytes), "copying to the GPU",
               error, capacity);
}

int deviceDownload(DeviceIo *d, void *dst, const void *src, size_t bytes, char *error,
                   size_t capacity) {
  return check(d, d->setCurrent(d->context), "copying from the GPU", error, capacity) &&
         check(d, d->toHost(dst, (CUdeviceptr)(uintptr_t)src, bytes), "copying from the GPU",
               error, capacity);
}
