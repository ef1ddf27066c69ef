/* Memory read bandwidth, the limit of a decode step that reads every weight
 * once (docs/llm.md, "What is measured").
 *
 *   cc -O3 -march=native -fopenmp utils/bench/membw.c -o membw
 *   ./membw [--threads N] [--mib SIZE] [--passes P]
 *
 * N threads (OpenMP, like gc's runtime) each sum their contiguous share of
 * one SIZE MiB float array (far larger than the caches), in 32 running
 * sums (several vectors) so that the loop is bound by loads rather than by
 * one dependency chain; the array is written first so that its pages exist. Prints the
 * best of P passes in GB/s (1e9 bytes) and a checksum that keeps the sums
 * alive. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int threads = 1, passes = 5;
  long mib = 2048;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 < argc && !strcmp(argv[i], "--threads"))
      threads = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--mib"))
      mib = atol(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--passes"))
      passes = atoi(argv[++i]);
    else {
      fprintf(stderr, "membw: unknown argument '%s'; usage: membw [--threads N] [--mib SIZE] "
                      "[--passes P]\n", argv[i]);
      return 2;
    }
  }
  if (threads < 1 || mib < 1 || passes < 1) {
    fprintf(stderr, "membw: --threads, --mib and --passes must be positive\n");
    return 2;
  }
  size_t n = (size_t)mib * 1024 * 1024 / sizeof(float);
  n -= n % (32 * (size_t)threads);
  float *data = aligned_alloc(64, n * sizeof(float));
  if (!data) {
    fprintf(stderr, "membw: cannot allocate %ld MiB\n", mib);
    return 1;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (size_t i = 0; i < n; ++i)
    data[i] = (float)(i & 1023) * 1e-3f;
  double best = 0, checksum = 0;
  for (int p = 0; p < passes; ++p) {
    double start = now(), total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    {
      size_t share = n / threads, begin = share * omp_get_thread_num();
      float sums[32] = {0};
      for (size_t i = begin; i < begin + share; i += 32)
        for (int j = 0; j < 32; ++j)
          sums[j] += data[i + j];
      for (int j = 0; j < 32; ++j)
        total += sums[j];
    }
    double seconds = now() - start, rate = n * sizeof(float) / seconds / 1e9;
    if (rate > best)
      best = rate;
    checksum += total;
  }
  printf("read bandwidth: %.2f GB/s (%d threads, %ld MiB, best of %d; checksum %g)\n", best, threads,
         mib, passes, checksum);
  free(data);
  return 0;
}
