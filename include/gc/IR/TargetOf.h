//===- TargetOf.h - What a module is compiled for ---------------*- C++ -*-===//
#ifndef GC_IR_TARGETOF_H
#define GC_IR_TARGETOF_H

#include "gc/IR/Module.h"

namespace gc {

/// The target `m` records (Module::target), or for a module without one (a
/// hand-written text, an older file) the defaults, with the device a CUDA
/// GPU when a graph input lives on one. Every phase reads the target
/// through this.
Target targetOf(const Module &m);

} // namespace gc

#endif // GC_IR_TARGETOF_H
