#!/usr/bin/env python3
"""Exports the zoo (models.py) with the torch, torchvision, transformers and timm that run this script.

usage: export.py OUTDIR [--only NAME ...] [--family FAMILY ...] [--skeletons SKELDIR] [--dtype bfloat16]

For each model, OUTDIR/<name>/ gets model.pt2 (torch.export.save; weights from recipes, weights.py),
in<i>.npy (the example inputs), out<i>.npy (the loaded archive's outputs, torch's own run of the
exported program, flattened in the program's output order) and export.json (family, whether export
worked, its first error line, versions, seconds). With --skeletons, SKELDIR/<name>/ gets the archive
as a skeleton and manifest (weights.py) and links to the .npy files, which is what travels to a
machine without torchvision or transformers (run.py --skeletons rebuilds the archives there).
Exports run one model at a time in this process; a failure is recorded, not raised. With --dtype
bfloat16 each model goes to OUTDIR/<name>_bf16/ with its weights and floating inputs in bfloat16 (the
recipes' float32 values rounded to nearest even), its .npy files of bfloat16 numpy's '|V2' (the bits).
"""
import argparse
import json
import os
import shutil
import sys
import time
import traceback

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402
import weights  # noqa: E402


def versions():
    out = {"torch": torch.__version__}
    for mod in ("torchvision", "transformers", "timm"):
        try:
            out[mod] = __import__(mod).__version__
        except ImportError:
            pass
    return out


def first_line(exc):
    text = f"{type(exc).__name__}: {exc}".strip()
    return text.splitlines()[0][:300]


def npy_array(t):
    """A tensor as numpy saves it; bfloat16 as its 16 bits in numpy's '|V2',
    as gc's tools and the real models' bf16 files keep it."""
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view("V2")
    return t.numpy()


def export_one(name, family, build, outdir, skeletons, dtype=torch.float32):
    """Exports the model as `name`, or in bfloat16 (its weights and floating
    inputs) as `name`_bf16."""
    bf16 = dtype == torch.bfloat16
    name = name + "_bf16" if bf16 else name
    d = os.path.join(outdir, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    info = {"name": name, "family": family, "versions": versions(), "exported": False}
    start = time.time()
    try:
        torch.manual_seed(0)
        model, inputs = build()
        recipes = weights.apply_recipes(model, name[:-len("_bf16")] if bf16 else name)
        if bf16:
            weights.to_bfloat16(model, recipes)
            inputs = tuple(t.to(torch.bfloat16) if t.is_floating_point() else t for t in inputs)
        with torch.no_grad():
            ep = torch.export.export(model, inputs)
        path = os.path.join(d, "model.pt2")
        torch.export.save(ep, path)
        with torch.no_grad():
            outs = torch.export.load(path).module()(*inputs)
        flat = [t for t in torch.utils._pytree.tree_leaves(outs) if isinstance(t, torch.Tensor)]
        for i, t in enumerate(inputs):
            np.save(os.path.join(d, f"in{i}.npy"), npy_array(t))
        for i, t in enumerate(flat):
            np.save(os.path.join(d, f"out{i}.npy"), npy_array(t))
        info.update(exported=True, outputs=len(flat), dtype=str(dtype).replace("torch.", ""))
        if skeletons:
            s = os.path.join(skeletons, name)
            shutil.rmtree(s, ignore_errors=True)
            weights.write_skeleton(path, recipes, s)
            for f in sorted(os.listdir(d)):
                if f.endswith(".npy"):
                    shutil.copyfile(os.path.join(d, f), os.path.join(s, f))
    except Exception as e:  # any failure of the model's build or export is the table's data
        info["error"] = first_line(e)
        with open(os.path.join(d, "export-error.txt"), "w") as f:
            f.write(traceback.format_exc())
    info["seconds"] = round(time.time() - start, 1)
    with open(os.path.join(d, "export.json"), "w") as f:
        json.dump(info, f, indent=1)
    if skeletons and info["exported"]:
        shutil.copyfile(os.path.join(d, "export.json"), os.path.join(skeletons, name, "export.json"))
    return info


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("outdir")
    p.add_argument("--only", nargs="*", default=[])
    p.add_argument("--family", nargs="*", default=[])
    p.add_argument("--skeletons")
    p.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32",
                   help="bfloat16: weights and floating inputs in bfloat16, each model as NAME_bf16")
    a = p.parse_args()
    torch.set_num_threads(1)
    for name, (family, build) in models.zoo().items():
        if (a.only and name not in a.only) or (a.family and family not in a.family):
            continue
        info = export_one(name, family, build, a.outdir, a.skeletons, getattr(torch, a.dtype))
        print(f"{name:40s} {'ok' if info['exported'] else 'FAILED: ' + info['error']} ({info['seconds']} s)",
              flush=True)


if __name__ == "__main__":
    main()
