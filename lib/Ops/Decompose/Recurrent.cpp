//===- Recurrent.cpp - Recurrent layers as matrix products over time ------===//
//
// lstm, gru, rnn_tanh and rnn_relu unroll over the sequence: each layer and
// direction first projects the whole sequence through w_ih in one matrix
// product (as cuDNN does), then runs one step per time index: a product of
// the running h with w_hh and the cell's pointwise gates. The sequence
// length must therefore be static. Dropout between layers in training mode
// is refused (it would need the random stream torch's kernel uses).
//
//===----------------------------------------------------------------------===//
#include "gc/Ops/Emit.h"

#include "gc/Ops/Recurrent.h"

#include <string>

namespace gc {

namespace {

using namespace decompose;

/// The weights of one layer and direction.
struct CellWeights {
  Value *wih = nullptr, *whh = nullptr, *bih = nullptr, *bhh = nullptr, *whr = nullptr;
};

CellWeights cellWeights(const RecurrentLayout &l, const std::vector<Value *> &params,
                        int64_t layer, int64_t direction) {
  int64_t i = l.first(layer, direction);
  CellWeights w{params[i], params[i + 1]};
  if (l.hasBiases) {
    w.bih = params[i + 2];
    w.bhh = params[i + 3];
  }
  if (l.hasProjection)
    w.whr = params[i + (l.hasBiases ? 4 : 2)];
  return w;
}

/// Block `k` of `gates` [batch, gates * hidden].
Value *gate(Emit &e, Value *gates, int64_t k, int64_t hidden) {
  return e.slice(gates, 1, k * hidden, (k + 1) * hidden);
}

/// The running state of one direction of one layer.
struct State {
  Value *h = nullptr;
  Value *c = nullptr; ///< LSTM only
};

/// One time step: `gi` is the step's input projection (bias included),
/// [batch, gates * hidden].
State step(Emit &e, const RecurrentLayout &l, const CellWeights &w, Value *gi, State s) {
  Value *gh = e.mm(s.h, e.transpose(w.whh, 0, 1));
  if (w.bhh)
    gh = e.add(gh, w.bhh);
  int64_t H = l.hidden;
  switch (l.cell) {
  case RecurrentCell::Lstm: {
    Value *g = e.add(gi, gh);
    Value *in = e.unary(ops::aten_sigmoid_default, gate(e, g, 0, H));
    Value *forget = e.unary(ops::aten_sigmoid_default, gate(e, g, 1, H));
    Value *cand = e.unary(ops::aten_tanh_default, gate(e, g, 2, H));
    Value *out = e.unary(ops::aten_sigmoid_default, gate(e, g, 3, H));
    Value *c = e.add(e.mul(forget, s.c), e.mul(in, cand));
    Value *h = e.mul(out, e.unary(ops::aten_tanh_default, c));
    if (w.whr)
      h = e.mm(h, e.transpose(w.whr, 0, 1));
    return {h, c};
  }
  case RecurrentCell::Gru: {
    // r and z gate h's own product; n sees r * (h w_hn + b_hn).
    Value *r = e.unary(ops::aten_sigmoid_default, e.add(gate(e, gi, 0, H), gate(e, gh, 0, H)));
    Value *z = e.unary(ops::aten_sigmoid_default, e.add(gate(e, gi, 1, H), gate(e, gh, 1, H)));
    Value *n = e.unary(ops::aten_tanh_default, e.add(gate(e, gi, 2, H), e.mul(r, gate(e, gh, 2, H))));
    // (1 - z) * n + z * h, written as n + z * (h - n).
    return {e.add(n, e.mul(z, e.sub(s.h, n)))};
  }
  case RecurrentCell::RnnTanh:
    return {e.unary(ops::aten_tanh_default, e.add(gi, gh))};
  case RecurrentCell::RnnRelu:
    return {e.op(ops::aten_relu_default, {{"self", e.add(gi, gh)}})};
  }
  return s;
}

/// xs stacked along a new leading dim.
Value *stack(Emit &e, const std::vector<Value *> &xs) {
  std::vector<Value *> rows;
  for (Value *x : xs)
    rows.push_back(e.unsqueeze(x, 0));
  return rows.size() == 1 ? rows[0] : e.cat(rows, 0);
}

Results decomposeRecurrent(RewriteContext &ctx) {
  Emit e(ctx);
  RecurrentCell cell = *recurrentCell(ctx.node().op());
  std::vector<Value *> params = ctx.values("params");
  std::vector<const TensorType *> types;
  for (Value *p : params)
    types.push_back(p ? &typeOf(p) : nullptr);
  if (ctx.boolean("train", false) && ctx.real("dropout", 0) > 0 && ctx.integer("num_layers") > 1)
    rewriteFail("dropout between recurrent layers in training mode is not supported");
  RecurrentLayout l = recurrentLayout(cell, types, ctx.boolean("has_biases", true),
                                      ctx.integer("num_layers"), ctx.boolean("bidirectional", false));

  Value *x = ctx.value("input");
  bool batched = rankOf(x) == 3;
  bool batchFirst = batched && ctx.boolean("batch_first", false);
  // Work as [sequence, batch, features] throughout.
  if (!batched)
    x = e.unsqueeze(x, 1);
  else if (batchFirst)
    x = e.transpose(x, 0, 1);
  int64_t steps = staticSize(sizesOf(x)[0], "the sequence");

  std::vector<Value *> hx = cell == RecurrentCell::Lstm ? ctx.values("hx")
                                                        : std::vector<Value *>{ctx.value("hx")};
  if (hx.empty() || hx.size() > 2 || (cell == RecurrentCell::Lstm && hx.size() != 2))
    rewriteFail("argument 'hx' must hold h0 (and c0 for an LSTM)");
  for (Value *&s : hx)
    if (!batched)
      s = e.unsqueeze(s, 1);

  std::vector<Value *> finalH, finalC;
  Value *layerInput = x;
  for (int64_t layer = 0; layer < l.layers; ++layer) {
    std::vector<Value *> directionOutputs;
    for (int64_t dir = 0; dir < l.directions; ++dir) {
      CellWeights w = cellWeights(l, params, layer, dir);
      Value *proj = e.matmul(layerInput, e.transpose(w.wih, 0, 1));
      if (w.bih)
        proj = e.add(proj, w.bih);
      int64_t index = layer * l.directions + dir;
      State s{e.select(hx[0], 0, index), hx.size() > 1 ? e.select(hx[1], 0, index) : nullptr};
      std::vector<Value *> hs(steps);
      for (int64_t k = 0; k < steps; ++k) {
        int64_t t = dir == 0 ? k : steps - 1 - k;
        s = step(e, l, w, e.select(proj, 0, t), s);
        hs[t] = s.h;
      }
      directionOutputs.push_back(stack(e, hs));
      finalH.push_back(s.h);
      if (s.c)
        finalC.push_back(s.c);
    }
    layerInput = directionOutputs.size() == 1 ? directionOutputs[0] : e.cat(directionOutputs, 2);
  }

  Value *out = layerInput;
  if (!batched)
    out = e.squeeze(out, {1});
  else if (batchFirst)
    out = e.transpose(out, 0, 1);
  auto states = [&](const std::vector<Value *> &finals) {
    Value *s = stack(e, finals);
    return batched ? s : e.squeeze(s, {1});
  };
  std::vector<Value *> results{out, states(finalH)};
  if (cell == RecurrentCell::Lstm)
    results.push_back(states(finalC));
  return finish(ctx, results);
}

const DecompositionEntry kEntries[] = {
    {ops::aten_gru_input, decomposeRecurrent},
    {ops::aten_lstm_input, decomposeRecurrent},
    {ops::aten_rnn_relu_input, decomposeRecurrent},
    {ops::aten_rnn_tanh_input, decomposeRecurrent},
};

} // namespace

void registerRecurrentDecompositions(DecompositionRegistry &r) { r.add(kEntries); }

} // namespace gc
