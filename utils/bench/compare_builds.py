#!/usr/bin/env python3
"""gc before and after a change, beside eager PyTorch, on the same cores.

Runs utils/bench/run.py (engines gc and eager) once per model and build,
alternating the two builds model by model so that both see the same machine,
and prints one Markdown table: gc's median
latency and cold compile time for each build, and eager's latency from each
run (eager is the same in both runs, so its two figures show how much the
machine moved between them).

  utils/bench/compare_builds.py --before ../old/build --after build --models mlp convnet

Extra arguments after `--` go to run.py (for instance `-- --rounds 3`).
"""
import argparse
import json
import os
import subprocess
import sys
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
# Where run.py keeps every model's last measurements (its --cache default).
STORE = os.path.expanduser(os.path.join(os.environ.get("GC_BENCH_CACHE", "~/.cache/gc-bench"),
                                        "results", "results.json"))


def measure(build, model, extra):
    cmd = [sys.executable, os.path.join(HERE, "run.py"), "--build", build, "--models", model,
           "--engines", "gc", "eager", "--no-doc", *extra]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(STORE) as f:
        return json.load(f)[model]


def cell(value, fmt):
    return fmt.format(value) if isinstance(value, (int, float)) else "error"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--before", required=True, help="the build directory before the change")
    p.add_argument("--after", required=True, help="the build directory after it")
    p.add_argument("--models", nargs="+", required=True)
    p.add_argument("extra", nargs="*", help="arguments for run.py, after --")
    a = p.parse_args()
    rows = []
    # run.py records each run in its store; the store's own results (what
    # docs/PERFORMANCE.md's tables come from) are put back afterwards.
    saved = STORE + ".before-compare"
    if os.path.exists(STORE):
        shutil.copyfile(STORE, saved)
    try:
        for model in a.models:
            got = {}
            for side, build in (("before", a.before), ("after", a.after)):
                got[side] = measure(os.path.abspath(build), model, a.extra)
            rows.append((model, got))
    finally:
        if os.path.exists(saved):
            os.replace(saved, STORE)
    print("| model | gc before ms | gc after ms | after/before | eager ms (before run / after run) "
          "| gc-compile cold s (before / after) |")
    print("|---|---|---|---|---|---|")
    for model, got in rows:
        b, f = got["before"], got["after"]
        gb = b.get("gc", {}).get("median_ms")
        ga = f.get("gc", {}).get("median_ms")
        ratio = ga / gb if isinstance(ga, float) and isinstance(gb, float) else None
        print(f"| {model} | {cell(gb, '{:.3f}')} | {cell(ga, '{:.3f}')} | {cell(ratio, '{:.2f}')} "
              f"| {cell(b.get('eager', {}).get('median_ms'), '{:.3f}')} / "
              f"{cell(f.get('eager', {}).get('median_ms'), '{:.3f}')} "
              f"| {cell(b.get('gc_compile_cold_s'), '{:.2f}')} / {cell(f.get('gc_compile_cold_s'), '{:.2f}')} |")


if __name__ == "__main__":
    main()
