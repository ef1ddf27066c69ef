#!/usr/bin/env python3
"""gc beside PyTorch (eager, torch.compile, AOTInductor) and ONNX Runtime on
the same .pt2 archives, the same inputs, the same thread count and the same
pinned cores.

    utils/bench/run.py --build build [--models M ...] [--threads 2] [--cores 0-1]
                       [--repeat 100] [--timeout 600] [--section bench|issue19] [--no-doc]

One command: on first use it makes a virtual environment outside the
checkout (default ~/.cache/gc-bench/venv, --venv or $GC_BENCH_VENV), installs
the PACKAGES below from PyPI into it (ONNX Runtime's pinned), and
re-executes itself with that environment's python. Everything it makes lives
in the cache folder (default ~/.cache/gc-bench, --cache or $GC_BENCH_CACHE):
the exported models (models/<name>/), the rebuilt real models
(realmodels/<name>/) and each run's results (results/). See README.md.
"""
import argparse
import datetime
import fcntl
import json
import os
import platform
import re
import select
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
# pip requirements; ONNX Runtime and the ONNX exporter's packages are pinned to
# the versions the tables were made with.
PACKAGES = ["torch", "torchvision", "transformers", "numpy", "psutil", "onnxruntime==1.32.0", "onnx==1.23.2",
            "onnxscript==0.7.2"]
DEFAULT_CACHE = os.environ.get("GC_BENCH_CACHE", os.path.expanduser("~/.cache/gc-bench"))


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --- the virtual environment ---------------------------------------------------------------

def venv_ready(py):
    if not os.path.exists(py):
        return False
    probe = "import " + ", ".join(p.split("==")[0] for p in PACKAGES)
    return subprocess.run([py, "-c", probe], capture_output=True).returncode == 0


