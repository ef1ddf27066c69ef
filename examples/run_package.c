/* run_package: loads a gc package with libgcrt, runs it on .npy inputs, and
 * writes its outputs as .npy files.
 *
 *   run_package MODEL.gcpkg [-o DIR] [-t THREADS] IN0.npy IN1.npy ...
 *
 * It prints the graph's inputs and outputs, then one line per output. Only
 * C-order, little-endian .npy files are read (what numpy.save writes). */
#include "gcrt/gcrt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  gcrt_dtype dtype;
  const char *descr;
  size_t size;
  const char *name;
} kTypes[] = {
    {GCRT_BOOL, "|b1", 1, "bool"},         {GCRT_UINT8, "|u1", 1, "uint8"},
    {GCRT_INT8, "|i1", 1, "int8"},         {GCRT_INT16, "<i2", 2, "int16"},
    {GCRT_INT32, "<i4", 4, "int32"},       {GCRT_INT64, "<i8", 8, "int64"},
    {GCRT_FLOAT16, "<f2", 2, "float16"},   {GCRT_BFLOAT16, "<V2", 2, "bfloat16"},
    {GCRT_FLOAT32, "<f4", 4, "float32"},   {GCRT_FLOAT64, "<f8", 8, "float64"},
};
enum { kNumTypes = sizeof kTypes / sizeof kTypes[0], kMaxRank = 16 };

static int typeIndex(gcrt_dtype d) {
  for (int i = 0; i < kNumTypes; ++i)
    if (kTypes[i].dtype == d)
      return i;
  return 0;
}

/* One input read from a .npy file. */
typedef struct {
  void *data;
  int64_t sizes[kMaxRank];
  gcrt_tensor tensor;
} Npy;

static int fail(const char *what, const char *path) {
  fprintf(stderr, "run_package: %s: %s\n", path, what);
  return 0;
}

/* Parses the header's dict: 'descr', 'fortran_order' and 'shape'. */
static int readNpy(const char *path, Npy *out) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return fail("cannot open", path);
  unsigned char magic[10];
  int ok = fread(magic, 1, 10, f) == 10 && memcmp(magic, "\x93NUMPY", 6) == 0;
  size_t headerLen = 0;
  if (ok && magic[6] == 1) {
    headerLen = magic[8] | (magic[9] << 8);
  } else if (ok) {
    unsigned char more[2];
    ok = fread(more, 1, 2, f) == 2;
    headerLen = magic[8] | (magic[9] << 8) | ((size_t)more[0] << 16) | ((size_t)more[1] << 24);
  }
  char *header = ok ? calloc(headerLen + 1, 1) : NULL;
  ok = header && fread(header, 1, headerLen, f) == headerLen;
  if (!ok) {
    free(header);
    fclose(f);
    return fail("not a .npy file", path);
  }
  const char *descr = strstr(header, "'descr': '");
  const char *shape = strstr(header, "'shape': (");
  int type = -1;
  for (int i = 0; descr && i < kNumTypes; ++i)
    if (strncmp(descr + 10, kTypes[i].descr, 3) == 0)
      type = i;
  if (type < 0 || !shape || strstr(header, "'fortran_order': True")) {
    free(header);
    fclose(f);
    return fail("unsupported .npy header (dtype or Fortran order)", path);
  }
  size_t rank = 0, elements = 1;
  for (const char *p = shape + 10; *p && *p != ')';) {
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p) {
      ++p;
      continue;
    }
    if (rank == kMaxRank) {
      free(header);
      fclose(f);
      return fail("too many dimensions", path);
    }
    out->sizes[rank++] = v;
    elements *= (size_t)v;
    p = end;
  }
  free(header);
  size_t bytes = elements * kTypes[type].size;
  out->data = malloc(bytes ? bytes : 1);
  ok = out->data && fread(out->data, 1, bytes, f) == bytes;
  fclose(f);
  if (!ok)
    return fail("truncated data", path);
  out->tensor = (gcrt_tensor){out->data, kTypes[type].dtype, rank, out->sizes, NULL};
  return 1;
}

