#!/usr/bin/env python3
"""Compiles the corpus and real models for a CUDA GPU here, then checks and
times them on a machine with one (docs/gpu.md, "Checking on a GPU").

usage: gpu-models.py prepare --build BUILD --out DIR [--models M ...] [--gpu-arch A] [--flag F ...]
       gpu-models.py check --out DIR [--models M ...] [--realmodels RDIR]
       gpu-models.py bench --out DIR [--models M ...] [--realmodels RDIR] [--runs N]
       gpu-models.py kernels --out DIR [--models M ...] [--realmodels RDIR] [--runs N]
       gpu-models.py ab --out DIR --ab-flag=F [--models M ...] [--repeats N] [--runs N]

prepare (on the build machine, no GPU needed): compiles every model with
gc-compile --device cuda into DIR/<model>/model.gcpkg (training models with
--train --grad-inputs; every model with --weights=external, so that the
packages stay small), timing each compile
with an empty cache, and writes DIR/manifest.json. Copy DIR, with bin/gcrt-run
and lib/libgcrt*, to the GPU machine (the repository's test/Models/Inputs
travels with the checkout).

check (on the GPU machine, numpy only): runs every package with gcrt-run and
compares with PyTorch's outputs (rtol/atol 1e-3; the bfloat16 models at the
tolerances of their CPU tests, test/Models/real-<model>.test), and for
training models the backward graph's gradients with the corpus's grad.*.npy.
The real models' archives are rebuilt first with weightgen.py (the bfloat16
ones with weightgen_bf16.py) into RDIR (default /tmp/gc-realmodels). Prints one line per model and a summary; exits 1 on a
mismatch.

bench (on the GPU machine, with torch): per model, PyTorch eager and
torch.compile in each of --torch-modes (default, reduce-overhead,
max-autotune; TF32 off) on the GPU (every compile made first, --jobs
processes at once, whose cold compile times the table gives; then each
mode compiles again from Inductor's cache and is timed alone), and gc's package through gcrt-run
(host arrays, so copies included) and through gcrt_run_device on tensors
already on the GPU (libgcrt through ctypes, as PyTorch's columns are timed),
in one run on the same GPU: latency median and p90, torch.compile's compile
time and gc's (from prepare). Then the device-to-device copy bandwidth and gc's
elementwise and row-reduction kernels against it, and, for models whose
extern steps are all matrix products, the GPU time of gc's product kernels
against cuBLAS's on the same shapes (torch.mm/bmm), both from CUPTI through
torch.profiler. Prints Markdown tables.

ab (on the GPU machine, numpy only): gc alone with and without the gcrt-run
flags of --ab-flag (--no-early-launch, say), alternated --repeats times per
model, inputs and outputs in GPU memory; one table of medians.

kernels (on the GPU machine, with torch): per model, gc's GPU kernels (its
own and the libraries') by GPU time per run, from CUPTI.

--zoo ZOODIR adds utils/zoo's models, named zoo.NAME (its export.py's
folder, at the same absolute path on both machines; `--models zoo-gpu-set`
names its GPU set),
compared at the zoo's tolerance (atol 1e-3 max(1, max |output|)), its bfloat16
exports (export.py --dtype bfloat16, zoo.NAME_bf16, `zoo-gpu-set-bf16`) at
rtol 1.6e-2 and atol 1.6e-2 max(1, max |output|); where they run,
--zoo-skeletons SKELDIR rebuilds the archives first.
"""
import argparse
import contextlib
import ctypes
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from gpumodule import gpu_module

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
INPUTS = os.path.join(ROOT, "test", "Models", "Inputs")
REAL = ["resnet50", "bert_base", "llama_50m", "resnet50_bf16", "bert_base_bf16"]
CORPUS = ["convnet", "convnet_train", "gpt2_tiny", "gru", "lstm", "mlp", "mlp_dynamic",
          "mobilenet_v3_small", "rnn", "sdpa_attention", "tinylm", "transformer_encoder"]
BANDWIDTH = ["pointwise", "rowsum"]
TOL = "1e-3"


ZOO = "zoo."
# A bfloat16 zoo model (export.py --dtype bfloat16, named NAME_bf16) against
# PyTorch's bfloat16 CPU run: a bfloat16 output's own rounding is 2^-8
# relative, and the two runs round their intermediates at different places.
ZOO_BF16_RTOL = 1.6e-2


def is_zoo(name):
    """A model of the zoo's folder (--zoo), named zoo.NAME (the corpus and
    the real models have names of their own): utils/zoo's export, rebuilt
    from its skeleton where the packages run (--zoo-skeletons)."""
    return name.startswith(ZOO)


def model_dir(name):
    if is_zoo(name):
        if not OPTS.zoo:
            sys.exit("%s: a zoo model needs --zoo" % name)
        return os.path.join(OPTS.zoo, name[len(ZOO):])
    if name in REAL:
        return os.path.join(INPUTS, "realmodels", name)
    if name in BANDWIDTH:
        return os.path.join(INPUTS, "gpu_bandwidth", name)
    return os.path.join(INPUTS, name)


