//===- Roofline.cpp - Profile steps against the machine's peaks -----------===//
#include "gc/Runtime/Roofline.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <thread>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace gc {

namespace {

/// Independent accumulators per thread: more than FMA latency times FMA
/// ports (4 x 2 on recent x86 cores), so the chains never wait.
constexpr int kChains = 12;
constexpr int64_t kFmaIterations = 1 << 17;
constexpr int kFmaRuns = 200, kReadRuns = 5;
/// Far larger than any cache of the machines gc runs on.
constexpr size_t kReadBytes = size_t(256) << 20;

/// One thread's FMA chains: returns the FLOPs done (a multiply and an add
/// per lane per FMA). `sink` keeps the results alive.
using FmaLoop = int64_t (*)(float *sink);
/// Sums `n` floats from `p` in vector registers; returns the sum.
using ReadLoop = float (*)(const float *p, size_t n);

int64_t fmaScalar(float *sink) {
  float acc[kChains];
  for (int c = 0; c < kChains; ++c)
    acc[c] = 1.0f + c * 1e-3f;
  for (int64_t i = 0; i < kFmaIterations; ++i)
    for (int c = 0; c < kChains; ++c)
      acc[c] = acc[c] * 0.999999f + 1e-7f;
  float s = 0;
  for (float a : acc)
    s += a;
  *sink = s;
  return kFmaIterations * kChains * 2;
}

float readScalar(const float *p, size_t n) {
  float s = 0;
  for (size_t i = 0; i < n; ++i)
    s += p[i];
  return s;
}

#if defined(__x86_64__)
// The FMA chains and the read, once per vector width: the code of each
// loaded kernel level is built for exactly one of them.
#define GC_PEAK_LOOPS(SUFFIX, TARGET, VEC, LANES, SET1, FMA, LOAD, ADD, STORE)                   \
  __attribute__((target(TARGET))) int64_t fma##SUFFIX(float *sink) {                             \
    VEC acc[kChains];                                                                            \
    for (int c = 0; c < kChains; ++c)                                                            \
      acc[c] = SET1(1.0f + c * 1e-3f);                                                           \
    VEC a = SET1(0.999999f), b = SET1(1e-7f);                                                    \
    for (int64_t i = 0; i < kFmaIterations; ++i)                                                 \
      _Pragma("GCC unroll 16") for (int c = 0; c < kChains; ++c)                                 \
        acc[c] = FMA(acc[c], a, b);                                                              \
    for (int c = 1; c < kChains; ++c)                                                            \
      acc[0] = ADD(acc[0], acc[c]);                                                              \
    float lanes[LANES];                                                                          \
    STORE(lanes, acc[0]);                                                                        \
    *sink = lanes[0];                                                                            \
    return kFmaIterations * kChains * LANES * 2;                                                 \
  }                                                                                              \
  __attribute__((target(TARGET))) float read##SUFFIX(const float *p, size_t n) {                 \
    VEC s0 = SET1(0), s1 = SET1(0), s2 = SET1(0), s3 = SET1(0);                                  \
    size_t i = 0;                                                                                \
    for (; i + 4 * LANES <= n; i += 4 * LANES) {                                                 \
      s0 = ADD(s0, LOAD(p + i));                                                                 \
      s1 = ADD(s1, LOAD(p + i + LANES));                                                         \
      s2 = ADD(s2, LOAD(p + i + 2 * LANES));                                                     \
      s3 = ADD(s3, LOAD(p + i + 3 * LANES));                                                     \
    }                                                                                            \
    float lanes[LANES];                                                                          \
    STORE(lanes, ADD(ADD(s0, s1), ADD(s2, s3)));                                                 \
    return lanes[0] + readScalar(p + i, n - i);                                                  \
  }
GC_PEAK_LOOPS(Avx2, "avx2,fma", __m256, 8, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_loadu_ps,
              _mm256_add_ps, _mm256_storeu_ps)
