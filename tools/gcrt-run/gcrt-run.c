/*===- gcrt-run.c - Running packages with libgcrt alone -------------------===*
 *
 * gcrt-run loads a package, runs one of its graphs on .npy inputs, writes or
 * checks the outputs, and times runs. It is plain C over gcrt.h and links
 * libgcrt and the plain-C TensorIO library (.npy files, comparison) alone,
 * so that it is what a deployment carries (docs/package.md)
 * and the C API's first user, as IREE's iree-run-module is its runtime's.
 * Its output lines are gc-run's, so that the two can be compared.
 *
 *===----------------------------------------------------------------------===*/
#define _POSIX_C_SOURCE 200809L
#include "gcrt/gcrt.h"
#include "device.h"
#include "gc/TensorIO/TensorIO.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char kUsage[] =
    "usage: gcrt-run MODEL.gcpkg [options] IN0.npy IN1.npy ...\n"
    "       gcrt-run --list-devices\n"
    "\n"
    "Runs a graph of a gc package on .npy inputs (one per user input, in order)\n"
    "with libgcrt, and prints the graph's inputs and outputs. A package compiled\n"
    "for CUDA runs on an NVIDIA GPU (GC_CUDA_DEVICE picks which).\n"
    "\n"
    "  --graph NAME       the graph to run (default: the first, the forward graph)\n"
    "  --weights-archive FILE\n"
    "                     for a package made with --weights=external: bind its\n"
    "                     weights from the archive FILE (another .pt2 of the same\n"
    "                     architecture) instead of the one the package names\n"
    "  --plugin PATH      load the plugin library PATH, which gives custom ops the\n"
    "                     package calls (also --plugin=PATH; repeatable; or list\n"
    "                     them in GCRT_PLUGINS, separated by ':')\n"
    "  --weight NAME FILE replace weight NAME (a parameter or buffer, as the model\n"
    "                     names it) by the .npy FILE; repeatable\n"
    "  -o DIR             write out<k>.npy per user output, and saved<k>.npy,\n"
    "                     grad.<target>.npy, buffer_after.<target>.npy,\n"
    "                     input_after.<target>.npy for values saved for\n"
    "                     backward, gradients, mutated buffers and inputs\n"
    "                     (DIR is made when missing)\n"
    "  --expect FILE...   an expected .npy per user output, in order; prints\n"
    "                     'out<k>: max abs error A, max rel error R: pass|FAIL'\n"
    "  --rtol R, --atol A tolerances of --expect: an element passes if\n"
    "                     |got - want| <= A + R * |want| (default 1e-4 each;\n"
    "                     for float16 R 1e-3, bfloat16 R 1.6e-2, A 1e-5 each)\n"
    "  --runs N           run N times in a row on one context, each run reading the\n"
    "                     buffers the one before mutated (-o and --expect see the\n"
    "                     last run)\n"
    "  --inputs-dir DIR   with --runs, instead of IN files: run k reads\n"
    "                     DIR/run<k>/in0.npy, in1.npy, ...\n"
    "  --expect-runs      check run k's user outputs against DIR/run<k>/out<j>.npy\n"
    "  --set-buffer NAME=FILE  make FILE the value of the mutated buffer NAME\n"
    "                     before the first run; repeatable\n"
    "  --reset-before K   set every mutated buffer back to the package's value\n"
    "                     before run K (counted from 0)\n"
    "  --expect-buffer NAME=FILE  check the mutated buffer NAME after the last run\n"
    "                     (read with gcrt_context_read_buffer); repeatable\n"
    "  --bench N          also time N runs after a warm-up run\n"
    "  --threads T        worker threads (default 0: one per hardware thread)\n"
    "  --profile          print the time each plan step took, and its roofline\n"
    "                     against the machine's peaks (measured on the CPU, from\n"
    "                     the device's attributes on a GPU)\n"
    "  --peaks GF,GB      the peaks --profile uses instead, in GFLOP/s and GB/s\n"
    "                     (or the environment variable GC_PEAKS)\n"
    "  --seed N           the seed of the context's random numbers (default 0)\n"
    "  --verbose          also print the device the package runs on, and each\n"
    "                     entry whose weights were checked at load\n"
    "  --no-verify-weights  bind the weights without checking their CRC-32 at\n"
    "                     load (a damaged weight then gives wrong numbers)\n"
    "  --no-cuda-graphs   on a GPU, launch the steps of every run one by one\n"
    "                     instead of replaying a CUDA graph of them\n"
    "  --no-early-launch  on a GPU of sm_90 or later, start each kernel only when\n"
    "                     the one before it has ended (no programmatic\n"
    "                     dependent launch)\n"
    "  --allow-tf32       on a GPU, let float32 matrix products and convolutions\n"
    "                     use TF32 tensor cores (about 1e-3 relative error)\n"
    "  --device-io        for a CUDA package: copy the inputs to GPU memory and\n"
    "                     run on tensors there (gcrt_run_device), as a caller\n"
    "                     whose tensors live on the GPU does; --bench then times\n"
    "                     runs without host copies\n"
    "  --list-devices     print the NVIDIA GPUs libgcrt can use, or why there are\n"
    "                     none ('no CUDA GPU: ...'), and exit 0\n"
    "  -h, --help         this text\n"
    "\n"
    "Exits 1 on an error (named with its file) or a mismatch, 2 on a bad\n"
    "command line.\n";