def archive(name, building=False):
    """The model's exported program: the real models' as the build made
    them (building) or as regen_real made them again where they run."""
    if name in REAL:
        return os.path.join(OPTS.build if building else OPTS.realmodels, *(
            ["test", "realmodels"] if building else []), name, "model.pt2")
    return os.path.join(model_dir(name), "model.pt2")


def npy_floats(path):
    """A .npy file's values as float64 numpy; bfloat16 ('|V2', its bits)
    widened to float32 first."""
    import numpy as np
    a = np.load(path)
    if a.dtype == np.dtype("V2"):
        a = (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float64)


def tolerances(name):
    """(rtol, atol) for --expect: 1e-3, or for a bfloat16 model those its
    CPU test (test/Models/real-<model>.test) uses, the one place they are set;
    a zoo model's atol grows with its outputs' magnitude as utils/zoo/run.py
    says (1e-3 max(1, max |output|))."""
    if is_zoo(name):
        rtol = ZOO_BF16_RTOL if name.endswith("_bf16") else float(TOL)
        outs = [npy_floats(p) for p in numbered(model_dir(name), "out")]
        top = max([1.0] + [float(abs(o).max()) for o in outs if o.size])
        return "%g" % rtol, "%.6g" % (rtol * top)
    if not name.endswith("_bf16"):
        return TOL, TOL
    with open(os.path.join(ROOT, "test", "Models", "real-%s.test" % name)) as f:
        m = re.search(r"--rtol (\S+) --atol (\S+)", f.read())
    if not m:
        sys.exit("no --rtol/--atol in test/Models/real-%s.test" % name)
    return m.group(1), m.group(2)


def numbered(d, prefix):
    files = []
    while os.path.exists(os.path.join(d, "%s%d.npy" % (prefix, len(files)))):
        files.append(os.path.join(d, "%s%d.npy" % (prefix, len(files))))
    return files


def is_training(name):
    return bool(numbered(model_dir(name), "tangent"))


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


# --- prepare ---------------------------------------------------------------

