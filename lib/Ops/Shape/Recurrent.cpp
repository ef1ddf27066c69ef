//===- Recurrent.cpp - Shape functions of the recurrent layers ------------===//
//
// lstm, gru, rnn_tanh and rnn_relu over a whole sequence: the output holds
// every step's h (both directions side by side), then come the final h (and
// c) of every layer and direction.
//
//===----------------------------------------------------------------------===//
#include "ShapeUtil.h"

#include "gc/Ops/Recurrent.h"

namespace gc {

namespace {

using namespace shape;

std::vector<Type> recurrent(const ShapeContext &ctx) {
  RecurrentCell cell = *recurrentCell(ctx.op());
  RecurrentLayout l =
      recurrentLayout(cell, ctx.tensors("params"), ctx.boolean("has_biases", true),
                      ctx.integer("num_layers"), ctx.boolean("bidirectional", false));
  const TensorType &input = ctx.tensor("input");
  if (input.rank() != 2 && input.rank() != 3)
    shapeFail("the input must be [sequence, batch, features] or unbatched [sequence, features]");
  SymContext &syms = ctx.syms();
  bool batched = input.rank() == 3;
  bool batchFirst = batched && ctx.boolean("batch_first", false);
  Sizes outSizes = input.sizes;
  outSizes.back() = syms.constant(l.directions * l.out);
  auto state = [&](int64_t width) {
    Sizes s{syms.constant(l.layers * l.directions)};
    if (batched)
      s.push_back(input.sizes[batchFirst ? 0 : 1]);
    s.push_back(syms.constant(width));
    return result(contiguousType(syms, input.dtype, s, input.device));
  };
  std::vector<Type> results{result(contiguousType(syms, input.dtype, outSizes, input.device)),
                            state(l.out)};
  if (cell == RecurrentCell::Lstm)
    results.push_back(state(l.hidden));
  return results;
}

const ShapeEntry kEntries[] = {
    {ops::aten_gru_input, recurrent},
    {ops::aten_lstm_input, recurrent},
    {ops::aten_rnn_relu_input, recurrent},
    {ops::aten_rnn_tanh_input, recurrent},
};

} // namespace

void registerRecurrentShapes(ShapeRegistry &r) { r.add(kEntries); }

} // namespace gc
