"""PyTorch's side of the benchmark, one engine per process. run.py starts it
under `taskset`, with the thread count in the environment and, where a
compile is timed, a fresh TORCHINDUCTOR_CACHE_DIR.

    python torch_worker.py aoti-compile MODEL_DIR --package PKG --threads T
    python torch_worker.py serve MODEL_DIR --engine ENGINE [--package PKG] [--onnx FILE] --threads T

Every mode loads MODEL_DIR/model.pt2 with torch.export.load, the same file gc
compiles, and the inputs in<i>.npy. `aoti-compile` times
torch._inductor.aoti_compile_and_package(ep) and exits. `serve` prepares one
engine: eager (ep.module()), compile (torch.compile(ep.module()), timing its
first call: the compile plus one run), compile-frozen (the same with
torch._inductor.config.freezing = True) or aoti
(torch._inductor.aoti_load_package(PKG)) or ort (ONNX Runtime on FILE, exported
from the same program by torch.onnx.export(ep, dynamo=True) unless FILE is
already that export; see ort_session); checks the first call's outputs
(flattened in pytree order) against out<i>.npy; prints `READY {json}`; then
answers commands on stdin, one a line, so that run.py can interleave the
engines' timing rounds:

    warmup SECONDS   up to max(3, REPEAT/10) runs, stopping after SECONDS
                     (at least 2): `RESULT {"median_ms": ...}`
    bench N          N timed runs: `RESULT {"ms": [...]}`
    quit             `RESULT {"max_rss_mb": ...}` and exit

Every run is under torch.no_grad(). Nothing is timed when the outputs are wrong.
"""
import argparse
import json
import os
import resource
import statistics
import sys
import time

import numpy as np


def numbered(d, prefix):
    files = []
    while os.path.exists(os.path.join(d, f"{prefix}{len(files)}.npy")):
        files.append(os.path.join(d, f"{prefix}{len(files)}.npy"))
    return files


def flat(out):
    import torch.utils._pytree as pytree
    return pytree.tree_leaves(out)


def check(leaves, want_files, rtol):
    """(ok, text): every output (a list of tensors or arrays) against its
    out<i>.npy. The absolute tolerance is rtol scaled by min(1, the output's
    largest magnitude), so that tiny outputs are not accepted whatever they
    hold. Used by run.py for gc's outputs too."""
    if len(leaves) != len(want_files):
        return False, f"{len(leaves)} outputs, expected {len(want_files)}"
    worst_abs, worst_rel = 0.0, 0.0
    for i, (g, f) in enumerate(zip(leaves, want_files)):
        w = np.load(f)
        g = g.detach().cpu().numpy() if hasattr(g, "detach") else np.asarray(g)
        if g.shape != w.shape:
            return False, f"out{i}: shape {list(g.shape)}, expected {list(w.shape)}"
        if w.dtype.kind in "biu":
            if not np.array_equal(g, w):
                return False, f"out{i}: integer output differs"
            continue
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        atol = rtol * min(1.0, float(np.abs(w64).max(initial=0.0)))
        err = np.abs(g64 - w64)
        worst_abs = max(worst_abs, float(err.max(initial=0.0)))
        worst_rel = max(worst_rel, float((err / np.maximum(np.abs(w64), 1e-30)).max(initial=0.0)))
        if not np.all(err <= atol + rtol * np.abs(w64)) or not np.all(np.isfinite(g64) == np.isfinite(w64)):
            bad = int(np.sum(~(err <= atol + rtol * np.abs(w64))))
            return False, (f"out{i}: {bad} of {w.size} values off by more than rtol {rtol}, atol {atol:.3g} "
                           f"(max abs error {float(np.nanmax(err)):.3g})")
    text = f"max abs error {worst_abs:.3g}, max rel error {worst_rel:.3g}"
    if all(not np.any(np.load(f)) for f in want_files):
        text += " (the expected outputs are all zero: a weak check)"
    return True, text


def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def current_rss_mb():
    try:
        import psutil
        return psutil.Process().memory_info().rss / 2**20
    except ImportError:
        return None


def weights_bytes(ep):
    """Bytes of the distinct parameters, buffers and tensor constants."""
    import torch
    seen, total = set(), 0
    tensors = list(ep.state_dict.values()) + [c for c in ep.constants.values() if isinstance(c, torch.Tensor)]
    for t in tensors:
        key = (t.untyped_storage().data_ptr(), t.storage_offset(), tuple(t.shape))
        if key in seen:
            continue
        seen.add(key)
        total += t.numel() * t.element_size()
    return total