def prepare(opts):
    os.makedirs(opts.out, exist_ok=True)
    # Another prepare's models (other flags) stay in the manifest.
    path = os.path.join(opts.out, "manifest.json")
    manifest = json.load(open(path)) if os.path.exists(path) else {}
    tools = os.path.join(opts.build, "bin")
    for name in opts.models:
        if is_zoo(name) and not json.load(open(os.path.join(model_dir(name), "export.json")))["exported"]:
            manifest[name] = {"error": "torch.export failed (utils/zoo)", "train": False}
            continue
        pkg_dir = os.path.join(opts.out, name)
        os.makedirs(pkg_dir, exist_ok=True)
        pkg = os.path.join(pkg_dir, "model.gcpkg")
        flags = ["--device", opts.device, "--gpu-arch", opts.gpu_arch, "--no-cache", *opts.flag]
        if is_training(name):
            flags += ["--train", "--grad-inputs"]
        # Packages name their archives rather than copy the weights, so that
        # what travels to the GPU machine stays small (the corpus archives
        # travel with the checkout; the real ones are rebuilt there).
        flags += ["--weights=external"]
        start = time.perf_counter()
        proc = run([os.path.join(tools, "gc-compile"), archive(name, True), *flags, "-o", pkg])
        seconds = time.perf_counter() - start
        entry = {"package": os.path.relpath(pkg, opts.out), "train": is_training(name),
                 "compile_s": round(seconds, 3), "flags": flags}
        if proc.returncode != 0:
            entry["error"] = proc.stderr.strip()
        elif not is_training(name) and name not in BANDWIDTH:
            text = run([os.path.join(tools, "gc-compile"), archive(name, True), *flags, "--compile-to",
                        "kernels", "--emit", "text", "-o", "-"]).stdout
            entry["gemms"] = gemm_steps(text)
            entry["externs"] = len(re.findall(r"\{kind=extern, name=", text))
        manifest[name] = entry
        print("%-22s %s %.2f s" % (name, "FAILED: " + entry["error"] if "error" in entry
                                   else "compiled", seconds))
    with open(os.path.join(opts.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


GEMM_STEP = re.compile(r'\{kind=extern, name="([^"]+)", op=aten\.(mm|bmm)\.default.*?'
                       r'inputs=\[(.*?)\], outputs=', re.S)
OPERAND = re.compile(r'type=([a-z0-9]+)\[([0-9, ]*)\](?:\{strides=\[([0-9, ]*)\]\})?')
DTYPE_NAMES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}


def gemm_steps(kernels_text):
    """The matrix products of a kernels-level graph (text form): per extern
    step, its op and each operand's dtype, sizes and strides (row-major
    where the text gives none), for timing cuBLAS on the same shapes."""
    steps = []
    for name, op, inputs in GEMM_STEP.findall(kernels_text):
        operands = []
        for dtype, sizes, strides in OPERAND.findall(inputs):
            sizes = [int(x) for x in sizes.split(",")]
            if strides:
                strides = [int(x) for x in strides.split(",")]
            else:
                strides, inner = [], 1
                for n in reversed(sizes):
                    strides.insert(0, inner)
                    inner *= n
            operands.append({"dtype": DTYPE_NAMES.get(dtype, dtype), "sizes": sizes,
                             "strides": strides})
        # A product with a symbolic size has no one shape to time.
        if len(operands) >= 2:
            steps.append({"name": name, "op": op, "operands": operands})
    return steps


def copy_runtime(opts):
    """gcrt-run and libgcrt, stripped, into OUT/bin, with the libraries they
    need that a machine without gc's build dependencies lacks (oneDNN, xz-
    compressed: unpack with `xz -d OUT/bin/*.xz`)."""
    os.makedirs(opts.bin, exist_ok=True)
    runtime = [os.path.join(opts.build, "bin", "gcrt-run"),
               os.path.realpath(os.path.join(opts.build, "lib", "libgcrt.so")),
               os.path.realpath(os.path.join(opts.build, "lib", "libgcrt_fallback.so"))]
    for path in runtime:
        dst = os.path.join(opts.bin, os.path.basename(path))
        subprocess.run(["strip", "-o", dst, path], check=True)
    system = ("libc.so", "libm.so", "libstdc++.so", "libgcc_s.so", "ld-linux", "linux-vdso",
              "libgcrt")
    ldd = run(["ldd", *runtime[1:]]).stdout
    for name, path in re.findall(r"^\s*(\S+) => (\S+)", ldd, re.M):
        if name.startswith(system):
            continue
        dst = os.path.join(opts.bin, name)
        if os.path.getsize(path) > 4 << 20:
            with open(dst + ".xz", "wb") as f:
                subprocess.run(["xz", "-T2", "-c", path], stdout=f, check=True)
        else:
            shutil.copy2(path, dst)


# --- check -----------------------------------------------------------------

def gcrt(opts):
    return os.path.join(opts.bin, "gcrt-run")


def regen(opts, names):
    """The real models' archives, rebuilt from their recipes where missing,
    and the zoo's from its skeletons."""
    regen_zoo(opts, names)
    missing = [n for n in names if n in REAL and
               not os.path.exists(os.path.join(opts.realmodels, n, "model.pt2"))]
    for generator in ("weightgen.py", "weightgen_bf16.py"):
        these = [n for n in missing if n.endswith("_bf16") == (generator == "weightgen_bf16.py")]
        if not these:
            continue
        proc = run([sys.executable, os.path.join(INPUTS, "realmodels", generator), "regen",
                    "--to", opts.realmodels, *[model_dir(n) for n in these]])
        if proc.returncode != 0:
            sys.exit(generator + " failed:\n" + proc.stdout + proc.stderr)


def zoo_run():
    """utils/zoo/run.py as a module: its GPU set and its rebuild."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("zoo_run", os.path.join(ROOT, "utils", "zoo",
                                                                          "run.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def regen_zoo(opts, names):
    """The zoo's archives, rebuilt from their skeletons (--zoo-skeletons)
    at the path the packages name."""
    if opts.zoo_skeletons:
        zoo_run().rebuild(opts.zoo_skeletons, opts.zoo, [n[len(ZOO):] for n in names if is_zoo(n)])


def weights_flags(opts, name):
    if name in REAL:
        return ["--weights-archive", archive(name)]
    return []


def errors_of(text):
    """(passed, worst relative error) from gcrt-run's --expect lines."""
    lines = re.findall(r"^(\S+): max abs error (\S+), max rel error (\S+): (pass|FAIL)$", text,
                       re.M)
    return lines and all(l[3] == "pass" for l in lines), lines


def compare(got, want):
    import numpy as np
    a, b = np.load(got).astype(np.float64), np.load(want).astype(np.float64)
    if a.shape != b.shape:
        return False, "shape %s, want %s" % (a.shape, b.shape)
    ok = bool(np.all(np.abs(a - b) <= float(TOL) + float(TOL) * np.abs(b)))
    return ok, "max abs error %.3g" % (float(np.max(np.abs(a - b))) if a.size else 0.0)


def check_model(opts, name, entry, work):
    pkg = os.path.join(opts.out, entry["package"])
    src = model_dir(name)
    ins, outs = numbered(src, "in"), numbered(src, "out")
    rtol, atol = tolerances(name)
    expect = ["--expect", *outs, "--rtol", rtol, "--atol", atol]
    graph = ["--graph", "forward"] if entry["train"] else []
    fw = os.path.join(work, "fw")
    os.makedirs(fw, exist_ok=True)
    proc = run([gcrt(opts), pkg, *graph, *weights_flags(opts, name), *ins, "-o", fw, *expect])
    if proc.returncode != 0:
        return False, (proc.stdout + proc.stderr).strip().splitlines()[-1:]
    ok, lines = errors_of(proc.stdout)
    notes = ["%s %s" % (l[0], l[1]) for l in lines]
    if not entry["train"]:
        return ok, notes
    # The backward graph: the saved values, then the tangents.
    user_inputs = re.findall(r"^input \d+: (\S+) \(user_input", proc.stdout, re.M)
    bw = os.path.join(work, "bw")
    os.makedirs(bw, exist_ok=True)
    proc = run([gcrt(opts), pkg, "--graph", "backward", *numbered(fw, "saved"),
                *numbered(src, "tangent"), "-o", bw])
    if proc.returncode != 0:
        return False, (proc.stdout + proc.stderr).strip().splitlines()[-1:]
    wants = {os.path.basename(p)[len("grad.param."):-4]: p
             for p in glob.glob(os.path.join(src, "grad.param.*.npy"))}
    for i, p in enumerate(numbered(src, "grad.in")):
        wants[user_inputs[i]] = p
    for target, want in sorted(wants.items()):
        got = os.path.join(bw, "grad.%s.npy" % target)
        if not os.path.exists(got):
            ok = False
            notes.append("grad %s missing" % target)
            continue
        good, text = compare(got, want)
        ok = ok and good
        if not good:
            notes.append("grad %s %s" % (target, text))
    notes.append("%d gradients" % len(wants))
    return ok, notes


def check(opts):
    manifest = json.load(open(os.path.join(opts.out, "manifest.json")))
    names = [n for n in opts.models if n in manifest and n not in BANDWIDTH]
    regen(opts, names)
    failed = []
    for name in names:
        entry = manifest[name]
        if "error" in entry:
            ok, notes = False, ["compile: " + entry["error"].splitlines()[-1]]
        else:
            with tempfile.TemporaryDirectory() as work:
                ok, notes = check_model(opts, name, entry, work)
        print("%-22s %s  %s" % (name, "pass" if ok else "FAIL", "; ".join(notes)), flush=True)
        if not ok:
            failed.append(name)
    print("%d passed, %d failed" % (len(names) - len(failed), len(failed)))
    return 1 if failed else 0


# --- ab ---------------------------------------------------------------------

def ab(opts):
    """gc alone, with and without the gcrt-run flags of --ab-flag, or --out's
    packages beside those of each --ab-out folder (another compiler's
    `prepare`, same model names; --ab-flag applies to them), inputs and
    outputs in GPU memory (--device-io), alternated --repeats times on each
    model so that the GPU's drift falls on all columns; one Markdown table
    of the medians' range and each column's ratio to the first."""
    def packages(out):
        return out, json.load(open(os.path.join(out, "manifest.json")))
    base = packages(opts.out)
    flags = " ".join(opts.ab_flag)
    if opts.ab_out:
        columns = [("gc", base, [])] + [(("%s %s" % (os.path.basename(d.rstrip("/")), flags)).strip(), packages(d),
                                         opts.ab_flag) for d in opts.ab_out]
    else:
        columns = [("gc", base, []), ("gc %s" % flags, base, opts.ab_flag)]
    usable = lambda m, n: n in m and "error" not in m[n] and not m[n]["train"]
    names = [n for n in opts.models if n not in BANDWIDTH and all(usable(m, n) for _, (_, m), _ in columns)]
    regen(opts, names)
    print("| model | %s |" % " | ".join("%s (ms) | ratio" % title if k else "%s (ms)" % title
                                         for k, (title, _, _) in enumerate(columns)))
    print("| --- |" + " ---: |" * (2 * len(columns) - 1))
    span = lambda xs: "%.4g-%.4g" % (min(xs), max(xs)) if len(xs) > 1 else "%.4g" % xs[0]
    for name in names:
        times = [[] for _ in columns]
        try:
            with tempfile.TemporaryDirectory() as work:
                for _ in range(opts.repeats):
                    for k, (_, (out, manifest), extra) in enumerate(columns):
                        times[k].append(gc_times(argparse.Namespace(**{**vars(opts), "out": out}), name,
                                                 manifest[name], opts.runs, work,
                                                 flags=["--device-io", *extra])[0])
        except RuntimeError as e:
            print("| %s | %s |" % (name, e), flush=True)
            continue
        cells = [span(times[0])] + ["%s | %.3f" % (span(t), min(t) / min(times[0])) for t in times[1:]]
        print("| %s | %s |" % (name, " | ".join(cells)), flush=True)
    return 0


# --- bench -----------------------------------------------------------------

def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def npy_tensor(path):
    """A .npy file as a tensor; bfloat16 arrays are numpy's '|V2' (their bits)."""
    import numpy as np
    import torch
    a = np.load(path)
    if a.dtype == np.dtype("V2"):
        return torch.from_numpy(a.view(np.uint16).copy()).view(torch.bfloat16)
    return torch.from_numpy(a)


def cuda_event_ms(fn, runs):
    """The time of each of `runs` calls of fn (ms), each between two CUDA
    events on the current stream."""
    import torch
    ms = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ms.append(a.elapsed_time(b))
    return ms


def torch_times(name, runs, mode):
    """(median ms, p90 ms, compile s) of PyTorch on the GPU, or an error.
    PyTorch runs in full float32, as gc does by default: its default lets
    cuDNN's convolutions use TF32, which gc allows only with --allow-tf32."""
    import torch
    call, compile_s = torch_runner(name, mode)
    with torch.no_grad():
        for _ in range(5):
            call()
        torch.cuda.synchronize()
        ms = cuda_event_ms(call, runs)
    return statistics.median(ms), percentile(ms, 0.9), compile_s


def torch_runner(name, mode):
    """(a function that runs the model once in PyTorch on the GPU, compile
    s): eager or torch.compile'd in `mode`, TF32 off; the compile (None when
    eager) is the first call's time, made here."""
    import torch
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    module = gpu_module(torch.export.load(archive(name)))
    ins = [npy_tensor(p).cuda() for p in numbered(model_dir(name), "in")]
    if name in BANDWIDTH:
        shape = json.load(open(os.path.join(INPUTS, "gpu_bandwidth", "provenance.json")))
        ins = [torch.randn(*shape["models"][name]["input"], device="cuda")]

    def call():
        with torch.no_grad():
            return module(*ins)
    if mode == "eager":
        return call, None
    module = torch.compile(module, mode=mode)
    torch.cuda.synchronize()
    start = time.perf_counter()
    call()
    torch.cuda.synchronize()
    return call, time.perf_counter() - start


def torch_compile_worker(opts):
    """One model in one torch.compile mode, compiled and run once: the cold
    compile, which fills Inductor's cache for the timing process. Prints
    {"compile_s": S} or {"error": TEXT} as JSON."""
    try:
        _, _, seconds = torch_times(opts.models[0], 1, opts.torch_modes[0])
        print(json.dumps({"compile_s": seconds}))
    except Exception as e:  # reported in the table, as bench's own errors are
        print(json.dumps({"error": (str(e).splitlines() or [type(e).__name__])[0][:200]}))
    return 0


def cold_compiles(opts, names, modes):
    """{(model, mode): {"compile_s": S} or {"error": TEXT}}: every
    torch.compile of the run made first, --jobs processes at once, so that
    the timings after them compile from Inductor's cache (one for every
    process: TORCHINDUCTOR_CACHE_DIR, or its default) and run one at a time
    on an otherwise idle GPU."""
    from concurrent.futures import ThreadPoolExecutor

    def compile_one(job):
        name, mode = job
        cmd = [sys.executable, os.path.abspath(__file__), "torch-compile", "--out", opts.out,
               "--models", name, "--torch-modes", mode, "--realmodels", opts.realmodels,
               "--build", opts.build, *(["--zoo", opts.zoo] if opts.zoo else [])]
        try:
            proc = run(cmd, timeout=opts.compile_timeout)
        except subprocess.TimeoutExpired:
            return job, {"error": "did not compile in %d s" % opts.compile_timeout}
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            return job, {"error": ((proc.stderr.strip().splitlines() or ["no output"])[-1])[:200]}
        return job, json.loads(lines[-1])

    jobs = [(n, m) for n in names for m in modes if m != "eager"]
    with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        return dict(pool.map(compile_one, jobs))


def gc_times(opts, name, entry, runs, work, profile=False, flags=()):
    """gcrt-run --bench: (median, p90) of whole runs (host copies included)
    and gcrt-run's output. With `profile`, the output has each step's time
    (CUDA events; the steps are then launched one by one, not replayed as a
    CUDA graph, so the whole runs are slower: use it for kernel times only)."""
    pkg = os.path.join(opts.out, entry["package"])
    graph = ["--graph", "forward"] if entry["train"] else []
    ins = numbered(model_dir(name), "in")
    if name in BANDWIDTH:
        import numpy as np
        shape = json.load(open(os.path.join(INPUTS, "gpu_bandwidth", "provenance.json")))
        path = os.path.join(work, "in0.npy")
        np.save(path, np.random.default_rng(0).standard_normal(
            shape["models"][name]["input"], dtype=np.float32))
        ins = [path]
    proc = run([gcrt(opts), pkg, *graph, *weights_flags(opts, name), *ins, "--bench",
                str(runs), *(["--profile"] if profile else []), *flags])
    if proc.returncode != 0:
        raise RuntimeError((proc.stdout + proc.stderr).strip().splitlines()[-1])
    m = re.search(r"median ([0-9.e+-]+) ms, p90 ([0-9.e+-]+) ms", proc.stdout)
    return float(m.group(1)), float(m.group(2)), proc.stdout


class GcrtTensor(ctypes.Structure):
    """gcrt.h's gcrt_tensor."""
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_size_t),
                ("sizes", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64))]


