#!/usr/bin/env bash
# Runs every gc test: the GoogleTest unit tests through ctest, the lit
# tests, and the Python package's tests (pytest, in the venv setup.sh made).
# Ends with one line "N passed, N failed" over all three, and exits non-zero
# if anything failed.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
build=$(cd "$build" && pwd)
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
jobs=$(nproc 2>/dev/null || echo 2)

echo "== unit tests (ctest)"
ctest --test-dir "$build" -j"$jobs" --output-on-failure --timeout 120 | tee "$log/ctest.txt"
ctest_rc=${PIPESTATUS[0]}

echo "== lit tests"
lit=${LIT:-/usr/lib/llvm-16/build/utils/lit/lit.py}
"${PYTHON:-/usr/bin/python3}" "$lit" -sv --timeout 120 "$build/test" | tee "$log/lit.txt"
lit_rc=${PIPESTATUS[0]}

echo "== Python tests (pytest)"
GC_BUILD_DIR="$build" "$build/venv/bin/python" -m pytest -q -p no:cacheprovider "$src/test/python" 2>&1 | tee "$log/pytest.txt"
py_rc=${PIPESTATUS[0]}

read -r c_total c_failed < <(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\2 \1/p' "$log/ctest.txt" | tail -1)
c_total=${c_total:-0}; c_failed=${c_failed:-0}
l_passed=$(sed -n 's/^ *Passed *: *\([0-9]*\).*/\1/p' "$log/lit.txt" | tail -1)
l_failed=0
for kind in Failed "Timed Out" Unresolved "Unexpectedly Passed"; do
  n=$(sed -n "s/^ *$kind *: *\([0-9]*\).*/\1/p" "$log/lit.txt" | tail -1)
  l_failed=$((l_failed + ${n:-0}))
done
l_skipped=$(sed -n 's/^ *Unsupported *: *\([0-9]*\).*/\1/p' "$log/lit.txt" | tail -1)
# ctest counts a unit test that skipped itself (GTEST_SKIP: no GPU here) as
# passed; it lists them as "(Skipped)".
c_skipped=$(grep -c -E '^[[:space:]]*[0-9]+ - .* \(Skipped\)$' "$log/ctest.txt" || true)
# pytest's last line: "3 passed, 1 failed, 2 skipped in 4.1s" (any order).
py_summary=$(tail -1 "$log/pytest.txt")
py_count() { echo "$py_summary" | grep -oE "[0-9]+ $1" | grep -oE '^[0-9]+' || echo 0; }
p_passed=$(py_count passed); p_failed=$(($(py_count failed) + $(py_count error)))
p_skipped=$(py_count skipped)
passed=$((c_total - c_failed - ${c_skipped:-0} + ${l_passed:-0} + p_passed))
failed=$((c_failed + l_failed + p_failed))
# A runner that crashed before its summary counts as a failure.
if [ "$ctest_rc" -ne 0 ] && [ "$c_failed" -eq 0 ]; then failed=$((failed + 1)); fi
if [ "$lit_rc" -ne 0 ] && [ "$l_failed" -eq 0 ]; then failed=$((failed + 1)); fi
if [ "$py_rc" -ne 0 ] && [ "$p_failed" -eq 0 ]; then failed=$((failed + 1)); fi
echo "${passed} passed, ${failed} failed, $((${l_skipped:-0} + ${c_skipped:-0} + p_skipped)) skipped"
[ "$failed" -eq 0 ]
