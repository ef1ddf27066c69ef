#!/usr/bin/env python3
"""Runs every model of a corpus with the aten-level reference interpreter.

usage: check-aten-run.py MODELS_DIR [--bin DIR] [--work DIR] [--quiet]

Each directory under MODELS_DIR (searched recursively) that holds model.pt2,
in0.npy.. and out0.npy.. is a model: gc-import reads it, gc-run runs the
aten graph on its inputs and writes its outputs, and each output k must
match out<k>.npy elementwise:

    |got - want| <= atol_k + rtol * |want|,   rtol = 1e-3 (1.6e-2 for a
    bfloat16 output, whose 8-bit mantissa cannot hold 1e-3, as
    torch.testing.assert_close),
    atol_k = rtol * max|out<k>| (1e-6 for an output of zeros),

the absolute tolerance scaled to the output's magnitude, so that a model
whose outputs are all far below 1 (or far above) is held to the same
relative standard as one near 1. NaNs must sit at the same places. Bool and
integer outputs must be equal. A model whose graph takes U user inputs and
whose directory holds N = R * U of them is R runs (in<k*U>.. for run k),
run k's O outputs checked against out<k*O>.. (runs past the last outputs
are not run). Prints one line per model,
then "N of M models pass"; exits non-zero if one fails. Needs only the
standard library.
"""
import argparse
import ast
import math
import os
import re
import struct
import subprocess
import sys
import tempfile

RTOL = 1e-3
RTOL_BF16 = 1.6e-2
ATOL_FLOOR = 1e-6

# numpy descr -> (struct code, is floating); bfloat16 is stored as '<V2'.
FORMATS = {"f8": ("d", True), "f4": ("f", True), "f2": ("e", True), "i8": ("q", False),
           "i4": ("i", False), "i2": ("h", False), "i1": ("b", False), "u1": ("B", False),
           "b1": ("?", False), "V2": ("H", True)}


def read_npy(path):
    """(shape, values as floats or ints) of a little-endian C-order .npy."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError(path + ": not an .npy file")
    major = data[6]
    hlen_size = 2 if major == 1 else 4
    hlen = int.from_bytes(data[8:8 + hlen_size], "little")
    header = ast.literal_eval(data[8 + hlen_size:8 + hlen_size + hlen].decode("latin1"))
    body = data[8 + hlen_size + hlen:]
    descr = header["descr"].lstrip("<|=")
    if descr not in FORMATS or header["fortran_order"]:
        raise ValueError(path + ": unsupported array " + str(header))
    code, floating = FORMATS[descr]
    count = math.prod(header["shape"])
    values = list(struct.unpack("<%d%s" % (count, code), body[:count * struct.calcsize(code)]))
    if descr == "V2":  # bfloat16: the high half of a float32
        values = [struct.unpack("<f", struct.pack("<I", v << 16))[0] for v in values]
    return tuple(header["shape"]), values, floating, descr


def compare(got_path, want_path):
    """None if they match, else why not."""
    gshape, got, _, _ = read_npy(got_path)
    wshape, want, floating, descr = read_npy(want_path)
    rtol = RTOL_BF16 if descr == "V2" else RTOL
    if gshape != wshape:
        return "shape %s, want %s" % (gshape, wshape)
    if not floating:
        bad = sum(1 for g, w in zip(got, want) if g != w)
        return "%d of %d elements differ" % (bad, len(want)) if bad else None
    finite = [abs(w) for w in want if math.isfinite(w)]
    atol = max(rtol * max(finite, default=0.0), ATOL_FLOOR)
    worst = 0.0
    for g, w in zip(got, want):
        if math.isnan(w) or math.isnan(g):
            if not (math.isnan(w) and math.isnan(g)):
                return "NaN where the other is %r" % (g if math.isnan(w) else w)
            continue
        if math.isinf(w) or math.isinf(g):
            if g != w:
                return "%r where %r is expected" % (g, w)
            continue
        excess = abs(g - w) - (atol + rtol * abs(w))
        worst = max(worst, excess)
    return "max error exceeds atol %.3g + rtol %g by %.3g" % (atol, rtol, worst) if worst > 0 else None


def numbered(d, prefix):
    files = []
    while os.path.exists(os.path.join(d, "%s%d.npy" % (prefix, len(files)))):
        files.append(os.path.join(d, "%s%d.npy" % (prefix, len(files))))
    return files


def check(model_dir, name, tool, work):
    graph = os.path.join(work, name.replace("/", "_") + ".gcm")
    outdir = os.path.join(work, name.replace("/", "_") + ".out")
    os.makedirs(outdir, exist_ok=True)
    r = subprocess.run([tool("gc-import"), os.path.join(model_dir, "model.pt2"), "-o", graph],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return "gc-import: " + (r.stderr.strip().splitlines() or ["failed"])[-1]
    ins, outs = numbered(model_dir, "in"), numbered(model_dir, "out")
    per_run = len(ins)
    for attempt in range(2):
        checked, per_out, refit = 0, 1, False
        for k in range(len(ins) // per_run):
            if k > 0 and k * per_out >= len(outs):
                break  # inputs with no outputs to check against
            for f in os.listdir(outdir):
                os.remove(os.path.join(outdir, f))
            cmd = [tool("gc-run"), graph, "--output-dir", outdir]
            for i in ins[k * per_run:(k + 1) * per_run]:
                cmd += ["--input", i]
            r = subprocess.run(cmd, capture_output=True, text=True)
            # gc-run names the number of user inputs the graph takes.
            m = re.search(r"expected (\d+) user inputs?, got", r.stderr)
            if r.returncode != 0 and attempt == 0 and m and 0 < int(m.group(1)) < len(ins) and \
                    len(ins) % int(m.group(1)) == 0:
                per_run, refit = int(m.group(1)), True
                break
            if r.returncode != 0:
                return "gc-run: " + (r.stderr.strip().splitlines() or ["failed"])[-1]
            got = numbered(outdir, "out")
            per_out = max(len(got), 1)
            for j, want in enumerate(outs[k * len(got):(k + 1) * len(got)]):
                checked += 1
                why = compare(got[j], want)
                if why:
                    return "run %d, out%d: %s" % (k, j, why)
        if not refit:
            return None if checked else "no output checked"
    return "gc-run: the inputs do not fit the graph"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("models")
    p.add_argument("--bin", help="directory of the gc tools (else PATH)")
    p.add_argument("--work", help="directory for the graphs and outputs (else a temporary one)")
    p.add_argument("--quiet", action="store_true", help="print only failures and the count")
    a = p.parse_args()
    tool = (lambda t: os.path.join(a.bin, t)) if a.bin else (lambda t: t)
    models = []
    for root, _, files in os.walk(a.models):
        if "model.pt2" in files and os.path.exists(os.path.join(root, "out0.npy")):
            models.append(os.path.relpath(root, a.models))
    models.sort()
    work = a.work or tempfile.mkdtemp(prefix="check-aten-run.")
    os.makedirs(work, exist_ok=True)
    passed = 0
    for name in models:
        why = check(os.path.join(a.models, name), name, tool, work)
        passed += why is None
        if why or not a.quiet:
            print("%s: %s" % (name, "pass" if why is None else "FAIL: " + why))
    print("%d of %d models pass" % (passed, len(models)))
    return 0 if passed == len(models) else 1


if __name__ == "__main__":
    sys.exit(main())
