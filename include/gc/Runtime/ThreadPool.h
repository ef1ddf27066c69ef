//===- ThreadPool.h - Persistent workers for parallel loops -----*- C++ -*-===//
//
// Kernels take a sub-range of their outermost parallel loop; the runtime
// owns the threads that run those sub-ranges. Workers live as long as the
// pool, so a run pays no thread start-up.
//
//===----------------------------------------------------------------------===//
#ifndef GC_RUNTIME_THREADPOOL_H
#define GC_RUNTIME_THREADPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gc {

class ThreadPool {
public:
  /// `threads` participants in every loop, the calling thread included;
  /// 0 means one per hardware thread.
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

  /// Splits [0, n) into at most size() contiguous chunks, calls fn(begin,
  /// end) once per chunk (one of them on the calling thread) and returns
  /// when all are done. One loop at a time: fn must not call parallelFor.
  void parallelFor(int64_t n, const std::function<void(int64_t, int64_t)> &fn);

private:
  void workerLoop();
  /// Takes chunks of the current loop until none is left.
  void drainChunks();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  uint64_t generation_ = 0;
  bool stopping_ = false;
  unsigned busy_ = 0; ///< workers inside drainChunks

  const std::function<void(int64_t, int64_t)> *fn_ = nullptr;
  int64_t n_ = 0;
  int64_t chunks_ = 0;
  std::atomic<int64_t> nextChunk_{0};
  std::atomic<int64_t> remaining_{0};
};

} // namespace gc

#endif // GC_RUNTIME_THREADPOOL_H
