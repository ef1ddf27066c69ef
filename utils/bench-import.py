#!/usr/bin/env python3
"""Benchmarks gc-import over the corpus and prints a Markdown table.

usage: bench-import.py BUILD_DIR [MODELS_DIR] [--repeat N]

For each model: the best wall time of N imports with weights by reference,
the size of that graph file, and the best time with --weights=blob.
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
        subprocess.run(cmd, check=True)
        best = min(best, time.perf_counter() - start)
    return best


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser()
    p.add_argument("build")
    p.add_argument("models", nargs="?", default=os.path.join(here, "..", "test", "Models", "Inputs"))
    p.add_argument("--repeat", type=int, default=10)
    a = p.parse_args()
    tool = os.path.join(a.build, "bin", "gc-import")
    models = sorted(m for m in os.listdir(a.models)
                    if os.path.exists(os.path.join(a.models, m, "model.pt2")))
    print("| model | archive KiB | import (ref) ms | graph file KiB | import (blob) ms |")
    print("| --- | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        for m in models:
            archive = os.path.join(a.models, m, "model.pt2")
            out = os.path.join(tmp, m + ".gcm")
            ref = best_time([tool, archive, "-o", out], a.repeat)
            size = os.path.getsize(out)
            blob = best_time([tool, archive, "-o", out, "--weights=blob"], a.repeat)
            print("| %s | %.0f | %.1f | %.1f | %.1f |" % (
                m, os.path.getsize(archive) / 1024, ref * 1e3, size / 1024, blob * 1e3))


if __name__ == "__main__":
    main()
