#!/usr/bin/env bash
# Configures and builds keywarden. Usage: scripts/build.sh [release|debug|sanitize] [ninja targets…]
#   release  (default) optimised, with tests, into build/
#   debug    no optimisation, into build-debug/
#   sanitize AddressSanitizer + UndefinedBehaviorSanitizer, into build-sanitize/
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-release}"
[ $# -gt 0 ] && shift
case "$mode" in
  release) dir=build; options=(-DCMAKE_BUILD_TYPE=Release) ;;
  debug) dir=build-debug; options=(-DCMAKE_BUILD_TYPE=Debug) ;;
  sanitize) dir=build-sanitize; options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DKEYWARDEN_SANITIZE=ON) ;;
  *) echo "usage: $0 [release|debug|sanitize] [targets…]" >&2; exit 2 ;;
esac

if [ ! -f "$dir/build.ninja" ]; then
  cmake -S . -B "$dir" -G Ninja "${options[@]}" >/dev/null
fi
ninja -C "$dir" -j "$(nproc)" "$@"
