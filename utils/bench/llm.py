#!/usr/bin/env python3
"""LLM decoding on the CPU or an NVIDIA GPU: gc beside PyTorch on one model
of utils/make-llm-models.py or utils/make-hf-llama.py (issue 34).

usage (with torch, e.g. /work/venv-py/bin/python):
  utils/bench/llm.py DIR --build BUILD [--threads 2] [--new-tokens 32]
      [--engines gc eager compile] [--compile-limit 900] [--no-logits-check]
  utils/bench/llm.py DIR --device cuda --build BUILD [--new-tokens 128]
      [--engines gc eager compile reduce-overhead max-autotune]
      [--prefill-lengths 128 2048]

DIR holds prefill.pt2, decode.pt2 and config.json, or decode.pt2 and
config.json alone (`make-llm-models.py --programs decode`: the 8B preset's
archives are 16 GB a program): then every engine feeds the prompt a token at a
time through the decode program, gc's first token is that loop's, and
--prefill-lengths is refused. Every engine generates
--new-tokens greedy tokens after the script's fixed prompt of 8 tokens, in a
process of its own (so that its peak resident memory is its own), on
--threads threads:

  gc       gc-compile --weights external of both programs (the packages
           map the archives' weights), then BUILD/bin/llm-generate (the C
           example), once with the decode package alone for the decode
           steps and once with the prefill package for the first token,
           each after one untimed generation (--warmup 1)
  eager    the same module in PyTorch eager, its weights mapped from the
           archive (no copy); for Hugging Face's Llama, whose module this
           script does not build, the exported programs themselves
           (ExportedProgram.module(), the weights read into memory, the
           decode module given the prefill module's weights and caches)
  compile  the same with torch.compile (default mode); one generation
           first to compile, then the timed one; stopped after
           --compile-limit seconds
  reduce-overhead, max-autotune
           torch.compile in those modes, as compile

With --device cuda every engine runs on the GPU (TF32 off): gc's packages
are compiled with --device cuda (DIR/gc-cuda/; carried there beforehand
where no gc-compile runs: they name their archives, ../<program>.pt2), and
the caches stay in GPU memory. The bandwidth is the
GPU's copy bandwidth (a 1 GiB device-to-device copy by torch, bytes read
plus written over its time, best of 10), and --prefill-lengths times the
prefill program alone on prompts of those lengths (tokens/s, after one
warm-up of each length).

On the CPU, before and after each engine, utils/bench/membw.c (built with
the system's cc) measures the memory read bandwidth on --threads threads,
and the engine's share is of the better of the two: on a machine whose
memory's speed moves (a VM's host, other jobs) each engine is set against
the most it could have had around its run.

Prints one Markdown table: time to first token (the prompt's prefill), the
decode step's mean time and tokens/s, the rate at which the decode step
reads the weights (the bytes it must read: every weight but the embedding
table, of which it gathers one row) and its share of the read bandwidth,
peak resident memory beside the weights' size, and the tokens' agreement
with eager's. With gc and eager, unless --no-logits-check: eager also
decodes its own tokens again one at a time from an empty cache, and
gcrt-run checks gc's decode package's logits on those steps against
eager's (the tolerance is logits_check's); one line gives the largest
error and the verdict. Then one PASS or FAIL line per target of issue 34
on the CPU: the weights' read rate at least 90% of the read bandwidth, peak
memory at most 1.1 times the weights, faster than PyTorch's best CPU mode
in the run, the greedy tokens eager's; on the GPU: at least 85% of the copy
bandwidth, at least 1.25 times the best torch.compile mode's tokens/s,
prefill at least as fast as its, the greedy tokens eager's.
"""
import argparse
import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import sys
import signal
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
COMPILE_MODES = {"compile": None, "reduce-overhead": "reduce-overhead",
                 "max-autotune": "max-autotune"}
ENGINES = ["gc", "eager"] + list(COMPILE_MODES)


