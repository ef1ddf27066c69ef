#!/bin/sh
# A decode step's small loop kernels on an NVIDIA GPU (issue 34): the KV-cache
# writes and the query's rotary embedding as one kernel. Two steps, so that
# the GPU machine compiles nothing:
#
#   utils/gpu-check-L.sh --package BUILD_DIR OUTDIR          (here: compiles)
#   utils/gpu-check-L.sh BUILD_DIR OUTDIR [DECODE.gcpkg...]  (there: runs)
#
# --package writes into OUTDIR the tiny decoders' prefill and decode
# programs compiled for cuda (test/Models/Inputs/llm_tiny{,_bf16}, weights
# inside), and the graphs of test/Codegen/cuda-scatter-fused.gcir and
# cuda-one-block.gcir compiled for cuda, with their plans' kernel lists.
#
# --package also writes the checks' inputs and the reference interpreter's
# outputs for them (gc-run, which links LLVM, stays here). The run step
# needs BUILD_DIR/bin/gcrt-run and python3 (utils/mknpy.py). Checks:
# 1. Each tiny decoder: one prefill run against PyTorch's logits, and four
#    decode steps from the prefill's cache against PyTorch's (float32 at
#    gcrt-run's default tolerance, bfloat16 at rtol 1e-2, atol 0.031: the
#    tolerances of test/Models/llm-tiny*.test).
# 2. The lit tests cuda-scatter-fused-run.test and cuda-one-block-run.test
#    by hand: gcrt-run's outputs against gc-run's, with and without CUDA
#    graphs (scatters at the first and last cache row; rtol 1e-3 and the
#    tests' atol).
# 3. Figures: each tiny decode package's profile (--device-io --profile, the
#    time of every plan step) and, for each DECODE.gcpkg given (a decode
#    package of utils/make-llm-models.py's, e.g. the 1B preset's, compiled
#    with gc-compile --device cuda; inputs: token 1 at position 100), the
#    median of 200 steps in a CUDA graph (--bench) and its loop kernels'
#    step times.
# Prints one PASS or FAIL line per check; exits 1 if any failed.
set -u
usage() {
  echo "usage: utils/gpu-check-L.sh --package BUILD_DIR OUTDIR | BUILD_DIR OUTDIR [DECODE.gcpkg...]" >&2
  exit 2
}
PY=${PYTHON:-python3}
M=test/Models/Inputs

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
  for graph in cuda-scatter-fused cuda-one-block; do
    # cuda-one-block.gcir is a loop graph already.
    if grep -q '^module level(loops)' test/Codegen/$graph.gcir; then
      cp test/Codegen/$graph.gcir "$O/$graph.loops.gc"
    else
      "$B/bin/gc-lower" test/Codegen/$graph.gcir -o "$O/$graph.loops.gc"
    fi &&
      "$B/bin/gc-codegen" "$O/$graph.loops.gc" --device cuda -o "$O/$graph.kernels.gc" &&
      "$B/bin/gc-package" "$O/$graph.kernels.gc" -o "$O/$graph.gcpkg" &&
      "$B/bin/gc-codegen" "$O/$graph.loops.gc" --device cuda --emit=text -o - |
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
  echo "packaged into $O"
  exit 0
fi

[ $# -ge 2 ] && [ -x "$1/bin/gcrt-run" ] && [ -d "$2" ] || usage
B=$(cd "$1" && pwd)
O=$(cd "$2" && pwd)
shift 2
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

# 3. Figures.
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for model in llm_tiny llm_tiny_bf16; do
  echo "$model decode, 4 steps --device-io --profile (step, kind, name, mean us, min us, share):"
  "$B/bin/gcrt-run" "$O/$model.decode.gcpkg" --device-io --profile --inputs-dir $M/$model/decode --runs 4 \
    2>&1 | grep -E '^ +[0-9]+ (kernel|extern) '
done
$PY utils/mknpy.py "$W/token.npy" i64 1,1 1 && $PY utils/mknpy.py "$W/pos100.npy" i64 1 100 || exit 1
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
