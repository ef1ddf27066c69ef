#!/usr/bin/env python3
"""Exports tiny Hugging Face models (issue 14's test models) with the torch and
transformers that run this script: Llama, Mistral, Qwen2 and Phi causal LMs
(2 layers, hidden size 32, vocabulary 128, random weights) on one 16-token
sequence, BERT with a dynamic batch (1 to 8) and sequence (2 to 64), and
two encoder-decoders: T5 (a 12-token source, a 5-token decoder prefix) and
Whisper (16 mel bins by 64 frames, a 4-token decoder prefix).

usage: make-hf-models.py OUTDIR [MODEL ...]

Writes OUTDIR/hf_<model>/: model.pt2, in<i>.npy (token ids) and out<i>.npy
(the model's logits, or BERT's last hidden state) for each input size
(encoder-decoders: in0.npy the encoder's input, in1.npy the decoder's
token ids, out0.npy the logits), and
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
    "t5": lambda: transformers.T5Config(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
                                        num_heads=4, vocab_size=128, decoder_start_token_id=0),
    "whisper": lambda: transformers.WhisperConfig(d_model=32, encoder_layers=2, decoder_layers=2,
                                                  encoder_attention_heads=4, decoder_attention_heads=4,
                                                  encoder_ffn_dim=64, decoder_ffn_dim=64, vocab_size=128,
                                                  num_mel_bins=16, max_source_positions=32,
                                                  max_target_positions=32, pad_token_id=0, bos_token_id=1,
                                                  eos_token_id=2, decoder_start_token_id=1),
}
ENCODER_DECODERS = {"t5", "whisper"}


class CausalLM(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, ids):
        return self.m(input_ids=ids, use_cache=False).logits


class Seq2Seq(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, source, decoder_ids):
        kind = "input_features" if isinstance(self.m, transformers.WhisperForConditionalGeneration) else "input_ids"
        return self.m(**{kind: source}, decoder_input_ids=decoder_ids, use_cache=False).logits


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
    if kind in ENCODER_DECODERS:
        export_seq2seq(kind, cfg, outdir)
        return
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


def export_seq2seq(kind, cfg, outdir):
    model = Seq2Seq(transformers.AutoModelForSeq2SeqLM.from_config(cfg)
                    if kind == "t5" else transformers.WhisperForConditionalGeneration(cfg)).eval()
    if kind == "t5":
        source = torch.randint(0, cfg.vocab_size, (1, 12))
    else:
        source = torch.randn(1, cfg.num_mel_bins, 2 * cfg.max_source_positions)
    decoder_ids = torch.randint(0, cfg.vocab_size, (1, 5 if kind == "t5" else 4))
    with torch.no_grad():
        ep = torch.export.export(model, (source, decoder_ids))
        logits = model(source, decoder_ids)
    for n in ep.graph.nodes:  # keep machine paths out of the archive
        n.meta.pop("stack_trace", None)
    out = os.path.join(outdir, "hf_" + kind)
    os.makedirs(out, exist_ok=True)
    torch.export.save(ep, os.path.join(out, "model.pt2"))
    np.save(os.path.join(out, "in0.npy"), source.numpy())
    np.save(os.path.join(out, "in1.npy"), decoder_ids.numpy())
    np.save(os.path.join(out, "out0.npy"), logits.numpy())
    targets = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    with open(os.path.join(out, "provenance.json"), "w") as f:
        json.dump({"torch": torch.__version__, "transformers": transformers.__version__,
                   "script": "utils/make-hf-models.py",
                   "input_sizes": [list(source.shape), list(decoder_ids.shape)],
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
