//===- Interpreter.h - Running a graph with reference kernels ---*- C++ -*-===//
#ifndef GC_INTERP_INTERPRETER_H
#define GC_INTERP_INTERPRETER_H

#include "gc/IR/Module.h"
#include "gc/Tensor/Tensor.h"
#include "gc/Tensor/Weights.h"
#include "gc/Support/Error.h"
#include "gc/Support/RandomState.h"

#include <map>
#include <span>
#include <string>
#include <vector>

namespace gc {

/// Checks a user input against its type in a signature (dtype, rank, and
/// every size a symbol names: equal to the symbol's value bound so far, in
/// its range) and binds those symbols. Errors name the input.
Error bindInputSizes(const Module &m, const std::string &name, const TensorType &want,
                     const Tensor &got, std::map<std::string, int64_t> &bindings);

/// A result size that is a symbol no input bound is an unbacked symbol
/// (u0, ...: the count of nonzero, unique, ...): the first result to carry
/// it binds it, within the range torch.export recorded for it. Errors start
/// with `where`.
Error bindUnbackedSizes(const Module &m, const std::string &where, const TensorType &want,
                        const Tensor &got, std::map<std::string, int64_t> &bindings);

struct RunResult {
  /// One tensor per graph output, in the graph's output order.
  std::vector<Tensor> outputs;
  /// Buffers the graph changed, by name: those an op wrote in place (aten
  /// graphs) and those a buffer_mutation output replaces (functional graphs).
  std::map<std::string, Tensor> mutatedBuffers;
  /// Random numbers the graph's aten-level random ops drew from the run's
  /// stream (OpCall::random); gc.rand nodes' draws are randomDraws(graph).
  uint64_t streamDraws = 0;
};

/// The tensor a generator input of kind `k` (isGeneratorInput) is bound to:
/// the seed or the offset of `rng` as an i64[] holding the same 64 bits.
Tensor generatorInput(InputKind k, const RandomState &rng);

/// Runs `graph` on `userInputs` (one per user-input of the signature, in
/// order) with parameters, buffers and constants from `weights`, and its
/// generator inputs bound to `rng`. Checks each
/// user input's dtype and shape against the signature, binding symbolic
/// sizes, and each kernel's result against the graph's metadata. A new
/// result is laid out with the strides the graph records, so that later
/// views see torch's layout. Errors name the input or the node.
Expected<RunResult> runGraph(const Module &m, const Graph &graph,
                             const std::vector<Tensor> &userInputs,
                             const std::map<std::string, Tensor> &weights,
                             const RandomState &rng = {});

} // namespace gc

#endif // GC_INTERP_INTERPRETER_H
