#!/usr/bin/env python3
"""Damages packages and compares .npy outputs, for the package lit tests.
Plain Python (no numpy), so that it runs under any interpreter lit uses.

usage:
  pkgtool.py truncate PKG OUT BYTES      the first BYTES bytes of PKG
  pkgtool.py flip PKG OUT ENTRY          one bit of ENTRY's data flipped (CRC left stale)
  pkgtool.py set PKG OUT ENTRY TEXT      ENTRY's data replaced by TEXT of the same
                                         length, with its CRCs updated
  pkgtool.py reweight PT2 OUT SCALE [FQN]
                                         a torch.export archive of the same layout whose
                                         float32 weights (or weight FQN alone) are
                                         multiplied by SCALE, CRCs updated: the same
                                         architecture with other weights, without torch
  pkgtool.py replan PKG OUT HOW          the runtime plan (plan.gcpl.zst) damaged, recompressed
                                         with the zstd tool and stored again, CRCs and offsets
                                         updated (the entries before it keep their places):
                                         HOW is garbage (bytes that are no plan), half (its
                                         first half) or version (its major version made 9)
  pkgtool.py list PKG                    per entry: name, method, data offset modulo 64
  pkgtool.py cat PKG ENTRY               ENTRY's text (a .zst entry decompressed)
  pkgtool.py compare GOT.npy WANT.npy    exit 1 unless allclose (1e-4) float32 arrays
"""
import io
import json
import os
import struct
import subprocess
import sys
import tempfile
import zipfile
import zlib


