#!/usr/bin/env python3
"""Exports small float32 convolutions and unfolds whose im2col has every
feature: padding, stride, dilation, a 7x7 kernel, a non-contiguous input
(a transposed image), and F.unfold itself (aten.im2col), with torch's
outputs, for test/Lower/conv-as-product-shapes.test (the GPU's
conv-as-product run by the loop interpreter) and the CPU's im2col.

usage: make-conv-shape-models.py OUTDIR   (then copy OUTDIR/conv_shapes to test/Lower/Inputs)

Writes OUTDIR/conv_shapes/: model.pt2, in0.npy .. in2.npy, out0.npy ..
out3.npy. Needs torch; the tests use the committed copy in
test/Lower/Inputs/conv_shapes.
"""
import os
import sys

import torch
import torch.nn.functional as F

from exportcase import save_case


class Convs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.w_dil = torch.nn.Parameter(torch.randn(4, 3, 3, 2, generator=g))
        self.b_dil = torch.nn.Parameter(torch.randn(4, generator=g))
        self.w_stem = torch.nn.Parameter(torch.randn(5, 3, 7, 7, generator=g) * 0.1)
        self.w_t = torch.nn.Parameter(torch.randn(6, 2, 3, 3, generator=g))

    def forward(self, x, y, z):
        dil = F.conv2d(x, self.w_dil, self.b_dil, stride=(2, 3), padding=(1, 2), dilation=(2, 1))
        stem = F.conv2d(x, self.w_stem, stride=2, padding=3)
        transposed = F.conv2d(y.transpose(2, 3), self.w_t, padding=(1, 0))
        cols = F.unfold(z, kernel_size=(3, 2), dilation=(1, 2), padding=(1, 0), stride=(2, 1))
        return dil, stem, transposed, cols


def main(argv):
    if len(argv) != 1:
        sys.exit(__doc__)
    g = torch.Generator().manual_seed(1)
    inputs = (torch.randn(1, 3, 13, 11, generator=g), torch.randn(1, 2, 6, 5, generator=g),
              torch.randn(2, 3, 7, 8, generator=g))
    save_case(os.path.join(argv[0], "conv_shapes"), Convs().eval(), inputs)


if __name__ == "__main__":
    main(sys.argv[1:])