def load_models_script():
    spec = importlib.util.spec_from_file_location(
        "make_llm_models", os.path.join(HERE, "..", "make-llm-models.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Hugging Face's config names (utils/make-hf-llama.py's config.json) for
# make-llm-models.py's.
HF_NAMES = {"hidden_size": "hidden", "num_attention_heads": "heads", "num_key_value_heads": "kv_heads",
            "intermediate_size": "intermediate", "num_hidden_layers": "layers", "vocab_size": "vocab",
            "cache": "max_seq"}


def read_config(directory):
    """DIR/config.json with make-llm-models.py's names, whichever script made
    it; "programs" is true for Hugging Face's Llama, whose module this script
    does not build: the torch engines then run the exported programs."""
    c = json.load(open(os.path.join(directory, "config.json")))
    hf = "hidden_size" in c
    for theirs, ours in HF_NAMES.items():
        if theirs in c:
            c[ours] = c[theirs]
    c["programs"] = hf
    return c


def prefill_prompt(length, vocab):
    """The prompt --prefill-lengths times: the same token ids for every engine."""
    return [(7 * i + 3) % vocab for i in range(length)]


def torch_worker(args, engine):
    """Runs in its own process: prints one JSON line of results."""
    import torch

    torch.set_num_threads(args.threads)
    cuda = args.device == "cuda"
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    m = load_models_script()
    c = read_config(args.dir)
    if c["programs"]:
        modules = exported_modules(args)
        model = modules["decode"]
    else:
        # One module serves both programs; it maps the weights of whichever archive DIR has.
        model = m.mapped_model(archive(args.dir), c, m.DTYPES[c["dtype"]]).to(args.device)
        modules = {"prefill": model, "decode": model}
    torch.set_default_device(args.device)  # the tensors forward makes (positions, the mask)
    prompt = torch.tensor(c["prompt"], device=args.device)
    by_steps = not has_prefill(args.dir)
    runs = {name: caller(module if engine == "eager" else
                         torch.compile(module, mode=COMPILE_MODES[engine]), module)
            for name, module in modules.items() if module is not None}
    step = runs["decode"]
    run = runs.get("prefill", step)
    sync = torch.cuda.synchronize if cuda else (lambda: None)

    def generate():
        with torch.no_grad():
            sync()
            start = time.perf_counter()
            if by_steps:  # the decode program's shapes only: one token at a time
                for k in range(len(prompt)):
                    logits = step(prompt[None, k:k + 1], torch.tensor([k], device=args.device))
            else:
                logits = run(prompt[None], torch.arange(len(prompt), device=args.device))
            tokens = [int(logits[0, -1].argmax())]
            first = time.perf_counter()
            for k in range(1, args.new_tokens):
                logits = step(torch.tensor([[tokens[-1]]], device=args.device),
                              torch.tensor([len(prompt) + k - 1], device=args.device))
                tokens.append(int(logits[0, -1].argmax()))
            end = time.perf_counter()
        return tokens, first - start, end - first

    def prefill(length):
        tokens = torch.tensor([prefill_prompt(length, c["vocab"])], device=args.device)
        positions = torch.arange(length, device=args.device)
        with torch.no_grad():
            run(tokens, positions)  # compiles (or records) this length
            sync()
            start = time.perf_counter()
            run(tokens, positions)
            sync()
        return time.perf_counter() - start

    compile_s = 0.0
    if engine != "eager" or cuda:
        start = time.perf_counter()
        generate()  # compiles the prefill and the decode step; on a GPU, warms up
        compile_s = time.perf_counter() - start if engine != "eager" else 0.0
    tokens, ttft, decode = generate()
    prefills = {str(n): prefill(n) for n in args.prefill_lengths}
    if args.logits_dir:
        is_cache = (lambda fqn: fqn.startswith(("key_cache_", "value_cache_"))) if c["programs"] \
            else m.is_cache
        write_logit_runs(m, model, is_cache, prompt.tolist() + tokens[:-1], args.logits_dir)
    print(json.dumps({"tokens": tokens, "ttft_s": ttft, "decode_s": decode, "compile_s": compile_s,
                      "prefill_s": prefills,
                      "gpu_peak": torch.cuda.max_memory_allocated() if cuda else None}))


def copy_bandwidth():
    """Runs in its own process: GB/s of a 1 GiB device-to-device copy by torch
    (bytes read plus written over its time), best of 10."""
    import torch

    a = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    best = float("inf")
    for _ in range(11):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        b.copy_(a)
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) / 1e3)
    print(json.dumps({"copy_gbs": 2 * a.numel() / best / 1e9}))


