#!/usr/bin/env python3
"""gc's float32 models with --precision=exact and --precision=bf16, side by
side: the median latency of each at each thread count, the speed-up, and
what bf16 arithmetic does to the outputs against PyTorch's float32 outputs.

Two steps, so that the packages can be made on one machine and run on
another (the GPU machine's Intel CPU has AMX, and no compiler is needed
there):

  precision.py prepare --build build --out DIR [--models resnet50 bert_base llama_50m tv_vit_b_16]
                       [--export-python PY]
      regenerates the real models' archives in DIR/<model>/ (weightgen.py),
      exports export_models.py's models (tv_vit_b_16, hf_bert, ...) there
      with recipe weights (export_models.py --recipe, run by PY: a python
      with torch, and torchvision or transformers as the model needs), and
      compiles DIR/<model>.exact.gcpkg and DIR/<model>.bf16.gcpkg with
      gc-compile --freeze --weights=external (the weights stay in the
      archive, so DIR travels without them: --drop-archives deletes them,
      and `run` rebuilds each from its recipe with numpy alone)
  precision.py run --gcrt-run build/bin/gcrt-run --out DIR [--threads 2 8] [--bench 20]
                   [--peers ort compile-frozen] [--warm-jobs J]
      rebuilds any archive missing in DIR, runs both packages of every
      model with gcrt-run and each peer through torch_worker.py (ONNX Runtime,
      Inductor with freezing), every engine pinned to the first T cores with
      T threads, prints a Markdown table. With --warm-jobs, each thread
      count starts by preparing every peer J at a time on cores of their own
      (the ONNX export, Inductor's compile into its cache), so that the
      pinned, timed run of a peer loads what it would otherwise compile on
      T cores

Error: the largest |gc - torch| over the output, divided by the largest
|torch| (the output's magnitude: float32 error grows with it, bf16 error
more so), for each precision. The last column names the oneDNN
implementations the bf16 package's products and convolutions ran (its
verbose log), which tells AMX (avx512_core_amx) from AVX-512 BF16.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REALMODELS = os.path.join(HERE, "..", "..", "test", "Models", "Inputs", "realmodels")
PRECISIONS = ("exact", "bf16")


def regen(out, model, export_python=None):
    """Makes DIR/<model>/model.pt2 when it is missing: a real model's from
    its recipe in the checkout (its .npy files copied, not linked, so that
    DIR travels alone), an exported model's from the recipe in DIR/<model>/,
    or, given `export_python`, by exporting it there."""
    d = os.path.join(out, model)
    if os.path.exists(os.path.join(d, "model.pt2")):
        return
    weightgen = [sys.executable, os.path.join(REALMODELS, "weightgen.py"), "regen"]
    if os.path.isdir(os.path.join(REALMODELS, model)):
        subprocess.run(weightgen + ["--to", out, os.path.join(REALMODELS, model)], check=True,
                       stdout=subprocess.DEVNULL)
        for f in os.listdir(d):
            if os.path.islink(os.path.join(d, f)):
                shutil.copy(os.path.realpath(os.path.join(d, f)), os.path.join(d, f + ".tmp"))
                os.replace(os.path.join(d, f + ".tmp"), os.path.join(d, f))
    elif os.path.exists(os.path.join(d, "manifest.json")):
        subprocess.run(weightgen + [d], check=True, stdout=subprocess.DEVNULL)
    elif export_python:
        subprocess.run([export_python, os.path.join(HERE, "export_models.py"), model, d, "--recipe"], check=True)
    else:
        sys.exit(f"{d}: no model.pt2 and no recipe; run `precision.py prepare` for it first")


def inputs(out, model):
    d = os.path.join(out, model)
    return sorted(os.path.join(d, f) for f in os.listdir(d) if re.fullmatch(r"in\d+\.npy", f))


def compile_package(build, out, model, precision, pkg):
    """Compiles DIR/<model>/model.pt2 into `pkg` with external weights."""
    subprocess.run([os.path.join(build, "bin", "gc-compile"), os.path.join(out, model, "model.pt2"),
                    "--freeze", "--weights=external", f"--precision={precision}", "-o", pkg], check=True)


def prepare(args):
    os.makedirs(args.out, exist_ok=True)
    for model in args.models:
        regen(args.out, model, args.export_python)
        for p in PRECISIONS:
            pkg = os.path.join(args.out, f"{model}.{p}.gcpkg")
            compile_package(args.build, args.out, model, p, pkg)
            print(f"made {pkg}", file=sys.stderr)
        if args.drop_archives:
            os.remove(os.path.join(args.out, model, "model.pt2"))


def run_one(gcrt_run, pkg, ins, threads, bench, env=None):
    """(median ms, first output) of `bench` runs of a package by gcrt-run,
    pinned to the first `threads` cores."""
    cores = ",".join(str(c) for c in range(threads))
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run(["taskset", "-c", cores, gcrt_run, pkg, *ins, "--threads", str(threads),
                            "--bench", str(bench), "-o", tmp],
                           check=True, capture_output=True, text=True, env=env)
        m = re.search(r"median ([0-9.]+) ms", r.stdout + r.stderr)
        if not m:
            sys.exit(f"no median in gcrt-run's output:\n{r.stdout}{r.stderr}")
        return float(m.group(1)), np.load(os.path.join(tmp, "out0.npy"))


def onednn_kernels(gcrt_run, pkg, ins, threads):
    """The oneDNN implementations the package's products and convolutions
    ran, from one run with oneDNN's verbose log (DNNL_VERBOSE for 2.x,
    ONEDNN_VERBOSE for 3.x): e.g. 'brg:avx512_core_amx' where a bfloat16
    product runs on AMX, 'brg:avx512_core_bf16' where it runs on AVX-512
    BF16."""
    env = dict(os.environ, DNNL_VERBOSE="1", ONEDNN_VERBOSE="1")
    cores = ",".join(str(c) for c in range(threads))
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run(["taskset", "-c", cores, gcrt_run, pkg, *ins, "--threads", str(threads), "-o", tmp],
                           capture_output=True, text=True, env=env)
    kinds = set()
    for line in (r.stdout + r.stderr).splitlines():
        f = line.split(",")
        if len(f) > 4 and f[0].endswith("verbose") and f[1] == "exec" and f[3] in ("matmul", "convolution"):
            kinds.add(f[4])
    return " ".join(sorted(kinds)) or "none"


def relative_error(got, want):
    """The largest |got - want| divided by the largest |want|."""
    want = want.astype(np.float64)
    return float(np.abs(got.astype(np.float64) - want).max()) / (float(np.abs(want).max()) or 1.0)


def eager_outputs(model_dir):
    """Writes PyTorch's outputs (out<i>.npy) for a model whose recipe left
    them out (a machine that could not take the file regenerates them)."""
    import torch
    ep = torch.export.load(os.path.join(model_dir, "model.pt2"))
    ins = [torch.from_numpy(np.load(f)) for f in inputs(os.path.dirname(model_dir), os.path.basename(model_dir))]
    with torch.no_grad():
        outs = ep.module()(*ins)
    for i, t in enumerate(outs if isinstance(outs, (list, tuple)) else [outs]):
        np.save(os.path.join(model_dir, f"out{i}.npy"), t.numpy())


def peer_ms(model_dir, engine, threads, bench):
    """(median ms, None) of one peer engine served by torch_worker.py, pinned
    to the first `threads` cores, or (None, its error's first line)."""
    cores = ",".join(str(c) for c in range(threads))
    cmd = ["taskset", "-c", cores] + worker_cmd(model_dir, engine, threads)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True, env=env)

        def reply(tag):
            for line in proc.stdout:
                if line.startswith(tag + " "):
                    return json.loads(line[len(tag) + 1:])
            return None
        try:
            ready = reply("READY")
            if ready is None or not ready.get("ok"):
                err.seek(0)
                lines = err.read().strip().splitlines() if ready is None else [ready["check"]]
                return None, (lines[-1] if lines else "no reply")[:80]
            proc.stdin.write("warmup 5\n")
            proc.stdin.flush()
            reply("RESULT")
            proc.stdin.write("bench %d\n" % bench)
            proc.stdin.flush()
            return statistics.median(reply("RESULT")["ms"]), None
        finally:
            proc.kill()
            proc.wait()


