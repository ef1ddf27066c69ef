#!/bin/sh
# The decode attention kernel on an NVIDIA GPU (issues 34 and 35). Two
# steps, so that the GPU machine needs only carried binaries:
#
#   utils/gpu-check-D.sh --package BUILD_DIR OUTDIR   (here: compiles)
#   utils/gpu-check-D.sh BUILD_DIR OUTDIR             (there: runs)
#
# --package writes, per decode shape and type, the call compiled by the
# default pipeline (gc-opt --device cuda and the stage tools; column `rule`
# says whether it kept the call whole, i.e. fused) and decomposed (the
# same with `decompose` instead of `decompose-keep-whole`), with its inputs.
# Shapes: Llama-3.2-1B's decode step (32 query heads over 8 key heads, one
# query, head dim 64), the same folded as make-llm-models exports it (8
# heads of 4 query rows, no grouping), Llama-3.1-8B's (head dim 128); a
# 2048-key cache of which a bool mask [1, 1, 1, 2048] keeps the first 128
# or 2000; float32 and bfloat16.
#
# The run step needs BUILD_DIR/bin/gcrt-run, BUILD_DIR/unittests/
# RuntimeTests and python3 (utils/mknpy.py writes the inputs there, as
# sin(0.37 i + seed): they would make OUTDIR some 100 MB):
# 1. RuntimeTests' CudaAttention.* and CudaAttentionPlan.* tests (CI runs
#    the CudaAttentionOnHost ones): the kernels against a double reference
#    (every mask form, types, splits, decode shapes).
# 2. Per package: gcrt-run --device-io --bench 300 (median ms) of both, and
#    the fused output checked against the decomposed one with gcrt-run's
#    --expect (float32 rtol 1e-3 atol 1e-4, the outputs being under 1 in
#    magnitude; bfloat16 2e-2 each: both round the output).
# Prints PASS/FAIL lines and a table; exits 1 if a check failed.
set -u
usage() {
  echo "usage: utils/gpu-check-D.sh --package BUILD_DIR OUTDIR | BUILD_DIR OUTDIR" >&2
  exit 2
}
PY=${PYTHON:-python3}
shapes="llama1b_decode_128 1 32 8 1 2048 64 128
llama1b_decode_2000 1 32 8 1 2048 64 2000
llama1b_folded_128 1 8 8 4 2048 64 128
llama1b_folded_2000 1 8 8 4 2048 64 2000
llama8b_decode_128 1 32 8 1 2048 128 128
llama8b_decode_2000 1 32 8 1 2048 128 2000"

