#!/bin/sh
# A decode step's small loop kernels on an NVIDIA GPU (issue 34): the KV-cache
# writes and the query's rotary embedding as one kernel. Two steps, so that
# the GPU machine compiles nothing:
#
#   utils/gpu-check-L.sh --package BUILD_DIR OUTDIR          (here: compiles)
#   utils/gpu-check-L.sh BUILD_DIR OUTDIR [--prefill PREFILL.gcpkg]... [DECODE.gcpkg...]
#                                                            (there: runs)
#
# --package writes into OUTDIR the tiny decoders' prefill and decode
# programs compiled for cuda (test/Models/Inputs/llm_tiny{,_bf16}, weights
# inside), and the graphs of test/Codegen/cuda-scatter-fused.gcir,
# cuda-one-block.gcir, cuda-vectors.gcir (the SiLU product of a
# Llama-1B-shaped bf16 prefill, [s0, 8192]), cuda-vectors-views.gcir and
# cuda-argmax.gcir compiled for cuda, with their plans' kernel lists.
#
# --package also writes the checks' inputs and the reference interpreter's
# outputs for them (gc-run, which links LLVM, stays here). The run step
# needs BUILD_DIR/bin/gcrt-run and python3 (utils/mknpy.py). Checks:
# 1. Each tiny decoder: one prefill run against PyTorch's logits, and four
#    decode steps from the prefill's cache against PyTorch's (float32 at
#    gcrt-run's default tolerance, bfloat16 at rtol 1e-2, atol 0.031: the
#    tolerances of test/Models/llm-tiny*.test).
# 2. The lit tests cuda-scatter-fused-run.test, cuda-one-block-run.test and
#    cuda-vectors-run.test by hand: gcrt-run's outputs against gc-run's,
#    with and without CUDA graphs (scatters at the first and last cache
#    row, rtol 1e-3 and the tests' atol; the vector kernels at s0 = 1, 3
#    and 257, rtol 1e-2, atol 1e-3; cuda-argmax.gcir's block-wide
#    reductions in vectors, at rtol 1e-3, atol 0).
# 3. Figures: each tiny decode package's profile (--device-io --profile, the
#    time of every plan step); the SiLU product of cuda-vectors.gcir at
#    s0 = 2048 (the 1B prefill's [2048, 8192] bf16: 100.7 MB moved), its
#    kernel's step time (--device-io --profile, 20 runs) and the bandwidth
#    that gives (an H200 copies at about 4.3 TB/s); for each PREFILL.gcpkg given (a prefill package of
#    utils/make-llm-models.py's, e.g. the 1B preset's, compiled with
#    gc-compile --device cuda; inputs: 2048 tokens at positions 0 to 2047),
#    the median of 20 runs (--bench) and its loop kernels' step times; for
#    each DECODE.gcpkg given (inputs: token 1 at position 100), the median
#    of 200 steps in a CUDA graph (--bench) and its loop kernels' step
#    times.
# Prints one PASS or FAIL line per check; exits 1 if any failed.
set -u
usage() {
  echo "usage: utils/gpu-check-L.sh --package BUILD_DIR OUTDIR |" \
    "BUILD_DIR OUTDIR [--prefill PREFILL.gcpkg]... [DECODE.gcpkg...]" >&2
  exit 2
}
PY=${PYTHON:-python3}
M=test/Models/Inputs
# cuda-vectors-run.test's prompt lengths.
VECTOR_SIZES="1 3 257"

