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
# The tiny decoders' steps on the GPU, whose products take the kernel, are
# utils/gpu-check-L.sh's (its --package step compiles them where gc-compile
# runs).
# 2. The micro-benchmark (bin/cuda-fewrow-bench): each Llama-3.2-1B and
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

# 2. The benchmark.
"$B/bin/cuda-fewrow-bench"
report "cuda-fewrow-bench ran (gc's kernel and cuBLASLt on every shape)" $?
exit $failed
