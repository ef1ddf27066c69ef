"""The corpus models (test corpus make_corpus.py) rebuilt for PyTorch 1.13 eager.

PyTorch 1.13 cannot load the torch.export archives the corpus holds, so the
modules are defined again here, with the same parameter and buffer names, and
their weights are read straight out of the archive's zip. Used by
bench-latency.py as the eager baseline; not a test dependency.

build(name, corpus_dir) returns the module in the mode the corpus exported it.
"""
import json
import math
import os
import zipfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

# torch.export's serialized ScalarType codes.
_DTYPES = {
    1: torch.uint8, 2: torch.int8, 3: torch.int16, 4: torch.int32, 5: torch.int64,
    6: torch.float16, 7: torch.float32, 8: torch.float64, 12: torch.bool, 13: torch.bfloat16,
}
_CONFIGS = ("model/data/weights/model_weights_config.json",
            "model/data/constants/model_constants_config.json")


def _tensor(raw, meta):
    dtype = _DTYPES[meta["dtype"]]
    sizes = [s["as_int"] for s in meta["sizes"]]
    strides = [s["as_int"] for s in meta["strides"]]
    offset = meta["storage_offset"]["as_int"]
    # bool has no numpy twin of the same width, so the bytes go through uint8.
    flat = torch.from_numpy(np.frombuffer(raw, dtype=np.uint8).copy())
    flat = flat if dtype == torch.bool else flat.view(dtype)
    return torch.as_strided(flat, sizes, strides, offset).clone()


def archive_state(path):
    """Parameters, buffers and constants of a .pt2 archive, by their module path."""
    state = {}
    with zipfile.ZipFile(path) as z:
        for config in _CONFIGS:
            folder = os.path.dirname(config)
            for name, entry in json.loads(z.read(config))["config"].items():
                if entry["use_pickle"]:
                    raise ValueError(f"{path}: {name} is pickled; only raw tensors are read")
                state[name] = _tensor(z.read(f"{folder}/{entry['path_name']}"), entry["tensor_meta"])
    return state


def causal_attention(q, k, v):
    """softmax(q k^T / sqrt(d) + causal mask) v: the math form of 1.13's missing SDPA."""
    t = q.shape[-2]
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    mask = torch.ones(t, t, dtype=torch.bool).tril()
    return att.masked_fill(~mask, float("-inf")).softmax(dim=-1) @ v


class MLP(nn.Module):
    def __init__(s, i=64, h=256, o=10):
        super().__init__(); s.l1 = nn.Linear(i, h); s.act = nn.GELU(); s.l2 = nn.Linear(h, o)

    def forward(s, x): return torch.log_softmax(s.l2(s.act(s.l1(x))), dim=-1)


class ConvNet(nn.Module):
    def __init__(s):
        super().__init__()
        s.f = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))

    def forward(s, x): return s.f(x)


