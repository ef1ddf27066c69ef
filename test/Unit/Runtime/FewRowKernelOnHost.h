//===- FewRowKernelOnHost.h - The few-row kernel run on the host -*- C++ -*-===//
#ifndef GC_TEST_UNIT_RUNTIME_FEWROWKERNELONHOST_H
#define GC_TEST_UNIT_RUNTIME_FEWROWKERNELONHOST_H

#include "Cuda/FewRowKernelArgs.h"

#include <string>

namespace gc::test {

/// Runs the few-row kernel `entry` (gc_fewrow_<type>_r<rows>) over
/// `blocks` blocks of kFewRowThreads host threads with `args` (a group of
/// one or more products, host addresses); false if there is no such entry.
bool runFewRowKernelOnHost(const std::string &entry, unsigned blocks,
                           const cuda::FewRowGroupArgs &args);

} // namespace gc::test

#endif // GC_TEST_UNIT_RUNTIME_FEWROWKERNELONHOST_H
