//===- GraphCall.h - Call steps: cond and while_loop at run time -*- C++ -*-===//
//
// A call step runs other graphs of the plan on views of its own buffers
// (formats/plan.fbs, CallStep): cond picks one of two graphs by a boolean,
// while_loop repeats a body graph while a condition graph says so. Each
// graph it names gets an executor of its own, made with the step's.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_GRAPHCALL_H
#define GC_LIB_RUNTIME_GRAPHCALL_H

#include "gc/Runtime/Runtime.h"
#include "gc/Runtime/StridedLayout.h"

#include <memory>
#include <vector>

namespace gc {

class GraphCall {
public:
  /// Makes an executor for each graph that the step calls, with the
  /// kernels options.graphKernels gives for it.
  static Expected<std::unique_ptr<GraphCall>> create(std::shared_ptr<const RuntimePlan> plan,
                                                     const plan::OpStep &step,
                                                     const RuntimeOptions &options);
  /// Runs the step: `buffers` are the calling graph's buffer bases, and
  /// `inputs`/`outputs` the evaluated layouts of the step's views.
  Error run(char *const *buffers, const std::vector<StridedLayout> &inputs,
            const std::vector<StridedLayout> &outputs);

private:
  GraphCall(const plan::OpStep &step) : step_(step) {}
  Error runCond(const std::vector<TensorRef> &in, const std::vector<TensorRef> &out);
  Error runWhile(const std::vector<TensorRef> &in, const std::vector<TensorRef> &out);

  const plan::OpStep &step_;
  std::vector<std::unique_ptr<Executor>> graphs_;
};

} // namespace gc

#endif // GC_LIB_RUNTIME_GRAPHCALL_H