class GcrtTensorInfo(ctypes.Structure):
    """gcrt.h's gcrt_tensor_info."""
    _fields_ = [("name", ctypes.c_char_p), ("role", ctypes.c_char_p), ("target", ctypes.c_char_p),
                ("dtype", ctypes.c_int), ("rank", ctypes.c_size_t),
                ("sizes", ctypes.POINTER(ctypes.c_int64)),
                ("min_sizes", ctypes.POINTER(ctypes.c_int64)),
                ("max_sizes", ctypes.POINTER(ctypes.c_int64))]


# gcrt_dtype values (gcrt.h), in order, by torch dtype name.
GCRT_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
               "float32", "float64"]


@contextlib.contextmanager
def device_runner(opts, name, entry):
    """Yields a function that runs the package once through gcrt_run_device
    on inputs and outputs that already live on the GPU (torch allocates
    them), through libgcrt with ctypes: the same footing as the PyTorch
    columns, without host copies. Each call returns once the outputs are
    complete."""
    import torch
    lib = ctypes.CDLL(os.path.join(opts.bin, "libgcrt.so"))
    lib.gcrt_last_error.restype = ctypes.c_char_p
    vp = ctypes.c_void_p

    def ok(status):
        if status != 0:
            raise RuntimeError(lib.gcrt_last_error().decode())

    pkg, ctx = vp(), vp()
    path = os.path.join(opts.out, entry["package"]).encode()
    weights = weights_flags(opts, name)
    ok(lib.gcrt_package_load_file_with_weights(path, weights[1].encode() if weights else None,
                                               ctypes.byref(pkg)))
    try:
        # A training package's forward graph (it also returns what the
        # backward saves), else the one graph.
        lib.gcrt_graph_count.restype = ctypes.c_size_t
        lib.gcrt_graph_name.restype = ctypes.c_char_p
        graphs = [lib.gcrt_graph_name(pkg, ctypes.c_size_t(g)).decode()
                  for g in range(lib.gcrt_graph_count(pkg))]
        graph = graphs.index("forward") if "forward" in graphs else 0
        ok(lib.gcrt_context_create(pkg, ctypes.c_size_t(graph), 0, ctypes.byref(ctx)))
        ins = [npy_tensor(p).cuda().contiguous() for p in numbered(model_dir(name), "in")]
        keep = []

        def described(t):
            sizes = (ctypes.c_int64 * max(1, t.dim()))(*t.shape)
            keep.append(sizes)
            return GcrtTensor(t.data_ptr(), GCRT_DTYPES.index(str(t.dtype).replace("torch.", "")),
                              t.dim(), sizes, None)

        cpu_ins = [t.cpu() for t in ins]  # only their sizes are read
        host_in = (GcrtTensor * len(ins))(*[described(t) for t in cpu_ins])
        outs = []
        lib.gcrt_output_count.restype = ctypes.c_size_t
        for i in range(lib.gcrt_output_count(pkg, ctypes.c_size_t(graph))):
            sizes, rank = (ctypes.c_int64 * 8)(), ctypes.c_size_t()
            ok(lib.gcrt_output_sizes(ctx, host_in, len(ins), ctypes.c_size_t(i), sizes, 8,
                                     ctypes.byref(rank)))
            info = GcrtTensorInfo()
            ok(lib.gcrt_output_info(pkg, ctypes.c_size_t(graph), ctypes.c_size_t(i),
                                    ctypes.byref(info)))
            outs.append(torch.empty(list(sizes[:rank.value]),
                                    dtype=getattr(torch, GCRT_DTYPES[info.dtype]), device="cuda"))
        dev_in = (GcrtTensor * len(ins))(*[described(t) for t in ins])
        dev_out = (GcrtTensor * len(outs))(*[described(t) for t in outs])
        torch.cuda.synchronize()
        yield lambda: ok(lib.gcrt_run_device(ctx, dev_in, len(ins), dev_out, len(outs)))
    finally:
        if ctx:
            lib.gcrt_context_free(ctx)
        lib.gcrt_package_free(pkg)


