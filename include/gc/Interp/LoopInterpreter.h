//===- LoopInterpreter.h - Running loop IR directly -------------*- C++ -*-===//
//
// A plain evaluator of loop graphs: every node's loops run in order, every
// body operation at its dtype, so that gc-lower's output can be checked on
// its own, before any scheduling or code generation.
//
//===----------------------------------------------------------------------===//
#ifndef GC_INTERP_LOOPINTERPRETER_H
#define GC_INTERP_LOOPINTERPRETER_H

#include "gc/IR/LoopIR.h"
#include "gc/Tensor/Tensor.h"
#include "gc/Support/Error.h"
#include "gc/Support/RandomState.h"

#include <map>
#include <string>
#include <vector>

namespace gc {

/// Runs `graph` on `userInputs` (one per user input, in order) with weights
/// by name; returns one tensor per graph output, with the output's type.
/// Binds size symbols from the user inputs and checks dtypes and shapes;
/// generator inputs are bound to `rng`.
Expected<std::vector<Tensor>> runLoopGraph(const Module &module, const LoopGraph &graph,
                                           const std::vector<Tensor> &userInputs,
                                           const std::map<std::string, Tensor> &weights,
                                           const RandomState &rng = {});

} // namespace gc

#endif // GC_INTERP_LOOPINTERPRETER_H
