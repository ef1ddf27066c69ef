#!/usr/bin/env python3
"""Exports the small models that reproduce, one op each, what the model zoo found gc missing, for the
regression tests test/Models/compile-zoo_*.test.

usage: make-op-tests.py OUTDIR   (the committed copies are in test/Models/Inputs/zoo_<case>/)

Writes OUTDIR/zoo_<case>/: model.pt2, in<i>.npy and out<i>.npy (the exported program's own outputs),
and provenance.json (torch version, the ops the export holds). Random weights, seeded.
- weight_norm: aten._weight_norm (torch.nn.utils.parametrizations.weight_norm, as the positional
  convolution of wav2vec2, HuBERT and WavLM), over dim 2 of a grouped Conv1d, dim 0 of a Linear and
  dim None (the norm of the whole weight).
- multiply: aten.multiply.Tensor with a tensor and with a number (ConvBERT writes torch.multiply), and the in-place
  multiply_.
"""
import json
import os
import sys

import numpy as np
import torch
from torch.nn.utils.parametrizations import weight_norm


class WeightNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = weight_norm(torch.nn.Conv1d(8, 8, 5, padding=2, groups=2), name="weight", dim=2)
        self.fc = weight_norm(torch.nn.Linear(8, 6), dim=0)
        self.whole = weight_norm(torch.nn.Linear(6, 4), dim=None)

    def forward(self, x):
        y = torch.nn.functional.gelu(self.conv(x)).transpose(1, 2)
        return self.whole(torch.tanh(self.fc(y)))


class Multiply(torch.nn.Module):
    def forward(self, x, y):
        a = torch.multiply(x, y)
        b = a.multiply(0.5)
        c = x.clone()
        c.multiply_(b)
        return a, b, c


CASES = {
    "weight_norm": (WeightNorm, lambda: (torch.randn(1, 8, 12),)),
    "multiply": (Multiply, lambda: (torch.randn(3, 4), torch.randn(4))),
}


def main():
    out = sys.argv[1]
    for name, (cls, inputs) in CASES.items():
        torch.manual_seed(0)
        model, args = cls().eval(), inputs()
        with torch.no_grad():
            ep = torch.export.export(model, args)
        d = os.path.join(out, "zoo_" + name)
        os.makedirs(d, exist_ok=True)
        torch.export.save(ep, os.path.join(d, "model.pt2"))
        with torch.no_grad():
            results = torch.export.load(os.path.join(d, "model.pt2")).module()(*args)
        if isinstance(results, torch.Tensor):
            results = (results,)
        for i, t in enumerate(args):
            np.save(os.path.join(d, f"in{i}.npy"), t.numpy())
        for i, t in enumerate(results):
            np.save(os.path.join(d, f"out{i}.npy"), t.numpy())
        ops = sorted({str(n.target) for n in ep.graph.nodes if n.op == "call_function"})
        with open(os.path.join(d, "provenance.json"), "w") as f:
            json.dump({"torch": torch.__version__, "ops": ops}, f, indent=1)
        print(name, ops)


if __name__ == "__main__":
    main()