def gc_device_times(opts, name, entry, runs):
    """(median, p90) ms of gcrt_run_device (device_runner): the wall time
    of each call is the run's time."""
    with device_runner(opts, name, entry) as run_once:
        for _ in range(5):
            run_once()
        ms = []
        for _ in range(runs):
            start = time.perf_counter()
            run_once()
            ms.append((time.perf_counter() - start) * 1e3)
        return statistics.median(ms), percentile(ms, 0.9)


def bandwidth_table(opts, manifest, runs):
    import torch
    n = 1 << 28  # 1 GiB of float32
    x = torch.empty(n, dtype=torch.float32, device="cuda").normal_()
    y = torch.empty_like(x)
    for _ in range(3):
        y.copy_(x)
    torch.cuda.synchronize()
    ms = cuda_event_ms(lambda: y.copy_(x), 20)
    copy_gbs = 2 * 4 * n / (statistics.median(ms) * 1e-3) / 1e9
    del x, y
    torch.cuda.empty_cache()
    print("\n| kernel | bytes moved | ms (copy: median; gc: fastest run) | GB/s "
          "| share of copy bandwidth |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print("| device-to-device copy (torch, 1 GiB) | 2 GiB | %.3f | %.0f | 100%% |"
          % (statistics.median(ms), copy_gbs))
    moved = {"pointwise": 2 * 8192 * 8192 * 4, "rowsum": 16384 * 4096 * 4 + 16384 * 4}
    for name in BANDWIDTH:
        if name not in manifest or "error" in manifest[name]:
            print("| %s | | not compiled | | |" % name)
            continue
        with tempfile.TemporaryDirectory() as work:
            try:
                _, _, text = gc_times(opts, name, manifest[name], runs, work, profile=True)
            except RuntimeError as e:
                print("| %s | | %s | | |" % (name, e))
                continue
        kernel_ms = kernel_median(text)
        gbs = moved[name] / (kernel_ms * 1e-3) / 1e9
        print("| gc %s | %.0f MiB | %.3f | %.0f | %.0f%% |"
              % (name, moved[name] / 2**20, kernel_ms, gbs, 100 * gbs / copy_gbs))


