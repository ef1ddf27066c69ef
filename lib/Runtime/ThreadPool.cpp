//===- ThreadPool.cpp - Parallel loops of the runtime ---------------------===//
#include "gc/Runtime/ThreadPool.h"

#include <algorithm>

#include <omp.h>

namespace gc {

ThreadPool::ThreadPool(unsigned threads)
    : threads_(threads ? threads : static_cast<unsigned>(std::max(1, omp_get_num_procs()))) {}

void ThreadPool::bindToCallingThread() const { omp_set_num_threads(static_cast<int>(threads_)); }

void ThreadPool::parallelFor(int64_t n, const std::function<void(int64_t, int64_t)> &fn) const {
  if (n <= 0)
    return;
  int64_t chunks = std::min<int64_t>(n, threads_);
  if (chunks == 1) {
    fn(0, n);
    return;
  }
  // Chunk c covers [c*n/chunks, (c+1)*n/chunks): sizes differ by at most 1.
#pragma omp parallel num_threads(static_cast<int>(chunks))
  {
    int64_t c = omp_get_thread_num();
    fn(c * n / chunks, (c + 1) * n / chunks);
  }
}

} // namespace gc
