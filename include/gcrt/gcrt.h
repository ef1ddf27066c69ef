/*===- gcrt.h - The gc runtime's C API ------------------------------------===*
 *
 * libgcrt runs packages made by gc-package. It is C99, has no LLVM inside,
 * and its handles are opaque:
 *
 *   gcrt_package  a loaded package (read-only; share it between threads)
 *   gcrt_context  one graph of a package ready to run, with its own memory,
 *                 threads and state (the buffers the graph mutates); one
 *                 context runs one call at a time, and separate contexts
 *                 may run at the same time, each with its own state
 *
 * Every function that can fail returns a gcrt_status; on failure,
 * gcrt_last_error() gives a message for the calling thread that names the
 * package, entry, input or step at fault. Sizes and strides count elements.
 *
 *===----------------------------------------------------------------------===*/
#ifndef GCRT_GCRT_H
#define GCRT_GCRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2 added gcrt_dtype_size, gcrt_dtype_name, gcrt_context_create_with_flags
 * and gcrt_context_profile. 3 added packages with external weights (format
 * 1.1): gcrt_package_load_file_with_weights, gcrt_package_set_weights_file
 * and gcrt_package_set_weight. 4 added state kept between runs (mutated
 * buffers written back, mutated user inputs copied back, aliased inputs
 * refused): gcrt_context_read_buffer, gcrt_context_write_buffer and
 * gcrt_context_reset_buffers; and each context's random-number generator
 * state: gcrt_context_set_seed, gcrt_context_get_seed,
 * gcrt_context_set_offset and gcrt_context_get_offset; and
 * gcrt_input_path and gcrt_output_path. 5 added packages whose graphs run
 * on an NVIDIA GPU: gcrt_cuda_device_count, gcrt_cuda_device_name and
 * gcrt_package_device, gcrt_run_device, and the context flags
 * GCRT_CONTEXT_NO_CUDA_GRAPHS and GCRT_CONTEXT_ALLOW_TF32. 6 added packages
 * with kernels for several CPU levels (format 2.2) and
 * gcrt_package_kernel_target. 7 added the roofline of a profile
 * (gcrt_context_set_peaks and gcrt_context_roofline) and let
 * gcrt_run_device take graphs that mutate buffers or inputs: a CUDA
 * context keeps its buffers in GPU memory. 8 checks every weight's bytes
 * at load (CRC-32), and added gcrt_package_load_file_with_flags with
 * GCRT_LOAD_NO_VERIFY_WEIGHTS, gcrt_package_verified_count,
 * gcrt_package_verified and gcrt_package_read_weight. 9 let
 * gcrt_run_device take tensors of any strides (copied on the GPU), and
 * added gcrt_output_strides and gcrt_run_device_async (a caller's CUDA
 * stream). 10 added packages that call ops of plugins (format 2.4):
 * gcrt_plugin_load and the GCRT_PLUGINS environment variable. 11 added
 * outputs whose sizes the input's data decides (nonzero, masked_select,
 * unique, boolean-mask indexing): gcrt_output_sizes gives their upper
 * bounds, and gcrt_run_output_sizes the sizes a run filled. 14 added
 * GCRT_CONTEXT_NO_EARLY_LAUNCH. */
#define GCRT_API_VERSION 14

#if defined(__GNUC__)
#define GCRT_EXPORT __attribute__((visibility("default")))
#else
#define GCRT_EXPORT
#endif

typedef enum gcrt_status {
  GCRT_OK = 0,
  GCRT_ERROR_INVALID_ARGUMENT = 1, /* a null handle, an index out of range */
  GCRT_ERROR_PACKAGE = 2,          /* unreadable, corrupt, truncated, or of another version */
  GCRT_ERROR_INPUT = 3,            /* wrong input or output count, dtype or shape */
  GCRT_ERROR_RUNTIME = 4           /* a step failed while running, or memory ran out */
} gcrt_status;

/* Element types; the values are part of the API. */
typedef enum gcrt_dtype {
  GCRT_BOOL = 0,
  GCRT_UINT8 = 1,
  GCRT_INT8 = 2,
  GCRT_INT16 = 3,
  GCRT_INT32 = 4,
  GCRT_INT64 = 5,
  GCRT_FLOAT16 = 6,
  GCRT_BFLOAT16 = 7,
  GCRT_FLOAT32 = 8,
  GCRT_FLOAT64 = 9
} gcrt_dtype;

