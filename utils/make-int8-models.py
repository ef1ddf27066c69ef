#!/usr/bin/env python3
"""Makes int8 models with PyTorch's export quantization flow (issue 36):
torch.export, prepare_pt2e with torchao's X86InductorQuantizer and its default
configuration (uint8 activations per tensor, int8 weights per channel, static),
calibration, convert_pt2e, torch.export again.

usage:
  make-int8-models.py small OUTDIR
      the small test models, OUTDIR/int8_<name>/ for name in convnet (conv,
      batch norm, relu, pooling, linear), mlp (two linears), attention (a
      one-layer encoder: q/k/v linears, softmax attention, layer norms, a GELU
      feed-forward), resblock (ResNet's residual block: conv, conv, the sum
      with the shortcut, ReLU) and bert2 (the bert below at 2 layers, hidden
      size 32, 4 heads: linears on 3-d activations), with random weights
      from a fixed seed
  make-int8-models.py large OUTDIR [resnet50] [bert]
      the benchmark models, random weights from a fixed seed, each twice:
      OUTDIR/<name>/ the float32 program and OUTDIR/<name>_int8/ the int8 one:
      resnet50 (torchvision's, one 224x224 image) and bert (a BERT-base
      encoder in plain torch: 12 layers, hidden size 768, 12 heads, a
      3072-wide feed-forward, vocabulary 30522; one 128-token sequence of
      ids)

Each int8 OUTDIR/<model>/ holds model.pt2 (the converted program), in<i>.npy,
out<i>.npy (the converted program run eagerly: the quantize/dequantize
arithmetic of torch.ao.quantization.fx._decomposed), inductor_out<i>.npy
(torch.compile of the converted program with Inductor's freezing, which fuses
the int8 patterns; --no-inductor skips it) and provenance.json (versions, and
`atol`: one quantization step at the output's range, (max - min) / 255).

Calibration runs the model on 4 batches: the inputs plus Gaussian noise of a
tenth of their spread (float inputs), or the inputs themselves (integer ones).
Run it in a venv with torch and torchao (the test suite does not need them:
it uses the committed files in test/Models/Inputs/int8_*).
"""
import argparse
import json
import math
import os
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")

from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e  # noqa: E402
import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer as xiq  # noqa: E402


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.b1 = torch.nn.BatchNorm2d(16)
        self.c2 = torch.nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.b2 = torch.nn.BatchNorm2d(32)
        self.fc = torch.nn.Linear(32, 10)

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        y = torch.nn.functional.max_pool2d(y, 2)
        y = torch.relu(self.b2(self.c2(y)))
        return self.fc(torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1))


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(64, 128)
        self.l2 = torch.nn.Linear(128, 10)

    def forward(self, x):
        return self.l2(torch.relu(self.l1(x)))


class Attention(torch.nn.Module):
    """One encoder layer as BERT has it (post-norm, GELU feed-forward)."""

    def __init__(self, d=32, heads=4, ffn=64):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (torch.nn.Linear(d, d) for _ in range(4))
        self.n1, self.n2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.f1, self.f2 = torch.nn.Linear(d, ffn), torch.nn.Linear(ffn, d)

    def split(self, t):
        b, s, d = t.shape
        return t.view(b, s, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d // self.heads), dim=-1) @ v
        x = self.n1(x + self.o(a.transpose(1, 2).reshape(b, s, d)))
        return self.n2(x + self.f2(torch.nn.functional.gelu(self.f1(x))))


class Bert(torch.nn.Module):
    def __init__(self, vocab=30522, d=768, heads=12, ffn=3072, layers=12, positions=512):
        super().__init__()
        self.words, self.positions = torch.nn.Embedding(vocab, d), torch.nn.Embedding(positions, d)
        self.norm = torch.nn.LayerNorm(d)
        self.layers = torch.nn.ModuleList(Attention(d, heads, ffn) for _ in range(layers))

    def forward(self, ids):
        x = self.norm(self.words(ids) + self.positions(torch.arange(ids.shape[1]))[None])
        for layer in self.layers:
            x = layer(x)
        return x


class ResBlock(torch.nn.Module):
    """A stem convolution, then a residual block whose second convolution's
    result is summed with the block's input before the ReLU (batch norms
    folded away, as in resnet50 below), and a convolution that reads the
    block's result, so that the sum is requantized."""

    def __init__(self, c=16):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, c, 3, padding=1)
        self.c1 = torch.nn.Conv2d(c, c, 3, padding=1)
        self.c2 = torch.nn.Conv2d(c, c, 3, padding=1)
        self.c3 = torch.nn.Conv2d(c, c, 1)
        self.fc = torch.nn.Linear(c, 10)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        y = self.c2(torch.relu(self.c1(x)))
        y = torch.relu(self.c3(torch.relu(y + x)))
        return self.fc(torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1))


def fold_batch_norms(module):
    """Each Conv2d directly followed by a BatchNorm2d in the same parent,
    folded into one conv (eval mode), as convert_pt2e would fold them."""
    for parent in module.modules():
        names = list(parent._modules)
        for a, b in zip(names, names[1:]):
            conv, bn = parent._modules[a], parent._modules[b]
            if isinstance(conv, torch.nn.Conv2d) and isinstance(bn, torch.nn.BatchNorm2d):
                parent._modules[a] = torch.nn.utils.fusion.fuse_conv_bn_eval(conv, bn)
                parent._modules[b] = torch.nn.Identity()
    return module