if [ "${1:-}" = --package ]; then
  [ $# -eq 3 ] && [ -x "$2/bin/gc-opt" ] || usage
  B=$(cd "$2" && pwd)
  mkdir -p "$3" || exit 1
  O=$(cd "$3" && pwd)
  decomposed="assign-target,functionalize,decompose,canonicalize,lower-precision,cse,dce,record-aliases"
  compile() { # GCIR PREFIX [PASSES]
    "$B/bin/gc-opt" "$1" --device cuda ${3:+--passes=$3} -o "$2.core.gc" &&
      "$B/bin/gc-lower" "$2.core.gc" -o "$2.loops.gc" &&
      "$B/bin/gc-codegen" "$2.loops.gc" -o "$2.kernels.gc" &&
      "$B/bin/gc-package" "$2.kernels.gc" -o "$2.gcpkg" &&
      rm -f "$2.core.gc" "$2.loops.gc" "$2.kernels.gc"
  }
  echo "$shapes" | while read -r name b h kvh l s d prefix; do
    for t in f32 bf16; do
      C="$O/$name.$t"
      mkdir -p "$C"
      qt="$t[$b, $h, $l, $d]" kt="$t[$b, $kvh, $s, $d]" extra=""
      [ "$kvh" != "$h" ] && extra=", enable_gqa=true"
      cat > "$C/call.gcir" <<GCIR
module level(aten) {
  graph @forward(%q: $qt user_input("q"), %k: $kt user_input("k"), %v: $kt user_input("v"), %m: bool[1, 1, 1, $s] user_input("m")) {
    %o = aten.scaled_dot_product_attention.default(query=%q, key=%k, value=%v, attn_mask=%m$extra) : $qt
    return %o user_output
  }
}
GCIR
      compile "$C/call.gcir" "$C/f" && compile "$C/call.gcir" "$C/d" "$decomposed" || {
        echo "FAIL compiling $name $t" >&2
        exit 1
      }
      rule=decomp
      "$B/bin/gc-opt" "$C/call.gcir" --device cuda --emit=text -o - 2>/dev/null |
        grep -q "scaled_dot_product_attention" && rule=fused
      echo $rule > "$C/rule"
    done
  done || exit 1
  echo "packages in $O"
  exit 0
fi

[ $# -eq 2 ] && [ -x "$1/bin/gcrt-run" ] && [ -d "$2" ] || usage
B=$(cd "$1" && pwd)
O=$(cd "$2" && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
failed=0
report() { # NAME STATUS(0 = pass) [detail]
  if [ "$2" -eq 0 ]; then echo "PASS $1"; else echo "FAIL $1${3:+: $3}"; failed=1; fi
}

# 1. The kernels alone.
"$B/unittests/RuntimeTests" --gtest_filter='CudaAttention.*:CudaAttentionPlan.*' > "$W/unit.log" 2>&1
rc=$?
if grep -q "SKIPPED \]" "$W/unit.log"; then
  rc=1
  echo "  (skipped: $(grep -m1 -A1 "Skipped" "$W/unit.log" | tail -1))"
fi
report "kernels vs double reference (RuntimeTests CudaAttention.*)" $rc "see the log below"
[ $rc -eq 0 ] || tail -40 "$W/unit.log"

# 2. Fused vs decomposed.
printf '%-20s %-5s %-7s %10s %10s %8s\n' shape dtype rule "fused ms" "decomp ms" speedup
echo "$shapes" | while read -r name b h kvh l s d prefix; do
  for t in f32 bf16; do
    C="$O/$name.$t"
    # Inputs shared by the shapes of equal sizes.
    q="$W/q.$t.$b.$h.$l.$d.npy" k="$W/k.$t.$b.$kvh.$s.$d.npy" v="$W/v.$t.$b.$kvh.$s.$d.npy"
    m="$W/m.$s.$prefix.npy"
    [ -f "$q" ] || $PY utils/mknpy.py "$q" $t "$b,$h,$l,$d" sin:1
    [ -f "$k" ] || $PY utils/mknpy.py "$k" $t "$b,$kvh,$s,$d" sin:2
    [ -f "$v" ] || $PY utils/mknpy.py "$v" $t "$b,$kvh,$s,$d" sin:3
    [ -f "$m" ] || $PY utils/mknpy.py "$m" bool "1,1,1,$s" prefix:$prefix
    ins="$q $k $v $m"
    ms() { # PACKAGE TAG [ARGS]: the median of gcrt-run's bench line
      p=$1 tag=$2
      shift 2
      mkdir -p "$W/o.$tag"
      "$B/bin/gcrt-run" "$p" $ins --device-io --bench 300 -o "$W/o.$tag" "$@" > "$W/$tag.log" 2>&1
      echo $? > "$W/$tag.rc"
      sed -n 's/.*median \([0-9.e+-]*\) ms.*/\1/p' "$W/$tag.log"
    }
    dm=$(ms "$C/d.gcpkg" d)
    rtol=1e-3 atol=1e-4
    [ "$t" = bf16 ] && rtol=2e-2 atol=2e-2
    f=$(ms "$C/f.gcpkg" f --rtol $rtol --atol $atol --expect "$W/o.d/out0.npy")
    rc=$(cat "$W/f.rc")
    grep -q "FAIL" "$W/f.log" && rc=1
    report "$name $t: fused output matches the decomposition's (rtol $rtol, atol $atol)" "$rc" \
      "$(grep -m1 'out0' "$W/f.log")"
    printf '%-20s %-5s %-7s %10s %10s %8s\n' "$name" "$t" "$(cat "$C/rule")" "${f:-?}" "${dm:-?}" \
      "$($PY -c "print('%.2f' % ($dm / $f))" 2>/dev/null || echo ?)"
  done
  [ $failed -eq 0 ]
done || failed=1
exit $failed