/* Bytes per element, and gc's short name ("f32", "i64", "bf16", ...); 0
 * and "?" for a value outside the enum (API version 2). */
GCRT_EXPORT size_t gcrt_dtype_size(gcrt_dtype dtype);
GCRT_EXPORT const char *gcrt_dtype_name(gcrt_dtype dtype);

typedef struct gcrt_package gcrt_package;
typedef struct gcrt_context gcrt_context;

/* A tensor passed to or returned by gcrt_run. `strides` may be NULL for a
 * row-major (contiguous) layout. */
typedef struct gcrt_tensor {
  void *data;
  gcrt_dtype dtype;
  size_t rank;
  const int64_t *sizes;
  const int64_t *strides;
} gcrt_tensor;

/* What a graph input or output is. A dimension whose size is symbolic has
 * sizes[d] == -1 and its range in [min_sizes[d], max_sizes[d]] (max -1:
 * unbounded); a static one has all three equal. The strings and arrays
 * live as long as the package. */
typedef struct gcrt_tensor_info {
  const char *name;   /* the graph's name for the value */
  const char *role;   /* "user_input", "user_output", "buffer_mutation", ... */
  const char *target; /* the input's argument or the mutated buffer ("" if none) */
  gcrt_dtype dtype;
  size_t rank;
  const int64_t *sizes;
  const int64_t *min_sizes;
  const int64_t *max_sizes;
} gcrt_tensor_info;

/* The message of the calling thread's last failure ("" if none). Valid
 * until that thread's next gcrt call. */
GCRT_EXPORT const char *gcrt_last_error(void);
/* "major.minor" of the package format this runtime reads. */
GCRT_EXPORT const char *gcrt_package_format_version(void);

/* Loading. Everything is validated here. The memory variant copies `data`
 * once (the caller may free it afterwards); `name` is used in messages. */
GCRT_EXPORT gcrt_status gcrt_package_load_file(const char *path, gcrt_package **out);
GCRT_EXPORT gcrt_status gcrt_package_load_memory(const void *data, size_t size, const char *name,
                                                 gcrt_package **out);
/* Loading checks the CRC-32 of every entry, the weights included (API
 * version 8), so that a damaged package is refused rather than run with
 * wrong numbers: GCRT_ERROR_PACKAGE, naming the package and the entry.
 *
 * A package made with --weights=external names its source archive (.pt2),
 * relative to the package's directory (for the memory variant: to the
 * directory of `name`); loading maps the archive and checks each entry
 * that weights lie in, once, against the CRC-32 recorded when the package
 * was made (packages made before such records: each weight against its
 * SHA-256). A missing, damaged or changed archive is GCRT_ERROR_PACKAGE,
 * naming the package, the archive, the weight and the entry. The archive
 * must stay in place while the package is loaded. */

/* Plugins (API version 10): shared libraries that give a package's custom
 * ops (gcrt/gc_plugin.h, docs/plugins.md). Loads the plugin at `path` for
 * every package this process loads afterwards; loading a file twice loads
 * it once, and plugins stay loaded until the process ends. Each package
 * load also loads the plugins that the environment variable GCRT_PLUGINS
 * lists (files separated by ':'). A package that calls an op no loaded
 * plugin gives is refused at load, GCRT_ERROR_PACKAGE, naming the op and
 * the plugin file it was compiled with. A file that is no plugin, or one
 * built for another plugin ABI version, is GCRT_ERROR_INVALID_ARGUMENT. */
GCRT_EXPORT gcrt_status gcrt_plugin_load(const char *path);

/* API version 3. Loads the package at `path`, binding its external weights
 * from the archive `weights` instead of the one the package names (NULL:
 * that one): another archive of the same architecture, whose weight
 * entries must have the sizes the package expects. What --freeze derived
 * from the weights is computed again from these by the package's constant
 * program (format 2.1); a frozen package of format 2.0, which holds such
 * constants computed at compile time, is refused. */
GCRT_EXPORT gcrt_status gcrt_package_load_file_with_weights(const char *path, const char *weights,
                                                            gcrt_package **out);

