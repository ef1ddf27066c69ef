"""Models the benchmark exports itself, with random weights and no downloads.

    python export_models.py NAME DEST_DIR

writes DEST_DIR/model.pt2 (torch.export.export, then torch.export.save),
DEST_DIR/in<i>.npy (the example inputs) and DEST_DIR/out<i>.npy (the eager
module's outputs on them, flattened in pytree order) and DEST_DIR/info.json.
Every model is built from its constructor or config (torchvision with
weights=None, transformers from a default or small config), seeded with
torch.manual_seed(0), in eval mode. The files are written to a temporary
directory and renamed into place, so an interrupted export leaves nothing.
Run it with the benchmark's virtual environment (run.py does).
"""
import json
import os
import shutil
import sys
import tempfile
import time

SEQ = 128


def _wrap(model, keep):
    """A module that calls model(input_ids=...) and returns the first `keep`
    outputs as a tuple of tensors (transformers models return ModelOutput
    objects and caches; gc and AOTI want plain tensors)."""
    import torch

    class Wrapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = model

        def forward(self, input_ids):
            out = self.m(input_ids=input_ids, use_cache=False, return_dict=False)
            return tuple(out[:keep]) if keep > 1 else out[0]

    return Wrapped()


def _ids(vocab):
    import torch
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, vocab, (1, SEQ), generator=g, dtype=torch.int64)


def _image(size=224):
    import torch
    g = torch.Generator().manual_seed(1)
    return torch.randn(1, 3, size, size, generator=g)


def tv_resnet18():
    import torchvision
    return torchvision.models.resnet18(weights=None), (_image(),), "torchvision resnet18, 1x3x224x224"


def tv_mobilenet_v3_large():
    import torchvision
    return (torchvision.models.mobilenet_v3_large(weights=None), (_image(),),
            "torchvision mobilenet_v3_large, 1x3x224x224")


def tv_vit_b_16():
    import torch
    import torchvision
    m = torchvision.models.vit_b_16(weights=None)
    # torchvision zero-initializes the classifier head, which would make every
    # output 0 and the output check vacuous.
    torch.nn.init.normal_(m.heads.head.weight, std=0.02)
    torch.nn.init.normal_(m.heads.head.bias, std=0.02)
    return m, (_image(),), "torchvision vit_b_16 (head re-initialized: torchvision zeroes it), 1x3x224x224"


def hf_bert():
    from transformers import BertConfig, BertModel
    cfg = BertConfig()  # bert-base sizes: 12 layers, hidden 768, 12 heads
    return (_wrap(BertModel(cfg), 2), (_ids(cfg.vocab_size),),
            "transformers BertModel, default BertConfig (12x768), seq 128; outputs last_hidden_state, pooler_output")


def hf_gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config()  # GPT-2 small: 12 layers, hidden 768, 12 heads
    return (_wrap(GPT2LMHeadModel(cfg), 1), (_ids(cfg.vocab_size),),
            "transformers GPT2LMHeadModel, default GPT2Config (small), seq 128; outputs logits")


def hf_llama():
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(hidden_size=512, intermediate_size=1536, num_hidden_layers=8,
                      num_attention_heads=8, num_key_value_heads=2, vocab_size=32000,
                      max_position_embeddings=1024)
    return (_wrap(LlamaForCausalLM(cfg), 1), (_ids(cfg.vocab_size),),
            "transformers LlamaForCausalLM, hidden 512, 8 layers, 8 heads, 2 kv heads (GQA), "
            "intermediate 1536, vocab 32000, seq 128; outputs logits")


MODELS = {f.__name__: f for f in (tv_resnet18, tv_mobilenet_v3_large, tv_vit_b_16, hf_bert, hf_gpt2, hf_llama)}


def export(name, dest):
    import numpy as np
    import torch
    import torch.utils._pytree as pytree

    torch.manual_seed(0)
    model, args, about = MODELS[name]()
    model.eval()
    tmp = tempfile.mkdtemp(prefix=".export-", dir=os.path.dirname(os.path.abspath(dest)))
    try:
        start = time.perf_counter()
        ep = torch.export.export(model, args)
        torch.export.save(ep, os.path.join(tmp, "model.pt2"))
        seconds = time.perf_counter() - start
        with torch.no_grad():
            outs = pytree.tree_leaves(model(*args))
        for i, a in enumerate(args):
            np.save(os.path.join(tmp, f"in{i}.npy"), a.numpy())
        for i, o in enumerate(outs):
            np.save(os.path.join(tmp, f"out{i}.npy"), o.detach().numpy())
        ops = {}
        for n in ep.graph.nodes:
            if n.op == "call_function":
                ops[str(n.target)] = ops.get(str(n.target), 0) + 1
        info = {"model": name, "about": about, "torch": torch.__version__,
                "export_seconds": round(seconds, 2), "ops": dict(sorted(ops.items()))}
        with open(os.path.join(tmp, "info.json"), "w") as f:
            json.dump(info, f, indent=1)
        os.chmod(tmp, 0o755)
        if os.path.exists(dest):
            shutil.rmtree(dest)
        os.rename(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in MODELS:
        sys.exit("usage: export_models.py {%s} DEST_DIR" % ",".join(MODELS))
    export(sys.argv[1], sys.argv[2])
