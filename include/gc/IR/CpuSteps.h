//===- CpuSteps.h - Ops the CPU backend runs whole ---------------*- C++ -*-===//
//
// A few ops outside the core set have a step of their own in the CPU
// runtime that beats their decomposition (fused attention keeps its score
// matrix in cache). A pipeline compiling for the CPU keeps such calls whole
// (the decompose pass's CPU variant), the verifier accepts them at level
// core, and every other pipeline (GPU, training, gc-opt alone) decomposes
// them as before. The table in CpuSteps.cpp states which ops and calls.
//
//===----------------------------------------------------------------------===//
#ifndef GC_IR_CPUSTEPS_H
#define GC_IR_CPUSTEPS_H

#include "gc/IR/Module.h"

namespace gc {

/// Whether the CPU backend runs this call whole, as one step of its own.
bool cpuRunsWhole(const Node &n);

} // namespace gc

#endif // GC_IR_CPUSTEPS_H
