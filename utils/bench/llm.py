#!/usr/bin/env python3
"""LLM decoding on the CPU: gc beside PyTorch on one model of
utils/make-llm-models.py (issue 34).

usage (with torch, e.g. /work/venv-py/bin/python):
  utils/bench/llm.py DIR --build BUILD [--threads 2] [--new-tokens 32]
      [--engines gc eager compile] [--compile-limit 900]

DIR holds prefill.pt2, decode.pt2 and config.json. Every engine generates
--new-tokens greedy tokens after the script's fixed prompt of 8 tokens, in a
process of its own (so that its peak resident memory is its own), on
--threads threads:

  gc       gc-compile --weights external of both programs (the packages
           map the archives' weights), then BUILD/bin/llm-generate (the C
           example), once with the decode package alone for the decode
           steps and once with the prefill package for the first token
  eager    the same module in PyTorch eager, its weights mapped from the
           archive (no copy)
  compile  the same with torch.compile (default mode); one generation
           first to compile, then the timed one; stopped after
           --compile-limit seconds

Before each engine, utils/bench/membw.c (built with the system's cc)
measures the memory read bandwidth on --threads threads, so that on a
machine other jobs share, each engine's share is of what it could have had
then.

Prints one Markdown table: time to first token (the prompt's prefill), the
decode step's mean time and tokens/s, the rate at which the decode step
reads the weights (the bytes it must read: every weight but the embedding
table, of which it gathers one row) and its share of the read bandwidth,
peak resident memory beside the weights' size, and the tokens' agreement
with eager's.
"""
import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import signal
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def load_models_script():
    spec = importlib.util.spec_from_file_location(
        "make_llm_models", os.path.join(HERE, "..", "make-llm-models.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def torch_worker(args, compiled):
    """Runs in its own process: prints one JSON line of results."""
    import torch

    torch.set_num_threads(args.threads)
    m = load_models_script()
    c = json.load(open(os.path.join(args.dir, "config.json")))
    dtype = m.DTYPES[c["dtype"]]
    model = m.mapped_model(os.path.join(args.dir, "prefill.pt2"), c, dtype)
    prompt = torch.tensor(c["prompt"])
    run = torch.compile(model) if compiled else model

    def generate():
        with torch.no_grad():
            start = time.perf_counter()
            logits = run(prompt[None], torch.arange(len(prompt)))
            tokens = [int(logits[0, -1].argmax())]
            first = time.perf_counter()
            for k in range(1, args.new_tokens):
                logits = run(torch.tensor([[tokens[-1]]]), torch.tensor([len(prompt) + k - 1]))
                tokens.append(int(logits[0, -1].argmax()))
            end = time.perf_counter()
        return tokens, first - start, end - first

    compile_s = 0.0
    if compiled:
        start = time.perf_counter()
        generate()  # compiles the prefill and the decode step
        compile_s = time.perf_counter() - start
    tokens, ttft, decode = generate()
    print(json.dumps({"tokens": tokens, "ttft_s": ttft, "decode_s": decode, "compile_s": compile_s}))


def run_child(cmd, limit=None):
    """Runs cmd; returns its stdout, stderr and its own peak resident memory in bytes,
    or None when it ran past `limit` seconds (it is then killed)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        timer = threading.Timer(limit, proc.kill) if limit else None
        if timer:
            timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        if timer:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if limit and proc.returncode == -signal.SIGKILL:
            return None
        out.seek(0)
        err.seek(0)
        text, message = out.read(), err.read()
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{message}")
    return text, message, usage.ru_maxrss * 1024


def read_bandwidth(probe, threads):
    """GB/s that utils/bench/membw.c, built as `probe`, reads on `threads` threads."""
    text, _, _ = run_child([probe, "--threads", str(threads)])
    return float(re.search(r"read bandwidth: ([0-9.]+) GB/s", text).group(1))


def step_weight_bytes(c):
    """Bytes of weights one decode step reads: all but the embedding table."""
    h, kv = c["hidden"], c["kv_heads"] * (c["hidden"] // c["heads"])
    layer = 2 * h * h + 2 * h * kv + 3 * h * c["intermediate"] + 2 * h
    size = 2 if c["dtype"] == "bfloat16" else 4
    return (c["layers"] * layer + h + c["vocab"] * h) * size


def gc_engine(args, prompt):
    bin_dir = os.path.join(args.build, "bin")
    out = os.path.join(args.dir, "gc")
    os.makedirs(out, exist_ok=True)
    compile_s = 0.0
    for name in ("prefill", "decode"):
        package = os.path.join(out, name + ".gcpkg")
        if not os.path.exists(package):
            start = time.perf_counter()
            run_child([os.path.join(bin_dir, "gc-compile"), os.path.join(args.dir, name + ".pt2"),
                       "--weights", "external", "-o", package])
            compile_s += time.perf_counter() - start
    generate = [os.path.join(bin_dir, "llm-generate")]
    common = ["--prompt", ",".join(str(int(t)) for t in prompt), "--threads", str(args.threads)]
    # Two processes, so that each package's peak memory is its own: the
    # decode is timed with the decode package alone ("-": the prompt a token
    # at a time), and the first token with the prefill package (-n 1 never
    # runs the decode package).
    text, err, peak = run_child(generate + ["-", os.path.join(out, "decode.gcpkg"),
                                            "-n", str(args.new_tokens)] + common)
    tokens = [int(t) for t in text.split(":", 1)[1].split()]
    decode = float(re.search(r"tokens in ([0-9.]+) s", err).group(1))
    _, err, prefill_peak = run_child(generate + [os.path.join(out, "prefill.gcpkg"),
                                                 os.path.join(out, "decode.gcpkg"), "-n", "1"] + common)
    ttft = float(re.search(r"time to first token: ([0-9.]+) ms", err).group(1)) / 1e3
    return {"tokens": tokens, "ttft_s": ttft, "decode_s": decode, "compile_s": compile_s,
            "peak": peak, "prefill_peak": prefill_peak}


def torch_engine(args, engine):
    cmd = [sys.executable, os.path.abspath(__file__), args.dir, "--worker", engine,
           "--threads", str(args.threads), "--new-tokens", str(args.new_tokens)]
    done = run_child(cmd, args.compile_limit if engine == "compile" else None)
    if done is None:
        return None
    text, _, peak = done
    return dict(json.loads(text.strip().splitlines()[-1]), peak=peak)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir")
    p.add_argument("--build", default="build")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--new-tokens", type=int, default=32)
    p.add_argument("--engines", nargs="+", default=["gc", "eager", "compile"],
                   choices=["gc", "eager", "compile"])
    p.add_argument("--compile-limit", type=float, default=900,
                   help="seconds torch.compile's process may take (its two generations)")
    p.add_argument("--worker", choices=["eager", "compile"], help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return torch_worker(args, args.worker == "compile")

    # No torch here: a child's peak memory counts what its parent held when it was forked.
    c = json.load(open(os.path.join(args.dir, "config.json")))
    weights = os.path.getsize(os.path.join(args.dir, "decode.pt2"))
    step_bytes = step_weight_bytes(c)
    results, bandwidth = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        probe = os.path.join(tmp, "membw")
        run_child(["cc", "-O3", "-march=native", "-fopenmp", os.path.join(HERE, "membw.c"), "-o", probe])
        for engine in sorted(args.engines, key=lambda e: ["gc", "eager", "compile"].index(e)):
            bandwidth[engine] = read_bandwidth(probe, args.threads)
            results[engine] = (gc_engine(args, c["prompt"]) if engine == "gc"
                               else torch_engine(args, engine))
    reference = results.get("eager", {}).get("tokens")
    steps = args.new_tokens - 1
    print(f"{c['layers']} layers, hidden {c['hidden']}, vocab {c['vocab']}, {c['dtype']}, "
          f"cache {c['max_seq']}; weights {weights / 1e9:.2f} GB; {args.threads} threads; "
          f"prompt of {len(c['prompt'])}, {args.new_tokens} tokens; a decode step reads "
          f"{step_bytes / 1e9:.2f} GB of weights; load average {os.getloadavg()[0]:.1f} at the end\n")
    print("| engine | time to first token (ms) | decode step (ms) | tok/s | weights read (GB/s) | "
          "read bandwidth before (GB/s) | share | peak RSS (GB) | RSS / weights | compile (s) | "
          "tokens = eager's |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for engine, r in results.items():
        if r is None:
            print(f"| {engine} | did not finish in {args.compile_limit:.0f} s | | | | "
                  f"{bandwidth[engine]:.2f} | | | | | |")
            continue
        same = "-" if reference is None else ("yes" if r["tokens"] == reference else "no")
        step = r["decode_s"] / steps
        print(f"| {engine} | {r['ttft_s'] * 1e3:.1f} | {step * 1e3:.1f} | {1 / step:.2f} | "
              f"{step_bytes / step / 1e9:.2f} | {bandwidth[engine]:.2f} | "
              f"{step_bytes / step / 1e9 / bandwidth[engine]:.0%} | "
              f"{r['peak'] / 1e9:.2f} | {r['peak'] / weights:.2f} | {r['compile_s']:.1f} | {same} |")
    if "gc" in results:
        print(f"\ngc: the decode row's memory is the decode package's process; the first "
              f"token's (the prefill package's) peaked at {results['gc']['prefill_peak'] / 1e9:.2f} GB")


if __name__ == "__main__":
    main()
