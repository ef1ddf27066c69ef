#!/usr/bin/env python3
"""Exports the small test archives that the corpus does not have: a model
exported with the torch that runs this script (to test archives from newer
torch releases than the corpus's 2.11), and the same model with its tensors
on cuda (to test that gc refuses to compile it for the CPU by accident).

usage: make-test-archives.py OUTDIR [--device cuda]

Writes OUTDIR/model.pt2, in0.npy, out0.npy (the exported program's own
outputs on the inputs) and provenance.json (torch version, schema version,
device). Needs torch (and a GPU for --device cuda); the test suite does not:
it uses the committed results, in test/Models/Inputs/smallnet-*.
"""
import argparse
import json
import os

import numpy as np
import torch
import torch.nn as nn


class SmallNet(nn.Module):
    """A convolution block, a normalized MLP head and a softmax: the op kinds
    a real model has (convolution, batch norm, pooling, matmul, layer norm,
    reductions, pointwise), at a size that keeps the archive tiny."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc1 = nn.Linear(8 * 4 * 4, 32)
        self.norm = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        x = nn.functional.adaptive_avg_pool2d(x, 4).flatten(1)
        x = nn.functional.gelu(self.norm(self.fc1(x)))
        return torch.softmax(self.fc2(x), dim=-1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    torch.manual_seed(0)
    model = SmallNet().eval().to(args.device)
    x = torch.randn(2, 3, 16, 16, device=args.device)
    batch = torch.export.Dim("batch", min=1, max=64)
    ep = torch.export.export(model, (x,), dynamic_shapes={"x": {0: batch}})
    for n in ep.graph.nodes:  # keep machine paths out of the archive
        n.meta.pop("stack_trace", None)
    path = os.path.join(args.outdir, "model.pt2")
    torch.export.save(ep, path)
    out = ep.module()(x)
    np.save(os.path.join(args.outdir, "in0.npy"), x.cpu().numpy())
    np.save(os.path.join(args.outdir, "out0.npy"), out.detach().cpu().numpy())
    from torch._export.serde.schema import SCHEMA_VERSION
    with open(os.path.join(args.outdir, "provenance.json"), "w") as f:
        json.dump({"torch": torch.__version__, "schema_version": list(SCHEMA_VERSION),
                   "device": args.device, "made_by": "utils/make-test-archives.py"}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