/* Flags for gcrt_package_load_file_with_flags (API version 8). */
enum {
  /* Bind the weights without checking their bytes: the package's weights
   * entry and the archive entries external weights lie in are not read at
   * load. A damaged weight then runs and gives wrong numbers. For those
   * who measured the cost (docs/package.md: about one read of the
   * weights). */
  GCRT_LOAD_NO_VERIFY_WEIGHTS = 1u << 0
};
/* gcrt_package_load_file_with_weights, with GCRT_LOAD_* flags or-ed
 * together (they hold for gcrt_package_set_weights_file later too); an
 * unknown flag is GCRT_ERROR_INVALID_ARGUMENT. */
GCRT_EXPORT gcrt_status gcrt_package_load_file_with_flags(const char *path, const char *weights,
                                                          uint32_t flags, gcrt_package **out);

/* What the weights the package binds now were checked against (API version
 * 8): the package's weights entry, and each archive entry external weights
 * lie in, each once. `check` says how ("CRC-32 1a2b3c4d"; for a package
 * made before entry CRCs were recorded, "SHA-256 of weight 'l1.weight'").
 * None with GCRT_LOAD_NO_VERIFY_WEIGHTS. The strings live until the
 * package's weights are set again or it is freed. */
typedef struct gcrt_verified_entry {
  const char *file;  /* the package or the archive */
  const char *entry; /* its zip entry */
  uint64_t bytes;
  const char *check;
  double seconds; /* how long checking took */
} gcrt_verified_entry;
GCRT_EXPORT size_t gcrt_package_verified_count(const gcrt_package *package);
GCRT_EXPORT gcrt_status gcrt_package_verified(const gcrt_package *package, size_t index,
                                              gcrt_verified_entry *out);

/* Swapping weights without recompiling (API version 3). Both rebind the
 * package's weights for the contexts created afterwards; contexts made
 * before keep the weights they were made with until they are freed. They
 * must not run at the same time as another call on the same package.
 *
 * gcrt_package_set_weights_file binds every external weight from the
 * archive at `path`, as gcrt_package_load_file_with_weights does, checking
 * each entry it binds against the archive's own CRC-32.
 * gcrt_package_set_weight replaces the weight `name` (a parameter, buffer
 * or constant name, as the exported program's signature has it) by a copy
 * of `value`, which must have the weight's dtype and sizes (any strides):
 * otherwise GCRT_ERROR_INPUT, naming the weight; an unknown name is
 * GCRT_ERROR_INVALID_ARGUMENT. Works for embedded packages too. Both run
 * the package's constant program again, if it has one; a weight that
 * program computes cannot be set (GCRT_ERROR_INPUT). */
GCRT_EXPORT gcrt_status gcrt_package_set_weights_file(gcrt_package *package, const char *path);
GCRT_EXPORT gcrt_status gcrt_package_set_weight(gcrt_package *package, const char *name,
                                                const gcrt_tensor *value);
/* Copies the weight `name`, as the package binds it now, into `into`
 * (caller memory of the weight's dtype and sizes, any strides; otherwise
 * GCRT_ERROR_INPUT naming the weight; an unknown name is
 * GCRT_ERROR_INVALID_ARGUMENT): what a caller that trains the package's
 * parameters starts from (API version 8). */
GCRT_EXPORT gcrt_status gcrt_package_read_weight(const gcrt_package *package, const char *name,
                                                 const gcrt_tensor *into);

/* Frees the package once every context made from it is freed too. NULL is
 * ignored. */
GCRT_EXPORT void gcrt_package_free(gcrt_package *package);

/* Describing. Graph 0 is the model's forward graph. Inputs are the user
 * inputs only (weights are bound by the package); outputs are every output,
 * user outputs and mutated buffers alike, in order. */
GCRT_EXPORT size_t gcrt_graph_count(const gcrt_package *package);
GCRT_EXPORT const char *gcrt_graph_name(const gcrt_package *package, size_t graph);
GCRT_EXPORT size_t gcrt_input_count(const gcrt_package *package, size_t graph);
GCRT_EXPORT size_t gcrt_output_count(const gcrt_package *package, size_t graph);
GCRT_EXPORT gcrt_status gcrt_input_info(const gcrt_package *package, size_t graph, size_t index,
                                        gcrt_tensor_info *out);
