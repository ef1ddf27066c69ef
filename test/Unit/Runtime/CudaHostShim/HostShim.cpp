//===- HostShim.cpp - The host threads that stand in for a GPU's ----------===//
#include "cuda_bf16.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

namespace gc::test::hostcuda {

thread_local Index threadIdx, blockIdx;
std::barrier<> *block = nullptr;
std::barrier<> *warps[8] = {};
float shuffled[2][8][32];
std::atomic<int> vote{0};

void requireAligned(const void *p) {
  if (reinterpret_cast<uintptr_t>(p) % 16 != 0) {
    std::fprintf(stderr, "host kernel: a 16-byte load from %p, which is not aligned\n", p);
    std::abort();
  }
}

void runBlocks(unsigned threads, unsigned gridX, unsigned gridY,
               const std::function<void()> &kernel) {
  std::barrier<> blockBarrier(threads);
  std::vector<std::unique_ptr<std::barrier<>>> warpBarriers;
  block = &blockBarrier;
  for (auto &w : warps) {
    warpBarriers.push_back(std::make_unique<std::barrier<>>(32));
    w = warpBarriers.back().get();
  }
  // Each thread runs its part of every block; the barrier after a block
  // keeps the next one from touching the shared memory before all are done.
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      threadIdx.x = t;
      for (unsigned y = 0; y < gridY; ++y)
        for (unsigned x = 0; x < gridX; ++x) {
          blockIdx.x = x;
          blockIdx.y = y;
          kernel();
          blockBarrier.arrive_and_wait();
        }
    });
  for (std::thread &t : pool)
    t.join();
}

} // namespace gc::test::hostcuda
