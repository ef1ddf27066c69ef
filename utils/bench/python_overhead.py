#!/usr/bin/env python3
"""The cost of calling a compiled package from Python, beside the peers.

    python utils/bench/python_overhead.py overhead [--device cuda] [--calls N] [--package P]
    python utils/bench/python_overhead.py export eight.pt2
    python utils/bench/python_overhead.py coldstart --archive resnet50/model.pt2

overhead: a model of 8 small inputs (eight 16-float tensors summed) is
exported once and called N times (after warm-up) through gcrt.load's
callable, through the same package on the C API alone (gcrt-run --bench,
the runtime's own cost), through torch._inductor.aoti_load_package's
callable, and through ep.module(). It prints one table of medians; gc's
added cost per call is the Python call's median less the C API's. Where no
compiler is (a GPU machine), `export` writes the model's archive, compiled
elsewhere (gc-compile --device cuda), and --package names the result.

coldstart: in a fresh process each, the time from `import` to the first
result of resnet50 (or the archive given): gcrt (import gcrt, gcrt.load,
call) against AOTInductor (import torch, aoti_load_package, call), both from
packages compiled beforehand (not timed).

Needs torch; gcrt installed (pip install .); gcrt-run on PATH or --gcrt-run.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch


class EightInputs(torch.nn.Module):
    def forward(self, a, b, c, d, e, f, g, h):
        return a + b + c + d + e + f + g + h


def median_us(fn, calls, sync=None):
    for _ in range(max(calls // 10, 20)):
        fn()
    times = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        fn()
        if sync:
            sync()
        times.append(time.perf_counter_ns() - start)
    return statistics.median(times) / 1e3


def gcrt_run_median_us(runner, package, inputs, calls, work):
    """The C API's own median per run, from gcrt-run --bench (with
    --device-io for GPU tensors: gcrt_run_device, as the callable uses)."""
    import numpy as np

    files = []
    for i, t in enumerate(inputs):
        path = os.path.join(work, f"in{i}.npy")
        np.save(path, t.cpu().numpy())
        files.append(path)
    device_io = ["--device-io"] if inputs[0].is_cuda else []
    out = subprocess.run([runner, package, *files, "--bench", str(calls), *device_io],
                         check=True, capture_output=True, text=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("bench:"))
    return float(line.split("median ")[1].split(" ms")[0]) * 1e3


def overhead(args):
    device = torch.device(args.device)
    inputs = [torch.randn(16, device=device) for _ in range(8)]
    ep = torch.export.export(EightInputs(), tuple(t.cpu() for t in inputs))
    name = torch.cuda.get_device_name() if device.type == "cuda" else _cpu_name()
    print(f"# per-call time, 8 inputs of 16 floats, {args.device} ({name}), torch "
          f"{torch.__version__}, median of {args.calls} calls")
    print("| caller | median (us) |")
    print("|---|---:|", flush=True)

    def row(label, us):
        print(f"| {label} | {us:.1f} |", flush=True)
        return us

    sync = torch.cuda.synchronize if device.type == "cuda" else None
    with tempfile.TemporaryDirectory(prefix="gcrt-bench-") as work:
        if args.only != "peers":
            import gcrt

            package = args.package or gcrt.compile(ep, os.path.join(work, "eight.gcpkg"),
                                                   freeze=True)
            m = gcrt.load(package)
            gc_us = row("gcrt.load callable", median_us(lambda: m(*inputs), args.calls, sync))
            c_us = row("gcrt-run (C API, no Python)",
                       gcrt_run_median_us(args.gcrt_run, package, inputs, args.calls, work))
            print(f"gc's added cost per call (Python less C API): {gc_us - c_us:.1f} us")
        if args.only == "gc":
            return
        from torch._inductor import aoti_compile_and_package, aoti_load_package

        ep_device = torch.export.export(EightInputs().to(device), tuple(inputs))
        # ep.module() first: its figure stands even where AOTInductor's
        # loading fails.
        module = ep_device.module()
        with torch.no_grad():
            row("ep.module()", median_us(lambda: module(*inputs), args.calls, sync))
        aoti_path = aoti_compile_and_package(ep_device,
                                             package_path=os.path.join(work, "eight.pt2"))
        aoti = aoti_load_package(aoti_path)
        row("aoti_load_package callable", median_us(lambda: aoti(*inputs), args.calls, sync))


def _cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "cpu"


COLD_GC = """
import time, sys
start = time.perf_counter()
import numpy as np, gcrt
m = gcrt.load(sys.argv[1])
y = m(np.load(sys.argv[2]))
print(time.perf_counter() - start)
"""

COLD_AOTI = """
import time, sys
start = time.perf_counter()
import numpy as np, torch
from torch._inductor import aoti_load_package
m = aoti_load_package(sys.argv[1])
with torch.no_grad():
    y = m(torch.from_numpy(np.load(sys.argv[2])))
print(time.perf_counter() - start)
"""


def coldstart(args):
    import gcrt

    with tempfile.TemporaryDirectory(prefix="gcrt-cold-") as work:
        ep = torch.export.load(args.archive)
        package = gcrt.compile(args.archive, os.path.join(work, "m.gcpkg"), freeze=True)
        from torch._inductor import aoti_compile_and_package

        start = time.perf_counter()
        aoti = aoti_compile_and_package(ep, package_path=os.path.join(work, "m.pt2"),
                                        inductor_configs={"freezing": True})
        aoti_compile_s = time.perf_counter() - start
        rows = []
        for label, script, path in (("gcrt", COLD_GC, package), ("AOTInductor", COLD_AOTI, aoti)):
            times = []
            for _ in range(args.repeats):
                out = subprocess.run([sys.executable, "-c", script, path, args.input],
                                     check=True, capture_output=True, text=True).stdout
                times.append(float(out.split()[-1]))
            rows.append((label, min(times), statistics.median(times)))
    print(f"# cold start (import to first result), {os.path.basename(os.path.dirname(args.archive))}, "
          f"{_cpu_name()}, {args.repeats} fresh processes each; AOTI's compile took "
          f"{aoti_compile_s:.0f} s (not timed below)")
    print("| runtime | best (s) | median (s) |")
    print("|---|---:|---:|")
    for label, best, median in rows:
        print(f"| {label} | {best:.2f} | {median:.2f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    o = sub.add_parser("overhead")
    o.add_argument("--device", default="cpu")
    o.add_argument("--calls", type=int, default=2000)
    o.add_argument("--gcrt-run", default="gcrt-run")
    o.add_argument("--package", help="the model's package, compiled beforehand")
    o.add_argument("--only", choices=["gc", "peers"],
                   help="time one side only (a machine where the libraries gc's package "
                        "carries must not share a process with AOTInductor's)")
    e = sub.add_parser("export")
    e.add_argument("path")
    c = sub.add_parser("coldstart")
    c.add_argument("--archive", required=True)
    c.add_argument("--input", required=True, help="the model's input, a .npy file")
    c.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.what == "export":
        torch.export.save(torch.export.export(EightInputs(), tuple(torch.randn(16) for _ in range(8))),
                          args.path)
    else:
        (overhead if args.what == "overhead" else coldstart)(args)


if __name__ == "__main__":
    main()