GC_PEAK_LOOPS(Avx512, "avx512f", __m512, 16, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_loadu_ps,
              _mm512_add_ps, _mm512_storeu_ps)
#undef GC_PEAK_LOOPS
#endif

struct PeakLoops {
  FmaLoop fma;
  ReadLoop read;
  const char *isa;
};

/// x86-64-v3 kernels: AVX2; any other level (v4, or none when the graph
/// has no kernels): the widest vectors this CPU has.
PeakLoops loopsFor(std::string_view target) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (target != "x86-64-v3" && __builtin_cpu_supports("avx512f"))
    return {fmaAvx512, readAvx512, "AVX-512 FMA"};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {fmaAvx2, readAvx2, "AVX2 FMA"};
#else
  (void)target;
#endif
  return {fmaScalar, readScalar, "scalar"};
}

/// Lines threads up by spinning: none sleeps, so a run's clock does not
/// start before every thread is awake. (std::barrier's waiters sleep in
/// the kernel; waking one took about as long as a run of the FMA chains on
/// a 2-vCPU VM, whose two threads then measured one core's peak.)
class SpinBarrier {
public:
  explicit SpinBarrier(unsigned threads) : threads_(threads) {}
  void arrive_and_wait() {
    unsigned round = round_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
      arrived_.store(0, std::memory_order_relaxed);
      round_.store(round + 1, std::memory_order_release);
      return;
    }
    while (round_.load(std::memory_order_acquire) == round)
      std::this_thread::yield();
  }

private:
  const unsigned threads_;
  std::atomic<unsigned> arrived_{0}, round_{0};
};

/// The best wall time of `reps` runs of `body(thread)` on `threads` threads
/// at once, the threads made once and lined up before each run. The best,
/// since other work on the machine only slows a run; many short runs, so
/// that some fit between the other work's time slices.
double bestWallSeconds(unsigned threads, int reps, const std::function<void(unsigned)> &body) {
  double best = 1e30;
  SpinBarrier line(threads);
  std::chrono::steady_clock::time_point start;
  auto worker = [&](unsigned t) {
    for (int rep = 0; rep < reps; ++rep) {
      line.arrive_and_wait();
      if (t == 0)
        start = std::chrono::steady_clock::now();
      line.arrive_and_wait();
      body(t);
      line.arrive_and_wait();
      if (t == 0)
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                            start)
                                  .count());
    }
  };
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < threads; ++t)
    workers.emplace_back(worker, t);
  worker(0);
  for (std::thread &w : workers)
    w.join();
  return best;
}

std::string formatNumber(const char *format, double v) {
  char text[64];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

} // namespace

MachinePeaks measureCpuPeaks(unsigned threads, std::string_view target) {
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  PeakLoops loops = loopsFor(target);
  std::vector<float> sinks(threads);
  std::vector<int64_t> flops(threads);
  double fmaSeconds =
      bestWallSeconds(threads, kFmaRuns, [&](unsigned t) { flops[t] = loops.fma(&sinks[t]); });
  size_t n = kReadBytes / sizeof(float), per = n / threads;
  std::unique_ptr<float[]> data(new float[n]);
  // Each thread first touches the part it reads, so pages sit near it.
  bestWallSeconds(threads, 1, [&](unsigned t) {
    std::memset(data.get() + t * per, 0, per * sizeof(float));
  });
  double readSeconds = bestWallSeconds(
      threads, kReadRuns, [&](unsigned t) { sinks[t] += loops.read(data.get() + t * per, per); });
  MachinePeaks p;
  for (int64_t f : flops)
    p.flopsPerSecond += static_cast<double>(f);
  p.flopsPerSecond /= fmaSeconds;
  p.bytesPerSecond = static_cast<double>(per * threads * sizeof(float)) / readSeconds;
  p.source = "measured: " + std::to_string(threads) + " thread" + (threads == 1 ? "" : "s") +
             ", " + loops.isa + " chains, a read of " + std::to_string(kReadBytes >> 20) + " MiB";
  return p;
}