typedef struct Options {
  const char *package, *graph, *outDir, *weights, *inputsDir, *peaks;
  const char **inputs, **expects;
  /* --weight NAME FILE: names and files, in pairs. */
  const char **weightSets;
  /* --set-buffer and --expect-buffer: NAME=FILE each. */
  const char **setBuffers, **expectBuffers;
  /* --plugin PATH: plugin libraries, loaded before the package. */
  const char **plugins;
  size_t numInputs, numExpects, numWeightSets, numSetBuffers, numExpectBuffers, numPlugins;
  double rtol, atol;
  unsigned long bench, threads, runs, resetBefore;
  unsigned long long seed;
  int profile, expectRuns, reset, verbose, listDevices, noCudaGraphs, noEarlyLaunch, allowTF32,
      deviceIo;
  int noVerifyWeights;
} Options;

static int error(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fputs("gcrt-run: error: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
  return 1;
}

static int parseNumber(const char *flag, const char *text, double *out) {
  char *end;
  errno = 0;
  *out = strtod(text, &end);
  if (errno || end == text || *end || !(*out >= 0))
    return error("%s takes a number >= 0, got '%s'", flag, text) + 1;
  return 0;
}

static int parseCount(const char *flag, const char *text, unsigned long *out) {
  char *end;
  errno = 0;
  *out = strtoul(text, &end, 10);
  if (errno || end == text || *end || text[0] == '-' || *out > 1000000000ul)
    return error("%s takes a count, got '%s'", flag, text) + 1;
  return 0;
}

/* Returns 0, or the exit code: 2 for a bad command line, -1 after --help. */
static int parseOptions(int argc, char **argv, Options *o) {
  o->inputs = calloc((size_t)argc, sizeof *o->inputs);
  o->expects = calloc((size_t)argc, sizeof *o->expects);
  o->weightSets = calloc((size_t)argc, sizeof *o->weightSets);
  o->setBuffers = calloc((size_t)argc, sizeof *o->setBuffers);
  o->expectBuffers = calloc((size_t)argc, sizeof *o->expectBuffers);
  o->plugins = calloc((size_t)argc, sizeof *o->plugins);
  if (!o->inputs || !o->expects || !o->weightSets || !o->setBuffers || !o->expectBuffers ||
      !o->plugins)
    return error("out of memory") + 1;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    int isValueOption = strcmp(a, "--graph") == 0 || strcmp(a, "-o") == 0 ||
                        strcmp(a, "--rtol") == 0 || strcmp(a, "--atol") == 0 ||
                        strcmp(a, "--bench") == 0 || strcmp(a, "--threads") == 0 ||
                        strcmp(a, "--weights-archive") == 0 || strcmp(a, "--runs") == 0 ||
                        strcmp(a, "--inputs-dir") == 0 || strcmp(a, "--set-buffer") == 0 ||
                        strcmp(a, "--expect-buffer") == 0 || strcmp(a, "--reset-before") == 0 ||
                        strcmp(a, "--seed") == 0 || strcmp(a, "--peaks") == 0 ||
                        strcmp(a, "--plugin") == 0;
    if (isValueOption && i + 1 == argc)
      return error("%s needs a value (gcrt-run --help)", a) + 1;
    if (strcmp(a, "--weight") == 0 && i + 2 >= argc)
      return error("--weight needs a name and a file (gcrt-run --help)") + 1;
    if (strcmp(a, "--weights") == 0)
      return error("--weights is now --weights-archive FILE") + 1;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(kUsage, stdout);
      return -1;
    } else if (strcmp(a, "--profile") == 0) {
      o->profile = 1;
    } else if (strcmp(a, "--peaks") == 0) {
      o->peaks = argv[++i];
    } else if (strcmp(a, "--verbose") == 0) {
      o->verbose = 1;
    } else if (strcmp(a, "--no-verify-weights") == 0) {
      o->noVerifyWeights = 1;
    } else if (strcmp(a, "--no-cuda-graphs") == 0) {
      o->noCudaGraphs = 1;
    } else if (strcmp(a, "--no-early-launch") == 0) {
      o->noEarlyLaunch = 1;
    } else if (strcmp(a, "--allow-tf32") == 0) {
      o->allowTF32 = 1;
    } else if (strcmp(a, "--device-io") == 0) {
      o->deviceIo = 1;
    } else if (strcmp(a, "--list-devices") == 0) {
      o->listDevices = 1;
    } else if (strcmp(a, "--expect-runs") == 0) {
      o->expectRuns = 1;
    } else if (strcmp(a, "--inputs-dir") == 0) {
      o->inputsDir = argv[++i];
    } else if (strcmp(a, "--set-buffer") == 0 || strcmp(a, "--expect-buffer") == 0) {
      if (!strchr(argv[i + 1], '='))
        return error("%s takes NAME=FILE, got '%s'", a, argv[i + 1]) + 1;
      if (a[2] == 's')
        o->setBuffers[o->numSetBuffers++] = argv[++i];
      else
        o->expectBuffers[o->numExpectBuffers++] = argv[++i];
    } else if (strcmp(a, "--runs") == 0 || strcmp(a, "--reset-before") == 0) {
      if (parseCount(a, argv[i + 1], a[4] == 'n' ? &o->runs : &o->resetBefore))
        return 2;
      o->reset |= a[4] == 's';
      ++i;
    } else if (strcmp(a, "--expect") == 0) {
      /* Greedy, as in gc-run: every following argument up to an option. */
      if (i + 1 == argc || argv[i + 1][0] == '-')
        return error("--expect needs at least one file") + 1;
      while (i + 1 < argc && argv[i + 1][0] != '-')
        o->expects[o->numExpects++] = argv[++i];
    } else if (strcmp(a, "--graph") == 0) {
      o->graph = argv[++i];
    } else if (strcmp(a, "--weights-archive") == 0) {
      o->weights = argv[++i];
    } else if (strcmp(a, "--plugin") == 0) {
      o->plugins[o->numPlugins++] = argv[++i];
    } else if (strncmp(a, "--plugin=", 9) == 0) {
      o->plugins[o->numPlugins++] = a + 9;
    } else if (strcmp(a, "--weight") == 0) {
      o->weightSets[o->numWeightSets++] = argv[++i];
      o->weightSets[o->numWeightSets++] = argv[++i];
    } else if (strcmp(a, "-o") == 0) {
      o->outDir = argv[++i];
    } else if (strcmp(a, "--rtol") == 0 || strcmp(a, "--atol") == 0) {
      if (parseNumber(a, argv[i + 1], a[2] == 'r' ? &o->rtol : &o->atol))
        return 2;
      ++i;
    } else if (strcmp(a, "--bench") == 0 || strcmp(a, "--threads") == 0) {
      if (parseCount(a, argv[i + 1], a[2] == 'b' ? &o->bench : &o->threads))
        return 2;
      ++i;
    } else if (strcmp(a, "--seed") == 0) {
      char *end;
      errno = 0;
      o->seed = strtoull(argv[i + 1], &end, 10);
      if (errno || end == argv[i + 1] || *end || argv[i + 1][0] == '-')
        return error("--seed takes an integer in [0, 2^64), got '%s'", argv[i + 1]) + 1;
      ++i;
    } else if (a[0] == '-' && a[1]) {
      return error("unknown option '%s' (gcrt-run --help)", a) + 1;
    } else if (!o->package) {
      o->package = a;
    } else {
      o->inputs[o->numInputs++] = a;
    }
  }
  if (o->listDevices)
    return 0;
  if (!o->package) {
    fputs(kUsage, stderr);
    return 2;
  }
  if (o->runs == 0 && (o->inputsDir || o->expectRuns || o->reset))
    return error("--inputs-dir, --expect-runs and --reset-before need --runs") + 1;
  if (o->inputsDir && o->numInputs)
    return error("give inputs either as files or with --inputs-dir, not both") + 1;
  if (o->expectRuns && !o->inputsDir)
    return error("--expect-runs needs --inputs-dir") + 1;
  if (o->reset && o->resetBefore >= o->runs)
    return error("--reset-before %lu: there are only %lu runs", o->resetBefore, o->runs) + 1;
  if (o->runs == 0)
    o->runs = 1;
  return 0;
}

