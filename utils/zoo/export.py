#!/usr/bin/env python3
"""Exports the zoo (models.py) with the torch, torchvision, transformers and timm that run this script.

usage: export.py OUTDIR [--only NAME ...] [--family FAMILY ...] [--skeletons SKELDIR]

For each model, OUTDIR/<name>/ gets model.pt2 (torch.export.save; weights from recipes, weights.py),
in<i>.npy (the example inputs), out<i>.npy (the loaded archive's outputs, torch's own run of the
exported program, flattened in the program's output order) and export.json (family, whether export
worked, its first error line, versions, seconds). With --skeletons, SKELDIR/<name>/ gets the archive
as a skeleton and manifest (weights.py) and links to the .npy files, which is what travels to a
machine without torchvision or transformers (run.py --skeletons rebuilds the archives there).
Exports run one model at a time in this process; a failure is recorded, not raised.
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


def export_one(name, family, build, outdir, skeletons):
    d = os.path.join(outdir, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    info = {"name": name, "family": family, "versions": versions(), "exported": False}
    start = time.time()
    try:
        torch.manual_seed(0)
        model, inputs = build()
        recipes = weights.apply_recipes(model, name)
        with torch.no_grad():
            ep = torch.export.export(model, inputs)
        path = os.path.join(d, "model.pt2")
        torch.export.save(ep, path)
        with torch.no_grad():
            outs = torch.export.load(path).module()(*inputs)
        flat = [t for t in torch.utils._pytree.tree_leaves(outs) if isinstance(t, torch.Tensor)]
        for i, t in enumerate(inputs):
            np.save(os.path.join(d, f"in{i}.npy"), t.detach().numpy())
        for i, t in enumerate(flat):
            np.save(os.path.join(d, f"out{i}.npy"), t.detach().contiguous().numpy())
        info.update(exported=True, outputs=len(flat))
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
    a = p.parse_args()
    torch.set_num_threads(1)
    for name, (family, build) in models.zoo().items():
        if (a.only and name not in a.only) or (a.family and family not in a.family):
            continue
        info = export_one(name, family, build, a.outdir, a.skeletons)
        print(f"{name:40s} {'ok' if info['exported'] else 'FAILED: ' + info['error']} ({info['seconds']} s)",
              flush=True)


if __name__ == "__main__":
    main()
