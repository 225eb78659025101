#!/usr/bin/python3
"""Grant-to-waiter latency after `kill -9` of the holder's process: keywarden's connection-bound
grants (LOCK.ACQUIRE … BIND) beside lease-only grants, on keywarden and on a stock redis-server
(issue 19).

Each trial starts a holder process that takes the lock with a lease of --lease-ms and reports
it, queues a waiter, then kills the holder with SIGKILL and measures how long the waiter waits
from the kill to its grant. Modes:

* ``keywarden native BIND``: the holder's grant is bound to its connection; the kernel closes
  the socket of the killed process and the server hands the lock over at once.
* ``keywarden native lease-only``: the same without BIND; the waiter (queued in the server) gets
  the lock when the lease ends (the server wakes at the lease deadline).
* ``redis scripts lease-only``: Redisson's protocol on redis-server (tryLock script, wait for the
  unlock message or the lease, try again); nobody publishes for a dead holder, so the waiter
  gets the lock after the lease, on its next try.

Figures are milliseconds from the kill to the grant; the lease column says what a lease-only
lock must wait at worst. Each trial checks that the waiter, not anyone else, holds the lock.

    /usr/bin/python3 bench/lock_kill_benchmark.py            # 5 trials per mode, 1 s lease
    /usr/bin/python3 bench/lock_kill_benchmark.py --quick    # smoke run

Exit 0, 2 if a check failed.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (HOST, add_server_arguments, markdown_table,  # noqa: E402
                     resolve_server_arguments, running_servers)

NAME = "bench:killed"
CHANNEL = "redisson_lock__channel:{bench:killed}"

TRY_LOCK = (
    "if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) "
    "then redis.call('hincrby', KEYS[1], ARGV[2], 1); "
    "redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; "
    "return redis.call('pttl', KEYS[1]);")

# The holder: takes the lock (natively, with or without BIND, or by the script), says so, and
# waits to be killed.
HOLDER = r"""
import sys, time, redis
port, mode, lease, script = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
conn = redis.Redis(host="127.0.0.1", port=port)
if mode == "scripts":
    assert conn.eval(script, 1, "bench:killed", lease, "holder") is None
else:
    extra = ["BIND"] if mode == "bind" else []
    assert conn.execute_command("LOCK.ACQUIRE", "bench:killed", "holder", lease, *extra) == 1
print("held", flush=True)
time.sleep(3600)
"""


def trial(mode: str, port: int, lease_ms: int) -> tuple[float, bool]:
    conn = redis.Redis(host=HOST, port=port)
    conn.delete(NAME)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(port), mode, str(lease_ms),
                               TRY_LOCK], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        waiter = redis.Redis(host=HOST, port=port, socket_timeout=lease_ms / 1000 + 30)
        if mode == "scripts":
            subscriber = waiter.pubsub()
            subscriber.subscribe(CHANNEL)
            subscriber.get_message(timeout=5)
            assert waiter.eval(TRY_LOCK, 1, NAME, 30000, "waiter") is not None
            killed = time.monotonic()
            os.kill(holder.pid, signal.SIGKILL)
            while True:
                ttl = waiter.eval(TRY_LOCK, 1, NAME, 30000, "waiter")
                if ttl is None:
                    break
                subscriber.get_message(timeout=max(ttl, 1) / 1000)
            granted = time.monotonic()
            subscriber.close()
        else:
            waiter_conn = waiter.connection_pool.get_connection("LOCK.ACQUIRE")
            waiter_conn.send_command("LOCK.ACQUIRE", NAME, "waiter", 30000, "TIMEOUT", 0)
            # Queued before the kill (LOCK.INFO lists it).
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                info = conn.execute_command("LOCK.INFO", NAME)
                if info[7]:
                    break
                time.sleep(0.001)
            killed = time.monotonic()
            os.kill(holder.pid, signal.SIGKILL)
            assert waiter_conn.read_response() == 1
            granted = time.monotonic()
            waiter.connection_pool.release(waiter_conn)
        holder.wait()
        ok = conn.hgetall(NAME) == {b"waiter": b"1"}
        return (granted - killed) * 1000, ok
    finally:
        holder.kill()
        holder.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_server_arguments(parser)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--lease-ms", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="2 trials, 300 ms lease")
    args = parser.parse_args()
    resolve_server_arguments(args)
    trials = 2 if args.quick else args.trials
    lease_ms = 300 if args.quick else args.lease_ms
    rows = []
    failed = False
    with running_servers(args) as servers:
        for label, server, mode in (("keywarden native BIND", "keywarden", "bind"),
                                    ("keywarden native lease-only", "keywarden", "lease"),
                                    ("redis scripts lease-only", "redis", "scripts")):
            print(f"{label}: {trials} trials, lease {lease_ms} ms", file=sys.stderr)
            waits = []
            ok = True
            for _ in range(trials):
                waited, good = trial(mode, servers[server].port, lease_ms)
                waits.append(waited)
                ok &= good
            failed |= not ok
            waits.sort()
            rows.append([label, str(lease_ms), f"{waits[len(waits) // 2]:.1f}",
                         f"{waits[-1]:.1f}",
                         f"{trials} trials, " + ("waiter granted" if ok else "CHECK FAILED")])
    print(f"Grant to the waiter after kill -9 of the holder, lease {lease_ms} ms: "
          "keywarden vs redis-server\n")
    print(markdown_table(["mode", "lease ms", "kill to grant p50 ms", "max ms", "check"], rows,
                         right={1, 2, 3}))
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
