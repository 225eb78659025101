#!/usr/bin/env bash
# Installs the Debian packages keywarden needs to build, test and benchmark, if missing.
# Idempotent: does nothing (and needs no network) when everything is already installed.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  libjemalloc-dev                   # the server's allocator (used_memory, MEMORY STATS)
  liblua5.1-0-dev lua-cjson-dev lua-bitop-dev   # Lua 5.1 as Redis embeds it, with cjson and bit
  libxxhash-dev                     # XXH3 for DIGEST and SET/DELEX IFDEQ (Redis 8.4)
  libssl-dev                        # SHA-1 of scripts, SHA-256 of ACL passwords (libcrypto)
  liblzf-dev                        # LZF of RDB strings and DUMP payloads, as Redis compresses them
  liburing-dev                      # io_uring batches of socket reads and sends (io-uring yes)
  redis-server redis-tools          # the reference server the tests and benchmarks compare with
  redis-sentinel                    # failover of keywarden primaries in the HA tests (docs/replication.md)
  python3 python3-redis python3-pytest
  python3-pytest-xdist              # two pytest workers in scripts/test.sh
  python3-matplotlib                # the plots of bench/memory_expiry_benchmark.py
  clang libclang-rt-14-dev          # the libFuzzer targets (scripts/fuzz.sh, docs/fuzzing.md)
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian starts a redis-server service on install where an init system runs; the tests start
# their own servers on free ports, so a running system instance is harmless but unneeded.
