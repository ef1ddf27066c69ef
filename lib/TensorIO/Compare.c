/*===- Compare.c - Comparing results with expected values -----------------===*/
#include "gc/TensorIO/TensorIO.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

gc_tolerance gc_tolerance_for(gcrt_dtype expected, double rtol, double atol) {
  gc_tolerance t = {1e-4, 1e-4};
  if (expected == GCRT_FLOAT16)
    t = (gc_tolerance){1e-3, 1e-5};
  else if (expected == GCRT_BFLOAT16)
    t = (gc_tolerance){1.6e-2, 1e-5};
  if (rtol >= 0)
    t.rtol = rtol;
  if (atol >= 0)
    t.atol = atol;
  return t;
}

/* Says in `c->problem` why the tensors cannot be compared; 0 if they can. */
static int incomparable(const gcrt_tensor *actual, const gcrt_tensor *expected, gc_comparison *c) {
  char a[64], e[64];
  int sameShape = actual->rank == expected->rank;
  for (size_t d = 0; sameShape && d < actual->rank; ++d)
    sameShape = actual->sizes[d] == expected->sizes[d];
  if (!sameShape) {
    gc_format_shape(a, sizeof a, actual->rank, actual->sizes);
    gc_format_shape(e, sizeof e, expected->rank, expected->sizes);
    snprintf(c->problem, sizeof c->problem, "shape %s differs from the expected %s", a, e);
  } else if (actual->dtype != expected->dtype) {
    snprintf(c->problem, sizeof c->problem, "dtype %s differs from the expected %s",
             gc_dtype_name(actual->dtype), gc_dtype_name(expected->dtype));
  }
  return c->problem[0] != 0;
}

int gc_compare(const gcrt_tensor *actual, const gcrt_tensor *expected, gc_tolerance tolerance,
               gc_comparison *c) {
  memset(c, 0, sizeof *c);
  if (incomparable(actual, expected, c))
    return 0;
  c->pass = 1;
  for (size_t i = 0, n = gc_tensor_numel(expected); i < n; ++i) {
    double x = gc_tensor_value(actual, i), y = gc_tensor_value(expected, i);
    if (isnan(x) || isnan(y)) {
      c->pass &= isnan(x) && isnan(y);
      continue;
    }
    if (isinf(x) || isinf(y)) {
      c->pass &= x == y;
      continue;
    }
    double abs = fabs(x - y);
    c->max_abs_error = fmax(c->max_abs_error, abs);
    if (y != 0)
      c->max_rel_error = fmax(c->max_rel_error, abs / fabs(y));
    c->pass &= abs <= tolerance.atol + tolerance.rtol * fabs(y);
  }
  return c->pass;
}

int gc_comparison_line(const gc_comparison *c, const char *label, char *out, size_t capacity) {
  if (c->problem[0])
    return snprintf(out, capacity, "%s: FAIL: %s", label, c->problem);
  return snprintf(out, capacity, "%s: max abs error %.3g, max rel error %.3g: %s", label,
                  c->max_abs_error, c->max_rel_error, c->pass ? "pass" : "FAIL");
}
