#!/usr/bin/env python3
"""Exports the test models whose result sizes depend on the input's data
(issue 31): torch.export gives those sizes unbacked symbols (u0, ...) with a
range, and adds _assert_scalar checks on them.

usage: make-data-dependent-models.py OUTDIR

Each model is written to OUTDIR/<name>/: model.pt2, and for each data set k
(different counts: some, none, all) in<i>.set<k>.npy for every input and
out<j>.set<k>.npy for every output, PyTorch's results; provenance.json lists
the ops torch.export recorded and what each set is. Needs torch; the test
suite does not: it uses the committed files in test/Models/Inputs/dd_<name>.

nonzero         torch.nonzero(x), x a [4, 5] float
masked_select   torch.masked_select(x, m), m a [4, 5] bool mask, x [4, 5]
bool_index      x[x > 0] (aten.index.Tensor with a bool index), x a [6] float
mask_assign     x[x > 0] = 0.5 on a copy (torch records masked_fill)
count_use       y = x[x > 0]; (y.sum() / (len(y) + 1), y * 2): the count
                used downstream, as a number and as a size
unique          torch.unique(x, sorted=True, return_inverse=True,
                return_counts=True), x a [12] int64
unique_consecutive  torch.unique_consecutive(x, return_inverse=True,
                return_counts=True), x a [12] int64
checked         y = x[x > 0] with torch._check(len(y) <= 4) and
                torch._check(len(y) % 2 == 0): set 2 has five positive elements,
                set 3 three, which the checks refuse at run time
"""
import argparse
import json
import os

import numpy as np
import torch
import torch.nn as nn


class NonZero(nn.Module):
    def forward(self, x):
        return torch.nonzero(x)


class MaskedSelect(nn.Module):
    def forward(self, x, m):
        return torch.masked_select(x, m)


class BoolIndex(nn.Module):
    def forward(self, x):
        return x[x > 0]


class MaskAssign(nn.Module):
    def forward(self, x):
        x = x.clone()
        x[x > 0] = 0.5
        return x


class CountUse(nn.Module):
    def forward(self, x):
        y = x[x > 0]
        return y.sum() / (y.shape[0] + 1), y * 2


class Unique(nn.Module):
    def forward(self, x):
        return torch.unique(x, sorted=True, return_inverse=True, return_counts=True)


class UniqueConsecutive(nn.Module):
    def forward(self, x):
        return torch.unique_consecutive(x, return_inverse=True, return_counts=True)


class Checked(nn.Module):
    def forward(self, x):
        y = x[x > 0]
        torch._check(y.shape[0] <= 4)
        torch._check(y.shape[0] % 2 == 0)
        return y * 3


def mixed(shape, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g)
    return torch.where(x.abs() < 0.5, torch.zeros(()), x)


def positive(shape, seed):
    return torch.rand(*shape, generator=torch.Generator().manual_seed(seed)) + 0.1


def nonzero_sets(shape):
    """Some elements nonzero, none, all."""
    return [("some", (mixed(shape, 1),)), ("none", (torch.zeros(shape),)),
            ("all", (positive(shape, 2),))]


def positive_sets(shape):
    """Some elements positive, none, all."""
    some = mixed(shape, 1)
    return [("some", (torch.where(some == 0, torch.full((), -1.0), some),)),
            ("none", (-positive(shape, 2),)), ("all", (positive(shape, 3),))]


def masked_sets():
    x = torch.randn(4, 5, generator=torch.Generator().manual_seed(3))
    m = torch.rand(4, 5, generator=torch.Generator().manual_seed(4)) > 0.5
    return [("some", (x, m)), ("none", (x, torch.zeros(4, 5, dtype=torch.bool))),
            ("all", (x, torch.ones(4, 5, dtype=torch.bool)))]


def int_sets():
    g = torch.Generator().manual_seed(5)
    return [("some", (torch.randint(0, 4, (12,), generator=g),)),
            ("one value", (torch.full((12,), 7, dtype=torch.int64),)),
            ("all distinct", (torch.tensor([5, -3, 11, 0, 2, 9, -8, 4, 1, 7, 30, 6]),))]


def checked_sets():
    return [("two", (torch.tensor([1.0, -1.0, 2.0, -2.0, -3.0, -4.0]),)),
            ("none", (-torch.ones(6),)),
            ("five, refused", (torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, -1.0]),)),
            ("three, refused", (torch.tensor([1.0, 2.0, 3.0, -4.0, -5.0, -1.0]),))]


MODELS = [
    ("nonzero", NonZero, lambda: nonzero_sets((4, 5))),
    ("masked_select", MaskedSelect, masked_sets),
    ("bool_index", BoolIndex, lambda: positive_sets((6,))),
    ("mask_assign", MaskAssign, lambda: positive_sets((6,))),
    ("count_use", CountUse, lambda: positive_sets((6,))),
    ("unique", Unique, int_sets),
    ("unique_consecutive", UniqueConsecutive, int_sets),
    ("checked", Checked, checked_sets),
]


def save(path, t):
    np.save(path, t.detach().cpu().numpy())


def export(outdir, name, cls, sets):
    out = os.path.join(outdir, "dd_" + name)
    os.makedirs(out, exist_ok=True)
    model = cls().eval()
    ep = torch.export.export(model, sets[0][1])
    for n in ep.graph.nodes:  # keep machine paths out of the archive
        n.meta.pop("stack_trace", None)
    torch.export.save(ep, os.path.join(out, "model.pt2"))
    described = []
    for k, (what, args) in enumerate(sets):
        for i, t in enumerate(args):
            save(os.path.join(out, "in%d.set%d.npy" % (i, k)), t)
        try:
            with torch.no_grad():
                result = model(*args)
        except RuntimeError:
            described.append({"set": k, "data": what, "refused": True})
            continue
        result = result if isinstance(result, tuple) else (result,)
        for j, t in enumerate(result):
            save(os.path.join(out, "out%d.set%d.npy" % (j, k)), t)
        described.append({"set": k, "data": what, "sizes": [list(t.shape) for t in result]})
    ops = sorted({str(n.target) for n in ep.graph.nodes if n.op == "call_function"})
    with open(os.path.join(out, "provenance.json"), "w") as f:
        json.dump({"torch": torch.__version__, "script": "utils/make-data-dependent-models.py",
                   "ops": ops, "range_constraints": {str(k): str(v) for k, v in ep.range_constraints.items()},
                   "sets": described}, f, indent=1)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    args = ap.parse_args()
    for name, cls, sets in MODELS:
        export(args.outdir, name, cls, sets())


if __name__ == "__main__":
    main()
