/* llm-generate: text generation over two gc packages of one decoder
 * (utils/make-llm-models.py, or transformers' static-cache export:
 * utils/make-hf-llama.py): a prefill package, run once on the prompt, and
 * a decode package, run once per new token. Each takes two inputs, by
 * position whatever their names: the tokens [1, T] and their positions [T]
 * (gc's tokens and pos, transformers' input_ids and cache_position). Both
 * keep the KV cache as state (the buffers their graphs mutate); after the
 * prefill its cache is copied into the decode context once, with
 * gcrt_context_read_buffer and gcrt_context_write_buffer.
 *
 * usage: llm-generate PREFILL.gcpkg DECODE.gcpkg --prompt 1,2,3 [-n N]
 *          [--temperature T] [--top-k K] [--seed S] [--threads N]
 *          [--warmup N]
 *
 * PREFILL.gcpkg "-" feeds the prompt to the decode package a token at a
 * time instead: one package in memory (gc keeps a packed copy of the
 * weights per package), at the cost of a slower first token.
 *
 * Greedy (the largest logit) unless --temperature is above 0; then tokens
 * are sampled from softmax(logits / T), restricted to the K largest when
 * --top-k is given, with a generator seeded by --seed (the same seed gives
 * the same tokens). Prints the tokens on one line ("tokens: 5 9 ..."), then
 * the time to the first token (the prefill) and the decode rate on stderr.
 * --warmup N generates N times first (the caches set back to their start
 * between), so that the timed generation meets loaded kernels, captured
 * CUDA graphs and warm caches.
 *
 * The caches never leave the contexts: each context keeps its buffers'
 * new values in its own memory (gcrt_context_give_buffers), which for a
 * CUDA package is GPU memory, so a step copies only the tokens in and the
 * logits out. Only plain C and gcrt.h. */
#include <gcrt/gcrt.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_OUTPUTS 1024

typedef struct options {
  const char *prefill, *decode;
  int64_t *prompt;
  size_t prompt_len;
  long count;
  double temperature;
  long top_k;
  uint64_t seed;
  unsigned threads;
  long warmup;
} options;

/* The graph's outputs as the context allocates them, and which one is the
 * logits (the first user output). */
typedef struct graph_run {
  gcrt_context *context;
  gcrt_tensor outputs[MAX_OUTPUTS];
  size_t num_outputs;
  size_t logits;
  float *row; /* the last position's logits as float32 (bfloat16 models) */
} graph_run;

static int fail(const char *what) {
  fprintf(stderr, "llm-generate: error: %s: %s\n", what, gcrt_last_error());
  return 1;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int parse_prompt(const char *text, options *o) {
  size_t n = 1;
  for (const char *p = text; *p; ++p)
    n += *p == ',';
  o->prompt = calloc(n, sizeof(int64_t));
  for (char *end; *text; text = end + (*end == ',')) {
    o->prompt[o->prompt_len++] = strtoll(text, &end, 10);
    if (end == text || (*end && *end != ',')) {
      fprintf(stderr, "llm-generate: error: --prompt wants token ids separated by commas\n");
      return 1;
    }
  }
  return o->prompt_len == 0;
}

static int parse(int argc, char **argv, options *o) {
  const char *positional[2];
  int count = 0;
  o->count = 32;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
    int takes = strcmp(a, "--prompt") == 0 || strcmp(a, "-n") == 0 ||
                strcmp(a, "--temperature") == 0 || strcmp(a, "--top-k") == 0 ||
                strcmp(a, "--seed") == 0 || strcmp(a, "--threads") == 0 ||
                strcmp(a, "--warmup") == 0;
    if (takes && !value) {
      fprintf(stderr, "llm-generate: error: %s wants a value\n", a);
      return 1;
    }
    if (strcmp(a, "--prompt") == 0) {
      if (parse_prompt(value, o))
        return 1;
    } else if (strcmp(a, "-n") == 0) {
      o->count = strtol(value, NULL, 10);
    } else if (strcmp(a, "--temperature") == 0) {
      o->temperature = strtod(value, NULL);
    } else if (strcmp(a, "--top-k") == 0) {
      o->top_k = strtol(value, NULL, 10);
    } else if (strcmp(a, "--seed") == 0) {
      o->seed = strtoull(value, NULL, 10);
    } else if (strcmp(a, "--threads") == 0) {
      o->threads = (unsigned)strtoul(value, NULL, 10);
    } else if (strcmp(a, "--warmup") == 0) {
      o->warmup = strtol(value, NULL, 10);
    } else if ((a[0] == '-' && a[1]) || count == 2) {
      fprintf(stderr, "llm-generate: error: unexpected argument '%s'\n", a);
      return 1;
    } else {
      positional[count++] = a;
      continue;
    }
    ++i;
  }
  if (count != 2 || !o->prompt || o->count < 1 || o->warmup < 0) {
    fprintf(stderr, "usage: llm-generate PREFILL.gcpkg DECODE.gcpkg --prompt 1,2,3 [-n N] "
                    "[--temperature T] [--top-k K] [--seed S] [--threads N] "
                    "[--warmup N]\n");
    return 1;
  }
  o->prefill = positional[0];
  o->decode = positional[1];
  return 0;
}

