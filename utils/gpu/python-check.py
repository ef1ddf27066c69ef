#!/usr/bin/env python3
"""gcrt from Python on an NVIDIA GPU, against ep.module() on the same GPU.

    python utils/gpu/python-check.py --packages DIR [--realmodels DIR]

Where a GPU is but no compiler (the device machine), this checks packages
compiled elsewhere with `gc-compile --device cuda` (utils/gpu/make-python-
packages.sh): for each DIR/<model>.gcpkg, the exported program
test/Models/Inputs/<model>/model.pt2 (or, for a real model, the archive
weightgen.py rebuilt under --realmodels) is loaded with torch, moved to the
GPU, and called on the model's inputs as torch CUDA tensors; gcrt.load's
callable gets the same tensors (device I/O: gcrt_run_device, no host
copies). Outputs are compared at rtol 1e-3 and atol max(1e-3, 2e-5 *
max|expected|). A training package (<model>.train.gcpkg) is trained for 5
SGD steps beside ep.module() on the GPU, parameters compared at 1e-4.
Each inference package is also called on tensors of other layouts (a
slice with gaps, a broadcast, outputs in column-major out= memory) and on
a side torch stream, compared with its own call on contiguous tensors on
the default stream (same rule). Prints one line per check and
`N passed, N failed`.
"""

import argparse
import dataclasses
import pathlib
import sys

import numpy as np
import torch
import torch.utils._pytree as pytree

import gcrt
from gpumodule import gpu_module

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = ROOT / "test" / "Models" / "Inputs"


@dataclasses.dataclass
class StructuredOut:
    """The structured model's output type, under the name its archive
    records (utils/make-export-models.py)."""
    total: torch.Tensor
    parts: list


torch.export.register_dataclass(StructuredOut, serialized_type_name="gc_test.StructuredOut")


def flat_inputs(model_dir):
    files = [p for p in model_dir.glob("in*.npy") if p.stem[2:].isdigit()]
    files.sort(key=lambda p: int(p.stem[2:]))
    return [np.load(f) for f in files]


def close(got, want):
    got = got.detach().double().cpu()
    want = want.detach().double().cpu()
    if got.shape != want.shape:
        return f"shape {tuple(got.shape)}, want {tuple(want.shape)}"
    peak = want.abs().max().item() if want.numel() else 0.0
    atol = max(1e-3, 2e-5 * peak)
    bad = ((got - want).abs() > atol + 1e-3 * want.abs()).sum().item()
    return None if bad == 0 else f"{bad} elements off (max abs error {(got - want).abs().max():.3g})"


def check_inference(package, archive, inputs_dir, weights=None):
    ep = torch.export.load(str(archive))
    module = gpu_module(ep)
    tensors = [torch.from_numpy(a).cuda() for a in flat_inputs(inputs_dir)]
    args, kwargs = pytree.tree_unflatten(tensors, ep.call_spec.in_spec)
    with torch.no_grad():
        want = pytree.tree_leaves(module(*args, **kwargs))
    got = pytree.tree_leaves(gcrt.load(package, device="cuda", weights=weights)(*args, **kwargs))
    if len(got) != len(want):
        return f"{len(got)} outputs, want {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        if not g.is_cuda:
            return f"output {i} is not on the GPU"
        why = close(g, w)
        if why:
            return f"output {i}: {why}"
    return None


def column_major(like):
    """Memory for `like`'s values whose first dimension varies fastest."""
    dims = list(range(like.dim()))[::-1]
    return torch.empty(list(like.shape)[::-1], dtype=like.dtype, device=like.device).permute(dims)


def gapped(t):
    """`t`'s values as every other element of a wider tensor."""
    if t.dim() == 0:
        return t
    wide = torch.zeros(*t.shape[:-1], 2 * t.shape[-1], dtype=t.dtype, device=t.device)
    wide[..., ::2] = t
    return wide[..., ::2]


