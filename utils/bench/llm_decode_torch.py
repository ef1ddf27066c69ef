#!/usr/bin/env python3
"""PyTorch's decode step alone on one program of utils/make-llm-models.py,
for archives made with --programs decode (the 8B preset's shapes with
--layers N, whose two layer counts give one layer's time: llm.py needs
both programs).

usage (with torch and a GPU):
  utils/bench/llm_decode_torch.py DIR ENGINE      ENGINE: eager, reduce-overhead, max-autotune, default

Feeds the config's prompt one token at a time, then times 128 greedy steps,
each choosing its token on the host from the logits (as llm.py's engines
and llm-generate's host loop do), TF32 off; prints one JSON line with the
mean step time in ms and the first (compiling) pass's seconds.
"""
import importlib.util
import json
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    directory, engine = sys.argv[1], sys.argv[2]
    torch.backends.cuda.matmul.allow_tf32 = False
    spec = importlib.util.spec_from_file_location("make_llm_models",
                                                  os.path.join(HERE, "..", "make-llm-models.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    c = json.load(open(os.path.join(directory, "config.json")))
    model = m.mapped_model(os.path.join(directory, "decode.pt2"), c, m.DTYPES[c["dtype"]]).to("cuda")
    torch.set_default_device("cuda")
    run = model if engine == "eager" else torch.compile(model, mode=engine)

    def generate(steps=128):
        with torch.no_grad():
            tokens = list(c["prompt"])
            for k, token in enumerate(tokens):
                logits = run(torch.tensor([[token]]), torch.tensor([k]))
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(steps):
                logits = run(torch.tensor([[tokens[-1]]]), torch.tensor([len(tokens) - 1]))
                tokens.append(int(logits[0, -1].argmax()))
            torch.cuda.synchronize()
            return (time.perf_counter() - start) / steps

    start = time.perf_counter()
    generate()
    first = time.perf_counter() - start
    print(json.dumps({"engine": engine, "layers": c["layers"], "step_ms": generate() * 1e3, "first_s": first}))


if __name__ == "__main__":
    main()