/* Writes a runtime-allocated (contiguous) output. */
static int writeNpy(const char *path, const gcrt_tensor *t) {
  char header[256];
  int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                   kTypes[typeIndex(t->dtype)].descr);
  size_t elements = 1;
  for (size_t d = 0; d < t->rank; ++d) {
    n += snprintf(header + n, sizeof header - n, "%lld,%s", (long long)t->sizes[d],
                  d + 1 < t->rank ? " " : "");
    elements *= (size_t)t->sizes[d];
  }
  n += snprintf(header + n, sizeof header - n, "), }");
  /* Pad with spaces so the data starts on a 64-byte boundary. */
  size_t total = 10 + (size_t)n + 1;
  size_t padded = (total + 63) / 64 * 64;
  FILE *f = fopen(path, "wb");
  if (!f)
    return fail("cannot write", path);
  size_t len = padded - 10;
  unsigned char magic[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, len & 0xff, len >> 8};
  fwrite(magic, 1, 10, f);
  fwrite(header, 1, (size_t)n, f);
  for (size_t i = total; i < padded; ++i)
    fputc(' ', f);
  fputc('\n', f);
  fwrite(t->data, kTypes[typeIndex(t->dtype)].size, elements, f);
  return fclose(f) == 0 ? 1 : fail("cannot write", path);
}

static void printInfo(const char *kind, size_t i, const gcrt_tensor_info *info) {
  printf("%s %zu: %s (%s) %s[", kind, i, info->name, info->role,
         kTypes[typeIndex(info->dtype)].name);
  for (size_t d = 0; d < info->rank; ++d) {
    if (info->sizes[d] >= 0)
      printf("%lld", (long long)info->sizes[d]);
    else if (info->max_sizes[d] >= 0)
      printf("%lld..%lld", (long long)info->min_sizes[d], (long long)info->max_sizes[d]);
    else
      printf("%lld..", (long long)info->min_sizes[d]);
    printf("%s", d + 1 < info->rank ? ", " : "");
  }
  printf("]\n");
}

int main(int argc, char **argv) {
  const char *package = NULL, *outDir = NULL;
  unsigned threads = 0;
  const char *inputs[64];
  size_t numInputs = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
      outDir = argv[++i];
    else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc)
      threads = (unsigned)atoi(argv[++i]);
    else if (!package)
      package = argv[i];
    else if (numInputs < 64)
      inputs[numInputs++] = argv[i];
  }
  if (!package) {
    fprintf(stderr, "usage: run_package MODEL.gcpkg [-o DIR] [-t THREADS] IN.npy...\n");
    return 2;
  }

  gcrt_package *pkg = NULL;
  gcrt_context *ctx = NULL;
  Npy npys[64];
  gcrt_tensor in[64], out[64];
  memset(npys, 0, sizeof npys);
  memset(out, 0, sizeof out);
  int status = 1;
  if (gcrt_package_load_file(package, &pkg) != GCRT_OK) {
    fprintf(stderr, "run_package: %s\n", gcrt_last_error());
    return 1;
  }
  size_t numOutputs = gcrt_output_count(pkg, 0);
  for (size_t i = 0; i < gcrt_input_count(pkg, 0); ++i) {
    gcrt_tensor_info info;
    gcrt_input_info(pkg, 0, i, &info);
    printInfo("input", i, &info);
  }
  for (size_t i = 0; i < numOutputs; ++i) {
    gcrt_tensor_info info;
    gcrt_output_info(pkg, 0, i, &info);
    printInfo("output", i, &info);
  }
  for (size_t i = 0; i < numInputs; ++i) {
    if (!readNpy(inputs[i], &npys[i]))
      goto done;
    in[i] = npys[i].tensor;
  }
  if (numOutputs > 64 || gcrt_context_create(pkg, 0, threads, &ctx) != GCRT_OK ||
      gcrt_run(ctx, in, numInputs, out, numOutputs) != GCRT_OK) {
    fprintf(stderr, "run_package: %s\n", numOutputs > 64 ? "too many outputs" : gcrt_last_error());
    goto done;
  }
  for (size_t i = 0; i < numOutputs; ++i) {
    printf("out%zu: %s rank %zu\n", i, kTypes[typeIndex(out[i].dtype)].name, out[i].rank);
    if (outDir) {
      char path[4096];
      snprintf(path, sizeof path, "%s/out%zu.npy", outDir, i);
      if (!writeNpy(path, &out[i]))
        goto done;
    }
  }
  status = 0;
done:
  for (size_t i = 0; i < numInputs; ++i)
    free(npys[i].data);
  gcrt_context_free(ctx);
  gcrt_package_free(pkg);
  return status;
}
