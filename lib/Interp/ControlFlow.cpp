//===- ControlFlow.cpp - Running cond and while_loop ----------------------===//
#include "gc/Interp/ControlFlow.h"

namespace gc {

namespace {

bool truth(const Tensor &t) { return t.toInts().at(0) != 0; }

} // namespace

Expected<std::vector<Tensor>> runControlFlow(OpId op, const ArgTensors &args,
                                             const GraphCaller &call) {
  if (op == ops::higher_order_cond)
    return call(truth(args("pred").at(0)) ? "true_fn" : "false_fn", args("operands"));
  if (op != ops::higher_order_while_loop)
    return makeError() << op << " does not call graphs";
  std::vector<Tensor> carried = args("carried_inputs");
  std::vector<Tensor> additional = args("additional_inputs");
  while (true) {
    std::vector<Tensor> inputs = carried;
    inputs.insert(inputs.end(), additional.begin(), additional.end());
    Expected<std::vector<Tensor>> go = call("cond_fn", inputs);
    if (!go)
      return go.error();
    if (!truth(go->at(0)))
      return carried;
    Expected<std::vector<Tensor>> next = call("body_fn", inputs);
    if (!next)
      return next.error();
    carried = std::move(*next);
  }
}

} // namespace gc