def exported_modules(args):
    """The exported programs as PyTorch runs them (ExportedProgram.module()),
    the decode module's weights and buffers the prefill module's own tensors
    (assigned, not copied), so that the prefill's cache is the decode's, as
    one module serves both for make-llm-models.py's decoder. Loading reads
    each archive into memory (the peak memory counts both until the
    decode's copy is dropped)."""
    import torch

    def load(name):
        path = os.path.join(args.dir, name + ".pt2")
        if not os.path.exists(path):
            return None
        program = torch.export.load(path)
        module = program.module().to(args.device)
        module.input_names = [spec.arg.name for spec in program.graph_signature.input_specs
                              if spec.kind == torch.export.graph_signature.InputKind.USER_INPUT]
        return module

    prefill, decode = load("prefill"), load("decode")
    if prefill is not None:
        decode.load_state_dict(prefill.state_dict(), strict=True, assign=True)
        # The caches are buffers left out of the state dict (not persistent).
        for fqn, b in prefill.named_buffers():
            owner, _, leaf = fqn.rpartition(".")
            decode.get_submodule(owner)._buffers[leaf] = b
    return {"prefill": prefill, "decode": decode}


def caller(run, module):
    """`run` (the module or its torch.compile) called with the tokens and
    their positions: by keyword where the module is an exported program's,
    which takes its inputs by name (input_ids and cache_position for Hugging
    Face's Llama)."""
    names = getattr(module, "input_names", None)
    if not names:
        return run
    return lambda tokens, positions: run(**dict(zip(names, (tokens, positions))))


def write_logit_runs(m, model, is_cache, sequence, out):
    """Eager's decode steps over `sequence` (the prompt, then its own greedy
    tokens: teacher forcing), one token at a time from an empty cache, as
    gcrt-run's runs: out/run<k>/{in0,in1,out0}.npy."""
    import torch

    device = next(model.parameters()).device
    with torch.no_grad():
        for fqn, b in model.named_buffers():
            if is_cache(fqn):
                b.zero_()
        for k, token in enumerate(sequence):
            args = (torch.tensor([[token]], device=device), torch.tensor([k], device=device))
            m.save_run(os.path.join(out, "run%d" % k), [a.cpu() for a in args],
                       caller(model, model)(*args).cpu())


def run_child(cmd, limit=None, check=True):
    """Runs cmd; returns its stdout, stderr and its own peak resident memory in bytes,
    or None when it ran past `limit` seconds (it is then killed). A non-zero exit
    is an error unless `check` is false."""
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
    if proc.returncode and check:
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


def has_prefill(directory):
    return os.path.exists(os.path.join(directory, "prefill.pt2"))


def archive(directory):
    """The archive the torch engines map the weights from: either program's."""
    return os.path.join(directory, "prefill.pt2" if has_prefill(directory) else "decode.pt2")


def package_dir(args):
    return os.path.join(args.dir, "gc" if args.device == "cpu" else "gc-" + args.device)