/* "f32[32, 64]", with a symbolic size as its range "2..64" or "2..". */
static void formatType(char *out, size_t capacity, const gcrt_tensor_info *info) {
  int n = snprintf(out, capacity, "%s[", gcrt_dtype_name(info->dtype));
  for (size_t d = 0; d < info->rank && (size_t)n < capacity; ++d) {
    const char *sep = d + 1 < info->rank ? ", " : "";
    if (info->sizes[d] >= 0)
      n += snprintf(out + n, capacity - (size_t)n, "%lld%s", (long long)info->sizes[d], sep);
    else if (info->max_sizes[d] >= 0)
      n += snprintf(out + n, capacity - (size_t)n, "%lld..%lld%s", (long long)info->min_sizes[d],
                    (long long)info->max_sizes[d], sep);
    else
      n += snprintf(out + n, capacity - (size_t)n, "%lld..%s", (long long)info->min_sizes[d], sep);
  }
  if ((size_t)n < capacity)
    snprintf(out + n, capacity - (size_t)n, "]");
}

/* Checks an input against what the graph takes, so that the error names
 * the file; symbols bound by several inputs are left to gcrt_run. */
static int checkInput(const char *path, size_t index, const gcrt_tensor_info *info,
                      const gcrt_tensor *t) {
  int ok = t->dtype == info->dtype && t->rank == info->rank;
  for (size_t d = 0; ok && d < t->rank; ++d)
    ok = info->sizes[d] >= 0
             ? t->sizes[d] == info->sizes[d]
             : t->sizes[d] >= info->min_sizes[d] &&
                   (info->max_sizes[d] < 0 || t->sizes[d] <= info->max_sizes[d]);
  if (ok)
    return 1;
  char want[256], got[256];
  formatType(want, sizeof want, info);
  gc_format_shape(got, sizeof got, t->rank, t->sizes);
  error("'%s': input %zu ('%s') must be %s, got %s%s", path, index, info->name, want,
        gcrt_dtype_name(t->dtype), got);
  return 0;
}

/* Prints gc-run's line "<label>: max abs error A, max rel error R: pass"
 * (or FAIL) with gc-run's rule, and returns whether it passed; a negative
 * tolerance is the expected dtype's default. */
static int compare(const char *label, const gcrt_tensor *got, const gcrt_tensor *want,
                   double rtol, double atol) {
  gc_comparison c;
  char line[1024];
  gc_compare(got, want, gc_tolerance_for(want->dtype, rtol, atol), &c);
  gc_comparison_line(&c, label, line, sizeof line);
  puts(line);
  return c.pass;
}

/* The file name gc-run gives output `info` (without .npy), counting user
 * outputs and saved values in `user` and `saved`; "" for an output it does
 * not write. */