def kernel_median(profile_text):
    """The fastest kernel step's fastest run from gcrt-run --profile (ms):
    its lines read 'INDEX kernel NAME MEAN_US MIN_US SHARE%'."""
    best = None
    for m in re.finditer(r"^\s*\d+ kernel\s+\S+\s+([0-9.]+)\s+([0-9.]+)", profile_text, re.M):
        ms = float(m.group(2)) / 1000
        best = ms if best is None else min(best, ms)
    if best is None:
        raise RuntimeError("no kernel step in the profile:\n" + profile_text)
    return best


GC_KERNEL = re.compile(r"_k\d+$")


def kernel_times(call, runs):
    """{kernel name: (launches, GPU us)} per call of `call()`, as CUPTI
    records them through torch.profiler, whoever launched them (memory
    copies and sets left out)."""
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(runs):
            call()
        torch.cuda.synchronize()
    out = {}
    for e in prof.key_averages():
        if e.device_type != DeviceType.CUDA:
            continue
        if "memcpy" in e.key.lower() or "memset" in e.key.lower():
            continue
        us = getattr(e, "device_time_total", None) or e.cuda_time_total
        out[e.key] = (e.count / runs, us / runs)
    return out


def library_kernel_us(call, runs):
    """GPU time (us) per call of `call()` spent in kernels that are not
    gc's own (named GRAPH_kN): cuBLAS's, cuBLASLt's and cuDNN's. Kernel
    durations leave out launch gaps, so gc's products and torch's are timed
    alike."""
    return sum(us for name, (_, us) in kernel_times(call, runs).items()
               if not GC_KERNEL.search(name))


