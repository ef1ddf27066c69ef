//===- AttentionKernelOnHost.cpp - The decode attention kernel on the host -===//
//
// DecodeAttention.cuh and the combine step (AttentionDevice.cuh) compiled
// by the host compiler against CudaHostShim/, each block on
// kAttentionThreads host threads.
//
//===----------------------------------------------------------------------===//
#include "AttentionKernelOnHost.h"

#include "Cuda/DecodeAttention.cuh"

#include <map>

namespace gc::test {

bool runAttentionKernelOnHost(const std::string &entry, unsigned gridX, unsigned gridY,
                              const cuda::AttentionKernelArgs &args) {
  using cuda::AttentionKernelArgs;
  using Entry = void (*)(const AttentionKernelArgs &);
#define GC_HOST_ENTRIES(NAME, T)                                                                   \
  {"gc_attention_decode_" NAME "_d64_r4", cuda::decodeAttention<T, 64, 4>},                       \
      {"gc_attention_decode_" NAME "_d64_r16", cuda::decodeAttention<T, 64, cuda::kDecodeRows>},   \
      {"gc_attention_decode_" NAME "_d128_r4", cuda::decodeAttention<T, 128, 4>},                  \
      {"gc_attention_decode_" NAME "_d128_r16", cuda::decodeAttention<T, 128, cuda::kDecodeRows>}, \
      {"gc_attention_combine_" NAME, cuda::combine<T>},
  static const std::map<std::string, Entry> entries = {
      GC_HOST_ENTRIES("f32", float) GC_HOST_ENTRIES("bf16", __nv_bfloat16)
          GC_HOST_ENTRIES("f16", __half)};
#undef GC_HOST_ENTRIES
  auto found = entries.find(entry);
  if (found == entries.end())
    return false;
  hostcuda::runBlocks(cuda::kAttentionThreads, gridX, gridY, [&] { found->second(args); });
  return true;
}

} // namespace gc::test
