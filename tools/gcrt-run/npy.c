/*===- npy.c - NumPy .npy files for gcrt-run ------------------------------===*
 *
 * Format: the magic "\x93NUMPY", a major and minor version byte, the header
 * length (2 bytes in version 1, 4 bytes in versions 2 and 3, little-endian),
 * then a Python dict literal such as
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces to a multiple of 64 bytes, then the raw data.
 *
 *===----------------------------------------------------------------------===*/
#define _POSIX_C_SOURCE 200809L
#include "npy.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* numpy spells single-byte types with '|' and multi-byte ones with the byte
 * order; only little-endian data is read. bfloat16 has no numpy type: gc
 * writes it as two opaque bytes. Indexed by gcrt_dtype. */
static const char *const kDescrs[] = {"|b1", "|u1", "|i1", "<i2", "<i4",
                                      "<i8", "<f2", "|V2", "<f4", "<f8"};
enum { kNumTypes = sizeof kDescrs / sizeof kDescrs[0] };

static int fail(char *error, size_t capacity, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(error, capacity, format, args);
  va_end(args);
  return 0;
}

/* The quoted value after `'key':` in the header dict, or NULL. */
static const char *valueOf(const char *header, const char *key) {
  const char *p = strstr(header, key);
  if (!p)
    return NULL;
  p += strlen(key);
  while (*p == ' ')
    ++p;
  if (*p != ':')
    return NULL;
  ++p;
  while (*p == ' ')
    ++p;
  return p;
}

/* Parses "(2, 3)" (or "(5,)", "()") into `out`; returns the rank or -1. */
static int parseShape(const char *p, int64_t *sizes) {
  if (*p++ != '(')
    return -1;
  int rank = 0;
  for (;;) {
    while (*p == ' ')
      ++p;
    if (*p == ')')
      return rank;
    if (*p < '0' || *p > '9' || rank == kNpyMaxRank)
      return -1;
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (errno || v < 0)
      return -1;
    sizes[rank++] = v;
    p = end;
    while (*p == ' ')
      ++p;
    if (*p == ',')
      ++p;
    else if (*p != ')')
      return -1;
  }
}

int npyRead(const char *path, Npy *out, char *error, size_t capacity) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f)
    return fail(error, capacity, "'%s': cannot open: %s", path, strerror(errno));
  char *header = NULL;
  unsigned char magic[12];
  size_t headerLen = 0, headerStart = 10;
  int ok = fread(magic, 1, 10, f) == 10 && memcmp(magic, "\x93NUMPY", 6) == 0;
  if (!ok) {
    fail(error, capacity, "'%s': not a valid .npy file: no NUMPY magic", path);
    goto fail;
  }
  if (magic[6] == 1) {
    headerLen = magic[8] | (size_t)magic[9] << 8;
  } else if (magic[6] == 2 || magic[6] == 3) {
    if (fread(magic + 10, 1, 2, f) != 2) {
      fail(error, capacity, "'%s': not a valid .npy file: truncated header", path);
      goto fail;
    }
    headerLen = magic[8] | (size_t)magic[9] << 8 | (size_t)magic[10] << 16 |
                (size_t)magic[11] << 24;
    headerStart = 12;
  } else {
    fail(error, capacity, "'%s': not a valid .npy file: unknown format version %d", path,
         magic[6]);
    goto fail;
  }
  header = calloc(headerLen + 1, 1);
  if (!header || fread(header, 1, headerLen, f) != headerLen) {
    fail(error, capacity, "'%s': not a valid .npy file: truncated header", path);
    goto fail;
  }
  const char *descr = valueOf(header, "'descr'");
  if (!descr || *descr != '\'') {
    fail(error, capacity, "'%s': not a valid .npy file: no 'descr' in the header", path);
    goto fail;
  }
  char want[4] = {0};
  const char *close = strchr(descr + 1, '\'');
  if (close && close - descr - 1 == 3) {
    memcpy(want, descr + 1, 3);
    if (want[0] == '=')
      want[0] = '<';
    if (want[2] == '1' && want[0] == '<')
      want[0] = '|';
  }
  int type = -1;
  for (int i = 0; i < kNumTypes; ++i)
    if (strcmp(want, kDescrs[i]) == 0)
      type = i;
  if (type < 0) {
    int len = close ? (int)(close - descr - 1) : 0;
    fail(error, capacity, "'%s': unsupported .npy dtype '%.*s'", path, len, descr + 1);
    goto fail;
  }
  const char *order = valueOf(header, "'fortran_order'");
  const char *shape = valueOf(header, "'shape'");
  int rank = shape ? parseShape(shape, out->sizes) : -1;
  if (!order || rank < 0) {
    fail(error, capacity, "'%s': not a valid .npy file: no valid 'fortran_order' and 'shape'",
         path);
    goto fail;
  }
  int fortran = strncmp(order, "True", 4) == 0;
  size_t elements = 1;
  for (int d = 0; d < rank; ++d) {
    if (out->sizes[d] && elements > SIZE_MAX / 16 / (size_t)out->sizes[d]) {
      fail(error, capacity, "'%s': not a valid .npy file: shape too large", path);
      goto fail;
    }
    elements *= (size_t)out->sizes[d];
  }
  /* Row-major strides, or column-major ones for Fortran order: either way
   * the data is used where it lies. */
  int64_t stride = 1;
  for (int k = 0; k < rank; ++k) {
    int d = fortran ? k : rank - 1 - k;
    out->strides[d] = stride;
    stride *= out->sizes[d] ? out->sizes[d] : 1;
  }
  size_t bytes = elements * gcrt_dtype_size((gcrt_dtype)type);
  long dataStart = (long)(headerStart + headerLen);
  if (fseek(f, 0, SEEK_END) != 0) {
    fail(error, capacity, "'%s': cannot read: %s", path, strerror(errno));
    goto fail;
  }
  long fileSize = ftell(f);
  if (fileSize < dataStart || (size_t)(fileSize - dataStart) != bytes) {
    fail(error, capacity, "'%s': .npy data has %ld bytes, but the shape needs %zu", path,
         fileSize < dataStart ? 0L : fileSize - dataStart, bytes);
    goto fail;
  }
  out->data = malloc(bytes ? bytes : 1);
  if (!out->data || fseek(f, dataStart, SEEK_SET) != 0 || fread(out->data, 1, bytes, f) != bytes) {
    fail(error, capacity, "'%s': cannot read its data", path);
    goto fail;
  }
  free(header);
  fclose(f);
  out->tensor = (gcrt_tensor){out->data, (gcrt_dtype)type, (size_t)rank, out->sizes,
                              fortran && rank > 1 ? out->strides : NULL};
  return 1;