def ensure_venv(venv_dir, cache):
    """Makes the environment (once) and returns its python. A lock file keeps two
    benchmark runs from installing into it at the same time."""
    py = os.path.join(venv_dir, "bin", "python")
    os.makedirs(cache, exist_ok=True)
    with open(os.path.join(cache, "venv.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if venv_ready(py):
            return py
        if not os.path.exists(py):
            log(f"creating the virtual environment {venv_dir}")
            subprocess.run([sys.executable, "-m", "venv", venv_dir], check=True)
        logfile = os.path.join(cache, "pip.log")
        log(f"installing {' '.join(PACKAGES)} from PyPI into it (log: {logfile}); this takes minutes")
        with open(logfile, "a") as f:
            r = subprocess.run([py, "-m", "pip", "install", "-q", *PACKAGES], stdout=f, stderr=subprocess.STDOUT)
        if r.returncode or not venv_ready(py):
            sys.exit(f"bench: installing into {venv_dir} failed; see {logfile}")
    return py


def reexec_in_venv(argv):
    """Parses only --venv/--cache, then runs this script again under the venv's python."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--venv", default=os.environ.get("GC_BENCH_VENV"))
    pre.add_argument("--cache", default=DEFAULT_CACHE)
    a, _ = pre.parse_known_args(argv)
    cache = os.path.abspath(os.path.expanduser(a.cache))
    venv_dir = os.path.abspath(os.path.expanduser(a.venv or os.path.join(cache, "venv")))
    if os.path.realpath(sys.prefix) == os.path.realpath(venv_dir):
        return
    if os.environ.get("GC_BENCH_REEXEC"):
        sys.exit(f"bench: re-executed, but still not running in {venv_dir}")
    py = ensure_venv(venv_dir, cache)
    os.environ["GC_BENCH_REEXEC"] = "1"
    os.execv(py, [py, os.path.abspath(__file__), *argv])


# --- processes -----------------------------------------------------------------------------

class Proc:
    """A finished child process: exit status, output, wall time, max RSS."""

    def __init__(self, rc, out, err, wall, maxrss_mb, timed_out):
        self.rc, self.out, self.err, self.wall = rc, out, err, wall
        self.maxrss_mb, self.timed_out = maxrss_mb, timed_out

    def first_error(self):
        """The first line that looks like an error (else the last line of stderr)."""
        lines = [l.strip() for l in self.err.splitlines() if l.strip()]
        for l in lines:
            if re.search(r"\berror\b", l, re.I) and not l.startswith("W1") and "Warning" not in l:
                return l
        return lines[-1] if lines else f"exit status {self.rc}"


def run(cmd, env=None, timeout=None, cwd=None):
    """Runs cmd in its own process group; the max RSS comes from wait4 (the child's,
    or that of the largest descendant it waited for). On timeout the whole group
    is killed."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=cwd, start_new_session=True)
        timed_out = False
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if timeout is not None and time.perf_counter() - start > timeout:
                timed_out = True
                os.killpg(p.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(p.pid, 0)
                break
            time.sleep(0.02)
        wall = time.perf_counter() - start
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Proc(p.returncode, out.read(), err.read(), wall, usage.ru_maxrss / 1024.0, timed_out)


class CellError(Exception):
    """Why a table cell holds no number: short (for the cell), full (for the footnote)."""

    def __init__(self, short, full=None):
        super().__init__(short)
        self.short, self.full = short, full or short


# --- models --------------------------------------------------------------------------------

CORPUS_DIR = os.path.join(REPO, "test", "Models", "Inputs")
CORPUS = ["convnet", "gpt2_tiny", "mlp", "mlp_dynamic", "mobilenet_v3_small", "sdpa_attention", "tinylm",
          "transformer_encoder"]  # convnet_train is a training graph
EXPORTED = ["tv_resnet18", "tv_mobilenet_v3_large", "tv_regnet_y_400mf", "tv_efficientnet_b0", "tv_convnext_tiny",
            "tv_densenet121", "tv_vit_b_16", "hf_bert", "hf_bert_2x128", "hf_gpt2", "hf_gpt2_32", "hf_llama",
            "hf_whisper_tiny_encoder"]
REAL = ["resnet50", "bert_base", "llama_50m"]
ALL_MODELS = CORPUS + EXPORTED + REAL
# The tables of docs/PERFORMANCE.md that run.py writes (--section): each its
# heading and its models (the default for --models, and the rows --merge keeps).
SECTIONS = {
    "bench": ("gc beside PyTorch Inductor (utils/bench)", ALL_MODELS),
    # issue 19's models (resnet50 is the shared real one).
    "issue19": ("gc beside ONNX Runtime and Inductor (issue 19)",
                ["tv_regnet_y_400mf", "tv_efficientnet_b0", "resnet50", "tv_convnext_tiny", "tv_densenet121",
                 "hf_gpt2_32", "tv_vit_b_16", "hf_bert_2x128", "hf_whisper_tiny_encoder", "bert_base",
                 "llama_50m"]),
}
ENGINES = ["gc", "eager", "compile", "compile-frozen", "aoti", "ort"]


def group(name):
    return "corpus" if name in CORPUS else "exported" if name in EXPORTED else "real"


def prepare(name, o):
    """The folder holding model.pt2, in*.npy and out*.npy, made if missing."""
    if name in CORPUS:
        d = os.path.join(o.corpus, name)
        if not os.path.exists(os.path.join(d, "model.pt2")):
            raise CellError("no archive", f"{d}/model.pt2 does not exist")
        return d
    if name in EXPORTED:
        d = os.path.join(o.cache, "models", name)
        if not os.path.exists(os.path.join(d, "model.pt2")):
            log(f"{name}: exporting with torch (into {d})")
            os.makedirs(os.path.dirname(d), exist_ok=True)
            r = run([sys.executable, os.path.join(HERE, "export_models.py"), name, d], timeout=o.timeout)
            if r.rc or r.timed_out:
                raise CellError("export fails", f"export_models.py {name}: " +
                                ("timeout" if r.timed_out else r.err.strip().splitlines()[-1]))
        return d
    src = os.path.join(o.realmodels, name)
    d = os.path.join(o.cache, "realmodels", name)
    archive = os.path.join(d, "model.pt2")
    try:
        want = json.load(open(os.path.join(src, "manifest.json")))["bytes"]
    except OSError as e:
        raise CellError("no real model", str(e))
    if not os.path.exists(archive) or os.path.getsize(archive) != want:
        log(f"{name}: rebuilding the archive from {src} (weightgen.py regen)")
        r = run([sys.executable, os.path.join(o.realmodels, "weightgen.py"), "regen", "--to",
                 os.path.join(o.cache, "realmodels"), src], timeout=o.timeout)
        if r.rc or r.timed_out:
            raise CellError("regen fails", f"weightgen.py regen {name}: " +
                            ("timeout" if r.timed_out else r.err.strip().splitlines()[-1]))
    return d


def onnx_file(name, d, o):
    """Where ONNX Runtime's export of a model is cached: beside the model in the
    bench cache (the corpus models live in the checkout, so theirs go to onnx/)."""
    if name in CORPUS:
        return os.path.join(o.cache, "onnx", name, "model.onnx")
    return os.path.join(d, "model.onnx")


def numbered(d, prefix):
    files = []
    while os.path.exists(os.path.join(d, f"{prefix}{len(files)}.npy")):
        files.append(os.path.join(d, f"{prefix}{len(files)}.npy"))
    return files


# --- engines -------------------------------------------------------------------------------

def pinned(o, cmd):
    return ["taskset", "-c", o.cores, *cmd]


def thread_env(o, **extra):
    env = dict(os.environ)
    env.pop("GC_BENCH_REEXEC", None)
    for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[k] = str(o.threads)
    if o.omp_wait_policy:
        env["OMP_WAIT_POLICY"] = o.omp_wait_policy
    else:
        env.pop("OMP_WAIT_POLICY", None)
    env.update(extra)
    return env


def gc_tool(o, name):
    path = os.path.join(o.build, "bin", name)
    for _ in range(10):  # a concurrent rebuild may replace it for a moment
        if os.path.exists(path):
            return path
        time.sleep(6)
    raise CellError(f"{name} missing", f"{path} does not exist")


def gc_compile(name, d, work, o, res):
    """Cold (empty GC_CACHE_DIR) and warm (the same cache again) compiles of one package."""
    cache = os.path.join(work, "gc-cache")
    pkg = os.path.join(work, name + ".gcpkg")
    cmd = pinned(o, [gc_tool(o, "gc-compile"), os.path.join(d, "model.pt2"), *o.gc_flags, "-o", pkg])
    res["gc_command"] = "gc-compile model.pt2 " + " ".join(o.gc_flags) + " -o model.gcpkg"
    for attempt in ("cold", "warm"):
        r = run(cmd, env=thread_env(o, GC_CACHE_DIR=cache), timeout=o.timeout)
        if r.timed_out:
            raise CellError("gc: compile timeout", f"gc-compile ({attempt}): no result in {o.timeout} s")
        if r.rc:
            first = r.first_error()
            raise CellError("gc: " + short_reason(first), f"gc-compile ({attempt}) failed: {r.err.strip()}")
        res[f"gc_compile_{attempt}_s"] = r.wall
        res[f"gc_compile_{attempt}_rss_mb"] = r.maxrss_mb
        warnings = [l for l in r.err.splitlines() if "warning:" in l]
        if warnings and attempt == "cold":
            res["gc_warnings"] = warnings
    res["gc_package_bytes"] = os.path.getsize(pkg)
    return pkg


def short_reason(line):
    """A few words for a table cell: "gc-compile: error: import: 'PATH': node 'x' (torch.ops.y): why"
    -> "import: node 'x': why", cut to 80 characters."""
    line = re.sub(r"^gc-\w+: error: ", "", line)
    line = re.sub(r"'[^']*/[^']*'(: )?", "", line)    # paths
    line = re.sub(r" \([^()]*\)", "", line)             # parenthetical details
    line = re.sub(r"\s+", " ", line).strip(" :")
    return line if len(line) <= 80 else line[:77] + "..."


def check_files(got_files, want_files, rtol):
    """The same check as the PyTorch engines', on the .npy files gc-run wrote."""
    import numpy as np
    sys.path.insert(0, HERE)
    from torch_worker import check as check_tensors
    return check_tensors([np.load(f) for f in got_files], want_files, rtol)


def stats(ms):
    ms = sorted(ms)
    return {"median_ms": ms[len(ms) // 2] if len(ms) % 2 else (ms[len(ms) // 2 - 1] + ms[len(ms) // 2]) / 2,
            "p90_ms": ms[min(len(ms) - 1, len(ms) * 9 // 10)], "min_ms": ms[0]}


class GcEngine:
    """The gc package through gc-run: one process per timing round (`--bench N`
    times N runs after one warm-up run, itself after the run that loads and
    binds; gc-run prints min, median and p90)."""

    label = "gc"

    def __init__(self, name, d, pkg, work, o, res):
        self.o, self.pkg, self.ins = o, pkg, numbered(d, "in")
        self.gcrun = gc_tool(o, "gc-run")
        outdir = os.path.join(work, "gc-out")
        os.makedirs(outdir, exist_ok=True)
        r = run(pinned(o, [self.gcrun, pkg, "--input", *self.ins, "--output-dir", outdir,
                           "--threads", str(o.threads)]), env=thread_env(o), timeout=o.timeout)
        if r.rc or r.timed_out:
            raise CellError("gc: run fails", "gc-run failed: " + ("timeout" if r.timed_out else r.err.strip()))
        ok, text = check_files(numbered(outdir, "out"), numbered(d, "out"), o.rtol)
        res["gc_check"] = text
        if not ok:
            raise CellError("wrong", f"gc: {text}")
        # The per-step profile, kept for reading where gc's time goes.
        r = run(pinned(o, [self.gcrun, pkg, "--input", *self.ins, "--bench", "10", "--profile",
                           "--threads", str(o.threads)]), env=thread_env(o), timeout=o.timeout)
        with open(os.path.join(o.results, f"{name}.gc-profile.txt"), "w") as f:
            f.write(r.out + r.err)

    def bench(self, n):
        o = self.o
        r = run(pinned(o, [self.gcrun, self.pkg, "--input", *self.ins, "--bench", str(n),
                           "--threads", str(o.threads)]), env=thread_env(o), timeout=o.repeat_budget)
        m = re.search(r"bench: (\d+) runs, min ([\d.e+-]+) ms, median ([\d.e+-]+) ms, p90 ([\d.e+-]+) ms", r.out)
        if r.rc or not m:
            raise CellError("gc: bench fails", "gc-run --bench: " + (
                "timeout" if r.timed_out else r.err.strip() or r.out.strip()))
        return {"min_ms": float(m.group(2)), "median_ms": float(m.group(3)), "p90_ms": float(m.group(4))}

    def warmup(self, seconds):
        return self.bench(3)["median_ms"]

    def close(self, res):
        pass


LABELS = {"eager": "eager", "compile": "torch.compile", "compile-frozen": "torch.compile (freezing)",
          "aoti": "AOTI", "aoti-compile": "AOTI", "ort": "ONNX Runtime"}


class TorchEngine:
    """One torch_worker.py process that serves one engine: it compiles (timed) and
    checks, then answers `warmup`/`bench N` until `quit`. package: AOTI's; onnx:
    ONNX Runtime's file."""

    def __init__(self, o, engine, d, work, package=None, onnx=None):
        self.o, self.engine, self.label = o, engine, LABELS[engine]
        cmd = [sys.executable, os.path.join(HERE, "torch_worker.py"), "serve", d, "--engine", engine,
               "--threads", str(o.threads), "--repeat", str(o.repeat), "--rtol", str(o.rtol),
               *(["--package", package] if package else []), *(["--onnx", onnx] if onnx else [])]
        env = thread_env(o, TORCHINDUCTOR_CACHE_DIR=os.path.join(work, "inductor-" + engine))
        self.err = tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen(pinned(o, cmd), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.err, env=env, start_new_session=True)
        self.buf = b""
        self.ready = self.read("READY", o.timeout)

    def fail(self, why, timeout=None):
        self.kill()
        self.err.seek(0)
        err = [l for l in self.err.read().splitlines() if l.strip()]
        if why == "timeout":
            raise CellError(f"{self.label}: timeout", f"{self.label}: no answer in {timeout:g} s; killed. " +
                            " ".join(err[-3:]))
        last = err[-1] if err else why
        raise CellError(f"{self.label}: " + (last if len(last) <= 80 else last[:77] + "..."),
                        f"{self.label} failed ({why}): " + "\n".join(err[-15:]))

    def read(self, tag, timeout):
        end = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                text = line.decode(errors="replace")
                if text.startswith(tag + " "):
                    return json.loads(text[len(tag) + 1:])
            left = end - time.monotonic()
            if left <= 0:
                self.fail("timeout", timeout)
            ready, _, _ = select.select([fd], [], [], min(left, 5))
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    self.fail("exited")
                self.buf += chunk

    def ask(self, command, timeout):
        try:
            self.proc.stdin.write((command + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            self.fail("exited")
        r = self.read("RESULT", timeout)
        if "error" in r:
            raise CellError(f"{self.label}: {r['error']}")
        return r

    def warmup(self, seconds):
        return self.ask(f"warmup {seconds}", self.o.repeat_budget)["median_ms"]

    def bench(self, n):
        return stats(self.ask(f"bench {n}", self.o.repeat_budget)["ms"])

    def close(self, res):
        """Ends the process; its max RSS (wait4) goes into res."""
        if self.proc.returncode is not None:
            return
        try:
            self.ask("quit", 60)
        except CellError:
            pass
        self.kill(res)

    def kill(self, res=None):
        if self.proc.returncode is not None:
            return
        try:
            pid, _, usage = os.wait4(self.proc.pid, os.WNOHANG)
            if not pid:
                time.sleep(0.5)
                pid, _, usage = os.wait4(self.proc.pid, os.WNOHANG)
            if not pid:
                os.killpg(self.proc.pid, signal.SIGKILL)
                pid, _, usage = os.wait4(self.proc.pid, 0)
            self.proc.returncode = -1
            if res is not None:
                res["process_max_rss_mb"] = usage.ru_maxrss / 1024.0
        except ChildProcessError:
            self.proc.returncode = -1


def aoti_compile(o, d, work, pkg):
    cmd = [sys.executable, os.path.join(HERE, "torch_worker.py"), "aoti-compile", d, "--package", pkg,
           "--threads", str(o.threads)]
    r = run(pinned(o, cmd), env=thread_env(o, TORCHINDUCTOR_CACHE_DIR=os.path.join(work, "inductor-aoti")),
            timeout=o.timeout)
    if r.timed_out:
        raise CellError("AOTI: timeout", f"aoti_compile_and_package: no result in {o.timeout} s")
    line = [l for l in r.out.splitlines() if l.startswith("RESULT ")]
    if r.rc or not line:
        err = [l for l in r.err.strip().splitlines() if l.strip()]
        last = err[-1] if err else f"exit status {r.rc}"
        raise CellError("AOTI: " + (last if len(last) <= 80 else last[:77] + "..."),
                        "aoti_compile_and_package failed: " + "\n".join(err[-15:]))
    out = json.loads(line[-1][len("RESULT "):])
    out["process_max_rss_mb"] = r.maxrss_mb
    return out


def bench_model(name, o):
    res = {"model": name, "group": group(name), "errors": {}, "loadavg_start": os.getloadavg()[0]}
    started = time.perf_counter()

    def attempt(key, fn):
        try:
            return fn()
        except CellError as e:
            res["errors"][key] = [e.short, e.full]
            log(f"{name}: {key}: {e.full.splitlines()[0] if e.full else e.short}")
        except Exception as e:  # noqa: BLE001 (one model must never stop the others)
            res["errors"][key] = [f"bench error: {type(e).__name__}", f"{type(e).__name__}: {e}"]
            log(f"{name}: {key}: {type(e).__name__}: {e}")
        return None

    d = attempt("prepare", lambda: prepare(name, o))
    if not d:
        return res
    info = os.path.join(d, "info.json")
    if os.path.exists(info):
        res["about"] = json.load(open(info)).get("about")
    engines = {}
    with tempfile.TemporaryDirectory(prefix=f"gc-bench-{name}-") as work:
        try:
            # Compiles one at a time, each timed alone; the engines then wait, idle.
            if "gc" in o.engines:
                log(f"{name}: gc-compile (cold, then warm)")
                pkg = attempt("gc_compile", lambda: gc_compile(name, d, work, o, res))
                if pkg:
                    log(f"{name}: gc-run (check)")
                    engines["gc"] = attempt("gc", lambda: GcEngine(name, d, pkg, work, o, res))
            aoti_pkg = None
            if "aoti" in o.engines:
                log(f"{name}: AOTI compile (fresh Inductor cache)")
                aoti_pkg = os.path.join(work, name + ".aoti.pt2")
                r = attempt("aoti_compile", lambda: aoti_compile(o, d, work, aoti_pkg))
                if r:
                    res["aoti_compile"] = r
                else:
                    aoti_pkg = None
            for e in ("eager", "compile", "compile-frozen", "aoti", "ort"):
                if e not in o.engines or (e == "aoti" and not aoti_pkg):
                    continue
                log(f"{name}: {LABELS[e]}" + (" (fresh Inductor cache)" if e.startswith("compile") else ""))
                eng = attempt(e, lambda: TorchEngine(o, e, d, work, aoti_pkg if e == "aoti" else None,
                                                     onnx_file(name, d, o) if e == "ort" else None))
                if not eng:
                    continue
                res[e] = dict(eng.ready)
                if e == "eager":
                    res["weights_bytes"] = eng.ready.get("weights_bytes")
                if eng.ready["ok"]:
                    engines[e] = eng
                else:
                    res["errors"][e] = ["wrong", f"{LABELS[e]}: {eng.ready['check']}"]
                    eng.close(res[e])
            engines = {k: v for k, v in engines.items() if v}
            # Timing: the engines take turns, round after round, so that a burst of
            # other work on the machine hits them alike.
            runs = {}
            for e, eng in list(engines.items()):
                est = attempt(e, lambda: eng.warmup(o.round_seconds / 2))
                if est is None:
                    engines.pop(e)
                    continue
                runs[e] = min(o.repeat, max(10, int(o.round_seconds * 1e3 / max(est, 1e-3))))
            best, fastest, medians = {}, {}, {}
            order = list(engines)
            for rnd in range(o.rounds):
                log(f"{name}: timing round {rnd + 1}/{o.rounds}: " + ", ".join(f"{e} x{runs[e]}" for e in order))
                for e in order[rnd % len(order):] + order[:rnd % len(order)] if order else []:
                    if e not in engines:
                        continue
                    r = attempt(e, lambda: engines[e].bench(runs[e]))
                    if r is None:
                        engines.pop(e).close({})
                        continue
                    fastest[e] = min(fastest.get(e, r["min_ms"]), r["min_ms"])
                    medians.setdefault(e, []).append(r["median_ms"])
                    if e not in best or r["median_ms"] < best[e]["median_ms"]:
                        best[e] = r
            for e, r in best.items():
                if e in res["errors"]:
                    continue
                res.setdefault(e, {}).update(r, runs=runs[e], rounds=o.rounds, min_ms=fastest[e],
                                             round_medians_ms=medians[e])
        finally:
            for e, eng in engines.items():
                eng.close(res.setdefault(e, {}))
    res["seconds"] = time.perf_counter() - started
    res["loadavg_end"] = os.getloadavg()[0]
    return res


# --- the report ----------------------------------------------------------------------------

class Notes:
    """Footnotes: each distinct full reason once, numbered."""

    def __init__(self):
        self.items = []

    def ref(self, model, full):
        text = f"{model}: {full}"
        if text not in self.items:
            self.items.append(text)
        return self.items.index(text) + 1


def cell_for(res, notes, keys, fmt, brief=False):
    """The formatted value, or the first error among keys, with its footnote
    (brief: only "n/a" and the footnote, for a cell that repeats an error the
    row shows already)."""
    for k in keys:
        if k in res["errors"]:
            short, full = res["errors"][k]
            return f"{'n/a' if brief else short} [{notes.ref(res['model'], full)}]"
    try:
        v = fmt()
    except (KeyError, TypeError):
        v = None
    return v if v is not None else "n/a"


def ms(v):
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


def latency(res, engine, field=None):
    r = res.get(engine)
    if field:
        return lambda: ms(r[field]) if r and field in r else None
    return lambda: f"{ms(r['median_ms'])} / {ms(r['p90_ms'])}" if r and "median_ms" in r else None


def mb(v):
    return None if v is None else f"{v / 2**20:.3g}" if v < 100 * 2**20 else f"{v / 2**20:.0f}"


def fmt_s(v):
    return None if v is None else f"{v:.2f}" if v < 10 else f"{v:.1f}" if v < 100 else f"{v:.0f}"


PEERS = (("compile", "compile"), ("compile-frozen", "frozen"), ("aoti", "AOTI"), ("ort", "ORT"))


def ratio(res):
    g = res.get("gc", {}).get("median_ms")
    best = [(res[e]["median_ms"], lbl) for e, lbl in PEERS
            if res.get(e, {}).get("median_ms") and e not in res["errors"]]
    if not g or not best or "gc" in res["errors"]:
        return "n/a"
    b, lbl = min(best)
    return f"{b / g:.2f}x ({lbl})"


def load(res):
    a, b = res.get("loadavg_start"), res.get("loadavg_end")
    return "n/a" if a is None or b is None else f"{a:.1f}-{b:.1f}" if abs(a - b) >= 0.1 else f"{a:.1f}"


def tables(results, o, meta):
    notes = Notes()
    pre = ["prepare"]
    row = lambda cells: "| " + " | ".join(cells) + " |"  # noqa: E731
    lat = ["| model | gc | eager | torch.compile | torch.compile, freezing | AOTI | ONNX Runtime | best peer / gc "
           "| load |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    fast = ["| model | gc | eager | torch.compile | torch.compile, freezing | AOTI | ONNX Runtime |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    comp = ["| model | gc-compile cold | gc-compile warm | torch.compile first call | "
            "torch.compile, freezing, first call | AOTI compile | ONNX export + session |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    mem = ["| model | weights MiB | gc package MiB | AOTI package MiB | gc-compile max RSS (cold / warm) | "
           "torch.compile max RSS | torch.compile, freezing, max RSS | AOTI compile max RSS | ONNX Runtime max RSS | "
           "torch after load |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        m = r["model"]
        lat.append(row([m, cell_for(r, notes, pre + ["gc_compile", "gc"], latency(r, "gc")),
                        cell_for(r, notes, pre + ["eager"], latency(r, "eager")),
                        cell_for(r, notes, pre + ["compile"], latency(r, "compile")),
                        cell_for(r, notes, pre + ["compile-frozen"], latency(r, "compile-frozen")),
                        cell_for(r, notes, pre + ["aoti_compile", "aoti"], latency(r, "aoti")),
                        cell_for(r, notes, pre + ["ort"], latency(r, "ort")),
                        ratio(r), load(r)]))
        fast.append(row([m, cell_for(r, notes, pre + ["gc_compile", "gc"], latency(r, "gc", "min_ms"), True),
                         cell_for(r, notes, pre + ["eager"], latency(r, "eager", "min_ms")),
                         cell_for(r, notes, pre + ["compile"], latency(r, "compile", "min_ms")),
                         cell_for(r, notes, pre + ["compile-frozen"], latency(r, "compile-frozen", "min_ms")),
                         cell_for(r, notes, pre + ["aoti_compile", "aoti"], latency(r, "aoti", "min_ms")),
                         cell_for(r, notes, pre + ["ort"], latency(r, "ort", "min_ms"))]))
        comp.append(row([m, cell_for(r, notes, pre + ["gc_compile"], lambda: fmt_s(r["gc_compile_cold_s"])),
                         cell_for(r, notes, pre + ["gc_compile"], lambda: fmt_s(r["gc_compile_warm_s"]), True),
                         cell_for(r, notes, pre + ["compile"], lambda: fmt_s(r["compile"]["compile_s"])),
                         cell_for(r, notes, pre + ["compile-frozen"],
                                  lambda: fmt_s(r["compile-frozen"]["compile_s"])),
                         cell_for(r, notes, pre + ["aoti_compile"], lambda: fmt_s(r["aoti_compile"]["compile_s"])),
                         cell_for(r, notes, pre + ["ort"], lambda: f"{fmt_s(r['ort']['export_s'])} + "
                                  f"{fmt_s(r['ort']['session_s'])}")]))

        def rss(key, field):
            return lambda: f"{r[key][field]:.0f}" if r.get(key) else None
        weights = r.get("weights_bytes") or next(
            (r[e]["weights_bytes"] for e in ("compile", "compile-frozen") if r.get(e, {}).get("weights_bytes")), None)
        mem.append(row([m, cell_for(r, notes, pre, lambda: mb(weights)),
                        cell_for(r, notes, pre + ["gc_compile"], lambda: mb(r["gc_package_bytes"]), True),
                        cell_for(r, notes, pre + ["aoti_compile"], lambda: mb(r["aoti_compile"]["package_bytes"])),
                        cell_for(r, notes, pre + ["gc_compile"],
                                 lambda: f"{r['gc_compile_cold_rss_mb']:.0f} / {r['gc_compile_warm_rss_mb']:.0f}", True),
                        cell_for(r, notes, pre + ["compile"], rss("compile", "compile_max_rss_mb")),
                        cell_for(r, notes, pre + ["compile-frozen"], rss("compile-frozen", "compile_max_rss_mb")),
                        cell_for(r, notes, pre + ["aoti_compile"], rss("aoti_compile", "max_rss_mb")),
                        cell_for(r, notes, pre + ["ort"], rss("ort", "compile_max_rss_mb")),
                        cell_for(r, notes, pre, rss("eager", "rss_after_load_mb"))]))

    runs = {}
    for r in results:
        m_ = r.get("meta", {})
        key = (m_.get("command", meta["command"]), m_.get("gc_commit", meta["gc_commit"]), m_.get("date", meta["date"]))
        runs.setdefault(key, []).append(r["model"])
    if len(runs) == 1:
        (command, commit, date), = runs
        made = [f"`{command}`", ""]
    else:
        commit, date = "as listed above", max(k[2] for k in runs)
        made = ["Made by several runs (`--merge` keeps each model's last result): " + "; ".join(
            f"`{c}` (gc {g}, {d}): {', '.join(ms_)}" for (c, g, d), ms_ in runs.items()) + ".", ""]
    text = [
        *made,
        f"Run {date} on {meta['cpu']} ({meta['ncpu']} CPUs), {o.threads} threads pinned to cores "
        f"{o.cores} for every engine and every compile (`taskset -c {o.cores}`, OMP_NUM_THREADS={o.threads}, "
        + (f"OMP_WAIT_POLICY={o.omp_wait_policy}, " if o.omp_wait_policy else "") +
        f"`torch.set_num_threads({o.threads})`, `gc-run --threads {o.threads}`); gc {commit} "
        f"(`{' '.join(['gc-compile', *o.gc_flags])}`), torch {meta['torch']}, torchvision {meta['torchvision']}, "
        f"transformers {meta['transformers']}, onnxruntime {meta['onnxruntime']} (onnx {meta['onnx']}, onnxscript "
        f"{meta['onnxscript']}), Python {meta['python']}. Other jobs (builds, tests) may have shared "
        "the machine: the *load* column gives the 1-minute load average when each model started and ended "
        "(2 would be this benchmark alone on both cores).",
        "",
        f"**Latency**, ms, median / p90 (float32): {o.rounds} rounds of up to {o.repeat} runs "
        f"(fewer where a round would pass {o.round_seconds:g} s, never under 10) after warm-up; the round with "
        "the lowest median counts. Every engine runs on the same `.pt2`: gc its package through "
        "`gc-run --bench`, PyTorch `torch.export.load(...).module()` (eager), `torch.compile` of it, and "
        "`aoti_compile_and_package` then `aoti_load_package` (AOTI), all under `torch.no_grad()`, and ONNX "
        "Runtime the ONNX file `torch.onnx.export(ep, dynamo=True)` makes of it (CPU provider, "
        f"ORT_ENABLE_ALL, {o.threads} intra-op threads, 1 inter-op, sequential; `sess.run` timed). Each "
        f"engine's outputs are checked against the model's out*.npy first (rtol {o.rtol:g}, atol {o.rtol:g} × "
        "min(1, max |output|)); a mismatch reads *wrong* and is not timed. *best peer / gc* above 1 "
        "means gc is faster than the fastest of the Inductor and ONNX Runtime columns (issue 19 wants 1.25). The engines take turns, round after round "
        "(the order rotated each round), so that other jobs' bursts hit them alike.",
        "",
        *lat,
        "",
        "The fastest single run of all rounds, ms (on a shared machine the figure least disturbed by "
        "other jobs):",
        "",
        *fast,
        "",
        "**Compile time**, wall seconds, each from empty caches: gc-compile with a fresh `GC_CACHE_DIR` "
        "(process start included), *warm* the same command again on that cache (a compile-cache hit); "
        "torch in its own process with a fresh `TORCHINDUCTOR_CACHE_DIR`, timed inside it: "
        "`torch.compile`'s first call (the compile plus one run) and `aoti_compile_and_package`; ONNX Runtime: "
        "`torch.onnx.export` (timed when the cached file was made) plus the session's creation (its graph "
        "optimizations).",
        "",
        *comp,
        "",
        "**Sizes and peak memory** (MiB; max RSS). *weights*: the distinct parameters, buffers and tensor "
        "constants of the exported program. gc-compile's max RSS is its process's (from `wait4`, the linker "
        "included). torch's is the compiling Python process's own peak (`getrusage`), which includes "
        "`import torch` and the loaded program (*torch after load* is that baseline, before compiling); "
        "Inductor's compile workers are separate processes, not added in.",
        "",
        *mem,
    ]
    if notes.items:
        text += ["", "Why a cell is empty:", ""]
        text += [f"{i + 1}. " + " ".join(n.split())[:1500] for i, n in enumerate(notes.items)]
    return "\n".join(text)


def versions():
    import importlib.metadata as md
    out = {}
    for p in ("torch", "torchvision", "transformers", "onnxruntime", "onnx", "onnxscript"):
        try:
            out[p] = md.version(p)
        except md.PackageNotFoundError:
            out[p] = "missing"
    out["python"] = platform.python_version()
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "-uno"], capture_output=True, text=True)
    out["gc_commit"] = (commit.stdout.strip() or "unknown") + (" (with uncommitted changes)" if dirty.stdout.strip() else "")
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    out["cpu"] = cpu
    out["ncpu"] = os.cpu_count()
    return out


def write_doc(path, text, section):
    """Puts text between the section's markers, or appends the section."""
    begin, end = f"<!-- {section}:begin -->", f"<!-- {section}:end -->"
    doc = open(path).read() if os.path.exists(path) else "# Performance\n"
    block = f"{begin}\n{text}\n{end}"
    if begin in doc and end in doc:
        doc = doc[:doc.index(begin)] + block + doc[doc.index(end) + len(end):]
    else:
        doc = doc.rstrip("\n") + f"\n\n## {SECTIONS[section][0]}\n\n{block}\n"
    with open(path + ".tmp", "w") as f:
        f.write(doc)
    os.replace(path + ".tmp", path)


def main(argv):
    reexec_in_venv(argv)
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(REPO, "build"), help="gc's build directory (default: build)")
    p.add_argument("--models", nargs="+", metavar="M",
                   help="models to run (default: all): " + " ".join(ALL_MODELS))
    p.add_argument("--skip", nargs="+", default=[], metavar="M", help="models to leave out")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--cores", help="cores to pin every engine to, as taskset -c takes them "
                   "(default: 0-(threads-1))")
    p.add_argument("--repeat", type=int, default=100, help="timed runs per engine (default 100)")
    p.add_argument("--timeout", type=int, default=600, help="seconds each compile may take (default 600)")
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--target",
                   help="gc-compile --target (default: gc-compile's own, kernels for several CPU levels "
                   "of which the runtime loads the best this CPU runs: the package users get)")
    p.add_argument("--rounds", type=int, default=5,
                   help="timing rounds per engine; the round with the lowest median counts (default 5)")
    p.add_argument("--round-seconds", type=float, default=8,
                   help="an engine's turn in a round stops after about this long, with at least 10 runs "
                   "(default 8)")
    p.add_argument("--omp-wait-policy", choices=["passive", "active"],
                   help="OMP_WAIT_POLICY for every engine (default: unset, OpenMP's own default)")
    p.add_argument("--engines", nargs="+", default=ENGINES, choices=ENGINES,
                   help="compile: torch.compile as it comes; compile-frozen: with "
                   "torch._inductor.config.freezing = True (Inductor's setting for CPU inference)")
    p.add_argument("--venv", default=os.environ.get("GC_BENCH_VENV"), help="the virtual environment")
    p.add_argument("--cache", default=DEFAULT_CACHE, help="models, results (default ~/.cache/gc-bench)")
    p.add_argument("--corpus", default=CORPUS_DIR)
    p.add_argument("--realmodels", default="/work/shared/realmodels")
    p.add_argument("--doc", default=os.path.join(REPO, "docs", "PERFORMANCE.md"))
    p.add_argument("--no-doc", action="store_true", help="print the tables only")
    p.add_argument("--section", choices=SECTIONS, default="bench",
                   help="the tables to make: bench (every model) or issue19 (issue 19's models)")
    p.add_argument("--report-only", action="store_true",
                   help="measure nothing: make the tables from results.json (the models given, else all there)")
    p.add_argument("--merge", action="store_true",
                   help="the tables also keep the last results of models not run this time")
    o = p.parse_args(argv)
    o.cache = os.path.abspath(os.path.expanduser(o.cache))
    o.build = os.path.abspath(o.build)
    o.cores = o.cores or (f"0-{o.threads - 1}" if o.threads > 1 else "0")
    o.gc_flags = ["--freeze"] + (["--target", o.target] if o.target else [])
    o.results = os.path.join(o.cache, "results")
    os.makedirs(o.results, exist_ok=True)
    o.repeat_budget = 600  # seconds for the timed runs themselves, on top of a compile's limit
    scope = SECTIONS[o.section][1]
    models = o.models or scope
    unknown = [m for m in models + o.skip if m not in ALL_MODELS]
    if unknown:
        p.error("unknown models: " + " ".join(unknown))
    models = [m for m in models if m not in o.skip]

    meta = versions()
    meta["command"] = "utils/bench/run.py " + " ".join(argv)
    meta["date"] = datetime.date.today().isoformat()
    meta["load_start"] = os.getloadavg()[0]
    log(f"{len(models)} models, {o.threads} threads on cores {o.cores}, gc flags {' '.join(o.gc_flags)}; "
        f"results in {o.results}")
    store = os.path.join(o.results, "results.json")
    previous = json.load(open(store)) if os.path.exists(store) else {}
    results = []
    if o.report_only:
        models = [m for m in (o.models or scope) if m in previous and m not in o.skip]
        results = [previous[m] for m in models]
        meta["command"] = previous[models[0]]["meta"].get("command", meta["command"]) if models else meta["command"]
        meta["date"] = max(r["meta"]["date"] for r in results) if results else meta["date"]
    for i, m in enumerate([] if o.report_only else models):
        log(f"[{i + 1}/{len(models)}] {m}")
        r = bench_model(m, o)
        r["meta"] = {k: meta[k] for k in ("gc_commit", "torch", "date", "command")}
        results.append(r)
        previous[m] = r
        with open(store + ".tmp", "w") as f:
            json.dump(previous, f, indent=1)
        os.replace(store + ".tmp", store)
        log(f"{m}: done in {r.get('seconds', 0):.0f} s; errors: {', '.join(r['errors']) or 'none'}")
    meta["load_end"] = os.getloadavg()[0]
    if o.merge:
        ran = {r["model"] for r in results}
        results += [previous[m] for m in scope if m in previous and m not in ran]
        results.sort(key=lambda r: scope.index(r["model"]) if r["model"] in scope else len(scope))
    text = tables(results, o, meta)
    print(text)
    if not o.no_doc:
        write_doc(o.doc, text, o.section)
        log(f"wrote the tables into {o.doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
