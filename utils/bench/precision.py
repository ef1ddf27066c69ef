#!/usr/bin/env python3
"""gc's float32 models with --precision=exact and --precision=bf16, side by
side: the median latency of each at each thread count, the speed-up, and
what bf16 arithmetic does to the outputs against PyTorch's float32 outputs.

Two steps, so that the packages can be made on one machine and run on
another (the GPU machine's Intel CPU has AMX, and no compiler is needed
there):

  precision.py prepare --build build --out DIR [--models resnet50 bert_base llama_50m]
      regenerates the real models' archives in DIR/<model>/ (weightgen.py)
      and compiles DIR/<model>.exact.gcpkg and DIR/<model>.bf16.gcpkg with
      gc-compile --freeze --weights=external (the weights stay in the
      archive, so DIR travels without them)
  precision.py run --gcrt-run build/bin/gcrt-run --out DIR [--threads 2 8] [--bench 20]
                   [--peers ort compile-frozen]
      regenerates any archive missing in DIR, runs both packages of every
      model with gcrt-run and each peer through torch_worker.py (ONNX Runtime,
      Inductor with freezing), every engine pinned to the first T cores with
      T threads, prints a Markdown table

Error: the largest |gc - torch| over the output, divided by the largest
|torch| (the output's magnitude: float32 error grows with it, bf16 error
more so), for each precision.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REALMODELS = os.path.join(HERE, "..", "..", "test", "Models", "Inputs", "realmodels")
PRECISIONS = ("exact", "bf16")


def regen(out, model):
    if not os.path.exists(os.path.join(out, model, "model.pt2")):
        subprocess.run([sys.executable, os.path.join(REALMODELS, "weightgen.py"), "regen", "--to", out,
                        os.path.join(REALMODELS, model)], check=True, stdout=subprocess.DEVNULL)


def inputs(out, model):
    d = os.path.join(out, model)
    return sorted(os.path.join(d, f) for f in os.listdir(d) if re.fullmatch(r"in\d+\.npy", f))


def prepare(args):
    os.makedirs(args.out, exist_ok=True)
    for model in args.models:
        regen(args.out, model)
        for p in PRECISIONS:
            pkg = os.path.join(args.out, f"{model}.{p}.gcpkg")
            subprocess.run([os.path.join(args.build, "bin", "gc-compile"), os.path.join(args.out, model, "model.pt2"),
                            "--freeze", "--weights=external", f"--precision={p}", "-o", pkg], check=True)
            print(f"made {pkg}", file=sys.stderr)


def run_one(gcrt_run, pkg, ins, threads, bench):
    cores = ",".join(str(c) for c in range(threads))
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run(["taskset", "-c", cores, gcrt_run, pkg, *ins, "--threads", str(threads),
                            "--bench", str(bench), "-o", tmp],
                           check=True, capture_output=True, text=True)
        m = re.search(r"median ([0-9.]+) ms", r.stdout + r.stderr)
        if not m:
            sys.exit(f"no median in gcrt-run's output:\n{r.stdout}{r.stderr}")
        return float(m.group(1)), np.load(os.path.join(tmp, "out0.npy"))


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
    cmd = ["taskset", "-c", cores, sys.executable, os.path.join(HERE, "torch_worker.py"), "serve", model_dir,
           "--engine", engine, "--threads", str(threads), "--onnx", os.path.join(model_dir, "model.onnx")]
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


def run(args):
    rows = []
    for model in args.models:
        regen(args.out, model)
        want_path = os.path.join(args.out, model, "out0.npy")
        if not os.path.exists(want_path):
            eager_outputs(os.path.join(args.out, model))
        want = np.load(want_path).astype(np.float64)
        scale = float(np.abs(want).max()) or 1.0
        for t in args.threads:
            peers = {}
            for engine in args.peers:
                peers[engine] = peer_ms(os.path.join(args.out, model), engine, t, args.bench)
            got = {p: run_one(args.gcrt_run, os.path.join(args.out, f"{model}.{p}.gcpkg"), inputs(args.out, model),
                              t, args.bench) for p in PRECISIONS}
            err = {p: float(np.abs(got[p][1].astype(np.float64) - want).max()) / scale for p in PRECISIONS}
            best = min((ms for ms, _ in peers.values() if ms), default=None)
            cells = ["%.2f" % ms if ms else "error: " + e for ms, e in peers.values()]
            ratio = "%.2f" % (got["exact"][0] / best) if best else ""
            rows.append(f"| {model} | {t} | {' | '.join(cells)}{' | ' if cells else ''}{got['exact'][0]:.2f} | "
                        f"{ratio} | {got['bf16'][0]:.2f} | {got['exact'][0] / got['bf16'][0]:.2f}x | "
                        f"{err['exact']:.1e} | {err['bf16']:.1e} |")
            print(rows[-1], file=sys.stderr)
    names = {"ort": "ONNX Runtime", "compile-frozen": "Inductor, freezing"}
    head = "".join(f" {names.get(e, e)} (ms) |" for e in args.peers)
    print(f"| model | threads |{head} gc exact (ms) | exact / best peer | gc bf16 (ms) | bf16 speed-up "
          "| error exact | error bf16 |")
    print("| --- | ---: |" + " ---: |" * (len(args.peers) + 6))
    print("\n".join(rows))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--build", required=True)
    r = sub.add_parser("run")
    r.add_argument("--gcrt-run", required=True)
    r.add_argument("--threads", type=int, nargs="+", default=[2, 8])
    r.add_argument("--bench", type=int, default=20)
    r.add_argument("--peers", nargs="*", default=["ort", "compile-frozen"],
                   choices=["ort", "compile-frozen", "compile", "eager"])
    for s in (p, r):
        s.add_argument("--out", required=True)
        s.add_argument("--models", nargs="+", default=["resnet50", "bert_base", "llama_50m"])
    args = ap.parse_args()
    prepare(args) if args.cmd == "prepare" else run(args)


if __name__ == "__main__":
    main()
