#!/usr/bin/env python3
"""Exports the test models for state kept between runs (issue 14, "State and
aliasing") with the torch that runs this script, and PyTorch's results for
several calls in a row on one module, so that each call sees the buffers the
previous one left:

  bn_train  a 3x3 convolution, BatchNorm2d in training mode and a linear
            layer; its running_mean, running_var and num_batches_tracked
            change on every call. Two calls, on two different inputs.
  kv_cache  one decoder attention layer (4 heads of 8) with registered
            buffers k_cache and v_cache [1, 4, 8, 8]; each call writes the
            step's key and value at position `pos` (index_copy_) and attends
            to positions 0..pos. Four steps, pos = 0..3.
  input_mutation  doubles its user input x in place and returns x + y; one
            call, after which x (input_after.x.npy) holds the doubled value.
  aliased_output  returns x transposed (a view of its input), x + 1 and
            x[1] (another view); one call.

usage: make-state-models.py OUTDIR [MODEL ...]

Writes OUTDIR/<model>/: model.pt2 (exported from the module's initial state),
run<k>/in<i>.npy and run<k>/out<i>.npy for call k, run<k>/input_after.<name>.npy
for each user input the call changed, buffer_after.<fqn>.npy (each buffer the
calls changed, after the last call) and provenance.json.
Needs torch; the test suite does not: it uses the committed files in
test/Models/Inputs/<model>.
"""
import argparse
import copy
import json
import os

import numpy as np
import torch


class BnTrain(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.fc = torch.nn.Linear(4, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        return self.fc(y.mean(dim=(2, 3)))


HEADS, HEAD_DIM, MAX_LEN = 4, 8, 8
EMBED = HEADS * HEAD_DIM


class KvCache(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(EMBED, 3 * EMBED)
        self.out = torch.nn.Linear(EMBED, EMBED)
        self.register_buffer("k_cache", torch.zeros(1, HEADS, MAX_LEN, HEAD_DIM))
        self.register_buffer("v_cache", torch.zeros(1, HEADS, MAX_LEN, HEAD_DIM))

    def forward(self, x, pos):
        # x: [1, 1, EMBED], the step's token; pos: int64 [1], its position.
        q, k, v = self.qkv(x).split(EMBED, dim=-1)
        heads = lambda t: t.view(1, 1, HEADS, HEAD_DIM).transpose(1, 2)
        q, k, v = heads(q), heads(k), heads(v)
        # Written in place at `pos`, as transformers' StaticCache does.
        self.k_cache.index_copy_(2, pos, k)
        self.v_cache.index_copy_(2, pos, v)
        scores = q @ self.k_cache.transpose(2, 3) / HEAD_DIM ** 0.5
        visible = torch.arange(MAX_LEN) <= pos
        scores = scores.masked_fill(~visible, float("-inf"))
        y = scores.softmax(dim=-1) @ self.v_cache
        return self.out(y.transpose(1, 2).reshape(1, 1, EMBED))


class InputMutation(torch.nn.Module):
    def forward(self, x, y):
        x.mul_(2)
        return x + y


class AliasedOutput(torch.nn.Module):
    def forward(self, x):
        return x.t(), x + 1, x[1]


def bn_train():
    model = BnTrain().train()
    runs = [(torch.randn(2, 3, 6, 6),), (torch.randn(2, 3, 6, 6) * 2 + 1,)]
    return model, runs


def kv_cache():
    model = KvCache().eval()
    runs = [(torch.randn(1, 1, EMBED), torch.tensor([p])) for p in range(4)]
    return model, runs


def input_mutation():
    return InputMutation(), [(torch.randn(3, 4), torch.randn(3, 4))]


def aliased_output():
    return AliasedOutput(), [(torch.randn(3, 4),)]


MODELS = {"bn_train": bn_train, "kv_cache": kv_cache, "input_mutation": input_mutation,
          "aliased_output": aliased_output}


def export(name, outdir):
    torch.manual_seed(0)
    model, runs = MODELS[name]()
    # Exported from copies, so that the calls below start from the same state.
    ep = torch.export.export(copy.deepcopy(model), copy.deepcopy(runs[0]))
    names = [s.arg.name for s in ep.graph_signature.input_specs
             if s.kind == torch.export.graph_signature.InputKind.USER_INPUT]
    for n in ep.graph.nodes:  # keep machine paths out of the archive
        n.meta.pop("stack_trace", None)
    out = os.path.join(outdir, name)
    os.makedirs(out, exist_ok=True)
    torch.export.save(ep, os.path.join(out, "model.pt2"))
    # torch.export leaves the in-place writes in the graph (gc functionalizes
    # them), so the mutated buffers are those the calls changed.
    before = {k: v.clone() for k, v in model.named_buffers()}
    with torch.no_grad():
        for k, args in enumerate(runs):
            d = os.path.join(out, "run%d" % k)
            os.makedirs(d, exist_ok=True)
            given = [a.clone() for a in args]
            for i, a in enumerate(given):
                np.save(os.path.join(d, "in%d.npy" % i), a.numpy())
            results = model(*args)
            for j, r in enumerate(results if isinstance(results, tuple) else (results,)):
                np.save(os.path.join(d, "out%d.npy" % j), r.numpy())
            for name, a, b in zip(names, args, given):
                if not torch.equal(a, b):
                    np.save(os.path.join(d, "input_after.%s.npy" % name), a.numpy())
    buffers = dict(model.named_buffers())
    mutated = sorted(k for k in buffers if not torch.equal(before[k], buffers[k]))
    for fqn in mutated:
        np.save(os.path.join(out, "buffer_after.%s.npy" % fqn), buffers[fqn].numpy())
    with open(os.path.join(out, "provenance.json"), "w") as f:
        json.dump({"torch": torch.__version__, "script": "utils/make-state-models.py",
                   "runs": len(runs), "mutated_buffers": mutated}, f, indent=1, sort_keys=True)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("models", nargs="*", help="any of %s (default: all)" % ", ".join(sorted(MODELS)))
    args = ap.parse_args()
    for name in args.models or sorted(MODELS):
        if name not in MODELS:
            ap.error("unknown model '%s'" % name)
        export(name, args.outdir)


if __name__ == "__main__":
    main()
