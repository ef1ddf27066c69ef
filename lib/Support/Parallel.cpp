//===- Parallel.cpp - Independent jobs on a few threads -------------------===//
#include "gc/Support/Parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace gc {

void forEachIndex(size_t n, unsigned threads, const std::function<void(size_t)> &work) {
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;)
      work(i);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<size_t>(threads, n); ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &t : pool)
    t.join();
}

} // namespace gc
