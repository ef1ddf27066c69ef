#!/usr/bin/env python3
"""Checks one corpus model through gc-import and the graph file round trips.

usage: check-import.py MODELS_DIR MODEL WORK_DIR

- gc-import writes a binary graph file and its op statistics;
- binary -> text -> text gives identical text (print, parse, print);
- text -> binary gives the very bytes gc-import wrote;
- importing twice gives identical bytes;
- the op counts equal `ops_exported` in MODELS_DIR/index.json.
Tools are taken from PATH (lit puts the build's bin/ first).
"""
import json
import os
import subprocess
import sys

GETITEM_TORCH = "<built-in function getitem>"


def run(*args):
    proc = subprocess.run(list(args), capture_output=True)
    if proc.returncode != 0:
        sys.exit("FAILED: %s\n%s" % (" ".join(args), proc.stderr.decode()))
    return proc


def read(path, mode="rb"):
    with open(path, mode) as f:
        return f.read()


def main():
    models, model, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    archive = os.path.join(models, model, "model.pt2")
    gcm, gcm2, gcm3 = (os.path.join(work, n) for n in ("a.gcm", "b.gcm", "c.gcm"))
    txt, txt2 = os.path.join(work, "a.gcir"), os.path.join(work, "b.gcir")

    stats = run("gc-import", archive, "-o", gcm, "--op-stats").stderr.decode()
    run("gc-opt", gcm, "--passes=", "--emit=text", "-o", txt)
    run("gc-opt", txt, "--passes=", "--emit=text", "-o", txt2)
    if read(txt) != read(txt2):
        sys.exit("FAILED: print -> parse -> print changed the text of " + model)
    run("gc-opt", txt, "--passes=", "-o", gcm2)
    if read(gcm) != read(gcm2):
        sys.exit("FAILED: binary -> text -> binary changed the bytes of " + model)
    run("gc-import", archive, "-o", gcm3)
    if read(gcm) != read(gcm3):
        sys.exit("FAILED: importing " + model + " twice gave different bytes")

    counts = {}
    for line in stats.splitlines():
        n, op = line.split(" ", 1)
        counts[GETITEM_TORCH if op == "getitem" else op] = int(n)
    with open(os.path.join(models, "index.json")) as f:
        want = json.load(f)[model]["ops_exported"]
    if counts != want:
        diff = sorted(set(counts.items()) ^ set(want.items()))
        sys.exit("FAILED: op counts of %s differ from index.json: %s" % (model, diff))
    print("OK %s: %d ops, %d bytes" % (model, sum(counts.values()), len(read(gcm))))


if __name__ == "__main__":
    main()
