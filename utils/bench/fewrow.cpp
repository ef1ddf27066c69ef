//===- fewrow.cpp - The few-row product's weight read rate -----------------===//
//
// Times the runtime's few-row product (lib/Runtime/Cpu/FewRowProduct) on the
// products of a Llama decode step, and beside it a plain sum of the same
// weight memory on the same threads: that sum is what the memory gives
// this process at that moment, so the ratio is the kernel's share of the
// read bandwidth, whatever else shares the machine.
//
//   fewrow-bench [--shapes 1b|8b] [--layers L] [--rows M] [--dtype f32|bf16]
//                [--threads T] [--passes P] [--level x86-64-v4|...] [--form best|split]
//                [--file PATH]
//
// The weights are L layers (by default the preset's all) of the preset's
// products (q, k, v, o, gate, up, down) and its LM head, each its own
// memory, so that no product finds another's weights in cache; a pass runs
// them in that order, as a step does. They must be far larger than the
// last-level cache (480 MiB on the development VM), or the rates are the
// cache's. With --file the weights are written to PATH and mapped from it
// (read-only, shared), as a package maps its archive; without, they are
// anonymous memory. Prints the best pass of each, in GB/s (1e9 bytes), by
// wall time and by the CPU time the process got. --form split keeps an
// x86-64-v4 kernel off AVX-512 BF16's dot-product instruction.
//
//===----------------------------------------------------------------------===//
#include "Cpu/FewRowProduct.h"

#include "gc/Support/Target.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace gc;

namespace {

struct Shape {
  int64_t n, k;
};

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int usage(const char *why) {
  std::fprintf(stderr,
               "fewrow-bench: %s\nusage: fewrow-bench [--shapes 1b|8b] [--layers L] [--rows M] "
               "[--dtype f32|bf16] [--threads T] [--passes P] [--level LEVEL] [--form best|split] "
               "[--file PATH]\n",
               why);
  return 2;
}

/// A failure after the arguments were read: the message alone, exit 1.
int fail(const std::string &why) {
  std::fprintf(stderr, "fewrow-bench: %s\n", why.c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  std::string shapes = "1b", dtype = "f32", level, file, form = "best";
  int64_t layers = -1, rows = 1, passes = 5;
  unsigned threads = 1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc)
      return usage(("missing value of '" + arg + "'").c_str());
    const char *v = argv[++i];
    if (arg == "--shapes")
      shapes = v;
    else if (arg == "--dtype")
      dtype = v;
    else if (arg == "--level")
      level = v;
    else if (arg == "--form")
      form = v;
    else if (arg == "--file")
      file = v;
    else if (arg == "--layers")
      layers = std::atoll(v);
    else if (arg == "--rows")
      rows = std::atoll(v);
    else if (arg == "--passes")
      passes = std::atoll(v);
    else if (arg == "--threads")
      threads = static_cast<unsigned>(std::atoi(v));
    else
      return usage(("unknown argument '" + arg + "'").c_str());
  }
  int64_t hidden, kv, mlp, vocab = 128256, presetLayers;
  if (shapes == "1b")
    hidden = 2048, kv = 512, mlp = 8192, presetLayers = 16;
  else if (shapes == "8b")
    hidden = 4096, kv = 1024, mlp = 14336, presetLayers = 32;
  else
    return usage("--shapes must be 1b or 8b");
  if (layers == -1)
    layers = presetLayers;
  if (dtype != "f32" && dtype != "bf16")
    return usage("--dtype must be f32 or bf16");
  if (layers < 0 || rows < 1 || rows > kFewRowsMax || passes < 1 || threads < 1)
    return usage("--layers must be at least 0, --rows 1 to 8, --passes and --threads positive");
  if (level.empty()) {
    Expected<std::string> host = selectCpuTarget("x86-64,x86-64-v3,x86-64-v4");
    if (!host)
      return fail("cannot tell the host's CPU level: " + host.error().message());
    level = *host;
  }
  if (form != "best" && form != "split")
    return usage("--form must be best or split");
  FewRowKernel kernel =
      fewRowKernel(level, form == "best" ? FewRowForm::Best : FewRowForm::Split);
  if (!kernel)
    return usage("--level must be x86-64-v4, x86-64-v3 or x86-64");

  std::vector<Shape> products;
  for (int64_t l = 0; l < layers; ++l)
    for (Shape s : {Shape{hidden, hidden}, Shape{kv, hidden}, Shape{kv, hidden},
                    Shape{hidden, hidden}, Shape{mlp, hidden}, Shape{mlp, hidden},
                    Shape{hidden, mlp}})
      products.push_back(s);
  products.push_back({vocab, hidden});
  bool bf16 = dtype == "bf16";
  size_t elementBytes = bf16 ? 2 : 4, total = 0, largestK = 0, largestN = 0;
  std::vector<size_t> offsets;
  for (Shape s : products) {
    offsets.push_back(total);
    // Each weight starts on a page, as an archive's aligned entries may.
    total += (s.n * s.k * elementBytes + 4095) / 4096 * 4096;
    largestK = std::max<size_t>(largestK, s.k);
    largestN = std::max<size_t>(largestN, s.n);
  }

