/*===- Npy.c - Reading and writing NumPy .npy files -----------------------===*
 *
 * Format: the magic "\x93NUMPY", a major and minor version byte, the header
 * length (2 bytes in version 1, 4 bytes in versions 2 and 3, little-endian),
 * then a Python dict literal such as
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces to a multiple of 64 bytes, then the raw data.
 *
 *===----------------------------------------------------------------------===*/
#define _POSIX_C_SOURCE 200809L
#include "gc/TensorIO/TensorIO.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What the codec knows of each dtype, in gcrt_dtype's order. numpy spells
 * single-byte types with '|' and multi-byte ones with the byte order; only
 * little-endian data is read. bfloat16 has no numpy type: torch and gc write
 * it as two opaque bytes. The names are gc's (Support/DType.cpp; a unit test
 * holds the two together). */
static const struct {
  const char *descr, *name;
  size_t size;
} kDTypes[] = {
    {"|b1", "bool", 1}, {"|u1", "u8", 1},  {"|i1", "i8", 1},   {"<i2", "i16", 2}, {"<i4", "i32", 4},
    {"<i8", "i64", 8},  {"<f2", "f16", 2}, {"|V2", "bf16", 2}, {"<f4", "f32", 4}, {"<f8", "f64", 8},
};
enum { kNumDTypes = sizeof kDTypes / sizeof kDTypes[0] };

static int known(gcrt_dtype t) { return (unsigned)t < kNumDTypes; }

const char *gc_dtype_name(gcrt_dtype dtype) { return known(dtype) ? kDTypes[dtype].name : "?"; }

static int fail(char *error, size_t capacity, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(error, capacity, format, args);
  va_end(args);
  return 0;
}

/* What follows `key` and a colon in the header dict, or NULL. */
static const char *valueOf(const char *header, const char *key) {
  const char *p = strstr(header, key);
  if (!p)
    return NULL;
  p += strlen(key);
  p += strspn(p, " ");
  if (*p++ != ':')
    return NULL;
  return p + strspn(p, " ");
}

/* Parses "(2, 3)" (or "(5,)", "()") into `sizes`; returns the rank or -1. */
static int parseShape(const char *p, int64_t *sizes) {
  if (*p++ != '(')
    return -1;
  int rank = 0;
  for (;;) {
    p += strspn(p, " ");
    if (*p == ')')
      return rank;
    if (*p < '0' || *p > '9' || rank == GC_NPY_MAX_RANK)
      return -1;
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (errno)
      return -1;
    sizes[rank++] = v;
    p = end + strspn(end, " ");
    if (*p == ',')
      ++p;
    else if (*p != ')')
      return -1;
  }
}

/* The dtype a header's descr names, or -1. '=' (native order) reads as
 * little-endian, and '<' of a single byte as '|'. */
static int dtypeOf(const char *descr, int length) {
  char want[4] = {0};
  if (length != 3)
    return -1;
  memcpy(want, descr, 3);
  if (want[0] == '=')
    want[0] = '<';
  if (want[0] == '<' && want[2] == '1')
    want[0] = '|';
  for (int i = 0; i < kNumDTypes; ++i)
    if (strcmp(want, kDTypes[i].descr) == 0)
      return i;
  return -1;
}

