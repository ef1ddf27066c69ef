#!/usr/bin/env python3
"""Runs every op-suite sample through gc's stages and reports where each stops.

usage: check-opsuite.py OPSUITE_DIR [--bin DIR] [--passes LIST] [--work DIR]
                        [--filter SUBSTRING] [--jobs N] [--compiled] [--shard K/N]
                        [--json FILE] [--quiet]

OPSUITE_DIR holds one directory per sample (<op>__<k>/ with model.pt2,
in<i>.npy and out<i>.npy) and, for a generated suite, an index.json
(utils/opsuite/make_opsuite.py) naming each sample's OpInfo entry and family.
Each sample goes through the stages import (gc-import), opt (gc-opt's default
pipeline, or --passes), with --compiled lower (gc-lower) and codegen
(gc-codegen), then run (gc-run on its inputs, against its outputs, with
gc-run's default tolerances; where index.json gives a sample
equivalent_outputs rules, any answer they allow, such as other indices of
tied values or negated eigenvectors, is right). A failure is classified as
  unsupported  a gc error saying that an op, dtype or case is not supported,
  wrong        the run finished but its outputs do not match PyTorch's,
  crash        a tool died of a signal or an internal assertion,
  other        any other error.
Prints one row per sample (op, sample, result, reason), then how many samples
pass each stage, the failures by kind, and the pass share. --json FILE writes
the same results as JSON (what `gc-doc --opsuite-results` reads). Tools come
from --bin, else PATH. Exits non-zero if a sample fails.
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

# What gc prints when an input is valid but beyond what it supports: the
# importer's, the op table's and each concern's refusals.
UNSUPPORTED = re.compile(
    r"not supported|unsupported|does not know this op|is not an op gc knows|"
    r"no decomposition|no lowering|no reference kernel|no shape function|not implemented|"
    r"must be a floating-point")
CRASH = re.compile(r"Assertion .* failed|terminate called|Segmentation fault|"
                   r"AddressSanitizer|UndefinedBehaviorSanitizer|LLVM ERROR|Stack dump")


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
            return l[:300]
    return (lines[-1] if lines else "no message")[:300]


def classify(stage, proc):
    """(kind, reason) for a stage that failed."""
    text = proc.stdout + proc.stderr
    if stage == "run":
        fails = [l.strip() for l in proc.stdout.splitlines() if "FAIL" in l]
        if fails:
            return "wrong", fails[0][:200]
    if proc.returncode < 0 or CRASH.search(text):
        crash = CRASH.search(text)
        return "crash", crash.group(0) if crash else "killed by signal %d" % -proc.returncode
    reason = first_error_line(proc.stderr if stage != "run" else text)
    return ("unsupported" if UNSUPPORTED.search(reason) else "other"), reason


def load_npy(path):
    import numpy  # only samples with equivalent outputs need it
    return numpy.load(path, allow_pickle=False)


def equivalent_expectations(sample_dir, rules, got_dir, work):
    """Expected-output files for a sample whose outputs torch does not define
    uniquely (index.json's equivalent_outputs, from make_opsuite.py): where
    gc's output is another answer the rule allows, the expectation becomes
    that answer; otherwise it stays torch's, and gc-run reports the mismatch.
    Tolerances stay gc-run's."""
    import numpy
    expected = [load_npy(f) for f in numbered(sample_dir, "out")]
    for rule in rules:
        o = rule["output"]
        got_file = os.path.join(got_dir, "out%d.npy" % o)
        if not os.path.exists(got_file):
            continue
        got = load_npy(got_file)
        if got.shape != expected[o].shape:
            continue
        if rule["rule"] == "indices":
            # Any index whose element equals the value torch gives is right.
            source = load_npy(os.path.join(sample_dir, "in%d.npy" % rule["input"]))
            values, d = expected[rule["values"]], rule["dim"]
            idx, want = got, values
            if got.ndim == source.ndim - 1:
                idx, want = numpy.expand_dims(got, d), numpy.expand_dims(values, d)
            if (numpy.issubdtype(idx.dtype, numpy.integer) and idx.size and
                    idx.min() >= 0 and idx.max() < source.shape[d] and
                    numpy.array_equal(numpy.take_along_axis(source, idx, d), want,
                                      equal_nan=source.dtype.kind == "f")):
                expected[o] = got
        elif rule["rule"] == "column_signs":
            # Each column may be negated: turn torch's toward gc's.
            dots = (got.astype(numpy.float64) * expected[o]).sum(axis=-2, keepdims=True)
            expected[o] = (expected[o] * numpy.where(dots < 0, -1, 1)).astype(expected[o].dtype)
        else:
            raise ValueError("unknown equivalence rule %r" % rule["rule"])
    files = []
    for i, e in enumerate(expected):
        files.append(os.path.join(work, "expect%d.npy" % i))
        numpy.save(files[-1], e, allow_pickle=False)
    return files


def check(sample_dir, tool, stages, passes, work, equivalent=()):
    """(failed stage or None, kind, reason) for one sample; `equivalent`
    holds the sample's rules for outputs torch does not define uniquely."""
    gcm = os.path.join(work, "a.gcm")
    opt = os.path.join(work, "b.gcm")
    cmds = {
        "import": [tool("gc-import"), os.path.join(sample_dir, "model.pt2"), "-o", gcm],
        "opt": [tool("gc-opt"), gcm, "-o", opt, "--target", "x86-64-v3"] + ([] if passes is None else ["--passes=" + passes]),
    }
    last = opt
    if "lower" in stages:
        loops, kernels = os.path.join(work, "c.gcm"), os.path.join(work, "d.gcm")
        cmds["lower"] = [tool("gc-lower"), opt, "-o", loops]
        # One CPU level: the suite checks ops, and a second level would
        # double its codegen time.
        cmds["codegen"] = [tool("gc-codegen"), loops, "-o", kernels]
        last = kernels
    run = [tool("gc-run"), last]
    for f in numbered(sample_dir, "in"):
        run += ["--input", f]
    cmds["run"] = run
    for stage in stages:
        if stage == "run":
            expectations = numbered(sample_dir, "out")
            got_dir = os.path.join(work, "got")
            if equivalent:
                os.makedirs(got_dir, exist_ok=True)
            # gc's outputs first, to see which of the allowed answers they are.
            if equivalent and subprocess.run(run + ["--output-dir", got_dir],
                                             capture_output=True).returncode == 0:
                expectations = equivalent_expectations(sample_dir, equivalent, got_dir, work)
            cmds[stage] = run + [a for f in expectations for a in ("--expect", f)]
        proc = subprocess.run(cmds[stage], capture_output=True, text=True)
        if proc.returncode != 0:
            kind, reason = classify(stage, proc)
            # Paths differ from run to run; the sample's name says which.
            reason = reason.replace(work + os.sep, "").replace(sample_dir + os.sep, "")
            return stage, kind, reason
    return None, "", ""


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
    ap.add_argument("--json", help="write the results to this file as JSON")
    ap.add_argument("--quiet", action="store_true", help="print failing samples only")
    args = ap.parse_args()

    def tool(name):
        return os.path.join(args.bin, name) if args.bin else name

    index = {}
    index_file = os.path.join(args.opsuite, "index.json")
    if os.path.exists(index_file):
        with open(index_file) as f:
            index = json.load(f)
    described = index.get("samples", {})

    samples = sorted(d for d in os.listdir(args.opsuite)
                     if os.path.isfile(os.path.join(args.opsuite, d, "model.pt2"))
                     and args.filter in d)
    shard, shards = (int(x) for x in args.shard.split("/"))
    samples = samples[shard::shards]
    if not samples:
        sys.exit("check-opsuite.py: no samples in " + args.opsuite)
    work = os.path.abspath(args.work or tempfile.mkdtemp(prefix="gc-opsuite-"))
    stages = ["import", "opt"] + (["lower", "codegen"] if args.compiled else []) + ["run"]

    def one(name):
        w = os.path.join(work, name)
        os.makedirs(w, exist_ok=True)
        return check(os.path.abspath(os.path.join(args.opsuite, name)), tool, stages,
                     args.passes, w, described.get(name, {}).get("equivalent_outputs", ()))

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(one, samples))

    def op_of(name):
        return re.sub(r"__\d+$", "", name)

    width = max(len(s) for s in samples)
    print("%-*s  %-6s  %s" % (width, "op / sample", "result", "reason"))
    for name, (stage, kind, reason) in zip(samples, results):
        if stage or not args.quiet:
            print("%-*s  %-6s  %s" % (width, name, "pass" if not stage else "FAIL",
                                       "" if not stage else "%s (%s): %s" % (stage, kind, reason)))
    failed_at = [stage for stage, _, _ in results]
    print("per stage (samples that get through it):")
    for i, stage in enumerate(stages):
        through = sum(1 for f in failed_at if f is None or stages.index(f) > i)
        print("  %-8s %d of %d" % (stage, through, len(samples)))
    kinds = {}
    for stage, kind, _ in results:
        if stage:
            kinds[kind] = kinds.get(kind, 0) + 1
    print("failures: %s" % (", ".join("%s %d" % (k, kinds[k]) for k in sorted(kinds)) or "none"))
    passed = failed_at.count(None)
    ops = {}
    for name, (stage, _, _) in zip(samples, results):
        ops[op_of(name)] = ops.get(op_of(name), True) and stage is None
    print("%d of %d samples pass (%.1f%%); %d of %d ops pass every sample" %
          (passed, len(samples), 100.0 * passed / len(samples), sum(ops.values()), len(ops)))

    if args.json:
        out = {
            "suite": os.path.basename(os.path.normpath(args.opsuite)),
            "torch": index.get("torch"),
            "stages": stages,
            "passes": args.passes,
            "samples": {},
        }
        for name, (stage, kind, reason) in zip(samples, results):
            d = described.get(name, {})
            out["samples"][name] = {
                "op": op_of(name),
                "family": d.get("family", "other"),
                "failed_stage": stage,
                "kind": kind or None,
                "reason": reason or None,
            }
        with open(args.json + ".tmp", "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(args.json + ".tmp", args.json)
    return 0 if passed == len(samples) else 1


if __name__ == "__main__":
    sys.exit(main())
