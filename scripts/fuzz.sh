#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz (docs/fuzzing.md). Usage:
#   scripts/fuzz.sh [target|all] [seconds] [libFuzzer flags…]
# builds build-fuzz/ when needed (scripts/build.sh fuzz: clang, ASan + UBSan), then runs one
# target, or every target one after another, for `seconds` each (default 60) with its
# dictionary, its seed corpus and its regressions, and prints per target the executions, the
# time and whether it crashed. New interesting inputs go to build-fuzz/corpus/<target>/ (the
# checked-in seeds are only read), crash inputs to build-fuzz/artifacts/<target>/, the whole
# libFuzzer output to build-fuzz/logs/<target>.log. Exits non-zero when any target crashed.
set -euo pipefail
cd "$(dirname "$0")/.."

which="${1:-all}"
seconds="${2:-60}"
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && shift
extra=("$@")

targets=()
for source in tests/fuzz/*_fuzz.cc; do
  name="$(basename "$source" _fuzz.cc)"
  if [ "$which" = all ] || [ "$which" = "$name" ]; then targets+=("$name"); fi
done
if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz.sh: no target '$which'; targets: $(ls tests/fuzz/*_fuzz.cc | xargs -n1 basename |
    sed 's/_fuzz.cc//' | tr '\n' ' ')" >&2
  exit 2
fi

programs=()
for name in "${targets[@]}"; do programs+=("${name}_fuzz"); done
scripts/build.sh fuzz "${programs[@]}"

export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

failed=()
total_runs=0
printf '%-18s %14s %8s %10s  %s\n' target executions seconds execs/s result
for name in "${targets[@]}"; do
  corpus=build-fuzz/corpus/$name
  artifacts=build-fuzz/artifacts/$name
  log=build-fuzz/logs/$name.log
  mkdir -p "$corpus" "$artifacts" build-fuzz/logs
  inputs=("$corpus" "tests/fuzz/corpus/$name")
  [ -d "tests/fuzz/regressions/$name" ] && inputs+=("tests/fuzz/regressions/$name")
  flags=(-max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2560
         -max_len=4096 -artifact_prefix="$artifacts/")
  [ -f "tests/fuzz/dict/$name.dict" ] && flags+=(-dict="tests/fuzz/dict/$name.dict")
  status=0
  started=$(date +%s)
  "build-fuzz/tests/fuzz/${name}_fuzz" "${flags[@]}" "${extra[@]}" "${inputs[@]}" >"$log" 2>&1 ||
    status=$?
  took=$(($(date +%s) - started))
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  runs="${runs:-0}"
  total_runs=$((total_runs + runs))
  result=ok
  if [ "$status" -ne 0 ]; then
    result="CRASH (exit $status), see $log; input: $(grep -o "Test unit written to .*" "$log" |
      tail -1 | sed 's/Test unit written to //')"
    failed+=("$name")
  fi
  rate=$((runs / (took > 0 ? took : 1)))
  printf '%-18s %14s %8s %10s  %s\n' "$name" "$runs" "$took" "$rate" "$result"
done
echo "total executions: $total_runs"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: crashes in: ${failed[*]} (docs/fuzzing.md: reproduce, minimise, add a regression)"
  exit 1
fi
