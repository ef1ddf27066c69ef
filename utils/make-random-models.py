#!/usr/bin/env python3
"""Exports the test models for random numbers (issue 14, "Random numbers").

usage: make-random-models.py OUTDIR

gc draws random numbers from its own generator (docs/random.md), not from
PyTorch's, so these models come with no random outputs to compare: the
tests check what must hold whatever the stream (utils/check-random.py).

dropout: a linear layer, ReLU and nn.Dropout(0.5), exported three times
from the same weights: train.pt2 in training mode (the random model),
eval.pt2 in eval mode and p0.pt2 in training mode with p = 0 (both
deterministic: they must equal PyTorch). Writes OUTDIR/dropout/: train.pt2,
eval.pt2, p0.pt2, in0.npy (64 x 16), hidden.npy (the activations dropout
sees, which is also the eval and p = 0 output) and provenance.json.

dropout_big: nn.Dropout(0.5) alone, in training mode, on a 1024 x 1024
input (a million elements, for the kept fraction). The tests make the
input (utils/mknpy.py, iota), so only OUTDIR/dropout_big/model.pt2 and
provenance.json are written.

random_ops: one output per random op torch.export records for rand, randn,
randint (both forms), bernoulli (tensor and float p), rand_like,
randn_like, randint_like (both forms) and Tensor.uniform_ on an empty
tensor, each 512 x 512; the only input is a 512 x 512 tensor for the
*_like ops' shape (the tests make it). Writes OUTDIR/random_ops/model.pt2
and provenance.json.

Needs torch; the test suite does not: it uses the committed files in
test/Models/Inputs/<model>.
"""
import argparse
import json
import os

import numpy as np
import torch
import torch.nn as nn


class DropoutMLP(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.l = nn.Linear(16, 32)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        return self.drop(torch.relu(self.l(x)))


class RandomOps(nn.Module):
    def forward(self, x):
        n = x.shape
        return (torch.rand(n), torch.randn(n), torch.randint(3, 10, n), torch.randint(5, n),
                torch.bernoulli(torch.full_like(x, 0.3)), torch.bernoulli(x, 0.7),
                torch.rand_like(x), torch.randn_like(x), torch.randint_like(x, 5),
                torch.randint_like(x, 2, 5), torch.empty(n).uniform_(-2, 3))


def save(path, t):
    np.save(path, t.detach().cpu().numpy())


def export(model, args, path):
    """Saves the exported program without machine paths; returns its ops."""
    ep = torch.export.export(model, args)
    for n in ep.graph.nodes:
        n.meta.pop("stack_trace", None)
    # The example inputs would be saved too: a million zeros for dropout_big.
    ep._example_inputs = None
    torch.export.save(ep, path)
    return sorted({str(n.target) for n in ep.graph.nodes if n.op == "call_function"})


def provenance(out, ops):
    with open(os.path.join(out, "provenance.json"), "w") as f:
        json.dump({"torch": torch.__version__, "script": "utils/make-random-models.py",
                   "ops": ops}, f, indent=1)
        f.write("\n")


def export_dropout(outdir):
    out = os.path.join(outdir, "dropout")
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = DropoutMLP(0.5)
    x = torch.randn(64, 16)
    ops = {}
    ops["train"] = export(model.train(), (x,), os.path.join(out, "train.pt2"))
    assert "aten.dropout.default" in ops["train"], ops["train"]
    ops["eval"] = export(model.eval(), (x,), os.path.join(out, "eval.pt2"))
    p0 = DropoutMLP(0.0)
    p0.load_state_dict(model.state_dict())
    ops["p0"] = export(p0.train(), (x,), os.path.join(out, "p0.pt2"))
    save(os.path.join(out, "in0.npy"), x)
    with torch.no_grad():
        hidden = torch.relu(model.l(x))
        assert torch.equal(model.eval()(x), hidden) and torch.equal(p0.train()(x), hidden)
    save(os.path.join(out, "hidden.npy"), hidden)
    provenance(out, ops)


def export_dropout_big(outdir):
    out = os.path.join(outdir, "dropout_big")
    os.makedirs(out, exist_ok=True)
    model = nn.Dropout(0.5).train()
    provenance(out, export(model, (torch.zeros(1024, 1024),), os.path.join(out, "model.pt2")))


def export_random_ops(outdir):
    out = os.path.join(outdir, "random_ops")
    os.makedirs(out, exist_ok=True)
    ops = export(RandomOps(), (torch.zeros(512, 512),), os.path.join(out, "model.pt2"))
    provenance(out, ops)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    args = ap.parse_args()
    export_dropout(args.outdir)
    export_dropout_big(args.outdir)
    export_random_ops(args.outdir)


if __name__ == "__main__":
    main()