static int open_graph(const char *path, const options *o, gcrt_package **package, graph_run *g) {
  if (gcrt_package_load_file(path, package) != GCRT_OK)
    return fail(path);
  if (gcrt_context_create(*package, 0, o->threads, &g->context) != GCRT_OK ||
      gcrt_context_give_buffers(g->context, 0) != GCRT_OK)
    return fail(path);
  g->num_outputs = gcrt_output_count(*package, 0);
  if (g->num_outputs > MAX_OUTPUTS) {
    fprintf(stderr, "llm-generate: error: %s: %zu outputs, at most %d\n", path, g->num_outputs,
            MAX_OUTPUTS);
    return 1;
  }
  g->logits = g->num_outputs;
  for (size_t i = 0; i < g->num_outputs && g->logits == g->num_outputs; ++i) {
    gcrt_tensor_info info;
    gcrt_output_info(*package, 0, i, &info);
    if (strcmp(info.role, "user_output") == 0)
      g->logits = i;
  }
  if (g->logits == g->num_outputs || gcrt_input_count(*package, 0) != 2) {
    fprintf(stderr, "llm-generate: error: %s: not a decoder (two inputs, tokens and positions; "
                    "the logits its first user output)\n", path);
    return 1;
  }
  return 0;
}

/* Runs tokens[0..n) at positions start..start+n; returns the logits of the
 * last position (float32, `vocab` of them; bfloat16 ones widened), or NULL. */
static const float *step(graph_run *g, const int64_t *tokens, int64_t n, int64_t start,
                         int64_t *positions, int64_t *vocab) {
  for (int64_t i = 0; i < n; ++i)
    positions[i] = start + i;
  int64_t token_sizes[2] = {1, n}, position_sizes[1] = {n};
  gcrt_tensor inputs[2] = {{(void *)tokens, GCRT_INT64, 2, token_sizes, NULL},
                           {positions, GCRT_INT64, 1, position_sizes, NULL}};
  memset(g->outputs, 0, sizeof(gcrt_tensor) * g->num_outputs);
  if (gcrt_run(g->context, inputs, 2, g->outputs, g->num_outputs) != GCRT_OK) {
    fail("run");
    return NULL;
  }
  const gcrt_tensor *logits = &g->outputs[g->logits];
  if ((logits->dtype != GCRT_FLOAT32 && logits->dtype != GCRT_BFLOAT16) || logits->rank != 3) {
    fprintf(stderr,
            "llm-generate: error: the logits are %s of rank %zu, want f32 or bf16 [1, T, vocab]\n",
            gcrt_dtype_name(logits->dtype), logits->rank);
    return NULL;
  }
  *vocab = logits->sizes[2];
  /* Row-major as the context allocates it: the last position's row. */
  if (logits->dtype == GCRT_FLOAT32)
    return (const float *)logits->data + (n - 1) * *vocab;
  const uint16_t *bits = (const uint16_t *)logits->data + (n - 1) * *vocab;
  if (!g->row)
    g->row = malloc((size_t)*vocab * sizeof(float));
  for (int64_t i = 0; i < *vocab; ++i) {
    uint32_t wide = (uint32_t)bits[i] << 16;
    memcpy(&g->row[i], &wide, sizeof wide);
  }
  return g->row;
}