static void outputName(char *out, size_t capacity, const gcrt_tensor_info *info, size_t *user,
                       size_t *saved) {
  const char *role = info->role;
  if (strcmp(role, "user_output") == 0)
    snprintf(out, capacity, "out%zu", (*user)++);
  else if (strcmp(role, "saved_for_backward") == 0)
    snprintf(out, capacity, "saved%zu", (*saved)++);
  else if (strncmp(role, "gradient_to_", 12) == 0)
    snprintf(out, capacity, "grad.%s", info->target);
  else if (strcmp(role, "buffer_mutation") == 0)
    snprintf(out, capacity, "buffer_after.%s", info->target);
  else if (strcmp(role, "user_input_mutation") == 0)
    snprintf(out, capacity, "input_after.%s", info->target);
  else
    out[0] = 0;
}

static double nowMs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int compareDoubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* --list-devices: one line per GPU, or why there is none. */
static int listDevices(void) {
  size_t count = 0;
  if (gcrt_cuda_device_count(&count) != GCRT_OK) {
    printf("no CUDA GPU: %s\n", gcrt_last_error());
    return 0;
  }
  for (size_t i = 0; i < count; ++i) {
    const char *name = "";
    if (gcrt_cuda_device_name(i, &name) != GCRT_OK)
      return error("%s", gcrt_last_error());
    printf("cuda device %zu: %s\n", i, name);
  }
  return 0;
}

/* "device: cpu" or "device: cuda:sm_90 NVIDIA H100 80GB HBM3". */
static int printDevice(gcrt_package *pkg) {
  const char *device = "";
  if (gcrt_package_device(pkg, &device) != GCRT_OK)
    return error("%s", gcrt_last_error());
  printf("device: %s\n", device);
  return 0;
}

/* --verbose: what the bound weights were checked against at load. */
static void printVerified(const gcrt_package *pkg) {
  size_t n = gcrt_package_verified_count(pkg);
  if (!n)
    printf("weights: not verified\n");
  for (size_t i = 0; i < n; ++i) {
    gcrt_verified_entry v;
    gcrt_package_verified(pkg, i, &v);
    printf("verified: '%s' entry '%s', %llu bytes, %s, %.6f s\n", v.file, v.entry,
           (unsigned long long)v.bytes, v.check, v.seconds);
  }
}

/* --device-io: GPU copies of a run's inputs and its outputs, and host
 * copies of the outputs (what -o and --expect read). */
typedef struct DeviceRun {
  DeviceIo *io;
  gcrt_package *package;
  size_t graph;
  gcrt_tensor *in, *out, *hostOut;
  int64_t (*outSizes)[GC_NPY_MAX_RANK];
  size_t numIn, numOut;
} DeviceRun;

/* Whether output `j` is a mutated buffer's new value, which the run leaves
 * in the buffer's own GPU memory (the context's, not freed here). */
static int isStateOutput(const DeviceRun *d, size_t j) {
  gcrt_tensor_info info;
  return gcrt_output_info(d->package, d->graph, j, &info) == GCRT_OK &&
         strcmp(info.role, "buffer_mutation") == 0;
}

static void deviceRunFree(DeviceRun *d) {
  for (size_t i = 0; d->in && i < d->numIn; ++i)
    deviceFree(d->io, d->in[i].data);
  for (size_t j = 0; d->out && j < d->numOut; ++j) {
    if (!isStateOutput(d, j))
      deviceFree(d->io, d->out[j].data);
    free(d->hostOut[j].data);
  }
  free(d->in);
  free(d->out);
  free(d->hostOut);
  free(d->outSizes);
  deviceClose(d->io);
}

static int deviceRunOpen(DeviceRun *d, gcrt_package *pkg, size_t graph, const char *path) {
  char message[512];
  *d = (DeviceRun){.package = pkg,
                   .graph = graph,
                   .numIn = gcrt_input_count(pkg, graph),
                   .numOut = gcrt_output_count(pkg, graph)};
  size_t numIn = d->numIn, numOut = d->numOut;
  const char *where = "";
  if (gcrt_package_device(pkg, &where) != GCRT_OK)
    return error("%s", gcrt_last_error());
  if (strncmp(where, "cuda:", 5) != 0)
    return error("'%s' runs on the %s; --device-io is for packages compiled for CUDA", path,
                 where);
  d->io = deviceOpen(message, sizeof message);
  if (!d->io)
    return error("%s", message);
  d->in = calloc(numIn + 1, sizeof *d->in);
  d->out = calloc(numOut + 1, sizeof *d->out);
  d->hostOut = calloc(numOut + 1, sizeof *d->hostOut);
  d->outSizes = calloc(numOut + 1, sizeof *d->outSizes);
  if (!d->in || !d->out || !d->hostOut || !d->outSizes)
    return error("out of memory");
  return 0;
}

static size_t bytesOf(const gcrt_tensor *t) {
  return gc_tensor_numel(t) * gcrt_dtype_size(t->dtype);
}

/* Copies the host inputs to new GPU memory and makes GPU memory for the
 * outputs of the sizes these inputs give. */
