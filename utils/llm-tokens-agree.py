#!/usr/bin/env python3
"""Checks gc's greedy tokens against PyTorch's where rounding cannot part
them (issue 34, bfloat16 decoding).

usage: llm-tokens-agree.py REFERENCE_DIR TOKENS --rtol R --atol A

REFERENCE_DIR is a folder of utils/make-llm-models.py --reference N:
tokens.npy (PyTorch's N greedy tokens) and logits.npy (the logits each was
chosen from). TOKENS is llm-generate's output ("tokens: t0 t1 ..."), from
the same prompt. If gc's logits lie within A + R |x| of each reference
logit x, gc can pick another token only at a step whose two largest
reference logits are at most the sum of those two bounds apart; the check
passes when gc's tokens are PyTorch's up
to the first step where they differ and that step is such a near tie (or
they never differ), and prints how many agreed. After a difference the two
generations continue from different tokens, so nothing later is compared.
Plain Python (no numpy), as the lit tests run it.
"""
import argparse
import array
import ast
import os
import sys


def load_npy(path):
    """A little-endian float32 or int64 .npy file in C order: (flat list, shape)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        sys.exit(f"llm-tokens-agree: {path} is not a .npy file")
    size = 2 if data[6] == 1 else 4
    length = int.from_bytes(data[8:8 + size], "little")
    header = ast.literal_eval(data[8 + size:8 + size + length].decode("latin1"))
    codes = {"<f4": "f", "<i8": "q"}
    if header["descr"] not in codes or header["fortran_order"]:
        sys.exit(f"llm-tokens-agree: {path}: {header['descr']} in C order is not float32 or int64")
    values = array.array(codes[header["descr"]])
    values.frombytes(data[8 + size + length:])
    if sys.byteorder != "little":
        values.byteswap()
    return list(values), header["shape"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("reference")
    p.add_argument("tokens")
    p.add_argument("--rtol", type=float, required=True)
    p.add_argument("--atol", type=float, required=True)
    a = p.parse_args()
    want, _ = load_npy(os.path.join(a.reference, "tokens.npy"))
    flat, (rows, vocab) = load_npy(os.path.join(a.reference, "logits.npy"))
    logits = [flat[r * vocab:(r + 1) * vocab] for r in range(rows)]
    with open(a.tokens) as f:
        text = f.read()
    if not text.startswith("tokens:"):
        sys.exit(f"llm-tokens-agree: {a.tokens} is not llm-generate's output ('tokens: ...')")
    got = [int(t) for t in text.split(":", 1)[1].split()]
    if len(got) != len(want):
        sys.exit(f"llm-tokens-agree: {len(got)} tokens in {a.tokens}, {len(want)} in the reference")
    for k, (g, w) in enumerate(zip(got, want)):
        if g == w:
            continue
        top = sorted(logits[k])[-2:]
        gap = top[1] - top[0]
        bound = 2 * a.atol + a.rtol * (abs(top[0]) + abs(top[1]))
        if gap <= bound:
            print(f"tokens agree: the first {k} of {len(want)}, then a near tie at step {k} "
                  f"(the reference's two largest logits {gap:.3g} apart, within {bound:.3g})")
            return
        sys.exit(f"llm-tokens-agree: FAIL: step {k} gives token {g}, the reference {w}, whose two "
                 f"largest logits are {gap:.3g} apart (more than {bound:.3g})")
    print(f"tokens agree: all {len(want)}")


if __name__ == "__main__":
    main()