def worker_cmd(model_dir, engine, threads):
    return [sys.executable, os.path.join(HERE, "torch_worker.py"), "serve", model_dir, "--engine", engine,
            "--threads", str(threads), "--onnx", os.path.join(model_dir, "model.onnx")]


def warm_peers(out, models, engines, threads, jobs):
    """Prepares every (model, peer) once before anything is timed, `jobs` at
    a time, each on cores of its own with `threads` threads (the thread count
    the timed run will use, which Inductor's generated code is made for):
    the ONNX files are exported into the model folders and Inductor's cache
    (TORCHINDUCTOR_CACHE_DIR, shared) is filled, so that the timed, pinned
    run loads them instead of compiling on its few cores. A job's cores are
    the machine's shared out among `jobs` (at least `threads`): Inductor
    compiles its kernels on all of them while the code it makes, and ONNX
    Runtime, keep `threads` threads. Prints each preparation's seconds, and
    a line per preparation that failed; the timed run then reports it in
    its cell."""
    cores = sorted(os.sched_getaffinity(0))
    width = max(threads, len(cores) // max(1, jobs))
    slots = [cores[i:i + width] for i in range(0, len(cores) - width + 1, width)][:max(1, jobs)]
    tasks = [(m, e) for m in models for e in engines]
    free, running = list(slots), []
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    while tasks or running:
        while tasks and free:
            model, engine = tasks.pop(0)
            slot = free.pop(0)
            cmd = ["taskset", "-c", ",".join(map(str, slot))] + worker_cmd(os.path.join(out, model), engine, threads)
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True, env=env)
            proc.stdin.write("quit\n")
            proc.stdin.close()
            running.append((slot, proc, model, engine, time.monotonic()))
        slot, proc, model, engine, start = running.pop(0)
        ready = [l for l in proc.stdout if l.startswith("READY ")]
        proc.wait()
        free.append(slot)
        ok = ready and json.loads(ready[0][len("READY "):]).get("ok")
        print(f"warm-up of {engine} for {model} at {threads} threads on {len(slot)} cores: "
              f"{time.monotonic() - start:.0f} s{'' if ok else ', failed'}", file=sys.stderr)