/* Fills `out` from the NUL-terminated header dict; `dataBytes` follow it. */
static int parseHeader(const char *header, size_t dataBytes, const char *name, gc_npy *out,
                       char *error, size_t capacity) {
  const char *descr = valueOf(header, "'descr'");
  if (!descr || *descr++ != '\'')
    return fail(error, capacity, "'%s': not a valid .npy file: no 'descr' in the header", name);
  const char *close = strchr(descr, '\'');
  int length = close ? (int)(close - descr) : 0;
  int type = dtypeOf(descr, length);
  if (type < 0)
    return fail(error, capacity, "'%s': unsupported .npy dtype '%.*s'", name, length, descr);
  const char *order = valueOf(header, "'fortran_order'");
  const char *shape = valueOf(header, "'shape'");
  int rank = shape ? parseShape(shape, out->sizes) : -1;
  if (!order || rank < 0)
    return fail(error, capacity,
                "'%s': not a valid .npy file: no valid 'fortran_order' and 'shape'", name);
  int fortran = strncmp(order, "True", 4) == 0;
  size_t elements = 1;
  for (int d = 0; d < rank; ++d) {
    size_t size = (size_t)out->sizes[d];
    if (size && elements > SIZE_MAX / 16 / size)
      return fail(error, capacity, "'%s': not a valid .npy file: shape too large", name);
    elements *= size;
  }
  size_t need = elements * kDTypes[type].size;
  if (dataBytes != need)
    return fail(error, capacity, "'%s': .npy data has %zu bytes, but the shape needs %zu", name,
                dataBytes, need);
  /* Column-major strides for Fortran order: the data is used where it lies. */
  int64_t stride = 1;
  for (int d = 0; fortran && d < rank; ++d) {
    out->strides[d] = stride;
    stride *= out->sizes[d] ? out->sizes[d] : 1;
  }
  out->tensor.dtype = (gcrt_dtype)type;
  out->tensor.rank = (size_t)rank;
  out->tensor.sizes = out->sizes;
  out->tensor.strides = fortran && rank > 1 ? out->strides : NULL;
  return 1;
}

int gc_npy_parse(const void *bytes, size_t size, const char *name, gc_npy *out, char *error,
                 size_t capacity) {
  memset(out, 0, sizeof *out);
  const unsigned char *b = bytes;
  if (size < 10 || memcmp(b, "\x93NUMPY", 6) != 0)
    return fail(error, capacity, "'%s': not a valid .npy file: no NUMPY magic", name);
  size_t headerLen, headerStart;
  if (b[6] == 1) {
    headerLen = b[8] | (size_t)b[9] << 8;
    headerStart = 10;
  } else if (b[6] == 2 || b[6] == 3) {
    if (size < 12)
      return fail(error, capacity, "'%s': not a valid .npy file: truncated header", name);
    headerLen = b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
    headerStart = 12;
  } else {
    return fail(error, capacity, "'%s': not a valid .npy file: unknown format version %d", name,
                b[6]);
  }
  if (headerLen > size - headerStart)
    return fail(error, capacity, "'%s': not a valid .npy file: truncated header", name);
  char *header = malloc(headerLen + 1);
  if (!header)
    return fail(error, capacity, "'%s': out of memory", name);
  memcpy(header, b + headerStart, headerLen);
  header[headerLen] = 0;
  size_t dataStart = headerStart + headerLen;
  int ok = parseHeader(header, size - dataStart, name, out, error, capacity);
  free(header);
  if (ok)
    out->tensor.data = (void *)(b + dataStart);
  return ok;
}

int gc_npy_read(const char *path, gc_npy *out, char *error, size_t capacity) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f)
    return fail(error, capacity, "'%s': cannot open: %s", path, strerror(errno));
  long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  unsigned char *bytes = size >= 0 ? malloc((size_t)size + 1) : NULL;
  int ok = bytes && fseek(f, 0, SEEK_SET) == 0 && fread(bytes, 1, (size_t)size, f) == (size_t)size;
  if (!ok)
    fail(error, capacity, "'%s': cannot read: %s", path,
         size >= 0 && !bytes ? "out of memory" : strerror(errno));
  fclose(f);
  if (!ok || !gc_npy_parse(bytes, (size_t)size, path, out, error, capacity)) {
    free(bytes);
    memset(out, 0, sizeof *out);
    return 0;
  }
  /* The data to the start of the allocation, aligned for any dtype. */
  memmove(bytes, out->tensor.data, gc_tensor_numel(&out->tensor) * kDTypes[out->tensor.dtype].size);
  out->tensor.data = out->owned = bytes;
  return 1;
}

void gc_npy_free(gc_npy *npy) {
  free(npy->owned);
  npy->owned = npy->tensor.data = NULL;
}

size_t gc_tensor_numel(const gcrt_tensor *t) {
  size_t n = 1;
  for (size_t d = 0; d < t->rank; ++d)
    n *= (size_t)t->sizes[d];
  return n;
}

