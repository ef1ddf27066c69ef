#!/usr/bin/env python3
"""Builds a small torch.export-style .pt2 archive from a JSON spec.

A test helper for the importer's lit tests: it needs no PyTorch, so tests can
describe exactly the archive they want, including broken ones.

Usage:
  mkpt2.py SPEC.json -o OUT.pt2 [--root model] [--compress ENTRY]
           [--truncate N] [--drop ENTRY] [--set PATH=JSON]

SPEC.json is an object:
  "model":     the exported program JSON, written to models/model.json
  "weights":   {"<fqn>": TENSOR, ...}, in archive order
  "constants": {"<fqn>": TENSOR, ...}
  "extra_entries": {"<name>": "text"}: more entries under the root; a name
               that is already there (say "byteorder") replaces its text
TENSOR is an object:
  "dtype":  "f32", "f64", "f16", "bf16", "i64", "i32", "i16", "i8", "u8",
            "bool", or a torch ScalarType number (one gc may not know)
  "shape":  [sizes]
  "values": [numbers] (nested lists are flattened) or "fill": number;
            zeros when neither is given
  optional: "path_name" (default weight_<i> / constant_<i>), "is_param"
            (default true for weights, false for constants), "pickle"
            (use_pickle, default false), "requires_grad" (default is_param),
            "strides" (default contiguous), "storage_offset" (default 0),
            "size_override" (write that many bytes instead: zero-padded or
            cut, to make a size mismatch)

Entries go under ROOT/ (default "model"), stored and 64-byte aligned (the
padding is an extra field in the local header, as in ZipWriter), with fixed
timestamps so that the output is deterministic. ENTRY names in --compress
(store it deflated) and --drop (leave it out) are relative to the root and
may be repeated. --set PATH=JSON replaces one value of the spec before the
archive is built: PATH is dot-separated keys (list indices as numbers), as
in --set model.schema_version.major=9; it may be repeated. --truncate N keeps the first N bytes of the archive, or,
when N is negative, drops -N bytes from its end.
"""

import argparse
import json
import struct
import sys
import zlib

# torch ScalarType numbers, and how one element is packed (little-endian).
DTYPES = {
    "u8": (1, "B"),
    "i8": (2, "b"),
    "i16": (3, "h"),
    "i32": (4, "i"),
    "i64": (5, "q"),
    "f16": (6, "e"),
    "f32": (7, "f"),
    "f64": (8, "d"),
    "bool": (12, "?"),
    "bf16": (13, None),
}
ALIGNMENT = 64
# Android zipalign's extra block id, as the C++ ZipWriter uses.
ALIGNMENT_EXTRA_ID = 0xD935
DOS_DATE_1980_01_01 = (1 << 5) | 1
DOS_TIME_MIDNIGHT = 0


class SpecError(Exception):
    pass


def flatten(values):
    for v in values:
        if isinstance(v, list):
            yield from flatten(v)
        else:
            yield v


def bfloat16_bytes(values):
    """bfloat16 is the high half of a float32, rounded to nearest even."""
    out = bytearray()
    for v in values:
        bits = struct.unpack("<I", struct.pack("<f", float(v)))[0]
        if (bits & 0x7F800000) == 0x7F800000 and bits & 0xFFFF:
            half = (bits >> 16) | 0x40  # keep NaN a NaN
        else:
            half = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        out += struct.pack("<H", half & 0xFFFF)
    return bytes(out)


def tensor_bytes(fqn, spec, dtype_name):
    shape = spec.get("shape", [])
    numel = 1
    for s in shape:
        numel *= s
    if "values" in spec:
        values = list(flatten(spec["values"]))
        if len(values) != numel:
            raise SpecError(
                f"{fqn}: {len(values)} values for shape {shape} ({numel} elements)")
    else:
        values = [spec.get("fill", 0)] * numel

    if dtype_name is None:
        data = b""  # an unknown dtype has no packing; size_override decides
    elif dtype_name == "bf16":
        data = bfloat16_bytes(values)
    else:
        fmt = DTYPES[dtype_name][1]
        if fmt == "?":
            values = [bool(v) for v in values]
        elif fmt in "efd":
            values = [float(v) for v in values]
        else:
            values = [int(v) for v in values]
        data = struct.pack(f"<{numel}{fmt}", *values)

    if "size_override" in spec:
        n = spec["size_override"]
        data = data[:n] + b"\0" * max(0, n - len(data))
    return data


def contiguous_strides(shape):
    strides = []
    step = 1
    for s in reversed(shape):
        strides.append(step)
        step *= max(s, 1)
    return list(reversed(strides))