Expected<MachinePeaks> cudaPeaks(const CudaDevice &device, DType dtype, bool allowTF32) {
  // FLOPs per clock per SM (dense), by compute capability: FP32 FMA, then
  // tensor cores for TF32 and for bfloat16/float16 (float32 accumulation).
  struct Throughput {
    int arch;
    int fp32, tf32, half;
  };
  static constexpr Throughput kTable[] = {
      {70, 128, 0, 1024},    {75, 128, 0, 1024},    {80, 128, 1024, 2048},
      {86, 256, 512, 1024},  {89, 256, 512, 1024},  {90, 256, 2048, 4096},
  };
  const Throughput *row = nullptr;
  for (const Throughput &t : kTable)
    if (t.arch == device.arch)
      row = &t;
  if (!row)
    return makeError() << "no peak throughput known for compute capability "
                       << device.arch / 10 << "." << device.arch % 10 << " (" << device.name
                       << "); give the peaks with GC_PEAKS=GFLOPS,GBPS";
  if (device.clockKHz <= 0 || device.memoryClockKHz <= 0 || device.memoryBusBits <= 0)
    return makeError() << "the driver gives no clock rates or memory bus width for "
                       << device.describe() << "; give the peaks with GC_PEAKS=GFLOPS,GBPS";
  bool half = isHalfPrecision(dtype);
  bool tf32 = !half && allowTF32 && row->tf32 > 0;
  int perClock = half ? row->half : tf32 ? row->tf32 : row->fp32;
  const char *unit = half ? "bf16/fp16 tensor cores" : tf32 ? "TF32 tensor cores" : "FP32 FMA";
  MachinePeaks p;
  p.flopsPerSecond = double(device.multiprocessors) * device.clockKHz * 1e3 * perClock;
  p.bytesPerSecond = 2.0 * device.memoryClockKHz * 1e3 * device.memoryBusBits / 8;
  p.source = "device attributes: " + device.describe() + ", " +
             std::to_string(device.multiprocessors) + " SMs at " +
             std::to_string(device.clockKHz / 1000) + " MHz x " + std::to_string(perClock) +
             " FLOP/clock (" + unit + "), a " + std::to_string(device.memoryBusBits) +
             "-bit bus at " + std::to_string(device.memoryClockKHz / 1000) + " MHz";
  return p;
}

Expected<MachinePeaks> parsePeaks(std::string_view text, std::string_view what) {
  size_t comma = text.find(',');
  double values[2] = {0, 0};
  bool ok = comma != std::string_view::npos;
  std::string_view parts[2] = {text.substr(0, ok ? comma : 0), ok ? text.substr(comma + 1) : ""};
  for (int i = 0; ok && i < 2; ++i) {
    auto [end, ec] = std::from_chars(parts[i].data(), parts[i].data() + parts[i].size(), values[i]);
    ok = ec == std::errc() && end == parts[i].data() + parts[i].size() && values[i] > 0;
  }
  if (!ok)
    return makeError() << what << ": '" << text
                       << "' is not GFLOPS,GBPS (two positive numbers, such as 150,12.5)";
  MachinePeaks p;
  p.flopsPerSecond = values[0] * 1e9;
  p.bytesPerSecond = values[1] * 1e9;
  p.source = std::string(what);
  return p;
}

Expected<std::optional<MachinePeaks>> givenPeaks(std::string_view flag) {
  const char *env = std::getenv("GC_PEAKS");
  if (flag.empty() && (!env || !*env))
    return std::optional<MachinePeaks>();
  Expected<MachinePeaks> p = flag.empty() ? parsePeaks(env, "GC_PEAKS") : parsePeaks(flag, "--peaks");
  if (!p)
    return p.error();
  return std::optional<MachinePeaks>(p.take());
}