GCRT_EXPORT gcrt_status gcrt_output_info(const gcrt_package *package, size_t graph, size_t index,
                                         gcrt_tensor_info *out);

/* Where input or output `index` sits in the call torch.export recorded
 * (API version 4), as Python reaches it: an input from the forward's
 * parameters ("ids", "pair[0]", "extra['scale']"), an output from the
 * returned value (".logits", "[0]", ".parts[1]['relu']"). "" when the
 * package has no such record (a lone tensor result, a hand-made graph, or a
 * role other than user input or output). The string lives as long as the
 * package. */
GCRT_EXPORT gcrt_status gcrt_input_path(const gcrt_package *package, size_t graph, size_t index,
                                        const char **path);
GCRT_EXPORT gcrt_status gcrt_output_path(const gcrt_package *package, size_t graph, size_t index,
                                         const char **path);

/* NVIDIA GPUs (API version 5). A package compiled for CUDA (its target
 * "cuda:sm_80,sm_90") runs its graphs on a GPU, through the NVIDIA driver
 * (libcuda.so.1), which libgcrt loads when it first needs it: such a package
 * loads and describes itself anywhere, and only creating a context needs
 * the GPU. Contexts run on GPU 0, or on the one the environment variable
 * GC_CUDA_DEVICE numbers. Inputs and outputs are host memory all the same:
 * gcrt_run copies them to and from the GPU.
 *
 * gcrt_cuda_device_count gives the number of GPUs the driver shows; where
 * none can be used it is 0 and the status GCRT_ERROR_RUNTIME, with the
 * reason in gcrt_last_error() ("no NVIDIA driver: libcuda.so.1 not found").
 * gcrt_cuda_device_name describes GPU `index` ("cuda:sm_90 NVIDIA H100 80GB
 * HBM3"); the string lives as long as the process. */
GCRT_EXPORT gcrt_status gcrt_cuda_device_count(size_t *count);
GCRT_EXPORT gcrt_status gcrt_cuda_device_name(size_t index, const char **name);
/* Where the package's graphs run: "cpu", or the GPU its contexts would use,
 * described as gcrt_cuda_device_name does. For a CUDA package on a machine
 * without a usable GPU: GCRT_ERROR_RUNTIME, and the reason. The string
 * lives as long as the package. */
GCRT_EXPORT gcrt_status gcrt_package_device(const gcrt_package *package, const char **device);
/* The CPU level whose kernels the package loaded ("x86-64-v4") and every
 * level it has kernels for, lowest first ("x86-64-v3,x86-64-v4"). Loading
 * picks the highest level this CPU runs; the environment variable
 * GC_CPU_TARGET (such as GC_CPU_TARGET=x86-64-v3) makes it load that
 * level's kernels instead, and loading fails if the package has none for
 * it or the CPU cannot run them. Both strings are "" for a package whose
 * graphs have no CPU kernels (GPU packages, graphs of library calls only);
 * they live as long as the package. */
GCRT_EXPORT gcrt_status gcrt_package_kernel_target(const gcrt_package *package,
                                                   const char **loaded, const char **available);

/* Running. `threads` is the number of worker threads (0: one per hardware
 * thread). For a CUDA package, creating a context fails (GCRT_ERROR_PACKAGE)
 * where there is no GPU, naming the graph and the reason, or where the
 * package has no code for this GPU's architecture. */
GCRT_EXPORT gcrt_status gcrt_context_create(gcrt_package *package, size_t graph, unsigned threads,
                                            gcrt_context **out);
GCRT_EXPORT void gcrt_context_free(gcrt_context *context);

/* Random numbers (API version 4). A graph with random ops (dropout, rand,
 * randn, randint, bernoulli, ...) takes no seed or offset input: each
 * context owns a generator state, a 64-bit seed (0 when the context is
 * made) and a 64-bit offset (0 then), the Philox-4x32-10 counter where the
 * next run's numbers start. Each successful gcrt_run moves the offset past
 * the numbers that run drew, so runs draw fresh numbers; a context with the
 * same seed and offset gives the same results. gcrt_context_set_seed sets
 * the seed and resets the offset to 0; gcrt_context_set_offset resumes a
 * stream where a saved gcrt_context_get_offset left it. A null context or
 * out-pointer is GCRT_ERROR_INVALID_ARGUMENT. A graph without random ops
 * ignores both. */
