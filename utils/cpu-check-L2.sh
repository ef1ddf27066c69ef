#!/bin/bash
# Issue 34's CPU targets on a machine of many cores (the lead's GPU host:
# 16 cores with AVX-512 and AMX, torch, no compiler toolchain beyond g++),
# from the checkout root:
#
#   utils/cpu-check-L2.sh BUILD_DIR            # run the checks
#   utils/cpu-check-L2.sh --package BUILD_DIR  # here, before: the packages
#
# With --package (on the development machine, where gc-compile runs), it
# makes the 1B models (utils/make-llm-models.py; 12 GB and 6 GB of archives,
# twice that for a moment) unless they are there, and compiles each program
# with --weights external into BUILD_DIR/llm-packages/<preset>-<dtype>/
# (under 100 KB each: they name their archive, ../<program>.pt2, and check
# each weight's SHA-256 when they map it). Without it, on the machine that
# checks: it makes the same models there with that machine's torch (the
# weights come from the recipes, so their bytes are the same), puts the
# carried packages beside them (or, without them, llm.py compiles with
# BUILD_DIR/bin/gc-compile), and prints PASS or FAIL lines and figures:
#   - membw (utils/bench/membw.c) at 2 and $THREADS threads;
#   - fewrow-bench (the few-row product on the 1B products, and with L2_8B=1
#     the 8B's, weights mapped from a file) beside a sum of the same memory,
#     at 2 and $THREADS threads;
#   - utils/bench/llm.py on the 1B float32 (128 greedy tokens, which must be
#     eager's) and bfloat16 presets: gc, eager and torch.compile (stopped
#     after $COMPILE_LIMIT s), tok/s, bandwidth share, peak memory, the logits
#     against eager's; with L2_8B=1 also the 8B bfloat16 preset (32 GB of
#     archives, 16 GB of weights resident).
# Environment: PYTHON (with torch; default python3), MODELS (where the
# archives go; default /tmp/llm-L2), THREADS (default 8), COMPILE_LIMIT
# (default 900); for a quick trial, PRESETS (default "1b:float32
# 1b:bfloat16", e.g. "tiny:float32") and BENCHES (default "1b:f32 1b:bf16";
# empty for none).
set -u
package=0
if [ "${1:-}" = "--package" ]; then
  package=1
  shift
fi
if [ $# -ne 1 ] || [ ! -d "$1/bin" ]; then
  echo "usage: utils/cpu-check-L2.sh [--package] BUILD_DIR (a built tree: BUILD_DIR/bin)" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
python=${PYTHON:-python3}
models=${MODELS:-/tmp/llm-L2}
threads=${THREADS:-8}
limit=${COMPILE_LIMIT:-900}
presets=${PRESETS:-1b:float32 1b:bfloat16}
[ "${L2_8B:-0}" = 1 ] && presets="$presets 8b:bfloat16"
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# The archives of one preset in $models/<preset>-<dtype>, made unless there.
make_models() {
  local dir=$models/$1-$2
  if [ ! -f "$dir/decode.pt2" ] || [ ! -f "$dir/config.json" ]; then
    echo "== making $1 $2 in $dir"
    "$python" utils/make-llm-models.py --preset "$1" --dtype "$2" -o "$dir" >/dev/null ||
      { fail "utils/make-llm-models.py --preset $1 --dtype $2"; return 1; }
  fi
}

if [ $package = 1 ]; then
  for p in $presets; do
    preset=${p%%:*} dtype=${p#*:}
    make_models "$preset" "$dtype" || continue
    # Compiled beside the archive (as llm.py does), so that the package
    # names it as ../<program>.pt2 wherever the two are put side by side.
    dir=$models/$preset-$dtype out=$build/llm-packages/$preset-$dtype
    mkdir -p "$dir/gc" "$out"
    for program in prefill decode; do
      "$build/bin/gc-compile" "$dir/$program.pt2" --weights external -o "$dir/gc/$program.gcpkg" &&
        cp "$dir/gc/$program.gcpkg" "$out/" || fail "gc-compile $preset $dtype $program"
    done
  done
  [ $failed = 0 ] && echo "PASS: packages in $build/llm-packages"
  exit $failed
fi

echo "== $(date -u +%FT%TZ) on $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "== load average: $(cut -d' ' -f1-3 /proc/loadavg)"
cc=$(command -v cc || command -v gcc)
if [ -z "$cc" ]; then
  fail "no C compiler (cc or gcc) for utils/bench/membw.c"
else
  mkdir -p "$models"
  "$cc" -O3 -march=native -fopenmp utils/bench/membw.c -o "$models/membw" || fail "building membw"
  for t in 2 "$threads"; do
    echo "membw: $("$models/membw" --threads "$t")"
  done
fi

mkdir -p "$models"
benches=${BENCHES-1b:f32 1b:bf16}
[ "${L2_8B:-0}" = 1 ] && benches="$benches 8b:bf16"
for b in $benches; do
  for t in 2 "$threads"; do
    echo "== fewrow-bench ${b%%:*} ${b#*:}, $t threads (load average $(cut -d' ' -f1 /proc/loadavg))"
    "$build/bin/fewrow-bench" --shapes "${b%%:*}" --dtype "${b#*:}" --threads "$t" \
      --file "$models/fewrow.bin" || fail "fewrow-bench $b, $t threads"
  done
done

for p in $presets; do
  preset=${p%%:*} dtype=${p#*:}
  make_models "$preset" "$dtype" || continue
  dir=$models/$preset-$dtype
  if [ -d "$build/llm-packages/$preset-$dtype" ]; then
    mkdir -p "$dir/gc"
    cp "$build/llm-packages/$preset-$dtype/"*.gcpkg "$dir/gc/"
  fi
  tokens=32
  [ "$preset-$dtype" = 1b-float32 ] && tokens=128
  [ "$preset" = 8b ] && tokens=16
  echo "== llm.py $preset $dtype, $threads threads, $tokens tokens (load average $(cut -d' ' -f1 /proc/loadavg))"
  if ! "$python" utils/bench/llm.py "$dir" --build "$build" --threads "$threads" \
      --new-tokens $tokens --compile-limit "$limit" > "$dir/llm.txt" 2>&1; then
    cat "$dir/llm.txt"
    fail "llm.py $preset $dtype"
    continue
  fi
  cat "$dir/llm.txt"
  grep -q "^FAIL" "$dir/llm.txt" && failed=1
done
[ $failed = 0 ] && echo "PASS: cpu-check-L2" || echo "FAIL: cpu-check-L2 (see the FAIL lines above)"
exit $failed
