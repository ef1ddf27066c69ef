#!/usr/bin/env python3
"""One decode step's attention alone, as gc compiles it, per build.

usage (with torch, e.g. /work/venv-py/bin/python):
  utils/bench/attention-decode.py --build BUILD [--build BUILD2 ...]
      [--dtype bfloat16|float32] [--valid 128] [--max-seq 2048] [--runs 200]
      [--threads 2] [--work DIR]

The attention of one layer of utils/make-llm-models.py's 1B preset at a
decode step: 32 query heads over 8 key/value heads of 64, the 4 query
heads of a group as rows of one scaled_dot_product_attention over the
whole static cache ([1, 8, max_seq, 64] keys and values) with a boolean
mask that keeps the first --valid positions (a step at position
valid - 1). The module is exported once; each BUILD compiles it
(gc-compile) and times it with gcrt-run --bench RUNS --profile on
--threads threads. Prints per build the bench line (the whole run: the
attention and the few copies around it) and the summed minimum time of
the attention's steps: the fused step where the build keeps the call
whole, or the products and softmax it decomposes into.
"""
import argparse
import os
import re
import subprocess

import numpy as np
import torch
import torch.nn.functional as F

HEADS, KV_HEADS, HEAD = 32, 8, 64


class Attention(torch.nn.Module):
    def forward(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def to_numpy(t):
    t = t.contiguous()
    return t.view(torch.int16).numpy().view("V2") if t.dtype == torch.bfloat16 else t.numpy()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", action="append", required=True)
    p.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float32"])
    p.add_argument("--valid", type=int, default=128)
    p.add_argument("--max-seq", type=int, default=2048)
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--work", default="/tmp/attention-decode")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    dtype = getattr(torch, a.dtype)
    group = HEADS // KV_HEADS
    g = torch.Generator().manual_seed(0)
    q = torch.randn(1, KV_HEADS, group, HEAD, generator=g).to(dtype)
    k = torch.randn(1, KV_HEADS, a.max_seq, HEAD, generator=g).to(dtype)
    v = torch.randn(1, KV_HEADS, a.max_seq, HEAD, generator=g).to(dtype)
    mask = (torch.arange(a.max_seq) < a.valid).expand(group, a.max_seq).contiguous()
    args = (q, k, v, mask)
    model = os.path.join(a.work, "attention-%s.pt2" % a.dtype)
    torch.export.save(torch.export.export(Attention(), args), model)
    inputs = []
    for i, t in enumerate(args):
        inputs.append(os.path.join(a.work, "in%d.npy" % i))
        np.save(inputs[-1], to_numpy(t))
    print("attention of one decode step: %s, query [1, %d, %d, %d], cache %d, valid %d, "
          "%d threads, %d runs" % (a.dtype, KV_HEADS, group, HEAD, a.max_seq, a.valid,
                                   a.threads, a.runs))
    for build in a.build:
        package = os.path.join(a.work, "attention-%d.gcpkg" % a.build.index(build))
        subprocess.run([os.path.join(build, "bin", "gc-compile"), model, "-o", package],
                       check=True, stderr=subprocess.DEVNULL)
        out = subprocess.run([os.path.join(build, "bin", "gcrt-run"), package, "--threads",
                              str(a.threads), "--bench", str(a.runs), "--profile"] + inputs,
                             check=True, capture_output=True, text=True)
        text = out.stdout + out.stderr
        bench = re.search(r"bench: .*", text).group(0)
        # Profile rows: step, kind, name, mean us, min us, share.
        steps = re.findall(r"^\s*\d+\s+(\w+)\s+(\S+)\s+([\d.]+)\s+([\d.]+)\s+[\d.]+%$", text,
                           re.M)
        names = ", ".join(name for _, name, _, _ in steps)
        total = sum(float(m) for _, _, _, m in steps)
        print("%s\n  %s\n  steps' minimum times summed: %.1f us (%s)" % (build, bench, total,
                                                                        names))


if __name__ == "__main__":
    main()
