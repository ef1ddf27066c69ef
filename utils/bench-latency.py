#!/usr/bin/python3
"""Latency of each corpus model: gc's compiled code, gc-run's reference
interpreter, and PyTorch eager on the CPU; prints a Markdown table.

usage: bench-latency.py BUILD_DIR [MODELS_DIR] [--models M ...] [--repeat N] [--threads T] [--target T]

Every figure is the median of N runs of the forward pass on the model's
in*.npy inputs (the base set where a model has several), process start-up
excluded: gc-run times its runs itself (--bench), and eager runs in this
process after warm-up. Before timing, each engine's outputs are checked
against the corpus's out*.npy; a column reads "wrong" when they differ and
"n/a" when its tool is missing or a stage fails (the reason goes to stderr).

The eager baseline is Debian's PyTorch 1.13 (apt-get install python3-torch
python3-torchvision libopenblas0-openmp; without OpenBLAS, torch's linear
layers run on the reference BLAS, ~20x slower), which cannot read the .pt2
archives: eager_models.py rebuilds the modules and loads their weights from
the archives. Models
exported in train mode run in train mode with autograd recording, as a
training step's forward would; the others run under torch.inference_mode.
Run it on an otherwise idle machine: with as many threads as cores, OpenMP
workers that lose their core to another process stall every parallel region.
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
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import eager_models  # noqa: E402 (lives beside this script)

BENCH_LINE = re.compile(r"bench: \d+ runs, min [\d.e+-]+ ms, median ([\d.e+-]+) ms")
RTOL = 1e-4


class StageError(Exception):
    pass


def atol(expected):
    """1e-4, scaled down for outputs whose magnitude is far below 1 (mobilenet's
    logits are ~1e-10), where a plain 1e-4 would accept anything."""
    return 1e-4 * min(1.0, max(float(np.abs(e).max(initial=0.0)) for e in expected))


def numbered(model_dir, prefix):
    files = []
    while os.path.exists(os.path.join(model_dir, f"{prefix}{len(files)}.npy")):
        files.append(os.path.join(model_dir, f"{prefix}{len(files)}.npy"))
    return files


class Gc:
    """Runs the gc tools of a build as subprocesses."""

    def __init__(self, build, tmp, repeat, threads, target):
        self.bin = os.path.join(build, "bin")
        self.target = target
        self.tmp = tmp
        self.repeat = repeat
        self.cores = {}
        self.thread_args = []
        if os.path.exists(self.tool("gc-run")):
            usage = subprocess.run([self.tool("gc-run"), "--help"], capture_output=True, text=True).stdout
            if "--threads" in usage:
                self.thread_args = ["--threads", str(threads)]

    def tool(self, name):
        return os.path.join(self.bin, name)

    def stage(self, name, *args, mismatch_ok=False):
        """The tool's stdout and stderr; None where mismatch_ok and gc-run's --expect failed."""
        if not os.path.exists(self.tool(name)):
            raise StageError(f"{name} is not built")
        r = subprocess.run([self.tool(name), *args], capture_output=True, text=True)
        if r.returncode and mismatch_ok and ": FAIL" in r.stdout:
            return None
        if r.returncode:
            raise StageError(f"{name} failed: {(r.stderr.strip().splitlines() or ['exit %d' % r.returncode])[0]}")
        return r.stdout + r.stderr

    def core(self, model, archive, train):
        """The core graph, frozen for inference models; made once per model."""
        if model not in self.cores:
            graph = os.path.join(self.tmp, model + ".gc")
            core = os.path.join(self.tmp, model + ".core.gc")
            self.stage("gc-import", archive, "-o", graph)
            self.stage("gc-opt", graph, *([] if train else ["--freeze"]), "--target", self.target, "-o", core)
            self.cores[model] = core
        return self.cores[model]

    def compiled(self, model, core):
        loops = os.path.join(self.tmp, model + ".loops.gc")
        kernels = os.path.join(self.tmp, model + ".kernels.gc")
        self.stage("gc-lower", core, "-o", loops)
        self.stage("gc-codegen", loops, "-o", kernels)
        return kernels

    def median_ms(self, graph, inputs, expected):
        """gc-run checks the first run's outputs and times the runs after it."""
        out = self.stage("gc-run", graph, "--input", *inputs, "--expect", *expected,
                         "--rtol", str(RTOL), "--atol", str(atol([np.load(e) for e in expected])),
                         "--bench", str(self.repeat), *self.thread_args, mismatch_ok=True)
        if out is None:
            return None
        m = BENCH_LINE.search(out)
        if not m:
            raise StageError("gc-run printed no 'bench:' line")
        return float(m.group(1))


