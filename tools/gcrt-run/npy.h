/*===- npy.h - NumPy .npy files for gcrt-run ------------------------------===*
 *
 * A small reader and writer of its own: gcrt-run links libgcrt alone, never
 * the compiler's libraries, whose lib/Interp reads .npy files too. Bytes
 * written are the same as gc-run writes, so that outputs compare with cmp.
 *
 *===----------------------------------------------------------------------===*/
#ifndef GCRT_RUN_NPY_H
#define GCRT_RUN_NPY_H

#include "gcrt/gcrt.h"

#include <stddef.h>

enum { kNpyMaxRank = 16 };

/* An array read from a .npy file; `tensor` points into it. */
typedef struct Npy {
  void *data;
  int64_t sizes[kNpyMaxRank];
  int64_t strides[kNpyMaxRank];
  gcrt_tensor tensor;
} Npy;

/* Reads `path` into `out`. On failure, returns 0 with a message naming the
 * file in `error` (room for `capacity` bytes). Fortran-order arrays are read
 * in place, described by their strides. */
int npyRead(const char *path, Npy *out, char *error, size_t capacity);
void npyFree(Npy *npy);

/* Writes a contiguous tensor to `path` through a temporary file, so that no
 * half-written file is left behind. Returns 0 with a message on failure. */
int npyWrite(const char *path, const gcrt_tensor *t, char *error, size_t capacity);

/* Elements of a tensor (NULL strides: contiguous). */
size_t npyNumel(const gcrt_tensor *t);
/* The value of element `index`, counted in row-major order, as a double. */
double npyValue(const gcrt_tensor *t, size_t index);

#endif /* GCRT_RUN_NPY_H */
