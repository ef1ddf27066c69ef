#!/usr/bin/env python3
"""Compiles the corpus through every stage; prints what the plans look like.

usage: bench-backend.py BUILD_DIR [MODELS_DIR] [--models m1,m2] [--target T]

For each model: import, opt --freeze, lower, codegen (object cache off, so
LLVM always runs), then one Markdown row: core ops in the graph, kernels and
library calls in the plan, peak arena bytes against the sum of all
intermediate buffers, and the wall time of the whole chain (process starts
included).
"""
import argparse
import os
import re
import subprocess
import tempfile
import time


def stats(cmd):
    """Runs a gc tool with --stats; returns {"pass - statistic": value}."""
    err = subprocess.run(cmd + ["--stats"], check=True, capture_output=True, text=True,
                         env=dict(os.environ, GC_CACHE_DIR="off")).stderr
    out = {}
    for line in err.splitlines():
        m = re.match(r"^(\d+) (\S+) - (.*)$", line)
        if m:
            out[m.group(2) + " - " + m.group(3)] = int(m.group(1))
    return out


def core_ops(tool, graph, tmp):
    err = subprocess.run([tool, graph, "--passes=", "--op-stats", "-o", os.path.join(tmp, "x.gc")],
                         check=True, capture_output=True, text=True).stderr
    return sum(int(n) for n, op in (l.split(" ", 1) for l in err.splitlines()) if op != "getitem")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser()
    p.add_argument("build")
    p.add_argument("models_dir", nargs="?",
                   default=os.path.join(here, "..", "test", "Models", "Inputs"))
    p.add_argument("--models", default="")
    p.add_argument("--target", default="x86-64-v3")
    a = p.parse_args()
    tool = lambda name: os.path.join(a.build, "bin", name)
    models = a.models.split(",") if a.models else sorted(
        m for m in os.listdir(a.models_dir)
        if os.path.exists(os.path.join(a.models_dir, m, "model.pt2")))
    print("| model | core ops | kernels | extern calls | fallbacks | peak arena KiB "
          "| all intermediates KiB | compile s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        for m in models:
            f = lambda ext: os.path.join(tmp, m + ext)
            start = time.perf_counter()
            subprocess.run([tool("gc-import"), os.path.join(a.models_dir, m, "model.pt2"),
                            "-o", f(".gc")], check=True)
            subprocess.run([tool("gc-opt"), f(".gc"), "--freeze", "--target", a.target, "-o", f(".core.gc")], check=True)
            lower = stats([tool("gc-lower"), f(".core.gc"), "-o", f(".loops.gc")])
            codegen = stats([tool("gc-codegen"), f(".loops.gc"), "--target", a.target,
                             "-o", f(".kernels.gc")])
            seconds = time.perf_counter() - start
            print("| %s | %d | %d | %d | %d | %.1f | %.1f | %.2f |" % (
                m, core_ops(tool("gc-opt"), f(".core.gc"), tmp),
                codegen.get("schedule - kernels", 0), codegen.get("schedule - extern calls", 0),
                lower.get("lower - fallback nodes", 0),
                codegen.get("plan-memory - arena bytes", 0) / 1024,
                codegen.get("plan-memory - intermediate bytes", 0) / 1024, seconds))


if __name__ == "__main__":
    main()