class Eager:
    """Runs the rebuilt PyTorch modules in this process."""

    def __init__(self, models_dir, repeat, threads):
        torch.set_num_threads(threads)
        self.models_dir, self.repeat = models_dir, repeat

    def median_ms(self, model, inputs, expected):
        try:
            mod, train = eager_models.build(model, self.models_dir)
        except ImportError as e:
            raise StageError(f"eager {model}: {e}")
        args = [torch.from_numpy(np.load(i)) for i in inputs]
        context = torch.enable_grad if train else torch.inference_mode

        def forward():
            with context():
                out = mod(*args)
            return out if isinstance(out, (tuple, list)) else (out,)

        got = [o.detach().numpy() for o in forward()]
        want = [np.load(e) for e in expected]
        if len(got) != len(want) or not all(
                g.shape == w.shape and np.allclose(g, w, rtol=RTOL, atol=atol(want)) for g, w in zip(got, want)):
            return None
        for _ in range(max(3, self.repeat // 10)):
            forward()
        times = []
        for _ in range(self.repeat):
            start = time.perf_counter()
            forward()
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1e3


def column(run, model):
    try:
        ms = run()
    except StageError as e:
        print(f"{model}: {e}", file=sys.stderr)
        return None, "n/a"
    return ms, "wrong" if ms is None else "%.3f" % ms


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser()
    p.add_argument("build")
    p.add_argument("models_dir", nargs="?", default=os.path.join(here, "..", "test", "Models", "Inputs"))
    p.add_argument("--models", nargs="+")
    p.add_argument("--repeat", type=int, default=100)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--target", default="native",
                   help="the CPU target, given to gc-opt (default: this machine's, as eager uses it)")
    a = p.parse_args()
    present = [m for m in sorted(eager_models.MODELS) if os.path.exists(os.path.join(a.models_dir, m, "model.pt2"))]
    unknown = set(a.models or []) - set(present)
    if unknown:
        p.error("no such corpus model in %s: %s" % (a.models_dir, ", ".join(sorted(unknown))))
    models = a.models or present
    load, cores = os.getloadavg()[0], os.cpu_count()
    if load > 0.5:
        print(f"note: load average {load:.1f} on {cores} cores before starting; timings share the CPU",
              file=sys.stderr)
    eager = Eager(a.models_dir, a.repeat, a.threads)
    print("| model | gc (ms) | interpreter (ms) | eager (ms) | speed-up vs eager |")
    print("| --- | ---: | ---: | ---: | ---: |", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        gc = Gc(a.build, tmp, a.repeat, a.threads, a.target)
        for m in models:
            d = os.path.join(a.models_dir, m)
            inputs, expected = numbered(d, "in"), numbered(d, "out")
            archive, train = os.path.join(d, "model.pt2"), eager_models.MODELS[m][1]
            gc_ms, gc_text = column(
                lambda: gc.median_ms(gc.compiled(m, gc.core(m, archive, train)), inputs, expected), m)
            _, interp_text = column(lambda: gc.median_ms(gc.core(m, archive, train), inputs, expected), m)
            eager_ms, eager_text = column(lambda: eager.median_ms(m, inputs, expected), m)
            speedup = "%.3gx" % (eager_ms / gc_ms) if gc_ms and eager_ms else "n/a"
            print(f"| {m} | {gc_text} | {interp_text} | {eager_text} | {speedup} |", flush=True)


if __name__ == "__main__":
    main()