GCRT_EXPORT gcrt_status gcrt_context_set_seed(gcrt_context *context, uint64_t seed);
GCRT_EXPORT gcrt_status gcrt_context_get_seed(const gcrt_context *context, uint64_t *seed);
GCRT_EXPORT gcrt_status gcrt_context_set_offset(gcrt_context *context, uint64_t offset);
GCRT_EXPORT gcrt_status gcrt_context_get_offset(const gcrt_context *context, uint64_t *offset);

/* Flags for gcrt_context_create_with_flags (API version 2). */
enum {
  /* Time every step of every run, for gcrt_context_profile. Costs two
   * clock reads per step (on a GPU, two events per step, and the steps are
   * launched one by one). */
  GCRT_CONTEXT_PROFILE = 1u << 0,
  /* On a GPU, launch every step of every run one by one, rather than
   * replaying a CUDA graph of the steps (API version 5). */
  GCRT_CONTEXT_NO_CUDA_GRAPHS = 1u << 1,
  /* On a GPU, let float32 matrix products and convolutions use TF32 tensor
   * cores (about 1e-3 relative error; PyTorch's allow_tf32). Without it
   * they keep full float32 accuracy (API version 5). */
  GCRT_CONTEXT_ALLOW_TF32 = 1u << 2,
  /* On a GPU of sm_90 or later, start each of gc's kernels only when the
   * kernel before it has ended. Without it a kernel may start as soon as
   * the one before it runs all of its blocks, and waits for its results
   * itself (programmatic dependent launch), which hides most of a launch's
   * latency (API version 14). */
  GCRT_CONTEXT_NO_EARLY_LAUNCH = 1u << 3
};
/* gcrt_context_create, with GCRT_CONTEXT_* flags or-ed together; an
 * unknown flag is GCRT_ERROR_INVALID_ARGUMENT. */
GCRT_EXPORT gcrt_status gcrt_context_create_with_flags(gcrt_package *package, size_t graph,
                                                       unsigned threads, uint32_t flags,
                                                       gcrt_context **out);

/* Where the time of a profiling context's runs went, per plan step, in
 * plan order (API version 2). */
typedef struct gcrt_step_profile {
  const char *name; /* the kernel's name, or the extern or fallback node's */
  const char *kind; /* "kernel", "extern" or "fallback" */
  int64_t runs;     /* the runs counted: a step's first run holds one-time
                     * set-up and is left out once the step has run again */
  double total_us;  /* the counted runs together */
  double min_us;    /* the fastest counted run */
} gcrt_step_profile;

/* Copies the profile of every run so far into `steps` (room for `capacity`
 * entries; `count` receives the number of steps, so a first call with
 * capacity 0 sizes the array). The strings live until the next
 * gcrt_context_profile call on this context or its end. A context made without GCRT_CONTEXT_PROFILE has no
 * steps. */
GCRT_EXPORT gcrt_status gcrt_context_profile(gcrt_context *context, gcrt_step_profile *steps,
                                             size_t capacity, size_t *count);

/* The roofline of a profiling context's runs so far (API version 7), as
 * text: the peaks and where they came from, then per step the work the
 * compiler counted for it (floating-point operations, bytes moved) over
 * its time: achieved GFLOP/s and GB/s, each as a share of its peak, its
 * FLOPs per byte and the bound it is nearer; then the whole run's. The
 * peaks are those gcrt_context_set_peaks gave, else those of the
 * environment variable GC_PEAKS ("GFLOPS,GBPS", checked when a profiling
 * context is made), else on the CPU measured once (about 0.3 s, on the
 * context's threads, with the loaded kernels' vector ISA), on a GPU from
 * the device's attributes. The text lives until the next call on this
 * context or its end. */
GCRT_EXPORT gcrt_status gcrt_context_roofline(gcrt_context *context, const char **text);
/* The peaks gcrt_context_roofline sets steps against: "GFLOPS,GBPS" (two
 * positive numbers, such as "150,12.5"); NULL: measure them. A malformed
 * text is GCRT_ERROR_INVALID_ARGUMENT. */
