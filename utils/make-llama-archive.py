#!/usr/bin/env python3
"""Writes a torch.export archive (.pt2) of ONE DECODE STEP of a Llama-shaped
decoder in bfloat16 with deterministic random weights, at any size up to 7B
(issue 17's benchmark) without ever holding the weights in memory.

The model (Llama-2's layout): token embedding, per layer RMSNorm, attention
with rotary position embedding (grouped-query when --kv-heads < --heads) over
a KV cache, RMSNorm, SwiGLU MLP; a final RMSNorm and an untied LM head.
Inputs: the token id (int64 [1, 1]), its position (int64 [1]) and the cache
of the previous tokens, past_k and past_v (bf16 [layers, 1, kv_heads, past,
head_dim]). Outputs: the logits (bf16 [1, 1, vocab]) and the cache with the
new token appended (bf16 [layers, 1, kv_heads, past + 1, head_dim]).

How: the graph is exported from a module whose parameters were never written
(torch.empty: untouched pages), saved with tiny stand-in weights, and the
archive is then written again entry by entry with each real weight streamed
in: the values of test/Models/Inputs/realmodels/weightgen_bf16.py's recipes
(uniform in +-1/sqrt(fan-in), norms in [0.9, 1.1]), one tensor in memory at a
time. Fixed timestamps and serialization id: the same flags give the same
bytes. Entries are stored, 64-byte aligned, zip64 where they need it.

usage (with torch, e.g. ~/.cache/gc-bench/venv/bin/python):
  make-llama-archive.py --preset 7b|tiny [--layers N ...] -o OUT.pt2 [--inputs-dir DIR [--reference]]
  make-llama-archive.py --eager ARCHIVE --inputs-dir DIR [--bench N] [--threads T]

--inputs-dir writes in0..in3.npy (bf16 as numpy's '|V2' bits, as gc reads
them) and config.json; --reference adds out0..out2.npy from PyTorch eager.
--eager runs an archive's decode step in PyTorch eager with its weights
mapped from the archive (not copied), prints the median of --bench steps.
"""
import argparse
import hashlib
import json
import os
import statistics
import sys
import time
import warnings
import zipfile

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "Models",
                                "Inputs", "realmodels"))
import weightgen_bf16  # noqa: E402

PRESETS = {
    # Llama-2-7B: 6.74e9 parameters, 13.5 GB in bfloat16.
    "7b": dict(layers=32, hidden=4096, heads=32, kv_heads=32, intermediate=11008, vocab=32000, past=127),
    # The same structure in a few hundred KB, for tests.
    "tiny": dict(layers=2, hidden=64, heads=4, kv_heads=4, intermediate=172, vocab=256, past=127),
}
ROPE_THETA = 10000.0
RMS_EPS = 1e-5
ALIGNMENT = 64
# A fixed zip timestamp (1980-01-01, the format's first date).
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


