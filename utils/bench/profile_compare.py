#!/usr/bin/env python3
"""Where gc's time goes beside ONNX Runtime's, on one model, by kind of work.

    utils/bench/profile_compare.py MODEL_DIR --build build [--threads 2] [--cores 0-1]
                                   [--runs 20] [--target T] [--onnx FILE] [--keep DIR]
    utils/bench/profile_compare.py --kinds PLAN.txt    # each step's kind, one a line

MODEL_DIR holds model.pt2 and in<i>.npy (a folder of run.py's cache, e.g.
~/.cache/gc-bench/models/tv_densenet121). It compiles the model with
`gc-compile --freeze --target T` (and its kernel plan as text, to learn what
each kernel computes), runs `gc-run --bench RUNS --profile`, then ONNX
Runtime's session as run.py makes it (torch_worker.ort_session) with its
profiler on for RUNS runs after one warm-up, and prints two Markdown tables:
gc's time by kind of step and ONNX Runtime's by operator type, with each
one's share of the total. Run it with the benchmark's virtual environment
(~/.cache/gc-bench/venv/bin/python), which has torch and onnxruntime.

gc's steps are grouped as: an extern's op (a convolution's with its kernel
size and grouping; mm, addmm, ...), or for a generated kernel the compute
ops of its nodes (`add+maximum`; `copy` for one that only moves data;
`sum(maximum) div`: a sum reduction of a ReLU, then a division). Times are per run, each step's (each
node's) fastest run for both: the steadiest figure on a shared machine.
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def plan_kinds(text):
    """{step name: kind of work} from a kernel plan in text form (gc-compile
    --compile-to kernels --emit text)."""
    nodes, node, inside = [], None, False
    for line in text.splitlines():
        if line.startswith("  ], nodes=["):
            inside = True
            continue
        if line.startswith("  ], outputs=["):
            inside = False
            continue
        if not inside:
            continue
        m = re.match(r'    \{kind=(\w+), name="([^"]+)"(?:, op=aten\.(\w+))?', line)
        if m:
            node = {"kind": m.group(1), "name": m.group(2), "extern": m.group(3), "ops": set(), "groups": 1,
                    "shapes": [], "loads": 0}
            nodes.append(node)
            continue
        if node is None:
            continue
        c = re.match(r"\s+\{kind=compute(?:, op=(\w+))?", line)
        if c:
            node["ops"].add(c.group(1) or "add")
        if re.match(r"\s+\{kind=load\b", line):
            node["loads"] += 1
        # A node adding its values into its output (combine=add) is a sum
        # over its outer loops, as gc-compile writes a strided one.
        if re.match(r"\s+\].*\boutput=.*, combine=add(\}|, loc=\{.*\}\})$", line):
            node["kind"] = "reduction"
        g = re.match(r'\s+\{name="groups", value=(\d+)\}', line)
        if g:
            node["groups"] = int(g.group(1))
        t = re.match(r"\s+\{(?:buffer=%\w+, )?type=\w+\[([\d, ]*)\]", line)
        if t:
            node["shapes"].append([int(x) for x in t.group(1).split(",") if x.strip()])
    kinds = {}
    for n in nodes:
        if n["kind"] == "extern":
            kinds[n["name"]] = extern_kind(n)
    for m in re.finditer(r'\{name="(\w+)", nodes=\[([\d, ]*)\]', text):
        members = [nodes[int(i)] for i in m.group(2).split(",") if i.strip()]
        kinds[m.group(1)] = kernel_kind(members)
    return kinds


def kernel_kind(members):
    """A generated kernel's compute ops, each reduction's as NAME(ops) (its node's
    name says which reduction); `copy` where it only moves data, `fill` where it
    only stores constants."""
    pointwise = sorted(set().union(*(n["ops"] for n in members if n["kind"] != "reduction")))
    reductions = sorted({re.sub(r"_\d+$", "", n["name"]) + "(" + "+".join(sorted(n["ops"])) + ")"
                         for n in members if n["kind"] == "reduction"})
    kind = " ".join(reductions + ["+".join(pointwise)]).strip()
    return kind or ("copy" if any(n["loads"] for n in members) else "fill")


def extern_kind(node):
    """An extern's op; a convolution's with its kernel size (its weight, the
    second buffer, is [out, in / groups, kh, kw]) and whether it is grouped."""
    op = node["extern"]
    if op != "convolution" or len(node["shapes"]) < 2 or len(node["shapes"][1]) != 4:
        return op
    weight = node["shapes"][1]
    grouped = " depthwise" if node["groups"] > 1 and weight[1] == 1 else " grouped" if node["groups"] > 1 else ""
    return f"convolution {weight[2]}x{weight[3]}{grouped}"


def gc_profile(build, pkg, ins, o):
    out = subprocess.run(["taskset", "-c", o.cores, os.path.join(build, "bin", "gc-run"), pkg, "--input", *ins,
                          "--bench", str(o.runs), "--profile", "--threads", str(o.threads)],
                         capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS=str(o.threads)))
    if out.returncode:
        sys.exit(f"profile_compare: gc-run failed: {out.stderr.strip()}")
    steps, reorders = [], None
    for line in out.stdout.splitlines():
        m = re.match(r"\s*\d+ (\w+)\s+(\S+)\s+([\d.]+)\s+([\d.]+)\s+[\d.]+%", line)
        if m:
            steps.append((m.group(2), float(m.group(4))))
        r = re.match(r"reorders: ([\d.]+) per run, mean us ([\d.]+), ([\d.]+)% of the time", line)
        if r:
            reorders = (float(r.group(1)), float(r.group(3)))
    bench = re.search(r"bench: .*", out.stdout)
    return steps, reorders, bench.group(0) if bench else ""


def ort_profile(model_dir, onnx_path, o):
    import numpy as np
    import torch_worker as tw
    tw.ort_export(model_dir, onnx_path)
    with tempfile.TemporaryDirectory() as tmp:
        sess = tw.ort_session(onnx_path, o.threads, os.path.join(tmp, "ort"))
        args = [np.load(f) for f in tw.numbered(model_dir, "in")]
        feeds = {i.name: a for i, a in zip(sess.get_inputs(), args)}
        for _ in range(o.runs + 1):
            sess.run(None, feeds)
        events = json.load(open(sess.end_profiling()))
    runs = [e for e in events if e.get("cat") == "Session" and e.get("name") == "model_run"]
    per_node = collections.defaultdict(list)
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            per_node[(e["name"], e["args"].get("op_name", "?"))].append(e["dur"])
    by_op = collections.defaultdict(lambda: [0, 0.0])
    for (_, op), durs in per_node.items():
        by_op[op][0] += 1
        by_op[op][1] += min(durs[1:] or durs)  # the first run is the warm-up
    return by_op, min([e["dur"] for e in runs[1:]] or [0])


def table(title, rows, total_us, top):
    lines = [f"| {title} | steps | ms per run | share |", "| --- | ---: | ---: | ---: |"]
    for kind, (count, us) in sorted(rows.items(), key=lambda kv: -kv[1][1])[:top]:
        lines.append(f"| {kind} | {count} | {us / 1e3:.2f} | {100 * us / total_us:.1f}% |")
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model_dir", nargs="?")
    p.add_argument("--kinds", metavar="PLAN", help="print the kind of each step of this kernel plan "
                   "(gc-compile --compile-to kernels --emit text) and stop")
    p.add_argument("--build", default=os.path.join(HERE, "..", "..", "build"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--cores", help="taskset -c cores for gc-run (default 0-(threads-1))")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--target", default="x86-64-v4")
    p.add_argument("--onnx", help="ONNX Runtime's file (default MODEL_DIR/model.onnx, exported if missing)")
    p.add_argument("--top", type=int, default=8, help="rows per table")
    p.add_argument("--keep", help="keep the package and kernel plan in this folder")
    o = p.parse_args()
    if o.kinds:
        try:
            kinds = plan_kinds(open(o.kinds).read())
        except (OSError, UnicodeDecodeError) as e:
            sys.exit(f"profile_compare: {o.kinds}: cannot read it: {e}")
        if not kinds:
            sys.exit(f"profile_compare: {o.kinds}: no kernel plan (gc-compile --compile-to kernels --emit text)")
        print("\n".join(f"{step}: {kind}" for step, kind in kinds.items()))
        return
    if not o.model_dir:
        p.error("MODEL_DIR is required")
    o.cores = o.cores or (f"0-{o.threads - 1}" if o.threads > 1 else "0")
    import torch_worker as tw
    ins = tw.numbered(o.model_dir, "in")
    work = o.keep or tempfile.mkdtemp(prefix="gc-profile-")
    os.makedirs(work, exist_ok=True)
    pkg, plan = os.path.join(work, "model.gcpkg"), os.path.join(work, "model.kernels.txt")
    gc_compile = [os.path.join(o.build, "bin", "gc-compile"), os.path.join(o.model_dir, "model.pt2"), "--freeze",
                  "--target", o.target]
    for extra, out in (([], pkg), (["--compile-to", "kernels", "--emit", "text"], plan)):
        r = subprocess.run([*gc_compile, *extra, "-o", out], capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"profile_compare: gc-compile failed: {r.stderr.strip()}")
    kinds = plan_kinds(open(plan).read())
    steps, reorders, bench = gc_profile(o.build, pkg, ins, o)
    gc_rows = collections.defaultdict(lambda: [0, 0.0])  # kind: [steps, us]
    for name, us in steps:
        row = gc_rows[kinds.get(name, name)]
        row[0] += 1
        row[1] += us
    gc_total = sum(us for _, us in steps)
    by_op, ort_run_us = ort_profile(o.model_dir, o.onnx or os.path.join(o.model_dir, "model.onnx"), o)
    ort_total = sum(us for _, us in by_op.values())
    name = os.path.basename(os.path.normpath(o.model_dir))
    print(f"### {name}\n")
    print(f"gc ({bench}; steps' fastest runs sum to {gc_total / 1e3:.2f} ms"
          + (f"; oneDNN reorders inside steps: {reorders[0]:g} per run, {reorders[1]:g}% of the mean time"
             if reorders else "") + "):\n")
    print("\n".join(table("gc step kind", gc_rows, gc_total, o.top)))
    print(f"\nONNX Runtime (fastest run {ort_run_us / 1e3:.2f} ms; its nodes' fastest runs sum to "
          f"{ort_total / 1e3:.2f} ms):\n")
    print("\n".join(table("ONNX Runtime op", by_op, ort_total, o.top)))
    if not o.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
