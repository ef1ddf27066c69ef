/*===- gc_plugin.h - Custom ops from a plugin library ---------------------===*
 *
 * A plugin is a shared library that gives gc ops it does not know: a user's
 * torch.library ops. It exports one C function,
 *
 *   const gc_plugin_library *gc_plugin_entry(void);
 *
 * returning a table that lives as long as the library is loaded. The
 * compiler (gc-compile --plugin=PATH) reads each op's schema and calls its
 * shape function; libgcrt calls its kernels when a package runs. This
 * header is all a plugin needs: plain C, no gc header beside it, so a
 * plugin builds with any C or C++ compiler (docs/plugins.md).
 *
 * Tensors are given as a pointer to the element at index 0, sizes and
 * strides in elements (any strides; a kernel that needs contiguous data
 * checks), and a dtype. Outputs are allocated by gc, contiguous, with the
 * sizes the shape function gave.
 *
 *===----------------------------------------------------------------------===*/
#ifndef GCRT_GC_PLUGIN_H
#define GCRT_GC_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI this header describes. gc refuses a library whose table gives
 * another number: the structs below change only with it. */
#define GC_PLUGIN_ABI_VERSION 1

/* The symbol a plugin exports, and how to export it from a library built
 * with hidden visibility:
 *   GC_PLUGIN_EXPORT const gc_plugin_library *gc_plugin_entry(void) {...} */
#define GC_PLUGIN_ENTRY "gc_plugin_entry"
#if defined(__GNUC__)
#define GC_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define GC_PLUGIN_EXPORT
#endif

/* Element types, numbered as gcrt.h's gcrt_dtype. */
typedef enum gc_plugin_dtype {
  GC_PLUGIN_BOOL = 0,
  GC_PLUGIN_UINT8 = 1,
  GC_PLUGIN_INT8 = 2,
  GC_PLUGIN_INT16 = 3,
  GC_PLUGIN_INT32 = 4,
  GC_PLUGIN_INT64 = 5,
  GC_PLUGIN_FLOAT16 = 6,
  GC_PLUGIN_BFLOAT16 = 7,
  GC_PLUGIN_FLOAT32 = 8,
  GC_PLUGIN_FLOAT64 = 9
} gc_plugin_dtype;

/* The most dimensions a tensor of a plugin op has. */
#define GC_PLUGIN_MAX_RANK 8

/* One size of a tensor type, as the shape function sees and gives it:
 * `size` when it is known at compile time (>= 0), otherwise -1. `input`
 * and `dim`, when `input` >= 0, say that this size equals dim `dim` of
 * input tensor `input`: for an input's own dims gc sets them to that dim,
 * so a shape function that copies an input's dim into an output keeps a
 * size known only at run time. An output dim with `size` >= 0 and
 * `input` = -1 is that constant. */
typedef struct gc_plugin_dim {
  int64_t size;
  int32_t input;
  int32_t dim;
} gc_plugin_dim;

/* A tensor's type, for the shape function. */
typedef struct gc_plugin_type {
  int32_t dtype; /* gc_plugin_dtype */
  int32_t rank;
  gc_plugin_dim dims[GC_PLUGIN_MAX_RANK];
} gc_plugin_type;

/* A non-tensor argument of the op, in schema order: an `int`, `SymInt` or
 * `bool` (as 0 or 1) is `i`; a `float` is `f`. */
typedef struct gc_plugin_scalar {
  int64_t i;
  double f;
} gc_plugin_scalar;

/* A tensor a kernel reads or writes. */
typedef struct gc_plugin_tensor {
  void *data;
  int32_t dtype; /* gc_plugin_dtype */
  int32_t rank;
  const int64_t *sizes;
  const int64_t *strides;
} gc_plugin_tensor;

/* Every function returns 0 on success; otherwise it writes a message (at
 * most `error_size` bytes, NUL included) to `error`, which gc reports
 * naming the op. */

/* The output types from the input types (one per Tensor argument, in
 * schema order) and the scalar arguments. `outputs` has one entry per
 * result of the schema; gc zeroes them before the call. */
typedef int (*gc_plugin_shape_fn)(const gc_plugin_type *inputs, int32_t num_inputs,
                                  const gc_plugin_scalar *scalars, int32_t num_scalars,
                                  gc_plugin_type *outputs, int32_t num_outputs, char *error,
                                  size_t error_size);

/* Computes the outputs on the CPU. Called from one thread at a time per
 * context; it may use threads of its own. */
typedef int (*gc_plugin_cpu_kernel)(const gc_plugin_tensor *inputs, int32_t num_inputs,
                                    const gc_plugin_scalar *scalars, int32_t num_scalars,
                                    const gc_plugin_tensor *outputs, int32_t num_outputs,
                                    char *error, size_t error_size);

/* Computes the outputs on an NVIDIA GPU: the tensors' data are device
 * pointers, and the work is queued on `stream` (a CUstream / cudaStream_t
 * of the current context), which it must not synchronize unless it must. */
typedef int (*gc_plugin_cuda_kernel)(const gc_plugin_tensor *inputs, int32_t num_inputs,
                                     const gc_plugin_scalar *scalars, int32_t num_scalars,
                                     const gc_plugin_tensor *outputs, int32_t num_outputs,
                                     void *stream, char *error, size_t error_size);

/* One op. `ns`, `name` and `overload` spell it as torch does:
 * torch.ops.<ns>.<name>.<overload>, e.g. "mylib", "scaled_swish",
 * "default". `schema` is the op's schema in torch's notation without the
 * name, e.g. "(Tensor x, float alpha) -> (Tensor, Tensor)"; its arguments
 * may be Tensor, int, SymInt, bool and float. `cuda` may be NULL (the op
 * then runs in CPU packages only). */
typedef struct gc_plugin_op {
  const char *ns;
  const char *name;
  const char *overload;
  const char *schema;
  gc_plugin_shape_fn shape;
  gc_plugin_cpu_kernel cpu;
  gc_plugin_cuda_kernel cuda;
} gc_plugin_op;

/* What gc_plugin_entry returns. */
typedef struct gc_plugin_library {
  uint32_t abi_version; /* GC_PLUGIN_ABI_VERSION */
  int32_t num_ops;
  const gc_plugin_op *ops;
} gc_plugin_library;

typedef const gc_plugin_library *(*gc_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* GCRT_GC_PLUGIN_H */
