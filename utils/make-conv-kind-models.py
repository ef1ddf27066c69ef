#!/usr/bin/env python3
"""Exports small convolutions of every kind conv-as-product tells apart,
with torch's outputs, for test/Lower/conv-kinds.test: 1-d and 3-d
convolutions of one group (im2col and a product), depthwise ones of 1, 2
and 3 spatial dims (window sums: stride 1 and 2, padding, dilation, a
channel multiplier of 2, 5x5 and 7x7 kernels, with a bias and without, one
followed by a ReLU), and a grouped convolution of two input channels per
group (cuDNN's).

usage: make-conv-kind-models.py OUTDIR   (then copy OUTDIR/conv_kinds* to test/Lower/Inputs)

Writes OUTDIR/conv_kinds/ (float32) and OUTDIR/conv_kinds_bf16/ (the same
module and inputs in bfloat16; .npy files hold bfloat16 as numpy's '|V2'
bits, as gc reads them): model.pt2, in0.npy .. in2.npy, out0.npy ..
out8.npy. Needs torch; the tests use the committed copies.
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

        def param(*shape):
            return torch.nn.Parameter(torch.randn(*shape, generator=g) * 0.3)

        self.w_3d, self.b_3d = param(4, 3, 3, 2, 3), param(4)
        self.w_1d, self.b_1d = param(5, 3, 3), param(5)
        self.w_dw3, self.b_dw3 = param(4, 1, 3, 3), param(4)
        self.w_dw_m2 = param(8, 1, 3, 3)
        self.w_dw5, self.b_dw5 = param(4, 1, 5, 5), param(4)
        self.w_dw7 = param(4, 1, 7, 7)
        self.w_dw_3d, self.b_dw_3d = param(3, 1, 3, 3, 3), param(3)
        self.w_dw_1d = param(6, 1, 5)
        self.w_grouped, self.b_grouped = param(6, 2, 3, 3), param(6)

    def forward(self, x1, x2, x3):
        return (
            F.conv3d(x3, self.w_3d, self.b_3d, stride=(1, 2, 1), padding=(1, 0, 1), dilation=(1, 1, 2)),
            F.conv1d(x1, self.w_1d, self.b_1d, stride=2, padding=1, dilation=2),
            F.relu(F.conv2d(x2, self.w_dw3, self.b_dw3, padding=1, groups=4)),
            F.conv2d(x2, self.w_dw_m2, stride=2, padding=2, dilation=2, groups=4),
            F.conv2d(x2, self.w_dw5, self.b_dw5, padding=2, groups=4),
            F.conv2d(x2, self.w_dw7, stride=2, padding=3, groups=4),
            F.conv3d(x3, self.w_dw_3d, self.b_dw_3d, padding=1, groups=3),
            F.conv1d(x1, self.w_dw_1d, stride=2, padding=2, groups=3),
            F.conv2d(x2, self.w_grouped, self.b_grouped, groups=2),
        )


def main(argv):
    if len(argv) != 1:
        sys.exit(__doc__)
    g = torch.Generator().manual_seed(1)
    inputs = (torch.randn(2, 3, 11, generator=g), torch.randn(2, 4, 9, 8, generator=g),
              torch.randn(1, 3, 5, 6, 7, generator=g))
    model = Convs().eval()
    save_case(os.path.join(argv[0], "conv_kinds"), model, inputs)
    save_case(os.path.join(argv[0], "conv_kinds_bf16"), model.to(torch.bfloat16),
           tuple(t.to(torch.bfloat16) for t in inputs))


if __name__ == "__main__":
    main(sys.argv[1:])
