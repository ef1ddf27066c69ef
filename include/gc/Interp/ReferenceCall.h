//===- ReferenceCall.h - Running a core op's reference kernel ---*- C++ -*-===//
//
// Extern and Fallback nodes name a core op and its arguments (LoopArg) over
// strided views of buffers (BufferView). Until a library or generated code
// takes over, the loop interpreter and the runtime run them with the
// reference kernel of the op. A ReferenceCall rebuilds the op call once per
// node (a one-node Graph whose inputs stand for the node's input views) and
// then runs it on any tensors viewing those buffers.
//
//===----------------------------------------------------------------------===//
#ifndef GC_INTERP_REFERENCECALL_H
#define GC_INTERP_REFERENCECALL_H

#include "gc/IR/LoopIR.h"
#include "gc/Tensor/Tensor.h"
#include "gc/Support/Error.h"

#include <memory>
#include <vector>

namespace gc {

class Graph;
class Node;
struct KernelEntry;

class ReferenceCall {
public:
  /// Prepares the call of an Extern or Fallback node. Fails when the op has
  /// no reference kernel or an argument cannot be rebuilt.
  static Expected<ReferenceCall> create(const LoopNode &node);

  ReferenceCall(ReferenceCall &&) noexcept;
  ReferenceCall &operator=(ReferenceCall &&) noexcept;
  ~ReferenceCall();

  /// Runs the kernel on `inputs` (one tensor per LoopNode::inputs entry, with
  /// that view's sizes and strides) and copies each result into the
  /// matching tensor of `outputs` (one per LoopNode::outputs entry, viewing
  /// the output buffers). Errors name the node.
  Error run(const std::vector<Tensor> &inputs, std::vector<Tensor> &outputs) const;
  /// Runs the kernel on `inputs` and returns its results as it made them:
  /// for a node whose result sizes depend on the data (nonzero, unique),
  /// whoever runs it learns their sizes before placing them. Errors name
  /// the node.
  Expected<std::vector<Tensor>> compute(const std::vector<Tensor> &inputs) const;

private:
  ReferenceCall() = default;
  std::string name_;
  std::unique_ptr<Graph> graph_;
  const Node *node_ = nullptr;
  const KernelEntry *kernel_ = nullptr;
};

} // namespace gc

#endif // GC_INTERP_REFERENCECALL_H
