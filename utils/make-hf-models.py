#!/usr/bin/env python3
"""Exports tiny Hugging Face models (issue 14's test models) with the torch and
transformers that run this script: Llama, Mistral, Qwen2 and Phi causal LMs
(2 layers, hidden size 32, vocabulary 128, random weights) on one 16-token
sequence, and BERT with a dynamic batch (1 to 8) and sequence (2 to 64).

usage: make-hf-models.py OUTDIR [MODEL ...]

Writes OUTDIR/hf_<model>/: model.pt2, in<i>.npy (token ids) and out<i>.npy
(the model's logits, or BERT's last hidden state) for each input size, and
provenance.json (torch and transformers versions, the ops beyond ATen).
Needs torch and transformers; the test suite does not: it uses the committed
files in test/Models/Inputs/hf_<model>.
"""
import argparse
import json
import os

import numpy as np
import torch
import transformers

COMMON = dict(hidden_size=32, intermediate_size=64, num_attention_heads=4, num_hidden_layers=2,
              vocab_size=128, max_position_embeddings=128)
CONFIGS = {
    "llama": lambda: transformers.LlamaConfig(num_key_value_heads=2, **COMMON),
    "mistral": lambda: transformers.MistralConfig(num_key_value_heads=2, sliding_window=None, **COMMON),
    "qwen2": lambda: transformers.Qwen2Config(num_key_value_heads=2, **COMMON),
    "phi": lambda: transformers.PhiConfig(**COMMON),
    "bert": lambda: transformers.BertConfig(**COMMON),
}


class CausalLM(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, ids):
        return self.m(input_ids=ids, use_cache=False).logits


class Encoder(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, ids):
        return self.m(input_ids=ids).last_hidden_state


def export(kind, outdir):
    torch.manual_seed(0)
    cfg = CONFIGS[kind]()
    cfg._attn_implementation = "sdpa"
    if kind == "bert":
        model = Encoder(transformers.AutoModel.from_config(cfg)).eval()
        sizes = [(2, 16), (1, 5), (4, 33)]
        dynamic = {"ids": {0: torch.export.Dim("batch", min=1, max=8),
                           1: torch.export.Dim("seq", min=2, max=64)}}
    else:
        model = CausalLM(transformers.AutoModelForCausalLM.from_config(cfg)).eval()
        sizes = [(1, 16)]
        dynamic = None
    inputs = [torch.randint(0, COMMON["vocab_size"], s) for s in sizes]
    with torch.no_grad():
        ep = torch.export.export(model, (inputs[0],), dynamic_shapes=dynamic)
    for n in ep.graph.nodes:  # keep machine paths out of the archive
        n.meta.pop("stack_trace", None)
    out = os.path.join(outdir, "hf_" + kind)
    os.makedirs(out, exist_ok=True)
    torch.export.save(ep, os.path.join(out, "model.pt2"))
    for i, ids in enumerate(inputs):
        np.save(os.path.join(out, "in%d.npy" % i), ids.numpy())
        with torch.no_grad():
            np.save(os.path.join(out, "out%d.npy" % i), model(ids).numpy())
    targets = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    with open(os.path.join(out, "provenance.json"), "w") as f:
        json.dump({"torch": torch.__version__, "transformers": transformers.__version__,
                   "script": "utils/make-hf-models.py", "input_sizes": sizes,
                   "non_aten_ops": sorted(t for t in targets if not t.startswith("aten."))}, f, indent=1)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("models", nargs="*", default=list(CONFIGS))
    args = ap.parse_args()
    for kind in args.models:
        export(kind, args.outdir)


if __name__ == "__main__":
    main()
