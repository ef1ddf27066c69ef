//===- ReduceMismatch.h - gc-reduce's --expect-mismatch ---------*- C++ -*-===//
//
// The oracle for a wrong answer: the stage command's result (a graph file of
// any level or a package) runs on the same deterministic random inputs as
// the candidate does on the reference interpreter, and the candidate is
// interesting when an output differs beyond the tolerance. It lives with
// the runners (ModelRunner.h), which it needs.
//
//===----------------------------------------------------------------------===//
#ifndef GC_TOOLS_REDUCEMISMATCH_H
#define GC_TOOLS_REDUCEMISMATCH_H

#include "gc/Reduce/Oracle.h"
#include "gc/Tensor/Tensor.h"

namespace gc {

/// Inputs for graph `g`'s user inputs, the same for the same types: floats
/// uniform in [-2, 2), integers in [0, 4), booleans half true, from a fixed
/// seed. A symbolic size is taken as 4.
std::vector<Tensor> deterministicInputs(const Graph &g);

class MismatchOracle : public Oracle {
public:
  /// An output passes where |actual - expected| <= atol * max(1, max
  /// |expected|) + rtol * |expected|: the absolute tolerance grows with the
  /// output's magnitude.
  MismatchOracle(StageCommand command, double rtol, double atol)
      : command_(std::move(command)), rtol_(rtol), atol_(atol) {}
  Expected<Verdict> judge(const std::string &path, const Module &m) override;
  std::string litLines() const override;

private:
  StageCommand command_;
  double rtol_, atol_;
};

} // namespace gc

#endif // GC_TOOLS_REDUCEMISMATCH_H