def ort_export(model_dir, onnx_path):
    """Exports MODEL_DIR/model.pt2 to onnx_path with torch.onnx.export(ep,
    dynamo=True), unless onnx_path.json says onnx_path is already the export of
    this very archive (its size and mtime) by these torch and onnxscript
    versions. Returns that record; its export_s is the export's time (from the
    run that made the file), ONNX Runtime's compile time with the session's."""
    import importlib.metadata as md
    import torch
    pt2 = os.path.join(model_dir, "model.pt2")
    st = os.stat(pt2)
    source = {"pt2_bytes": st.st_size, "pt2_mtime_ns": st.st_mtime_ns, "torch": torch.__version__,
              "onnxscript": md.version("onnxscript")}
    record_path = onnx_path + ".json"
    if os.path.exists(onnx_path) and os.path.exists(record_path):
        record = json.load(open(record_path))
        if record.get("source") == source:
            return dict(record, cached=True)
    os.makedirs(os.path.dirname(onnx_path), exist_ok=True)
    ep = torch.export.load(pt2)
    start = time.perf_counter()
    program = torch.onnx.export(ep, dynamo=True)
    tmp = f"{onnx_path}.{os.getpid()}.tmp"  # two processes may export the same model at once
    program.save(tmp)
    record = {"source": source, "export_s": time.perf_counter() - start}
    os.replace(tmp, onnx_path)
    with open(f"{record_path}.{os.getpid()}.tmp", "w") as f:
        json.dump(record, f)
    os.replace(f"{record_path}.{os.getpid()}.tmp", record_path)
    return dict(record, cached=False)


def ort_session(onnx_path, threads, profile_prefix=None):
    """An ONNX Runtime session as the benchmark runs it: the CPU provider, every
    graph optimization, `threads` intra-op threads, one inter-op thread,
    sequential execution (profiling on where profile_prefix is given)."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    if profile_prefix:
        so.enable_profiling = True
        so.profile_file_prefix = profile_prefix
    return ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])


def ort_runner(sess, args):
    """A callable running sess on args (the model's inputs, in order), with the
    feeds made once so that only sess.run is timed."""
    feeds = {i.name: a.numpy() for i, a in zip(sess.get_inputs(), args)}
    return lambda *_: sess.run(None, feeds)


def reply(obj, tag="RESULT"):
    print(f"{tag} " + json.dumps(obj), flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["serve", "aoti-compile"])
    p.add_argument("--engine", choices=["eager", "compile", "compile-frozen", "aoti", "ort"], default="eager")
    p.add_argument("model_dir")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=100)
    p.add_argument("--package")
    p.add_argument("--onnx", help="ort: the ONNX file (exported here when missing or stale)")
    p.add_argument("--rtol", type=float, default=1e-3)
    a = p.parse_args()

    import torch
    torch.set_num_threads(a.threads)
    result = {"torch": torch.__version__, "threads": torch.get_num_threads()}
    args = [torch.from_numpy(np.load(f)) for f in numbered(a.model_dir, "in")]
    want = numbered(a.model_dir, "out")

    if a.mode == "aoti-compile":
        ep = torch.export.load(os.path.join(a.model_dir, "model.pt2"))
        result["rss_after_load_mb"] = current_rss_mb()
        start = time.perf_counter()
        path = torch._inductor.aoti_compile_and_package(ep, package_path=a.package)
        result["compile_s"] = time.perf_counter() - start
        result["package_bytes"] = os.path.getsize(path)
        result["max_rss_mb"] = rss_mb()
        return reply(result)

    if a.engine == "aoti":
        fn = torch._inductor.aoti_load_package(a.package)
    elif a.engine == "ort":
        import onnxruntime
        export = ort_export(a.model_dir, a.onnx)
        start = time.perf_counter()
        fn = ort_runner(ort_session(a.onnx, a.threads), args)
        result.update(ort=onnxruntime.__version__, export_s=export["export_s"], export_cached=export["cached"],
                      session_s=time.perf_counter() - start)
        result["compile_s"] = result["export_s"] + result["session_s"]
        result["compile_max_rss_mb"] = rss_mb()
    else:
        ep = torch.export.load(os.path.join(a.model_dir, "model.pt2"))
        result["rss_after_load_mb"] = current_rss_mb()
        result["weights_bytes"] = weights_bytes(ep)
        fn = ep.module()
        if a.engine != "eager":
            torch._inductor.config.freezing = a.engine == "compile-frozen"
            fn = torch.compile(fn)
    start = time.perf_counter()
    with torch.no_grad():
        out = fn(*args)
    if a.engine.startswith("compile"):
        result["compile_s"] = time.perf_counter() - start
        result["compile_max_rss_mb"] = rss_mb()
    result["ok"], result["check"] = check(flat(out), want, a.rtol)
    reply(result, "READY")
    for line in sys.stdin:
        cmd = line.split()
        if not cmd or cmd[0] == "quit":
            break
        if not result["ok"]:
            reply({"error": "the outputs are wrong; nothing is timed"})
            continue
        with torch.no_grad():
            if cmd[0] == "warmup":
                ms, start = [], time.perf_counter()
                while len(ms) < max(3, a.repeat // 10) and (len(ms) < 2 or time.perf_counter() - start < float(cmd[1])):
                    t = time.perf_counter()
                    fn(*args)
                    ms.append((time.perf_counter() - t) * 1e3)
                reply({"runs": len(ms), "median_ms": statistics.median(ms[1:])})
            elif cmd[0] == "bench":
                ms = []
                for _ in range(int(cmd[1])):
                    t = time.perf_counter()
                    fn(*args)
                    ms.append((time.perf_counter() - t) * 1e3)
                reply({"ms": ms})
    reply({"max_rss_mb": rss_mb()})


if __name__ == "__main__":
    sys.exit(main())
