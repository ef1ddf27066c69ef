#!/usr/bin/env python3
"""Writes a torch.export archive whose one weight passes 4 GiB, sparsely.

The model is one embedding lookup, out0 = table[in0], over a float32 table of
VOCAB rows of 64: the default 16781312 rows make 4 GiB + 1 MiB. Only the rows
in0 picks hold data; the rest of the table is a hole of the sparse file (the
writer seeks over it), so the archive takes a few KiB of disk and the lookup
reads a few rows. The zip has the zip64 records a zip64 writer such as
torch.export.save's puts there: sizes of 4 GiB and more in a zip64 extra field
of the local and central headers, offsets past 4 GiB in the central one, and a
zip64 end-of-central-directory record and locator.

Usage:
  make-huge-archive.py DIR [--vocab N] [--zip64] [--dense] [--break WHAT]

Writes DIR/model.pt2, DIR/in0.npy (int64 indices) and DIR/out0.npy (the rows
they pick). --zip64 writes the zip64 end records even for a small archive. --dense writes
every row (those in0 does not pick hold a filler row), so that no page of the
table is a hole: tests that measure a compile's memory read them all.
--break damages the archive for error tests: "zip64-record" cuts the zip64
end-of-central-directory record short (the locator points into the central
directory), "past-end" makes the table's entry run past the end of the file.

Python's standard library only: no torch, no numpy.
"""

import argparse
import json
import os
import struct
import zlib

DIM = 64
ROW_BYTES = DIM * 4
ALIGNMENT = 64
# torch's writer pads local headers with an extra field of id "FB".
PADDING_EXTRA_ID = 0x4246
ZIP64_EXTRA_ID = 0x0001
MARKER = 0xFFFFFFFF
DOS_DATE_1980_01_01 = (1 << 5) | 1


def crc32_zeros(crc, count):
    """zlib.crc32 of the bytes `crc` covers followed by `count` zeros,
    without feeding them: the register's update for a zero byte is linear,
    so its powers of two are squared into place."""
    def apply(columns, v):
        r = 0
        i = 0
        while v:
            if v & 1:
                r ^= columns[i]
            v >>= 1
            i += 1
        return r

    step = []
    for i in range(32):
        bit = 1 << i
        # One zero byte through the bytewise CRC table's definition.
        c = bit
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        step.append(c)
    reg = crc ^ 0xFFFFFFFF
    while count:
        if count & 1:
            reg = apply(step, reg)
        step = [apply(step, c) for c in step]
        count >>= 1
    return reg ^ 0xFFFFFFFF


def npy(path, descr, shape, payload):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % s for s in shape))
    header += " " * ((-(10 + len(header) + 1)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(payload)


def tensor_meta(dtype, sizes):
    strides, step = [], 1
    for s in reversed(sizes):
        strides.insert(0, step)
        step *= s
    return {"dtype": dtype, "sizes": [{"as_int": s} for s in sizes], "requires_grad": False,
            "device": {"type": "cpu", "index": None},
            "strides": [{"as_int": s} for s in strides],
            "storage_offset": {"as_int": 0}, "layout": 7}


def model_json(vocab, count):
    table = tensor_meta(7, [vocab, DIM])
    node = {"target": "torch.ops.aten.embedding.default",
            "inputs": [{"name": "weight", "arg": {"as_tensor": {"name": "p_emb_weight"}}, "kind": 1},
                       {"name": "indices", "arg": {"as_tensor": {"name": "idx"}}, "kind": 1}],
            "outputs": [{"as_tensor": {"name": "embedding"}}], "metadata": {},
            "is_hop_single_tensor_return": None, "name": "embedding"}
    graph = {"inputs": [{"as_tensor": {"name": "p_emb_weight"}}, {"as_tensor": {"name": "idx"}}],
             "outputs": [{"as_tensor": {"name": "embedding"}}], "nodes": [node],
             "tensor_values": {"p_emb_weight": table, "idx": tensor_meta(5, [count]),
                               "embedding": tensor_meta(7, [count, DIM])},
             "sym_int_values": {}, "sym_bool_values": {}, "is_single_tensor_return": False,
             "custom_obj_values": {}, "sym_float_values": {}}
    leaf = {"type": None, "context": None, "children_spec": []}
    in_spec = [1, {"type": "builtins.tuple", "context": "null", "children_spec": [
        {"type": "builtins.tuple", "context": "null", "children_spec": [leaf]},
        {"type": "builtins.dict", "context": "[]", "children_spec": []}]}]
    signature = {
        "input_specs": [{"parameter": {"arg": {"name": "p_emb_weight"}, "parameter_name": "emb.weight"}},
                        {"user_input": {"arg": {"as_tensor": {"name": "idx"}}}}],
        "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": "embedding"}}}}]}
    return {"graph_module": {"graph": graph, "signature": signature, "module_call_graph": [
        {"fqn": "", "signature": {"inputs": [], "outputs": [], "in_spec": json.dumps(in_spec),
                                  "out_spec": json.dumps([1, leaf]), "forward_arg_names": ["idx"]}},
        {"fqn": "emb", "signature": None}], "metadata": {}, "treespec_namedtuple_fields": {}},
        "opset_version": {"aten": 10}, "range_constraints": {},
        "schema_version": {"major": 8, "minor": 17}, "verifiers": ["TRAINING"],
        "torch_version": "2.11.0", "guards_code": []}


