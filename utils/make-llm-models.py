#!/usr/bin/env python3
"""Exports a Llama-architecture decoder with a static KV cache as two
torch.export programs that share weights and cache buffers (issue 34):

  prefill.pt2  tokens int64 [1, T] (T dynamic, 1..max_seq) and their
               positions int64 [T]; returns the logits [1, T, vocab]
  decode.pt2   the same module exported for one token: tokens [1, 1],
               position [1]; returns the logits [1, 1, vocab]

The model: token embedding; per layer RMSNorm, attention with rotary
position embedding and grouped-query heads, RMSNorm, SwiGLU MLP; a final
RMSNorm and an untied LM head. Each layer keeps its cache in two registered
buffers, layers.<i>.attn.k_cache and .v_cache [1, kv_heads, max_seq,
head_dim], written in place at the positions (index_copy_ along the sequence
dim). Attention is one scaled_dot_product_attention over the whole cache
with a mask of the positions up to each query's own, so a position past
the written prefix never counts (and gc's fused attention step, reading
up to the last position the mask keeps, never reads it).

Weights are deterministic random values from
test/Models/Inputs/realmodels/weightgen_bf16.py's recipes (uniform in
+-1/sqrt(fan-in), norms in [0.9, 1.1]). The graph is exported from a module
whose parameters were never written and the archive is then rewritten entry
by entry with each weight streamed in (make-llama-archive.py's writer), so
the 8B preset is written without holding its weights in memory.

Presets: tiny (a few hundred KB, for tests), 1b (Llama-3.2-1B's shapes,
untied, without Llama 3's rope scaling), 8b (Llama-3.1-8B's shapes).

usage (with torch, e.g. /work/venv-py/bin/python):
  make-llm-models.py --preset tiny|1b|8b [--dtype float32|bfloat16] [--max-seq N] -o DIR
      [--programs prefill decode] [--reference N] [--skeletons-only | --from-skeletons SDIR]

--skeletons-only writes only the two exports with one-element stand-ins for
the weights (DIR/<program>.skeleton.pt2, about 1 MB each); --from-skeletons
SDIR then makes the archives from those on a machine whose torch cannot
export the model (torch 2.11 refuses the prefill's dynamic length), with
the same bytes as where they were exported.

Writes DIR/prefill.pt2, DIR/decode.pt2 and DIR/config.json. --reference N
also runs PyTorch eager on the fixed prompt (DIR/prompt.npy) and greedily
decodes N tokens: DIR/tokens.npy (int64 [N]), DIR/logits.npy (the logits
each token was chosen from, [N, vocab], float32), and for the stage tests
DIR/prefill/run0/{in0,in1,out0}.npy, DIR/decode/run<k>/{in0,in1,out0}.npy
(the first four decode steps), DIR/prefill/buffer_after.<fqn>.npy (the
cache after the prompt) and DIR/positions/ (a decode step at the first,
middle and last position of the cache, past which the cache holds NaN).
"""
import argparse
import hashlib
import importlib.util
import json
import os
import sys
import warnings
import zipfile

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "Models", "Inputs", "realmodels"))
import weightgen_bf16  # noqa: E402

_spec = importlib.util.spec_from_file_location("llama_archive", os.path.join(HERE, "make-llama-archive.py"))
llama_archive = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(llama_archive)

PRESETS = {
    "tiny": dict(layers=2, hidden=64, heads=4, kv_heads=2, intermediate=160, vocab=256, max_seq=64,
                 rope_theta=10000.0),
    # Llama-3.2-1B: 1.50e9 parameters with the LM head untied (6.0 GB in float32).
    "1b": dict(layers=16, hidden=2048, heads=32, kv_heads=8, intermediate=8192, vocab=128256, max_seq=2048,
               rope_theta=500000.0),
    # Llama-3.1-8B: 8.03e9 parameters (16.1 GB in bfloat16).
    "8b": dict(layers=32, hidden=4096, heads=32, kv_heads=8, intermediate=14336, vocab=128256, max_seq=2048,
               rope_theta=500000.0),
}
RMS_EPS = 1e-5
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}
PROMPT_LEN = 8


