#!/usr/bin/env python3
"""Generates gc's op conformance suite from PyTorch's OpInfo samples.

usage: make_opsuite.py OUT_DIR [--jobs N] [--filter SUBSTRING] [--per-dtype K]

Run it where torch (from PyPI) is installed, for example
  ~/.cache/gc-bench/venv/bin/python utils/opsuite/make_opsuite.py test/Opsuite/Generated

Which ops: every OpInfo entry of PyTorch's op_db whose samples export to a
graph holding an op that gc must know: an aten op overload tagged `core`, or
one that the default export IR (training IR) or `run_decompositions()` leaves
in the graph. An entry whose graphs hold only ops that other entries already
reach (an alias, or a composite that export decomposes) is left out.

For each kept entry and dtype (float32, plus int64 where the op takes it, or
bool for an op with neither), the first samples with distinct signatures
(graph code, input dtypes and shapes) are exported, each as a tiny module
calling the op, and stored as OUT_DIR/<entry>__<k>/ with model.pt2, in<i>.npy
(the tensor arguments, in order) and out<i>.npy (the exported program's
outputs, or for the few entries of FLOAT64_REFERENCE the op's outputs
computed in float64). OUT_DIR/index.json lists every sample (op entry,
sample index, dtype, input dtypes and shapes, the aten ops before and after
run_decompositions(), the op family, the rules of EQUIVALENT_OUTPUTS for
outputs torch does not define uniquely), every sample that was not written,
with the reason (its export failed, it calls a random op, its output is not
a tensor, ...), the entries left out, the core ops no sample reaches, and the
torch version. The archives hold no example inputs (in<i>.npy has them). Runs are deterministic: each entry and dtype
seeds the generator from its name, and entries are visited in sorted order,
so re-running gives the same index and the same .npy bytes.
"""
import argparse
import io
import json
import multiprocessing
import os
import shutil
import sys
import warnings
import zlib

import numpy as np
import torch
import torch.utils._pytree as pytree

# Caps that keep the suite small (a few MB) and quick to check.
MAX_ELEMENTS = 2048       # elements over all inputs of a sample
MAX_TRIED = 8             # samples tried per entry and dtype
EXTRA_DTYPES = (torch.int64,)

# Outputs that are not defined by the inputs (uninitialized memory).
UNDEFINED_OUTPUT = ("empty", "new_empty", "empty_like", "empty_strided", "new_empty_strided",
                    "empty_permuted")

# OpInfo entries whose float32 results in torch are less exact than the
# suite's tolerance allows (torch's float32 matrix_exp is off by about 2e-3
# relative on a 5x5 matrix of norm 27): their expected outputs are computed
# from the inputs in float64 and rounded to the outputs' dtypes.
FLOAT64_REFERENCE = ("matrix_exp",)

# Outputs that torch does not define uniquely, by OpInfo entry: a checker
# accepts any answer the rule allows (utils/check-opsuite.py applies them).
#   indices       an index output (of output `values`, taken from input
#                 `input` along a dim found below) may name any element
#                 equal to the value it goes with: ties have no order.
#   column_signs  each column of the output (an eigenvector) is defined up
#                 to its sign.
EQUIVALENT_OUTPUTS = {
    "topk": [{"rule": "indices", "output": 1, "values": 0, "input": 0}],
    "kthvalue": [{"rule": "indices", "output": 1, "values": 0, "input": 0}],
    "linalg.eigh": [{"rule": "column_signs", "output": 1}],
}


def entry_name(op):
    name = op.name + ("." + op.variant_test_name if op.variant_test_name else "")
    return name.replace(".", "_")


def family(op):
    """A coarse grouping for the report: the OpInfo class or the namespace."""
    for prefix in ("nn.functional.", "linalg.", "special.", "fft.", "sparse.", "_refs."):
        if op.name.startswith(prefix):
            return prefix.rstrip(".")
    kind = type(op).__name__
    return {"UnaryUfuncInfo": "unary", "BinaryUfuncInfo": "binary",
            "ReductionOpInfo": "reduction", "ShapeFuncInfo": "shape",
            "ForeachFuncInfo": "foreach", "SpectralFuncInfo": "fft"}.get(kind, "other")


