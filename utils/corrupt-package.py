#!/usr/bin/env python3
"""Damages a package (and its external archive) at random and runs each copy.

  corrupt-package.py GCRT_RUN PACKAGE [--archive ARCHIVE] --input IN.npy ...
                     --expect OUT.npy ... [-n N] [--seed S] [--work DIR]
                     [--timeout T] [--gcrt-arg ARG ...]

Makes N damaged copies, each from the seed and its number alone (the same
seed gives the same copies): one change to PACKAGE, or, with --archive (the
.pt2 an external package names, which must sit beside it), to either file,
each chosen as often: some bytes flipped, the file truncated, or a range of
it zeroed, anywhere in the file. Each copy runs through
`GCRT_RUN PACKAGE IN... -o DIR --expect OUT...` and is classified:

  refused   exit 1, one line on stderr, `gcrt-run: error: 'FILE': ...`
            naming the package or the archive, and no output written
  matched   ran, and every output matched (the change did not matter)
  wrong     ran, and an output did not match
  unclear   any other failure: no such single line, or outputs written
  crashed   killed by a signal
  hung      still running after --timeout seconds

Prints one line per copy that is not refused or matched, then the counts,
and exits 1 if any copy was wrong, unclear, crashed or hung.
Needs python3 and numpy only.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys

import numpy as np

CLASSES = ["refused", "matched", "wrong", "unclear", "crashed", "hung"]
BAD = {"wrong", "unclear", "crashed", "hung"}


def corrupt(data, rng):
    """`data` (bytes) with one random change, and the change in words."""
    size = len(data)
    kind = rng.integers(3)
    if kind == 0:
        out = bytearray(data)
        count = int(rng.integers(1, 9))
        where = sorted(int(x) for x in rng.integers(0, size, count))
        for at in where:
            out[at] ^= int(rng.integers(1, 256))
        return bytes(out), "flip %d byte(s) at %s" % (count, ",".join(map(str, where)))
    if kind == 1:
        cut = int(rng.integers(0, size))
        return data[:cut], "truncate to %d bytes" % cut
    start = int(rng.integers(0, size))
    length = int(min(size - start, rng.integers(1, 4097)))
    out = bytearray(data)
    out[start:start + length] = bytes(length)
    return bytes(out), "zero %d bytes at %d" % (length, start)


def classify(returncode, stdout, stderr, files, outdir):
    if returncode < 0:
        return "crashed"
    if returncode == 0:
        return "matched"
    if "FAIL" in stdout:
        return "wrong"
    lines = stderr.strip().splitlines()
    named = len(lines) == 1 and any(lines[0].startswith("gcrt-run: error: '%s'" % f)
                                    for f in files)
    written = os.listdir(outdir)
    return "refused" if named and returncode == 1 and not written else "unclear"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("gcrt_run")
    ap.add_argument("package")
    ap.add_argument("--archive")
    ap.add_argument("--input", nargs="+", required=True)
    ap.add_argument("--expect", nargs="+", required=True)
    ap.add_argument("-n", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", default="corrupt-work")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--gcrt-arg", action="append", default=[])
    args = ap.parse_args()

    originals = [args.package] + ([args.archive] if args.archive else [])
    if args.archive and os.path.dirname(os.path.abspath(args.archive)) != os.path.dirname(
            os.path.abspath(args.package)):
        sys.exit("corrupt-package.py: the archive must sit beside the package")
    contents = [open(f, "rb").read() for f in originals]
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    copies = [os.path.join(args.work, os.path.basename(f)) for f in originals]
    outdir = os.path.join(args.work, "out")
    counts = dict.fromkeys(CLASSES, 0)
    for i in range(args.n):
        rng = np.random.default_rng([args.seed, i])
        target = int(rng.integers(len(originals)))
        for k, (path, data) in enumerate(zip(copies, contents)):
            if k == target:
                data, change = corrupt(data, rng)
            with open(path, "wb") as f:
                f.write(data)
        shutil.rmtree(outdir, ignore_errors=True)
        os.makedirs(outdir)
        cmd = ([args.gcrt_run, copies[0]] + args.input + ["-o", outdir, "--expect"] +
               args.expect + args.gcrt_arg)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            out, err = proc.communicate(timeout=args.timeout)
            result = classify(proc.returncode, out, err, copies, outdir)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            result = "hung"
        counts[result] += 1
        if result in BAD:
            last = err.strip().splitlines()[-1:]
            print("%d: %s: %s: %s%s" % (i, os.path.basename(originals[target]), change, result,
                                        (": " + last[0]) if last else ""))
    print(" ".join("%s %d" % (c, counts[c]) for c in CLASSES))
    return 1 if any(counts[c] for c in BAD) else 0


if __name__ == "__main__":
    sys.exit(main())