def gc_engine(args, c):
    bin_dir = os.path.join(args.build, "bin")
    out = package_dir(args)
    os.makedirs(out, exist_ok=True)
    compile_s = 0.0
    programs = ("prefill", "decode") if has_prefill(args.dir) else ("decode",)
    for name in programs:
        package = os.path.join(out, name + ".gcpkg")
        if not os.path.exists(package):
            start = time.perf_counter()
            run_child([os.path.join(bin_dir, "gc-compile"), os.path.join(args.dir, name + ".pt2"),
                       "--weights", "external", "--device", args.device, "-o", package])
            compile_s += time.perf_counter() - start
    # One generation first, as torch.compile's engines have: the first token
    # is a loaded model's, not the first touch of a mapped archive's pages.
    generate = [os.path.join(bin_dir, "llm-generate"), "--threads", str(args.threads), "--warmup", "1"]
    prompt = ["--prompt", ",".join(str(int(t)) for t in c["prompt"])]
    # Two processes, so that each package's peak memory is its own: the
    # decode is timed with the decode package alone ("-": the prompt a token
    # at a time), and the first token with the prefill package (-n 1 never
    # runs the decode package).
    text, err, peak = run_child(generate + ["-", os.path.join(out, "decode.gcpkg"),
                                            "-n", str(args.new_tokens)] + prompt)
    tokens = [int(t) for t in text.split(":", 1)[1].split()]
    decode = float(re.search(r"tokens in ([0-9.]+) s", err).group(1))
    prefill_peak = None
    if has_prefill(args.dir):
        both = [os.path.join(out, "prefill.gcpkg"), os.path.join(out, "decode.gcpkg"), "-n", "1"]
        _, err, prefill_peak = run_child(generate + both + prompt)
    ttft = float(re.search(r"time to first token: ([0-9.]+) ms", err).group(1)) / 1e3
    prefills = {str(n): prefill_time(args, c, n) for n in args.prefill_lengths}
    step = device_step_time(args, c) if args.device != "cpu" else None
    return {"tokens": tokens, "ttft_s": ttft, "decode_s": decode, "compile_s": compile_s,
            "peak": peak, "prefill_peak": prefill_peak, "prefill_s": prefills, "gpu_peak": None,
            "device_step_s": step}


def gcrt_run_median(args, package, inputs, runs):
    """Seconds: the median of `gcrt-run package inputs --bench runs` (inputs and
    outputs in GPU memory with --device cuda: --device-io)."""
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for i, a in enumerate(inputs):
            files.append(os.path.join(tmp, "in%d.npy" % i))
            np.save(files[-1], np.asarray(a, dtype=np.int64))
        cmd = [os.path.join(args.build, "bin", "gcrt-run"), package] + files + \
            ["--bench", str(runs), "--threads", str(args.threads)]
        text, _, _ = run_child(cmd + (["--device-io"] if args.device != "cpu" else []))
    return float(re.search(r"median ([0-9.e+-]+) ms", text).group(1)) / 1e3


def prefill_time(args, c, n):
    """The prefill package alone on a prompt of n tokens: on a GPU, as the torch
    engines time it, with the logits [1, n, vocab] left in GPU memory (a host
    loop would copy them all back: 0.5 GB for 2048 tokens of the 1B's)."""
    return gcrt_run_median(args, os.path.join(package_dir(args), "prefill.gcpkg"),
                           [[prefill_prompt(n, c["vocab"])], list(range(n))], 5)


def device_step_time(args, c):
    """One decode step with its token, position and logits in GPU memory
    (what llm-generate's host loop adds: the token in, the logits out, the
    choice on the host), at the middle of the generation's positions."""
    at = len(c["prompt"]) + args.new_tokens // 2
    return gcrt_run_median(args, os.path.join(package_dir(args), "decode.gcpkg"),
                           [[[c["prompt"][0]]], [at]], 100)