def seed_of(*parts):
    return zlib.crc32("/".join(parts).encode())


def graph_ops(ep):
    return sorted({str(n.target) for n in ep.graph.nodes
                   if n.op == "call_function" and str(n.target).startswith("aten.")})


def is_random(name):
    """Whether the op `aten.<packet>.<overload>` draws from the generator."""
    _, packet, overload = name.split(".")
    op = getattr(getattr(torch.ops.aten, packet), overload)
    return torch.Tag.nondeterministic_seeded in op.tags


class Call(torch.nn.Module):
    """Calls fn on the sample's arguments, with its tensors as inputs."""

    def __init__(self, fn, spec, leaves):
        super().__init__()
        self.fn, self.spec = fn, spec
        # Non-tensor leaves are constants of the graph; tensor leaves are
        # the module's inputs, in order.
        self.leaves = [None if isinstance(l, torch.Tensor) else l for l in leaves]
        self.slots = [isinstance(l, torch.Tensor) for l in leaves]

    def forward(self, *tensors):
        it = iter(tensors)
        leaves = [next(it) if slot else c for slot, c in zip(self.slots, self.leaves)]
        args, kwargs = pytree.tree_unflatten(leaves, self.spec)
        return self.fn(*args, **kwargs)


def make_call(fn, sample):
    leaves, spec = pytree.tree_flatten(((sample.input,) + tuple(sample.args), sample.kwargs))
    module = Call(fn, spec, leaves)
    tensors = [l for l in leaves if isinstance(l, torch.Tensor)]
    return module, tensors


def as_outputs(result):
    leaves = pytree.tree_leaves(result)
    if not leaves:
        raise ValueError("no output")
    for l in leaves:
        if not isinstance(l, torch.Tensor):
            raise ValueError("non-tensor output (%s)" % type(l).__name__)
        if l.is_complex() or l.is_sparse or l.layout != torch.strided:
            raise ValueError("output of dtype %s, layout %s" % (l.dtype, l.layout))
    return [l.detach() for l in leaves]


def reduced_dim(source, values, indices):
    """The dim along which `indices` picks `values` out of `source` in
    torch's own answer (kept, or removed as keepdim=False does), or None."""
    for d in range(source.dim()):
        idx, val = indices, values
        if idx.dim() == source.dim() - 1:
            idx, val = idx.unsqueeze(d), val.unsqueeze(d)
        if idx.dim() != source.dim() or any(
                idx.shape[j] != source.shape[j] for j in range(source.dim()) if j != d):
            continue
        if torch.equal(torch.take_along_dim(source, idx, d), val):
            return d
    return None


def equivalences(op, tensors, outs):
    """The EQUIVALENT_OUTPUTS rules of op, completed for this sample."""
    rules = []
    for rule in EQUIVALENT_OUTPUTS.get(op.name, []):
        rule = dict(rule)
        if rule["rule"] == "indices":
            d = reduced_dim(tensors[rule["input"]], outs[rule["values"]], outs[rule["output"]])
            if d is None:
                raise ValueError("indices that do not pick the values out of the input")
            rule["dim"] = d
        rules.append(rule)
    return rules


def float64_outputs(module, tensors):
    """The module's outputs from float64 copies of its floating inputs,
    rounded back to the dtypes the float32 run gives."""
    wide = [t.double() if t.is_floating_point() else t.clone() for t in tensors]
    return as_outputs(module(*wide))


def npy_bytes(t):
    t = t.detach().cpu().contiguous()
    buf = io.BytesIO()
    np.save(buf, t.numpy(), allow_pickle=False)
    return buf.getvalue()


def dtype_name(d):
    return str(d).replace("torch.", "")


