#!/usr/bin/env python3
"""PyTorch's decode step alone on one program of utils/make-llm-models.py,
for archives made with --programs decode (the 8B preset's shapes: its
archive is 16 GB a program, and llm.py needs both programs; with --layers
N, two layer counts give one layer's time).

usage (with torch):
  utils/bench/llm_decode_torch.py DIR ENGINE [--device cuda|cpu] [--threads T] [--steps S]
      ENGINE: eager, default, reduce-overhead, max-autotune

Feeds the config's prompt one token at a time, then times S greedy steps
(128 by default), each choosing its token on the host from the logits (as
llm.py's engines and llm-generate's host loop do), TF32 off; the whole
generation runs twice, the first compiling. Prints one JSON line with the
second pass's mean step time in ms and the first pass's seconds. On the CPU
the weights stay mapped from the archive (no copy), on T threads.
"""
import argparse
import importlib.util
import json
import os
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("engine", choices=["eager", "default", "reduce-overhead", "max-autotune"])
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--threads", type=int, help="CPU threads (torch.set_num_threads)")
    p.add_argument("--steps", type=int, default=128)
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    if args.threads:
        torch.set_num_threads(args.threads)
    spec = importlib.util.spec_from_file_location("make_llm_models",
                                                  os.path.join(HERE, "..", "make-llm-models.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    c = json.load(open(os.path.join(args.dir, "config.json")))
    model = m.mapped_model(os.path.join(args.dir, "decode.pt2"), c, m.DTYPES[c["dtype"]]).to(args.device)
    torch.set_default_device(args.device)
    run = model if args.engine == "eager" else torch.compile(model, mode=args.engine)
    sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)

    def generate():
        with torch.no_grad():
            tokens = list(c["prompt"])
            for k, token in enumerate(tokens):
                logits = run(torch.tensor([[token]]), torch.tensor([k]))
            sync()
            start = time.perf_counter()
            for _ in range(args.steps):
                logits = run(torch.tensor([[tokens[-1]]]), torch.tensor([len(tokens) - 1]))
                tokens.append(int(logits[0, -1].argmax()))
            sync()
            return (time.perf_counter() - start) / args.steps

    start = time.perf_counter()
    generate()
    first = time.perf_counter() - start
    print(json.dumps({"engine": args.engine, "device": args.device, "layers": c["layers"],
                      "step_ms": generate() * 1e3, "first_s": first}))


if __name__ == "__main__":
    main()
