//===- Recurrent.cpp - Reference kernels of recurrent layers --------------===//
//
// lstm, gru, rnn_tanh and rnn_relu (.input): per layer and direction, one
// step per time index over [sequence, batch, features], on raw float64
// arrays (NNCommon.h). The weights' layout is read through RecurrentLayout
// (gc/Ops/Recurrent.h), as the shape functions and decompositions read it.
// Dropout between layers in training mode is refused.
//
//===----------------------------------------------------------------------===//
#include "NNCommon.h"

#include "gc/Ops/Recurrent.h"

#include <cmath>

namespace gc {
namespace {

using namespace nn;

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

/// The weights of one layer and direction, as float64 arrays (null where
/// absent).
struct CellWeights {
  Tensor wih, whh, bih, bhh, whr;
};

/// y[b, r] = sum_k x[b, k] * w[r, k] (+ bias[r]): x [batch, k], w [rows, k].
std::vector<double> affine(const double *x, int64_t batch, int64_t k, const Tensor &w,
                           const Tensor &bias) {
  int64_t rows = w.size(0);
  const double *wd = rawData<double>(w);
  std::vector<double> y(batch * rows, 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < rows; ++r) {
      double acc = bias.defined() ? rawData<double>(bias)[r] : 0.0;
      for (int64_t j = 0; j < k; ++j)
        acc += x[b * k + j] * wd[r * k + j];
      y[b * rows + r] = acc;
    }
  return y;
}

/// One time step of `l`'s cell: gi = x w_ih^T + b_ih [batch, gates * hidden];
/// h [batch, out] and, for an LSTM, c [batch, hidden] are updated.
void step(const RecurrentLayout &l, const CellWeights &w, const std::vector<double> &gi,
          int64_t batch, std::vector<double> &h, std::vector<double> &c) {
  int64_t H = l.hidden, G = recurrentGates(l.cell) * H;
  std::vector<double> gh = affine(h.data(), batch, l.out, w.whh, w.bhh);
  std::vector<double> next(batch * H);
  for (int64_t b = 0; b < batch; ++b) {
    const double *x = &gi[b * G], *r = &gh[b * G];
    for (int64_t j = 0; j < H; ++j) {
      double &y = next[b * H + j];
      switch (l.cell) {
      case RecurrentCell::Lstm: {
        double in = sigmoid(x[j] + r[j]), forget = sigmoid(x[H + j] + r[H + j]);
        double cand = std::tanh(x[2 * H + j] + r[2 * H + j]);
        double out = sigmoid(x[3 * H + j] + r[3 * H + j]);
        double &cell = c[b * H + j];
        cell = forget * cell + in * cand;
        y = out * std::tanh(cell);
        break;
      }
      case RecurrentCell::Gru: {
        double reset = sigmoid(x[j] + r[j]), update = sigmoid(x[H + j] + r[H + j]);
        double n = std::tanh(x[2 * H + j] + reset * r[2 * H + j]);
        y = n + update * (h[b * H + j] - n);
        break;
      }
      case RecurrentCell::RnnTanh:
        y = std::tanh(x[j] + r[j]);
        break;
      case RecurrentCell::RnnRelu:
        y = std::max(0.0, x[j] + r[j]);
        break;
      }
    }
  }
  // An LSTM with proj_size projects h to its out size.
  h = w.whr.defined() ? affine(next.data(), batch, H, w.whr, Tensor()) : std::move(next);
}

std::vector<Tensor> recurrent(const OpCall &call) {
  RecurrentCell cell = *recurrentCell(call.node().op());
  const NamedArg *paramArg = call.node().arg("params");
  std::vector<const TensorType *> types;
  for (const Value *v : paramArg->value.values)
    types.push_back(v ? &v->type().tensor : nullptr);
  int64_t layers = call.integer("num_layers");
  if (call.boolean("train", false) && call.real("dropout", 0) > 0 && layers > 1)
    kernelFail("dropout between recurrent layers in training mode is not supported");
  RecurrentLayout l = recurrentLayout(cell, types, call.boolean("has_biases", true), layers,
                                      call.boolean("bidirectional", false));
  std::vector<Tensor> params = call.tensors("params");
  Tensor input = call.tensor("input");
  requireFloating(input, "input");
  bool batched = input.dim() == 3, batchFirst = batched && call.boolean("batch_first", false);
  // [sequence, batch, features] throughout.
  Tensor x = toF64(input);
  if (!batched)
    x = reshaped(x, {x.size(0), 1, x.size(1)});
  else if (batchFirst)
    x = toF64(x.asStrided({x.size(1), x.size(0), x.size(2)},
                          {x.strides()[1], x.strides()[0], x.strides()[2]}, x.offset()));
  int64_t steps = x.size(0), batch = x.size(1);
  std::vector<Tensor> hx = cell == RecurrentCell::Lstm ? call.tensors("hx")
                                                       : std::vector<Tensor>{call.tensor("hx")};
  if (hx.size() != (cell == RecurrentCell::Lstm ? 2u : 1u))
    kernelFail("argument 'hx' must hold h0 (and c0 for an LSTM)");
  for (Tensor &s : hx)
    s = toF64(s);

  std::vector<double> layerInput(rawData<double>(x), rawData<double>(x) + x.numel());
  int64_t features = x.size(2);
  std::vector<double> finalH, finalC;
  for (int64_t layer = 0; layer < l.layers; ++layer) {
    int64_t width = l.directions * l.out;
    std::vector<double> output(steps * batch * width);
    for (int64_t dir = 0; dir < l.directions; ++dir) {
      int64_t i = l.first(layer, dir);
      CellWeights w{toF64(params[i]), toF64(params[i + 1])};
      if (l.hasBiases) {
        w.bih = toF64(params[i + 2]);
        w.bhh = toF64(params[i + 3]);
      }
      if (l.hasProjection)
        w.whr = toF64(params[i + (l.hasBiases ? 4 : 2)]);
      int64_t index = layer * l.directions + dir;
      const double *h0 = rawData<double>(hx[0]);
      std::vector<double> h(h0 + index * batch * l.out, h0 + (index + 1) * batch * l.out), c;
      if (cell == RecurrentCell::Lstm) {
        const double *c0 = rawData<double>(hx[1]);
        c.assign(c0 + index * batch * l.hidden, c0 + (index + 1) * batch * l.hidden);
      }
      for (int64_t k = 0; k < steps; ++k) {
        int64_t t = dir == 0 ? k : steps - 1 - k;
        std::vector<double> gi =
            affine(&layerInput[t * batch * features], batch, features, w.wih, w.bih);
        step(l, w, gi, batch, h, c);
        for (int64_t b = 0; b < batch; ++b)
          std::copy(&h[b * l.out], &h[(b + 1) * l.out],
                    &output[(t * batch + b) * width + dir * l.out]);
      }
      finalH.insert(finalH.end(), h.begin(), h.end());
      finalC.insert(finalC.end(), c.begin(), c.end());
    }
    layerInput = std::move(output);
    features = width;
  }

  auto tensorOf = [&](const std::vector<double> &v, Shape sizes) {
    Tensor t = Tensor::zeros(DType::Float64, sizes);
    std::copy(v.begin(), v.end(), rawData<double>(t));
    return t;
  };
  Tensor out = tensorOf(layerInput, {steps, batch, features});
  if (!batched)
    out = reshaped(out, {steps, features});
  else if (batchFirst)
    out = out.asStrided({batch, steps, features}, {features, batch * features, 1}, 0);
  auto states = [&](const std::vector<double> &v, int64_t size) {
    Tensor s = tensorOf(v, {l.layers * l.directions, batch, size});
    return batched ? s : reshaped(s, {l.layers * l.directions, size});
  };
  std::vector<Tensor> results{out.to(input.dtype()), states(finalH, l.out).to(input.dtype())};
  if (cell == RecurrentCell::Lstm)
    results.push_back(states(finalC, l.hidden).to(input.dtype()));
  return results;
}

const KernelEntry kKernels[] = {
    {ops::aten_gru_input, recurrent},
    {ops::aten_lstm_input, recurrent},
    {ops::aten_rnn_relu_input, recurrent},
    {ops::aten_rnn_tanh_input, recurrent},
};

} // namespace

void registerRecurrentKernels(KernelRegistry &r) { r.add(kKernels); }

} // namespace gc