static int deviceRunPrepare(DeviceRun *d, gcrt_context *ctx, const gcrt_tensor *in,
                            const char *package) {
  char message[512];
  for (size_t i = 0; i < d->numIn; ++i) {
    if (in[i].strides)
      return error("input %zu is in Fortran order; --device-io copies row-major arrays only", i);
    deviceFree(d->io, d->in[i].data);
    d->in[i] = in[i];
    d->in[i].data = deviceAlloc(d->io, bytesOf(&in[i]), message, sizeof message);
    if (!d->in[i].data ||
        !deviceUpload(d->io, d->in[i].data, in[i].data, bytesOf(&in[i]), message, sizeof message))
      return error("input %zu: %s", i, message);
  }
  for (size_t j = 0; j < d->numOut; ++j) {
    size_t rank = 0;
    gcrt_tensor_info info;
    if (gcrt_output_sizes(ctx, in, d->numIn, j, d->outSizes[j], GC_NPY_MAX_RANK, &rank) !=
            GCRT_OK ||
        gcrt_output_info(d->package, d->graph, j, &info) != GCRT_OK)
      return error("'%s': %s", package, gcrt_last_error());
    /* A mutated buffer's new value is left in the buffer's own GPU memory
     * (data NULL), as a decoding loop leaves its KV cache: no copy. */
    int state = isStateOutput(d, j);
    if (!state)
      deviceFree(d->io, d->out[j].data);
    free(d->hostOut[j].data);
    d->out[j] = (gcrt_tensor){NULL, info.dtype, rank, d->outSizes[j], NULL};
    d->hostOut[j] = d->out[j];
    if (!state)
      d->out[j].data = deviceAlloc(d->io, bytesOf(&d->out[j]), message, sizeof message);
    d->hostOut[j].data = malloc(bytesOf(&d->out[j]) + 1);
    if ((!state && !d->out[j].data) || !d->hostOut[j].data)
      return error("output %zu: %s", j, d->hostOut[j].data ? message : "out of memory");
  }
  return 0;
}

/* Copies the outputs to their host copies, and the inputs back into the
 * host inputs (a mutated input's new value, as gcrt_run gives it). */
static int deviceRunFinish(DeviceRun *d, gcrt_tensor *in) {
  char message[512];
  for (size_t j = 0; j < d->numOut; ++j)
    if (!deviceDownload(d->io, d->hostOut[j].data, d->out[j].data, bytesOf(&d->out[j]), message,
                        sizeof message))
      return error("output %zu: %s", j, message);
  for (size_t i = 0; i < d->numIn; ++i)
    if (!deviceDownload(d->io, in[i].data, d->in[i].data, bytesOf(&in[i]), message,
                        sizeof message))
      return error("input %zu: %s", i, message);
  return 0;
}

/* Run `k` of `o->runs`: gcrt_run on the host tensors, or with `device`
 * through GPU memory, `out` then getting the host copies. Returns 0, or 1
 * after reporting the error. */
static int runOnce(gcrt_context *ctx, const Options *o, unsigned long k, gcrt_tensor *in,
                   size_t numIn, gcrt_tensor *out, size_t numOut, DeviceRun *device) {
  gcrt_status status;
  if (!device) {
    for (size_t j = 0; j < numOut; ++j)
      out[j] = (gcrt_tensor){0};
    status = gcrt_run(ctx, in, numIn, out, numOut);
  } else {
    if (deviceRunPrepare(device, ctx, in, o->package))
      return 1;
    status = gcrt_run_device(ctx, device->in, numIn, device->out, numOut);
    for (size_t j = 0; j < numOut; ++j)
      out[j] = device->hostOut[j];
  }
  if (status != GCRT_OK)
    return o->runs > 1 ? error("'%s', run %lu: %s", o->package, k, gcrt_last_error())
                       : error("'%s': %s", o->package, gcrt_last_error());
  return device ? deviceRunFinish(device, in) : 0;
}

/* One warm-up run, then `n` timed ones: gc-run's "bench:" line. */
static int bench(gcrt_context *ctx, const gcrt_tensor *in, size_t numIn, gcrt_tensor *out,
                 size_t numOut, unsigned long n, const char *package, const DeviceRun *device) {
  double *ms = malloc(n * sizeof *ms);
  if (!ms)
    return error("out of memory");
  for (unsigned long i = 0; i <= n; ++i) {
    double start = nowMs();
    for (size_t k = 0; k < numOut && !device; ++k)
      out[k] = (gcrt_tensor){0};
    /* On the GPU the inputs stay where the last run left them. */
    gcrt_status status = device
                             ? gcrt_run_device(ctx, device->in, numIn, device->out, numOut)
                             : gcrt_run(ctx, in, numIn, out, numOut);
    if (status != GCRT_OK) {
      free(ms);
      return error("'%s': %s", package, gcrt_last_error());
    }
    if (i > 0)
      ms[i - 1] = nowMs() - start;
  }
  qsort(ms, n, sizeof *ms, compareDoubles);
  size_t p90 = n * 9 / 10 < n - 1 ? n * 9 / 10 : n - 1;
  printf("bench: %lu runs, min %.4g ms, median %.4g ms, p90 %.4g ms\n", n, ms[0], ms[n / 2],
         ms[p90]);
  free(ms);
  return 0;
}

/* gc-run's profile: the CPU level whose kernels ran, of those the package
 * has ("kernels: x86-64-v4 (of x86-64-v3, x86-64-v4)"), then one line per
 * plan step, then the roofline. */