GCRT_EXPORT gcrt_status gcrt_context_set_peaks(gcrt_context *context, const char *peaks);

/* The sizes of output `index` for these inputs, into `sizes` (room for
 * `capacity` entries); `rank` receives the output's rank. A size that the
 * inputs' data decides (nonzero's count, API version 11) is given at its
 * upper bound: the room a run needs. */
GCRT_EXPORT gcrt_status gcrt_output_sizes(gcrt_context *context, const gcrt_tensor *inputs,
                                          size_t num_inputs, size_t index, int64_t *sizes,
                                          size_t capacity, size_t *rank);

/* The sizes output `index` got in the context's last successful run (API
 * version 11), as gcrt_output_sizes gives them. They differ from those only
 * where the data decides a size: such an output is written row-major for
 * its true sizes from the start of its memory, whatever strides the caller
 * gave; an output the context allocated (data NULL) has its sizes and
 * strides updated in place as well. GCRT_ERROR_INVALID_ARGUMENT before
 * any run. */
GCRT_EXPORT gcrt_status gcrt_run_output_sizes(gcrt_context *context, size_t index,
                                              int64_t *sizes, size_t capacity, size_t *rank);

/* The strides of output `index` in the graph's own layout for these inputs
 * (API version 9), as gcrt_output_sizes gives its sizes: a caller that
 * allocates the output with them (such as torch.empty_strided) gets it
 * from gcrt_run_device as one block copy, where other strides take a
 * strided copy on the GPU. Mostly row-major; an output the graph computes
 * as a permuted view ("permute_12" of f32[2, 16, 3, 3] with strides
 * [9, 144, 3, 1]) keeps that view's. */
GCRT_EXPORT gcrt_status gcrt_output_strides(gcrt_context *context, const gcrt_tensor *inputs,
                                            size_t num_inputs, size_t index, int64_t *strides,
                                            size_t capacity, size_t *rank);

/* Runs the graph. For each output: if `data` is non-null it is the
 * caller's memory, whose dtype and sizes must match (any strides);
 * otherwise the context allocates it and fills in data, dtype, rank, sizes
 * and strides, valid until the context's next run or its end.
 *
 * State (API version 4). Each buffer the graph mutates (an output with
 * role "buffer_mutation", its target the buffer's name) is kept by the
 * context: it starts as the package's value of that buffer, every run
 * reads the current value, and a run that succeeds makes the buffer's
 * output the next run's value; a failed run leaves every buffer as it was,
 * except one the package updates in place (below), which a run failing
 * after its update has written. The buffer_mutation outputs are still
 * returned. On the CPU, a buffer_mutation output whose `data` is null and
 * whose buffer the package updates in place (a KV cache written at a
 * position, docs/package.md "State") gets the buffer's own memory, which
 * the run writes where it lies and the next run changes: no copy of the
 * buffer is made. A user input the graph writes (an output with role
 * "user_input_mutation") gets its new value copied back into the caller's
 * input memory, so the caller must not pass read-only memory for it; if it
 * shares memory with another user input, the run is refused
 * (GCRT_ERROR_INPUT, naming both). */
GCRT_EXPORT gcrt_status gcrt_run(gcrt_context *context, const gcrt_tensor *inputs,
                                 size_t num_inputs, gcrt_tensor *outputs, size_t num_outputs);

/* gcrt_run for tensors already in GPU memory (API version 5), for a CUDA
 * package: every input's and output's `data` is a device address
 * (CUdeviceptr) on the context's GPU, and every output is the caller's
 * memory. The tensors may have any strides (API version 9: permuted,
 * sliced with gaps, 0 for a broadcast input; sizes of 0). One laid out as
 * the graph's buffer (gcrt_output_strides) and starting on a 256-byte
 * boundary is read or written where it lies (API version 12), but an output
 * whose memory overlaps an input's, and, while the context replays CUDA
 * graphs, a tensor a library call reads at another address than in the
 * last call; those are copied as one block. Any other layout is copied by
 * a strided-copy kernel that libgcrt carries as PTX, which the driver
 * compiles for the GPU the first time a context needs it. An output whose elements overlap (stride 0 in a dimension of more
 * than one element) is GCRT_ERROR_RUNTIME, naming it. Work that wrote the
 * inputs must be complete before the call (synchronize its stream); the
 * outputs are complete when it returns. A CPU package is GCRT_ERROR_INPUT.
 * State works as with gcrt_run (API version 7): a CUDA context keeps the
 * buffers its graph mutates in GPU memory, so neither function copies them
 * through the host, and a mutated user input gets its new value copied on
 * the GPU. A buffer_mutation output whose `data` is null gets the buffer's
 * own memory (API version 12), whether or not the plan updates it in place:
 * the run then writes the new value there, and no copy of the buffer is
 * made in the call. */
