#!/usr/bin/env python3
"""PT2E int8 models (issue 36) beside their float32 originals: gc's package of
the float32 program, gc's package of the int8 program (prepare_pt2e and
convert_pt2e with torchao's X86InductorQuantizer, utils/make-int8-models.py),
and Inductor's lowering of the same int8 program (torch.compile with
freezing, which fuses the quantized patterns into int8 oneDNN calls), the
median latency of each at each thread count, and how far each int8 output is
from the int8 program run eagerly.

Two steps, so that the packages can be made on one machine and run on
another (no compiler is needed where they run):

  int8.py prepare --build build --out DIR [--models resnet50 bert]
          [--pack PACK] [--torch-python PY]
      puts each model's float32 program into DIR/<model>/ and its int8
      program into DIR/<model>_int8/ unless they are there, and compiles
      DIR/<model>.f32.gcpkg and DIR/<model>.int8.gcpkg with gc-compile
      --freeze --weights=external (the weights stay in the archives). The
      programs come from PACK/<model>/ and PACK/<model>_int8/ where those
      hold packed models (int8_recipe.py: a skeleton and a recipe for the
      weights, a few hundred KB), unpacked with PY, a python with torch
      (torchao not needed); otherwise they are exported with
      utils/make-int8-models.py large (PY with torch, torchvision and
      torchao), and with --pack, packed into PACK and unpacked again, so that
      this machine runs the model every other machine unpacks
  int8.py run --gcrt-run build/bin/gcrt-run --out DIR [--threads 2 8]
          [--bench 20] [--pack PACK] [--torch-python PY]
      runs both packages of every model with gcrt-run (the weights from
      DIR/<model>/model.pt2 and DIR/<model>_int8/model.pt2, unpacked from
      PACK with PY where missing: on another machine only the packages and
      PACK need to be carried) and Inductor's int8 lowering with PY (a
      python with torch), each pinned to the first T cores, and prints a
      Markdown table

On the GPU machine's CPU, from a checkout with a built tree: here
  utils/bench/int8.py prepare --build build --out /tmp/int8 --pack utils/bench/int8-models
then carry /tmp/int8/*.gcpkg into /tmp/int8 there and run
  utils/bench/int8.py run --gcrt-run build/bin/gcrt-run --out /tmp/int8 --pack utils/bench/int8-models

Latencies: median / minimum of the runs (on a loaded machine the minimum is
the figure to compare); the load average at the end of each row.

Error: the largest |out - eager int8| over the output divided by one
quantization step at the output's range ((max - min) / 255 of the eager int8
output): at most about 1 means "within the quantization step".
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")


def inputs(d):
    return sorted((os.path.join(d, f) for f in os.listdir(d) if re.fullmatch(r"in\d+\.npy", f)),
                  key=lambda f: int(os.path.basename(f)[2:-4]))


def recipe(py, cmd, src, dst):
    subprocess.run([py, os.path.join(HERE, "int8_recipe.py"), cmd, src, dst], check=True)


def prepare(args):
    os.makedirs(args.out, exist_ok=True)
    for model in args.models:
        fdir, qdir = os.path.join(args.out, model), os.path.join(args.out, f"{model}_int8")
        dirs = (fdir, qdir)
        packed = [os.path.join(args.pack, os.path.basename(d)) for d in dirs] if args.pack else []
        if all(os.path.exists(os.path.join(d, "model.pt2")) for d in dirs):
            pass
        elif packed and all(os.path.exists(os.path.join(p, "recipe.json")) for p in packed):
            for p, d in zip(packed, dirs):
                recipe(args.torch_python, "unpack", p, d)
        else:
            subprocess.run([args.torch_python, os.path.join(ROOT, "utils", "make-int8-models.py"), "large", args.out,
                            model, "--no-inductor"], check=True)
            for p, d in zip(packed, dirs):
                recipe(args.torch_python, "pack", d, p)
                recipe(args.torch_python, "unpack", p, d)
        for kind, d in (("f32", fdir), ("int8", qdir)):
            pkg = os.path.join(args.out, f"{model}.{kind}.gcpkg")
            subprocess.run([os.path.join(args.build, "bin", "gc-compile"), os.path.join(d, "model.pt2"), "--freeze",
                            "--weights=external", "-o", pkg], check=True)
            print(f"made {pkg}", file=sys.stderr)


def pinned(threads):
    return ["taskset", "-c", ",".join(str(c) for c in range(threads))]


def run_gc(gcrt_run, pkg, archive, ins, threads, bench):
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([*pinned(threads), gcrt_run, pkg, *ins, "--weights-archive", archive, "--threads",
                            str(threads), "--bench", str(bench), "-o", tmp], check=True, capture_output=True, text=True)
        m = re.search(r"min ([0-9.]+) ms, median ([0-9.]+) ms", r.stdout + r.stderr)
        if not m:
            sys.exit(f"no median in gcrt-run's output:\n{r.stdout}{r.stderr}")
        return float(m.group(2)), float(m.group(1)), np.load(os.path.join(tmp, "out0.npy"))


def run_inductor(py, qdir, threads, bench):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out0.npy")
        r = subprocess.run([*pinned(threads), py, os.path.abspath(__file__), "inductor", qdir, "--threads",
                            str(threads), "--bench", str(bench), "--save", out],
                           check=True, capture_output=True, text=True)
        median, least = (float(x) for x in r.stdout.split()[-2:])
        return median, least, np.load(out)


def inductor(args):
    """Times Inductor's lowering of the int8 program (this process is pinned
    by the caller); prints the median and the minimum in ms."""
    import torch
    import torch.ao.quantization.fx._decomposed  # noqa: F401 (registers quantized_decomposed)
    torch.set_num_threads(args.threads)
    torch._inductor.config.freezing = True
    ins = tuple(torch.from_numpy(np.load(f)) for f in inputs(args.dir))
    compiled = torch.compile(torch.export.load(os.path.join(args.dir, "model.pt2")).module())
    times = []
    with torch.no_grad():
        for i in range(args.bench + 3):
            t = time.perf_counter()
            out = compiled(*ins)
            if i >= 3:
                times.append(time.perf_counter() - t)
    first = out[0] if isinstance(out, (tuple, list)) else out
    np.save(args.save, first.numpy())
    print(f"{statistics.median(times) * 1e3:.3f} {min(times) * 1e3:.3f}")


def run(args):
    rows = []
    for model in args.models:
        fdir, qdir = os.path.join(args.out, model), os.path.join(args.out, f"{model}_int8")
        for d in (fdir, qdir):
            if not os.path.exists(os.path.join(d, "model.pt2")):
                if not args.pack:
                    sys.exit(f"{d}/model.pt2 is missing: give --pack to unpack it")
                recipe(args.torch_python, "unpack", os.path.join(args.pack, os.path.basename(d)), d)
        want = np.load(os.path.join(qdir, "out0.npy")).astype(np.float64)
        step = float(want.max() - want.min()) / 255 or 1.0
        for t in args.threads:
            f32 = run_gc(args.gcrt_run, os.path.join(args.out, f"{model}.f32.gcpkg"), os.path.join(fdir, "model.pt2"),
                         inputs(fdir), t, args.bench)
            q = run_gc(args.gcrt_run, os.path.join(args.out, f"{model}.int8.gcpkg"), os.path.join(qdir, "model.pt2"),
                       inputs(qdir), t, args.bench)
            ind = run_inductor(args.torch_python, qdir, t, args.bench)
            err = {k: float(np.abs(v[2].astype(np.float64) - want).max()) / step for k, v in (("gc", q), ("ind", ind))}
            rows.append(f"| {model} | {t} | {f32[0]:.2f} / {f32[1]:.2f} | {q[0]:.2f} / {q[1]:.2f} | "
                        f"{ind[0]:.2f} / {ind[1]:.2f} | {q[0] / ind[0]:.2f} / {q[1] / ind[1]:.2f} | "
                        f"{err['gc']:.2f} | {err['ind']:.2f} | {os.getloadavg()[0]:.1f} |")
            print(rows[-1], file=sys.stderr)
    print("| model | threads | gc f32 (ms) | gc int8 (ms) | Inductor int8 (ms) | gc int8 / Inductor int8 | "
          "error gc int8 (steps) | error Inductor int8 (steps) | load average |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    print("\n".join(rows))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--build", required=True)
    r = sub.add_parser("run")
    r.add_argument("--gcrt-run", required=True)
    r.add_argument("--threads", type=int, nargs="+", default=[2, 8])
    for s in (p, r):
        s.add_argument("--out", required=True)
        s.add_argument("--models", nargs="+", default=["resnet50", "bert"])
        s.add_argument("--torch-python", default=sys.executable)
        s.add_argument("--pack")
    r.add_argument("--bench", type=int, default=20)
    i = sub.add_parser("inductor")
    i.add_argument("dir")
    i.add_argument("--threads", type=int, required=True)
    i.add_argument("--bench", type=int, required=True)
    i.add_argument("--save", required=True)
    args = ap.parse_args()
    {"prepare": prepare, "run": run, "inductor": inductor}[args.cmd](args)


if __name__ == "__main__":
    main()