def run(args):
    rows = []
    for model in args.models:
        regen(args.out, model)
        want_path = os.path.join(args.out, model, "out0.npy")
        if not os.path.exists(want_path):
            eager_outputs(os.path.join(args.out, model))
    for t in args.threads:
        if args.warm_jobs:
            warm_peers(args.out, args.models, args.peers, t, args.warm_jobs)
        for model in args.models:
            want = np.load(os.path.join(args.out, model, "out0.npy")).astype(np.float64)
            peers = {}
            for engine in args.peers:
                peers[engine] = peer_ms(os.path.join(args.out, model), engine, t, args.bench)
            got = {p: run_one(args.gcrt_run, os.path.join(args.out, f"{model}.{p}.gcpkg"), inputs(args.out, model),
                              t, args.bench) for p in PRECISIONS}
            err = {p: relative_error(got[p][1], want) for p in PRECISIONS}
            kernels = onednn_kernels(args.gcrt_run, os.path.join(args.out, f"{model}.bf16.gcpkg"),
                                     inputs(args.out, model), t)
            best = min((ms for ms, _ in peers.values() if ms), default=None)
            cells = ["%.2f" % ms if ms else "error: " + e for ms, e in peers.values()]
            ratio = "%.2f" % (got["exact"][0] / best) if best else ""
            rows.append(f"| {model} | {t} | {' | '.join(cells)}{' | ' if cells else ''}{got['exact'][0]:.2f} | "
                        f"{ratio} | {got['bf16'][0]:.2f} | {got['exact'][0] / got['bf16'][0]:.2f}x | "
                        f"{err['exact']:.1e} | {err['bf16']:.1e} | {kernels} |")
            print(rows[-1], file=sys.stderr)
    names = {"ort": "ONNX Runtime", "compile-frozen": "Inductor, freezing"}
    head = "".join(f" {names.get(e, e)} (ms) |" for e in args.peers)
    print(f"| model | threads |{head} gc exact (ms) | exact / best peer | gc bf16 (ms) | bf16 speed-up "
          "| error exact | error bf16 | bf16 products and convolutions on |")
    print("| --- | ---: |" + " ---: |" * (len(args.peers) + 6) + " --- |")
    print("\n".join(rows))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--build", required=True)
    p.add_argument("--export-python", default=sys.executable,
                   help="the python that exports export_models.py's models (torch, torchvision, transformers)")
    p.add_argument("--drop-archives", action="store_true",
                   help="delete each model.pt2 once compiled (run rebuilds it from its recipe)")
    r = sub.add_parser("run")
    r.add_argument("--gcrt-run", required=True)
    r.add_argument("--threads", type=int, nargs="+", default=[2, 8])
    r.add_argument("--bench", type=int, default=20)
    r.add_argument("--peers", nargs="*", default=["ort", "compile-frozen"],
                   choices=["ort", "compile-frozen", "compile", "eager"])
    r.add_argument("--warm-jobs", type=int, default=0,
                   help="before timing each thread count, prepare the peers (ONNX export, Inductor's "
                        "compile into its cache) this many at a time on cores of their own")
    for s in (p, r):
        s.add_argument("--out", required=True)
        s.add_argument("--models", nargs="+", default=["resnet50", "bert_base", "llama_50m", "tv_vit_b_16"])
    args = ap.parse_args()
    prepare(args) if args.cmd == "prepare" else run(args)


if __name__ == "__main__":
    main()