def try_sample(op, fn, sample, seed):
    """(record, files) for one sample, or raises with the reason."""
    module, tensors = make_call(fn, sample)
    if not tensors:
        raise ValueError("no tensor input")
    for t in tensors:
        if t.is_complex() or t.layout != torch.strided or t.dtype in (torch.float16, torch.bfloat16):
            raise ValueError("input of dtype %s, layout %s" % (t.dtype, t.layout))
    if sum(t.numel() for t in tensors) > MAX_ELEMENTS:
        raise ValueError("inputs larger than %d elements" % MAX_ELEMENTS)
    tensors = [t.detach().clone() for t in tensors]
    # Outputs that change with the generator's state are not checkable.
    torch.manual_seed(seed)
    eager = as_outputs(module(*[t.clone() for t in tensors]))
    torch.manual_seed(seed + 1)
    again = as_outputs(module(*[t.clone() for t in tensors]))
    if any(not torch.equal(a, b) and not (a.isnan().any() and torch.equal(a.isnan(), b.isnan()))
           for a, b in zip(eager, again)):
        raise ValueError("random output")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ep = torch.export.export(module, tuple(tensors))
        except Exception as e:
            raise ValueError("export failed: %s: %s" % (
                type(e).__name__, str(e).strip().splitlines()[0][:160] if str(e).strip() else ""))
        random = [o for o in graph_ops(ep) if is_random(o)]
        if random:
            raise ValueError("random op %s" % random[0])
        outs = as_outputs(ep.module()(*[t.clone() for t in tensors]))
        if op.name in FLOAT64_REFERENCE:
            outs = [w.to(o.dtype) for w, o in zip(float64_outputs(module, tensors), outs)]
        try:
            core = graph_ops(ep.run_decompositions())
        except Exception as e:
            core = ["<run_decompositions failed: %s>" % type(e).__name__]
    # The inputs are in in<i>.npy; the archive need not hold them too.
    ep._example_inputs = None
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    signature = (ep.graph_module.code,
                 [(dtype_name(t.dtype), list(t.shape)) for t in tensors])
    record = {
        "dtypes": [dtype_name(t.dtype) for t in tensors],
        "shapes": [list(t.shape) for t in tensors],
        "out_dtypes": [dtype_name(t.dtype) for t in outs],
        "ops": graph_ops(ep),
        "core_ops": core,
    }
    rules = equivalences(op, tensors, outs)
    if rules:
        record["equivalent_outputs"] = rules
    if op.name in FLOAT64_REFERENCE:
        record["reference"] = "float64"
    files = {"model.pt2": buf.getvalue()}
    for i, t in enumerate(tensors):
        files["in%d.npy" % i] = npy_bytes(t)
    for i, t in enumerate(outs):
        files["out%d.npy" % i] = npy_bytes(t)
    return signature, record, files


def dtypes_for(op):
    supported = op.supported_dtypes("cpu")
    chosen = [d for d in (torch.float32,) + EXTRA_DTYPES if d in supported]
    if not chosen and torch.bool in supported:
        chosen = [torch.bool]
    return chosen


def entry_samples(args):
    """Every sample of one OpInfo entry: (name, [(record, files)], [skipped])."""
    index, per_dtype = args
    torch.set_num_threads(1)
    from torch.testing._internal.common_methods_invocations import op_db
    op = op_db[index]
    name = entry_name(op)
    kept, skipped, seen = [], [], set()
    base = {"opinfo": op.name, "variant": op.variant_test_name, "aten_name": op.aten_name,
            "family": family(op)}
    if op.name in UNDEFINED_OUTPUT or op.name.startswith("_refs."):
        return name, base, [], [dict(base, reason="output undefined or a reference duplicate")]
    for dtype in dtypes_for(op):
        seed = seed_of(name, dtype_name(dtype))
        torch.manual_seed(seed)
        try:
            samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))
        except Exception as e:
            skipped.append(dict(base, dtype=dtype_name(dtype),
                                reason="sample_inputs failed: %s" % type(e).__name__))
            continue
        taken = 0
        for k, sample in enumerate(samples[:MAX_TRIED]):
            if taken == (per_dtype if dtype == torch.float32 else 1):
                break
            try:
                signature, record, files = try_sample(op, op.op, sample, seed + k)
            except Exception as e:
                skipped.append(dict(base, dtype=dtype_name(dtype), sample=k,
                                    reason=str(e)[:200] or type(e).__name__))
                continue
            key = repr(signature)
            if key in seen:
                continue
            seen.add(key)
            taken += 1
            kept.append((dict(base, dtype=dtype_name(dtype), sample=k, **record), files))
    return name, base, kept, skipped


