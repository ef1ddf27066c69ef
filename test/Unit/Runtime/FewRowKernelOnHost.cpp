//===- FewRowKernelOnHost.cpp - The few-row kernel run on the host --------===//
//
// FewRowKernel.cu itself, compiled by the host compiler against the shim in
// CudaHostShim/ (see its cuda_bf16.h), and a launcher that runs each block
// on kFewRowThreads host threads.
//
//===----------------------------------------------------------------------===//
#include "FewRowKernelOnHost.h"

#include "Cuda/FewRowKernel.cu"

#include <map>

namespace gc::test {

bool runFewRowKernelOnHost(const std::string &entry, unsigned blocks,
                           const cuda::FewRowGroupArgs &args) {
  using Entry = void (*)(cuda::FewRowGroupArgs);
#define GC_HOST_ENTRIES(T)                                                                         \
  {"gc_fewrow_" #T "_r1", gc_fewrow_##T##_r1}, {"gc_fewrow_" #T "_r2", gc_fewrow_##T##_r2},        \
      {"gc_fewrow_" #T "_r3", gc_fewrow_##T##_r3}, {"gc_fewrow_" #T "_r4", gc_fewrow_##T##_r4},    \
      {"gc_fewrow_" #T "_r5", gc_fewrow_##T##_r5}, {"gc_fewrow_" #T "_r6", gc_fewrow_##T##_r6},    \
      {"gc_fewrow_" #T "_r7", gc_fewrow_##T##_r7}, {"gc_fewrow_" #T "_r8", gc_fewrow_##T##_r8},    \
      {"gc_fewrow_" #T "_r16", gc_fewrow_##T##_r16},
  static const std::map<std::string, Entry> entries = {GC_HOST_ENTRIES(f32) GC_HOST_ENTRIES(bf16)
                                                           GC_HOST_ENTRIES(f16)};
#undef GC_HOST_ENTRIES
  auto found = entries.find(entry);
  if (found == entries.end())
    return false;
  hostcuda::runBlocks(cuda::kFewRowThreads, blocks, 1, [&] { found->second(args); });
  return true;
}

} // namespace gc::test