def row_values(row):
    return struct.pack("<%df" % DIM, *[(row % 1000) + j / 64.0 for j in range(DIM)])


class SparseZip:
    """A zip written front to back; an entry's data may be a few pieces at
    offsets within it, the rest a hole."""

    def __init__(self, f):
        self.f = f
        self.central = []

    def add(self, name, size, pieces):
        raw = name.encode()
        offset = self.f.tell()
        crc = 0
        pos = 0
        for at, data in pieces:
            crc = zlib.crc32(data, crc_zeros_to(crc, at - pos))
            pos = at + len(data)
        crc = crc_zeros_to(crc, size - pos)
        extra = b""
        if size >= MARKER:
            extra = struct.pack("<HHQQ", ZIP64_EXTRA_ID, 16, size, size)
        unpadded = offset + 30 + len(raw) + len(extra) + 4
        pad = (-unpadded) % ALIGNMENT
        extra += struct.pack("<HH", PADDING_EXTRA_ID, pad) + b"Z" * pad
        small = min(size, MARKER)
        self.f.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 45 if size >= MARKER else 20, 0, 0, 0,
                                 DOS_DATE_1980_01_01, crc, small, small, len(raw), len(extra)))
        self.f.write(raw + extra)
        start = self.f.tell()
        for at, data in pieces:
            self.f.seek(start + at)
            self.f.write(data)
        self.f.seek(start + size)
        self.central.append((raw, offset, size, crc))

    def finish(self, force_zip64, damage):
        cd_offset = self.f.tell()
        cd = b""
        for raw, offset, size, crc in self.central:
            values = [v for v in (size, size, offset) if v >= MARKER]
            extra = struct.pack("<HH", ZIP64_EXTRA_ID, 8 * len(values)) + b"".join(
                struct.pack("<Q", v) for v in values) if values else b""
            cd += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45 if values else 20, 0, 0, 0,
                              DOS_DATE_1980_01_01, crc, min(size, MARKER), min(size, MARKER),
                              len(raw), len(extra), 0, 0, 0, 0, min(offset, MARKER))
            cd += raw + extra
        self.f.write(cd)
        record = self.f.tell()
        count = len(self.central)
        if force_zip64 or record >= MARKER:
            self.f.write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count,
                                     len(cd), cd_offset))
            # A cut record: the locator points 20 bytes before the record's
            # end, so the record would overlap the locator.
            at = record + 20 if damage == "zip64-record" else record
            self.f.write(struct.pack("<IIQI", 0x07064B50, 0, at, 1))
        self.f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count,
                                 min(len(cd), MARKER), min(cd_offset, MARKER), 0))


def crc_zeros_to(crc, count):
    return crc32_zeros(crc, count) if count else crc


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir")
    parser.add_argument("--vocab", type=int, default=(4 << 30) // ROW_BYTES + 4096)
    parser.add_argument("--zip64", action="store_true")
    parser.add_argument("--dense", action="store_true")
    parser.add_argument("--break", dest="damage", choices=["zip64-record", "past-end"])
    args = parser.parse_args()

    vocab = args.vocab
    # Rows at both ends, and rows whose bytes lie past 4 GiB when it is big.
    rows = sorted({0, 1, vocab // 2, vocab - 1, max(0, vocab - 4097)})
    table = vocab * ROW_BYTES
    pieces = [(r * ROW_BYTES, row_values(r)) for r in rows]
    if args.dense:
        filler, end, dense = row_values(7), 0, []
        for at, data in pieces:
            dense += [(end, filler * ((at - end) // ROW_BYTES)), (at, data)]
            end = at + len(data)
        pieces = dense + [(end, filler * ((table - end) // ROW_BYTES))]
    weights_config = {"config": {"emb.weight": {
        "path_name": "weight_0", "is_param": True, "use_pickle": False,
        "tensor_meta": dict(tensor_meta(7, [vocab, DIM]), requires_grad=True)}}}
    entries = [
        ("model/data/weights/model_weights_config.json", json.dumps(weights_config).encode()),
        ("model/data/constants/model_constants_config.json", b'{"config": {}}'),
        ("model/models/model.json", json.dumps(model_json(vocab, len(rows))).encode()),
        ("model/archive_format", b"pt2"),
        ("model/archive_version", b"0"),
        ("model/.data/version", b"6\n"),
        ("model/byteorder", b"little"),
    ]
    path = os.path.join(args.dir, "model.pt2")
    with open(path, "wb") as f:
        z = SparseZip(f)
        z.add("model/data/weights/weight_0", table, pieces)
        for name, data in entries:
            z.add(name, len(data), [(0, data)])
        if args.damage == "past-end":
            # The central directory says the table is 1 GiB longer than it is.
            raw, offset, size, crc = z.central[0]
            z.central[0] = (raw, offset, size + (1 << 30), crc)
        z.finish(args.zip64, args.damage)
    npy(os.path.join(args.dir, "in0.npy"), "<i8", [len(rows)],
        struct.pack("<%dq" % len(rows), *rows))
    npy(os.path.join(args.dir, "out0.npy"), "<f4", [len(rows), DIM],
        b"".join(row_values(r) for r in rows))


if __name__ == "__main__":
    main()
