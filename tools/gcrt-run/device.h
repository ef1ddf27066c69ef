/*===- device.h - GPU memory for gcrt-run --device-io ---------------------===*
 *
 * gcrt_run_device takes tensors already in GPU memory. gcrt-run makes that
 * memory with the NVIDIA driver's own library, opened at run time as libgcrt
 * opens it, in the primary context of the GPU libgcrt runs on
 * (GC_CUDA_DEVICE, else 0): gcrt-run still links libgcrt alone.
 *
 *===----------------------------------------------------------------------===*/
#ifndef GCRT_RUN_DEVICE_H
#define GCRT_RUN_DEVICE_H

#include <stddef.h>

typedef struct DeviceIo DeviceIo;

/* Opens the driver and the GPU. On failure, returns NULL with a message in
 * `error` (room for `capacity` bytes). */
DeviceIo *deviceOpen(char *error, size_t capacity);
void deviceClose(DeviceIo *d);
/* GPU memory of `bytes` (at least 1), or NULL with a message. */
void *deviceAlloc(DeviceIo *d, size_t bytes, char *error, size_t capacity);
void deviceFree(DeviceIo *d, void *p);
/* Copies between host and GPU memory; returns 0 with a message on failure. */
int deviceUpload(DeviceIo *d, void *dst, const void *src, size_t bytes, char *error,
                 size_t capacity);
int deviceDownload(DeviceIo *d, void *dst, const void *src, size_t bytes, char *error,
                   size_t capacity);

#endif /* GCRT_RUN_DEVICE_H */
