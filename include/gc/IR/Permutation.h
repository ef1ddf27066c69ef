//===- Permutation.h - The dims a permuting view reorders -------*- C++ -*-===//
#ifndef GC_IR_PERMUTATION_H
#define GC_IR_PERMUTATION_H

#include "gc/IR/Module.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace gc {

/// The permutation that a permute, transpose or t node applies (result
/// dimension i is input dimension p[i]), or nullopt for another op or when
/// an argument is missing or symbolic.
std::optional<std::vector<int64_t>> permutationOf(const Node &n);

} // namespace gc

#endif // GC_IR_PERMUTATION_H
