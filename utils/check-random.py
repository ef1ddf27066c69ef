#!/usr/bin/env python3
"""Checks random outputs of gc-run (--output-dir) by what must hold whatever
the stream (docs/random.md), for the lit tests of random ops.

usage:
  check-random.py dropout OUT.npy HIDDEN.npy P [TOL]
      OUT is dropout with probability P applied to HIDDEN: every element is
      0 or HIDDEN / (1 - P) (within 1e-5, as HIDDEN was computed by
      PyTorch), and the kept fraction of the nonzero HIDDEN elements is
      within TOL (default 0.01, 1%) of 1 - P, relatively.
  check-random.py stats OUT.npy MEAN VAR LOW HIGH
      OUT's N elements have a mean within 5 standard errors of MEAN
      (5 sqrt(VAR / N)), a variance within 5 sqrt(2 / N) VAR of VAR (5
      standard errors for a normal or lighter tail), and every element in
      [LOW, HIGH]. For an integer OUT, LOW and HIGH must both occur.

Prints one line per check and exits 1 if one fails.
"""
import sys

import numpy as np


def report(name, ok, detail):
    print("%s: %s: %s" % (name, detail, "pass" if ok else "FAIL"))
    return ok


def check_dropout(out_path, hidden_path, p, tol):
    out = np.load(out_path).astype(np.float64)
    hidden = np.load(hidden_path).astype(np.float64)
    if out.shape != hidden.shape:
        return report("shape", False, "%s against %s" % (out.shape, hidden.shape))
    scaled = hidden / (1 - p)
    kept = out != 0
    exact = np.all(np.isclose(out[kept], scaled[kept], rtol=1e-5, atol=1e-6))
    ok = report("kept values", exact, "%d equal input / (1 - p)" % kept.sum())
    live = hidden != 0
    fraction = kept[live].mean()
    return report("kept fraction", abs(fraction - (1 - p)) <= tol * (1 - p),
                  "%.5f of %d elements" % (fraction, live.sum())) and ok


def check_stats(out_path, mean, var, low, high):
    out = np.load(out_path)
    values = out.astype(np.float64)
    n = values.size
    got_mean, got_var = values.mean(), values.var()
    ok = report("mean", abs(got_mean - mean) <= 5 * (var / n) ** 0.5,
                "%.4f, want %.4f" % (got_mean, mean))
    ok = report("variance", abs(got_var - var) <= 5 * (2 / n) ** 0.5 * var,
                "%.4f, want %.4f" % (got_var, var)) and ok
    lo, hi = values.min(), values.max()
    in_range = lo >= low and hi <= high
    if np.issubdtype(out.dtype, np.integer):
        in_range = in_range and lo == low and hi == high
    return report("range", in_range, "[%g, %g] in [%g, %g]" % (lo, hi, low, high)) and ok


def main():
    if len(sys.argv) in (5, 6) and sys.argv[1] == "dropout":
        tol = float(sys.argv[5]) if len(sys.argv) == 6 else 0.01
        ok = check_dropout(sys.argv[2], sys.argv[3], float(sys.argv[4]), tol)
    elif len(sys.argv) == 7 and sys.argv[1] == "stats":
        ok = check_stats(sys.argv[2], *(float(a) for a in sys.argv[3:]))
    else:
        sys.exit(__doc__)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
