//===- Parallel.h - Independent jobs on a few threads -----------*- C++ -*-===//
#ifndef GC_SUPPORT_PARALLEL_H
#define GC_SUPPORT_PARALLEL_H

#include <cstddef>
#include <functional>

namespace gc {

/// Calls work(i) for every i < n on up to `threads` threads (0: one per
/// hardware thread; the caller's among them), each taking the next index
/// when it is done with one. Returns once every call has.
void forEachIndex(size_t n, unsigned threads, const std::function<void(size_t)> &work);

} // namespace gc

#endif // GC_SUPPORT_PARALLEL_H