static int printProfile(const gcrt_package *pkg, gcrt_context *ctx) {
  const char *loaded = "", *available = "";
  if (gcrt_package_kernel_target(pkg, &loaded, &available) != GCRT_OK)
    return error("%s", gcrt_last_error());
  if (*loaded) {
    printf("kernels: %s (of ", loaded);
    for (const char *c = available; *c; ++c)
      if (*c == ',')
        fputs(", ", stdout);
      else
        putchar(*c);
    printf(")\n");
  }
  size_t count = 0;
  if (gcrt_context_profile(ctx, NULL, 0, &count) != GCRT_OK)
    return error("%s", gcrt_last_error());
  gcrt_step_profile *steps = calloc(count ? count : 1, sizeof *steps);
  if (!steps || gcrt_context_profile(ctx, steps, count, &count) != GCRT_OK) {
    free(steps);
    return error("%s", steps ? gcrt_last_error() : "out of memory");
  }
  double total = 0;
  for (size_t i = 0; i < count; ++i)
    total += steps[i].total_us;
  printf("profile: step, kind, name, mean us, min us, share of the time\n");
  for (size_t i = 0; i < count; ++i)
    printf("  %3zu %-8s %-32s %10.2f %10.2f %5.1f%%\n", i, steps[i].kind, steps[i].name,
           steps[i].runs ? steps[i].total_us / (double)steps[i].runs : 0.0, steps[i].min_us,
           total > 0 ? 100 * steps[i].total_us / total : 0.0);
  free(steps);
  const char *roofline = NULL;
  if (gcrt_context_roofline(ctx, &roofline) != GCRT_OK)
    return error("%s", gcrt_last_error());
  fputs(roofline, stdout);
  return 0;
}

/* Replaces the weights --weight names, each from its .npy file. */
static int setWeights(gcrt_package *pkg, const Options *o) {
  for (size_t i = 0; i < o->numWeightSets; i += 2) {
    const char *name = o->weightSets[i], *path = o->weightSets[i + 1];
    gc_npy npy;
    char message[512];
    if (!gc_npy_read(path, &npy, message, sizeof message))
      return error("%s", message);
    gcrt_status status = gcrt_package_set_weight(pkg, name, &npy.tensor);
    gc_npy_free(&npy);
    if (status != GCRT_OK)
      return error("'%s': %s", path, gcrt_last_error());
  }
  return 0;
}

/* Reads the inputs of run `run` (the IN files, or DIR/run<k>/in<i>.npy)
 * into `npys`, freeing the previous run's, and checks them. */
static int readInputs(gcrt_package *pkg, size_t graph, const Options *o, unsigned long run,
                      gc_npy *npys, gcrt_tensor *in) {
  size_t numIn = gcrt_input_count(pkg, graph);
  char path[4096], message[1024];
  gcrt_tensor_info info;
  for (size_t i = 0; i < numIn; ++i) {
    if (o->inputsDir)
      snprintf(path, sizeof path, "%s/run%lu/in%zu.npy", o->inputsDir, run, i);
    else
      snprintf(path, sizeof path, "%s", o->inputs[i]);
    gc_npy_free(&npys[i]);
    if (!gc_npy_read(path, &npys[i], message, sizeof message))
      return error("%s", message);
    in[i] = npys[i].tensor;
    gcrt_input_info(pkg, graph, i, &info);
    if (!checkInput(path, i, &info, &in[i]))
      return 1;
  }
  return 0;
}

/* Finds the graph, prints its signature and checks the inputs against it. */
static int prepare(gcrt_package *pkg, const Options *o, size_t *graph, gc_npy *npys,
                   gcrt_tensor *in) {
  *graph = 0;
  if (o->graph) {
    size_t n = gcrt_graph_count(pkg);
    while (*graph < n && strcmp(gcrt_graph_name(pkg, *graph), o->graph) != 0)
      ++*graph;
    if (*graph == n)
      return error("'%s' has no graph '%s'", o->package, o->graph);
  }
  size_t numIn = gcrt_input_count(pkg, *graph), numOut = gcrt_output_count(pkg, *graph);
  gcrt_tensor_info info;
  char type[256];
  for (size_t i = 0; i < numIn + numOut; ++i) {
    int isInput = i < numIn;
    size_t k = isInput ? i : i - numIn;
    if (isInput ? gcrt_input_info(pkg, *graph, k, &info) : gcrt_output_info(pkg, *graph, k, &info))
      return error("'%s': %s", o->package, gcrt_last_error());
    formatType(type, sizeof type, &info);
    const char *path = "";
    if (isInput ? gcrt_input_path(pkg, *graph, k, &path) : gcrt_output_path(pkg, *graph, k, &path))
      return error("'%s': %s", o->package, gcrt_last_error());
    printf("%s %zu: %s (%s%s%s) %s\n", isInput ? "input" : "output", k, info.name, info.role,
           *path ? ", " : "", path, type);
  }
  if (!o->inputsDir && o->numInputs != numIn)
    return error("'%s': graph '%s' takes %zu user input%s, but %zu .npy file%s given", o->package,
                 gcrt_graph_name(pkg, *graph), numIn, numIn == 1 ? "" : "s", o->numInputs,
                 o->numInputs == 1 ? " was" : "s were");
  return o->inputsDir ? 0 : readInputs(pkg, *graph, o, 0, npys, in);
}

/* Writes and checks the outputs; returns the number of mismatches, or -1. */
/* The user input whose target is `target`: what gcrt_run copied a mutated
 * input's new value into. */
static const gcrt_tensor *inputFor(gcrt_package *pkg, size_t graph, const gcrt_tensor *in,
                                   const char *target) {
  gcrt_tensor_info info;
  for (size_t k = 0; k < gcrt_input_count(pkg, graph); ++k)
    if (gcrt_input_info(pkg, graph, k, &info) == GCRT_OK && strcmp(info.target, target) == 0)
      return &in[k];
  return NULL;
}

