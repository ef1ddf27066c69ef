#!/usr/bin/env python3
"""Compiles and runs the zoo that export.py wrote, and writes the table docs/zoo.md.

usage: run.py ZOODIR [--device cpu|cuda] [--only NAME ...] [--gpu-set] [--skeletons SKELDIR]
              [--results FILE] [--bin DIR] [--resume] [--table FILE] [--compile-to DIR | --packages DIR]
       run.py --table FILE          (the table alone, from the results files)

For each model exported to ZOODIR/<name>/ (export.json says whether torch.export worked):
`gc-compile model.pt2 --freeze [--device cuda]` (timed, without the compile cache), then
`gcrt-run` on in<i>.npy, and each output is compared with out<i>.npy: same shape and dtype, and every
element within |got - want| <= atol + rtol * |want|, rtol = 1e-3, atol = 1e-3 * max(1, max |want|)
(the atol grows with the output's magnitude; integer and boolean outputs must be equal).
Results go to a JSON file per device (default utils/zoo/results-<device>.json, merged with what is there,
so a run may cover a part of the zoo); the table is made from every results file beside this script.
--skeletons SKELDIR first rebuilds ZOODIR/<name>/model.pt2 from the skeletons export.py wrote
(needs only numpy), which is how the GPU machine gets the zoo. --gpu-set picks the GPU subset
(GPU_SET below: every family). A GPU machine without gc's compiler takes packages made here:
`run.py ZOODIR --device cuda --gpu-set --compile-to PKGDIR` (weights stay in the archives), then there
`run.py ZOODIR --device cuda --gpu-set --skeletons SKELDIR --packages PKGDIR --bin DIR` with ZOODIR
at the same absolute path, where the packages look for their archives.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "test", "Models", "Inputs", "realmodels"))

RTOL = 1e-3
# Covers every family that exports; small enough for a GPU session of a few minutes.
GPU_SET = [
    "resnet18", "resnet50", "mobilenet_v3_small", "efficientnet_b0", "densenet121", "convnext_tiny", "swin_t",
    "regnet_y_400mf", "shufflenet_v2_x1_0", "googlenet", "fcn_resnet50", "deeplabv3_mobilenet_v3_large",
    "lraspp_mobilenet_v3_large", "r3d_18", "r2plus1d_18", "hf_bert", "hf_roberta", "hf_distilbert",
    "hf_deberta_v2", "hf_albert", "hf_gpt2", "hf_llama", "hf_qwen2", "hf_phi", "hf_gemma", "hf_opt", "hf_bloom",
    "hf_t5", "hf_bart", "hf_whisper", "hf_vit", "hf_swin", "hf_convnext", "hf_segformer", "hf_wav2vec2",
    "hf_hubert", "timm_efficientnet_b0", "timm_convnext_atto", "timm_vit_tiny_patch16_224",
    "hf_mixtral_batched_mm",
]


def first_error(text):
    """The first line that says error, without the machine's paths (the zoo's folder, site-packages)."""
    lines = [re.sub(r"(/[^\s:']*)?/(site-packages|zoo)/", "", ln.strip()) for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if "error" in ln.lower():
            return ln[:300]
    return lines[0][:300] if lines else ""


def cause(r):
    """Why a model fails, in the words of the table: whose limit it is."""
    err = r.get("error", "")
    if not r["exported"]:
        if "GuardOnDataDependentSymNode" in err:
            return "torch.export: data-dependent sizes in Python control flow"
        return "torch.export"
    if re.search(r"nonzero|masked_select|unique|unbacked|data-dependent", err):
        return "needs data-dependent sizes"
    if re.search(r"torch\.ops\.(?!aten\.)\w+\.", err):
        return "needs a custom op (plugin)"
    if err.startswith("mismatch"):
        return "gc: wrong result"
    return "gc"


def compare(got, want):
    """None if got matches want, else a short reason."""
    if got.shape != want.shape:
        return f"shape {list(got.shape)}, PyTorch {list(want.shape)}"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, PyTorch {want.dtype}"
    if want.dtype.kind in "biu":
        bad = int(np.count_nonzero(got != want))
        return f"{bad} elements differ" if bad else None
    g, w = got.astype(np.float64), want.astype(np.float64)
    if want.size == 0:
        return None
    atol = 1e-3 * max(1.0, float(np.max(np.abs(w[np.isfinite(w)]), initial=0.0)))
    same_nan = np.isnan(g) == np.isnan(w)
    err = np.abs(g - w)
    ok = (err <= atol + RTOL * np.abs(w)) | (np.isnan(g) & np.isnan(w)) | (g == w)
    if ok.all() and same_nan.all():
        return None
    return f"max abs error {float(np.nanmax(err)):.3g} (atol {atol:.3g}), {int((~ok).sum())} of {w.size} off"


def compile_model(d, pkg, device, bins, timeout, external):
    """gc-compile's part of a model's record: compiled, compile_s, error."""
    cmd = [os.path.join(bins, "gc-compile"), os.path.join(d, "model.pt2"), "--freeze", "--no-cache", "-o", pkg]
    if device == "cuda":
        cmd += ["--device", "cuda"]
    if external:
        cmd += ["--weights=external"]
    start = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"compiled": False, "error": f"gc-compile: timed out after {timeout} s"}
    r = {"compile_s": round(time.time() - start, 1), "compiled": p.returncode == 0}
    if p.returncode != 0:
        r["error"] = first_error(p.stderr)
    return r


def run_model(d, name, device, bins, timeout, work, compile_to=None, packages=None):
    """A model's record. With compile_to, only compiles (weights left in the
    archive, so that the package travels without them) into that folder and
    notes the compile in its compile.json; with packages, runs the package
    compiled so, on an archive rebuilt at the same path."""
    info = json.load(open(os.path.join(d, "export.json")))
    r = {"family": info["family"], "exported": info["exported"]}
    if not info["exported"]:
        r["error"] = "export: " + info.get("error", "")
        return r
    pkg = os.path.join(packages or compile_to or work, name + ".gcpkg")
    if packages:
        r.update(json.load(open(os.path.join(packages, "compile.json")))[name])
    else:
        os.makedirs(os.path.dirname(pkg), exist_ok=True)
        r.update(compile_model(d, pkg, device, bins, timeout, external=bool(compile_to)))
    if compile_to:
        os.makedirs(compile_to, exist_ok=True)
        record = os.path.join(compile_to, "compile.json")
        done = json.load(open(record)) if os.path.exists(record) else {}
        done[name] = {k: r[k] for k in ("compile_s", "compiled", "error") if k in r}
        with open(record, "w") as f:
            json.dump(done, f, indent=1)
    if not r["compiled"] or compile_to:
        return r
    ins = sorted((f for f in os.listdir(d) if f.startswith("in") and f.endswith(".npy")),
                 key=lambda f: int(f[2:-4]))
    wants = sorted((f for f in os.listdir(d) if f.startswith("out") and f.endswith(".npy")),
                   key=lambda f: int(f[3:-4]))
    outdir = os.path.join(work, name + ".out")
    os.makedirs(outdir, exist_ok=True)
    cmd = [os.path.join(bins, "gcrt-run"), pkg, *[os.path.join(d, f) for f in ins], "-o", outdir]
    if device == "cpu":
        cmd += ["--threads", "2"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        r.update(matched=False, error=f"gcrt-run: timed out after {timeout} s")
        return r
    if p.returncode != 0:
        r.update(matched=False, error="gcrt-run: " + first_error(p.stderr))
        return r
    reasons = []
    for k, f in enumerate(wants):
        got = os.path.join(outdir, f"out{k}.npy")
        if not os.path.exists(got):
            reasons.append(f"out{k}: missing")
            continue
        why = compare(np.load(got), np.load(os.path.join(d, f)))
        if why:
            reasons.append(f"out{k}: {why}")
    r["matched"] = not reasons
    if reasons:
        r["error"] = "mismatch: " + "; ".join(reasons)[:300]
    return r


def rebuild(skeletons, zoodir, names):
    import weightgen_bf16  # float32 recipes and export.py --dtype bfloat16's
    for name in names:
        s = os.path.join(skeletons, name)
        if not os.path.isdir(s):
            continue
        weightgen_bf16.regen(s, to=zoodir)
        shutil.copyfile(os.path.join(s, "export.json"), os.path.join(zoodir, name, "export.json"))


def load_results():
    out = {}
    for dev in ("cpu", "cuda"):
        path = os.path.join(HERE, f"results-{dev}.json")
        if os.path.exists(path):
            out[dev] = json.load(open(path))
    return out


def write_table(path):
    res = load_results()
    cpu, gpu = res.get("cpu", {}).get("models", {}), res.get("cuda", {}).get("models", {})
    exported = [n for n, r in cpu.items() if r["exported"]]
    good = [n for n in exported if cpu[n].get("matched")]
    gpu_good = [n for n, r in gpu.items() if r.get("matched")]
    fams = sorted({r["family"] for r in cpu.values()})
    yes = lambda v: "" if v is None else ("yes" if v else "**no**")  # noqa: E731
    lines = [
        "# The model zoo",
        "",
        "`utils/zoo/` holds a list of models (`models.py`): torchvision classification, segmentation,",
        "detection and video models, Hugging Face `transformers` encoders, decoders, encoder-decoders, vision",
        "and audio models (tiny configurations: hidden size 32 to 64, 2 layers, vocabulary 128), and some",
        "`timm` models, all with random weights (from a recipe, `utils/zoo/weights.py`), batch 1 and small",
        "inputs (images 64x64 unless the architecture needs more, 16 tokens, 1600 audio samples).",
        "`export.py` exports them with `torch.export` and records PyTorch's outputs; `run.py` compiles each",
        "with `gc-compile --freeze`, runs it with `gcrt-run` and compares: an element matches if",
        "|gc - PyTorch| <= atol + 1e-3 |PyTorch|, with atol = 1e-3 max(1, max |PyTorch output|).",
        "",
        "Regenerate (the export venv has torchvision, transformers and timm; the archives, about 3 GB, stay",
        "outside the checkout):",
        "",
        "```sh",
        "nice python utils/zoo/export.py /tmp/zoo --skeletons /tmp/zoo-skel",
        "nice python utils/zoo/run.py /tmp/zoo --table docs/zoo.md",
        "```",
        "",
        "On a GPU machine with only torch and numpy, from the skeletons (a few MB):",
        "`python utils/zoo/run.py /tmp/zoo --skeletons /tmp/zoo-skel --device cuda --gpu-set` (where gc's",
        "compiler is not installed, with the packages `--compile-to DIR` made here, `--packages DIR`), then",
        "`run.py --table docs/zoo.md` with its `results-cuda.json`.",
        "",
    ]
    for dev, r in res.items():
        lines.append(f"- {dev}: {r.get('hardware', '')}; models exported, and PyTorch's (CPU) outputs "
                     f"recorded, with {r.get('versions', '')}")
    lines += [
        "",
        f"**CPU: {len(good)} of {len(exported)} exported models compile and match "
        f"({100.0 * len(good) / max(1, len(exported)):.1f}%)**; {len(cpu) - len(exported)} of {len(cpu)} models "
        f"do not export. " + (f"**GPU: {len(gpu_good)} of {len(gpu)} tried match.**" if gpu else
                              "GPU: not run yet (the command is above)."),
        "Compile times are gc-compile's wall time without its cache, on that machine as it was shared at the time.",
        "",
        "| family | models | exported | CPU match | GPU tried | GPU match |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for f in fams:
        names = [n for n, r in cpu.items() if r["family"] == f]
        lines.append(f"| {f} | {len(names)} | {sum(cpu[n]['exported'] for n in names)} | "
                     f"{sum(bool(cpu[n].get('matched')) for n in names)} | {sum(n in gpu for n in names)} | "
                     f"{sum(bool(gpu.get(n, {}).get('matched')) for n in names)} |")
    lines += ["", "| model | family | exported | compiles | matches | compile s | GPU matches | cause | first error |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for n, r in cpu.items():
        g = gpu.get(n, {})
        err = r.get("error", "") or (("GPU: " + g["error"]) if g.get("error") else "")
        why = cause(r) if r.get("error") else (("GPU: " + cause(g)) if g.get("error") else "")
        err = re.sub(r" \(unhinted: .*", "", err).replace("|", "\\|")
        lines.append(f"| {n} | {r['family']} | {yes(r['exported'])} | {yes(r.get('compiled'))} | "
                     f"{yes(r.get('matched'))} | {r.get('compile_s', '')} | {yes(g.get('matched')) if g else ''} | "
                     f"{why} | {err} |")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def hardware(device):
    if device == "cuda":
        try:
            p = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                               text=True)
            return (p.stdout.strip().splitlines() or ["an NVIDIA GPU"])[0]
        except OSError:
            return "an NVIDIA GPU"
    model = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "")
    return f"{model}, {os.cpu_count()} cores"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("zoodir", nargs="?")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--only", nargs="*", default=[])
    p.add_argument("--gpu-set", action="store_true")
    p.add_argument("--skeletons")
    p.add_argument("--results")
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--timeout", type=int, default=600)
    p.add_argument("--resume", action="store_true", help="skip models the results file already has")
    p.add_argument("--table")
    p.add_argument("--compile-to", metavar="DIR", help="only compile, with the weights left in the archives")
    p.add_argument("--packages", metavar="DIR", help="run the packages --compile-to made (on another machine)")
    a = p.parse_args()
    if a.zoodir:
        results = a.results or os.path.join(HERE, f"results-{a.device}.json")
        names = a.only or (GPU_SET if a.gpu_set else None)
        if a.skeletons:
            rebuild(a.skeletons, a.zoodir, names or sorted(os.listdir(a.skeletons)))
        import models  # needs torch only
        order = list(models.zoo())
        names = [n for n in order if os.path.exists(os.path.join(a.zoodir, n, "export.json"))
                 and (names is None or n in names)]
        old = json.load(open(results)) if os.path.exists(results) else {"models": {}}
        old.update(hardware=hardware(a.device))
        work = tempfile.mkdtemp(prefix="gc-zoo-")
        for n in names:
            if a.resume and n in old["models"]:
                continue
            r = run_model(os.path.join(a.zoodir, n), n, a.device, a.bin, a.timeout, work, a.compile_to, a.packages)
            if a.compile_to:
                print(f"{n:40s} {r.get('compile_s', '')!s:>6} {r.get('error', 'compiled')}", flush=True)
                continue
            old["models"][n] = r
            old["models"] = {k: old["models"][k] for k in order if k in old["models"]}
            versions = json.load(open(os.path.join(a.zoodir, n, "export.json")))["versions"]
            old["versions"] = ", ".join(f"{k} {v}" for k, v in versions.items())
            with open(results + ".tmp", "w") as f:
                json.dump(old, f, indent=1)
            os.replace(results + ".tmp", results)
            shutil.rmtree(os.path.join(work, n + ".out"), ignore_errors=True)
            if not a.packages and os.path.exists(os.path.join(work, n + ".gcpkg")):
                os.remove(os.path.join(work, n + ".gcpkg"))
            state = "match" if r.get("matched") else r.get("error", "")
            print(f"{n:40s} {r.get('compile_s', '')!s:>6} {state}", flush=True)
        shutil.rmtree(work, ignore_errors=True)
    if a.table:
        write_table(a.table)


if __name__ == "__main__":
    main()