namespace {

/// The time per module path, most first (ties by path), when the plan knows
/// where its steps came from: which part of the model the time goes to. A
/// fused kernel counts under the module all its sources share.
std::string moduleReport(const std::vector<StepProfile> &steps, double total) {
  std::map<std::string, std::pair<double, int>> byModule;
  bool known = false;
  for (const StepProfile &p : steps) {
    known |= !p.modulePath.empty();
    auto &[seconds, count] = byModule[p.modulePath];
    seconds += p.seconds;
    ++count;
  }
  if (!known)
    return "";
  std::vector<std::pair<std::string, std::pair<double, int>>> rows(byModule.begin(), byModule.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto &a, const auto &b) { return a.second.first > b.second.first; });
  std::string out = "by module: module path, steps, ms over the counted runs, share of the time\n";
  char line[512];
  for (const auto &[path, entry] : rows) {
    std::snprintf(line, sizeof line, "  %-40s %5d %10.4f %5.1f%%\n",
                  path.empty() ? "(root)" : path.c_str(), entry.second, entry.first * 1e3,
                  total > 0 ? 100 * entry.first / total : 0.0);
    out += line;
  }
  return out;
}

} // namespace

std::string rooflineReport(const std::vector<StepProfile> &steps, const MachinePeaks &peaks) {
  double ridge = peaks.bytesPerSecond > 0 ? peaks.flopsPerSecond / peaks.bytesPerSecond : 0;
  std::string out = "peaks: " + formatNumber("%.1f", peaks.flopsPerSecond / 1e9) +
                    " GFLOP/s, " + formatNumber("%.1f", peaks.bytesPerSecond / 1e9) +
                    " GB/s, ridge " + formatNumber("%.2f", ridge) + " FLOP/byte (" +
                    peaks.source + ")\n";
  out += "roofline: step, name, GFLOP/s, % of peak, GB/s, % of peak, FLOP/byte, nearer bound\n";
  double flops = 0, bytes = 0, seconds = 0;
  int64_t runs = 0;
  char line[256];
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepProfile &p = steps[i];
    flops += p.flops;
    bytes += p.bytes;
    seconds += p.seconds;
    runs = std::max(runs, p.runs);
    double gflops = p.seconds > 0 ? p.flops / p.seconds / 1e9 : 0;
    double gbytes = p.seconds > 0 ? p.bytes / p.seconds / 1e9 : 0;
    double intensity = p.bytes > 0 ? p.flops / p.bytes : 0;
    const char *bound = p.flops == 0 && p.bytes == 0 ? "-"
                        : intensity >= ridge         ? "compute"
                                                     : "memory";
    std::snprintf(line, sizeof line, "  %3zu %-32s %9.2f %5.1f%% %9.2f %5.1f%% %9.2f %s\n", i,
                  p.name.c_str(), gflops, 100 * gflops * 1e9 / peaks.flopsPerSecond, gbytes,
                  100 * gbytes * 1e9 / peaks.bytesPerSecond, intensity, bound);
    out += line;
  }
  double perRun = runs ? 1.0 / runs : 0;
  std::snprintf(line, sizeof line,
                "roofline total: %.4g GFLOP and %.4g GB per run in %.4g ms: %.2f GFLOP/s "
                "(%.1f%% of peak), %.2f GB/s (%.1f%% of peak)\n",
                flops * perRun / 1e9, bytes * perRun / 1e9, seconds * perRun * 1e3,
                seconds > 0 ? flops / seconds / 1e9 : 0,
                seconds > 0 ? 100 * flops / seconds / peaks.flopsPerSecond : 0,
                seconds > 0 ? bytes / seconds / 1e9 : 0,
                seconds > 0 ? 100 * bytes / seconds / peaks.bytesPerSecond : 0);
  out += line;
  out += moduleReport(steps, seconds);
  return out;
}

} // namespace gc
