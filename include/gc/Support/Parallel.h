//===- Parallel.h - Independent jobs on a few threads -----------*- C++ -*-===//
#ifndef GC_SUPPORT_PARALLEL_H
#define GC_SUPPORT_PARALLEL_H

#include "gc/Support/Error.h"

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

namespace gc {

/// Calls work(i) for every i < n on up to `threads` threads (0: one per
/// hardware thread; the caller's among them), each taking the next index
/// when it is done with one. Returns once every call has.
void forEachIndex(size_t n, unsigned threads, const std::function<void(size_t)> &work);

/// work(i) for every i < n on up to `threads` threads (forEachIndex): the
/// results in index order, or the failure of the lowest index that failed,
/// whichever thread saw it first, so that neither depends on the threads.
template <typename T>
Expected<std::vector<T>> mapIndices(size_t n, unsigned threads,
                                    const std::function<Expected<T>(size_t)> &work) {
  std::vector<std::optional<Expected<T>>> results(n);
  forEachIndex(n, threads, [&](size_t i) { results[i].emplace(work(i)); });
  std::vector<T> values;
  values.reserve(n);
  for (std::optional<Expected<T>> &r : results) {
    if (!*r)
      return r->error();
    values.push_back(r->take());
  }
  return values;
}

} // namespace gc

#endif // GC_SUPPORT_PARALLEL_H