  // Weight values: small random ones, the same for either memory.
  std::vector<char> page(1 << 20);
  std::mt19937 rng(7);
  for (size_t i = 0; i < page.size(); i += elementBytes) {
    float f = std::uniform_real_distribution<float>(-0.02f, 0.02f)(rng);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (bf16) {
      uint16_t half = static_cast<uint16_t>(bits >> 16);
      std::memcpy(&page[i], &half, 2);
    } else {
      std::memcpy(&page[i], &bits, 4);
    }
  }
  char *weights = nullptr;
  if (file.empty()) {
    weights = static_cast<char *>(std::aligned_alloc(4096, total));
    if (!weights)
      return fail("cannot allocate " + std::to_string(total) + " bytes of weights");
    for (size_t o = 0; o < total; o += page.size())
      std::memcpy(weights + o, page.data(), std::min(page.size(), total - o));
  } else {
    int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
      return fail("cannot write '" + file + "': " + std::strerror(errno));
    for (size_t o = 0; o < total; o += page.size()) {
      size_t len = std::min(page.size(), total - o);
      if (::write(fd, page.data(), len) != static_cast<ssize_t>(len)) {
        std::string why = std::strerror(errno);
        ::close(fd);
        ::unlink(file.c_str());
        return fail("cannot write '" + file + "': " + why);
      }
    }
    void *map = ::mmap(nullptr, total, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) {
      ::unlink(file.c_str());
      return fail("cannot map '" + file + "'");
    }
    weights = static_cast<char *>(map);
  }

  ThreadPool pool(threads);
  pool.bindToCallingThread();
  std::vector<float> left(rows * largestK, 0.5f), out(rows * largestN);
  // The bound: each thread sums its chunks of every weight, 64 floats at a
  // time in four vector sums, as utils/bench/membw.c does (GCC's vector
  // extensions, so that the loop is bound by loads at the baseline level).
  typedef float Floats16 __attribute__((vector_size(64)));
  std::atomic<double> sink = 0;
  auto sumPass = [&] {
    for (size_t p = 0; p < products.size(); ++p) {
      const char *w = weights + offsets[p];
      int64_t blocks = products[p].n * products[p].k * elementBytes / 4096;
      pool.parallelFor(blocks, [&](int64_t b, int64_t e) {
        Floats16 s[4] = {};
        for (const char *at = w + b * 4096, *end = w + e * 4096; at < end; at += 256)
          for (int j = 0; j < 4; ++j) {
            Floats16 v;
            std::memcpy(&v, at + 64 * j, 64);
            s[j] += v;
          }
        Floats16 all = s[0] + s[1] + s[2] + s[3];
        float t = 0;
        for (int j = 0; j < 16; ++j)
          t += all[j];
        sink.fetch_add(t, std::memory_order_relaxed); // keeps the sums alive
      });
    }
  };
  auto productPass = [&] {
    for (size_t p = 0; p < products.size(); ++p)
      runFewRowProduct(kernel, pool, left.data(), largestK, rows, products[p].k,
                       weights + offsets[p], products[p].k, bf16, out.data(), largestN,
                       products[p].n, [](int64_t, int64_t) {});
  };
  double bytes = 0;
  for (Shape s : products)
    bytes += static_cast<double>(s.n * s.k * elementBytes);
  // The best pass by wall time, and by the CPU time the process got over
  // the threads (on a machine other jobs share, a pass waits for a core
  // as well as for memory; its CPU time counts only the second, though
  // OpenMP's threads also spin while they wait for each other).
  struct Rate {
    double wall = 0, cpu = 0;
  };
  auto cpuSeconds = [] {
    rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
  };
  // The passes alternate, so that both meet the same moments of load.
  Rate sum, product;
  auto time = [&](auto &&pass, Rate &r) {
    double start = now(), cpuStart = cpuSeconds();
    pass();
    double wall = now() - start, cpu = (cpuSeconds() - cpuStart) / threads;
    r.wall = std::max(r.wall, bytes / wall / 1e9);
    r.cpu = std::max(r.cpu, bytes / std::max(cpu, 1e-9) / 1e9);
  };
  // Touch every page first, so that neither pays the faults.
  sumPass();
  for (int64_t p = 0; p < passes; ++p) {
    time(sumPass, sum);
    time(productPass, product);
  }
  std::printf("%s shapes, %lld layers + LM head, %s, %lld row(s), %u thread(s), %s (%s form), %s "
              "memory: %.2f GB of weights\n",
              shapes.c_str(), static_cast<long long>(layers), dtype.c_str(),
              static_cast<long long>(rows), threads, level.c_str(), form.c_str(),
              file.empty() ? "anonymous" : "file-mapped", bytes / 1e9);
  std::printf("by wall time: sum %.2f GB/s, product %.2f GB/s: %.0f%% of the sum\n", sum.wall,
              product.wall, 100 * product.wall / sum.wall);
  std::printf("by CPU time:  sum %.2f GB/s, product %.2f GB/s: %.0f%% of the sum (best of %lld "
              "alternating passes; checksum %g)\n",
              sum.cpu, product.cpu, 100 * product.cpu / sum.cpu, static_cast<long long>(passes),
              sink.load() + out[0]);
  if (!file.empty())
    ::unlink(file.c_str());
  return 0;
}