def logits_check(args, c, runs):
    """gc's decode package on eager's teacher-forced steps (write_logit_runs):
    gcrt-run checks each step's logits at rtol 1e-3 and atol max(1e-3, 2e-5 M)
    in float32 (float32 error grows with the magnitude of what is summed), at
    rtol 1e-2 and atol 2^(floor(log2 M) - 5) in bfloat16 (4 bfloat16 steps at
    M: 0.031 at the tiny model's 1.93, as llm-tiny-bf16.test), M the largest
    |logit| of eager's steps. Returns (steps, steps that pass, largest error, atol, rtol)."""
    import numpy as np

    steps = len([d for d in os.listdir(runs) if d.startswith("run")])
    largest = 0.0
    for k in range(steps):
        out = np.load(os.path.join(runs, "run%d" % k, "out0.npy"))
        if out.dtype == np.dtype("V2"):  # bfloat16, as make-llm-models.py saves it
            out = (out.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        largest = max(largest, float(np.abs(out).max()))
    if c["dtype"] == "bfloat16":
        rtol, atol = 1e-2, 2.0 ** (math.floor(math.log2(largest)) - 5)
    else:
        rtol, atol = 1e-3, max(1e-3, 2e-5 * largest)
    text, _, _ = run_child([os.path.join(args.build, "bin", "gcrt-run"),
                            os.path.join(package_dir(args), "decode.gcpkg"), "--runs", str(steps),
                            "--inputs-dir", runs, "--expect-runs", "--rtol", str(rtol), "--atol",
                            str(atol), "--threads", str(args.threads)], check=False)
    found = re.findall(r"run\d+ out0: max abs error ([0-9.e+-]+|nan|inf), .*: (pass|FAIL)", text)
    errors = [float(e) for e, _ in found]
    return (steps, sum(v == "pass" for _, v in found),
            max(errors) if len(found) == steps else float("nan"), atol, rtol)


def torch_engine(args, engine, logits_dir=None):
    cmd = [sys.executable, os.path.abspath(__file__), args.dir, "--worker", engine,
           "--threads", str(args.threads), "--new-tokens", str(args.new_tokens),
           "--device", args.device, "--prefill-lengths"] + [str(n) for n in args.prefill_lengths]
    if logits_dir:
        cmd += ["--logits-dir", logits_dir]
    done = run_child(cmd, args.compile_limit if engine in COMPILE_MODES else None, check=False)
    if done is None:
        return None
    text, message, peak = done
    lines = text.strip().splitlines()
    if not lines or not lines[-1].startswith("{"):
        # A peer that fails (an op its compiler refuses, say) is a row that
        # says so, not the end of the run.
        last = [line for line in message.strip().splitlines() if line.strip()]
        return {"error": last[-1][:160] if last else "exited without results"}
    return dict(json.loads(lines[-1]), peak=peak)


def target_lines(args, results, bandwidth, step_bytes, steps, reference, dtype):
    """Issue 34's targets for gc in this run, one 'PASS|FAIL: ...' line each.
    Equal greedy tokens are a target in float32; in bfloat16 the logits are
    (logits_check), and the tokens' agreement is a NOTE."""
    gc = results["gc"]
    cuda = args.device == "cuda"
    step = gc["decode_s"] / steps
    share = step_bytes / step / 1e9 / bandwidth["gc"]
    verdict = lambda ok: "PASS" if ok else "FAIL"  # noqa: E731
    lines = [f"{verdict(share >= (0.85 if cuda else 0.9))}: gc reads the weights at {share:.0%} "
             f"of the {'copy' if cuda else 'read'} bandwidth (target: at least "
             f"{'85' if cuda else '90'}%)"]
    if not cuda:
        rss = gc["peak"] / os.path.getsize(os.path.join(args.dir, "decode.pt2"))
        lines.append(f"{verdict(rss <= 1.1)}: gc's peak resident memory is {rss:.2f} of the "
                     f"weights' size (target: at most 1.1)")
    peers = {e: r for e, r in results.items()
             if e != "gc" and r is not None and "error" not in r and (e in COMPILE_MODES or not cuda)}
    missing = [e for e, r in results.items() if r is None or "error" in r]
    note = f" ({', '.join(missing)} did not finish)" if missing else ""
    if peers:
        rates = {e: steps / r["decode_s"] for e, r in peers.items()}
        best = max(rates, key=rates.get)
        factor = 1.25 if cuda else 1.0
        lines.append(f"{verdict(1 / step >= factor * rates[best])}: gc decodes {1 / step:.2f} tok/s, "
                     f"the best {'torch.compile' if cuda else 'PyTorch CPU'} mode here ({best}) "
                     f"{rates[best]:.2f}" + (f" (target: at least {factor}x)" if cuda else "") + note)
        for n in args.prefill_lengths if cuda else []:
            fastest = min(peers, key=lambda e: peers[e]["prefill_s"][str(n)])
            ours, theirs = gc["prefill_s"][str(n)], peers[fastest]["prefill_s"][str(n)]
            lines.append(f"{verdict(ours <= theirs)}: gc's prefill of {n} tokens takes "
                         f"{ours * 1e3:.2f} ms, {fastest}'s {theirs * 1e3:.2f}")
    if reference is not None:
        same = gc["tokens"] == reference
        agree = next((k for k, (a, b) in enumerate(zip(gc["tokens"], reference)) if a != b),
                     len(reference))
        lines.append(f"{verdict(same) if dtype == 'float32' else 'NOTE'}: gc's {len(reference)} "
                     f"greedy tokens {'are' if same else 'are not'} eager's"
                     + ("" if same else f" (the first {agree} are)"))
    return lines


def measure_bandwidth(args, probe):
    """GB/s now: the CPU's read bandwidth on --threads threads, or the GPU's copy bandwidth."""
    if args.device == "cpu":
        return read_bandwidth(probe, args.threads)
    text, _, _ = run_child([sys.executable, os.path.abspath(__file__), args.dir,
                            "--worker", "copy-bandwidth"])
    return json.loads(text.strip().splitlines()[-1])["copy_gbs"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir")
    p.add_argument("--build", default="build")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--new-tokens", type=int, default=32)
    p.add_argument("--engines", nargs="+", default=["gc", "eager", "compile"], choices=ENGINES)
    p.add_argument("--prefill-lengths", type=int, nargs="*", default=[],
                   help="prompt lengths to time the prefill alone on (tokens/s)")
    p.add_argument("--compile-limit", type=float, default=900,
                   help="seconds a torch.compile process may take (its generations)")
    p.add_argument("--no-logits-check", action="store_true",
                   help="skip the check of gc's decode logits against eager's")
    p.add_argument("--worker", choices=["copy-bandwidth"] + ENGINES[1:], help=argparse.SUPPRESS)
    p.add_argument("--logits-dir", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker == "copy-bandwidth":
        return copy_bandwidth()
    if args.worker:
        return torch_worker(args, args.worker)

    # No torch here: a child's peak memory counts what its parent held when it was forked.
    cuda = args.device == "cuda"
    c = read_config(args.dir)
    if args.prefill_lengths and not has_prefill(args.dir):
        raise SystemExit(f"llm.py: --prefill-lengths needs the prefill program, and "
                         f"{os.path.join(args.dir, 'prefill.pt2')} does not exist")
    weights = os.path.getsize(os.path.join(args.dir, "decode.pt2"))
    step_bytes = step_weight_bytes(c)
    results, bandwidth, check = {}, {}, None
    with tempfile.TemporaryDirectory() as tmp:
        probe = os.path.join(tmp, "membw")
        if not cuda:
            cc = shutil.which("cc") or shutil.which("gcc")
            if not cc:
                raise SystemExit("llm.py: no C compiler (cc or gcc) to build utils/bench/membw.c")
            run_child([cc, "-O3", "-march=native", "-fopenmp", os.path.join(HERE, "membw.c"),
                       "-o", probe])
        checking = not args.no_logits_check and {"gc", "eager"} <= set(args.engines)
        runs = os.path.join(tmp, "logits") if checking else None
        for engine in sorted(args.engines, key=ENGINES.index):
            before = measure_bandwidth(args, probe)
            results[engine] = (gc_engine(args, c) if engine == "gc"
                               else torch_engine(args, engine, runs if engine == "eager" else None))
            bandwidth[engine] = max(before, measure_bandwidth(args, probe))
        if checking and results["eager"] and "error" not in results["eager"]:
            check = logits_check(args, c, runs)
    reference = (results.get("eager") or {}).get("tokens")
    steps = args.new_tokens - 1
    where = "the GPU" if cuda else f"{args.threads} threads"
    print(f"{c['layers']} layers, hidden {c['hidden']}, vocab {c['vocab']}, {c['dtype']}, "
          f"cache {c['max_seq']}; weights {weights / 1e9:.2f} GB; {where}; "
          f"prompt of {len(c['prompt'])}, {args.new_tokens} tokens; a decode step reads "
          f"{step_bytes / 1e9:.2f} GB of weights; load average {os.getloadavg()[0]:.1f} at the end\n")
    prefill_heads = "".join(f" prefill {n} (tok/s) |" for n in args.prefill_lengths)
    memory = "GPU peak (GB) | " if cuda else "peak RSS (GB) | RSS / weights | "
    kind = "copy" if cuda else "read"
    print(f"| engine | time to first token (ms) |{prefill_heads} decode step (ms) | tok/s | "
          f"weights read (GB/s) | {kind} bandwidth (GB/s) | share | {memory}compile (s) | "
          "tokens = eager's |")
    print("|" + " --- |" * (10 + len(args.prefill_lengths) + (0 if cuda else 1)))
    for engine, r in results.items():
        if r is None or "error" in r:
            why = f"did not finish in {args.compile_limit:.0f} s" if r is None else \
                "failed: " + r["error"].replace("|", "/")
            print(f"| {engine} | {why} |"
                  + " |" * len(args.prefill_lengths) + f" | | | {bandwidth[engine]:.2f} | |"
                  + (" |" if cuda else " | |") + " | |")
            continue
        same = "-" if reference is None else ("yes" if r["tokens"] == reference else "no")
        step = r["decode_s"] / steps
        prefills = "".join(f" {n / r['prefill_s'][str(n)]:.0f} |" for n in args.prefill_lengths)
        if cuda:
            used = "-" if r["gpu_peak"] is None else f"{r['gpu_peak'] / 1e9:.2f}"
            memory = f"{used} | "
        else:
            memory = f"{r['peak'] / 1e9:.2f} | {r['peak'] / weights:.2f} | "
        print(f"| {engine} | {r['ttft_s'] * 1e3:.1f} |{prefills} {step * 1e3:.2f} | {1 / step:.2f} | "
              f"{step_bytes / step / 1e9:.2f} | {bandwidth[engine]:.2f} | "
              f"{step_bytes / step / 1e9 / bandwidth[engine]:.0%} | {memory}"
              f"{r['compile_s']:.1f} | {same} |")
    if "gc" in results and results["gc"] is not None:
        print()
        for line in target_lines(args, results, bandwidth, step_bytes, steps, reference,
                                 c["dtype"]):
            print(line)
    if check:
        checked, passed, error, atol, rtol = check
        print(f"{'PASS' if passed == checked else 'FAIL'}: gc's decode logits against eager's, "
              f"{checked} steps over eager's tokens (the prompt, then its greedy ones): largest abs "
              f"error {error:.3g}; {passed} of {checked} steps within rtol {rtol:g}, atol {atol:.3g}")
    if cuda and results.get("gc"):
        step = results["gc"]["device_step_s"]
        print(f"\ngc's decode step alone, token and logits in GPU memory (gcrt-run --device-io "
              f"--bench 100): {step * 1e3:.3f} ms, {1 / step:.1f} tok/s, "
              f"{step_bytes / step / 1e9 / bandwidth['gc']:.0%} of the copy bandwidth; gc's prefill "
              f"times are its prefill package's the same way")
    if not has_prefill(args.dir):
        print("\nNo prefill program: every engine's first token is the prompt fed a token at a "
              "time through the decode program")
    elif "gc" in results and results["gc"] and not cuda:
        print(f"\ngc: the decode row's memory is the decode package's process; the first "
              f"token's (the prefill package's) peaked at {results['gc']['prefill_peak'] / 1e9:.2f} GB")


if __name__ == "__main__":
    main()
