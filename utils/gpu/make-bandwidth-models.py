#!/usr/bin/env python3
"""Exports the two models whose kernels measure gc's GPU bandwidth (issue 15).

usage: make-bandwidth-models.py OUTDIR

pointwise: y = x * 2 + 1 on a 8192 x 8192 float32 input (one read and one
write of 256 MiB: an elementwise kernel moves 512 MiB).
rowsum: y = x.sum(-1) on a 16384 x 4096 float32 input (one read of 256 MiB,
64 KiB written: a row reduction with long rows).

Neither has weights, so each archive is a few kilobytes; the benchmark makes
random inputs on the GPU machine. Writes OUTDIR/<name>/model.pt2 and
OUTDIR/provenance.json. Needs torch; the test suite does not.
"""
import argparse
import json
import os

import torch
import torch.nn as nn


class Pointwise(nn.Module):
    def forward(self, x):
        return x * 2 + 1


class RowSum(nn.Module):
    def forward(self, x):
        return x.sum(-1)


MODELS = {
    "pointwise": (Pointwise, (8192, 8192)),
    "rowsum": (RowSum, (16384, 4096)),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir")
    out = parser.parse_args().outdir
    provenance = {"torch": torch.__version__, "models": {}}
    for name, (cls, shape) in MODELS.items():
        example = torch.randn(*shape)
        ep = torch.export.export(cls().eval(), (example,))
        # The archive would otherwise carry the 256 MiB example input.
        ep._example_inputs = None
        os.makedirs(os.path.join(out, name), exist_ok=True)
        torch.export.save(ep, os.path.join(out, name, "model.pt2"))
        provenance["models"][name] = {"input": list(shape), "dtype": "float32"}
    with open(os.path.join(out, "provenance.json"), "w") as f:
        json.dump(provenance, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