def bottleneck_forward(block, x):
    """torchvision's Bottleneck with its batch norms folded away and a ReLU
    module per call: the block calls one ReLU three times, which makes
    the quantizer's ReLU partition one with three outputs."""
    shortcut = x if block.downsample is None else block.downsample(x)
    y = block.relu1(block.conv1(x))
    y = block.relu2(block.conv2(y))
    return block.relu3(block.conv3(y) + shortcut)


def resnet50():
    import types

    import torchvision
    model = fold_batch_norms(torchvision.models.resnet50().eval())
    for m in model.modules():
        if isinstance(m, torchvision.models.resnet.Bottleneck):
            m.relu1, m.relu2, m.relu3 = (torch.nn.ReLU() for _ in range(3))
            m.forward = types.MethodType(bottleneck_forward, m)
    return model


SMALL = {
    "convnet": (ConvNet, lambda: (torch.randn(2, 3, 16, 16),)),
    "mlp": (MLP, lambda: (torch.randn(4, 64),)),
    "attention": (Attention, lambda: (torch.randn(2, 8, 32),)),
    "resblock": (ResBlock, lambda: (torch.randn(2, 3, 16, 16),)),
    "bert2": (lambda: Bert(vocab=64, d=32, heads=4, ffn=64, layers=2, positions=16),
              lambda: (torch.randint(0, 64, (1, 8)),)),
}
LARGE = {
    "resnet50": (resnet50, lambda: (torch.randn(1, 3, 224, 224),)),
    "bert": (Bert, lambda: (torch.randint(0, 30522, (1, 128)),)),
}


def calibration_batches(args, n=4):
    g = torch.Generator().manual_seed(1)
    for _ in range(n):
        yield tuple(a + 0.1 * a.std() * torch.randn(a.shape, generator=g) if a.is_floating_point() else a
                    for a in args)


def quantize(module, args):
    exported = torch.export.export(module, args).module()
    quantizer = xiq.X86InductorQuantizer()
    quantizer.set_global(xiq.get_default_x86_inductor_quantization_config())
    prepared = prepare_pt2e(exported, quantizer)
    for batch in calibration_batches(args):
        prepared(*batch)
    return convert_pt2e(prepared)


def outputs(result):
    flat = result if isinstance(result, (tuple, list)) else (result,)
    return [t.detach().numpy() for t in flat]


def write_float(outdir, module, args):
    os.makedirs(outdir, exist_ok=True)
    with torch.no_grad():
        ep = torch.export.export(module, args)
        torch.export.save(ep, os.path.join(outdir, "model.pt2"))
        for i, a in enumerate(args):
            np.save(os.path.join(outdir, f"in{i}.npy"), a.numpy())
        for i, o in enumerate(outputs(ep.module()(*args))):
            np.save(os.path.join(outdir, f"out{i}.npy"), o)
    print(f"wrote {outdir}")


def write(outdir, converted, args, inductor):
    os.makedirs(outdir, exist_ok=True)
    with torch.no_grad():
        ep = torch.export.export(converted, args)
        torch.export.save(ep, os.path.join(outdir, "model.pt2"))
        for i, a in enumerate(args):
            np.save(os.path.join(outdir, f"in{i}.npy"), a.numpy())
        want = outputs(ep.module()(*args))
        for i, o in enumerate(want):
            np.save(os.path.join(outdir, f"out{i}.npy"), o)
        if inductor:
            torch._inductor.config.freezing = True
            compiled = torch.compile(ep.module())
            for i, o in enumerate(outputs(compiled(*args))):
                np.save(os.path.join(outdir, f"inductor_out{i}.npy"), o)
    import torchao
    info = {"torch": torch.__version__, "torchao": torchao.__version__,
            "quantizer": "X86InductorQuantizer, get_default_x86_inductor_quantization_config()",
            "atol": [float(o.max() - o.min()) / 255 for o in want]}
    with open(os.path.join(outdir, "provenance.json"), "w") as f:
        json.dump(info, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {outdir}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("small")
    s.add_argument("outdir")
    s.add_argument("models", nargs="*", default=list(SMALL))
    q = sub.add_parser("large")
    q.add_argument("outdir")
    q.add_argument("models", nargs="*", default=list(LARGE))
    for p in (s, q):
        p.add_argument("--no-inductor", dest="inductor", action="store_false")
    a = ap.parse_args()
    for name in a.models:
        torch.manual_seed(0)
        cls, make_args = (SMALL if a.cmd == "small" else LARGE)[name]
        module, args = cls().eval(), make_args()
        if a.cmd == "small":
            qdir = os.path.join(a.outdir, f"int8_{name}")
        else:
            write_float(os.path.join(a.outdir, name), module, args)
            qdir = os.path.join(a.outdir, f"{name}_int8")
        write(qdir, quantize(module, args), args, a.inductor)


if __name__ == "__main__":
    main()
