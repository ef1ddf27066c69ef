#!/usr/bin/env python3
"""Writes a small .npy file without numpy, for lit tests.

usage: mknpy.py OUT.npy DTYPE SHAPE VALUES
  DTYPE   f32, f64, i64, i32, bool, f16, bf16 (as gc writes it: numpy's two-byte void '|V2'
          holding the bits, rounded to nearest even), ...
  SHAPE   comma-separated sizes; "" for a 0-dim array
  VALUES  comma-separated numbers in row-major order, "iota" for 0, 1, ...,
          "sin:SEED" for sin(0.37 i + SEED), or "prefix:N" for 1 at the first N
          elements and 0 after (a KV cache's valid prefix as a mask)
"""
import math
import struct
import sys

DTYPES = {"f16": ("<f2", "e"), "f32": ("<f4", "f"), "f64": ("<f8", "d"), "i8": ("|i1", "b"),
          "u8": ("|u1", "B"), "i16": ("<i2", "h"), "i32": ("<i4", "i"), "i64": ("<i8", "q"),
          "bool": ("|b1", "?"), "bf16": ("|V2", "H")}


def bfloat16_bits(v):
    x = struct.unpack("<I", struct.pack("<f", v))[0]
    if v != v:
        return (x >> 16) | 0x40
    return ((x + 0x7FFF + ((x >> 16) & 1)) >> 16) & 0xFFFF


def main():
    out, dtype, shape_text, values_text = sys.argv[1:5]
    descr, fmt = DTYPES[dtype]
    shape = [int(s) for s in shape_text.split(",") if s]
    count = 1
    for s in shape:
        count *= s
    if values_text == "iota":
        values = list(range(count))
    elif values_text.startswith("sin:"):
        seed = float(values_text[4:])
        values = [math.sin(0.37 * i + seed) for i in range(count)]
    elif values_text.startswith("prefix:"):
        keep = int(values_text[7:])
        values = [1 if i < keep else 0 for i in range(count)]
    else:
        values = [float(v) for v in values_text.split(",") if v]
    if len(values) != count:
        sys.exit("mknpy.py: %d values for shape %s" % (len(values), shape))
    if dtype == "bf16":
        values = [bfloat16_bits(v) for v in values]
    elif fmt not in "efd":
        values = [int(v) for v in values]
    dims = ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(out, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (count, fmt), *values))


if __name__ == "__main__":
    main()