class RMSNorm(torch.nn.Module):
    def __init__(self, n, dtype):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(n, dtype=dtype))

    def forward(self, x):
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + RMS_EPS)
        return self.weight * x32.to(x.dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


class Attention(torch.nn.Module):
    def __init__(self, c, dtype):
        super().__init__()
        self.heads, self.kv_heads = c["heads"], c["kv_heads"]
        self.head_dim = c["hidden"] // c["heads"]
        kv = self.kv_heads * self.head_dim
        self.q_proj = torch.nn.Linear(c["hidden"], c["hidden"], bias=False, dtype=dtype)
        self.k_proj = torch.nn.Linear(c["hidden"], kv, bias=False, dtype=dtype)
        self.v_proj = torch.nn.Linear(c["hidden"], kv, bias=False, dtype=dtype)
        self.o_proj = torch.nn.Linear(c["hidden"], c["hidden"], bias=False, dtype=dtype)

    def forward(self, x, cos, sin, past_k, past_v):
        q = self.q_proj(x).view(1, 1, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(1, 1, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(1, 1, self.kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k_all = torch.cat([past_k, k], dim=2)
        v_all = torch.cat([past_v, v], dim=2)
        keys, values = k_all, v_all
        if self.kv_heads != self.heads:
            rep, t = self.heads // self.kv_heads, k_all.shape[2]
            keys = k_all[:, :, None].expand(1, self.kv_heads, rep, t, self.head_dim).reshape(
                1, self.heads, t, self.head_dim)
            values = v_all[:, :, None].expand(1, self.kv_heads, rep, t, self.head_dim).reshape(
                1, self.heads, t, self.head_dim)
        # One new token attends to every cached one: no mask.
        out = F.scaled_dot_product_attention(q, keys, values)
        return self.o_proj(out.transpose(1, 2).reshape(1, 1, -1)), k_all, v_all


class Layer(torch.nn.Module):
    def __init__(self, c, dtype):
        super().__init__()
        self.input_layernorm = RMSNorm(c["hidden"], dtype)
        self.self_attn = Attention(c, dtype)
        self.post_attention_layernorm = RMSNorm(c["hidden"], dtype)
        self.gate_proj = torch.nn.Linear(c["hidden"], c["intermediate"], bias=False, dtype=dtype)
        self.up_proj = torch.nn.Linear(c["hidden"], c["intermediate"], bias=False, dtype=dtype)
        self.down_proj = torch.nn.Linear(c["intermediate"], c["hidden"], bias=False, dtype=dtype)

    def forward(self, x, cos, sin, past_k, past_v):
        a, k, v = self.self_attn(self.input_layernorm(x), cos, sin, past_k, past_v)
        x = x + a
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h)), k, v


class DecodeStep(torch.nn.Module):
    def __init__(self, c, dtype=torch.bfloat16):
        super().__init__()
        self.head_dim = c["hidden"] // c["heads"]
        self.embed_tokens = torch.nn.Embedding(c["vocab"], c["hidden"], dtype=dtype)
        self.layers = torch.nn.ModuleList(Layer(c, dtype) for _ in range(c["layers"]))
        self.norm = RMSNorm(c["hidden"], dtype)
        self.lm_head = torch.nn.Linear(c["hidden"], c["vocab"], bias=False, dtype=dtype)

    def forward(self, token, position, past_k, past_v):
        x = self.embed_tokens(token)
        exponents = torch.arange(0, self.head_dim, 2, dtype=torch.float32) / self.head_dim
        freqs = position.float()[:, None] / (ROPE_THETA ** exponents)[None, :]
        angles = torch.cat([freqs, freqs], dim=-1)[None, None]
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
        new_k, new_v = [], []
        for i, layer in enumerate(self.layers):
            x, k, v = layer(x, cos, sin, past_k[i], past_v[i])
            new_k.append(k)
            new_v.append(v)
        return self.lm_head(self.norm(x)), torch.stack(new_k), torch.stack(new_v)


def unwritten_model(c):
    """The module with torch.empty parameters: its pages are never touched."""
    with torch.device("meta"):
        m = DecodeStep(c)
    return m.to_empty(device="cpu").eval()


def recipe(key, numel, fan_in):
    """weightgen_bf16's recipe for one tensor: a norm's weight near 1, else +-1/sqrt(fan-in)."""
    if fan_in is None:
        return {"key": key, "numel": numel, "lo": 0.9, "hi": 1.1, "dtype": "bf16"}
    bound = 1.0 / fan_in ** 0.5
    return {"key": key, "numel": numel, "lo": -bound, "hi": bound, "dtype": "bf16"}


def weight_recipe(name, shape):
    numel = int(np.prod(shape))
    if name.endswith("norm.weight"):
        return recipe("llama/" + name, numel, None)
    return recipe("llama/" + name, numel, shape[-1])


def sample_inputs(c):
    """The token, its position and a cache of c["past"] earlier positions (values in [-1, 1])."""
    head_dim = c["hidden"] // c["heads"]
    shape = (c["layers"], 1, c["kv_heads"], c["past"], head_dim)
    numel = int(np.prod(shape))

    def cache(key):
        bits = weightgen_bf16.encode({"key": key, "numel": numel, "lo": -1.0, "hi": 1.0, "dtype": "bf16"})
        return torch.from_numpy(bits.view(np.int16).reshape(shape)).view(torch.bfloat16)

    token = torch.tensor([[c["vocab"] * 7 // 11]], dtype=torch.int64)
    return token, torch.tensor([c["past"]], dtype=torch.int64), cache("llama/past_k"), cache("llama/past_v")


def export_skeleton(c, path):
    """torch.export.save of the decode step with one-element stand-ins for the weights."""
    model = unwritten_model(c)
    inputs = sample_inputs(c)
    with torch.no_grad():
        ep = torch.export.export(model, inputs)
    for name, value in ep.state_dict.items():
        stand_in = torch.zeros(1, dtype=value.dtype)
        ep.state_dict[name] = torch.nn.Parameter(stand_in) if isinstance(value, torch.nn.Parameter) \
            else stand_in
    shapes = {name: list(p.shape) for name, p in model.state_dict().items()}
    torch.export.save(ep, path)
    return shapes


def tensor_meta(meta, shape):
    """A stand-in's tensor_meta with the real weight's sizes (contiguous strides)."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    meta = dict(meta)
    meta["sizes"] = [{"as_int": n} for n in shape]
    meta["strides"] = [{"as_int": s} for s in reversed(strides)]
    return meta


def write_entry(out, name, data):
    """Adds one stored entry (data: any bytes-like) whose data starts on an ALIGNMENT boundary."""
    size = memoryview(data).nbytes
    info = zipfile.ZipInfo(name, ZIP_DATE)
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = size
    # zipfile's own rule for an entry's zip64 extra (20 bytes in the local header).
    zip64 = size * 1.05 > zipfile.ZIP64_LIMIT
    # The local header (30 bytes), the name, the zip64 extra, then our padding block's 4-byte head.
    start = out.fp.tell() + 30 + len(name.encode()) + (20 if zip64 else 0) + 4
    pad = (-start) % ALIGNMENT
    info.extra = (0xCAFE).to_bytes(2, "little") + pad.to_bytes(2, "little") + bytes(pad)
    with out.open(info, "w", force_zip64=zip64) as f:
        f.write(data)
    assert (start + pad) % ALIGNMENT == 0 and out.fp.tell() == start + pad + size, name


def write_archive(c, out_path):
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    tmp = out_path + ".skeleton.pt2"
    shapes = export_skeleton(c, tmp)
    with zipfile.ZipFile(tmp) as skel:
        infos = skel.infolist()
        root = infos[0].filename.split("/")[0] + "/"
        # torch names the root folder after the file; ours is the output's name.
        out_root = os.path.basename(out_path).removesuffix(".pt2") + "/"
        config_name = root + "data/weights/model_weights_config.json"
        config = json.loads(skel.read(config_name))
        by_file = {}
        for fqn, entry in config["config"].items():
            entry["tensor_meta"] = tensor_meta(entry["tensor_meta"], shapes[fqn])
            by_file[root + "data/weights/" + entry["path_name"]] = weight_recipe(fqn, shapes[fqn])
        part = out_path + ".part"
        with zipfile.ZipFile(part, "w", allowZip64=True) as out:
            for info in infos:
                name = out_root + info.filename[len(root):]
                if info.filename in by_file:
                    # One tensor in memory at a time.
                    write_entry(out, name, weightgen_bf16.encode(by_file[info.filename]))
                elif info.filename == config_name:
                    write_entry(out, name, json.dumps(config).encode())
                elif info.filename.endswith(".data/serialization_id"):
                    # torch writes a random id; ours names the configuration.
                    ident = hashlib.sha256(json.dumps(c, sort_keys=True).encode()).hexdigest()
                    write_entry(out, name, ident[:info.file_size].encode())
                else:
                    write_entry(out, name, skel.read(info))
    os.remove(tmp)
    os.replace(part, out_path)


def to_numpy(t):
    t = t.detach().contiguous()
    return t.view(torch.int16).numpy().view("V2") if t.dtype == torch.bfloat16 else t.numpy()


def from_numpy(a):
    return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16) if a.dtype == np.dtype("V2") \
        else torch.from_numpy(a)


def mapped_model(archive, c):
    """The decode step with every weight a view of the archive's bytes (np.memmap: no copy)."""
    with torch.device("meta"):
        model = DecodeStep(c)
    raw = np.memmap(archive, dtype=np.uint8, mode="r")
    with zipfile.ZipFile(archive) as z, open(archive, "rb") as f:
        root = z.infolist()[0].filename.split("/")[0] + "/"
        config = json.loads(z.read(root + "data/weights/model_weights_config.json"))["config"]
        offsets = {}
        for info in z.infolist():
            f.seek(info.header_offset)
            head = f.read(30)
            skip = int.from_bytes(head[26:28], "little") + int.from_bytes(head[28:30], "little")
            offsets[info.filename] = (info.header_offset + 30 + skip, info.file_size)
    state = {}
    for fqn, entry in config.items():
        start, size = offsets[root + "data/weights/" + entry["path_name"]]
        shape = [s["as_int"] for s in entry["tensor_meta"]["sizes"]]
        bits = raw[start:start + size].view(np.int16).reshape(shape)
        # The archive is mapped read-only; torch warns about non-writable arrays but never writes them.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            state[fqn] = torch.from_numpy(bits).view(torch.bfloat16)
    model.load_state_dict(state, assign=True)
    return model.eval()


def write_inputs(c, d, archive, reference):
    os.makedirs(d, exist_ok=True)
    inputs = sample_inputs(c)
    for i, t in enumerate(inputs):
        np.save(os.path.join(d, f"in{i}.npy"), to_numpy(t))
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(c, f, indent=1, sort_keys=True)
        f.write("\n")
    if reference:
        with torch.no_grad():
            outputs = mapped_model(archive, c)(*inputs)
        for i, t in enumerate(outputs):
            np.save(os.path.join(d, f"out{i}.npy"), to_numpy(t))


def eager_bench(archive, d, runs, threads):
    torch.set_num_threads(threads)
    c = json.load(open(os.path.join(d, "config.json")))
    inputs = [from_numpy(np.load(os.path.join(d, f"in{i}.npy"))) for i in range(4)]
    model = mapped_model(archive, c)
    times = []
    with torch.no_grad():
        for _ in range(2):  # warm-up: the first steps read the weights from disk and make oneDNN's kernels
            model(*inputs)
        for _ in range(runs):
            t = time.perf_counter()
            model(*inputs)
            times.append(time.perf_counter() - t)
    print(json.dumps({"median_s": statistics.median(times), "runs": times}))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", choices=sorted(PRESETS))
    for key in PRESETS["tiny"]:
        p.add_argument("--" + key.replace("_", "-"), type=int)
    p.add_argument("-o", dest="out", help="the .pt2 archive to write")
    p.add_argument("--inputs-dir", help="write in*.npy and config.json here")
    p.add_argument("--reference", action="store_true", help="also out*.npy from PyTorch eager")
    p.add_argument("--eager", metavar="ARCHIVE", help="time PyTorch eager on ARCHIVE instead")
    p.add_argument("--bench", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    if a.eager:
        if not a.inputs_dir:
            p.error("--eager needs --inputs-dir (with the config.json the generator wrote)")
        return eager_bench(a.eager, a.inputs_dir, a.bench, a.threads)
    if not a.preset or not a.out:
        p.error("give --preset and -o")
    c = dict(PRESETS[a.preset])
    for key in c:
        if getattr(a, key) is not None:
            c[key] = getattr(a, key)
    if c["hidden"] % c["heads"] or c["heads"] % c["kv_heads"]:
        p.error("--hidden must be a multiple of --heads, and --heads of --kv-heads")
    write_archive(c, a.out)
    if a.inputs_dir:
        write_inputs(c, a.inputs_dir, a.out, a.reference)


if __name__ == "__main__":
    main()