/* splitmix64: a small generator whose sequence the seed alone fixes. */
static double uniform(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

static int64_t choose(const float *logits, int64_t vocab, const options *o, uint64_t *rng,
                      double *weights) {
  int64_t best = 0;
  for (int64_t i = 1; i < vocab; ++i)
    if (logits[i] > logits[best])
      best = i;
  if (o->temperature <= 0)
    return best;
  /* The K-th largest logit is the cut (all of them without --top-k). */
  double cut = -INFINITY;
  if (o->top_k > 0 && o->top_k < vocab) {
    for (int64_t i = 0; i < vocab; ++i)
      weights[i] = logits[i];
    for (long k = 0; k < o->top_k; ++k) {
      int64_t m = 0;
      for (int64_t i = 1; i < vocab; ++i)
        if (weights[i] > weights[m])
          m = i;
      cut = weights[m];
      weights[m] = -INFINITY;
    }
  }
  double total = 0;
  for (int64_t i = 0; i < vocab; ++i) {
    weights[i] = logits[i] >= cut ? exp((logits[i] - logits[best]) / o->temperature) : 0;
    total += weights[i];
  }
  double r = uniform(rng) * total;
  for (int64_t i = 0; i < vocab; ++i) {
    r -= weights[i];
    if (r < 0 && weights[i] > 0)
      return i;
  }
  return best;
}

/* The prefill context's cache becomes the decode context's. */
static int hand_over(gcrt_package *from_package, graph_run *from, graph_run *to) {
  for (size_t i = 0; i < from->num_outputs; ++i) {
    gcrt_tensor_info info;
    gcrt_output_info(from_package, 0, i, &info);
    if (strcmp(info.role, "buffer_mutation") != 0)
      continue;
    size_t bytes = gcrt_dtype_size(info.dtype);
    for (size_t d = 0; d < info.rank; ++d)
      bytes *= (size_t)info.sizes[d];
    gcrt_tensor t = {malloc(bytes), info.dtype, info.rank, info.sizes, NULL};
    int bad = gcrt_context_read_buffer(from->context, info.target, &t) != GCRT_OK ||
              gcrt_context_write_buffer(to->context, info.target, &t) != GCRT_OK;
    free(t.data);
    if (bad)
      return fail(info.target);
  }
  return 0;
}

typedef struct timing {
  double first, decode; /* seconds: the prompt's prefill, the decode steps */
} timing;

/* One generation of o->count tokens into `tokens`, from caches as the
 * contexts start; 0 on success. */
static int generate(const options *o, gcrt_package *prefill_package, graph_run *prefill,
                    graph_run *decode, int64_t *tokens, int64_t *positions, timing *t) {
  int by_steps = prefill_package == NULL;
  uint64_t rng = o->seed;
  int64_t vocab = 0;
  double start = now();
  const float *logits = NULL;
  if (by_steps)
    for (size_t i = 0; i < o->prompt_len && (i == 0 || logits); ++i)
      logits = step(decode, &o->prompt[i], 1, (int64_t)i, positions, &vocab);
  else
    logits = step(prefill, o->prompt, (int64_t)o->prompt_len, 0, positions, &vocab);
  if (!logits)
    return 1;
  double *weights = calloc((size_t)vocab, sizeof(double));
  tokens[0] = choose(logits, vocab, o, &rng, weights);
  double first = now();
  if (!by_steps && hand_over(prefill_package, prefill, decode)) {
    free(weights);
    return 1;
  }
  double decode_start = now();
  for (long k = 1; k < o->count && logits; ++k) {
    int64_t at = (int64_t)o->prompt_len + k - 1;
    logits = step(decode, &tokens[k - 1], 1, at, positions, &vocab);
    if (logits)
      tokens[k] = choose(logits, vocab, o, &rng, weights);
  }
  double end = now();
  free(weights);
  t->first = first - start;
  t->decode = end - decode_start;
  return logits == NULL;
}

int main(int argc, char **argv) {
  options o = {0};
  if (parse(argc, argv, &o))
    return 1;
  gcrt_package *prefill_package = NULL, *decode_package = NULL;
  graph_run prefill = {0}, decode = {0};
  int by_steps = strcmp(o.prefill, "-") == 0;
  if ((!by_steps && open_graph(o.prefill, &o, &prefill_package, &prefill)) ||
      open_graph(o.decode, &o, &decode_package, &decode))
    return 1;
  int64_t *positions = calloc(o.prompt_len, sizeof(int64_t));
  int64_t *tokens = calloc((size_t)o.count, sizeof(int64_t));
  timing t;
  for (long w = 0; w <= o.warmup; ++w) {
    if (w > 0 && ((!by_steps && gcrt_context_reset_buffers(prefill.context) != GCRT_OK) ||
                  gcrt_context_reset_buffers(decode.context) != GCRT_OK))
      return fail("resetting the caches");
    if (generate(&o, prefill_package, &prefill, &decode, tokens, positions, &t))
      return 1;
  }

  printf("tokens:");
  for (long k = 0; k < o.count; ++k)
    printf(" %lld", (long long)tokens[k]);
  printf("\n");
  fprintf(stderr, "time to first token: %.3f ms (prompt of %zu)\n", t.first * 1e3, o.prompt_len);
  if (o.count > 1)
    fprintf(stderr, "decode: %ld tokens in %.6f s, %.2f tok/s, %.4f ms/token\n", o.count - 1,
            t.decode, (double)(o.count - 1) / t.decode, t.decode * 1e3 / (double)(o.count - 1));
  free(tokens);
  free(positions);
  free(o.prompt);
  free(prefill.row);
  free(decode.row);
  if (!by_steps) {
    gcrt_context_free(prefill.context);
    gcrt_package_free(prefill_package);
  }
  gcrt_context_free(decode.context);
  gcrt_package_free(decode_package);
  return 0;
}
