"""Random weights that travel as a recipe. Before export, every floating-point parameter and buffer of a
zoo model is overwritten by weightgen's values for the recipe {key: "<model>/<name>", numel, lo, hi},
lo and hi being the tensor's own minimum and maximum after its random initialization (so a norm's
ones stay ones). An exported archive then travels as a skeleton: its weight entries zeroed and xz'd,
with a manifest giving each entry's offset, length and recipe (test/Models/Inputs/realmodels/weightgen.py
rebuilds the archive byte for byte and checks its sha256).
"""
import hashlib
import json
import lzma
import os
import sys
import zipfile

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "Models",
                                "Inputs", "realmodels"))
import weightgen  # noqa: E402
import weightgen_bf16  # noqa: E402


def apply_recipes(model, name):
    """Overwrites the model's floating-point state with recipe values; returns {fqn: recipe}."""
    recipes, seen = {}, {}
    with torch.no_grad():
        for fqn, t in model.state_dict(keep_vars=True).items():
            if not t.is_floating_point() or t.numel() == 0:
                continue
            key = (t.data_ptr(), t.dtype, tuple(t.shape))
            if key in seen:  # a tied weight keeps its first name's recipe
                recipes[fqn] = seen[key]
                continue
            r = {"key": f"{name}/{fqn}", "numel": t.numel(), "lo": float(t.min()), "hi": float(t.max())}
            t.copy_(torch.from_numpy(weightgen.values(r)).view(t.shape).to(t.dtype))
            recipes[fqn] = seen[key] = r
    return recipes


def to_bfloat16(model, recipes):
    """The model in bfloat16 (each value its float32 recipe value rounded to
    nearest even, as weightgen_bf16.py rebuilds it), its recipes marked so."""
    model.to(torch.bfloat16)
    for r in recipes.values():
        r["dtype"] = "bf16"
    return model


def _entry_offsets(path):
    """{entry name: (data offset, length)} for the stored entries of a zip file."""
    out = {}
    with zipfile.ZipFile(path) as z, open(path, "rb") as f:
        for info in z.infolist():
            if info.compress_type != zipfile.ZIP_STORED:
                continue
            f.seek(info.header_offset)
            head = f.read(30)
            skip = int.from_bytes(head[26:28], "little") + int.from_bytes(head[28:30], "little")
            out[info.filename] = (info.header_offset + 30 + skip, info.file_size)
    return out


def write_skeleton(archive, recipes, dest):
    """Writes dest/model.pt2.skel.xz and dest/manifest.json for an archive whose weights follow recipes."""
    data = bytearray(open(archive, "rb").read())
    offsets = _entry_offsets(archive)
    with zipfile.ZipFile(archive) as z:
        config_name = next(n for n in z.namelist() if n.endswith("data/weights/model_weights_config.json"))
        root = config_name[:-len("model_weights_config.json")]
        config = json.loads(z.read(config_name))["config"]
    entries, done = [], set()
    for fqn, entry in config.items():
        name = root + entry["path_name"]
        r = recipes.get(fqn)
        if r is None or name in done or name not in offsets:
            continue
        start, length = offsets[name]
        want = weightgen_bf16.encode(r)
        if length != want.nbytes or data[start:start + length] != want.tobytes():
            continue  # not a plain copy of the recipe's values: kept in the skeleton
        entries.append({"name": name, "offset": start, "length": length, "recipe": r})
        done.add(name)
    manifest = {"sha256": hashlib.sha256(data).hexdigest(), "entries": entries}
    for e in entries:
        data[e["offset"]:e["offset"] + e["length"]] = bytes(e["length"])
    os.makedirs(dest, exist_ok=True)
    with open(os.path.join(dest, "model.pt2.skel.xz"), "wb") as f:
        f.write(lzma.compress(bytes(data), preset=6))
    with open(os.path.join(dest, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