def tensor_table(tensors, prefix, default_is_param):
    """Returns ([(path_name, bytes)], config object) for weights or constants."""
    files = []
    config = {}
    for i, (fqn, spec) in enumerate(tensors.items()):
        dtype = spec.get("dtype", "f32")
        if isinstance(dtype, int):
            number = dtype
            dtype_name = next(
                (k for k, (n, _) in DTYPES.items() if n == number), None)
        elif dtype in DTYPES:
            dtype_name = dtype
            number = DTYPES[dtype][0]
        else:
            raise SpecError(f"{fqn}: unknown dtype '{dtype}'")
        shape = spec.get("shape", [])
        path_name = spec.get("path_name", f"{prefix}_{i}")
        is_param = spec.get("is_param", default_is_param)
        files.append((path_name, tensor_bytes(fqn, spec, dtype_name)))
        config[fqn] = {
            "path_name": path_name,
            "is_param": is_param,
            "use_pickle": spec.get("pickle", False),
            "tensor_meta": {
                "dtype": number,
                "sizes": [{"as_int": s} for s in shape],
                "requires_grad": spec.get("requires_grad", is_param),
                "device": {"type": "cpu", "index": None},
                "strides": [{"as_int": s}
                            for s in spec.get("strides", contiguous_strides(shape))],
                "storage_offset": {"as_int": spec.get("storage_offset", 0)},
                "layout": 7,
            },
        }
    return files, {"config": config}


def archive_entries(spec):
    """The archive's entries, relative to the root, in torch's order."""
    if "model" not in spec:
        raise SpecError("the spec has no \"model\"")
    weights, weights_config = tensor_table(spec.get("weights", {}), "weight", True)
    constants, constants_config = tensor_table(
        spec.get("constants", {}), "constant", False)
    entries = [(f"data/weights/{p}", b) for p, b in weights]
    entries.append(("data/weights/model_weights_config.json",
                    json.dumps(weights_config).encode()))
    entries += [(f"data/constants/{p}", b) for p, b in constants]
    entries.append(("data/constants/model_constants_config.json",
                    json.dumps(constants_config).encode()))
    entries += [
        ("models/model.json", json.dumps(spec["model"]).encode()),
        ("archive_format", b"pt2"),
        ("archive_version", b"0"),
        # What torch 2.8's torch.export.save writes.
        (".data/version", b"6\n"),
        ("byteorder", b"little"),
    ]
    index = {name: i for i, (name, _) in enumerate(entries)}
    for name, text in spec.get("extra_entries", {}).items():
        if name in index:
            entries[index[name]] = (name, text.encode())
        else:
            entries.append((name, text.encode()))
    return entries


def zip_archive(entries, compress):
    """A zip of (name, bytes) entries; names in `compress` are deflated."""
    out = bytearray()
    central = bytearray()
    for name, data in entries:
        raw_name = name.encode()
        crc = zlib.crc32(data)
        if name in compress:
            deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
            stored = deflate.compress(data) + deflate.flush()
            method, version = 8, 20
        else:
            stored, method, version = data, 0, 10
        offset = len(out)
        unpadded = offset + 30 + len(raw_name) + 6
        extra_len = 6 + (-unpadded) % ALIGNMENT
        extra = struct.pack("<HHH", ALIGNMENT_EXTRA_ID, extra_len - 4, ALIGNMENT)
        extra += b"\0" * (extra_len - 6)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, version, 0, method,
                           DOS_TIME_MIDNIGHT, DOS_DATE_1980_01_01, crc,
                           len(stored), len(data), len(raw_name), extra_len)
        out += raw_name + extra + stored
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, version,
                               0, method, DOS_TIME_MIDNIGHT,
                               DOS_DATE_1980_01_01, crc, len(stored), len(data),
                               len(raw_name), 0, 0, 0, 0, 0, offset)
        central += raw_name
    cd_offset = len(out)
    out += central
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries),
                       len(entries), len(central), cd_offset, 0)
    return bytes(out)


def set_value(spec, assignment):
    path, _, text = assignment.partition("=")
    keys = path.split(".")
    target = spec
    for key in keys[:-1]:
        target = target[int(key) if isinstance(target, list) else key]
    last = keys[-1]
    target[int(last) if isinstance(target, list) else last] = json.loads(text)


def main():
    parser = argparse.ArgumentParser(
        description="Build a torch.export-style .pt2 archive from a JSON spec.")
    parser.add_argument("spec", help="the JSON spec")
    parser.add_argument("-o", dest="output", required=True, help="output .pt2")
    parser.add_argument("--root", default="model", help="the archive's folder")
    parser.add_argument("--compress", action="append", default=[],
                        metavar="ENTRY", help="store ENTRY deflated")
    parser.add_argument("--drop", action="append", default=[],
                        metavar="ENTRY", help="leave ENTRY out")
    parser.add_argument("--truncate", type=int, metavar="N",
                        help="keep N bytes (drop -N from the end if negative)")
    parser.add_argument("--set", action="append", default=[], metavar="PATH=JSON",
                        help="replace one value of the spec")
    args = parser.parse_args()

    try:
        with open(args.spec) as f:
            spec = json.load(f)
        for assignment in args.set:
            set_value(spec, assignment)
        entries = archive_entries(spec)
    except (OSError, ValueError, KeyError, IndexError, SpecError) as e:
        parser.exit(1, f"mkpt2.py: error: {args.spec}: {e}\n")

    names = {name for name, _ in entries}
    for name in args.compress + args.drop:
        if name not in names:
            parser.exit(1, f"mkpt2.py: error: no entry '{name}' in the archive\n")
    entries = [(f"{args.root}/{name}", data) for name, data in entries
               if name not in args.drop]
    data = zip_archive(entries, {f"{args.root}/{n}" for n in args.compress})
    if args.truncate is not None:
        data = data[:args.truncate]
    with open(args.output, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
