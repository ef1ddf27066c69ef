"""Models the benchmark exports itself, with random weights and no downloads.

    python export_models.py NAME DEST_DIR [--recipe]

writes DEST_DIR/model.pt2 (torch.export.export, then torch.export.save),
DEST_DIR/in<i>.npy (the example inputs) and DEST_DIR/out<i>.npy (the eager
module's outputs on them, flattened in pytree order) and DEST_DIR/info.json.
With --recipe the weights are recipe values (utils/zoo/weights.py) and
DEST_DIR also gets model.pt2.skel.xz and manifest.json, from which
test/Models/Inputs/realmodels/weightgen.py rebuilds model.pt2 byte for
byte with numpy alone: a large model travels without its archive to a
machine that lacks the model's library or this torch.
Every model is built from its constructor or config (torchvision with
weights=None, transformers from a default or small config), seeded with
torch.manual_seed(0), in eval mode. The files are written to a temporary
directory and renamed into place, so an interrupted export leaves nothing.
Run it with the benchmark's virtual environment (run.py does).
"""
import functools
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


def _ids(vocab, batch=1, seq=SEQ):
    import torch
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, vocab, (batch, seq), generator=g, dtype=torch.int64)


def _image(size=224):
    import torch
    g = torch.Generator().manual_seed(1)
    return torch.randn(1, 3, size, size, generator=g)


def _torchvision(name):
    import torchvision
    return getattr(torchvision.models, name)(weights=None), (_image(),), f"torchvision {name}, 1x3x224x224"


# torchvision models taken as they come (tv_<name>).
TORCHVISION = ("resnet18", "mobilenet_v3_large", "regnet_y_400mf", "efficientnet_b0", "convnext_tiny", "densenet121")


def tv_vit_b_16():
    import torch
    import torchvision
    m = torchvision.models.vit_b_16(weights=None)
    # torchvision zero-initializes the classifier head, which would make every
    # output 0 and the output check vacuous.
    torch.nn.init.normal_(m.heads.head.weight, std=0.02)
    torch.nn.init.normal_(m.heads.head.bias, std=0.02)
    return m, (_image(),), "torchvision vit_b_16 (head re-initialized: torchvision zeroes it), 1x3x224x224"


def _bert(batch):
    from transformers import BertConfig, BertModel
    cfg = BertConfig()  # bert-base sizes: 12 layers, hidden 768, 12 heads
    return (_wrap(BertModel(cfg), 2), (_ids(cfg.vocab_size, batch=batch),),
            f"transformers BertModel, default BertConfig (12x768), batch {batch}, seq {SEQ}; "
            "outputs last_hidden_state, pooler_output")


def hf_bert():
    return _bert(1)


def hf_bert_2x128():
    return _bert(2)


def _gpt2(seq):
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config()  # GPT-2 small: 12 layers, hidden 768, 12 heads
    return (_wrap(GPT2LMHeadModel(cfg), 1), (_ids(cfg.vocab_size, seq=seq),),
            f"transformers GPT2LMHeadModel, default GPT2Config (small), seq {seq}; outputs logits")


def hf_gpt2():
    return _gpt2(SEQ)


def hf_gpt2_32():
    return _gpt2(32)


def hf_whisper_tiny_encoder():
    import torch
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoder
    cfg = WhisperConfig(d_model=384, encoder_layers=4, encoder_attention_heads=6, encoder_ffn_dim=1536,
                        decoder_layers=4, decoder_attention_heads=6, decoder_ffn_dim=1536, num_mel_bins=80)

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = WhisperEncoder(cfg)

        def forward(self, input_features):
            return self.m(input_features, return_dict=False)[0]

    g = torch.Generator().manual_seed(1)
    return (Encoder(), (torch.randn(1, 80, 3000, generator=g),),
            "transformers WhisperEncoder, Whisper-tiny sizes (d_model 384, 4 layers, 6 heads, ffn 1536), "
            "input_features 1x80x3000; outputs last_hidden_state")


def hf_llama():
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(hidden_size=512, intermediate_size=1536, num_hidden_layers=8,
                      num_attention_heads=8, num_key_value_heads=2, vocab_size=32000,
                      max_position_embeddings=1024)
    return (_wrap(LlamaForCausalLM(cfg), 1), (_ids(cfg.vocab_size),),
            "transformers LlamaForCausalLM, hidden 512, 8 layers, 8 heads, 2 kv heads (GQA), "
            "intermediate 1536, vocab 32000, seq 128; outputs logits")


MODELS = {**{f"tv_{name}": functools.partial(_torchvision, name) for name in TORCHVISION},
          **{f.__name__: f for f in (tv_vit_b_16, hf_bert, hf_bert_2x128, hf_gpt2, hf_gpt2_32, hf_llama,
                                     hf_whisper_tiny_encoder)}}


def export(name, dest, recipe=False):
    import numpy as np
    import torch
    import torch.utils._pytree as pytree

    torch.manual_seed(0)
    model, args, about = MODELS[name]()
    model.eval()
    if recipe:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "zoo"))
        import weights
        recipes = weights.apply_recipes(model, name)
    tmp = tempfile.mkdtemp(prefix=".export-", dir=os.path.dirname(os.path.abspath(dest)))
    try:
        start = time.perf_counter()
        ep = torch.export.export(model, args)
        torch.export.save(ep, os.path.join(tmp, "model.pt2"))
        seconds = time.perf_counter() - start
        if recipe:
            weights.write_skeleton(os.path.join(tmp, "model.pt2"), recipes, tmp)
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
        info = {"model": name, "about": about + (", recipe weights" if recipe else ""), "torch": torch.__version__,
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
    recipe = sys.argv[3:] == ["--recipe"]
    if len(sys.argv) != 3 + recipe or sys.argv[1] not in MODELS:
        sys.exit("usage: export_models.py {%s} DEST_DIR [--recipe]" % ",".join(MODELS))
    export(sys.argv[1], sys.argv[2], recipe)
