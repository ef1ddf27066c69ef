#!/bin/sh
# The fused attention kernel on an NVIDIA GPU (issues 35 and 34), run from
# the checkout root of a built tree (a few minutes on an H200):
#
#   utils/gpu-check-T.sh BUILD_DIR
#
# 1. The kernel against a double-precision reference (RuntimeTests'
#    CudaAttention* tests): every mask form, float32, bfloat16 and float16,
#    odd lengths, head dims 40 to 128, grouped-query heads, strided
#    operands, keys split across blocks, and decode (32 query heads over 8
#    key heads, one query, 17, 700 and 2048 keys with a bool mask keeping a
#    prefix, head dims 64 and 128).
# 2. attention-cuda-run.test through lit where lit and FileCheck are found,
#    else the same comparison by hand: the compiled package (gcrt-run) against
#    the reference interpreter (gc-run).
# 3. A micro-benchmark, fused against decomposed, float32 and bfloat16: one
#    scaled_dot_product_attention of bert_base's shape (1 x 12 heads x 128
#    tokens, head dim 64), vit_b_16's (1 x 12 x 197 x 64), llama_50m's (8
#    query heads over 2 key heads, 64 tokens, head dim 64, causal), and the
#    decode step of Llama-3.2-1B (32 query heads over 8 key heads, one query,
#    a 2048-key cache of which a bool mask keeps the first 128 or 2000, head
#    dim 64) and of Llama-3.1-8B (the same with head dim 128). Each is
#    compiled by the default pipeline (gc-opt --device cuda, then the stage
#    tools: the call stays whole where runsWhole says so; column `rule`) and
#    decomposed (the same pipeline with `decompose` instead of
#    `decompose-keep-whole`), and timed by gcrt-run --device-io --bench 500
#    (CUDA graphs on; median ms). Where the rule picks the fused kernel, it
#    must be at least as fast as the decomposition.
#
# Prints one PASS or FAIL line per check and a table of times; exits 1 if
# any check failed.
set -u
if [ $# -ne 1 ] || [ ! -x "$1/bin/gcrt-run" ]; then
  echo "usage: utils/gpu-check-T.sh BUILD_DIR (a built tree with bin/gcrt-run)" >&2
  exit 2
fi
B=$(cd "$1" && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
PY=${PYTHON:-python3}
failed=0
report() { # NAME STATUS(0 = pass) [detail]
  if [ "$2" -eq 0 ]; then echo "PASS $1"; else echo "FAIL $1${3:+: $3}"; failed=1; fi
}

# 1. The kernel alone.
"$B/unittests/RuntimeTests" --gtest_filter='CudaAttention*' > "$W/unit.log" 2>&1
rc=$?
if grep -q "SKIPPED" "$W/unit.log"; then
  rc=1
  echo "  (skipped: $(grep -m1 -A1 SKIPPED "$W/unit.log" | tail -1))"
fi
report "kernel vs double reference (RuntimeTests CudaAttention*)" $rc "see the log below"
[ $rc -eq 0 ] || tail -40 "$W/unit.log"

# 2. The whole chain on the test graph.
LIT=/usr/lib/llvm-16/build/utils/lit/lit.py
if [ -f "$LIT" ] && [ -x /usr/lib/llvm-16/bin/FileCheck ]; then
  $PY "$LIT" -sv "$B/test/Codegen/attention-cuda-run.test" > "$W/lit.log" 2>&1
  rc=$?
  grep -q "Unsupported" "$W/lit.log" && rc=1
  report "attention-cuda-run.test (lit)" $rc
  [ $rc -eq 0 ] || tail -30 "$W/lit.log"
else
  G=test/Codegen/attention-cuda.gcir
  set -- xq 2,3,13,64 xk 2,3,53,64 xv 2,3,53,64 xm 13,53 gk 2,1,53,64 yq 1,2,5,160 yk 1,2,7,160
  ins=""
  while [ $# -gt 0 ]; do
    $PY utils/mknpy.py "$W/$1.npy" f32 "$2" iota
    ins="$ins $W/$1.npy"
    shift 2
  done
  mkdir -p "$W/out"
  "$B/bin/gc-opt" $G --device cuda -o "$W/core.gc" && "$B/bin/gc-lower" "$W/core.gc" -o "$W/loops.gc" &&
    "$B/bin/gc-codegen" "$W/loops.gc" -o "$W/kernels.gc" && "$B/bin/gc-package" "$W/kernels.gc" -o "$W/a.gcpkg" &&
    "$B/bin/gcrt-run" "$W/a.gcpkg" $ins -o "$W/out" --runs 2 > /dev/null &&
    "$B/bin/gc-run" $G --input $ins --expect "$W"/out/out[0-5].npy --rtol 1e-3 --atol 1e-4 > "$W/run.log" 2>&1 &&
    "$B/bin/gc-run" $G --input $ins --expect "$W"/out/out[0-6].npy --rtol 2e-2 --atol 2e-2 >> "$W/run.log" 2>&1
  rc=$?
  report "attention-cuda.gcir: gcrt-run vs gc-run (f32 rtol 1e-3 atol 1e-4; bf16 2e-2)" $rc
  [ $rc -eq 0 ] || cat "$W/run.log"
fi

# 3. Fused vs decomposed.
decomposed="assign-target,functionalize,decompose,canonicalize,lower-precision,cse,dce,record-aliases"
# NAME BATCH HEADS KV_HEADS QUERIES KEYS DIM MASK (none, causal, or the
# prefix of the keys a bool mask keeps)
shapes="bert_base 1 12 12 128 128 64 none
vit_b_16 1 12 12 197 197 64 none
llama_50m 1 8 2 64 64 64 causal
llama1b_decode_128 1 32 8 1 2048 64 128
llama1b_decode_2000 1 32 8 1 2048 64 2000
llama8b_decode_128 1 32 8 1 2048 128 128
llama8b_decode_2000 1 32 8 1 2048 128 2000"
# OUT DTYPE SHAPE SEED|prefix=N: a .npy of sin(0.37 i + SEED), or a bool
# mask keeping the first N elements, written without numpy.
npy() {
  $PY - "$@" <<'PY'
import array, math, struct, sys
out, dtype, shape, what = sys.argv[1:5]
dims = [int(s) for s in shape.split(",")]
n = 1
for s in dims:
    n *= s
if what.startswith("prefix="):
    keep = int(what[len("prefix="):])
    descr, data = "|b1", bytes(1 if i < keep else 0 for i in range(n))
else:
    f = array.array("f", (math.sin(0.37 * i + float(what)) for i in range(n)))
    if dtype == "f32":
        descr, data = "<f4", f.tobytes()
    else:  # bfloat16 bits, rounded to nearest even
        u = array.array("I", f.tobytes())
        descr = "|V2"
        data = array.array("H", (((x + 0x7FFF + ((x >> 16) & 1)) >> 16) & 0xFFFF
                                 for x in u)).tobytes()
header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s,), }" % (
    descr, ", ".join(map(str, dims)))
header += " " * (63 - (len(header) + 10) % 64) + "\n"
with open(out, "wb") as fh:
    fh.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)