if [ "${1:-}" = --package ]; then
  [ $# -eq 3 ] && [ -x "$2/bin/gc-compile" ] || usage
  B=$(cd "$2" && pwd)
  mkdir -p "$3" || exit 1
  O=$(cd "$3" && pwd)
  for model in llm_tiny llm_tiny_bf16; do
    for program in prefill decode; do
      "$B/bin/gc-compile" $M/$model/$program.pt2 --device cuda -o "$O/$model.$program.gcpkg" || exit 1
    done
    "$B/bin/gc-compile" $M/$model/decode.pt2 --device cuda --compile-to=kernels --emit=text -o - |
      grep 'name="forward_k' > "$O/$model.decode.kernels.txt" || exit 1
  done
  for graph in cuda-scatter-fused cuda-one-block cuda-vectors cuda-vectors-views cuda-argmax; do
    # Those but cuda-scatter-fused.gcir are loop graphs already; the views'
    # nodes keep a kernel each, as cuda-vectors-run.test compiles them.
    flags=""
    [ $graph = cuda-vectors-views ] && flags=--no-fuse
    if grep -q '^module level(loops)' test/Codegen/$graph.gcir; then
      cp test/Codegen/$graph.gcir "$O/$graph.loops.gc"
    else
      "$B/bin/gc-lower" test/Codegen/$graph.gcir -o "$O/$graph.loops.gc"
    fi &&
      "$B/bin/gc-codegen" "$O/$graph.loops.gc" $flags --device cuda -o "$O/$graph.kernels.gc" &&
      "$B/bin/gc-package" "$O/$graph.kernels.gc" -o "$O/$graph.gcpkg" &&
      "$B/bin/gc-codegen" "$O/$graph.loops.gc" $flags --device cuda --emit=text -o - |
      grep 'name="forward_k' > "$O/$graph.kernels.txt" &&
      rm -f "$O/$graph.loops.gc" "$O/$graph.kernels.gc" || exit 1
  done
  # The checks' inputs and gc-run's outputs for them (the reference), made
  # here so that the GPU machine needs only gcrt-run.
  mkdir -p "$O/in" || exit 1
  $PY utils/mknpy.py "$O/in/kc.npy" f32 2,1024,16 sin:1 && $PY utils/mknpy.py "$O/in/vc.npy" f32 2,1024,16 sin:2 &&
    $PY utils/mknpy.py "$O/in/k.npy" f32 2,1,16 iota && $PY utils/mknpy.py "$O/in/v.npy" f32 2,1,16 sin:3 &&
    $PY utils/mknpy.py "$O/in/q.npy" f32 4,16 sin:4 &&
    $PY utils/mknpy.py "$O/in/x.npy" f32 1,2048 iota && $PY utils/mknpy.py "$O/in/big.npy" f32 1,32768 iota || exit 1
  for p in 0 1023; do
    $PY utils/mknpy.py "$O/in/pos$p.npy" i64 1 $p && mkdir -p "$O/ref-scatter-$p" &&
      "$B/bin/gc-run" test/Codegen/cuda-scatter-fused.gcir --input "$O"/in/kc.npy "$O"/in/vc.npy "$O"/in/k.npy \
        "$O"/in/v.npy "$O"/in/q.npy "$O/in/pos$p.npy" --output-dir "$O/ref-scatter-$p" > /dev/null || exit 1
  done
  mkdir -p "$O/ref-one-block" &&
    "$B/bin/gc-run" test/Codegen/cuda-one-block.gcir --input "$O"/in/x.npy "$O"/in/big.npy \
    --output-dir "$O/ref-one-block" > /dev/null || exit 1
  $PY utils/mknpy.py "$O/in/argx.npy" f32 64,4096 sin:6 && $PY utils/mknpy.py "$O/in/argm.npy" bool 64,4096 prefix:100000 &&
    mkdir -p "$O/ref-argmax" &&
    "$B/bin/gc-run" test/Codegen/cuda-argmax.gcir --input "$O/in/argx.npy" "$O/in/argm.npy" \
      --output-dir "$O/ref-argmax" > /dev/null || exit 1
  for s in $VECTOR_SIZES; do
    i="$O/in/vec$s"
    mkdir -p "$i" "$O/ref-vectors-$s" "$O/ref-vectors-views-$s" &&
      $PY utils/mknpy.py "$i/gate.npy" bf16 $s,8192 sin:1 && $PY utils/mknpy.py "$i/up.npy" bf16 $s,8192 sin:2 &&
      $PY utils/mknpy.py "$i/a.npy" bf16 $s,4095 sin:3 && $PY utils/mknpy.py "$i/x.npy" bf16 $s,4097 sin:4 &&
      $PY utils/mknpy.py "$i/scale.npy" f32 $s sin:5 &&
      "$B/bin/gc-run" test/Codegen/cuda-vectors.gcir --input "$i/gate.npy" "$i/up.npy" \
        --output-dir "$O/ref-vectors-$s" > /dev/null &&
      "$B/bin/gc-run" test/Codegen/cuda-vectors-views.gcir --input "$i/a.npy" "$i/x.npy" "$i/scale.npy" \
        --output-dir "$O/ref-vectors-views-$s" > /dev/null || exit 1
  done
  echo "packaged into $O"
  exit 0
fi

[ $# -ge 2 ] && [ -x "$1/bin/gcrt-run" ] && [ -d "$2" ] || usage
B=$(cd "$1" && pwd)
O=$(cd "$2" && pwd)
shift 2
PREFILLS=""
while [ "${1:-}" = --prefill ]; do
  [ $# -ge 2 ] || usage
  PREFILLS="$PREFILLS $2"
  shift 2
done
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
failed=0
report() { # NAME STATUS(0 = pass) [detail]
  if [ "$2" -eq 0 ]; then echo "PASS $1"; else echo "FAIL $1${3:+: $3}"; failed=1; fi
}

# 1. The tiny decoders against PyTorch.
for model in llm_tiny llm_tiny_bf16; do
  tol=""
  [ $model = llm_tiny_bf16 ] && tol="--rtol 1e-2 --atol 0.031"
  "$B/bin/gcrt-run" "$O/$model.prefill.gcpkg" --runs 1 --inputs-dir $M/$model/prefill --expect-runs \
    $tol > "$W/prefill.log" 2>&1 && ! grep -q FAIL "$W/prefill.log"
  rc=$?
  report "$model prefill on the GPU matches PyTorch's logits" $rc
  [ $rc -eq 0 ] || tail -20 "$W/prefill.log"
  sets=""
  for l in 0 1; do
    for kv in k v; do
      b=layers.$l.attn.${kv}_cache
      sets="$sets --set-buffer $b=$M/$model/prefill/buffer_after.$b.npy"
    done
  done
  "$B/bin/gcrt-run" "$O/$model.decode.gcpkg" --runs 4 --inputs-dir $M/$model/decode --expect-runs \
    $tol $sets > "$W/decode.log" 2>&1 &&
    ! grep -q FAIL "$W/decode.log" && [ "$(grep -c ': pass' "$W/decode.log")" -eq 4 ]
  rc=$?
  report "$model decode on the GPU matches PyTorch's logits (4 steps, $(wc -l < "$O/$model.decode.kernels.txt") kernels)" $rc
  [ $rc -eq 0 ] || tail -20 "$W/decode.log"
done

# 2. The kernels whose shape changed, against the reference interpreter's
#    outputs (made by --package).
check() { # NAME PACKAGE REFDIR ATOL INPUT...
  name=$1 pkg=$2 ref=$3 atol=$4
  shift 4
  rm -rf "$W/out" && mkdir -p "$W/out" &&
    "$B/bin/gcrt-run" "$O/$pkg.gcpkg" "$@" --runs 2 --expect "$O/$ref"/out*.npy --rtol 1e-3 \
      --atol "$atol" -o "$W/out" > "$W/check.log" 2>&1 &&
    "$B/bin/gcrt-run" "$O/$pkg.gcpkg" "$@" --no-cuda-graphs --device-io --expect "$O/$ref"/out*.npy \
      --rtol 1e-3 --atol "$atol" -o "$W/out" >> "$W/check.log" 2>&1 &&
    ! grep -q FAIL "$W/check.log"
  rc=$?
  report "$name (gcrt-run against gc-run, with and without CUDA graphs)" $rc
  [ $rc -eq 0 ] || tail -10 "$W/check.log"
}
for p in 0 1023; do
  check "cache writes and a product in one kernel, position $p" cuda-scatter-fused ref-scatter-$p 1e-6 \
    "$O"/in/kc.npy "$O"/in/vc.npy "$O"/in/k.npy "$O"/in/v.npy "$O"/in/q.npy "$O/in/pos$p.npy"
done
check "one-block RMSNorm" cuda-one-block ref-one-block 1 "$O"/in/x.npy "$O"/in/big.npy
# The vector kernels: bf16 outputs, two roundings away from libdevice's exp.
check_vectors() { # NAME PACKAGE REFDIR INPUT...
  name=$1 pkg=$2 ref=$3
  shift 3
  "$B/bin/gcrt-run" "$O/$pkg.gcpkg" "$@" --runs 2 --expect "$O/$ref"/out*.npy --rtol 1e-2 \
    --atol 1e-3 > "$W/check.log" 2>&1 &&
    "$B/bin/gcrt-run" "$O/$pkg.gcpkg" "$@" --no-cuda-graphs --device-io --expect "$O/$ref"/out*.npy \
      --rtol 1e-2 --atol 1e-3 >> "$W/check.log" 2>&1 &&
    ! grep -q FAIL "$W/check.log"
  rc=$?
  report "$name (gcrt-run against gc-run, with and without CUDA graphs)" $rc
  [ $rc -eq 0 ] || tail -10 "$W/check.log"
}
check "block-wide ArgMax, count and any in vectors" cuda-argmax ref-argmax 0 \
  "$O/in/argx.npy" "$O/in/argm.npy"
for s in $VECTOR_SIZES; do
  i="$O/in/vec$s"
  check_vectors "SiLU product in vectors of 8, [$s, 8192] bf16" cuda-vectors ref-vectors-$s \
    "$i/gate.npy" "$i/up.npy"
  check_vectors "odd rows, an offset view and a strided one, [$s, 4095..4097] bf16" \
    cuda-vectors-views ref-vectors-views-$s "$i/a.npy" "$i/x.npy" "$i/scale.npy"
done

# 3. Figures.
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for model in llm_tiny llm_tiny_bf16; do
  echo "$model decode, 4 steps --device-io --profile (step, kind, name, mean us, min us, share):"
  "$B/bin/gcrt-run" "$O/$model.decode.gcpkg" --device-io --profile --inputs-dir $M/$model/decode --runs 4 \
    2>&1 | grep -E '^ +[0-9]+ (kernel|extern) '
done
# The SiLU product of the 1B prefill, [2048, 8192] bf16, from normal
# values (numpy here; mknpy.py would take a minute); the profile's min of
# 20 runs, in us.
$PY - "$W" <<'PYEOF' || exit 1
import sys
import numpy as np
rng = np.random.default_rng(0)
for name in ("gate", "up"):
    bits = rng.standard_normal((2048, 8192), dtype=np.float32).view(np.uint32)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    np.save(sys.argv[1] + "/" + name + ".npy", bits.view("V2"))
PYEOF
echo "SiLU product of the 1B prefill, [2048, 8192] bf16 ($(cat "$O/cuda-vectors.kernels.txt" | sed 's/^ *//')):"
"$B/bin/gcrt-run" "$O/cuda-vectors.gcpkg" "$W/gate.npy" "$W/up.npy" --device-io --profile --runs 20 \
  > "$W/silu.log" 2>&1
rc=$?
report "the 1B SiLU product ran 20 times" $rc
us=$(awk '$2 == "kernel" {print $5; exit}' "$W/silu.log")
grep -E '^ +[0-9]+ kernel ' "$W/silu.log"
# 100.663296 MB in `us` microseconds is 100.663296 / us TB/s.
[ -n "$us" ] && awk -v us="$us" 'BEGIN {printf "  min %.1f us: %.2f TB/s (3 x 2048 x 8192 x 2 bytes)\n", us, 100.663296 / us}'

$PY utils/mknpy.py "$W/token.npy" i64 1,1 1 && $PY utils/mknpy.py "$W/pos100.npy" i64 1 100 || exit 1
$PY - "$W" <<'PYEOF' || exit 1
import sys
import numpy as np
np.save(sys.argv[1] + "/tokens2048.npy", (np.arange(2048, dtype=np.int64) % 1000 + 1).reshape(1, 2048))
np.save(sys.argv[1] + "/pos2048.npy", np.arange(2048, dtype=np.int64))
PYEOF
for pkg in $PREFILLS; do
  "$B/bin/gcrt-run" "$pkg" "$W/tokens2048.npy" "$W/pos2048.npy" --device-io --bench 20 > "$W/bench.log" 2>&1
  rc=$?
  report "$pkg ran 20 prefills of 2048 tokens" $rc
  grep '^bench:' "$W/bench.log"
  echo "$pkg, 3 prefills --device-io --profile, loop kernels (step, kind, name, mean us, min us, share):"
  "$B/bin/gcrt-run" "$pkg" "$W/tokens2048.npy" "$W/pos2048.npy" --runs 3 --device-io --profile 2>&1 |
    grep -E '^ +[0-9]+ kernel ' > "$W/profile.log"
  echo "  $(wc -l < "$W/profile.log") loop kernel steps, min us summed:" \
    "$(awk '{s += $5} END {printf "%.1f", s}' "$W/profile.log")"
  sort -k5 -n -r "$W/profile.log" | head -16
done
for pkg in "$@"; do
  "$B/bin/gcrt-run" "$pkg" "$W/token.npy" "$W/pos100.npy" --device-io --bench 200 > "$W/bench.log" 2>&1
  rc=$?
  report "$pkg ran 200 decode steps" $rc
  grep '^bench:' "$W/bench.log"
  echo "$pkg, 5 steps --device-io --profile, loop kernels (step, kind, name, mean us, min us, share):"
  "$B/bin/gcrt-run" "$pkg" "$W/token.npy" "$W/pos100.npy" --runs 5 --device-io --profile 2>&1 |
    grep -E '^ +[0-9]+ kernel ' > "$W/profile.log"
  echo "  $(wc -l < "$W/profile.log") loop kernel steps, min us summed:" \
    "$(awk '{s += $5} END {printf "%.1f", s}' "$W/profile.log")"
  head -16 "$W/profile.log"
done
exit $failed
