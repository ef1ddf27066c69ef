//===- AttentionStep.h - Fused attention on the CPU -------------*- C++ -*-===//
//
// scaled_dot_product_attention as one step (plan::AttentionCall): for each
// batch entry and block of query rows, the scores of the block are computed
// into a per-thread buffer that stays in cache, scaled, masked, turned into
// probabilities and multiplied by the values there; the full score matrix
// is never written to memory. Blocks are spread over the thread pool.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_CPU_ATTENTIONSTEP_H
#define GC_LIB_RUNTIME_CPU_ATTENTIONSTEP_H

#include "DnnlExtern.h"

#include "gc/Runtime/ThreadPool.h"

namespace gc {

/// The attention step `step` describes (its `attention` is set) on these
/// views, or an error naming what it refuses (dtypes, shapes that do not
/// fit). The step runs on `pool`, which must outlive it.
Expected<std::unique_ptr<CpuCall>> prepareAttention(const plan::OpStep &step,
                                                     const std::vector<StridedLayout> &inputs,
                                                     const std::vector<StridedLayout> &outputs,
                                                     const ThreadPool &pool);

} // namespace gc

#endif // GC_LIB_RUNTIME_CPU_ATTENTIONSTEP_H