PY
}
compile() { # GCIR PREFIX [PASSES]
  "$B/bin/gc-opt" "$1" --device cuda ${3:+--passes=$3} -o "$2.core.gc" &&
    "$B/bin/gc-lower" "$2.core.gc" -o "$2.loops.gc" &&
    "$B/bin/gc-codegen" "$2.loops.gc" -o "$2.kernels.gc" &&
    "$B/bin/gc-package" "$2.kernels.gc" -o "$2.gcpkg"
}
printf '%-20s %-5s %-7s %10s %10s %8s\n' shape dtype rule "fused ms" "decomp ms" speedup
echo "$shapes" > "$W/shapes"
while read -r name b h kvh l s d mask; do
  for t in f32 bf16; do
    g="$W/$name.$t.gcir"
    qt="$t[$b, $h, $l, $d]" kt="$t[$b, $kvh, $s, $d]"
    extra="" margs="" mins=""
    [ "$kvh" != "$h" ] && extra="$extra, enable_gqa=true"
    case $mask in
    none) ;;
    causal) extra="$extra, is_causal=true" ;;
    *)
      margs=", %m: bool[1, 1, 1, $s] user_input(\"m\")"
      extra="$extra, attn_mask=%m"
      npy "$W/m.npy" bool "1,1,1,$s" "prefix=$mask"
      mins="$W/m.npy"
      ;;
    esac
    cat > "$g" <<GCIR
module level(aten) {
  graph @forward(%q: $qt user_input("q"), %k: $kt user_input("k"), %v: $kt user_input("v")$margs) {
    %o = aten.scaled_dot_product_attention.default(query=%q, key=%k, value=%v$extra) : $qt
    return %o user_output
  }
}
GCIR
    npy "$W/q.npy" $t "$b,$h,$l,$d" 1
    npy "$W/k.npy" $t "$b,$kvh,$s,$d" 2
    npy "$W/v.npy" $t "$b,$kvh,$s,$d" 3
    ins="$W/q.npy $W/k.npy $W/v.npy $mins"
    ms() { # PACKAGE TAG: the median of gcrt-run's bench line
      "$B/bin/gcrt-run" "$1" $ins --device-io --bench 500 -o "$W/o.$2" |
        sed -n 's/.*median \([0-9.e+-]*\) ms.*/\1/p'
    }
    compile "$g" "$W/f" || report "compile $name $t fused" 1
    compile "$g" "$W/d" "$decomposed" || report "compile $name $t decomposed" 1
    # What the default pipeline picked: the call whole, or its decomposition.
    rule=decomp
    "$B/bin/gc-opt" "$W/f.core.gc" --passes= --emit=text -o - 2>/dev/null |
      grep -q "scaled_dot_product_attention" && rule=fused
    f=$(ms "$W/f.gcpkg" f)
    dm=$(ms "$W/d.gcpkg" d)
    # The two agree: float32 at rtol 1e-3 and atol 1e-4 (the outputs are
    # under 1 in magnitude), bf16 at 2e-2 (both round the output).
    rtol=1e-3 atol=1e-4
    [ "$t" = bf16 ] && rtol=2e-2 atol=2e-2
    "$B/bin/gc-run" "$W/d.core.gc" --input $ins --expect "$W/o.f/out0.npy" \
      --rtol $rtol --atol $atol > "$W/cmp.log" 2>&1
    report "$name $t: the default pipeline's output matches the decomposition's (rtol $rtol, atol $atol)" \
      $? "$(tail -2 "$W/cmp.log")"
    printf '%-20s %-5s %-7s %10s %10s %8s\n' "$name" "$t" "$rule" "${f:-?}" "${dm:-?}" \
      "$($PY -c "print('%.2f' % ($dm / $f))" 2>/dev/null || echo ?)"
    if [ "$rule" = fused ]; then
      $PY -c "import sys; sys.exit(0 if $f <= $dm else 1)" 2>/dev/null
      report "$name $t: the rule picks the fused kernel, and it is at least as fast" $?
    fi
  done
done < "$W/shapes"
exit $failed
