//===- cuda_runtime.h - The host shim's stand-in for CUDA's runtime header -===//
//
// gc's kernels include <cuda_runtime.h> for CUDA's keywords (nvcc includes
// it anyway); on the host the shim's cuda_bf16.h defines the ones they use.
//
//===----------------------------------------------------------------------===//
#ifndef GC_TEST_UNIT_RUNTIME_CUDAHOSTSHIM_CUDA_RUNTIME_H
#define GC_TEST_UNIT_RUNTIME_CUDAHOSTSHIM_CUDA_RUNTIME_H

#include "cuda_bf16.h"

#endif // GC_TEST_UNIT_RUNTIME_CUDAHOSTSHIM_CUDA_RUNTIME_H
