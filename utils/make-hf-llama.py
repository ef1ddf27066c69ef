#!/usr/bin/env python3
"""Exports Hugging Face's own LlamaForCausalLM through transformers'
static-cache export (transformers.integrations.executorch:
TorchExportableModuleForDecoderOnlyLM, which wraps the model with a
StaticCache whose tensors are registered buffers) as two torch.export
programs (issue 34):

  prefill.pt2  input_ids int64 [1, T] (T dynamic, 1..cache) and
               cache_position int64 [T]; returns the logits [1, T, vocab]
  decode.pt2   the same for one token: input_ids [1, 1], cache_position [1]

Each layer's cache is two buffers, key_cache_<i> and value_cache_<i>
[1, kv_heads, cache, head_dim], written with index_copy_ at
cache_position[0] + arange(T); a third, cumulative_length_<i> (int64 []),
holds that start. Attention is transformers' sdpa path over the whole
cache with a boolean mask of the positions up to each query's, the key and
value heads repeated per query head (repeat_kv).

Weights are deterministic values from
test/Models/Inputs/realmodels/weightgen_bf16.py's recipes, keyed by the
parameter's name (uniform in +-1/sqrt(fan-in), norms in [0.9, 1.1]), so
they do not depend on transformers' initialization or torch's generator.

Presets: tiny (2 layers, hidden 64, 4 heads, 2 kv heads, MLP 160, vocab
256, cache 64: gc's tiny decoder's shapes) and 1b (Llama-3.2-1B's
config: tied embeddings, Llama 3 rope scaling, cache 2048; --layers N
keeps the first N layers).

usage (with torch and transformers):
  make-hf-llama.py --preset tiny|1b [--dtype float32|bfloat16] [--layers N] -o DIR
      [--reference N] [--programs prefill decode]

Writes DIR/prefill.pt2, DIR/decode.pt2 and DIR/config.json (the shapes,
the prompt, the torch and transformers versions). --reference N runs the
exported programs in PyTorch on a fixed prompt of 8 tokens (the prefill
program, its cache handed to the decode program, then one decode step per
token), decodes N greedy tokens, checks them against the eager model's
generate() (greedy, static cache) and writes DIR/tokens.npy (int64 [N]),
DIR/logits.npy (the logits each token was chosen from, [N, vocab],
float32), DIR/prompt.npy, DIR/prompt.txt and DIR/tokens.txt, and for the
stage tests DIR/prefill/run0/{in0,in1,out0}.npy, DIR/decode/run<k>/ (the
first four decode steps), DIR/prefill/buffer_after.<buffer>.npy (the cache
after the prompt), DIR/positions/<pos>/ (a decode step at the cache's
first, middle and last position, with NaN in the cache past it) and
DIR/steps/run<k>/ (the decode program alone from its empty cache: the
prompt a token at a time, then the first four greedy tokens).
"""
import argparse
import hashlib
import importlib.util
import json
import os
import sys
import zipfile

import numpy as np
import torch
import transformers
from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "Models", "Inputs", "realmodels"))
import weightgen_bf16  # noqa: E402



def load_script(name, file):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, file))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


llama_archive = load_script("llama_archive", "make-llama-archive.py")
# gc's own test decoder: its prompt and the way its references are written.
llm_models = load_script("llm_models", "make-llm-models.py")
to_numpy, save_run = llm_models.to_numpy, llm_models.save_run

PRESETS = {
    "tiny": dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                 intermediate_size=160, vocab_size=256, max_position_embeddings=64, rope_theta=10000.0,
                 rms_norm_eps=1e-5, tie_word_embeddings=False, cache=64),
    # Llama-3.2-1B's config.json (1.24e9 parameters, the LM head tied to the embedding).
    "1b": dict(num_hidden_layers=16, hidden_size=2048, num_attention_heads=32, num_key_value_heads=8,
               intermediate_size=8192, vocab_size=128256, max_position_embeddings=131072,
               rope_theta=500000.0, rms_norm_eps=1e-5, tie_word_embeddings=True, head_dim=64,
               rope_scaling=dict(rope_type="llama3", factor=32.0, low_freq_factor=1.0,
                                 high_freq_factor=4.0, original_max_position_embeddings=8192),
               cache=2048),
}
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}
PROMPT_LEN = llm_models.PROMPT_LEN
STAGE_STEPS = 4


def model_config(c):
    fields = {k: v for k, v in c.items() if k != "cache"}
    # No token ends a generation: the reference decodes exactly N tokens.
    fields.update(bos_token_id=None, eos_token_id=None, pad_token_id=None)
    cfg = transformers.LlamaConfig(**fields)
    cfg._attn_implementation = "sdpa"
    return cfg


