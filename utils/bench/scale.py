#!/usr/bin/env python3
"""gc at scale (issue 17): how long and how much memory one large archive
takes to import, compile (with external and with embedded weights) and run
one decode step, each step in its own process.

    utils/bench/scale.py ARCHIVE --inputs-dir DIR [--bin build/bin] [--work DIR]
                         [--threads 2] [--bench 3] [--flags=--freeze]
                         [--eager-python PY] [--memory-limit GB] [--keep]

ARCHIVE and DIR come from utils/make-llama-archive.py (DIR holds in*.npy and
config.json). Steps: gc-import --weight-storage reference; gc-compile
--weights=external and gc-compile with embedded weights (both --no-cache
--time-passes, plus --flags); gcrt-run PACKAGE IN... --bench N --threads T
(its median); with --eager-python (a python with torch), the same decode
step in PyTorch eager (make-llama-archive.py --eager, weights mapped from
the archive). A step that fails is reported with its first error line and
the steps after it still run where they can.

Prints a Markdown table (wall time, peak RSS from wait4, the largest
anonymous part of it sampled from /proc: RSS also counts the archive's
mapped pages, which are the page cache's, not the process's), then
each compile's stages: the --time-passes times with the largest resident
memory seen while each stage ran (sampled from /proc every 50 ms, split into
anonymous memory, the process's own copies, and file pages, the mapped
archive), as Markdown. Plain python3; no torch needed unless --eager-python.
Packages are deleted once measured unless --keep.
"""
import argparse
import glob
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
SAMPLE_S = 0.05
GB = 1e9


class Step:
    """One finished step: its command's result and the memory samples taken while it ran."""

    def __init__(self, name, rc, out, err, wall, maxrss_bytes, samples):
        self.name, self.rc, self.out, self.err = name, rc, out, err
        self.wall, self.maxrss, self.samples = wall, maxrss_bytes, samples
        self.output_bytes = None
        self.note = ""

    def first_error(self):
        lines = [l.strip() for l in (self.err + self.out).splitlines() if l.strip()]
        for l in lines:
            if re.search(r"\berror\b|not supported|cannot|failed|what\(\)", l, re.I):
                return l
        return lines[-1] if lines else f"exit status {self.rc}"