def entry_offsets(data, name):
    """(local header, data, central header) offsets and the size of entry `name`."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        info = z.getinfo(name)
    local = info.header_offset
    name_len, extra_len = struct.unpack_from("<HH", data, local + 26)
    eocd = data.rindex(b"PK\x05\x06")
    central = struct.unpack_from("<I", data, eocd + 16)[0]
    while True:
        n = struct.unpack_from("<H", data, central + 28)[0]
        if data[central + 46:central + 46 + n] == name.encode():
            break
        central += 46 + n + sum(struct.unpack_from("<HH", data, central + 30))
    return local, local + 30 + name_len + extra_len, central, info.file_size


def read_npy(path):
    with open(path, "rb") as f:
        blob = f.read()
    assert blob[:6] == b"\x93NUMPY", path
    if blob[6] == 1:
        hlen, start = struct.unpack_from("<H", blob, 8)[0], 10
    else:
        hlen, start = struct.unpack_from("<I", blob, 8)[0], 12
    header = eval(blob[start:start + hlen].decode("latin1"))
    assert header["descr"] == "<f4" and not header["fortran_order"], header
    count = 1
    for s in header["shape"]:
        count *= s
    body = blob[start + hlen:]
    return header["shape"], struct.unpack("<%df" % count, body[:4 * count])


# torch.export's ScalarType for float32 in a weights config's tensor_meta.
FLOAT32 = 7


def reweight(data, scale, only):
    """Scales the float32 weights of the archive `data` in place."""
    names = zipfile.ZipFile(io.BytesIO(bytes(data))).namelist()
    configs = [n for n in names if n.endswith("/data/weights/model_weights_config.json")]
    assert len(configs) == 1, "no single weights config in the archive"
    folder = configs[0].rsplit("/", 1)[0]
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        config = json.loads(z.read(configs[0]))["config"]
    done = 0
    for fqn, w in sorted(config.items()):
        if (only and fqn != only) or w["tensor_meta"]["dtype"] != FLOAT32:
            continue
        local, start, central, size = entry_offsets(bytes(data), folder + "/" + w["path_name"])
        count = size // 4
        values = struct.unpack_from("<%df" % count, data, start)
        struct.pack_into("<%df" % count, data, start, *[v * scale for v in values])
        crc = zlib.crc32(bytes(data[start:start + size])) & 0xFFFFFFFF
        struct.pack_into("<I", data, local + 14, crc)
        struct.pack_into("<I", data, central + 16, crc)
        done += 1
    assert done, "no float32 weight to scale"


def zstd(args, data):
    """`zstd ARGS` from a file (so that a compressed frame declares its size)."""
    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "in"), os.path.join(d, "out")
        with open(src, "wb") as f:
            f.write(data)
        subprocess.run(["zstd", "-q", *args, src, "-o", dst], check=True)
        with open(dst, "rb") as f:
            return f.read()


def damage_plan(plan, how):
    if how == "garbage":
        return b"this is not a runtime plan at all"
    if how == "half":
        return plan[:len(plan) // 2]
    assert how == "version", how
    # The root table's first field is the PlanVersion struct: major, minor.
    plan = bytearray(plan)
    root = struct.unpack_from("<I", plan, 0)[0]
    vtable = root - struct.unpack_from("<i", plan, root)[0]
    field = struct.unpack_from("<H", plan, vtable + 4)[0]
    struct.pack_into("<I", plan, root + field, 9)
    return bytes(plan)


def replace_entry(data, name, new):
    """`data` with entry `name`'s stored bytes replaced by `new`, of any size;
    the later entries and the central directory move."""
    local, start, central, size = entry_offsets(data, name)
    assert struct.unpack_from("<H", data, local + 6)[0] & 8 == 0, "data descriptor"
    crc = zlib.crc32(new) & 0xFFFFFFFF
    header = bytearray(data[local:start])
    struct.pack_into("<III", header, 14, crc, len(new), len(new))
    delta = len(new) - size
    eocd = data.rindex(b"PK\x05\x06")
    cd_start, = struct.unpack_from("<I", data, eocd + 16)
    out = bytearray(data[:local] + header + new + data[start + size:cd_start])
    cd = bytearray(data[cd_start:eocd])
    at = 0
    while at < len(cd):
        offset, = struct.unpack_from("<I", cd, at + 42)
        if cd_start + at == central:
            struct.pack_into("<III", cd, at + 16, crc, len(new), len(new))
        elif offset > local:
            struct.pack_into("<I", cd, at + 42, offset + delta)
        at += 46 + sum(struct.unpack_from("<HHH", cd, at + 28))
    end = bytearray(data[eocd:])
    struct.pack_into("<I", end, 16, cd_start + delta)
    return bytes(out + cd + end)


def main():
    cmd = sys.argv[1]
    if cmd == "compare":
        (gshape, got), (wshape, want) = read_npy(sys.argv[2]), read_npy(sys.argv[3])
        if tuple(gshape) != tuple(wshape):
            sys.exit("shape %s != %s" % (gshape, wshape))
        worst = max((abs(g - w) - 1e-4 * abs(w) for g, w in zip(got, want)), default=0)
        if worst > 1e-4:
            sys.exit("mismatch: worst excess error %g" % worst)
        print("match: %d elements" % len(got))
        return
    with open(sys.argv[2], "rb") as f:
        data = bytearray(f.read())
    if cmd == "list":
        for info in zipfile.ZipFile(io.BytesIO(bytes(data))).infolist():
            _, start, _, _ = entry_offsets(bytes(data), info.filename)
            print(info.filename, info.compress_type, start % 64)
        return
    if cmd == "cat":
        _, start, _, size = entry_offsets(bytes(data), sys.argv[3])
        text = bytes(data[start:start + size])
        sys.stdout.write((zstd(["-d"], text) if sys.argv[3].endswith(".zst") else text).decode())
        return
    out = sys.argv[3]
    if cmd == "truncate":
        data = data[:int(sys.argv[4])]
    elif cmd == "flip":
        _, start, _, size = entry_offsets(bytes(data), sys.argv[4])
        data[start + size // 2] ^= 0x10
    elif cmd == "set":
        local, start, central, size = entry_offsets(bytes(data), sys.argv[4])
        text = sys.argv[5].encode().decode("unicode_escape").encode("latin1")
        assert len(text) == size, "replacement must keep the entry's size"
        data[start:start + size] = text
        crc = zlib.crc32(text) & 0xFFFFFFFF
        struct.pack_into("<I", data, local + 14, crc)
        struct.pack_into("<I", data, central + 16, crc)
    elif cmd == "replan":
        _, start, _, size = entry_offsets(bytes(data), "plan.gcpl.zst")
        plan = zstd(["-d"], bytes(data[start:start + size]))
        frame = zstd(["-12"], damage_plan(plan, sys.argv[4]))
        data = replace_entry(bytes(data), "plan.gcpl.zst", frame)
    elif cmd == "reweight":
        reweight(data, float(sys.argv[4]), sys.argv[5] if len(sys.argv) > 5 else None)
    else:
        sys.exit(__doc__)
    with open(out, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