def recipe(fqn, shape, dtype):
    lo = -1.0 / shape[-1] ** 0.5
    hi = -lo
    if fqn.endswith("norm.weight"):
        lo, hi = 0.9, 1.1
    return {"key": "hf_llama/" + fqn, "numel": int(np.prod(shape)), "lo": lo, "hi": hi,
            "dtype": "bf16" if dtype == torch.bfloat16 else "f32"}


def make_model(c, dtype):
    """LlamaForCausalLM with the recipes' values, set up for static-cache export."""
    model = transformers.AutoModelForCausalLM.from_config(model_config(c), dtype=dtype).eval()
    with torch.no_grad():
        for fqn, p in model.named_parameters():  # a tied LM head is the embedding, listed once
            raw = weightgen_bf16.encode(recipe(fqn, list(p.shape), dtype))
            p.copy_(torch.from_numpy(raw.view(np.int16) if dtype == torch.bfloat16 else raw)
                    .view(dtype).reshape(p.shape))
    model.generation_config = transformers.GenerationConfig(
        use_cache=True, cache_implementation="static",
        cache_config={"batch_size": 1, "max_cache_len": c["cache"]}, bos_token_id=None,
        eos_token_id=None, pad_token_id=None)
    return model


def export_program(model, c, decode):
    """transformers' static-cache export of one program."""
    wrapper = TorchExportableModuleForDecoderOnlyLM(model, batch_size=1, max_cache_len=c["cache"])
    t = 1 if decode else PROMPT_LEN
    dims = None
    if not decode:
        length = torch.export.Dim("T", min=1, max=c["cache"])
        dims = {"input_ids": {1: length}, "cache_position": {0: length}}
    with torch.no_grad():
        ep = wrapper.export(input_ids=torch.zeros(1, t, dtype=torch.int64),
                            cache_position=torch.arange(t, dtype=torch.int64), dynamic_shapes=dims)
    for n in ep.graph.nodes:  # keep machine paths and addresses out of the archive
        n.meta.pop("stack_trace", None)
        n.meta.pop("from_node", None)  # the tracer graphs' addresses
        stack = n.meta.get("nn_module_stack")
        if stack:  # keyed by the modules' addresses: by their paths instead
            n.meta["nn_module_stack"] = {path or "L__self__": (path, ty) for path, ty in stack.values()}
    return ep


def save_program(ep, ident, path):
    """torch.export.save, then the archive rewritten with every entry stored
    and aligned (make-llama-archive.py's writer) and a serialization id made
    from `ident`, so the same config gives the same bytes."""
    part = path.removesuffix(".pt2") + ".part.pt2"
    torch.export.save(ep, part)
    root = os.path.basename(path).removesuffix(".pt2") + "/"
    with zipfile.ZipFile(part) as z:
        infos = z.infolist()
        with zipfile.ZipFile(path + ".tmp", "w", allowZip64=True) as out:
            for info in infos:
                name = root + info.filename.split("/", 1)[1]
                data = z.read(info)
                if info.filename.endswith(".data/serialization_id"):
                    data = hashlib.sha256(ident.encode()).hexdigest()[:len(data)].encode()
                llama_archive.write_entry(out, name, data)
    os.remove(part)
    os.replace(path + ".tmp", path)


def prompt(c):
    return llm_models.prompt({"vocab": c["vocab_size"]})


def is_cache(name):
    return name.startswith("key_cache_") or name.startswith("value_cache_")


def set_buffers(module, values):
    for name, b in module.named_buffers():
        if name in values:
            b.copy_(values[name])