def select_entries(results):
    """Entries whose graphs hold their own op, then those reaching an op no
    other entry reaches (in sorted order, so the choice is deterministic)."""
    core = set()
    for packet in dir(torch.ops.aten):
        p = getattr(torch.ops.aten, packet, None)
        for ov in getattr(p, "overloads", lambda: [])():
            if torch.Tag.core in getattr(p, ov).tags:
                core.add("aten.%s.%s" % (packet, ov))
    chosen, covered = set(), set()

    def reached(kept):
        return set(o for rec, _ in kept for o in rec["ops"] + rec["core_ops"]
                   if not o.startswith("<"))

    for name, base, kept, _ in results:
        if any(o.split(".")[1] == base["aten_name"] for rec, _ in kept for o in rec["ops"]):
            chosen.add(name)
            covered |= reached(kept)
    for name, base, kept, _ in results:
        new = reached(kept) - covered
        if name not in chosen and new:
            chosen.add(name)
            covered |= new
    return chosen, sorted(covered), sorted(core)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--filter", default="", help="only entries whose name contains this")
    ap.add_argument("--per-dtype", type=int, default=2,
                    help="float32 samples per entry (one for each other dtype)")
    args = ap.parse_args()

    from torch.testing._internal.common_methods_invocations import op_db
    order = sorted(range(len(op_db)), key=lambda i: entry_name(op_db[i]))
    order = [i for i in order if args.filter in entry_name(op_db[i])]
    names = [entry_name(op_db[i]) for i in order]
    if len(set(names)) != len(names):
        sys.exit("make_opsuite.py: two OpInfo entries share a name")

    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(args.jobs, maxtasksperchild=32) as pool:
        results = []
        for r in pool.imap(entry_samples, [(i, args.per_dtype) for i in order], chunksize=4):
            results.append(r)
            if len(results) % 50 == 0:
                print("%d of %d entries" % (len(results), len(order)), file=sys.stderr, flush=True)

    chosen, covered, core = select_entries(results)
    if os.path.isdir(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    index = {"torch": torch.__version__, "samples": {}, "skipped": [], "left_out": []}
    for name, base, kept, skipped in results:
        if name not in chosen:
            # Entries none of whose samples export keep their reasons.
            if not kept:
                index["skipped"] += skipped
            index["left_out"].append(name)
            continue
        for k, (rec, files) in enumerate(kept):
            folder = "%s__%d" % (name, k)
            index["samples"][folder] = rec
            os.makedirs(os.path.join(args.out, folder))
            for f, data in sorted(files.items()):
                with open(os.path.join(args.out, folder, f), "wb") as fh:
                    fh.write(data)
        index["skipped"] += skipped
    index["core_ops_not_reached"] = [o for o in core if o not in set(covered)]
    with open(os.path.join(args.out, "index.json"), "w") as fh:
        json.dump(index, fh, indent=1, sort_keys=True)
        fh.write("\n")
    print("%d samples of %d entries written to %s; %d not written; %d of %d core ops reached" %
          (len(index["samples"]), len(chosen), args.out, len(index["skipped"]),
           len(core) - len(index["core_ops_not_reached"]), len(core)))


if __name__ == "__main__":
    main()
