#!/usr/bin/env python3
"""Exports the control-flow test models of issue 14: torch.cond and
torch._higher_order_ops.while_loop, whose branches and bodies torch.export
records as subgraphs of the program.

usage: make-controlflow-models.py OUTDIR

cond_model: a linear layer, then torch.cond on a data-dependent predicate
(the sum of the layer's output is positive). The true branch adds the input
to relu of the layer's output; the false branch multiplies tanh of it by a
parameter the branch reads from the module, which torch.export passes to the
branch as an extra operand. The batch dimension is dynamic (2 to 64).
Writes OUTDIR/cond_model/: model.pt2; in<i>.npy / out<i>.npy for i = 0..3:
batch 4 and batch 7, each once taking the true branch and once the false
one; and provenance.json.

while_model: torch._higher_order_ops.while_loop carrying a counter and a
tensor: while the counter is below the input `n`, the tensor goes through a
linear layer and tanh. The trip count is the value of `n`, an int64 scalar.
Returns the tensor and the final counter. Writes OUTDIR/while_model/:
model.pt2; in0.npy/in1.npy (x, n = 3) with out0.npy/out1.npy; in2.npy/in3.npy
(x, n = 0: the body never runs) with out2.npy/out3.npy; and provenance.json.

nested_model: control flow inside control flow: a while_loop whose body
holds a torch.cond (tanh of a linear layer if the carried tensor's sum is
positive, one minus it otherwise), so a called graph calls graphs of its
own. Returns the tensor. Writes OUTDIR/nested_model/: model.pt2; in0.npy,
in1.npy (x, n = 4, the branch changes between iterations) with out0.npy;
in2.npy, in3.npy (x, n = 1) with out1.npy; and provenance.json.
"""
import argparse
import json
import os

import numpy as np
import torch
import torch.nn as nn
from torch._higher_order_ops.while_loop import while_loop


class CondModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.gain = nn.Parameter(torch.linspace(-1.0, 1.0, 8))

    def forward(self, x):
        h = self.l(x)

        def true_fn(h, x):
            return torch.relu(h) + x

        def false_fn(h, x):
            return torch.tanh(h) * self.gain

        return torch.cond(h.sum() > 0, true_fn, false_fn, (h, x)) * 2.0


class WhileModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(6, 6)

    def forward(self, x, n):
        def cond_fn(i, h):
            return i < n

        def body_fn(i, h):
            return i + 1, torch.tanh(self.l(h))

        i, h = while_loop(cond_fn, body_fn, (torch.zeros((), dtype=torch.int64), x))
        return h, i


class NestedModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(5, 5)

    def forward(self, x, n):
        def cond_fn(i, h):
            return i < n

        def body_fn(i, h):
            h = torch.cond(h.sum() > 0, lambda a: torch.tanh(self.l(a)),
                           lambda a: -a + 1.0, (h,))
            return i + 1, h

        _, h = while_loop(cond_fn, body_fn, (torch.zeros((), dtype=torch.int64), x))
        return h


def save(path, t):
    np.save(path, t.detach().cpu().numpy())


def clean_and_save(ep, path):
    for m in ep.graph_module.modules():  # keep machine paths out of the archive
        if isinstance(m, torch.fx.GraphModule):
            for n in m.graph.nodes:
                n.meta.pop("stack_trace", None)
    torch.export.save(ep, path)


def targets_of(ep):
    out = set()
    for m in ep.graph_module.modules():
        if isinstance(m, torch.fx.GraphModule):
            out |= {str(n.target) for n in m.graph.nodes if n.op == "call_function"}
    return sorted(out)


def provenance(out, ep):
    with open(os.path.join(out, "provenance.json"), "w") as f:
        json.dump({"torch": torch.__version__, "script": "utils/make-controlflow-models.py",
                   "ops": targets_of(ep)}, f, indent=1)
        f.write("\n")


def export_cond(outdir):
    out = os.path.join(outdir, "cond_model")
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = CondModel().eval()
    batch = torch.export.Dim("batch", min=2, max=64)
    ep = torch.export.export(model, (torch.randn(4, 8),), dynamic_shapes={"x": {0: batch}})
    assert "cond" in targets_of(ep), targets_of(ep)
    clean_and_save(ep, os.path.join(out, "model.pt2"))
    # Find inputs of each size that take each branch, so every branch runs.
    i = 0
    for b in [4, 7]:
        taken = set()
        while len(taken) < 2:
            x = torch.randn(b, 8)
            with torch.no_grad():
                branch = bool(model.l(x).sum() > 0)
                if branch in taken:
                    continue
                taken.add(branch)
                save(os.path.join(out, "in%d.npy" % i), x)
                save(os.path.join(out, "out%d.npy" % i), model(x))
            i += 1
    provenance(out, ep)


def export_while(outdir):
    out = os.path.join(outdir, "while_model")
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = WhileModel().eval()
    ep = torch.export.export(model, (torch.randn(3, 6), torch.tensor(3)))
    assert "while_loop" in targets_of(ep), targets_of(ep)
    clean_and_save(ep, os.path.join(out, "model.pt2"))
    for k, n in enumerate([3, 0]):
        x, nt = torch.randn(3, 6), torch.tensor(n)
        save(os.path.join(out, "in%d.npy" % (2 * k)), x)
        save(os.path.join(out, "in%d.npy" % (2 * k + 1)), nt)
        with torch.no_grad():
            h, i = model(x, nt)
        save(os.path.join(out, "out%d.npy" % (2 * k)), h)
        save(os.path.join(out, "out%d.npy" % (2 * k + 1)), i)
    provenance(out, ep)


def export_nested(outdir):
    out = os.path.join(outdir, "nested_model")
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = NestedModel().eval()
    ep = torch.export.export(model, (torch.randn(2, 5), torch.tensor(4)))
    assert {"cond", "while_loop"} <= set(targets_of(ep)), targets_of(ep)
    clean_and_save(ep, os.path.join(out, "model.pt2"))
    for k, n in enumerate([4, 1]):
        x, nt = torch.randn(2, 5), torch.tensor(n)
        save(os.path.join(out, "in%d.npy" % (2 * k)), x)
        save(os.path.join(out, "in%d.npy" % (2 * k + 1)), nt)
        with torch.no_grad():
            save(os.path.join(out, "out%d.npy" % k), model(x, nt))
    provenance(out, ep)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    args = ap.parse_args()
    export_cond(args.outdir)
    export_while(args.outdir)
    export_nested(args.outdir)


if __name__ == "__main__":
    main()