def rss_split(pid):
    """(anonymous, file-backed) resident bytes of a live process, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        return (int(fields["RssAnon"].split()[0]) * 1024, int(fields["RssFile"].split()[0]) * 1024)
    except (OSError, KeyError, ValueError):
        return None


def run_step(name, cmd, private_bytes=None):
    """Runs cmd (with at most private_bytes of private writable memory, if given); wall time, max
    RSS from wait4, and (seconds, anon, file) samples from /proc."""
    print(f"[scale] {name}: {shlex.join(cmd)}", file=sys.stderr, flush=True)

    def limit():
        if private_bytes:
            resource.setrlimit(resource.RLIMIT_DATA, (private_bytes, private_bytes))

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, preexec_fn=limit)
        samples = []
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            split = rss_split(p.pid)
            if split:
                samples.append((time.perf_counter() - start, *split))
            time.sleep(SAMPLE_S)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        return Step(name, os.waitstatus_to_exitcode(status), out.read(), err.read(), wall,
                    usage.ru_maxrss * 1024, samples)


# "  0.0373 (  1.1%)  import   import"
PASS_LINE = re.compile(r"^\s*([0-9.]+) \(\s*[0-9.]+%\)\s+(\S+)\s+(\S+)\s*$")


def stage_table(step):
    """Markdown rows: each --time-passes stage's wall time and the peak memory of its window
    (stages run one after another from the process's start)."""
    stages = []
    for line in step.err.splitlines():
        m = PASS_LINE.match(line)
        if m and m.group(2) != "Total":
            secs, stage = float(m.group(1)), m.group(2)
            if stages and stages[-1][0] == stage:
                stages[-1][1] += secs
            else:
                stages.append([stage, secs])
    rows, t = [], 0.0
    for stage, secs in stages:
        window = [s for s in step.samples if t <= s[0] <= t + secs + SAMPLE_S] or \
                 [min(step.samples, key=lambda s: abs(s[0] - t), default=(0, 0, 0))]
        anon = max(s[1] for s in window)
        filed = max(s[2] for s in window)
        rows.append(f"| {stage} | {secs:.2f} | {anon / GB:.2f} | {filed / GB:.2f} |")
        t += secs
    return rows


def fmt_size(n):
    return "" if n is None else f"{n / GB:.3f} GB" if n >= 1e8 else f"{n / 1e6:.2f} MB"


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("archive")
    p.add_argument("--inputs-dir", required=True, help="in*.npy (and config.json for --eager-python)")
    p.add_argument("--bin", default=os.path.join(REPO, "build", "bin"), help="where gc's tools are")
    p.add_argument("--work", help="where the graph file and packages go (default: a temporary folder)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--bench", type=int, default=3)
    p.add_argument("--flags", default="", help="more gc-compile flags, e.g. --freeze")
    p.add_argument("--eager-python", help="a python with torch: also time PyTorch eager")
    p.add_argument("--keep", action="store_true", help="keep the packages")
    p.add_argument("--memory-limit", type=float, metavar="GB",
                   help="the most private memory a gc step may take (RLIMIT_DATA: heap and private "
                        "writable mappings; the mapped archive does not count): a step that needs "
                        "more fails instead of pushing a shared machine into the OOM killer")
    a = p.parse_args(argv)
    for path in (a.archive, a.inputs_dir):
        if not os.path.exists(path):
            sys.exit(f"scale.py: {path}: no such file or folder")
    inputs = sorted(glob.glob(os.path.join(a.inputs_dir, "in*.npy")),
                    key=lambda f: int(re.sub(r"\D", "", os.path.basename(f))))
    if not inputs:
        sys.exit(f"scale.py: {a.inputs_dir}: no in*.npy inputs")
    bin_dir = a.bin
    work = a.work or tempfile.mkdtemp(prefix="gc-scale-")
    os.makedirs(work, exist_ok=True)
    flags = shlex.split(a.flags)
    limit = int(a.memory_limit * GB) if a.memory_limit else None

    steps = []
    graph = os.path.join(work, "model.aten.gc")
    s = run_step("gc-import (weights referenced)",
                 [os.path.join(bin_dir, "gc-import"), a.archive, "--weight-storage", "reference", "-o", graph], limit)
    s.output_bytes = os.path.getsize(graph) if s.rc == 0 else None
    steps.append(s)
    if os.path.exists(graph):
        os.remove(graph)

    packages = {}
    for mode in ("external", "embed"):
        pkg = os.path.join(work, f"model.{mode}.gcpkg")
        s = run_step(f"gc-compile --weights={mode}",
                     [os.path.join(bin_dir, "gc-compile"), a.archive, f"--weights={mode}", "--no-cache",
                      "--time-passes", *flags, "-o", pkg], limit)
        if s.rc == 0:
            s.output_bytes = os.path.getsize(pkg)
            packages[mode] = pkg
        elif os.path.exists(pkg):
            s.note = "(and it left an output file) "
        steps.append(s)

    decode = packages.get("external") or packages.get("embed")
    if decode:
        s = run_step(f"decode step, gcrt-run --threads {a.threads} ({os.path.basename(decode)})",
                     [os.path.join(bin_dir, "gcrt-run"), decode, *inputs, "--bench", str(a.bench),
                      "--threads", str(a.threads)], limit)
        m = re.search(r"median ([0-9.]+) ms", s.out)
        if s.rc == 0 and m:
            s.note = f"median of {a.bench}: {float(m.group(1)):.4g} ms"
        steps.append(s)
    if a.eager_python:
        gen = os.path.join(REPO, "utils", "make-llama-archive.py")
        s = run_step(f"decode step, PyTorch eager, {a.threads} threads",
                     [a.eager_python, gen, "--eager", a.archive, "--inputs-dir", a.inputs_dir,
                      "--bench", str(a.bench), "--threads", str(a.threads)])
        m = re.search(r'"median_s": ([0-9.e-]+)', s.out)
        if s.rc == 0 and m:
            s.note = f"median of {a.bench}: {float(m.group(1)) * 1000:.4g} ms"
        steps.append(s)
    if not a.keep:
        for pkg in packages.values():
            os.remove(pkg)

    print(f"archive: {a.archive} ({fmt_size(os.path.getsize(a.archive))}); threads {a.threads}\n")
    print("| step | wall s | peak RSS GB | anonymous GB | output | note |")
    print("| --- | --- | --- | --- | --- | --- |")
    failed = False
    for s in steps:
        note = s.note
        if s.rc != 0:
            failed = True
            note = f"{note}failed (exit {s.rc}): {s.first_error()}"
        anon = max((sample[1] for sample in s.samples), default=0)
        print(f"| {s.name} | {s.wall:.1f} | {s.maxrss / GB:.2f} | {anon / GB:.2f} | {fmt_size(s.output_bytes)} "
              f"| {note} |")
    for s in steps:
        rows = stage_table(s)
        if rows:
            print(f"\n{s.name}: stages (--time-passes) and the largest resident memory while each ran\n")
            print("| stage | wall s | anonymous GB | file pages GB |")
            print("| --- | --- | --- | --- |")
            print("\n".join(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