class Block(nn.Module):
    """TinyLM's pre-norm transformer block."""

    def __init__(s, d=64, h=4):
        super().__init__(); s.h = h; s.ln1 = nn.LayerNorm(d); s.qkv = nn.Linear(d, 3 * d); s.proj = nn.Linear(d, d)
        s.ln2 = nn.LayerNorm(d); s.fc1 = nn.Linear(d, 4 * d); s.fc2 = nn.Linear(4 * d, d)

    def forward(s, x):
        B, T, C = x.shape
        q, k, v = s.qkv(s.ln1(x)).split(C, dim=-1)
        q, k, v = [t.view(B, T, s.h, C // s.h).transpose(1, 2) for t in (q, k, v)]
        y = causal_attention(q, k, v).transpose(1, 2).reshape(B, T, C)
        x = x + s.proj(y)
        return x + s.fc2(F.gelu(s.fc1(s.ln2(x)), approximate="tanh"))


class TinyLM(nn.Module):
    def __init__(s, vocab=512, d=64, T=32, n=2):
        super().__init__(); s.tok = nn.Embedding(vocab, d); s.pos = nn.Embedding(T, d)
        s.blocks = nn.ModuleList([Block(d) for _ in range(n)]); s.ln = nn.LayerNorm(d)
        s.head = nn.Linear(d, vocab, bias=False)

    def forward(s, idx):
        x = s.tok(idx) + s.pos(torch.arange(idx.shape[1]))
        for b in s.blocks:
            x = b(x)
        return s.head(s.ln(x))


class SDPA(nn.Module):
    def __init__(s, d=64, h=4):
        super().__init__(); s.h = h; s.qkv = nn.Linear(d, 3 * d); s.o = nn.Linear(d, d)

    def forward(s, x):
        B, T, C = x.shape
        q, k, v = s.qkv(x).view(B, T, 3, s.h, C // s.h).permute(2, 0, 3, 1, 4).unbind(0)
        return s.o(causal_attention(q, k, v).transpose(1, 2).reshape(B, T, C))


def transformer_encoder():
    layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)


class Conv1D(nn.Module):
    """GPT-2's projection: a linear layer that stores its weight as [in, out]."""

    def __init__(s, n_in, n_out):
        super().__init__(); s.weight = nn.Parameter(torch.empty(n_in, n_out)); s.bias = nn.Parameter(torch.empty(n_out))

    def forward(s, x):
        return torch.addmm(s.bias, x.reshape(-1, x.shape[-1]), s.weight).view(*x.shape[:-1], -1)


def gelu_new(x):
    """GPT-2's tanh GELU, spelled out the way the transformers library computes it."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class GPT2Attention(nn.Module):
    def __init__(s, d, h):
        super().__init__(); s.h = h; s.c_attn = Conv1D(d, 3 * d); s.c_proj = Conv1D(d, d)

    def forward(s, x):
        B, T, C = x.shape
        q, k, v = [t.view(B, T, s.h, C // s.h).transpose(1, 2) for t in s.c_attn(x).split(C, dim=-1)]
        return s.c_proj(causal_attention(q, k, v).transpose(1, 2).reshape(B, T, C))


class GPT2MLP(nn.Module):
    def __init__(s, d):
        super().__init__(); s.c_fc = Conv1D(d, 4 * d); s.c_proj = Conv1D(4 * d, d)

    def forward(s, x): return s.c_proj(gelu_new(s.c_fc(x)))


class GPT2Block(nn.Module):
    def __init__(s, d, h):
        super().__init__(); s.ln_1 = nn.LayerNorm(d); s.attn = GPT2Attention(d, h)
        s.ln_2 = nn.LayerNorm(d); s.mlp = GPT2MLP(d)

    def forward(s, x):
        x = x + s.attn(s.ln_1(x))
        return x + s.mlp(s.ln_2(x))


class GPT2Body(nn.Module):
    def __init__(s, vocab, positions, d, h, n):
        super().__init__(); s.wte = nn.Embedding(vocab, d); s.wpe = nn.Embedding(positions, d)
        s.h = nn.ModuleList([GPT2Block(d, h) for _ in range(n)]); s.ln_f = nn.LayerNorm(d)

    def forward(s, ids):
        x = s.wte(ids) + s.wpe(torch.arange(ids.shape[1]))
        for b in s.h:
            x = b(x)
        return s.ln_f(x)


class GPT2LMHead(nn.Module):
    def __init__(s, vocab=1024, positions=64, d=128, h=4, n=2):
        super().__init__(); s.transformer = GPT2Body(vocab, positions, d, h, n)
        s.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(s, ids): return s.lm_head(s.transformer(ids))


class GPT2(nn.Module):
    """The corpus wraps the transformers model in a module with one child, m."""

    def __init__(s):
        super().__init__(); s.m = GPT2LMHead()

    def forward(s, ids): return s.m(ids)


def mobilenet_v3_small():
    import torchvision
    return torchvision.models.mobilenet_v3_small(num_classes=100)


# name -> (constructor, exported in train mode)
MODELS = {
    "convnet": (ConvNet, False),
    "convnet_train": (ConvNet, True),
    "gpt2_tiny": (GPT2, False),
    "mlp": (MLP, True),
    "mlp_dynamic": (MLP, False),
    "mobilenet_v3_small": (mobilenet_v3_small, False),
    "sdpa_attention": (SDPA, True),
    "tinylm": (TinyLM, True),
    "transformer_encoder": (transformer_encoder, False),
}


def build(name, corpus_dir):
    """The model with the archive's weights, in the mode it was exported in."""
    make, train = MODELS[name]
    mod = make()
    mod.load_state_dict(archive_state(os.path.join(corpus_dir, name, "model.pt2")), strict=True)
    return mod.train(train), train
