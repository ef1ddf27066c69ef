//===- Weights.h - A module's weights as tensors ----------------*- C++ -*-===//
#ifndef GC_TENSOR_WEIGHTS_H
#define GC_TENSOR_WEIGHTS_H

#include "gc/IR/Module.h"
#include "gc/Support/Error.h"
#include "gc/Tensor/Tensor.h"

#include <map>
#include <span>
#include <string>

namespace gc {

/// Loads the module's weights from their sources (resolved against the
/// module's source base directory), as owned tensors. Errors name the weight
/// and the missing or short source. With `names`, loads only those weights.
/// A pending blob (Module::pendingBlob) is read from memory. Weights of a
/// Program source have no bytes anywhere and are left out: the runner
/// computes them with the constant program.
Expected<std::map<std::string, Tensor>> loadWeights(const Module &m,
                                                    std::span<const std::string> names = {});

} // namespace gc

#endif // GC_TENSOR_WEIGHTS_H