fail:
  free(header);
  npyFree(out);
  fclose(f);
  return 0;
}

void npyFree(Npy *npy) {
  free(npy->data);
  npy->data = NULL;
}

size_t npyNumel(const gcrt_tensor *t) {
  size_t n = 1;
  for (size_t d = 0; d < t->rank; ++d)
    n *= (size_t)t->sizes[d];
  return n;
}

int npyWrite(const char *path, const gcrt_tensor *t, char *error, size_t capacity) {
  /* The same header as gc-run's: "(2, 3)", "(5,)" or "()", then ", }",
   * padded with spaces so that the data starts on a 64-byte boundary. */
  char header[512];
  int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                   kDescrs[t->dtype]);
  for (size_t d = 0; d < t->rank; ++d)
    n += snprintf(header + n, sizeof header - (size_t)n, "%lld%s", (long long)t->sizes[d],
                  t->rank == 1 ? "," : d + 1 < t->rank ? ", " : "");
  n += snprintf(header + n, sizeof header - (size_t)n, "), }");
  size_t total = 10 + (size_t)n + 1;
  size_t len = (size_t)n + (64 - total % 64) % 64 + 1;
  unsigned char magic[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, len & 0xff, len >> 8};

  size_t pathLen = strlen(path);
  char *temp = malloc(pathLen + 32);
  if (!temp)
    return fail(error, capacity, "'%s': out of memory", path);
  snprintf(temp, pathLen + 32, "%s.tmp%ld", path, (long)getpid());
  FILE *f = fopen(temp, "wb");
  if (!f) {
    fail(error, capacity, "'%s': cannot write: %s", path, strerror(errno));
    free(temp);
    return 0;
  }
  fwrite(magic, 1, sizeof magic, f);
  fwrite(header, 1, (size_t)n, f);
  for (size_t i = (size_t)n + 1; i < len; ++i)
    fputc(' ', f);
  fputc('\n', f);
  fwrite(t->data, gcrt_dtype_size(t->dtype), npyNumel(t), f);
  int ok = !ferror(f);
  ok &= fclose(f) == 0;
  ok = ok && rename(temp, path) == 0;
  if (!ok) {
    fail(error, capacity, "'%s': cannot write: %s", path, strerror(errno));
    remove(temp);
  }
  free(temp);
  return ok;
}

static double halfToDouble(uint16_t h) {
  double sign = h >> 15 ? -1 : 1;
  int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0)
    return sign * ldexp(mantissa, -24);
  if (exponent == 31)
    return mantissa ? NAN : sign * INFINITY;
  return sign * ldexp(mantissa + 1024, exponent - 25);
}

double npyValue(const gcrt_tensor *t, size_t index) {
  /* The row-major index as an element offset through the strides. */
  size_t offset = index;
  if (t->strides) {
    offset = 0;
    for (size_t d = t->rank; d-- > 0;) {
      size_t size = (size_t)t->sizes[d];
      offset += (index % size) * (size_t)t->strides[d];
      index /= size;
    }
  }
  const char *p = (const char *)t->data + offset * gcrt_dtype_size(t->dtype);
  switch (t->dtype) {
  case GCRT_BOOL:
    return *p != 0;
  case GCRT_UINT8:
    return *(const uint8_t *)p;
  case GCRT_INT8:
    return *(const int8_t *)p;
  case GCRT_INT16: {
    int16_t v;
    memcpy(&v, p, sizeof v);
    return v;
  }
  case GCRT_INT32: {
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
  }
  case GCRT_INT64: {
    int64_t v;
    memcpy(&v, p, sizeof v);
    return (double)v;
  }
  case GCRT_FLOAT16: {
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return halfToDouble(v);
  }
  case GCRT_BFLOAT16: {
    uint16_t v;
    memcpy(&v, p, sizeof v);
    uint32_t bits = (uint32_t)v << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
  }
  case GCRT_FLOAT32: {
    float v;
    memcpy(&v, p, sizeof v);
    return v;
  }
  case GCRT_FLOAT64: {
    double v;
    memcpy(&v, p, sizeof v);
    return v;
  }
  }
  return 0;
}
