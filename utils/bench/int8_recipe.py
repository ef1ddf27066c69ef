#!/usr/bin/env python3
"""Carries the int8 benchmark models (utils/make-int8-models.py large) to a
machine without torchao, in a few hundred KB instead of ~750 MB.

  int8_recipe.py pack MODEL_DIR PACK_DIR
      PACK_DIR/model.pt2.skel.xz: MODEL_DIR/model.pt2 with every weight and
      constant of 64 KiB or more zeroed; PACK_DIR/recipe.json: for each such
      tensor its name, dtype and the distribution its values are drawn from
      again (integers: uniform over the original's [min, max], as per-channel
      int8 weights of uniformly initialised layers are; floats: normal with
      the original's mean and standard deviation); PACK_DIR/in<i>.npy.
  int8_recipe.py unpack PACK_DIR MODEL_DIR
      MODEL_DIR/model.pt2 with the tensors drawn (numpy's PCG64, seeded by
      the tensor's name: the same bytes on every machine) and saved by this
      machine's torch, the inputs, and MODEL_DIR/out<i>.npy: the program run
      eagerly.

The unpacked model is not the exported one (other weights from the same
distributions): the benchmark packs, then unpacks on every machine, the one
that exports included, so that all of them run the same model.
"""
import argparse
import json
import lzma
import os
import re
import shutil
import sys
import tempfile
import zlib

import numpy as np
import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401 (registers quantized_decomposed)

MIN_BYTES = 64 * 1024


def tensors(ep):
    """(kind, name, tensor) for the program's weights and tensor constants."""
    for name, t in ep.state_dict.items():
        if isinstance(t, torch.Tensor):
            yield "state_dict", name, t
    for name, t in ep.constants.items():
        if isinstance(t, torch.Tensor):
            yield "constants", name, t


def inputs(d):
    names = sorted((f for f in os.listdir(d) if re.fullmatch(r"in\d+\.npy", f)), key=lambda f: int(f[2:-4]))
    return [os.path.join(d, f) for f in names]


def pack(src, dst):
    os.makedirs(dst, exist_ok=True)
    ep = torch.export.load(os.path.join(src, "model.pt2"))
    recipe = []
    with torch.no_grad():
        for kind, name, t in tensors(ep):
            if t.numel() * t.element_size() < MIN_BYTES:
                continue
            entry = {"kind": kind, "name": name, "dtype": str(t.dtype).replace("torch.", "")}
            if t.dtype.is_floating_point:
                entry.update(dist="normal", mean=float(t.double().mean()), std=float(t.double().std()))
            else:
                entry.update(dist="uniform_int", low=int(t.min()), high=int(t.max()))
            recipe.append(entry)
            t.zero_()
    with tempfile.TemporaryDirectory() as tmp:
        skel = os.path.join(tmp, "model.pt2")
        torch.export.save(ep, skel)
        with open(skel, "rb") as f, lzma.open(os.path.join(dst, "model.pt2.skel.xz"), "wb") as out:
            shutil.copyfileobj(f, out)
    with open(os.path.join(dst, "recipe.json"), "w") as f:
        json.dump({"torch": torch.__version__, "tensors": recipe}, f, indent=1)
        f.write("\n")
    for i in inputs(src):
        shutil.copy(i, dst)
    print(f"packed {src} into {dst}", file=sys.stderr)


def draw(entry, shape):
    rng = np.random.Generator(np.random.PCG64(zlib.crc32(entry["name"].encode())))
    if entry["dist"] == "normal":
        return rng.normal(entry["mean"], entry["std"], size=shape).astype(np.float32)
    return rng.integers(entry["low"], entry["high"], size=shape, endpoint=True).astype(entry["dtype"])


def unpack(src, dst):
    os.makedirs(dst, exist_ok=True)
    with open(os.path.join(src, "recipe.json")) as f:
        recipe = json.load(f)["tensors"]
    with tempfile.TemporaryDirectory() as tmp:
        skel = os.path.join(tmp, "model.pt2")
        with lzma.open(os.path.join(src, "model.pt2.skel.xz"), "rb") as f, open(skel, "wb") as out:
            shutil.copyfileobj(f, out)
        ep = torch.export.load(skel)
    found = {(kind, name): t for kind, name, t in tensors(ep)}
    with torch.no_grad():
        for entry in recipe:
            t = found[(entry["kind"], entry["name"])]
            t.copy_(torch.from_numpy(draw(entry, tuple(t.shape))).to(t.dtype))
    torch.export.save(ep, os.path.join(dst, "model.pt2"))
    args = []
    for i in inputs(src):
        shutil.copy(i, dst)
        args.append(torch.from_numpy(np.load(i)))
    with torch.no_grad():
        result = ep.module()(*args)
    for i, o in enumerate(result if isinstance(result, (tuple, list)) else (result,)):
        np.save(os.path.join(dst, f"out{i}.npy"), o.detach().numpy())
    print(f"unpacked {src} into {dst}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cmd", choices=["pack", "unpack"])
    ap.add_argument("src")
    ap.add_argument("dst")
    a = ap.parse_args()
    (pack if a.cmd == "pack" else unpack)(a.src, a.dst)


if __name__ == "__main__":
    main()
