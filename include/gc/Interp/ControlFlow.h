//===- ControlFlow.h - Running cond and while_loop --------------*- C++ -*-===//
//
// What cond and while_loop do, once, for every evaluator that runs graphs
// (the reference interpreter on graphs, the loop interpreter on loop
// graphs): each supplies how to read a tensor argument and how to run a
// graph that an argument names.
//
//===----------------------------------------------------------------------===//
#ifndef GC_INTERP_CONTROLFLOW_H
#define GC_INTERP_CONTROLFLOW_H

#include "gc/IR/OpId.h"
#include "gc/Support/Error.h"
#include "gc/Tensor/Tensor.h"

#include <functional>
#include <string_view>
#include <vector>

namespace gc {

/// The tensors of an argument, by schema name: one for a Tensor, each
/// entry for a Tensor[].
using ArgTensors = std::function<std::vector<Tensor>(std::string_view arg)>;
/// Runs the graph that the argument `arg` names on `inputs`; its outputs.
using GraphCaller =
    std::function<Expected<std::vector<Tensor>>(std::string_view arg, const std::vector<Tensor> &inputs)>;

/// Runs `op` (callsGraphs): cond runs true_fn or false_fn on its operands
/// as its one-element pred says; while_loop runs body_fn on the carried
/// and additional inputs, feeding its outputs back as the carried values,
/// as long as cond_fn returns true, and returns the carried values.
Expected<std::vector<Tensor>> runControlFlow(OpId op, const ArgTensors &args,
                                             const GraphCaller &call);

} // namespace gc

#endif // GC_INTERP_CONTROLFLOW_H
