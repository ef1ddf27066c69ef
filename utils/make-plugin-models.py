#!/usr/bin/env python3
"""Exports the model of the plugin tests (test/Plugin, docs/plugins.md):
plugin_net, whose forward calls two torch.library custom ops that gc knows
only through the test plugin test/Plugin/gcdemo/gcdemo.c, which computes
the same:

  gcdemo::scaled_swish(x, scale) = x * sigmoid(x) * scale
  gcdemo::row_stats(x) = (x.amax(-1), x.mean(-1))

The batch size is dynamic. Writes OUTDIR/plugin_net/model.pt2, in0.npy and
out<k>.npy (batch 3), and in0.set1.npy and out<k>.set1.npy (batch 5), the
outputs computed by the exported program; and OUTDIR/plugin_static, the same
model exported for batch 4 only (static shapes: on a GPU its plan is
captured as a CUDA graph), with in0.npy and out<k>.npy.

usage: make-plugin-models.py OUTDIR

Needs torch and numpy; the test suite does not: it uses the committed files
in test/Plugin/Inputs/.
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn


@torch.library.custom_op("gcdemo::scaled_swish", mutates_args=())
def scaled_swish(x: torch.Tensor, scale: float) -> torch.Tensor:
    return x * torch.sigmoid(x) * scale


@scaled_swish.register_fake
def _(x, scale):
    return torch.empty_like(x)


@torch.library.custom_op("gcdemo::row_stats", mutates_args=())
def row_stats(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x.amax(-1), x.mean(-1)


@row_stats.register_fake
def _(x):
    return x.new_empty(x.shape[:-1]), x.new_empty(x.shape[:-1])


class PluginNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 8)

    def forward(self, x):
        h = self.fc2(scaled_swish(self.fc1(x), 0.5))
        top, mean = row_stats(h)
        # A transposed (strided) input: the maximum of each column.
        column_top, _ = row_stats(h.t())
        return top + 1, mean * 2, column_top


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    args = ap.parse_args()
    out = os.path.join(args.outdir, "plugin_net")
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = PluginNet().eval()
    batch = torch.export.Dim("batch", min=1, max=64)
    ep = torch.export.export(model, (torch.randn(3, 8),), dynamic_shapes=({0: batch},))
    torch.export.save(ep, os.path.join(out, "model.pt2"))
    for suffix, rows in (("", 3), (".set1", 5)):
        save_run(ep, out, suffix, torch.randn(rows, 8))
    out = os.path.join(args.outdir, "plugin_static")
    os.makedirs(out, exist_ok=True)
    x = torch.randn(4, 8)
    ep = torch.export.export(model, (x,))
    torch.export.save(ep, os.path.join(out, "model.pt2"))
    save_run(ep, out, "", x)


def save_run(ep, out, suffix, x):
    np.save(os.path.join(out, f"in0{suffix}.npy"), x.numpy())
    with torch.no_grad():
        for k, y in enumerate(ep.module()(x)):
            np.save(os.path.join(out, f"out{k}{suffix}.npy"), y.numpy())


if __name__ == "__main__":
    main()
