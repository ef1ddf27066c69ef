//===- FewRowKernelOnHost.cpp - The few-row kernel run on the host --------===//
//
// FewRowKernel.cu itself, compiled by the host compiler against the shim in
// CudaHostShim/ (see its cuda_bf16.h), and a launcher that runs each block
// on kFewRowThreads host threads.
//
//===----------------------------------------------------------------------===//
#include "FewRowKernelOnHost.h"

#include "Cuda/FewRowKernel.cu"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <thread>
#include <vector>

namespace gc::test {

namespace hostcuda {
thread_local Index threadIdx, blockIdx;
std::barrier<> *block = nullptr;
std::barrier<> *warps[8] = {};
float shuffled[8][32];

void requireAligned(const void *p) {
  if (reinterpret_cast<uintptr_t>(p) % 16 != 0) {
    std::fprintf(stderr, "few-row kernel: a 16-byte load from %p, which is not aligned\n", p);
    std::abort();
  }
}
} // namespace hostcuda

bool runFewRowKernelOnHost(const std::string &entry, unsigned blocks,
                           const cuda::FewRowKernelArgs &args) {
  using Entry = void (*)(cuda::FewRowKernelArgs);
#define GC_HOST_ENTRIES(T)                                                                         \
  {"gc_fewrow_" #T "_r1", gc_fewrow_##T##_r1}, {"gc_fewrow_" #T "_r2", gc_fewrow_##T##_r2},        \
      {"gc_fewrow_" #T "_r3", gc_fewrow_##T##_r3}, {"gc_fewrow_" #T "_r4", gc_fewrow_##T##_r4},    \
      {"gc_fewrow_" #T "_r5", gc_fewrow_##T##_r5}, {"gc_fewrow_" #T "_r6", gc_fewrow_##T##_r6},    \
      {"gc_fewrow_" #T "_r7", gc_fewrow_##T##_r7}, {"gc_fewrow_" #T "_r8", gc_fewrow_##T##_r8},
  static const std::map<std::string, Entry> entries = {GC_HOST_ENTRIES(f32) GC_HOST_ENTRIES(bf16)
                                                           GC_HOST_ENTRIES(f16)};
#undef GC_HOST_ENTRIES
  auto found = entries.find(entry);
  if (found == entries.end())
    return false;
  std::barrier<> blockBarrier(cuda::kFewRowThreads);
  std::vector<std::unique_ptr<std::barrier<>>> warpBarriers;
  hostcuda::block = &blockBarrier;
  for (auto &w : hostcuda::warps) {
    warpBarriers.push_back(std::make_unique<std::barrier<>>(32));
    w = warpBarriers.back().get();
  }
  // Each thread runs its part of every block; the barrier after a block
  // keeps the next one from touching the shared memory before all are done.
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < unsigned(cuda::kFewRowThreads); ++t)
    threads.emplace_back([&, t] {
      hostcuda::threadIdx.x = t;
      for (unsigned b = 0; b < blocks; ++b) {
        hostcuda::blockIdx.x = b;
        found->second(args);
        blockBarrier.arrive_and_wait();
      }
    });
  for (std::thread &t : threads)
    t.join();
  return true;
}

} // namespace gc::test
