#!/usr/bin/env python3
"""Exports the test models whose graphs hold higher-order ops (issue 14).

usage: make-hop-models.py OUTDIR

gradmode: a linear layer beside a branch computed under torch.no_grad(),
which torch.export records as torch.ops.higher_order.wrap_with_set_grad_enabled
around a subgraph. The branch reads a parameter and the input, so a compiler
that let gradients through the region would give x and scale.* gradients
PyTorch does not.

Writes OUTDIR/gradmode/: model.pt2, in0.npy, out0.npy, tangent0.npy and
grad.param.<name>.npy for every parameter (zeros where PyTorch's gradient is
None), grad.in0.npy for the user input, and provenance.json. Needs
torch; the test suite does not: it uses the committed files in
test/Models/Inputs/gradmode.
"""
import argparse
import json
import os

import numpy as np
import torch
import torch.nn as nn


class GradMode(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(8, 16)
        self.scale = nn.Linear(8, 16)
        self.register_buffer("freq", torch.linspace(0.5, 2.0, 16))

    def forward(self, x):
        h = self.l1(x)
        with torch.no_grad():
            s = torch.sigmoid(self.scale(x)) * self.freq
        return torch.tanh(h * s + h)


def save(path, t):
    np.save(path, t.detach().cpu().numpy())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    args = ap.parse_args()
    out = os.path.join(args.outdir, "gradmode")
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = GradMode()
    x = torch.randn(4, 8)
    ep = torch.export.export(model, (x,))
    targets = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    assert any("wrap_with_set_grad_enabled" in t for t in targets), targets
    for n in ep.graph.nodes:  # keep machine paths out of the archive
        n.meta.pop("stack_trace", None)
    torch.export.save(ep, os.path.join(out, "model.pt2"))

    xg = x.clone().requires_grad_(True)
    y = model(xg)
    tangent = torch.randn_like(y)
    y.backward(tangent)
    save(os.path.join(out, "in0.npy"), x)
    save(os.path.join(out, "out0.npy"), y)
    save(os.path.join(out, "tangent0.npy"), tangent)
    save(os.path.join(out, "grad.in0.npy"), xg.grad)
    for name, p in model.named_parameters():
        # No gradient reaches scale.*: torch leaves None, gc returns zeros.
        grad = p.grad if p.grad is not None else torch.zeros_like(p)
        save(os.path.join(out, "grad.param." + name + ".npy"), grad)
    with open(os.path.join(out, "provenance.json"), "w") as f:
        json.dump({"torch": torch.__version__, "script": "utils/make-hop-models.py",
                   "higher_order_ops": sorted({t for t in targets if not t.startswith("aten.")})}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