def kernels(opts):
    """Per model, gc's kernels by GPU time per run (device I/O)."""
    manifest = json.load(open(os.path.join(opts.out, "manifest.json")))
    names = [n for n in opts.models if n in manifest and "error" not in manifest[n]]
    regen(opts, names)
    def table(title, times):
        total = sum(us for _, us in times.values())
        print("\n%s: %d kernels a run, %.1f us of GPU time" %
              (title, round(sum(n for n, _ in times.values())), total))
        print("| kernel | launches / run | us / run | share |")
        print("| --- | ---: | ---: | ---: |")
        for key, (n, us) in sorted(times.items(), key=lambda kv: -kv[1][1])[:25]:
            print("| %s | %.0f | %.1f | %.1f%% |" % (key[:90], n, us, 100 * us / total))

    compiled = [m for m in opts.torch_modes if m != "eager"] if opts.with_torch else []
    for name in names:
        with device_runner(opts, name, manifest[name]) as run_once:
            table(name, kernel_times(run_once, opts.runs))
        for mode in compiled[:1]:
            try:
                table("%s, torch.compile %s" % (name, mode),
                      kernel_times(torch_runner(name, mode)[0], opts.runs))
            except Exception as e:  # as bench reports PyTorch's errors
                print("\n%s, torch.compile %s: error: %s" % (name, mode, str(e).splitlines()[0]))
    return 0