class RMSNorm(torch.nn.Module):
    def __init__(self, n, dtype):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(n, dtype=dtype))

    def forward(self, x):
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + RMS_EPS)
        return self.weight * x32.to(x.dtype)


def rotate(x, cos, sin):
    """Rotary embedding with the head split in halves (Llama's layout in Hugging Face checkpoints)."""
    half = x.shape[-1] // 2
    turned = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + turned * sin


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
        shape = (1, self.kv_heads, c["max_seq"], self.head_dim)
        self.register_buffer("k_cache", torch.zeros(shape, dtype=dtype))
        self.register_buffer("v_cache", torch.zeros(shape, dtype=dtype))

    def forward(self, x, cos, sin, pos, visible):
        t = x.shape[1]
        q = self.q_proj(x).view(1, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(1, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(1, t, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        self.k_cache.index_copy_(2, pos, k)
        self.v_cache.index_copy_(2, pos, v)
        # Grouped-query heads: the query heads that share a kv head become
        # rows of one attention with it, so the cache is never repeated;
        # row g * t + i is query i, which sees the cache up to its position.
        # One scaled_dot_product_attention call, which gc runs as its fused
        # attention step, reading the cache's prefix the mask keeps.
        group = self.heads // self.kv_heads
        q = q.reshape(1, self.kv_heads, group * t, self.head_dim)
        out = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache,
                                             attn_mask=visible.repeat(group, 1))
        out = out.contiguous().view(1, self.heads, t, self.head_dim)  # a GPU's SDPA: other strides
        return self.o_proj(out.transpose(1, 2).reshape(1, t, -1))


class Layer(torch.nn.Module):
    def __init__(self, c, dtype):
        super().__init__()
        self.attn_norm = RMSNorm(c["hidden"], dtype)
        self.attn = Attention(c, dtype)
        self.mlp_norm = RMSNorm(c["hidden"], dtype)
        self.gate_proj = torch.nn.Linear(c["hidden"], c["intermediate"], bias=False, dtype=dtype)
        self.up_proj = torch.nn.Linear(c["hidden"], c["intermediate"], bias=False, dtype=dtype)
        self.down_proj = torch.nn.Linear(c["intermediate"], c["hidden"], bias=False, dtype=dtype)

    def forward(self, x, cos, sin, pos, visible):
        x = x + self.attn(self.attn_norm(x), cos, sin, pos, visible)
        h = self.mlp_norm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class Decoder(torch.nn.Module):
    def __init__(self, c, dtype):
        super().__init__()
        self.head_dim = c["hidden"] // c["heads"]
        self.max_seq, self.theta = c["max_seq"], c["rope_theta"]
        self.embed = torch.nn.Embedding(c["vocab"], c["hidden"], dtype=dtype)
        self.layers = torch.nn.ModuleList(Layer(c, dtype) for _ in range(c["layers"]))
        self.norm = RMSNorm(c["hidden"], dtype)
        self.lm_head = torch.nn.Linear(c["hidden"], c["vocab"], bias=False, dtype=dtype)

    def forward(self, tokens, pos):
        x = self.embed(tokens)
        exponents = torch.arange(0, self.head_dim, 2, dtype=torch.float32, device=pos.device) / self.head_dim
        freqs = pos.float()[:, None] / (self.theta ** exponents)[None, :]
        angles = torch.cat([freqs, freqs], dim=-1)
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
        # Query i sees the cache up to its own position: [T, max_seq].
        visible = torch.arange(self.max_seq, device=pos.device)[None, :] <= pos[:, None]
        for layer in self.layers:
            x = layer(x, cos, sin, pos, visible)
        return self.lm_head(self.norm(x))


def is_cache(fqn):
    return fqn.endswith("k_cache") or fqn.endswith("v_cache")


def recipe(fqn, shape, dtype):
    numel = int(np.prod(shape))
    kind = "bf16" if dtype == torch.bfloat16 else "f32"
    if fqn.endswith("norm.weight"):
        lo, hi = 0.9, 1.1
    else:
        lo = -1.0 / shape[-1] ** 0.5
        hi = -lo
    return {"key": "llm/" + fqn, "numel": numel, "lo": lo, "hi": hi, "dtype": kind}


def value_bytes(fqn, shape, dtype):
    """A weight's recipe values, or a zero cache, as the archive stores them."""
    if is_cache(fqn):
        return bytes(int(np.prod(shape)) * torch.tensor([], dtype=dtype).element_size())
    return weightgen_bf16.encode(recipe(fqn, shape, dtype))


def unwritten(c, dtype):
    with torch.device("meta"):
        m = Decoder(c, dtype)
    return m.to_empty(device="cpu").eval()


def export_program(c, dtype, decode, path):
    """torch.export.save of one program with one-element stand-ins for the weights and buffers."""
    model = unwritten(c, dtype)
    t = 1 if decode else PROMPT_LEN
    args = (torch.zeros(1, t, dtype=torch.int64), torch.arange(t, dtype=torch.int64))
    dims = None
    if not decode:
        length = torch.export.Dim("T", min=1, max=c["max_seq"])
        dims = {"tokens": {1: length}, "pos": {0: length}}
    with torch.no_grad():
        ep = torch.export.export(model, args, dynamic_shapes=dims)
    for n in ep.graph.nodes:  # keep machine paths out of the archive
        n.meta.pop("stack_trace", None)
    for name, value in ep.state_dict.items():
        stand_in = torch.zeros(1, dtype=value.dtype)
        ep.state_dict[name] = torch.nn.Parameter(stand_in) if isinstance(value, torch.nn.Parameter) \
            else stand_in
    torch.export.save(ep, path)
    return {name: list(p.shape) for name, p in model.state_dict().items()}


def write_program(c, dtype, decode, out_path, skeleton=None):
    """Exports one program (or takes the export `skeleton` made before), then
    rewrites its archive with every weight streamed in."""
    w = llama_archive
    tmp = skeleton or out_path + ".skeleton.pt2"
    if skeleton:
        shapes = {name: list(p.shape) for name, p in unwritten(c, dtype).state_dict().items()}
    else:
        shapes = export_program(c, dtype, decode, tmp)
    with zipfile.ZipFile(tmp) as skel:
        infos = skel.infolist()
        root = infos[0].filename.split("/")[0] + "/"
        out_root = os.path.basename(out_path).removesuffix(".pt2") + "/"
        config_name = root + "data/weights/model_weights_config.json"
        config = json.loads(skel.read(config_name))
        by_file = {}
        for fqn, entry in config["config"].items():
            entry["tensor_meta"] = w.tensor_meta(entry["tensor_meta"], shapes[fqn])
            by_file[root + "data/weights/" + entry["path_name"]] = fqn
        part = out_path + ".part"
        with zipfile.ZipFile(part, "w", allowZip64=True) as out:
            for info in infos:
                name = out_root + info.filename[len(root):]
                if info.filename in by_file:
                    fqn = by_file[info.filename]
                    w.write_entry(out, name, value_bytes(fqn, shapes[fqn], dtype))
                elif info.filename == config_name:
                    w.write_entry(out, name, json.dumps(config).encode())
                elif info.filename.endswith(".data/serialization_id"):
                    ident = hashlib.sha256(json.dumps([c, str(dtype), decode], sort_keys=True).encode())
                    w.write_entry(out, name, ident.hexdigest()[:info.file_size].encode())
                else:
                    w.write_entry(out, name, skel.read(info))
    if not skeleton:
        os.remove(tmp)
    os.replace(part, out_path)


def eager_model(c, dtype):
    """The module with the recipes' values in memory, for PyTorch's reference."""
    model = unwritten(c, dtype)
    state = {}
    for fqn, p in model.state_dict().items():
        raw = np.frombuffer(bytearray(value_bytes(fqn, list(p.shape), dtype)),
                            dtype=np.int16 if dtype == torch.bfloat16 else np.float32)
        state[fqn] = torch.from_numpy(raw.copy()).view(dtype).reshape(p.shape)
    model.load_state_dict(state)
    return model


def mapped_model(archive, c, dtype):
    """The module with every weight a view of the archive's bytes (no copy:
    make-llama-archive.py's reader) and a zero cache of its own."""
    with torch.device("meta"):
        model = Decoder(c, dtype)
    raw = np.memmap(archive, dtype=np.uint8, mode="r")
    with zipfile.ZipFile(archive) as z, open(archive, "rb") as f:
        root = z.infolist()[0].filename.split("/")[0] + "/"
        config = json.loads(z.read(root + "data/weights/model_weights_config.json"))["config"]
        offsets = {}
        for info in z.infolist():
            f.seek(info.header_offset)
            head = f.read(30)
            skip = int.from_bytes(head[26:28], "little") + int.from_bytes(head[28:30], "little")
            offsets[info.filename] = info.header_offset + 30 + skip
    state = {}
    for fqn, entry in config.items():
        shape = [d["as_int"] for d in entry["tensor_meta"]["sizes"]]
        if is_cache(fqn):
            state[fqn] = torch.zeros(shape, dtype=dtype)
            continue
        start = offsets[root + "data/weights/" + entry["path_name"]]
        count = int(np.prod(shape))
        bits = raw[start:start + count * (2 if dtype == torch.bfloat16 else 4)]
        bits = bits.view(np.int16 if dtype == torch.bfloat16 else np.float32).reshape(shape)
        with warnings.catch_warnings():  # mapped read-only; torch never writes weights
            warnings.simplefilter("ignore")
            state[fqn] = torch.from_numpy(bits).view(dtype)
    model.load_state_dict(state, assign=True)
    return model.eval()


def prompt(c):
    return np.array([(i * 37 + 11) % c["vocab"] for i in range(PROMPT_LEN)], dtype=np.int64)


def to_numpy(t):
    t = t.detach().contiguous()
    return t.view(torch.int16).numpy().view("V2") if t.dtype == torch.bfloat16 else t.numpy()


def save_run(d, ins, out):
    os.makedirs(d, exist_ok=True)
    for i, a in enumerate(ins):
        np.save(os.path.join(d, "in%d.npy" % i), to_numpy(a))
    np.save(os.path.join(d, "out0.npy"), to_numpy(out))


def write_positions(model, cache, c, outdir):
    """One decode step at the cache's first, middle and last position, from
    the prefill's cache: DIR/<pos>/run0/{in0,in1,out0}.npy, and as the cache
    to start from DIR/<pos>/cache.<fqn>.npy, the prefill's with NaN at every
    position after <pos>. The step's mask hides those, so a step that reads
    only the cache's valid prefix gives PyTorch's logits (computed from the
    clean cache), and one that reads past it gives NaN."""
    for pos in (0, c["max_seq"] // 2, c["max_seq"] - 1):
        for fqn, b in model.named_buffers():
            b.copy_(cache[fqn])
        args = (torch.tensor([[PROMPT_LEN]]), torch.tensor([pos]))
        d = os.path.join(outdir, str(pos))
        save_run(os.path.join(d, "run0"), args, model(*args))
        for fqn, b in cache.items():
            poisoned = b.clone()
            poisoned[:, :, pos + 1:] = float("nan")
            np.save(os.path.join(d, "cache.%s.npy" % fqn), to_numpy(poisoned))
    for fqn, b in model.named_buffers():
        b.copy_(cache[fqn])


def write_reference(c, dtype, outdir, count, stage_steps=4):
    model = eager_model(c, dtype)
    ids = torch.from_numpy(prompt(c))
    np.save(os.path.join(outdir, "prompt.npy"), ids.numpy())
    tokens, rows = [], []
    with torch.no_grad():
        args = (ids[None], torch.arange(PROMPT_LEN))
        logits = model(*args)
        save_run(os.path.join(outdir, "prefill", "run0"), args, logits)
        after = {fqn: b.clone() for fqn, b in model.named_buffers()}
        for fqn, b in after.items():
            np.save(os.path.join(outdir, "prefill", "buffer_after.%s.npy" % fqn), to_numpy(b))
        write_positions(model, after, c, os.path.join(outdir, "positions"))
        for k in range(count):
            row = logits[0, -1]
            tokens.append(int(row.argmax()))
            rows.append(row.float())
            if k + 1 == count:
                break
            args = (torch.tensor([[tokens[-1]]]), torch.tensor([PROMPT_LEN + k]))
            logits = model(*args)
            if k < stage_steps:
                save_run(os.path.join(outdir, "decode", "run%d" % k), args, logits)
    np.save(os.path.join(outdir, "tokens.npy"), np.array(tokens, dtype=np.int64))
    # The same as text, for the C example's test.
    with open(os.path.join(outdir, "prompt.txt"), "w") as f:
        f.write(",".join(str(int(t)) for t in ids) + "\n")
    with open(os.path.join(outdir, "tokens.txt"), "w") as f:
        f.write(" ".join(str(t) for t in tokens) + "\n")
    np.save(os.path.join(outdir, "logits.npy"), torch.stack(rows).numpy())


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", choices=sorted(PRESETS), required=True)
    p.add_argument("--dtype", choices=sorted(DTYPES), default="float32")
    p.add_argument("--max-seq", type=int, help="the cache's length (default: the preset's)")
    p.add_argument("--layers", type=int, help="fewer layers than the preset's (for quick runs)")
    p.add_argument("-o", dest="out", required=True, help="the folder to write")
    p.add_argument("--programs", nargs="+", choices=["prefill", "decode"], default=["prefill", "decode"],
                   help="the programs to write (default both: the 8B preset's are 16 GB each in bf16)")
    p.add_argument("--reference", type=int, metavar="N", help="greedy tokens to decode in PyTorch eager")
    p.add_argument("--skeletons-only", action="store_true",
                   help="write only the exports without weights, DIR/<program>.skeleton.pt2")
    p.add_argument("--from-skeletons", metavar="SDIR",
                   help="take the exports from SDIR/<program>.skeleton.pt2 (--skeletons-only's) "
                        "instead of exporting: for a machine whose torch does not export the model")
    a = p.parse_args()
    c = dict(PRESETS[a.preset])
    if a.max_seq:
        c["max_seq"] = a.max_seq
    if a.layers:
        c["layers"] = a.layers
    if a.reference and PROMPT_LEN + a.reference > c["max_seq"]:
        p.error("--reference %d does not fit a cache of %d after a prompt of %d"
                % (a.reference, c["max_seq"], PROMPT_LEN))
    if a.reference and len(set(a.programs)) < 2:
        p.error("--reference runs both programs: leave --programs out")
    dtype = DTYPES[a.dtype]
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(0)
    for decode, name in ((False, "prefill"), (True, "decode")):
        if name not in a.programs:
            continue
        path = os.path.join(a.out, name + ".pt2")
        if a.skeletons_only:
            export_program(c, dtype, decode, path.removesuffix(".pt2") + ".skeleton.pt2")
        else:
            skeleton = a.from_skeletons and os.path.join(a.from_skeletons, name + ".skeleton.pt2")
            write_program(c, dtype, decode, path, skeleton)
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(dict(c, dtype=a.dtype, prompt=prompt(c).tolist(), torch=torch.__version__,
                       script="utils/make-llm-models.py"), f, indent=1, sort_keys=True)
        f.write("\n")
    if a.reference:
        write_reference(c, dtype, a.out, a.reference)


if __name__ == "__main__":
    main()
