#!/usr/bin/env python3
"""Times the issue-14 workloads beside their peers on the same cores and
prints one table: a KV-cache decode step (test/Models/Inputs/kv_cache, state
written back each run) and training-mode dropout over a million elements
(test/Models/Inputs/dropout_big, package-owned random numbers).

usage: state_random.py --build BUILD [--threads 1] [--runs 2000]

Each row: PyTorch eager and Inductor (torch.compile) on the module the test
archive was exported from (rebuilt from the archive with torch.export.load),
and gc's package run by gcrt-run --bench. Medians of --runs runs after a
warm-up; the same --threads for all three. Needs torch (a benchmark, not a
test).
"""
import argparse
import os
import re
import subprocess
import tempfile
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(ROOT, "test", "Models", "Inputs")


def median_us(fn, runs):
    fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)) * 1e6


def gc_us(build, model, inputs, threads, runs, tmp):
    pkg = os.path.join(tmp, os.path.basename(os.path.dirname(model)) + ".gcpkg")
    subprocess.run([os.path.join(build, "bin", "gc-compile"), model, "--no-cache", "-o", pkg],
                   check=True, capture_output=True)
    out = subprocess.run([os.path.join(build, "bin", "gcrt-run"), pkg, *inputs, "--threads",
                          str(threads), "--bench", str(runs)], check=True, capture_output=True,
                         text=True).stdout
    return float(re.search(r"median ([0-9.e+-]+) ms", out).group(1)) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=2000)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        kv = os.path.join(MODELS, "kv_cache")
        ins = [os.path.join(kv, "run0", "in%d.npy" % i) for i in range(2)]
        module = torch.export.load(os.path.join(kv, "model.pt2")).module()
        x, pos = (torch.from_numpy(np.load(p)) for p in ins)
        compiled = torch.compile(module)
        with torch.no_grad():
            eager = median_us(lambda: module(x, pos), args.runs)
            inductor = median_us(lambda: compiled(x, pos), args.runs)
        rows.append(("kv_cache decode step", eager, inductor,
                     gc_us(args.build, os.path.join(kv, "model.pt2"), ins, args.threads, args.runs, tmp)))

        big = os.path.join(MODELS, "dropout_big", "model.pt2")
        xin = os.path.join(tmp, "x.npy")
        xs = np.arange(1024 * 1024, dtype=np.float32).reshape(1024, 1024)
        np.save(xin, xs)
        drop = torch.nn.Dropout(0.5).train()
        cdrop = torch.compile(drop)
        xt = torch.from_numpy(xs)
        runs = max(args.runs // 20, 20)
        with torch.no_grad():
            eager = median_us(lambda: drop(xt), runs)
            inductor = median_us(lambda: cdrop(xt), runs)
        rows.append(("dropout p=0.5, 1024x1024", eager, inductor,
                     gc_us(args.build, big, [xin], args.threads, runs, tmp)))
    print("| workload | eager (us) | inductor (us) | gc package (us) | gc / eager |")
    print("| --- | --- | --- | --- | --- |")
    for name, e, i, g in rows:
        print(f"| {name} | {e:.1f} | {i:.1f} | {g:.1f} | {g / e:.2f}x |")


if __name__ == "__main__":
    main()
