#!/bin/sh
# Hugging Face's Llama through transformers' static-cache export on an
# NVIDIA GPU (issue 34; docs/llm.md, "Hugging Face's Llama"). Two steps, so
# that the GPU machine compiles nothing:
#
#   utils/gpu-check-HF.sh --package BUILD_DIR OUTDIR   (here: compiles)
#   utils/gpu-check-HF.sh BUILD_DIR OUTDIR             (there: runs)
#
# --package writes into OUTDIR the prefill and decode programs of
# test/Models/Inputs/hf_llama_tiny{,_bf16} compiled for cuda (weights
# inside) and each decode program's plan steps. The run step needs
# BUILD_DIR/bin/gcrt-run and the committed inputs. Checks, per model
# (float32 at gcrt-run's default tolerance, bfloat16 at rtol 1e-2 and atol
# 0.031, the tolerances of test/Models/hf-llama-tiny*.test):
# 1. the prefill's logits and the cache it leaves against PyTorch's;
# 2. four decode steps from that cache;
# 3. twelve decode steps from the empty cache, a token a step;
# 4. a decode step at the cache's positions 0, 32 and 63 with NaN in the
#    cache past the position (the attention must not read it);
# 5. the decode plan's attention is the fused kernel on the cache buffers
#    (an extern step), the grouped-attention pass having removed the
#    repeat of the cache per query head; then each decode step's profile.
# Prints one PASS or FAIL line per check; exits 1 if any failed.
set -u
usage() {
  echo "usage: utils/gpu-check-HF.sh --package BUILD_DIR OUTDIR | BUILD_DIR OUTDIR" >&2
  exit 2
}
M=test/Models/Inputs
MODELS="hf_llama_tiny hf_llama_tiny_bf16"
CACHES="key_cache_0 value_cache_0 key_cache_1 value_cache_1"

if [ "${1:-}" = --package ]; then
  [ $# -eq 3 ] && [ -x "$2/bin/gc-compile" ] || usage
  B=$(cd "$2" && pwd)
  mkdir -p "$3" || exit 1
  O=$(cd "$3" && pwd)
  for model in $MODELS; do
    for program in prefill decode; do
      "$B/bin/gc-compile" $M/$model/$program.pt2 --device cuda -o "$O/$model.$program.gcpkg" || exit 1
    done
    "$B/bin/gc-compile" $M/$model/decode.pt2 --device cuda --compile-to=kernels --emit=text -o - |
      grep -E 'kind=extern, name="scaled_dot_product_attention|^ +\{name="forward_k' \
      > "$O/$model.decode.steps.txt" || exit 1
  done
  echo "packaged into $O"
  exit 0
fi

[ $# -eq 2 ] && [ -x "$1/bin/gcrt-run" ] && [ -d "$2" ] || usage
B=$(cd "$1" && pwd)
O=$(cd "$2" && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
failed=0
report() { # NAME STATUS(0 = pass) LOG
  if [ "$2" -eq 0 ]; then echo "PASS $1"; else echo "FAIL $1"; tail -20 "$3"; failed=1; fi
}
passes() { # LOG COUNT: no FAIL and COUNT passes
  ! grep -q FAIL "$1" && [ "$(grep -c ': pass' "$1")" -eq "$2" ]
}

for model in $MODELS; do
  tol=""
  [ $model = hf_llama_tiny_bf16 ] && tol="--rtol 1e-2 --atol 0.031"
  expects="" sets=""
  for b in $CACHES; do
    expects="$expects --expect-buffer $b=$M/$model/prefill/buffer_after.$b.npy"
    sets="$sets --set-buffer $b=$M/$model/prefill/buffer_after.$b.npy"
  done
  "$B/bin/gcrt-run" "$O/$model.prefill.gcpkg" --runs 1 --inputs-dir $M/$model/prefill --expect-runs \
    $tol $expects > "$W/log" 2>&1 && passes "$W/log" 5
  report "$model prefill: logits and cache" $? "$W/log"
  "$B/bin/gcrt-run" "$O/$model.decode.gcpkg" --runs 4 --inputs-dir $M/$model/decode --expect-runs \
    $tol $sets > "$W/log" 2>&1 && passes "$W/log" 4
  report "$model decode: 4 steps from the prefill's cache" $? "$W/log"
  "$B/bin/gcrt-run" "$O/$model.decode.gcpkg" --runs 12 --inputs-dir $M/$model/steps --expect-runs \
    $tol > "$W/log" 2>&1 && passes "$W/log" 12
  report "$model decode: 12 steps from the empty cache" $? "$W/log"
  : > "$W/log"
  for p in 0 32 63; do
    sets=""
    for b in $CACHES; do
      sets="$sets --set-buffer $b=$M/$model/positions/$p/cache.$b.npy"
    done
    "$B/bin/gcrt-run" "$O/$model.decode.gcpkg" --runs 1 --inputs-dir $M/$model/positions/$p --expect-runs \
      $tol $sets >> "$W/log" 2>&1
  done
  passes "$W/log" 3
  report "$model decode at positions 0, 32, 63 with NaN past them" $? "$W/log"
  [ "$(grep -c 'kind=extern, name="scaled_dot_product_attention' "$O/$model.decode.steps.txt")" -eq 2 ]
  report "$model decode: both attention calls are the fused kernel" $? "$O/$model.decode.steps.txt"
  echo "$model decode, 4 steps --device-io --profile (step, kind, name, mean us, min us, share):"
  "$B/bin/gcrt-run" "$O/$model.decode.gcpkg" --device-io --profile --inputs-dir $M/$model/decode --runs 4 \
    2>&1 | grep -E '^ +[0-9]+ (kernel|extern) '
done
exit $failed
