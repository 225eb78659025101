#!/usr/bin/python3
"""Lock hand-off latency with 8 contenders: keywarden's native LOCK.ACQUIRE queue beside the
Redisson script protocol on keywarden and on a stock redis-server (issue 19).

Three modes, each 8 contender processes (processes, not threads: one GIL would serialise them)
looping acquire -> critical section -> release on one lock name for --seconds:

* ``keywarden native``: LOCK.ACQUIRE name owner 30000 TIMEOUT 0, LOCK.RELEASE name owner; the
  server queues the waiters and hands the lock to the oldest.
* ``keywarden scripts`` and ``redis scripts``: Redisson's protocol — subscribe to the lock's
  channel, try the lock with the tryLock script, wait for the unlock message (or the lease)
  and try again; the unlock script publishes when it deletes the lock.

The critical section is INCR of a counter on the contender's connection; it must end equal to
the number of cycles. Every cycle is recorded as (contender, acquire returned, release about to
be sent) in CLOCK_MONOTONIC nanoseconds (time.monotonic_ns, shared by the processes). Cycles
sorted by acquire time must not overlap. A hand-off is a cycle whose contender is not the
previous holder; its latency runs from the previous holder's release to this grant. The share
of cycles where the releaser took the lock straight back shows how unfair a lock is.

Python's own overhead is in every figure, the same for all three modes; compare rows, not the
absolute numbers with bench/lock_benchmark.py (C++ contenders).

    /usr/bin/python3 bench/lock_handoff_benchmark.py            # 5 s per mode
    /usr/bin/python3 bench/lock_handoff_benchmark.py --quick    # smoke run

Exit 0, 2 if a correctness check failed.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (HOST, add_server_arguments, markdown_table,  # noqa: E402
                     resolve_server_arguments, running_servers)

CONTENDERS = 8
LEASE_MS = 30000
NAME = "bench:lock"
CHANNEL = "redisson_lock__channel:{bench:lock}"
COUNTER = "bench:counter"

TRY_LOCK = (
    "if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) "
    "then redis.call('hincrby', KEYS[1], ARGV[2], 1); "
    "redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; "
    "return redis.call('pttl', KEYS[1]);")
UNLOCK = (
    "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil; end; "
    "local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); "
    "if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); return 0; "
    "else redis.call('del', KEYS[1]); redis.call('publish', KEYS[2], ARGV[1]); return 1; end;")


def contender(mode: str, port: int, index: int, start_ns: int, end_ns: int, out) -> None:
    conn = redis.Redis(host=HOST, port=port)
    me = f"contender-{index}"
    records = []
    if mode == "native":
        def acquire():
            assert conn.execute_command("LOCK.ACQUIRE", NAME, me, LEASE_MS, "TIMEOUT", 0) == 1

        def release():
            assert conn.execute_command("LOCK.RELEASE", NAME, me) == 0
    else:
        subscriber = conn.pubsub()
        subscriber.subscribe(CHANNEL)
        subscriber.get_message(timeout=5)  # the subscribe confirmation
        try_lock = conn.register_script(TRY_LOCK)
        unlock = conn.register_script(UNLOCK)

        def acquire():
            while True:
                ttl = try_lock(keys=[NAME], args=[LEASE_MS, me])
                if ttl is None:
                    return
                subscriber.get_message(timeout=min(ttl, 1000) / 1000)

        def release():
            assert unlock(keys=[NAME, CHANNEL], args=[0, LEASE_MS, me]) == 1
    while time.monotonic_ns() < start_ns:
        time.sleep(0.001)
    while time.monotonic_ns() < end_ns:
        acquire()
        granted = time.monotonic_ns()
        conn.incr(COUNTER)
        releasing = time.monotonic_ns()
        records.append((index, granted, releasing))
        release()
    out.put(records)


def run_mode(mode: str, port: int, seconds: float) -> dict:
    redis.Redis(host=HOST, port=port).delete(NAME, COUNTER)
    queue = multiprocessing.Queue()
    start_ns = time.monotonic_ns() + 500_000_000  # every process started and connected
    end_ns = start_ns + int(seconds * 1e9)
    processes = [multiprocessing.Process(target=contender,
                                         args=(mode, port, i, start_ns, end_ns, queue))
                 for i in range(CONTENDERS)]
    for process in processes:
        process.start()
    cycles = []
    for _ in processes:
        cycles += queue.get(timeout=seconds + 60)
    for process in processes:
        process.join()
    cycles.sort(key=lambda cycle: cycle[1])
    counter = int(redis.Redis(host=HOST, port=port).get(COUNTER) or 0)
    overlap = any(later[1] < earlier[2] for earlier, later in zip(cycles, cycles[1:]))
    handoffs = [(later[1] - earlier[2]) / 1000 for earlier, later in zip(cycles, cycles[1:])
                if later[0] != earlier[0]]
    handoffs.sort()
    reacquired = sum(1 for earlier, later in zip(cycles, cycles[1:]) if later[0] == earlier[0])

    def percentile(share: float) -> str:
        if not handoffs:
            return "-"
        return f"{handoffs[min(len(handoffs) - 1, int(share * len(handoffs)))]:.0f}"

    return {"cycles": len(cycles), "counter_exact": counter == len(cycles), "overlap": overlap,
            "p50": percentile(0.50), "p99": percentile(0.99),
            "reacquired": f"{100 * reacquired / max(1, len(cycles) - 1):.0f} %",
            "per_second": f"{len(cycles) / seconds:,.0f}"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_server_arguments(parser)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--quick", action="store_true", help="1 s per mode")
    args = parser.parse_args()
    resolve_server_arguments(args)
    seconds = 1.0 if args.quick else args.seconds
    results = {}
    with running_servers(args) as servers:
        for label, server, mode in (("keywarden native", "keywarden", "native"),
                                    ("keywarden scripts", "keywarden", "scripts"),
                                    ("redis scripts", "redis", "scripts")):
            print(f"{label}: {CONTENDERS} contenders, {seconds:g} s", file=sys.stderr)
            results[label] = run_mode(mode, servers[server].port, seconds)
    rows = []
    failed = False
    for label, result in results.items():
        ok = result["counter_exact"] and not result["overlap"]
        failed |= not ok
        rows.append([label, result["p50"], result["p99"], result["reacquired"],
                     result["per_second"],
                     f"{result['cycles']} cycles, " +
                     ("counter exact, no overlap" if ok else "CHECK FAILED")])
    print(f"Lock hand-off, {CONTENDERS} contenders, {seconds:g} s per mode: "
          "keywarden vs redis-server\n")
    print(markdown_table(["mode", "hand-off p50 µs", "hand-off p99 µs", "releaser re-took",
                          "cycles/s", "check"], rows, right={1, 2, 3, 4}))
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