def check_layouts_and_streams(package, inputs_dir, weights=None):
    """Device I/O of any strides, and calls enqueued on a side stream; each
    call from the package's initial state, on fresh inputs (a graph may
    mutate its state or an input)."""
    m = gcrt.load(package, device="cuda", weights=weights)
    arrays = flat_inputs(inputs_dir)

    def call(inputs, out=None):
        m.reset()
        m._forward.context.seed = 0
        return m._forward.run(inputs, out)

    def fresh():
        return [torch.from_numpy(a).cuda() for a in arrays]

    want = [t.clone() for t in call(fresh())]
    inputs = [gapped(t) for t in fresh()]
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        got = call(inputs)
        twice = [g * 2 for g in got]
    stream.synchronize()
    for k, (g, w, t2) in enumerate(zip(got, want, twice)):
        why = close(g, w) or close(t2, w * 2)
        if why:
            return f"output {k} of strided inputs on a side stream: {why}"
    first = fresh()[0]
    if first.dim() > 1 and first.shape[0] > 1:
        # The first input broadcast from its first row (stride 0).
        reference = [t.clone() for t in call([first[:1].expand(first.shape).contiguous()]
                                             + fresh()[1:])]
        got = call([first[:1].expand(first.shape)] + fresh()[1:])
        for k, (g, w) in enumerate(zip(got, reference)):
            why = close(g, w)
            if why:
                return f"output {k} of a broadcast input: {why}"
    out = [column_major(w) for w in want]
    call(fresh(), out)
    torch.cuda.synchronize()
    for k, (g, w) in enumerate(zip(out, want)):
        why = close(g, w)
        if why:
            return f"output {k} into column-major memory: {why}"
    return None


def check_training(package, archive, inputs_dir):
    ep = torch.export.load(str(archive))
    reference = gpu_module(ep)
    m = gcrt.load(package, device="cuda")
    x0 = torch.from_numpy(flat_inputs(inputs_dir)[0]).cuda()
    generator = torch.Generator(device="cuda").manual_seed(0)
    steps = [x0 + 0.1 * torch.randn(x0.shape, generator=generator, device="cuda")
             for _ in range(5)]
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.05),
                  torch.optim.SGD(reference.parameters(), lr=0.05)]
    m.to("cuda")
    for x in steps:
        for module, optimizer in zip([m, reference], optimizers):
            optimizer.zero_grad()
            (module(x) ** 2).mean().backward()
            optimizer.step()
    theirs = dict(reference.named_parameters())
    for name, p in m.named_parameters():
        if not torch.allclose(p.detach().cpu(), theirs[name].detach().cpu(), rtol=1e-4, atol=1e-4):
            return f"parameter {name} differs after 5 steps"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--packages", required=True, type=pathlib.Path)
    parser.add_argument("--realmodels", type=pathlib.Path)
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    counts = {"passed": 0, "failed": 0}

    def report(label, check, *check_args):
        try:
            why = check(*check_args)
        except Exception as e:  # a model that cannot run is a failure, named
            why = f"{type(e).__name__}: {e}"
        print(f"{label}: {'pass' if why is None else 'FAIL: ' + why}", flush=True)
        counts["passed" if why is None else "failed"] += 1

    for package in sorted(args.packages.glob("*.gcpkg")):
        name = package.name.split(".")[0]
        if package.name.endswith(".train.gcpkg"):
            report(package.name, check_training, package, MODELS / name / "model.pt2",
                   MODELS / name)
        elif (MODELS / name).is_dir():
            report(package.name, check_inference, package, MODELS / name / "model.pt2",
                   MODELS / name)
            report(f"{package.name} [layouts, streams]", check_layouts_and_streams, package,
                   MODELS / name)
        else:  # a real model: its package leaves the weights in the archive
            archive = args.realmodels / name / "model.pt2"
            report(package.name, check_inference, package, archive,
                   MODELS / "realmodels" / name, archive)
    passed, failed = counts["passed"], counts["failed"]
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
