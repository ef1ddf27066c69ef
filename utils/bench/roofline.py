#!/usr/bin/env python3
"""Which of issue 19's latency targets this machine can reach at all.

    utils/bench/roofline.py --build build [--threads 2] [--cores 0-1] [--runs 20]
                            [--doc docs/PERFORMANCE.md] [--realmodels DIR] [MODEL...]

For each model of the issue-19 table in docs/PERFORMANCE.md (between its
`<!-- issue19:begin -->` and `<!-- issue19:end -->` marks; or the MODELs
named), found in ~/.cache/gc-bench/models/ or --realmodels, it compiles
model.pt2 with `gc-compile --freeze`, takes the FLOPs of one run from
`gc-run --profile`'s roofline (the work the compiler counts per step) and
gc's median latency from `gc-run --bench RUNS`, both pinned to --cores with
--threads threads. The FMA peak is the highest `gc-run --profile` measured
over all models (GC_PEAKS=GFLOPS,GBPS gives one instead). It prints a
Markdown table: the model's GFLOP per run; gc's median now and in the
document's table, each with the share of the peak it achieves; the best
peer's median from the document's table (the fastest of torch.compile, AOTI
and ONNX Runtime); and the share of the peak a latency of 0.8x that would
need: above 100% the target is out of reach on this machine whatever the
code does, near it only for kernels at their best. Needs no torch: plain
python3.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

PEERS = ("torch.compile", "torch.compile, freezing", "AOTI", "ONNX Runtime")


def issue19_table(doc):
    """{model: (gc ms, (best peer ms, peer))} from the latency table of the
    issue-19 section: each row's medians (the figure before ' / ')."""
    text = open(doc).read()
    begin, end = text.find("<!-- issue19:begin -->"), text.find("<!-- issue19:end -->")
    if begin < 0 or end < begin:
        sys.exit(f"roofline.py: error: {doc} has no issue19:begin/end section")
    header, best = None, {}
    for line in text[begin:end].splitlines():
        if not line.startswith("|"):
            if header and best:
                break  # the first table only: the latency one
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] == "model":
            header = cells
            continue
        if not header or cells[0].startswith("---"):
            continue
        medians = {}
        for name in ("gc",) + PEERS:
            m = re.match(r"([0-9.]+) /", cells[header.index(name)]) if name in header else None
            if m:
                medians[name] = float(m.group(1))
        peers = [(ms, name) for name, ms in medians.items() if name in PEERS]
        if peers and "gc" in medians:
            best[cells[0]] = (medians["gc"], min(peers))
    return best


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"roofline.py: error: {' '.join(cmd)} failed:\n{r.stderr.strip()}")
    return r.stdout


def model_dir(name, o):
    for root in (os.path.expanduser("~/.cache/gc-bench/models"), o.realmodels):
        d = os.path.join(root, name)
        if os.path.exists(os.path.join(d, "model.pt2")):
            return d
    sys.exit(f"roofline.py: error: no model.pt2 for '{name}' in ~/.cache/gc-bench/models "
             f"or {o.realmodels}")


def measure(name, o, work):
    d = model_dir(name, o)
    pkg = os.path.join(work, name + ".gcpkg")
    pin = ["taskset", "-c", o.cores]
    run(pin + [os.path.join(o.build, "bin", "gc-compile"), os.path.join(d, "model.pt2"),
               "--freeze", "-o", pkg])
    gcrun = pin + [os.path.join(o.build, "bin", "gc-run"), pkg, "--inputs-dir", d,
                   "--threads", str(o.threads)]
    profile = run(gcrun + ["--profile"])
    flops = float(re.search(r"^roofline total: ([0-9.e+-]+) GFLOP", profile, re.M).group(1))
    peak = float(re.search(r"^peaks: ([0-9.]+) GFLOP/s", profile, re.M).group(1))
    bench = run(gcrun + ["--bench", str(o.runs)])
    median = float(re.search(r"median ([0-9.e+-]+) ms", bench).group(1))
    return flops, median, peak


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("models", nargs="*", help="default: every model of the issue-19 table")
    p.add_argument("--build", required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--cores", default="0-1")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--doc", default=os.path.join(os.path.dirname(__file__), "..", "..", "docs",
                                                 "PERFORMANCE.md"))
    p.add_argument("--realmodels", default="build/test/realmodels")
    o = p.parse_args(argv)
    best = issue19_table(o.doc)
    models = o.models or list(best)
    rows, peak = [], 0.0
    with tempfile.TemporaryDirectory() as work:
        for name in models:
            print(f"roofline.py: {name}", file=sys.stderr)
            flops, median, measured = measure(name, o, work)
            peak = max(peak, measured)
            rows.append((name, flops, median))
    print(f"FMA peak: {peak:.1f} GFLOP/s ({o.threads} threads, the highest `gc-run --profile` "
          f"measured{' (GC_PEAKS)' if os.environ.get('GC_PEAKS') else ''})\n")
    print("| model | GFLOP per run | gc median ms (now) | % of peak | gc median ms (table) "
          "| % of peak | best peer ms (table) | 0.8x best peer ms | % of peak needed |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")

    def share(flops, ms):
        return f"{100 * flops / (ms / 1e3) / peak:.0f}%"

    for name, flops, median in rows:
        cells = [name, f"{flops:.3g}", f"{median:.3g}", share(flops, median)]
        if name in best:
            gc, (ms, peer) = best[name]
            cells += [f"{gc:.3g}", share(flops, gc), f"{ms:.3g} ({peer})", f"{0.8 * ms:.3g}",
                      share(flops, 0.8 * ms)]
        else:
            cells += ["n/a"] * 5
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
