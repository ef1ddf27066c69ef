//===- ThreadPool.h - Parallel loops of the runtime -------------*- C++ -*-===//
//
// Kernels and oneDNN's primitives share one team of threads: OpenMP's, the
// threading Debian's oneDNN is built with. Two pools on the same cores would
// take turns spinning while the other works; one team stays hot for both.
//
//===----------------------------------------------------------------------===//
#ifndef GC_RUNTIME_THREADPOOL_H
#define GC_RUNTIME_THREADPOOL_H

#include <cstdint>
#include <functional>

namespace gc {

class ThreadPool {
public:
  /// `threads` participants in every loop, the calling thread included;
  /// 0 means one per hardware thread.
  explicit ThreadPool(unsigned threads);

  unsigned size() const { return threads_; }

  /// Makes this pool's thread count the one OpenMP (and so oneDNN) uses
  /// for parallel regions the calling thread starts.
  void bindToCallingThread() const;

  /// Calls fn(begin, end) on disjoint chunks covering [0, n), on up to
  /// size() threads (the calling thread one of them), and returns when all
  /// are done. Chunks are handed out as threads come free, so a thread
  /// slowed down by other work does not hold up the loop. fn must not call
  /// parallelFor.
  void parallelFor(int64_t n, const std::function<void(int64_t, int64_t)> &fn) const;

private:
  unsigned threads_;
};

} // namespace gc

#endif // GC_RUNTIME_THREADPOOL_H