static int finish(gcrt_package *pkg, size_t graph, const Options *o, const gcrt_tensor *in,
                  const gcrt_tensor *out, size_t numOut) {
  size_t user = 0, saved = 0, users = 0;
  char name[512], path[4096], message[1024];
  /* -o names a folder, made here when it is missing (its parent must exist). */
  if (o->outDir && mkdir(o->outDir, 0777) != 0 && errno != EEXIST)
    return error("'%s': cannot make the output folder: %s", o->outDir, strerror(errno)) * -1;
  gcrt_tensor_info info;
  for (size_t i = 0; i < numOut; ++i) {
    gcrt_output_info(pkg, graph, i, &info);
    users += strcmp(info.role, "user_output") == 0;
  }
  if (o->numExpects && o->numExpects != users)
    return error("the graph has %zu user outputs, but %zu --expect files were given", users,
                 o->numExpects) * -1;
  int failures = 0;
  for (size_t i = 0; i < numOut; ++i) {
    gcrt_output_info(pkg, graph, i, &info);
    size_t userBefore = user;
    outputName(name, sizeof name, &info, &user, &saved);
    if (o->outDir && name[0]) {
      /* A mutated input is written from the caller's memory, which shows
       * that gcrt_run copied it back. */
      const gcrt_tensor *value = &out[i];
      if (strcmp(info.role, "user_input_mutation") == 0 &&
          !(value = inputFor(pkg, graph, in, info.target)))
        return error("'%s': no user input '%s'", o->package, info.target) * -1;
      snprintf(path, sizeof path, "%s/%s.npy", o->outDir, name);
      if (!gc_npy_write(path, value, message, sizeof message))
        return error("%s", message) * -1;
    }
    if (o->numExpects && user != userBefore) {
      gc_npy want;
      if (!gc_npy_read(o->expects[userBefore], &want, message, sizeof message))
        return error("%s", message) * -1;
      failures += !compare(name, &out[i], &want.tensor, o->rtol, o->atol);
      gc_npy_free(&want);
    }
  }
  return failures;
}

/* Splits "NAME=FILE" into `name` (room for `capacity`) and the file. */
static const char *splitPair(const char *pair, char *name, size_t capacity) {
  const char *eq = strchr(pair, '=');
  snprintf(name, capacity, "%.*s", (int)(eq - pair), pair);
  return eq + 1;
}

/* --set-buffer: each FILE becomes the value of its buffer. */
static int setBuffers(gcrt_context *ctx, const Options *o) {
  for (size_t i = 0; i < o->numSetBuffers; ++i) {
    char name[512], message[1024];
    const char *path = splitPair(o->setBuffers[i], name, sizeof name);
    gc_npy npy = {0};
    if (!gc_npy_read(path, &npy, message, sizeof message))
      return error("%s", message);
    gcrt_status status = gcrt_context_write_buffer(ctx, name, &npy.tensor);
    gc_npy_free(&npy);
    if (status != GCRT_OK)
      return error("'%s': %s", path, gcrt_last_error());
  }
  return 0;
}

/* --expect-buffer: reads each buffer into memory shaped as its FILE and
 * compares; returns the number of mismatches, or -1. */
static int checkBuffers(gcrt_context *ctx, const Options *o) {
  int failures = 0;
  for (size_t i = 0; i < o->numExpectBuffers; ++i) {
    char name[512], label[600], message[1024];
    const char *path = splitPair(o->expectBuffers[i], name, sizeof name);
    gc_npy want = {0};
    if (!gc_npy_read(path, &want, message, sizeof message))
      return error("%s", message) * -1;
    gcrt_tensor got = want.tensor;
    got.strides = NULL;
    got.data = malloc(gc_tensor_numel(&got) * gcrt_dtype_size(got.dtype) + 1);
    if (!got.data || gcrt_context_read_buffer(ctx, name, &got) != GCRT_OK) {
      int status = got.data ? error("'%s': %s", o->package, gcrt_last_error())
                            : error("out of memory");
      free(got.data);
      gc_npy_free(&want);
      return -status;
    }
    snprintf(label, sizeof label, "buffer %s", name);
    failures += !compare(label, &got, &want.tensor, o->rtol, o->atol);
    free(got.data);
    gc_npy_free(&want);
  }
  return failures;
}

/* Runs `o->runs` times, reading each run's inputs and checking its outputs
 * with --expect-runs; returns the number of mismatches, or -1. */
static int runAll(gcrt_package *pkg, size_t graph, gcrt_context *ctx, const Options *o,
                  gc_npy *npys, gcrt_tensor *in, gcrt_tensor *out, size_t numOut,
                  DeviceRun *device) {
  size_t numIn = gcrt_input_count(pkg, graph);
  int failures = 0;
  for (unsigned long k = 0; k < o->runs; ++k) {
    if (o->inputsDir && readInputs(pkg, graph, o, k, npys, in))
      return -1;
    if (o->reset && k == o->resetBefore && gcrt_context_reset_buffers(ctx) != GCRT_OK)
      return error("'%s': %s", o->package, gcrt_last_error()) * -1;
    if (runOnce(ctx, o, k, in, numIn, out, numOut, device))
      return -1;
    if (!o->expectRuns)
      continue;
    gcrt_tensor_info info;
    size_t user = 0;
    for (size_t j = 0; j < numOut; ++j) {
      gcrt_output_info(pkg, graph, j, &info);
      if (strcmp(info.role, "user_output") != 0)
        continue;
      char path[4096], label[64], message[1024];
      snprintf(path, sizeof path, "%s/run%lu/out%zu.npy", o->inputsDir, k, user);
      snprintf(label, sizeof label, "run%lu out%zu", k, user++);
      gc_npy want = {0};
      if (!gc_npy_read(path, &want, message, sizeof message))
        return error("%s", message) * -1;
      failures += !compare(label, &out[j], &want.tensor, o->rtol, o->atol);
      gc_npy_free(&want);
    }
  }
  return failures;
}

