#!/bin/sh
# gc's few-row product kernel on an NVIDIA GPU (issues 34 and 35), run from
# the checkout root of a built tree (about a minute on an H200):
#
#   utils/gpu-check-G.sh BUILD_DIR
#
# 1. The kernel against a double-precision reference (RuntimeTests'
#    CudaFewRow* tests): float32, bfloat16 and float16, 1 to 8 rows, N and
#    K tails, rows longer than one unrolled pass, unaligned rows, every
#    epilogue (bias, residual, ReLU, tanh GELU, all at once into a strided
#    output), Llama decode shapes; and groups of 2 to 4 products of the
#    same rows in one launch (unequal N, with and without bias and
#    residual, 1 to 8 rows, bfloat16 and float32, the 1B's and 8B's q|k|v
#    and gate|up). Then the executor's own GPU tests (CudaExecutor*),
#    whose products of a few rows now take the kernel, three of them
#    sharing their row in one launch.
# 2. The tiny Llama decoder's decode program (test/Models/llm-tiny*.test)
#    compiled for the GPU: four decode steps from the prefill's cache match
#    PyTorch's logits, float32 at gcrt-run's tolerance (rtol 1e-3, atol
#    growing with the largest logit) and bfloat16 at rtol 1e-2, atol 0.031.
#    Its 14 projections and LM head are products of one row; each layer's
#    q|k|v and gate|up run as one launch each.
# 3. The micro-benchmark (bin/cuda-fewrow-bench): each Llama-3.2-1B and
#    Llama-3.1-8B decode product, bfloat16 and float32, 1 and 4 rows, by
#    gc's kernel and by cuBLASLt, alone and in a CUDA graph, beside a 1 GiB
#    device-to-device copy; then the decode step's products summed; then
#    the groups of products that share their rows (q|k|v, gate|up; bf16,
#    one row) as separate launches and as one, in a CUDA graph
#    (`cuda-fewrow-bench --groups-only` prints only that table).
#
# Prints one PASS or FAIL line per check and the benchmark's table; exits 1
# if any check failed.
set -u
if [ $# -ne 1 ] || [ ! -x "$1/bin/gcrt-run" ]; then
  echo "usage: utils/gpu-check-G.sh BUILD_DIR (a built tree with bin/gcrt-run)" >&2
  exit 2
fi
B=$(cd "$1" && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
failed=0
report() { # NAME STATUS(0 = pass) [detail]
  if [ "$2" -eq 0 ]; then echo "PASS $1"; else echo "FAIL $1${3:+: $3}"; failed=1; fi
}

# 1. The kernel alone, then the executor's tests.
for filter in 'CudaFewRow*' 'CudaExecutor*'; do
  "$B/unittests/RuntimeTests" --gtest_filter="$filter" > "$W/unit.log" 2>&1
  rc=$?
  if grep -q "SKIPPED" "$W/unit.log"; then
    rc=1
    echo "  (skipped: $(grep -m1 -B1 SKIPPED "$W/unit.log" | head -1))"
  fi
  report "RuntimeTests $filter" $rc "see the log below"
  [ $rc -eq 0 ] || grep -v "^\[       OK \]" "$W/unit.log" | tail -40
done

# 2. The tiny decoder's decode steps on the GPU.
M=test/Models/Inputs
for model in llm_tiny llm_tiny_bf16; do
  tol=""
  [ $model = llm_tiny_bf16 ] && tol="--rtol 1e-2 --atol 0.031"
  sets=""
  for l in 0 1; do
    for kv in k v; do
      b=layers.$l.attn.${kv}_cache
      sets="$sets --set-buffer $b=$M/$model/prefill/buffer_after.$b.npy"
    done
  done
  "$B/bin/gc-compile" $M/$model/decode.pt2 --device cuda -o "$W/$model.gcpkg" > "$W/e2e.log" 2>&1 &&
    "$B/bin/gcrt-run" "$W/$model.gcpkg" --runs 4 --inputs-dir $M/$model/decode --expect-runs \
      $tol $sets --verbose >> "$W/e2e.log" 2>&1 &&
    ! grep -q FAIL "$W/e2e.log" && [ "$(grep -c ': pass' "$W/e2e.log")" -eq 4 ]
  rc=$?
  report "$model decode on the GPU matches PyTorch's logits (4 steps)" $rc
  [ $rc -eq 0 ] || tail -20 "$W/e2e.log"
done

# 3. The benchmark.
"$B/bin/cuda-fewrow-bench"
report "cuda-fewrow-bench ran (gc's kernel and cuBLASLt on every shape)" $?
exit $failed
