//===- ReferenceCall.cpp - Running a core op's reference kernel -----------===//
#include "gc/Interp/ReferenceCall.h"

#include "gc/Interp/Kernel.h"
#include "gc/Interp/PluginKernel.h"

#include <unordered_map>

namespace gc {

ReferenceCall::ReferenceCall(ReferenceCall &&) noexcept = default;
ReferenceCall &ReferenceCall::operator=(ReferenceCall &&) noexcept = default;
ReferenceCall::~ReferenceCall() = default;

Expected<ReferenceCall> ReferenceCall::create(const LoopNode &node) {
  ReferenceCall call;
  call.name_ = "node '" + node.name + "' (" + opString(node.op) + ")";
  call.kernel_ = findReferenceKernel(node.op);
  if (!call.kernel_)
    return makeError() << call.name_ << ": no reference kernel for " << node.op;
  call.graph_ = std::make_unique<Graph>(node.name);
  std::vector<Value *> inputs;
  for (size_t i = 0; i < node.inputs.size(); ++i)
    inputs.push_back(call.graph_->addInput("in" + std::to_string(i),
                                           Type::makeTensor(node.inputs[i].type), InputSpec{}));
  std::vector<NamedArg> args;
  for (const LoopArg &a : node.args) {
    NamedArg arg{a.name, a.keywordOnly, a.value};
    bool tensorKind = a.value.kind == ArgKind::Tensor || a.value.kind == ArgKind::Tensors ||
                      a.value.kind == ArgKind::OptionalTensors;
    if (tensorKind) {
      arg.value.ints.clear();
      for (int64_t index : a.value.ints) {
        if (index >= static_cast<int64_t>(inputs.size()))
          return makeError() << call.name_ << ": argument '" << a.name << "' names input "
                             << index << " of " << inputs.size();
        arg.value.values.push_back(index < 0 ? nullptr : inputs[index]);
      }
    }
    args.push_back(std::move(arg));
  }
  std::vector<std::pair<std::string, Type>> results;
  for (size_t i = 0; i < node.outputs.size(); ++i)
    results.emplace_back("out" + std::to_string(i), Type::makeTensor(node.outputs[i].type));
  ResultForm form = results.size() == 1 ? ResultForm::Single : ResultForm::Tuple;
  call.node_ = call.graph_->addNode(node.op, std::move(args), std::move(results), form);
  return call;
}

Expected<std::vector<Tensor>> ReferenceCall::compute(const std::vector<Tensor> &inputs) const {
  if (inputs.size() != graph_->inputs().size())
    return makeError() << name_ << ": expected " << graph_->inputs().size() << " inputs, got "
                       << inputs.size();
  std::unordered_map<const Value *, Tensor> tensors;
  for (size_t i = 0; i < inputs.size(); ++i)
    tensors[graph_->inputs()[i]] = inputs[i];
  std::unordered_map<const Value *, int64_t> symInts;
  try {
    OpCall call(*node_, tensors, symInts);
    std::vector<Tensor> results = kernel_->fn(call);
    if (results.size() != node_->results().size())
      return makeError() << name_ << ": the kernel gave " << results.size()
                         << " results, the node has " << node_->results().size();
    return results;
  } catch (const std::exception &e) {
    return makeError() << name_ << ": " << e.what();
  }
}

Error ReferenceCall::run(const std::vector<Tensor> &inputs, std::vector<Tensor> &outputs) const {
  if (outputs.size() != node_->results().size())
    return makeError() << name_ << ": expected " << node_->results().size() << " outputs, got "
                       << outputs.size();
  Expected<std::vector<Tensor>> results = compute(inputs);
  if (!results)
    return results.error();
  for (size_t i = 0; i < results->size(); ++i) {
    if ((*results)[i].sizes() != outputs[i].sizes())
      return makeError() << name_ << ": result " << i << " has shape "
                         << shapeString((*results)[i].sizes()) << ", its buffer view "
                         << shapeString(outputs[i].sizes());
    outputs[i].copyFrom((*results)[i]);
  }
  return Error::success();
}

} // namespace gc
