//===- StepWork.h - The work of a plan step, for the profile's roofline -*- C++ -*-===//
//
// What a step of a loop graph's plan computes and moves, counted from its
// loop IR once at compile time: the plan carries both counts (plan::Step
// flops and bytes) so that `--profile` can set each step's time against
// the machine's peaks without knowing the IR.
//
//===----------------------------------------------------------------------===//
#ifndef GC_PLAN_STEPWORK_H
#define GC_PLAN_STEPWORK_H

#include "gc/IR/LoopIR.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace gc {

/// A count that may depend on symbolic sizes: the sum of its terms, each a
/// constant times a product of sizes.
struct SizeSum {
  struct Term {
    int64_t coefficient = 0;
    std::vector<const SymExpr *> factors;
  };
  std::vector<Term> terms;

  void add(int64_t coefficient, std::vector<const SymExpr *> factors) {
    terms.push_back({coefficient, std::move(factors)});
  }
  /// The value when every factor is a constant.
  std::optional<int64_t> constant() const;
};

/// A step's floating-point operations and the bytes it must move.
///   kernel: per node, its points (reduction loops included) times the
///     floating-point operations of its body, plus one per point for a
///     reduction's combine; bytes: each buffer its nodes load, whole, once,
///     plus each buffer they store to, whole, once.
///   extern (mm, bmm, convolution): 2 * output elements * the reduced length
///     (a matrix product's K; a convolution's Cin/groups * kernel window),
///     plus one operation per output element for each post-op; attention:
///     2 * result rows * S keys * (E + Ev), its two products; fallback
///     steps: no operations counted.
///   op steps' bytes: each view, once per buffer (the first view of it),
///     inputs then outputs; call steps: none (their graphs' steps count).
struct StepWork {
  SizeSum flops, bytes;
};

StepWork stepWork(const LoopGraph &graph, const PlanStep &step);

} // namespace gc

#endif // GC_PLAN_STEPWORK_H
