#!/usr/bin/env python3
"""Exports the small archives that test source locations (docs/debugging.md):
custom_op_loc, a model whose submodule calls a `torch.library` custom op
that gc has no plugin for, so that gc's error can name the op, the line
below in this file and the module path (`blocks.1.act`); and located_mlp,
the same model with relu in its place, which compiles, for following the
locations through every stage.

usage: make-location-models.py OUTDIR

Writes OUTDIR/custom_op_loc/model.pt2 and OUTDIR/located_mlp/model.pt2.
Needs torch; the test suite does not: it uses the committed archives in
test/gc-compile/Inputs/. The archives' stack traces hold this script's path
as it was when it ran.
"""
import argparse
import os

import torch
import torch.nn as nn


@torch.library.custom_op("gcdemo::scaled_swish", mutates_args=())
def scaled_swish(x: torch.Tensor, scale: float) -> torch.Tensor:
    return x * torch.sigmoid(x) * scale


@scaled_swish.register_fake
def _(x, scale):
    return torch.empty_like(x)


class Act(nn.Module):
    def forward(self, x):
        return scaled_swish(x, 0.5)  # the line the test expects gc to name


class Block(nn.Module):
    def __init__(self, act):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = act

    def forward(self, x):
        y = self.fc(x)
        return self.act(y) if self.act is not None else torch.relu(y)


class Net(nn.Module):
    def __init__(self, custom):
        super().__init__()
        self.blocks = nn.ModuleList([Block(None), Block(Act() if custom else None)])

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    args = ap.parse_args()
    for name, custom in (("custom_op_loc", True), ("located_mlp", False)):
        os.makedirs(os.path.join(args.outdir, name), exist_ok=True)
        torch.manual_seed(0)
        ep = torch.export.export(Net(custom).eval(), (torch.randn(2, 4),))
        torch.export.save(ep, os.path.join(args.outdir, name, "model.pt2"))


if __name__ == "__main__":
    main()