int main(int argc, char **argv) {
  Options o = {.rtol = -1, .atol = -1};
  int status = parseOptions(argc, argv, &o);
  if (status || o.listDevices) {
    free(o.inputs);
    free(o.expects);
    free(o.weightSets);
    free(o.setBuffers);
    free(o.expectBuffers);
    free(o.plugins);
    return status < 0 ? 0 : status ? status : listDevices();
  }
  gcrt_package *pkg = NULL;
  gcrt_context *ctx = NULL;
  gc_npy *npys = NULL;
  gcrt_tensor *in = NULL, *out = NULL;
  DeviceRun device = {0};
  size_t graph = 0, numOut = 0, slots = o.numInputs;
  status = 1;
  for (size_t p = 0; p < o.numPlugins; ++p)
    if (gcrt_plugin_load(o.plugins[p]) != GCRT_OK) {
      error("%s", gcrt_last_error());
      goto done;
    }
  if (gcrt_package_load_file_with_flags(o.package, o.weights,
                                        o.noVerifyWeights ? GCRT_LOAD_NO_VERIFY_WEIGHTS : 0u,
                                        &pkg) != GCRT_OK) {
    error("%s", gcrt_last_error());
    goto done;
  }
  /* Room for the inputs of any graph, before we know which one runs. */
  for (size_t g = 0; g < gcrt_graph_count(pkg); ++g)
    slots = gcrt_input_count(pkg, g) > slots ? gcrt_input_count(pkg, g) : slots;
  npys = calloc(slots + 1, sizeof *npys);
  in = calloc(slots + 1, sizeof *in);
  if (!npys || !in) {
    error("out of memory");
    goto done;
  }
  if (setWeights(pkg, &o))
    goto done;
  if (prepare(pkg, &o, &graph, npys, in))
    goto done;
  numOut = gcrt_output_count(pkg, graph);
  out = calloc(numOut + 1, sizeof *out);
  if (!out) {
    error("out of memory");
    goto done;
  }
  uint32_t flags = (o.profile ? GCRT_CONTEXT_PROFILE : 0u) |
                   (o.noCudaGraphs ? GCRT_CONTEXT_NO_CUDA_GRAPHS : 0u) |
                   (o.noEarlyLaunch ? GCRT_CONTEXT_NO_EARLY_LAUNCH : 0u) |
                   (o.allowTF32 ? GCRT_CONTEXT_ALLOW_TF32 : 0u);
  if (gcrt_context_create_with_flags(pkg, graph, (unsigned)o.threads, flags, &ctx) != GCRT_OK ||
      gcrt_context_set_seed(ctx, (uint64_t)o.seed) != GCRT_OK) {
    error("'%s': %s", o.package, gcrt_last_error());
    goto done;
  }
  if (o.peaks && gcrt_context_set_peaks(ctx, o.peaks) != GCRT_OK) {
    error("--peaks: %s", gcrt_last_error());
    goto done;
  }
  if ((o.verbose || o.bench) && printDevice(pkg))
    goto done;
  if (o.verbose)
    printVerified(pkg);
  if (o.deviceIo && deviceRunOpen(&device, pkg, graph, o.package))
    goto done;
  if (setBuffers(ctx, &o))
    goto done;
  int failures = runAll(pkg, graph, ctx, &o, npys, in, out, numOut, o.deviceIo ? &device : NULL);
  if (failures < 0)
    goto done;
  int more = finish(pkg, graph, &o, in, out, numOut);
  if (more < 0)
    goto done;
  failures += more;
  more = checkBuffers(ctx, &o);
  if (more < 0)
    goto done;
  failures += more;
  if (o.bench && bench(ctx, in, gcrt_input_count(pkg, graph), out, numOut, o.bench, o.package,
                       o.deviceIo ? &device : NULL))
    goto done;
  if (o.profile && printProfile(pkg, ctx))
    goto done;
  if (failures) {
    size_t checks = o.numExpects + o.numExpectBuffers;
    for (size_t j = 0; o.expectRuns && j < numOut; ++j) {
      gcrt_tensor_info info;
      gcrt_output_info(pkg, graph, j, &info);
      checks += o.runs * (strcmp(info.role, "user_output") == 0);
    }
    if (o.rtol < 0 && o.atol < 0)
      error("%d of %zu checks do not match within the default tolerances of their dtypes",
            failures, checks);
    else {
      gc_tolerance given = gc_tolerance_for(GCRT_FLOAT32, o.rtol, o.atol);
      error("%d of %zu checks do not match within rtol %g, atol %g", failures, checks, given.rtol,
            given.atol);
    }
    goto done;
  }
  status = 0;
done:
  for (size_t i = 0; npys && i < slots; ++i)
    gc_npy_free(&npys[i]);
  free(npys);
  free(in);
  free(out);
  free(o.inputs);
  free(o.expects);
  free(o.weightSets);
  free(o.setBuffers);
  free(o.expectBuffers);
  free(o.plugins);
  gcrt_context_free(ctx);
  if (device.io)
    deviceRunFree(&device);
  gcrt_package_free(pkg);
  return status;
}
