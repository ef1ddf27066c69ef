"""Checks every entry of a gc cache folder against the entry format of
docs/cache.md, independently of gc's reader: the magic, the length, and the
checksum recomputed here. Prints one line per kind of entry; exits 1 naming
the first bad entry, or a temporary file left behind."""
import os
import re
import struct
import sys

MASK = (1 << 64) - 1
MULTIPLIER = 0x9E3779B97F4A7C15


def rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & MASK


def checksum(payload):
    lanes = [1, 2, 3, 4]
    padded = payload + b"\0" * (-len(payload) % 32)
    for off in range(0, len(padded), 32):
        for i, word in enumerate(struct.unpack_from("<4Q", padded, off)):
            lanes[i] = rotl(((lanes[i] ^ word) * MULTIPLIER) & MASK, 29)
    h = len(payload)
    for lane in lanes:
        h = (rotl(h ^ lane, 27) * MULTIPLIER) & MASK
    return h ^ (h >> 32)


def main(cache):
    counts = {"package": 0, "object": 0}
    for dirpath, _, files in os.walk(os.path.join(cache, "objects")):
        for name in sorted(files):
            path = os.path.join(dirpath, name)
            if not re.fullmatch(r"[0-9a-f]{62}\.o", name) or not re.fullmatch(
                    r"[0-9a-f]{2}", os.path.basename(dirpath)):
                sys.exit(f"{path}: not an entry's name (a temporary file left behind?)")
            data = open(path, "rb").read()
            if data[:8] != b"gccache1":
                sys.exit(f"{path}: bad magic")
            (size,) = struct.unpack_from("<Q", data, 8)
            if len(data) != 16 + size + 8:
                sys.exit(f"{path}: {len(data)} bytes for a payload of {size}")
            payload = data[16:16 + size]
            (stored,) = struct.unpack_from("<Q", data, 16 + size)
            if stored != checksum(payload):
                sys.exit(f"{path}: checksum mismatch")
            counts["package" if payload[:4] == b"PK\3\4" else "object"] += 1
    for kind, n in sorted(counts.items()):
        print(f"{kind} entries: {n}")


main(sys.argv[1])
