//===- Recurrent.h - How torch's recurrent layers lay out their weights -*- C++ -*-===//
//
// aten.lstm.input, aten.gru.input, aten.rnn_tanh.input and aten.rnn_relu.input
// take their weights as one flat list, per layer and then per direction:
// w_ih [gates * hidden, in], w_hh [gates * hidden, out], then b_ih and b_hh
// [gates * hidden] when has_biases, then for an LSTM with proj_size a
// projection w_hr [out, hidden]. `out` is the hidden size, or proj_size when
// the LSTM projects. The shape functions and the decompositions both read
// the list through RecurrentLayout, so that the rule is written once.
//
//===----------------------------------------------------------------------===//
#ifndef GC_OPS_RECURRENT_H
#define GC_OPS_RECURRENT_H

#include "gc/IR/OpId.h"
#include "gc/IR/Module.h"

#include <cstdint>
#include <vector>

namespace gc {

/// The cell a recurrent op runs at each time step.
enum class RecurrentCell : uint8_t { Lstm, Gru, RnnTanh, RnnRelu };

/// The cell of a recurrent op, or nullopt for any other op.
std::optional<RecurrentCell> recurrentCell(OpId op);
/// Gate blocks stacked in w_ih and w_hh: 4 (i, f, g, o), 3 (r, z, n) or 1.
int64_t recurrentGates(RecurrentCell cell);

struct RecurrentLayout {
  RecurrentCell cell = RecurrentCell::Lstm;
  int64_t layers = 1;
  int64_t directions = 1; ///< 2 when bidirectional
  bool hasBiases = true;
  bool hasProjection = false; ///< an LSTM with proj_size
  int64_t hidden = 0;         ///< the cell state's size (and h's without projection)
  int64_t out = 0;            ///< h's size: hidden, or proj_size

  /// Weights per layer and direction.
  int64_t perCell() const { return 2 + (hasBiases ? 2 : 0) + (hasProjection ? 1 : 0); }
  /// Index into the flat list of the first weight of `layer`, `direction`.
  int64_t first(int64_t layer, int64_t direction) const {
    return (layer * directions + direction) * perCell();
  }
};

/// Reads the layout from the weights' types and the op's flags; throws
/// ArgumentError (gc/IR/ArgReader.h) naming what does not fit torch's
/// layout.
RecurrentLayout recurrentLayout(RecurrentCell cell, const std::vector<const TensorType *> &params,
                                bool hasBiases, int64_t layers, bool bidirectional);

} // namespace gc

#endif // GC_OPS_RECURRENT_H
