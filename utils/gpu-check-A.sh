#!/bin/sh
# The fused attention kernel on an NVIDIA GPU (issue 35), run from the
# checkout root of a built tree:
#
#   utils/gpu-check-A.sh BUILD_DIR
#
# 1. The kernel against a double-precision reference, every mask form,
#    float32 and bfloat16, odd lengths, head dims 40 to 128, grouped-query
#    heads, strided operands (RuntimeTests' CudaAttention* tests).
# 2. attention-cuda-run.test through lit where lit and FileCheck are found,
#    else the same comparison by hand: the compiled package (gcrt-run) against
#    the reference interpreter (gc-run).
# 3. A micro-benchmark: one scaled_dot_product_attention of bert_base's
#    shape (batch 2, 12 heads, 128 tokens, head dim 64) and of vit_b_16's
#    (batch 1, 12 heads, 197 tokens, head dim 64), float32 and bfloat16,
#    compiled fused (gc-opt --device cuda, then the stage tools) and
#    decomposed (the same
#    pipeline with `decompose` instead of `decompose-keep-whole`), timed by
#    gcrt-run --device-io --bench 500 (CUDA graphs on; median ms).
#
# Prints one PASS or FAIL line per check and a table of times; exits 1 if
# any check failed.
set -u
if [ $# -ne 1 ] || [ ! -x "$1/bin/gcrt-run" ]; then
  echo "usage: utils/gpu-check-A.sh BUILD_DIR (a built tree with bin/gcrt-run)" >&2
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
  set -- xq 2,3,37,64 xk 2,3,53,64 xv 2,3,53,64 xm 37,53 gk 2,1,53,64 yq 1,2,5,160 yk 1,2,7,160
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
printf '%-10s %-5s %12s %12s %8s\n' shape dtype "fused ms" "decomp. ms" speedup
for shape in "bert_base 2 12 128 64" "vit_b_16 1 12 197 64"; do
  set -- $shape
  name=$1 b=$2 h=$3 l=$4 d=$5
  for t in f32 bf16; do
    g="$W/$name.$t.gcir"
    ty="$t[$b, $h, $l, $d]"
    cat > "$g" <<EOF
module level(aten) {
  graph @forward(%q: $ty user_input("q"), %k: $ty user_input("k"), %v: $ty user_input("v")) {
    %o = aten.scaled_dot_product_attention.default(query=%q, key=%k, value=%v) : $ty
    return %o user_output
  }
}
EOF
    seed=0
    for x in q k v; do
      seed=$((seed + 1))
      $PY - "$W/$x.npy" "$t" "$b,$h,$l,$d" $seed <<'PY'
import math, sys
sys.path.insert(0, "utils")
import mknpy
out, dtype, shape, seed = sys.argv[1:5]
n = 1
for s in shape.split(","):
    n *= int(s)
values = ",".join("%.4f" % math.sin(0.37 * i + float(seed)) for i in range(n))
sys.argv = ["mknpy.py", out, dtype, shape, values]
mknpy.main()
PY
    done
    ms() { # PACKAGE: the median of gcrt-run's bench line
      "$B/bin/gcrt-run" "$1" "$W/q.npy" "$W/k.npy" "$W/v.npy" --device-io --bench 500 -o "$W/o.$2" \
        | sed -n 's/.*median \([0-9.e+-]*\) ms.*/\1/p'
    }
    "$B/bin/gc-opt" "$g" --device cuda -o "$W/f.core.gc" && "$B/bin/gc-lower" "$W/f.core.gc" -o "$W/f.loops.gc" &&
      "$B/bin/gc-codegen" "$W/f.loops.gc" -o "$W/f.kernels.gc" && "$B/bin/gc-package" "$W/f.kernels.gc" -o "$W/f.gcpkg" ||
      report "compile $name $t fused" 1
    "$B/bin/gc-opt" "$g" --device cuda --passes="$decomposed" -o "$W/d.core.gc" &&
      "$B/bin/gc-lower" "$W/d.core.gc" -o "$W/d.loops.gc" &&
      "$B/bin/gc-codegen" "$W/d.loops.gc" -o "$W/d.kernels.gc" &&
      "$B/bin/gc-package" "$W/d.kernels.gc" -o "$W/d.gcpkg" ||
      report "compile $name $t decomposed" 1
    f=$(ms "$W/f.gcpkg" f)
    dm=$(ms "$W/d.gcpkg" d)
    # The two agree (bf16: both round the output; 2e-2).
    tol=1e-3
    [ "$t" = bf16 ] && tol=2e-2
    "$B/bin/gc-run" "$W/d.core.gc" --input "$W/q.npy" "$W/k.npy" "$W/v.npy" --expect "$W/o.f/out0.npy" \
      --rtol $tol --atol $tol > "$W/cmp.log" 2>&1
    report "$name $t: fused output matches the decomposition's (rtol/atol $tol)" $? "$(tail -2 "$W/cmp.log")"
    printf '%-10s %-5s %12s %12s %8s\n' "$name" "$t" "${f:-?}" "${dm:-?}" \
      "$($PY -c "print('%.2f' % ($dm / $f))" 2>/dev/null || echo ?)"
  done
done
exit $failed