void gc_format_shape(char *out, size_t capacity, size_t rank, const int64_t *sizes) {
  size_t n = (size_t)snprintf(out, capacity, "[");
  for (size_t d = 0; d < rank && n < capacity; ++d)
    n += (size_t)snprintf(out + n, capacity - n, "%lld%s", (long long)sizes[d],
                          d + 1 < rank ? ", " : "");
  if (n < capacity)
    snprintf(out + n, capacity - n, "]");
}

size_t gc_npy_header(const gcrt_tensor *t, char out[GC_NPY_HEADER_MAX]) {
  if (!known(t->dtype) || t->rank > GC_NPY_MAX_RANK)
    return 0;
  /* The shape as Python prints a tuple: "(2, 3)", "(5,)" or "()". */
  char *dict = out + 10;
  size_t room = GC_NPY_HEADER_MAX - 10;
  int n = snprintf(dict, room, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                   kDTypes[t->dtype].descr);
  for (size_t d = 0; d < t->rank; ++d)
    n += snprintf(dict + n, room - (size_t)n, "%lld%s", (long long)t->sizes[d],
                  t->rank == 1 ? "," : d + 1 < t->rank ? ", " : "");
  n += snprintf(dict + n, room - (size_t)n, "), }");
  /* Spaces and a newline up to a 64-byte boundary. */
  size_t len = (size_t)n + 1;
  len += (64 - (10 + len) % 64) % 64;
  memset(dict + n, ' ', len - 1 - (size_t)n);
  dict[len - 1] = '\n';
  memcpy(out, "\x93NUMPY\x01\x00", 8);
  out[8] = (char)(len & 0xff);
  out[9] = (char)(len >> 8);
  return 10 + len;
}

int gc_npy_write(const char *path, const gcrt_tensor *t, char *error, size_t capacity) {
  char header[GC_NPY_HEADER_MAX];
  size_t headerLen = gc_npy_header(t, header);
  if (!headerLen)
    return fail(error, capacity, "'%s': cannot write a tensor of dtype %d and rank %zu", path,
                (int)t->dtype, t->rank);
  size_t pathLen = strlen(path);
  char *temp = malloc(pathLen + 32);
  if (!temp)
    return fail(error, capacity, "'%s': out of memory", path);
  snprintf(temp, pathLen + 32, "%s.tmp%ld", path, (long)getpid());
  FILE *f = fopen(temp, "wb");
  int ok = f != NULL;
  if (f) {
    fwrite(header, 1, headerLen, f);
    fwrite(t->data, kDTypes[t->dtype].size, gc_tensor_numel(t), f);
    ok = !ferror(f);
    ok &= fclose(f) == 0;
    ok = ok && rename(temp, path) == 0;
  }
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

double gc_tensor_value(const gcrt_tensor *t, size_t index) {
  /* The row-major index as an element offset through the strides. */
  int64_t offset = (int64_t)index;
  if (t->strides) {
    offset = 0;
    for (size_t d = t->rank; d-- > 0;) {
      size_t size = (size_t)t->sizes[d];
      offset += (int64_t)(index % size) * t->strides[d];
      index /= size;
    }
  }
  const char *p = (const char *)t->data + offset * (int64_t)kDTypes[t->dtype].size;
  union {
    int8_t i8;
    uint8_t u8;
    int16_t i16;
    uint16_t u16;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    float f32;
    double f64;
  } v;
  memcpy(&v, p, kDTypes[t->dtype].size);
  switch (t->dtype) {
  case GCRT_BOOL:
    return v.u8 != 0;
  case GCRT_UINT8:
    return v.u8;
  case GCRT_INT8:
    return v.i8;
  case GCRT_INT16:
    return v.i16;
  case GCRT_INT32:
    return v.i32;
  case GCRT_INT64:
    return (double)v.i64;
  case GCRT_FLOAT16:
    return halfToDouble(v.u16);
  case GCRT_BFLOAT16:
    v.u32 = (uint32_t)v.u16 << 16;
    return v.f32;
  case GCRT_FLOAT32:
    return v.f32;
  case GCRT_FLOAT64:
    return v.f64;
  }
  return 0;
}
