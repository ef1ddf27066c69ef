#!/usr/bin/env python3
"""Benchmarks the stages gc has so far over the corpus; prints Markdown tables.

usage: bench-stages.py BUILD_DIR [MODELS_DIR] [--repeat N]

Times are the best wall time of N runs per model, process start included.
- gc-import: weights by reference, and with --weight-storage=blob; graph file size.
- gc-opt: the default pipeline (aten -> core) and the --freeze pipeline;
  node counts of the aten graph and of both results.
"""
import argparse
import os
import subprocess
import tempfile
import time


def best_time(cmd, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - start)
    return best


def node_count(cmd):
    """Nodes in the result, from --op-stats (getitem projections excluded)."""
    err = subprocess.run(cmd + ["--op-stats"], check=True, capture_output=True, text=True).stderr
    return sum(int(n) for n, op in (l.split(" ", 1) for l in err.splitlines()) if op != "getitem")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser()
    p.add_argument("build")
    p.add_argument("models", nargs="?", default=os.path.join(here, "..", "test", "Models", "Inputs"))
    p.add_argument("--repeat", type=int, default=10)
    a = p.parse_args()
    tool = lambda name: os.path.join(a.build, "bin", name)
    models = sorted(m for m in os.listdir(a.models)
                    if os.path.exists(os.path.join(a.models, m, "model.pt2")))
    imports, opts = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for m in models:
            archive = os.path.join(a.models, m, "model.pt2")
            gcm = os.path.join(tmp, m + ".gcm")
            ref = best_time([tool("gc-import"), archive, "-o", gcm], a.repeat)
            size = os.path.getsize(gcm)
            blob = best_time([tool("gc-import"), archive, "-o", os.path.join(tmp, m + ".b.gcm"),
                              "--weight-storage=blob"], a.repeat)
            imports.append("| %s | %.0f | %.1f | %.1f | %.1f |" % (
                m, os.path.getsize(archive) / 1024, ref * 1e3, size / 1024, blob * 1e3))
            core = [tool("gc-opt"), gcm, "-o", os.path.join(tmp, m + ".core.gcm")]
            frozen = [tool("gc-opt"), gcm, "--freeze", "-o", os.path.join(tmp, m + ".frozen.gcm")]
            aten = node_count([tool("gc-opt"), gcm, "--passes=", "-o", os.path.join(tmp, "x.gcm")])
            opts.append("| %s | %.1f | %.1f | %d | %d | %d |" % (
                m, best_time(core, a.repeat) * 1e3, best_time(frozen, a.repeat) * 1e3,
                aten, node_count(core), node_count(frozen)))
    print("| model | archive KiB | import (ref) ms | graph file KiB | import (blob) ms |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print("\n".join(imports))
    print()
    print("| model | gc-opt ms | gc-opt --freeze ms | aten nodes | core nodes | frozen core nodes |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    print("\n".join(opts))


if __name__ == "__main__":
    main()