def write_positions(decode, after, c, outdir):
    """One decode step at the cache's first, middle and last position from
    the prefill's cache: DIR/<pos>/run0/{in0,in1,out0}.npy, and as the cache
    to start from DIR/<pos>/cache.<buffer>.npy, the prefill's with NaN at
    every position after <pos>. The step's mask hides those, so a step
    that reads only the cache's valid prefix gives PyTorch's logits
    (computed from the clean cache), and one that reads past it NaN."""
    for pos in (0, c["cache"] // 2, c["cache"] - 1):
        set_buffers(decode, after)
        args = (torch.tensor([[PROMPT_LEN]]), torch.tensor([pos]))
        d = os.path.join(outdir, str(pos))
        save_run(os.path.join(d, "run0"), args, decode(input_ids=args[0], cache_position=args[1]))
        for name, b in after.items():
            if is_cache(name):
                poisoned = b.clone()
                poisoned[:, :, pos + 1:] = float("nan")
                np.save(os.path.join(d, "cache.%s.npy" % name), to_numpy(poisoned))


def write_steps(decode, tokens, c, outdir):
    """The decode program alone from an empty cache, one run per token: the
    prompt, then `tokens`; run k holds token k at position k."""
    for name, b in decode.named_buffers():
        if is_cache(name):
            b.zero_()
    sequence = list(prompt(c)) + tokens
    for k, token in enumerate(sequence):
        args = (torch.tensor([[token]]), torch.tensor([k]))
        save_run(os.path.join(outdir, "run%d" % k), args,
                 decode(input_ids=args[0], cache_position=args[1]))


def write_reference(model, programs, c, outdir, count):
    """Greedy decoding with the exported programs in PyTorch, checked
    against the eager model's generate()."""
    prefill, decode = programs["prefill"].module(), programs["decode"].module()
    ids = torch.from_numpy(prompt(c))
    np.save(os.path.join(outdir, "prompt.npy"), ids.numpy())
    tokens, rows = [], []
    with torch.no_grad():
        args = (ids[None], torch.arange(PROMPT_LEN))
        logits = prefill(input_ids=args[0], cache_position=args[1])
        save_run(os.path.join(outdir, "prefill", "run0"), args, logits)
        after = {name: b.clone() for name, b in prefill.named_buffers()}
        for name, b in after.items():
            if is_cache(name):
                np.save(os.path.join(outdir, "prefill", "buffer_after.%s.npy" % name), to_numpy(b))
        write_positions(decode, after, c, os.path.join(outdir, "positions"))
        set_buffers(decode, after)  # the hand-over gc's generation loops make
        for k in range(count):
            row = logits[0, -1]
            tokens.append(int(row.argmax()))
            rows.append(row.float())
            if k + 1 == count:
                break
            args = (torch.tensor([[tokens[-1]]]), torch.tensor([PROMPT_LEN + k]))
            logits = decode(input_ids=args[0], cache_position=args[1])
            if k < STAGE_STEPS:
                save_run(os.path.join(outdir, "decode", "run%d" % k), args, logits)
        write_steps(decode, tokens[:STAGE_STEPS], c, os.path.join(outdir, "steps"))
        eager = model.generate(ids[None], max_new_tokens=count, do_sample=False, output_logits=True,
                               return_dict_in_generate=True)
    eager_tokens = eager.sequences[0, PROMPT_LEN:].tolist()
    eager_rows = torch.stack([r[0].float() for r in eager.logits])
    worst = float((eager_rows - torch.stack(rows)).abs().max())
    if eager_tokens != tokens:
        raise SystemExit("make-hf-llama.py: the exported programs' greedy tokens %s are not the eager "
                         "model's generate() tokens %s" % (tokens, eager_tokens))
    np.save(os.path.join(outdir, "tokens.npy"), np.array(tokens, dtype=np.int64))
    np.save(os.path.join(outdir, "logits.npy"), torch.stack(rows).numpy())
    with open(os.path.join(outdir, "prompt.txt"), "w") as f:
        f.write(",".join(str(int(t)) for t in ids) + "\n")
    with open(os.path.join(outdir, "tokens.txt"), "w") as f:
        f.write(" ".join(str(t) for t in tokens) + "\n")
    return worst


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", choices=sorted(PRESETS), required=True)
    p.add_argument("--dtype", choices=sorted(DTYPES), default="float32")
    p.add_argument("--layers", type=int, help="fewer layers than the preset's (for quick runs)")
    p.add_argument("-o", dest="out", required=True, help="the folder to write")
    p.add_argument("--programs", nargs="+", choices=["prefill", "decode"], default=["prefill", "decode"],
                   help="the programs to write (default both)")
    p.add_argument("--reference", type=int, metavar="N", help="greedy tokens to decode in PyTorch")
    a = p.parse_args()
    c = dict(PRESETS[a.preset])
    if a.layers:
        if not 1 <= a.layers <= c["num_hidden_layers"]:
            p.error("--layers wants 1 to %d" % c["num_hidden_layers"])
        c["num_hidden_layers"] = a.layers
    if a.reference and PROMPT_LEN + a.reference > c["cache"]:
        p.error("--reference %d does not fit a cache of %d after a prompt of %d"
                % (a.reference, c["cache"], PROMPT_LEN))
    if a.reference and len(set(a.programs)) < 2:
        p.error("--reference runs both programs: leave --programs out")
    dtype = DTYPES[a.dtype]
    os.makedirs(a.out, exist_ok=True)
    model = make_model(c, dtype)
    programs = {}
    for name in a.programs:
        programs[name] = export_program(model, c, name == "decode")
        ident = json.dumps([c, a.dtype, name], sort_keys=True)
        save_program(programs[name], ident, os.path.join(a.out, name + ".pt2"))
    info = dict(c, dtype=a.dtype, prompt=prompt(c).tolist(), torch=torch.__version__,
                transformers=transformers.__version__, script="utils/make-hf-llama.py")
    if a.reference:
        info["eager_logits_max_abs_diff"] = write_reference(model, programs, c, a.out, a.reference)
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(info, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
