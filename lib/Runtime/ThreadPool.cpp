//===- ThreadPool.cpp - Parallel loops of the runtime ---------------------===//
#include "gc/Runtime/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <memory>

#include <omp.h>

namespace gc {

namespace {

/// Chunks per participant: enough that a thread slowed down (by another
/// process on its core) leaves only small pieces for the others to take
/// over, few enough that taking a chunk (an atomic add and a call) stays
/// cheap beside running it.
constexpr int64_t kChunksPerThread = 8;

/// What is left of one participant's share: chunks [next, end) are taken
/// from the front by whoever comes, the owner first.
struct alignas(64) Share {
  std::atomic<int64_t> next;
  int64_t end;
};

} // namespace

ThreadPool::ThreadPool(unsigned threads)
    : threads_(threads ? threads : static_cast<unsigned>(std::max(1, omp_get_num_procs()))) {}

void ThreadPool::bindToCallingThread() const { omp_set_num_threads(static_cast<int>(threads_)); }

void ThreadPool::parallelFor(int64_t n, const std::function<void(int64_t, int64_t)> &fn) const {
  if (n <= 0)
    return;
  int64_t team = std::min<int64_t>(n, threads_);
  if (team == 1) {
    fn(0, n);
    return;
  }
  // Each participant starts on its own contiguous share (the one a static
  // split gives it, so consecutive loops over the same data keep it in the
  // same core's cache) and then takes the rest of the others' shares.
  int64_t grain = std::max<int64_t>(1, n / (team * kChunksPerThread));
  std::unique_ptr<Share[]> shares(new Share[team]);
  for (int64_t t = 0; t < team; ++t) {
    shares[t].next.store(t * n / team, std::memory_order_relaxed);
    shares[t].end = (t + 1) * n / team;
  }
#pragma omp parallel num_threads(static_cast<int>(team))
  {
    int64_t self = omp_get_thread_num();
    for (int64_t k = 0; k < team; ++k) {
      Share &s = shares[(self + k) % team];
      for (int64_t begin; (begin = s.next.fetch_add(grain, std::memory_order_relaxed)) < s.end;)
        fn(begin, std::min(begin + grain, s.end));
    }
  }
}

} // namespace gc
