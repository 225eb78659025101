#!/usr/bin/python3
"""What fencing tokens leave behind: keys left after N fenced acquisitions of distinct names.

Redisson's RFencedLock keeps a counter `redisson_lock_token:{name}` per name, never deleted
(tokens must never go backwards), so every distinct name ever locked leaves a key. keywarden's
FencedLock shares one counter among the names of a cluster slot (docs/locks.md, "Where the
counter lives"), so at most 16384 counters exist. This runs lock_bench's `fenced-names` mode —
keywarden::FencedLock taking and releasing N distinct names from 4 threads — for both counter
layouts on keywarden-server and on redis-server, each on a flushed database, and prints the keys
left once the releases' short-lived unlock latches have expired, and the acquire+release cycles
per second.

    /usr/bin/python3 bench/fencing_keys_benchmark.py                 # 1,000,000 names per run
    /usr/bin/python3 bench/fencing_keys_benchmark.py --names 100000
    /usr/bin/python3 bench/fencing_keys_benchmark.py --quick         # smoke run, a few seconds

It builds nothing: lock_bench is --lock-bench (default build/bench/lock_bench), the server under
test --keywarden (else $KEYWARDEN_SERVER, else build/src/server/keywarden-server).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (HOST, add_server_arguments, markdown_table,  # noqa: E402
                     redis_version, resolve_server_arguments, running_servers)

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_LOCK_BENCH = REPO_ROOT / "build" / "bench" / "lock_bench"
LAYOUTS = {"per slot (keywarden)": [], "per name (Redisson)": ["--per-name-counter"]}


def run(args, port: int, layout_flags: list[str]) -> dict:
    subprocess.run(["redis-cli", "-h", HOST, "-p", str(port), "FLUSHALL"], check=True,
                   capture_output=True, timeout=60)
    argv = [args.lock_bench, "fenced-names", "--host", HOST, "--port", str(port),
            "--names", str(args.names), "--contenders", str(args.contenders),
            "--name", "bench:fenced", *layout_flags]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=args.run_timeout)
    if out.returncode not in (0, 2):
        raise RuntimeError(f"lock_bench failed ({out.returncode}): {out.stderr.strip()}")
    return json.loads(out.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(
        description="keys left by FencedLock's counters, keywarden-server beside redis-server",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    add_server_arguments(parser)
    parser.add_argument("--lock-bench", default=str(DEFAULT_LOCK_BENCH),
                        help="the lock_bench binary (built by `ninja lock_bench`)")
    parser.add_argument("--names", type=int, default=1_000_000, help="distinct names per run")
    parser.add_argument("--contenders", type=int, default=4, help="threads, one Client each")
    parser.add_argument("--run-timeout", type=float, default=900, help="seconds per run")
    parser.add_argument("--json", metavar="FILE", help="also write every run")
    parser.add_argument("--quick", action="store_true", help="smoke run: 20,000 names")
    args = parser.parse_args()
    resolve_server_arguments(args)
    if args.quick:
        args.names = 20_000
    if not os.path.exists(args.lock_bench):
        sys.exit(f"{args.lock_bench} does not exist: build it (ninja -C build lock_bench) or "
                 f"pass --lock-bench")

    runs = []
    try:
        with running_servers(args) as servers:
            for layout, flags in LAYOUTS.items():
                for server in ("keywarden", "redis"):
                    r = run(args, servers[server].port, flags)
                    if not servers[server].alive():
                        raise RuntimeError(f"{server} died")
                    r.update(server=server, layout=layout)
                    runs.append(r)
                    print(f"#   {server:9s} {layout:22s} {r['keys_left']:,} keys left, "
                          f"{r['acquisitions_per_second']:,.0f} cycles/s", file=sys.stderr)
    except (RuntimeError, subprocess.SubprocessError, OSError, ValueError) as e:
        print(f"\nbenchmark aborted: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nbenchmark interrupted", file=sys.stderr)
        return 130

    by = {(r["server"], r["layout"]): r for r in runs}
    rows = []
    for layout in LAYOUTS:
        for server in ("keywarden", "redis"):
            r = by[(server, layout)]
            redis_rate = by[("redis", layout)]["acquisitions_per_second"]
            rows.append([server, layout, f"{r['names']:,}", f"{r['keys_left']:,}",
                         f"{r['keys_left'] / r['names']:.4f}",
                         f"{r['acquisitions_per_second']:,.0f}",
                         f"{r['acquisitions_per_second'] / redis_rate:.2f}x",
                         "ok" if r["bad_tokens"] == 0 else f"{r['bad_tokens']} bad tokens"])
    print()
    print(f"FencedLock counters: keys left after {args.names:,} distinct names, keywarden vs "
          f"redis-server {redis_version(args.redis)}, {args.contenders} threads, "
          f"{os.cpu_count()} CPUs, {datetime.date.today()}")
    print()
    print(markdown_table(["server", "counter layout", "names", "keys left", "keys per name",
                          "cycles/s", "vs redis", "tokens"], rows, right={2, 3, 4, 5, 6}))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": " ".join(sys.argv), "runs": runs}, f, indent=2)
    return 0 if all(r["bad_tokens"] == 0 for r in runs) else 2


if __name__ == "__main__":
    sys.exit(main())
