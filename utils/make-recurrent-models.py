#!/usr/bin/env python3
"""Exports the recurrent-layer test models (issue 16: lstm, gru and rnn
decompose into matrix products and pointwise steps over time) with the torch
that runs this script, and PyTorch's outputs and gradients:

  lstm  a two-layer LSTM (batch_first, with biases) and a linear head on the
        last step; returns the head's output and the final h and c.
  gru   a bidirectional one-layer GRU (sequence first), given h0; returns the
        output sequence and the final hidden state.
  rnn   an Elman RNN with tanh (two layers) and one with relu and no biases
        (batch_first, bidirectional); returns both sequences and states.

usage: make-recurrent-models.py OUTDIR [MODEL ...]

Writes OUTDIR/<model>/: model.pt2, in<i>.npy, out<i>.npy, and for training
checks tangent<i>.npy and grad.param.<name>.npy / grad.in<i>.npy (the
vector-Jacobian products of the outputs with the tangents), as the corpus
models have them, plus provenance.json. Needs torch; the test suite does not:
it uses the committed files in test/Models/Inputs/<model>.
"""
import argparse
import json
import os

import numpy as np
import torch


class Lstm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(6, 10, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(10, 4)

    def forward(self, x):
        seq, (h, c) = self.lstm(x)
        return self.head(seq[:, -1]), h, c


class Gru(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(5, 7, bidirectional=True)

    def forward(self, x, h0):
        return self.gru(x, h0)


class Rnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tanh = torch.nn.RNN(5, 6, num_layers=2)
        self.relu = torch.nn.RNN(5, 4, nonlinearity="relu", bias=False, batch_first=True,
                                 bidirectional=True)

    def forward(self, x):
        a, ha = self.tanh(x)
        b, hb = self.relu(x.transpose(0, 1))
        return a, ha, b, hb


def models():
    return {
        "lstm": (Lstm, lambda: (torch.randn(3, 7, 6),)),
        "gru": (Gru, lambda: (torch.randn(6, 2, 5), torch.randn(2, 2, 7))),
        "rnn": (Rnn, lambda: (torch.randn(5, 3, 5),)),
    }


def save(path, t):
    np.save(path, t.detach().contiguous().numpy())


def export_model(outdir, name):
    cls, make_inputs = models()[name]
    torch.manual_seed(0)
    module = cls().eval()
    inputs = make_inputs()
    ep = torch.export.export(module, inputs)
    for n in ep.graph.nodes:  # no machine paths in the archive
        n.meta.pop("stack_trace", None)
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    torch.export.save(ep, os.path.join(d, "model.pt2"))
    for i, t in enumerate(inputs):
        save(os.path.join(d, "in%d.npy" % i), t)
    # Gradients through a fresh copy of the exported module, so the
    # reference is the exported program's own arithmetic.
    run = ep.module()
    params = dict(run.named_parameters())
    leaves = [t.clone().requires_grad_(True) for t in inputs]
    outs = run(*leaves)
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    for i, o in enumerate(outs):
        save(os.path.join(d, "out%d.npy" % i), o)
    torch.manual_seed(1)
    tangents = [torch.randn_like(o) for o in outs]
    for i, t in enumerate(tangents):
        save(os.path.join(d, "tangent%d.npy" % i), t)
    wrt = list(params.values()) + leaves
    grads = torch.autograd.grad(outs, wrt, tangents)
    names = ["param." + n for n in params] + ["in%d" % i for i in range(len(leaves))]
    for n, g in zip(names, grads):
        save(os.path.join(d, "grad.%s.npy" % n), g)
    ops = sorted({str(n.target) for n in ep.graph.nodes if n.op == "call_function"})
    with open(os.path.join(d, "provenance.json"), "w") as f:
        json.dump({"torch": torch.__version__, "script": "utils/make-recurrent-models.py",
                   "ops": ops, "params": sorted(params)}, f, indent=1, sort_keys=True)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("models", nargs="*")
    args = ap.parse_args()
    for name in args.models or sorted(models()):
        export_model(args.outdir, name)
        print("wrote", os.path.join(args.outdir, name))


if __name__ == "__main__":
    main()
