#!/usr/bin/env bash
# One command from a fresh clone to every test: installs what is missing, builds, and runs the
# unit tests (ctest), then the end-to-end and differential tests (pytest) against the built
# server and a stock redis-server. Usage: scripts/test.sh [--sanitize]
set -euo pipefail
cd "$(dirname "$0")/.."

mode=release
if [ "${1:-}" = "--sanitize" ]; then mode=sanitize; fi
dir=build
[ "$mode" = sanitize ] && dir=build-sanitize

scripts/setup.sh
scripts/build.sh "$mode"

echo "== unit tests (ctest) =="
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)"

# Every libFuzzer target for a short bounded time (docs/fuzzing.md), with a fixed seed so that a
# run's mutations are the same from one run to the next; KEYWARDEN_FUZZ_SECONDS=0 skips it. Not
# in the sanitizer run: the fuzz build is its own ASan+UBSan build.
fuzz_seconds="${KEYWARDEN_FUZZ_SECONDS:-20}"
if [ "$mode" = release ] && [ "$fuzz_seconds" -gt 0 ]; then
  echo "== fuzz targets (${fuzz_seconds} s each) =="
  scripts/fuzz.sh all "$fuzz_seconds" -seed=1
fi

echo "== end-to-end and differential tests (pytest) =="
export KEYWARDEN_SERVER="$PWD/$dir/src/server/keywarden-server"
# Rows that run stock Redis alone (they check a test's own logic) and the benchmark drivers'
# smoke tests add time and no coverage under the sanitizers: the sanitizer run leaves them to
# the release run (tests/conftest.py, docs/fuzzing.md).
if [ "$mode" = sanitize ]; then export KEYWARDEN_SANITIZER_PASS=1; fi
# Two pytest-xdist workers, one test file each at a time: most tests wait on servers, timers
# and Sentinel rather than use the CPU. Every server listens on a port of its own and works in
# a directory of its own, so the files do not meet.
parallel=()
if /usr/bin/python3 -c "import xdist" 2>/dev/null; then parallel=(-n 2 --dist loadfile); fi
/usr/bin/python3 -m pytest -q -p no:cacheprovider "${parallel[@]}" tests/e2e tests/compat
