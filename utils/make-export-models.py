#!/usr/bin/env python3
"""Exports the test models for what torch.export records beyond plain ATen
ops (issue 14): higher-order ops and size arithmetic on symbolic sizes.

usage: make-export-models.py OUTDIR

gradmode: a linear layer beside a branch computed under torch.no_grad(),
which torch.export records as torch.ops.higher_order.wrap_with_set_grad_enabled
around a subgraph. The branch reads a parameter and the input, so a compiler
that let gradients through the region would give x and scale.* gradients
PyTorch does not.

Writes OUTDIR/gradmode/: model.pt2, in0.npy, out0.npy, tangent0.npy and
grad.param.<name>.npy for every parameter (zeros where PyTorch's gradient is
None), grad.in0.npy for the user input, and provenance.json. Needs
torch; the test suite does not: it uses the committed files in
test/Models/Inputs/<model>.

symsize: a reshape and a scale computed from the batch size, a dynamic
dimension (2 to 64), which torch.export records as aten.sym_size.int and
Python's operator.mul / operator.floordiv on it. Writes OUTDIR/symsize/:
model.pt2, in0.npy/out0.npy (batch 4), in1.npy/out1.npy (batch 7),
in2.npy (batch 1, outside the exported range) and provenance.json.

autocast: a linear layer and pointwise ops in a torch.autocast("cpu",
bfloat16) region, a layer norm after it, which torch.export records as
torch.ops.higher_order.wrap_with_autocast around a subgraph whose ops see
float32 inputs. Writes OUTDIR/autocast/: model.pt2, in0.npy, out0.npy and
provenance.json.

checkpoint: two linear layers under torch.utils.checkpoint (non-reentrant),
trained: torch.export inlines the checkpointed function, so this checks
that gc computes the same gradients through it. Writes OUTDIR/checkpoint/
like gradmode.

structured: a call with nested arguments (a tensor, a pair of tensors and a
keyword dict) returning a registered dataclass that holds a list with a dict
in it, so that the exported in_spec and out_spec name inputs and outputs by
paths: x, pair[0], pair[1], extra['scale']; .total, .parts[0],
.parts[1]['relu']. Writes OUTDIR/structured/: model.pt2, in<i>.npy per user
input and out<i>.npy per user output (in flattening order) and
provenance.json.
"""
import argparse
import dataclasses
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


class SymSize(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(12, 5)

    def forward(self, x):
        b = x.shape[0]
        y = x.reshape(b, 3, 12).sum(1)
        return self.l(y).reshape(b * 5) * (b // 2)


class Autocast(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 16)
        self.n = nn.LayerNorm(16)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.a(x)
            z = torch.relu(y) * 2
        return self.n(z.float()) + y


class Checkpointed(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 16)
        self.b = nn.Linear(16, 8)

    def block(self, x):
        return torch.relu(self.b(torch.tanh(self.a(x))))

    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(self.block, x, use_reentrant=False) + x


@dataclasses.dataclass
class StructuredOut:
    total: torch.Tensor
    parts: list


class Structured(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 4)

    def forward(self, x, pair, *, extra):
        a, b = pair
        return StructuredOut(total=self.l(x) + a * extra["scale"],
                             parts=[a * b, {"relu": torch.relu(x)}])


def save(path, t):
    np.save(path, t.detach().cpu().numpy())


def export_symsize(outdir):
    out = os.path.join(outdir, "symsize")
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = SymSize().eval()
    batch = torch.export.Dim("batch", min=2, max=64)
    ep = torch.export.export(model, (torch.randn(4, 6, 6),), dynamic_shapes={"x": {0: batch}})
    targets = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    assert "aten.sym_size.int" in targets, targets
    for n in ep.graph.nodes:
        n.meta.pop("stack_trace", None)
    torch.export.save(ep, os.path.join(out, "model.pt2"))
    for i, b in enumerate([4, 7]):
        x = torch.randn(b, 6, 6)
        save(os.path.join(out, "in%d.npy" % i), x)
        with torch.no_grad():
            save(os.path.join(out, "out%d.npy" % i), model(x))
    save(os.path.join(out, "in2.npy"), torch.randn(1, 6, 6))
    with open(os.path.join(out, "provenance.json"), "w") as f:
        json.dump({"torch": torch.__version__, "script": "utils/make-export-models.py",
                   "ops": sorted(set(targets))}, f, indent=1)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    args = ap.parse_args()
    export_gradmode(args.outdir)
    export_symsize(args.outdir)
    export_autocast(args.outdir)
    export_trained(Checkpointed, "checkpoint", args.outdir, None)
    export_structured(args.outdir)


def export_structured(outdir):
    out = os.path.join(outdir, "structured")
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    torch.export.register_dataclass(StructuredOut, serialized_type_name="gc_test.StructuredOut")
    model = Structured().eval()
    args = (torch.randn(2, 4), (torch.randn(2, 4), torch.randn(2, 4)))
    kwargs = {"extra": {"scale": torch.randn(4)}}
    ep = torch.export.export(model, args, kwargs)
    for n in ep.graph.nodes:
        n.meta.pop("stack_trace", None)
    torch.export.save(ep, os.path.join(out, "model.pt2"))
    for i, t in enumerate(torch.utils._pytree.tree_leaves((args, kwargs))):
        save(os.path.join(out, "in%d.npy" % i), t)
    with torch.no_grad():
        result = model(*args, **kwargs)
    for i, t in enumerate(torch.utils._pytree.tree_leaves(result)):
        save(os.path.join(out, "out%d.npy" % i), t)
    with open(os.path.join(out, "provenance.json"), "w") as f:
        json.dump({"torch": torch.__version__, "script": "utils/make-export-models.py",
                   "in_spec": str(ep.call_spec.in_spec), "out_spec": str(ep.call_spec.out_spec)}, f, indent=1)
        f.write("\n")


def export_autocast(outdir):
    out = os.path.join(outdir, "autocast")
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = Autocast().eval()
    x = torch.randn(4, 8)
    ep = torch.export.export(model, (x,))
    targets = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    assert any("wrap_with_autocast" in t for t in targets), targets
    for n in ep.graph.nodes:
        n.meta.pop("stack_trace", None)
    torch.export.save(ep, os.path.join(out, "model.pt2"))
    save(os.path.join(out, "in0.npy"), x)
    with torch.no_grad():
        save(os.path.join(out, "out0.npy"), model(x))
    with open(os.path.join(out, "provenance.json"), "w") as f:
        json.dump({"torch": torch.__version__, "script": "utils/make-export-models.py",
                   "higher_order_ops": sorted({t for t in targets if not t.startswith("aten.")})}, f, indent=1)
        f.write("\n")


def export_gradmode(outdir):
    export_trained(GradMode, "gradmode", outdir, "wrap_with_set_grad_enabled")


def export_trained(cls, name, outdir, expected_op):
    """Exports cls() on a [4, 8] input with its output, a tangent and the
    gradients PyTorch computes for them."""
    out = os.path.join(outdir, name)
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = cls()
    x = torch.randn(4, 8)
    ep = torch.export.export(model, (x,))
    targets = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    assert expected_op is None or any(expected_op in t for t in targets), targets
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
        json.dump({"torch": torch.__version__, "script": "utils/make-export-models.py",
                   "higher_order_ops": sorted({t for t in targets if not t.startswith("aten.")})}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
