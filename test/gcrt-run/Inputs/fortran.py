#!/usr/bin/env python3
"""Rewrites a 2-D float32 C-order .npy file in Fortran order (column-major
data, 'fortran_order': True), without numpy, for gcrt-run's tests.

usage: fortran.py IN.npy OUT.npy
"""
import ast
import struct
import sys

data = open(sys.argv[1], "rb").read()
assert data[:6] == b"\x93NUMPY" and data[6] == 1
length = struct.unpack_from("<H", data, 8)[0]
header = ast.literal_eval(data[10:10 + length].decode("latin1"))
assert header["descr"] == "<f4" and not header["fortran_order"] and len(header["shape"]) == 2
rows, cols = header["shape"]
values = struct.unpack("<%df" % (rows * cols), data[10 + length:])
columns = [values[r * cols + c] for c in range(cols) for r in range(rows)]
text = "{'descr': '<f4', 'fortran_order': True, 'shape': (%d, %d), }" % (rows, cols)
text += " " * ((64 - (10 + len(text) + 1) % 64) % 64) + "\n"
with open(sys.argv[2], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode("latin1"))
    f.write(struct.pack("<%df" % len(columns), *columns))
