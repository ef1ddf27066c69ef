// gcdemo's CUDA kernels (gcdemo.c gives the ops' table): the same
// arithmetic as its CPU kernels, queued on the stream gc passes.
#include "gcrt/gc_plugin.h"

#include <cuda_runtime.h>

#include <cstdio>

namespace {

struct Strided {
  int32_t rank;
  int64_t sizes[GC_PLUGIN_MAX_RANK], strides[GC_PLUGIN_MAX_RANK];
};

Strided stridedOf(const gc_plugin_tensor &t) {
  Strided s{t.rank, {}, {}};
  for (int32_t d = 0; d < t.rank; ++d) {
    s.sizes[d] = t.sizes[d];
    s.strides[d] = t.strides[d];
  }
  return s;
}

__device__ int64_t offsetOf(const Strided &t, int64_t linear) {
  int64_t offset = 0;
  for (int32_t d = t.rank - 1; d >= 0; --d) {
    offset += (linear % t.sizes[d]) * t.strides[d];
    linear /= t.sizes[d];
  }
  return offset;
}

int64_t numel(const gc_plugin_tensor &t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t.rank; ++d)
    n *= t.sizes[d];
  return n;
}

__global__ void swish(const float *x, Strided xs, float *y, Strided ys, int64_t n, float scale) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[offsetOf(xs, i)];
    y[offsetOf(ys, i)] = v / (1.0f + expf(-v)) * scale;
  }
}

__global__ void stats(const float *x, Strided xs, float *maxOut, Strided ms, float *meanOut,
                      Strided as, int64_t rows, int64_t cols) {
  int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (r >= rows)
    return;
  const float *row = x + offsetOf(xs, r * cols);
  int64_t colStride = xs.strides[xs.rank - 1];
  float best = row[0], sum = 0;
  for (int64_t c = 0; c < cols; ++c) {
    float v = row[c * colStride];
    best = v > best ? v : best;
    sum += v;
  }
  maxOut[offsetOf(ms, r)] = best;
  meanOut[offsetOf(as, r)] = sum / (float)cols;
}

int launched(char *error, size_t size) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess)
    return 0;
  snprintf(error, size, "launch failed: %s", cudaGetErrorString(e));
  return 1;
}

} // namespace

extern "C" int gcdemo_scaled_swish_cuda(const gc_plugin_tensor *in, int32_t,
                                        const gc_plugin_scalar *s, int32_t,
                                        const gc_plugin_tensor *out, int32_t, void *stream,
                                        char *error, size_t size) {
  int64_t n = numel(in[0]);
  if (n == 0)
    return 0;
  unsigned blocks = (unsigned)((n + 255) / 256);
  swish<<<blocks, 256, 0, (cudaStream_t)stream>>>((const float *)in[0].data, stridedOf(in[0]),
                                                  (float *)out[0].data, stridedOf(out[0]), n,
                                                  (float)s[0].f);
  return launched(error, size);
}

extern "C" int gcdemo_row_stats_cuda(const gc_plugin_tensor *in, int32_t, const gc_plugin_scalar *,
                                     int32_t, const gc_plugin_tensor *out, int32_t, void *stream,
                                     char *error, size_t size) {
  int64_t rows = numel(out[0]), cols = in[0].sizes[in[0].rank - 1];
  if (rows == 0)
    return 0;
  unsigned blocks = (unsigned)((rows + 127) / 128);
  stats<<<blocks, 128, 0, (cudaStream_t)stream>>>((const float *)in[0].data, stridedOf(in[0]),
                                                  (float *)out[0].data, stridedOf(out[0]),
                                                  (float *)out[1].data, stridedOf(out[1]), rows,
                                                  cols);
  return launched(error, size);
}
