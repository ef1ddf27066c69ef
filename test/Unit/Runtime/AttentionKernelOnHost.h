//===- AttentionKernelOnHost.h - The decode attention kernel on the host -*- C++ -*-===//
#ifndef GC_TEST_UNIT_RUNTIME_ATTENTIONKERNELONHOST_H
#define GC_TEST_UNIT_RUNTIME_ATTENTIONKERNELONHOST_H

#include "Cuda/AttentionKernelArgs.h"

#include <string>

namespace gc::test {

/// Runs the decode attention entry or the combine entry `entry` (the names
/// AttentionKernel.cu gives them) over a grid of gridX x gridY blocks of
/// kAttentionThreads host threads with `args` (host addresses); false for
/// any other entry (the tile kernel's tensor-core code is GPU-only).
bool runAttentionKernelOnHost(const std::string &entry, unsigned gridX, unsigned gridY,
                              const cuda::AttentionKernelArgs &args);

} // namespace gc::test

#endif // GC_TEST_UNIT_RUNTIME_ATTENTIONKERNELONHOST_H
