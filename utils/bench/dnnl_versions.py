#!/usr/bin/env python3
"""gc's runtime built against Debian 12's oneDNN 2.6 beside the same runtime
built against oneDNN 3.x (GC_DNNL_ROOT), on the same packages and the same
pinned cores: the measurement issue 36 chooses the oneDNN by.

Two steps, so that the packages are made where gc builds and run where the
CPU of interest is (no compiler is needed there):

  dnnl_versions.py prepare --build build --build3 build-dnnl3 --out DIR
                           [--models resnet50 bert_base tv_vit_b_16] [--export-python PY]
      DIR/<model>/: each model's weight recipe (model.pt2.skel.xz,
      manifest.json), inputs and PyTorch's outputs; DIR/<model>.exact.gcpkg
      and .bf16.gcpkg, compiled by --build's gc-compile --freeze
      --weights=external (precision.py prepare --drop-archives), and checked
      byte for byte against --build3's: a package names its oneDNN calls,
      not oneDNN's primitives, so one package serves both runtimes;
      DIR/rt2 and DIR/rt3: each build's runtime (utils/make-deploy.sh),
      its shared libraries xz-compressed (oneDNN's 95 MB become 14 MB).
  dnnl_versions.py run --out DIR [--threads 2 8] [--bench 20]
      unpacks the libraries, rebuilds the archives from their recipes
      (weightgen.py: numpy only), runs each package with each runtime,
      pinned to cores 0..T-1 with T threads, median of `bench` runs after a
      warm-up (gcrt-run --bench), and prints one Markdown table.

Error: as precision.py's, the largest |gc - torch| over the first output
divided by the largest |torch|, with each runtime.
"""
import argparse
import filecmp
import lzma
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import precision  # noqa: E402

RUNTIMES = ("rt2", "rt3")


def prepare(args):
    os.makedirs(args.out, exist_ok=True)
    for model in args.models:
        precision.regen(args.out, model, args.export_python)
        for p in precision.PRECISIONS:
            # Both beside the archive, which each names by a relative path.
            pkg, check = os.path.join(args.out, f"{model}.{p}.gcpkg"), os.path.join(args.out, "check.gcpkg")
            precision.compile_package(args.build, args.out, model, p, pkg)
            precision.compile_package(args.build3, args.out, model, p, check)
            same = filecmp.cmp(pkg, check, shallow=False)
            os.remove(check)
            if not same:
                sys.exit(f"{pkg}: --build and --build3 made different packages; a package must not depend "
                         "on the oneDNN it runs with")
        os.remove(os.path.join(args.out, model, "model.pt2"))
    deploy = os.path.join(HERE, "..", "make-deploy.sh")
    for rt, build in zip(RUNTIMES, (args.build, args.build3)):
        d = os.path.join(args.out, rt)
        shutil.rmtree(d, ignore_errors=True)
        subprocess.run(["sh", deploy, build, d], check=True, stdout=subprocess.DEVNULL)
        for f in sorted(os.listdir(os.path.join(d, "lib"))):
            subprocess.run(["xz", "-T2", "-6", os.path.join(d, "lib", f)], check=True)
    size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(args.out) for f in fs)
    print(f"{args.out}: {size / 2**20:.1f} MiB", file=sys.stderr)


def unpack(out):
    """Decompresses each runtime's libraries once (no xz command needed)."""
    for rt in RUNTIMES:
        lib = os.path.join(out, rt, "lib")
        for f in os.listdir(lib):
            if f.endswith(".xz") and not os.path.exists(os.path.join(lib, f[:-3])):
                with lzma.open(os.path.join(lib, f)) as src, open(os.path.join(lib, f[:-3] + ".tmp"), "wb") as dst:
                    shutil.copyfileobj(src, dst)
                os.replace(os.path.join(lib, f[:-3] + ".tmp"), os.path.join(lib, f[:-3]))


def runtime(out, rt):
    """(gcrt-run, its environment, the oneDNN it loads) for one runtime."""
    lib = os.path.abspath(os.path.join(out, rt, "lib"))
    gcrt_run = os.path.join(out, rt, "bin", "gcrt-run")
    env = dict(os.environ, LD_LIBRARY_PATH=lib)
    env.pop("ONEDNN_VERBOSE", None)
    ldd = subprocess.run(["ldd", gcrt_run], capture_output=True, text=True, env=env).stdout
    dnnl = next((line.split()[2] for line in ldd.splitlines() if "libdnnl" in line), "no libdnnl")
    if not dnnl.startswith(lib):
        sys.exit(f"{gcrt_run} loads {dnnl}, not its own {lib}/libdnnl.so.*")
    return gcrt_run, env, dnnl


def onednn_info(gcrt_run, env, pkg, ins):
    """oneDNN's own lines about its version and the ISA it runs (ONEDNN_VERBOSE)."""
    r = subprocess.run([gcrt_run, pkg, *ins, "--threads", "2"], capture_output=True, text=True,
                       env=dict(env, ONEDNN_VERBOSE="1"))
    return [line for line in r.stdout.splitlines() if ",info," in line and ("oneDNN v" in line or "cpu,runtime" in line
                                                                            or ",isa:" in line)]


def run(args):
    unpack(args.out)
    rts = {rt: runtime(args.out, rt) for rt in RUNTIMES}
    first = f"{args.models[0]}.exact.gcpkg"
    for rt, (gcrt_run, env, dnnl) in rts.items():
        precision.regen(args.out, args.models[0])
        info = onednn_info(gcrt_run, env, os.path.join(args.out, first), precision.inputs(args.out, args.models[0]))
        print(f"{rt}: {dnnl}", *info, sep="\n  ", file=sys.stderr)
    rows = []
    for model in args.models:
        precision.regen(args.out, model)
        ins = precision.inputs(args.out, model)
        want = np.load(os.path.join(args.out, model, "out0.npy"))
        for t in args.threads:
            for p in precision.PRECISIONS:
                pkg = os.path.join(args.out, f"{model}.{p}.gcpkg")
                got = {rt: precision.run_one(gcrt_run, pkg, ins, t, args.bench, env)
                       for rt, (gcrt_run, env, _) in rts.items()}
                ms = {rt: got[rt][0] for rt in RUNTIMES}
                err = {rt: precision.relative_error(got[rt][1], want) for rt in RUNTIMES}
                rows.append(f"| {model} | {t} | {p} | {ms['rt2']:.2f} | {ms['rt3']:.2f} | "
                            f"{ms['rt3'] / ms['rt2']:.2f} | {err['rt2']:.1e} | {err['rt3']:.1e} |")
                print(rows[-1], file=sys.stderr)
    print("| model | threads | precision | gc, oneDNN 2.6 (ms) | gc, oneDNN 3.x (ms) | 3.x / 2.6 "
          "| error 2.6 | error 3.x |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    print("\n".join(rows))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--build", required=True, help="gc built against Debian's oneDNN 2.6")
    p.add_argument("--build3", required=True, help="gc built against oneDNN 3.x (GC_DNNL_ROOT)")
    p.add_argument("--export-python", default=sys.executable,
                   help="the python that exports tv_vit_b_16 (torch and torchvision)")
    r = sub.add_parser("run")
    r.add_argument("--threads", type=int, nargs="+", default=[2, 8])
    r.add_argument("--bench", type=int, default=20)
    for s in (p, r):
        s.add_argument("--out", required=True)
        s.add_argument("--models", nargs="+", default=["resnet50", "bert_base", "tv_vit_b_16"])
    args = ap.parse_args()
    prepare(args) if args.cmd == "prepare" else run(args)


if __name__ == "__main__":
    main()
