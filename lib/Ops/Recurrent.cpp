//===- Recurrent.cpp - The weight layout of torch's recurrent layers ------===//
#include "gc/Ops/Recurrent.h"

#include "gc/IR/ArgReader.h"

#include <string>

namespace gc {

std::optional<RecurrentCell> recurrentCell(OpId op) {
  switch (op) {
  case ops::aten_lstm_input:
    return RecurrentCell::Lstm;
  case ops::aten_gru_input:
    return RecurrentCell::Gru;
  case ops::aten_rnn_tanh_input:
    return RecurrentCell::RnnTanh;
  case ops::aten_rnn_relu_input:
    return RecurrentCell::RnnRelu;
  default:
    return std::nullopt;
  }
}

int64_t recurrentGates(RecurrentCell cell) {
  switch (cell) {
  case RecurrentCell::Lstm:
    return 4;
  case RecurrentCell::Gru:
    return 3;
  case RecurrentCell::RnnTanh:
  case RecurrentCell::RnnRelu:
    return 1;
  }
  return 1;
}

namespace {

[[noreturn]] void layoutFail(const std::string &what) {
  throw ArgumentError("argument 'params': " + what);
}

int64_t staticDim(const TensorType &t, size_t d, const char *what) {
  if (d >= t.sizes.size() || !t.sizes[d]->isConst())
    layoutFail(std::string(what) + " needs static sizes");
  return t.sizes[d]->constant();
}

} // namespace

RecurrentLayout recurrentLayout(RecurrentCell cell, const std::vector<const TensorType *> &params,
                                bool hasBiases, int64_t layers, bool bidirectional) {
  RecurrentLayout l;
  l.cell = cell;
  l.layers = layers;
  l.directions = bidirectional ? 2 : 1;
  l.hasBiases = hasBiases;
  if (layers < 1)
    throw ArgumentError("argument 'num_layers': " + std::to_string(layers) + " is not positive");
  int64_t cells = l.layers * l.directions;
  int64_t plain = 2 + (hasBiases ? 2 : 0);
  if (params.size() == static_cast<size_t>(cells * (plain + 1)) && cell == RecurrentCell::Lstm)
    l.hasProjection = true;
  else if (params.size() != static_cast<size_t>(cells * plain))
    layoutFail(std::to_string(params.size()) + " weights for " + std::to_string(l.layers) +
               " layers and " + std::to_string(l.directions) + " directions, which need " +
               std::to_string(cells * plain));
  for (const TensorType *p : params)
    if (!p)
      layoutFail("a weight is None");
  const TensorType &wih = *params[0], &whh = *params[1];
  if (wih.rank() != 2 || whh.rank() != 2)
    layoutFail("w_ih and w_hh must be matrices");
  int64_t gates = recurrentGates(cell);
  int64_t rows = staticDim(wih, 0, "w_ih");
  if (rows % gates != 0)
    layoutFail("w_ih has " + std::to_string(rows) + " rows, not a multiple of " +
               std::to_string(gates) + " gates");
  l.hidden = rows / gates;
  l.out = l.hasProjection ? staticDim(*params[plain], 0, "w_hr") : l.hidden;
  if (staticDim(whh, 0, "w_hh") != rows || staticDim(whh, 1, "w_hh") != l.out)
    layoutFail("w_hh is not [" + std::to_string(rows) + ", " + std::to_string(l.out) + "]");
  return l;
}

} // namespace gc