GCRT_EXPORT gcrt_status gcrt_run_device(gcrt_context *context, const gcrt_tensor *inputs,
                                        size_t num_inputs, gcrt_tensor *outputs,
                                        size_t num_outputs);

/* gcrt_run_device on the caller's CUDA stream (API version 9): a CUstream
 * or cudaStream_t of the context's GPU (NULL: the default stream), such as
 * torch.cuda.current_stream().cuda_stream. Every copy, kernel, library call
 * and CUDA graph launch of the run, and the state kept between runs, is
 * enqueued there after the work already on it, and the call returns
 * without waiting: no synchronization before (work that writes the inputs
 * only needs to be on that stream first) nor after (work that reads the
 * outputs, enqueued after the call on that stream, sees them). The
 * inputs' and outputs' memory must stay valid until the stream has run
 * the call's work. Errors found before anything is enqueued (sizes,
 * dtypes, layouts) leave the stream untouched; a failure while
 * enqueueing may leave part of the run enqueued. A graph with steps that
 * run on the host (fallback ops, cond and while_loop) waits for the stream
 * at each such step. Calls on one context run one at a time in the order
 * made, whatever their streams: a call on another stream than the last
 * call's first waits, on the GPU, for the last call's work; so do
 * gcrt_run, gcrt_run_device and the buffer functions, which run on the
 * context's own stream and wait for their work. A CUDA graph captured for
 * the context is launched on whichever stream the call names. */
GCRT_EXPORT gcrt_status gcrt_run_device_async(gcrt_context *context, const gcrt_tensor *inputs,
                                              size_t num_inputs, gcrt_tensor *outputs,
                                              size_t num_outputs, void *cuda_stream);

/* A context's buffers (API version 4). `name` is the buffer's name as the
 * exported program has it (the target of its "buffer_mutation" output,
 * whose gcrt_output_info gives its dtype and sizes). gcrt_context_read_buffer
 * copies the current value into `into` (caller memory, any strides);
 * gcrt_context_write_buffer makes a copy of `value` the current value (a KV
 * cache primed or cleared, say); both want the buffer's dtype and sizes,
 * else GCRT_ERROR_INPUT naming the buffer. A name the graph does not mutate
 * is GCRT_ERROR_INVALID_ARGUMENT. gcrt_context_reset_buffers sets every
 * buffer back to the value the context started from. None may run at the
 * same time as gcrt_run on the same context. */
GCRT_EXPORT gcrt_status gcrt_context_read_buffer(gcrt_context *context, const char *name,
                                                 const gcrt_tensor *into);
GCRT_EXPORT gcrt_status gcrt_context_write_buffer(gcrt_context *context, const char *name,
                                                  const gcrt_tensor *value);
GCRT_EXPORT gcrt_status gcrt_context_reset_buffers(gcrt_context *context);

/* Whether gcrt_run and gcrt_run_device give back the buffer_mutation
 * outputs the caller passes with `data` null (API version 13; `give` non-zero,
 * the default: they are returned as above). With `give` zero such an output
 * is left as the caller passed it (data null) and the run writes the
 * buffer's new value only into the context's own memory; on a CUDA package
 * that is GPU memory, so gcrt_run copies no buffer through the host (a
 * decoding loop over a KV cache in GPU memory that reads only the logits).
 * The buffers stay readable through gcrt_context_read_buffer. */
GCRT_EXPORT gcrt_status gcrt_context_give_buffers(gcrt_context *context, int give);

#ifdef __cplusplus
}
#endif

#endif /* GCRT_GCRT_H */
