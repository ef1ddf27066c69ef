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
///
/// At the Loops and Kernels levels, for loop graphs: buffer, node, input and
/// body operand indices are in range, operands come before their use, compute
/// operations have their op's arity, loads and index operations have an index
/// expression that uses only size symbols and the node's loop variables
/// (i_k for its ranges, r_k for its reduction ranges, t_k for a load's
/// indirect values), pointwise and reduction nodes write an intermediate or
/// output buffer, names are unique, and at the Kernels level the plan's
/// kernels and steps name existing nodes and kernels, with every pointwise
/// and reduction node in exactly one kernel (a Loops module has no plan).
Error verifyModule(const Module &m);

} // namespace gc

#endif // GC_IR_VERIFIER_H
