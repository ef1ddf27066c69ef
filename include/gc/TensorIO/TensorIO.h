/*===- TensorIO.h - .npy files and result comparison, in plain C ----------===*
 *
 * The one implementation of what both package runners do with tensors on
 * the host: read and write NumPy .npy files, and compare a result with an
 * expected one under gc's tolerance rule, with the line that reports it.
 * gc-run reaches it through gc/Tensor/Npy.h and gc/Tensor/Compare.h; gcrt-run
 * calls it directly. It is C11 with no other dependency than the C library
 * and libm, so that a deployment that carries libgcrt alone can carry it too:
 * a tensor is libgcrt's gcrt_tensor, of whose header only the types are used.
 *
 * Functions that can fail return 1 on success and 0 on failure, with a
 * message that names the file in `error` (room for `capacity` bytes).
 *
 *===----------------------------------------------------------------------===*/
#ifndef GC_TENSORIO_TENSORIO_H
#define GC_TENSORIO_TENSORIO_H

#include "gcrt/gcrt.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { GC_NPY_MAX_RANK = 16 };

/* An array read from a .npy file. `tensor` describes it: its data, its
 * sizes (in `sizes`) and, for a Fortran-order array of rank 2 or more, its
 * column-major strides (in `strides`; NULL otherwise). The struct points into
 * itself, so it is filled in place and not copied. */
typedef struct gc_npy {
  gcrt_tensor tensor;
  int64_t sizes[GC_NPY_MAX_RANK];
  int64_t strides[GC_NPY_MAX_RANK];
  void *owned; /* what gc_npy_free releases */
} gc_npy;

/* Reads the .npy file `path` (format versions 1 to 3; the dtypes of
 * gcrt_dtype, little-endian or byte-order-free, bfloat16 as numpy's opaque
 * two-byte "|V2"; C or Fortran order). The data is owned by `out` until
 * gc_npy_free. */
int gc_npy_read(const char *path, gc_npy *out, char *error, size_t capacity);

/* The same on the `size` bytes of a whole .npy file in memory, which errors
 * name `name`. `out->tensor.data` points into `bytes`, which must outlive it
 * (and may be unaligned); nothing is owned. */
int gc_npy_parse(const void *bytes, size_t size, const char *name, gc_npy *out, char *error,
                 size_t capacity);

void gc_npy_free(gc_npy *npy);

/* The longest header gc_npy_header writes. */
enum { GC_NPY_HEADER_MAX = 512 };

/* Writes the .npy header of a C-order array of `t`'s dtype and sizes (the
 * magic, the version, the header's length, the dict, padding up to a 64-byte
 * boundary) into `out`, which has room for GC_NPY_HEADER_MAX bytes; the data
 * follows it unchanged. Returns the header's length, 0 for a dtype out of
 * range or a rank over GC_NPY_MAX_RANK. */
size_t gc_npy_header(const gcrt_tensor *t, char out[GC_NPY_HEADER_MAX]);

/* Writes the row-major tensor `t` (strides NULL or contiguous) to `path`
 * through a temporary file beside it, renamed when complete, so that no
 * half-written file is left. */
int gc_npy_write(const char *path, const gcrt_tensor *t, char *error, size_t capacity);

/* Elements of `t`. */
size_t gc_tensor_numel(const gcrt_tensor *t);

/* Element `index` of `t`, counted in row-major order whatever its strides,
 * as a double. */
double gc_tensor_value(const gcrt_tensor *t, size_t index);

/* gc's short name of a dtype ("f32", "bf16"), "?" out of range. */
const char *gc_dtype_name(gcrt_dtype dtype);

/* "[2, 3]"; "[]" for rank 0. Truncated to `capacity`. */
void gc_format_shape(char *out, size_t capacity, size_t rank, const int64_t *sizes);

/* Tolerances: an element passes if |actual - expected| <= atol + rtol *
 * |expected|. */
typedef struct gc_tolerance {
  double rtol;
  double atol;
} gc_tolerance;

/* The tolerance a result is checked with when the expected tensor has dtype
 * `expected`: `rtol` and `atol` where given (>= 0), and where not (< 0) the
 * dtype's default, torch.testing.assert_close's for float16 (rtol 1e-3,
 * atol 1e-5) and bfloat16 (rtol 1.6e-2, atol 1e-5), 1e-4 each for every
 * other dtype. */
gc_tolerance gc_tolerance_for(gcrt_dtype expected, double rtol, double atol);

typedef struct gc_comparison {
  int pass;
  double max_abs_error;
  double max_rel_error; /* over the elements whose expected value is not 0 */
  /* Why the tensors could not be compared ("shape [2, 2] differs from the
   * expected [4]", likewise for dtypes); empty when they were. */
  char problem[160];
} gc_comparison;

/* Compares element by element as numpy.allclose does: NaNs must stand at the
 * same places, infinities must be equal, every other element must pass the
 * tolerance. Shapes and dtypes must be equal. Returns `out->pass`. */
int gc_compare(const gcrt_tensor *actual, const gcrt_tensor *expected, gc_tolerance tolerance,
               gc_comparison *out);

/* The runners' report of a comparison: "<label>: max abs error A, max rel
 * error R: pass" (or FAIL), or "<label>: FAIL: <problem>", without a newline.
 * Returns what snprintf returns. */
int gc_comparison_line(const gc_comparison *c, const char *label, char *out, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* GC_TENSORIO_TENSORIO_H */
