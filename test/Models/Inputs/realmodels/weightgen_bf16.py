#!/usr/bin/env python3
"""Rebuilds the bfloat16 real models' archives (resnet50_bf16, bert_base_bf16,
made by make_bf16.py): the shared weightgen.py, unchanged beside this file,
with one more recipe field. An entry whose recipe says "dtype": "bf16" holds
weightgen's float32 values rounded to bfloat16 (nearest even; recipes hold
no NaN), stored as their 16 bits.

usage: weightgen_bf16.py regen [--to OUTDIR] MODEL_DIR...
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import weightgen  # noqa: E402

float32_values = weightgen.values


def encode(recipe):
    v = float32_values(recipe)
    if recipe.get("dtype", "f32") == "f32":
        return v
    if recipe["dtype"] != "bf16":
        raise SystemExit("weightgen_bf16.py: unknown recipe dtype %r" % recipe["dtype"])
    u = v.view(np.uint32)
    rounded = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    return rounded.astype(np.uint16)


def regen(d, to=None):
    """weightgen.regen for archives whose recipes may say bf16 (float32
    recipes give weightgen's values unchanged)."""
    # weightgen.regen looks values() up in its module's globals at each call.
    weightgen.values = encode
    return weightgen.regen(d, to)


if __name__ == "__main__":
    args = sys.argv[1:]
    to = None
    if len(args) >= 2 and args[0] == "regen" and args[1] == "--to":
        to, args = args[2], args[:1] + args[3:]
    if len(args) < 2 or args[0] != "regen":
        raise SystemExit("usage: weightgen_bf16.py regen [--to OUTDIR] MODEL_DIR...")
    for d in args[1:]:
        print("regenerated", regen(d, to))
