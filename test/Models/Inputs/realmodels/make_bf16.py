# Makes the bfloat16 variant of a real model (resnet50 -> resnet50_bf16), in the form weightgen_bf16.py
# rebuilds: the float32 archive's module cast to bfloat16 (parameters, buffers and floating-point
# inputs), exported again with torch.export, its outputs computed by PyTorch in bfloat16, and its
# weight entries replaced by the float32 recipes of MODEL_DIR's manifest with "dtype": "bf16" (the
# recipe's float32 values rounded to nearest even, exactly what module.to(torch.bfloat16) does).
# Needs torch (run with ~/.cache/gc-bench/venv/bin/python):
#   make_bf16.py FP32_ARCHIVE MODEL_DIR OUT_DIR
# for example make_bf16.py /tmp/rm/resnet50/model.pt2 realmodels/resnet50 realmodels/resnet50_bf16.
# OUT_DIR gets model.pt2.skel.xz, manifest.json, in<i>.npy and out<i>.npy; for a MODEL_DIR without
# manifest.json (a small model: make_bf16.py mlp/model.pt2 mlp mlp_bf16), model.pt2 itself. bfloat16 .npy files
# hold the raw 16 bits as numpy's two-byte void type ('|V2'), which gc reads as bf16 (numpy has
# no bfloat16).
import hashlib, json, lzma, os, sys, tempfile, zipfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import weightgen_bf16  # noqa: E402


def to_numpy(t):
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view("V2")
    return t.numpy()


def entries(path):
    """(name, data offset, length) of every entry of a stored (uncompressed) zip archive."""
    out = []
    with zipfile.ZipFile(path) as z, open(path, "rb") as f:
        for info in z.infolist():
            f.seek(info.header_offset)
            head = f.read(30)
            skip = int.from_bytes(head[26:28], "little") + int.from_bytes(head[28:30], "little")
            if info.compress_type == zipfile.ZIP_STORED:
                out.append((info.filename, info.header_offset + 30 + skip, info.file_size))
    return out


def main(archive, model_dir, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    ep = torch.export.load(archive)
    module = ep.module().to(torch.bfloat16)
    inputs = []
    for i in range(16):
        p = os.path.join(model_dir, f"in{i}.npy")
        if not os.path.exists(p):
            break
        t = torch.from_numpy(np.load(p))
        inputs.append(t.to(torch.bfloat16) if t.is_floating_point() else t)
    with torch.no_grad():
        bf16 = torch.export.export(module, tuple(inputs))
        outputs = bf16.module()(*inputs)
    if isinstance(outputs, torch.Tensor):
        outputs = [outputs]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.pt2")
        torch.export.save(bf16, path)
        data = bytearray(open(path, "rb").read())
        zipped = entries(path)

    if not os.path.exists(os.path.join(model_dir, "manifest.json")):
        # A small model (test/Models/Inputs/<name>): the archive itself.
        open(os.path.join(out_dir, "model.pt2"), "wb").write(data)
    else:
        write_skeleton(data, zipped, model_dir, out_dir)
    for i, t in enumerate(inputs):
        np.save(os.path.join(out_dir, f"in{i}.npy"), to_numpy(t))
    for i, t in enumerate(outputs):
        np.save(os.path.join(out_dir, f"out{i}.npy"), to_numpy(t))


def write_skeleton(data, zipped, model_dir, out_dir):
    # Every weight entry whose bytes are a float32 recipe rounded to bf16 travels as that recipe.
    by_bytes = {}
    for e in json.load(open(os.path.join(model_dir, "manifest.json")))["entries"]:
        recipe = dict(e["recipe"], dtype="bf16")
        by_bytes[hashlib.sha256(weightgen_bf16.encode(recipe).tobytes()).digest()] = recipe
    manifest = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data), "entries": []}
    for name, offset, length in zipped:
        recipe = by_bytes.get(hashlib.sha256(data[offset:offset + length]).digest())
        if recipe is None or length < 64:
            continue
        manifest["entries"].append({"name": name, "offset": offset, "length": length, "recipe": recipe})
        data[offset:offset + length] = bytes(length)
    open(os.path.join(out_dir, "model.pt2.skel.xz"), "wb").write(lzma.compress(bytes(data), preset=9))
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=0)
        f.write("\n")
    print(f"{out_dir}: {len(manifest['entries'])} of {len(zipped)} entries from recipes, "
          f"{len(data)} bytes")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit("usage: make_bf16.py FP32_ARCHIVE MODEL_DIR OUT_DIR")
    main(*sys.argv[1:])
