//===- Verifier.h - Structural checks ---------------------------*- C++ -*-===//
#ifndef GC_IR_VERIFIER_H
#define GC_IR_VERIFIER_H

#include "gc/IR/Module.h"

namespace gc {

/// Checks that every value is defined before use and belongs to the graph,
/// that argument kinds hold what they promise, that names are unique, that
/// input and output specs line up with the graph, that weights name valid
/// sources, and that the ops are allowed at the module's level. The error
/// names the graph and node.
Error verifyModule(const Module &m);

} // namespace gc

#endif // GC_IR_VERIFIER_H
