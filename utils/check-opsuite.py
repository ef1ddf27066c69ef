#!/usr/bin/env python3
"""Runs every op-suite sample through gc-import, gc-opt and gc-run --expect.

usage: check-opsuite.py OPSUITE_DIR [--bin DIR] [--passes LIST] [--work DIR]
                        [--filter SUBSTRING] [--jobs N] [--compiled] [--shard K/N]

OPSUITE_DIR holds one directory per sample (<op>__<k>/ with model.pt2,
in<i>.npy and out<i>.npy). Each sample is imported, optimized (gc-opt's
default pipeline, or --passes), and run on its inputs against its outputs
with gc-run's default tolerances; with --compiled, the core graph is
lowered and compiled (gc-lower, gc-codegen) and the kernel plan runs. Prints one row per sample (op, sample,
pass/fail, reason), then the pass share. Tools come from --bin, else PATH.
Exits non-zero if a sample fails.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile


def numbered(sample_dir, prefix):
    """in0.npy, in1.npy, ... (or out*) in order, stopping at the first gap."""
    files = []
    while os.path.exists(os.path.join(sample_dir, "%s%d.npy" % (prefix, len(files)))):
        files.append(os.path.join(sample_dir, "%s%d.npy" % (prefix, len(files))))
    return files


def first_error_line(text):
    """The most telling line of a tool's stderr, shortened for the table."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for l in lines:
        if "error" in l.lower():
            return l[:200]
    return (lines[-1] if lines else "no message")[:200]


def check(sample_dir, tool, passes, compiled, work):
    """Returns (passed, reason) for one sample."""
    gcm = os.path.join(work, "a.gcm")
    opt = os.path.join(work, "b.gcm")
    steps = [
        ("import", [tool("gc-import"), os.path.join(sample_dir, "model.pt2"), "-o", gcm]),
        ("opt", [tool("gc-opt"), gcm, "-o", opt] + ([] if passes is None else ["--passes=" + passes])),
    ]
    if compiled:
        loops, kernels = os.path.join(work, "c.gcm"), os.path.join(work, "d.gcm")
        steps += [("lower", [tool("gc-lower"), opt, "-o", loops]),
                  ("codegen", [tool("gc-codegen"), loops, "-o", kernels])]
        opt = kernels
    run = [tool("gc-run"), opt]
    for f in numbered(sample_dir, "in"):
        run += ["--input", f]
    for f in numbered(sample_dir, "out"):
        run += ["--expect", f]
    steps.append(("run", run))
    for stage, cmd in steps:
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            text = proc.stderr if stage != "run" else proc.stdout + proc.stderr
            fails = [l.strip() for l in proc.stdout.splitlines() if "FAIL" in l]
            return False, "%s: %s" % (stage, fails[0][:200] if fails else first_error_line(text))
    return True, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("opsuite")
    ap.add_argument("--bin", help="directory holding gc-import, gc-opt and gc-run")
    ap.add_argument("--passes", help="gc-opt --passes (default: gc-opt's default pipeline)")
    ap.add_argument("--work", help="scratch directory (default: a temporary one)")
    ap.add_argument("--filter", default="", help="only samples whose name contains this")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--shard", default="0/1",
                    help="K/N: only every N-th sample from the K-th (a test per shard stays short)")
    ap.add_argument("--compiled", action="store_true",
                    help="also lower and compile, and run the kernel plan")
    args = ap.parse_args()

    def tool(name):
        return os.path.join(args.bin, name) if args.bin else name

    samples = sorted(d for d in os.listdir(args.opsuite)
                     if os.path.isfile(os.path.join(args.opsuite, d, "model.pt2"))
                     and args.filter in d)
    shard, shards = (int(x) for x in args.shard.split("/"))
    samples = samples[shard::shards]
    if not samples:
        sys.exit("check-opsuite.py: no samples in " + args.opsuite)
    work = args.work or tempfile.mkdtemp(prefix="gc-opsuite-")

    def one(name):
        w = os.path.join(work, name)
        os.makedirs(w, exist_ok=True)
        return check(os.path.join(args.opsuite, name), tool, args.passes, args.compiled, w)

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(one, samples))

    width = max(len(s) for s in samples)
    print("%-*s  %-6s  %s" % (width, "op / sample", "result", "reason"))
    for name, (ok, reason) in zip(samples, results):
        print("%-*s  %-6s  %s" % (width, name, "pass" if ok else "FAIL", reason))
    passed = sum(ok for ok, _ in results)
    ops = {}
    for name, (ok, _) in zip(samples, results):
        op = re.sub(r"__\d+$", "", name)
        ops[op] = ops.get(op, True) and ok
    print("%d of %d samples pass (%.1f%%); %d of %d ops pass every sample" %
          (passed, len(samples), 100.0 * passed / len(samples), sum(ops.values()), len(ops)))
    return 0 if passed == len(samples) else 1


if __name__ == "__main__":
    sys.exit(main())
