/* gcdemo: the test plugin of docs/plugins.md. Two ops, as
 * utils/make-plugin-models.py defines them with torch.library:
 *
 *   gcdemo::scaled_swish(Tensor x, float scale) -> Tensor
 *       x * sigmoid(x) * scale, elementwise (a custom activation)
 *   gcdemo::row_stats(Tensor x) -> (Tensor, Tensor)
 *       the maximum and the mean over the last dim (two outputs, whose
 *       sizes are x's without its last dim)
 *
 * float32 only. Built with GCDEMO_CUDA, the table also gives the CUDA
 * kernels of gcdemo_cuda.cu. Plain C99 against gcrt/gc_plugin.h alone. */
#include "gcrt/gc_plugin.h"

#include <math.h>
#include <stdio.h>

#ifdef GCDEMO_CUDA
int gcdemo_scaled_swish_cuda(const gc_plugin_tensor *, int32_t, const gc_plugin_scalar *,
                             int32_t, const gc_plugin_tensor *, int32_t, void *, char *,
                             size_t);
int gcdemo_row_stats_cuda(const gc_plugin_tensor *, int32_t, const gc_plugin_scalar *, int32_t,
                          const gc_plugin_tensor *, int32_t, void *, char *, size_t);
#define CUDA_KERNEL(k) k
#else
#define CUDA_KERNEL(k) NULL
#endif

static int fail(char *error, size_t size, const char *message) {
  snprintf(error, size, "%s", message);
  return 1;
}

static int float32Only(const gc_plugin_type *t, char *error, size_t size) {
  return t->dtype == GC_PLUGIN_FLOAT32 ? 0 : fail(error, size, "gcdemo takes float32 tensors");
}

static int swishShape(const gc_plugin_type *in, int32_t n, const gc_plugin_scalar *s, int32_t ns,
                      gc_plugin_type *out, int32_t nout, char *error, size_t size) {
  (void)s;
  if (n != 1 || ns != 1 || nout != 1)
    return fail(error, size, "scaled_swish takes one tensor and one float");
  if (float32Only(&in[0], error, size))
    return 1;
  out[0] = in[0];
  return 0;
}

/* Walks the elements of `t` in row-major order of its sizes: the offset of
 * element `linear` through its strides. */
static int64_t offsetOf(const gc_plugin_tensor *t, int64_t linear) {
  int64_t offset = 0;
  for (int32_t d = t->rank - 1; d >= 0; --d) {
    offset += (linear % t->sizes[d]) * t->strides[d];
    linear /= t->sizes[d];
  }
  return offset;
}

static int64_t numel(const gc_plugin_tensor *t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->rank; ++d)
    n *= t->sizes[d];
  return n;
}

static int swishCpu(const gc_plugin_tensor *in, int32_t n, const gc_plugin_scalar *s,
                    int32_t ns, const gc_plugin_tensor *out, int32_t nout, char *error,
                    size_t size) {
  (void)n, (void)ns, (void)nout, (void)error, (void)size;
  const float *x = in[0].data;
  float *y = out[0].data;
  float scale = (float)s[0].f;
  for (int64_t i = 0, e = numel(&in[0]); i < e; ++i) {
    float v = x[offsetOf(&in[0], i)];
    y[offsetOf(&out[0], i)] = v / (1.0f + expf(-v)) * scale;
  }
  return 0;
}

static int statsShape(const gc_plugin_type *in, int32_t n, const gc_plugin_scalar *s, int32_t ns,
                      gc_plugin_type *out, int32_t nout, char *error, size_t size) {
  (void)s;
  if (n != 1 || ns != 0 || nout != 2)
    return fail(error, size, "row_stats takes one tensor");
  if (float32Only(&in[0], error, size))
    return 1;
  if (in[0].rank < 1 || in[0].dims[in[0].rank - 1].size == 0)
    return fail(error, size, "row_stats needs a last dim of at least one element");
  for (int k = 0; k < 2; ++k) {
    out[k].dtype = GC_PLUGIN_FLOAT32;
    out[k].rank = in[0].rank - 1;
    for (int32_t d = 0; d < out[k].rank; ++d)
      out[k].dims[d] = in[0].dims[d];
  }
  return 0;
}

static int statsCpu(const gc_plugin_tensor *in, int32_t n, const gc_plugin_scalar *s,
                    int32_t ns, const gc_plugin_tensor *out, int32_t nout, char *error,
                    size_t size) {
  (void)n, (void)s, (void)ns, (void)nout, (void)error, (void)size;
  const gc_plugin_tensor *x = &in[0];
  int64_t cols = x->sizes[x->rank - 1], colStride = x->strides[x->rank - 1];
  const float *data = x->data;
  float *maxOut = out[0].data, *meanOut = out[1].data;
  for (int64_t r = 0, rows = numel(&out[0]); r < rows; ++r) {
    /* The row's first element: x's offset of element r * cols. */
    const float *row = data + offsetOf(x, r * cols);
    float best = row[0], sum = 0;
    for (int64_t c = 0; c < cols; ++c) {
      float v = row[c * colStride];
      best = v > best ? v : best;
      sum += v;
    }
    maxOut[offsetOf(&out[0], r)] = best;
    meanOut[offsetOf(&out[1], r)] = sum / (float)cols;
  }
  return 0;
}

static const gc_plugin_op kOps[] = {
    {"gcdemo", "scaled_swish", "default", "(Tensor x, float scale) -> Tensor", swishShape,
     swishCpu, CUDA_KERNEL(gcdemo_scaled_swish_cuda)},
    {"gcdemo", "row_stats", "default", "(Tensor x) -> (Tensor, Tensor)", statsShape, statsCpu,
     CUDA_KERNEL(gcdemo_row_stats_cuda)},
};

#ifndef GCDEMO_ABI_VERSION
#define GCDEMO_ABI_VERSION GC_PLUGIN_ABI_VERSION
#endif

static const gc_plugin_library kLibrary = {GCDEMO_ABI_VERSION, 2, kOps};

GC_PLUGIN_EXPORT const gc_plugin_library *gc_plugin_entry(void) {
  return &kLibrary;
}
