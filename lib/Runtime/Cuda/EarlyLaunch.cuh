//===- EarlyLaunch.cuh - Kernels that start before the one ahead ends ----===//
//
// On sm_90 and later libgcrt launches its kernels early (programmatic
// dependent launch, Kernel in CudaDriver.h): a kernel's blocks may be
// scheduled while the kernel ahead of it on the stream still runs. Every
// kernel of libgcrt's therefore calls awaitPredecessor() before it touches
// memory that another kernel reads or writes, and releaseSuccessor() as it
// starts, so that the next kernel's blocks may be scheduled as soon as all
// of this one's have been. The host launches early only code built for
// sm_90 or later (Driver::earlyCapable), where these are instructions; on
// older GPUs (and in the unit tests' host shim) they are nothing.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_CUDA_EARLYLAUNCH_CUH
#define GC_LIB_RUNTIME_CUDA_EARLYLAUNCH_CUH

#include <cuda_runtime.h>

namespace gc::cuda {

/// Lets the kernel after this one start once every block of this one has
/// called it or ended. It orders nothing: the successor still waits for
/// this kernel's end (awaitPredecessor) before it reads what this writes.
__device__ __forceinline__ void releaseSuccessor() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// Waits until the kernels this one depends on have ended and their writes
/// are visible. A kernel launched the ordinary way returns at once.
__device__ __forceinline__ void awaitPredecessor() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// Asks for the 128-byte line of global memory at `p` to be fetched into
/// the L2 cache, without waiting for it.
__device__ __forceinline__ void prefetchL2(const void *p) {
#ifdef __CUDA_ARCH__
  asm volatile("prefetch.global.L2 [%0];" ::"l"(__cvta_generic_to_global(p)));
#endif
}

} // namespace gc::cuda

#endif // GC_LIB_RUNTIME_CUDA_EARLYLAUNCH_CUH
