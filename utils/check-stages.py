#!/usr/bin/env python3
"""Checks that the stage tools one by one and gc-compile give the same bytes.

usage: check-stages.py ARCHIVE... --device cpu|cuda [--bin DIR] [--work DIR]
                       [--flags "FLAG ..."] [--jobs N] [--shard K/N]

For each torch.export archive, runs gc-import, gc-opt (with --device and the
extra flags), gc-lower, gc-codegen and gc-package, writing their files where
gc-compile names its stages (<dir>/<stem>.<level>.gc), then gc-compile with the
same flags and --emit-stage, and gc-compile --compile-to=loops alone (compared
where no constants were folded: it writes them under its output's name), and
compares the two at every level: aten, core (and the constants --freeze folded,
core.gc.weights), loops, kernels and the package. Where a stage tool fails,
gc-compile must fail too, and the levels before it must still agree. Prints
one line per archive and exits non-zero if any differs. --shard K/N checks
every Nth archive from the Kth (1-based), so that a test can be split. Tools
come from --bin, else PATH; gc-compile shares gc-codegen's object cache.
"""
import argparse
import concurrent.futures
import filecmp
import os
import shlex
import subprocess
import sys

# The levels in pipeline order, each with the stage tool that makes it.
LEVELS = ["aten", "core", "loops", "kernels", "package"]


def run(cmd):
    """The command's exit status and its stderr's last line."""
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines = p.stderr.strip().splitlines()
    return p.returncode, lines[-1] if lines else ""


def check(archive, name, args):
    tool = lambda t: os.path.join(args.bin, t) if args.bin else t
    flags = ["--device", args.device] + shlex.split(args.flags)
    staged = os.path.join(args.work, name, "staged")
    compiled = os.path.join(args.work, name, "compiled")
    os.makedirs(staged, exist_ok=True)
    os.makedirs(compiled, exist_ok=True)
    path = lambda d, level: os.path.join(d, "m.gcpkg" if level == "package" else f"m.{level}.gc")
    commands = {
        "aten": [tool("gc-import"), archive],
        "core": [tool("gc-opt"), path(staged, "aten")] + flags,
        "loops": [tool("gc-lower"), path(staged, "core")],
        "kernels": [tool("gc-codegen"), path(staged, "loops")],
        "package": [tool("gc-package"), path(staged, "kernels")],
    }
    made = []
    failed = None
    for level in LEVELS:
        status, why = run(commands[level] + ["-o", path(staged, level)])
        if status:
            failed = f"{level}: {why}"
            break
        made.append(level)
    status, why = run([tool("gc-compile"), archive, "--emit-stage", compiled,
                       "-o", path(compiled, "package")] + flags)
    if failed and not status:
        return f"{name}: the stages fail ({failed}) but gc-compile does not"
    if not failed and status:
        return f"{name}: gc-compile fails ({why}) but the stages do not"
    # In a directory of its own, so that the constants it names are m.core.gc.weights.
    loops = path(os.path.join(args.work, name, "to-loops"), "loops")
    os.makedirs(os.path.dirname(loops), exist_ok=True)
    status, why = run([tool("gc-compile"), archive, "--compile-to=loops", "-o", loops] + flags)
    if "loops" in made and status:
        return f"{name}: gc-compile --compile-to=loops fails ({why})"
    # gc-compile --compile-to writes the constants --freeze folded beside its
    # output, under the output's name, where the stages name them after core.
    folded = os.path.exists(path(staged, "core") + ".weights")
    if "loops" in made and not folded and not filecmp.cmp(path(staged, "loops"), loops,
                                                          shallow=False):
        return f"{name}: loops differ (gc-compile --compile-to=loops)"
    for level in made:
        files = [path(staged, level)]
        if level == "core" and os.path.exists(files[0] + ".weights"):
            files.append(files[0] + ".weights")
        for f in files:
            other = os.path.join(compiled, os.path.basename(f))
            if not os.path.exists(other) or not filecmp.cmp(f, other, shallow=False):
                return f"{name}: {os.path.basename(f)} differs"
    return None if not failed else f"{name}: same up to {made[-1] if made else 'nothing'}; " \
                                   f"both fail at {failed}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("archives", nargs="+")
    ap.add_argument("--device", required=True, choices=["cpu", "cuda"])
    ap.add_argument("--bin", help="directory holding the gc tools")
    ap.add_argument("--work", default="check-stages", help="where the files go")
    ap.add_argument("--flags", default="", help="more flags for gc-opt and gc-compile")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--shard", default="1/1", help="K/N: every Nth archive from the Kth")
    args = ap.parse_args()
    k, n = (int(x) for x in args.shard.split("/"))
    args.archives = args.archives[k - 1::n]
    # Names from the path below the common directory: core_aten/mlp/model.pt2
    # is core_aten-mlp, dropout/eval.pt2 is dropout-eval.
    root = os.path.commonpath([os.path.dirname(os.path.abspath(a)) for a in args.archives])
    names = []
    for a in args.archives:
        name = os.path.relpath(os.path.abspath(a), root)[:-len(".pt2")]
        names.append(name[:-len("/model")] if name.endswith("/model") else name)
    names = [n.replace(os.sep, "-") for n in names]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda a: check(a[0], a[1], args), zip(args.archives, names)))
    differ = 0
    for name, r in zip(names, results):
        if r is None:
            print(f"{name}: same")
        elif "both fail" in r:
            print(r)
        else:
            print(f"DIFFER {r}")
            differ += 1
    print(f"{len(names) - differ} of {len(names)} archives give the same bytes ({args.device})")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
