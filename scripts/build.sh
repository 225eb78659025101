#!/usr/bin/env bash
# Configures and builds keywarden.
# Usage: scripts/build.sh [release|debug|sanitize|fuzz] [ninja targets…]
#   release  (default) optimised, with tests, into build/
#   debug    no optimisation, into build-debug/
#   sanitize AddressSanitizer + UndefinedBehaviorSanitizer, into build-sanitize/
#   fuzz     the libFuzzer targets of tests/fuzz (clang, ASan + UBSan), into build-fuzz/
# The same configurations are CMake presets (CMakePresets.json): cmake --preset sanitize…
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-release}"
[ $# -gt 0 ] && shift
case "$mode" in
  release) dir=build; options=(-DCMAKE_BUILD_TYPE=Release) ;;
  debug) dir=build-debug; options=(-DCMAKE_BUILD_TYPE=Debug) ;;
  sanitize) dir=build-sanitize; options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DKEYWARDEN_SANITIZE=ON) ;;
  fuzz)
    dir=build-fuzz
    options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DKEYWARDEN_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++)
    ;;
  *) echo "usage: $0 [release|debug|sanitize|fuzz] [targets…]" >&2; exit 2 ;;
esac

# ccache, when the machine has it, makes rebuilds in other checkouts of the same tree cheap;
# paths are hashed relative to the checkout so that worktrees share the cache.
if command -v ccache >/dev/null 2>&1; then
  options+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
fi

if [ ! -f "$dir/build.ninja" ]; then
  cmake -S . -B "$dir" -G Ninja "${options[@]}" >/dev/null
fi
ninja -C "$dir" -j "$(nproc)" "$@"
