//===- ThreadPool.cpp - Persistent workers for parallel loops -------------===//
#include "gc/Runtime/ThreadPool.h"

#include <algorithm>

namespace gc {

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  workers_.reserve(threads - 1);
  for (unsigned i = 1; i < threads; ++i)
    workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

void ThreadPool::drainChunks() {
  for (;;) {
    int64_t c = nextChunk_.fetch_add(1, std::memory_order_relaxed);
    if (c >= chunks_)
      return;
    // Chunk c covers [c*n/chunks, (c+1)*n/chunks): sizes differ by at most 1.
    int64_t begin = c * n_ / chunks_, end = (c + 1) * n_ / chunks_;
    (*fn_)(begin, end);
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_one();
    }
  }
}

void ThreadPool::workerLoop() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_)
        return;
      seen = generation_;
      ++busy_;
    }
    drainChunks();
    std::lock_guard<std::mutex> lock(mutex_);
    if (--busy_ == 0)
      done_.notify_one();
  }
}

void ThreadPool::parallelFor(int64_t n, const std::function<void(int64_t, int64_t)> &fn) {
  if (n <= 0)
    return;
  int64_t chunks = std::min<int64_t>(n, size());
  if (chunks == 1) {
    fn(0, n);
    return;
  }
  {
    // A worker that woke for the last loop after it ended may still be
    // looking at its chunks; the loop's state is reused only once it left.
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return busy_ == 0; });
    fn_ = &fn;
    n_ = n;
    chunks_ = chunks;
    nextChunk_.store(0, std::memory_order_relaxed);
    remaining_.store(chunks, std::memory_order_relaxed);
    ++generation_;
  }
  wake_.notify_all();
  drainChunks();
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock,
             [&] { return remaining_.load(std::memory_order_acquire) == 0 && busy_ == 0; });
}

} // namespace gc
