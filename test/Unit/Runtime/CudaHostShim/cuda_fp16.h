//===- cuda_fp16.h - Just enough CUDA to run gc's kernels on the host -----===//
// The half-precision types are in cuda_bf16.h, which includes both.
#include "cuda_bf16.h"
