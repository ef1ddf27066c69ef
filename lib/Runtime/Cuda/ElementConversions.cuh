//===- ElementConversions.cuh - Kernel elements to float32 and back -*- CUDA -*-===//
//
// gc's own kernels (AttentionKernel.cu, FewRowKernel.cu) load float32,
// bfloat16 or float16 elements, compute in float32 and round once to the
// output's type, to nearest even. Host tests compile this against
// test/Unit/Runtime/CudaHostShim/ as well.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_CUDA_ELEMENTCONVERSIONS_CUH
#define GC_LIB_RUNTIME_CUDA_ELEMENTCONVERSIONS_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace gc::cuda {
namespace {

__device__ float widen(float x) { return x; }
__device__ float widen(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ float widen(__half x) { return __half2float(x); }

template <class T> __device__ T narrow(float x);
template <> __device__ float narrow<float>(float x) { return x; }
template <> __device__ __nv_bfloat16 narrow<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
template <> __device__ __half narrow<__half>(float x) { return __float2half_rn(x); }

} // namespace
} // namespace gc::cuda

#endif // GC_LIB_RUNTIME_CUDA_ELEMENTCONVERSIONS_CUH