def gemm_table(opts, manifest, names, runs):
    """gc's matrix products against cuBLAS on the same shapes, for models
    whose every extern step is a product: the GPU time per run of gc's
    library kernels (its products, with their fused bias and activation)
    beside torch.mm/bmm's kernels on the same operands, both from CUPTI."""
    import torch
    print("\n| model | matrix products | gc's product kernels us / run "
          "| cuBLAS (torch.mm/bmm) us, same shapes | gc's throughput / cuBLAS's |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name in names:
        entry = manifest[name]
        gemms = entry.get("gemms")
        if not gemms or len(gemms) != entry.get("externs"):
            continue
        try:
            with device_runner(opts, name, entry) as run_once:
                gc_us = library_kernel_us(run_once, runs)
        except RuntimeError as e:
            print("| %s | | %s | | |" % (name, str(e)[:60]))
            continue
        # The first two operands are the product's; any others feed its
        # fused bias or residual add.
        # Random storage viewed with the operand's strides (a broadcast
        # weight has stride 0, which torch cannot fill in place).
        def operand(o):
            span = 1 + sum((n - 1) * st for n, st in zip(o["sizes"], o["strides"]))
            storage = torch.empty(span, dtype=getattr(torch, o["dtype"]), device="cuda").normal_()
            return storage.as_strided(o["sizes"], o["strides"])
        calls = []
        for g in gemms:
            ops = [operand(o) for o in g["operands"][:2]]
            calls.append((torch.mm if g["op"] == "mm" else torch.bmm, ops))
        ref_us = library_kernel_us(lambda: [fn(*ops) for fn, ops in calls], runs)
        del calls
        torch.cuda.empty_cache()
        print("| %s | %d | %.1f | %.1f | %.0f%% |" % (name, len(gemms), gc_us, ref_us,
                                                      100 * ref_us / gc_us), flush=True)


def bench(opts):
    import torch
    manifest = json.load(open(os.path.join(opts.out, "manifest.json")))
    names = [n for n in opts.models if n in manifest and n not in BANDWIDTH]
    regen(opts, names)
    print("GPU: %s" % torch.cuda.get_device_name())
    modes = opts.torch_modes
    cold = cold_compiles(opts, names, modes)
    print("\n| model | %s | gc median / p90 ms | gc --allow-tf32 median / p90 ms "
          "| gc device I/O median / p90 ms | gc device / best torch.compile | gc compile s (2 cores) |"
          % " | ".join(("%s median / p90 ms" % m) if m == "eager" else
                       ("torch.compile %s median / p90 ms (cold compile s)" % m) for m in modes))
    print("| --- |" + " ---: |" * (len(modes) + 5))
    errors = []
    for name in names:
        entry = manifest[name]
        cells = []
        compiled_ms = None
        for mode in modes:
            if "error" in cold.get((name, mode), {}):
                cells.append("error: %s" % cold[name, mode]["error"][:60])
                errors.append("%s, %s: %s" % (name, mode, cold[name, mode]["error"]))
                continue
            try:
                med, p90, _ = torch_times(name, opts.runs, mode)
                comp = cold.get((name, mode), {}).get("compile_s")
                if mode == "eager":
                    cells.append("%.3f / %.3f" % (med, p90))
                else:
                    cells.append("%.3f / %.3f (%.1f)" % (med, p90, comp))
                    compiled_ms = med if compiled_ms is None else min(compiled_ms, med)
            except Exception as e:  # a model torch cannot move to the GPU
                cells.append("error: %s" % str(e).splitlines()[0][:60])
                errors.append("%s, %s: %s" % (name, mode, "\n".join(str(e).splitlines()[:12])))
            torch.cuda.empty_cache()
        if "error" in entry:
            cells += ["not compiled", "", "", "", ""]
        else:
            for flags in ((), ("--allow-tf32",)):
                with tempfile.TemporaryDirectory() as work:
                    try:
                        med, p90, _ = gc_times(opts, name, entry, opts.runs, work, flags=flags)
                        cells.append("%.3f / %.3f" % (med, p90))
                    except RuntimeError as e:
                        cells.append("error: %s" % str(e)[:60])
            try:
                med, p90 = gc_device_times(opts, name, entry, opts.runs)
                cells.append("%.3f / %.3f" % (med, p90))
                gc_ms = med
            except RuntimeError as e:
                # Graphs that keep state, or return views, run with host
                # arrays only: the ratio then takes gcrt-run's time (marked *).
                cells.append("host I/O only: %s" % str(e)[:50])
                gc_ms = None
            host_ms = float(cells[-3].split(" / ")[0]) if cells[-3][:1].isdigit() else None
            if compiled_ms and (gc_ms or host_ms):
                cells.append("%.2f" % (gc_ms / compiled_ms) if gc_ms
                             else "%.2f*" % (host_ms / compiled_ms))
            else:
                cells.append("")
            torch.cuda.empty_cache()
            cells.append("%.2f" % entry["compile_s"])
        print("| %s | %s |" % (name, " | ".join(cells)), flush=True)
    bandwidth_table(opts, manifest, opts.runs)
    gemm_table(opts, manifest, names, opts.runs)
    if errors:
        print("\nPyTorch's errors in full:\n" + "\n".join(errors))
    return 0


OPTS = None


def main():
    global OPTS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["prepare", "check", "bench", "kernels", "ab",
                                         "torch-compile"])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--out", required=True)
    parser.add_argument("--bin", default=None, help="where gcrt-run is (default: OUT/bin)")
    parser.add_argument("--models", nargs="+", default=CORPUS + REAL + BANDWIDTH)
    parser.add_argument("--gpu-arch", default="sm_80,sm_90")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                        help="prepare: what to compile for (cpu checks this script itself)")
    parser.add_argument("--flag", action="append", default=[],
                        help="prepare: one more gc-compile flag for every model (repeatable)")
    parser.add_argument("--realmodels", default="/tmp/gc-realmodels")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--torch-modes", nargs="+", default=["eager", "default", "reduce-overhead",
                                                             "max-autotune"],
                        help="bench: PyTorch's columns: eager and torch.compile's modes")
    parser.add_argument("--zoo", help="utils/zoo's export folder (the same absolute path here and "
                        "where the packages run): its models may be named in --models, "
                        "'zoo-gpu-set' naming utils/zoo/run.py's GPU set")
    parser.add_argument("--zoo-skeletons", help="check, bench, kernels: rebuild --zoo's archives "
                        "from these skeletons first (utils/zoo/export.py --skeletons)")
    parser.add_argument("--with-torch", action="store_true",
                        help="kernels: also the kernels of the first torch.compile mode of "
                        "--torch-modes, on the same model")
    parser.add_argument("--compile-timeout", type=int, default=600,
                        help="bench: seconds one cold torch.compile may take")
    parser.add_argument("--jobs", type=int, default=8,
                        help="bench: torch.compile processes compiling at once before the timings")
    parser.add_argument("--ab-flag", action="append", default=[],
                        help="ab: a gcrt-run flag of the second column (repeatable)")
    parser.add_argument("--ab-out", action="append", default=[],
                        help="ab: a column of this folder's packages (another prepare's --out; repeatable)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="ab: runs of each side, alternated")
    opts = OPTS = parser.parse_args()
    for token, suffix in (("zoo-gpu-set", ""), ("zoo-gpu-set-bf16", "_bf16")):
        if token in opts.models:
            at = opts.models.index(token)
            opts.models[at:at + 1] = [ZOO + n + suffix for n in zoo_run().GPU_SET]
    opts.bin = opts.bin or os.path.join(opts.out, "bin")
    if opts.mode == "torch-compile":
        return torch_compile_worker(opts)
    if opts.mode == "prepare":
        prepare(opts)
        copy_runtime(opts)
        return 0
    return {"check": check, "bench": bench, "kernels": kernels, "ab": ab}[opts.mode](opts)


if __name__ == "__main__":
    sys.exit(main())
