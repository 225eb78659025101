#!/usr/bin/python3
"""Locks across a primary and its replica (issue 18): what durable grants cost, and whether they
keep mutual exclusion while the primary is killed and failed over, on keywarden-server and on a
stock redis-server side by side.

Two parts, each run on both kinds of server:

* ``latency``: a primary with one replica (REPLICAOF, link up). lock_bench grant-latency times
  lock() of one uncontended keywarden::Lock handle, first with durability off, then with
  ``require_replicas(1)`` (the grant is followed by WAIT 1 on the same connection). The table
  gives p50/p99 in microseconds and the on/off ratio per server, and keywarden/redis per column.
  With durability off, keywarden grants by its native LOCK.ACQUIRE; a durable handle uses
  Redisson's scripts on both servers.
* ``failover``: the same pair watched by one redis-sentinel (quorum 1, down-after 1 s). lock_bench
  failover runs contenders (each its own Client through the sentinel, one handle each, grants
  durable with require_replicas(1), watchdog lease 5 s) looping lock() -> a few ms inside ->
  unlock(), while this script fails the primary over again and again: by turns kill -9 (the
  node is restarted and Sentinel turns it into a replica of the new primary) and SENTINEL
  FAILOVER. Each round waits for the new primary and for its replica's link. It prints grants,
  violations (a grant while another contender still held a hold valid by its own account,
  never told on_lost: must be 0), holds reported lost through on_lost, grants refused as not
  durable (no replica linked yet: the caller got NotDurableError, the grant undone) and other
  errors the contenders waited out (no primary reachable).

    /usr/bin/python3 bench/lock_failover_benchmark.py            # both parts, 6 failovers each
    /usr/bin/python3 bench/lock_failover_benchmark.py --quick    # smoke run: 2 failovers each
    /usr/bin/python3 bench/lock_failover_benchmark.py --part latency --cycles 5000

Exit 0; 2 when a failover run counted a violation or a lock_bench run failed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (HOST, add_server_arguments, executable, markdown_table,  # noqa: E402
                     resolve_server_arguments)
from redis_benchmark import REPO_ROOT  # noqa: E402

DEFAULT_LOCK_BENCH = REPO_ROOT / "build" / "bench" / "lock_bench"
SENTINEL = shutil.which("redis-sentinel") or "/usr/bin/redis-sentinel"
MASTER = "mymaster"
DEADLINE = 60.0  # seconds for any one wait (a loaded 2-core machine)


_ports_taken: set[int] = set()


def private_port() -> int:
    """A free loopback port below the kernel's ephemeral range (32768 and up on Linux), which
    bind(0) never hands out. This run kills nodes and restarts them on their port, and its
    sentinel reconfigures whatever answers at a port it knows: an ephemeral port, free while its
    node is down, could go to a server of another test meanwhile, which the sentinel would then
    turn into a replica of ours (it happened with the e2e Sentinel tests running beside)."""
    rng = random.Random(os.getpid() ^ time.monotonic_ns())
    while True:
        port = rng.randrange(20000, 32000)
        if port in _ports_taken:
            continue
        with socket.socket() as s:
            try:
                s.bind((HOST, port))
            except OSError:
                continue
        _ports_taken.add(port)
        return port


class Node:
    """A server (or sentinel) with a fixed port, its own directory and config file, so that it
    can be killed and restarted where Sentinel expects it, reading back what Sentinel wrote."""

    def __init__(self, binary: str, lines: list[str], sentinel: bool = False):
        self.binary = executable(binary)
        self.port = private_port()
        self.dir = tempfile.mkdtemp(prefix="kw-bench-failover-")
        self.config = os.path.join(self.dir, "node.conf")
        with open(self.config, "w") as f:
            f.write("\n".join([f"port {self.port}", f"bind {HOST}", f'dir "{self.dir}"', *lines])
                    + "\n")
        self.sentinel = sentinel
        self.proc: subprocess.Popen | None = None

    def start(self) -> "Node":
        argv = [self.binary, self.config] + (["--sentinel"] if self.sentinel else [])
        with open(os.path.join(self.dir, "log"), "ab") as log:
            self.proc = subprocess.Popen(argv, cwd=self.dir, stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=subprocess.STDOUT)
        wait_until(lambda: self.client().ping(), f"{self.binary} on {self.port} to start")
        return self

    def client(self) -> redis.Redis:
        return redis.Redis(host=HOST, port=self.port, socket_timeout=5, decode_responses=True)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def cleanup(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def wait_until(predicate, what: str, timeout: float = DEADLINE):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except (redis.RedisError, OSError) as e:
            last = e
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what} (last error: {last})")


def data_node(binary: str, primary: Node | None = None) -> Node:
    lines = ['save ""', "appendonly no", "repl-diskless-sync-delay 0"]
    if primary is not None:
        lines.append(f"replicaof {HOST} {primary.port}")
    return Node(binary, lines).start()


def link_up(replica: Node, primary: Node) -> bool:
    info = replica.client().info("replication")
    return (info.get("role") == "slave" and int(info.get("master_port", 0)) == primary.port
            and info.get("master_link_status") == "up")


def start_pair(binary: str) -> tuple[Node, Node]:
    primary = data_node(binary)
    replica = data_node(binary, primary)
    wait_until(lambda: link_up(replica, primary), "the replica's link")
    return primary, replica


def run_lock_bench(lock_bench: str, *args) -> dict:
    out = subprocess.run([lock_bench, *map(str, args)], capture_output=True, text=True,
                         timeout=600)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        raise RuntimeError(f"lock_bench {' '.join(map(str, args))} failed ({out.returncode}): "
                           f"{out.stderr[-2000:]}")
    return json.loads(lines[-1])


def latency_part(args, kinds: dict[str, str]) -> tuple[str, bool]:
    results = {}
    for kind, binary in kinds.items():
        primary, replica = start_pair(binary)
        try:
            for replicas in (0, 1):
                print(f"{kind}: grant latency, durability {'on' if replicas else 'off'}, "
                      f"{args.cycles} cycles", file=sys.stderr)
                results[kind, replicas] = run_lock_bench(
                    args.lock_bench, "grant-latency", "--port", primary.port, "--cycles",
                    args.cycles, "--warmup", args.cycles // 10, "--replicas", replicas,
                    "--name", f"bench:latency:{replicas}")
        finally:
            replica.cleanup()
            primary.cleanup()
    rows = []
    for kind in kinds:
        off, on = results[kind, 0], results[kind, 1]
        rows.append([kind, str(off["p50_us"]), str(off["p99_us"]), str(on["p50_us"]),
                     str(on["p99_us"]), f"{on['p50_us'] / max(off['p50_us'], 1):.2f}",
                     f"{on['p99_us'] / max(off['p99_us'], 1):.2f}"])
    if len(kinds) == 2:
        ratios = [f"{results['keywarden', n][q] / max(results['redis', n][q], 1):.2f}"
                  for n in (0, 1) for q in ("p50_us", "p99_us")]
        rows.append(["keywarden / redis", *ratios, "", ""])
    table = markdown_table(["server", "off p50 µs", "off p99 µs", "durable p50 µs",
                            "durable p99 µs", "p50 on/off", "p99 on/off"], rows,
                           right={1, 2, 3, 4, 5, 6})
    return (f"Grant latency of an uncontended Lock, primary + 1 replica, {args.cycles} cycles: "
            f"durability off vs require_replicas(1): keywarden vs redis-server\n\n{table}\n", True)


def master_port(sentinel: Node) -> int | None:
    addr = sentinel.client().execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER)
    return int(addr[1]) if addr else None


def failover_round(index: int, sentinel: Node, nodes: dict[int, Node]) -> str:
    """Moves the primary to the other node, kill -9 on even rounds, SENTINEL FAILOVER on odd
    ones; returns once the new primary has its replica linked again."""
    old = master_port(sentinel)
    new_port = next(port for port in nodes if port != old)
    how = "kill -9" if index % 2 == 0 else "SENTINEL FAILOVER"
    if index % 2 == 0:
        nodes[old].kill()
    else:
        wait_until(lambda: sentinel.client().execute_command("SENTINEL", "FAILOVER", MASTER),
                   "SENTINEL FAILOVER to be accepted")
    wait_until(lambda: master_port(sentinel) == new_port, f"the sentinel to promote {new_port}")
    if index % 2 == 0:
        nodes[old].start()  # back as a primary with nothing; Sentinel makes it a replica
    wait_until(lambda: link_up(nodes[old], nodes[new_port]), "the old primary to follow")
    return how


def failover_part(args, kinds: dict[str, str]) -> tuple[str, bool]:
    rows = []
    ok = True
    for kind, binary in kinds.items():
        primary, replica = start_pair(binary)
        nodes = {primary.port: primary, replica.port: replica}
        sentinel = Node(SENTINEL, [f"sentinel monitor {MASTER} {HOST} {primary.port} 1",
                                   f"sentinel down-after-milliseconds {MASTER} 1000",
                                   f"sentinel failover-timeout {MASTER} 2000",
                                   f"sentinel parallel-syncs {MASTER} 1"], sentinel=True)
        bench = None
        try:
            sentinel.start()
            wait_until(lambda: sentinel.client().execute_command("SENTINEL", "REPLICAS", MASTER),
                       "the sentinel to see the replica")
            # Its own deadline is a backstop: it stops when its stdin closes.
            seconds = args.failovers * (args.round_seconds + DEADLINE) + 60
            bench = subprocess.Popen(
                [args.lock_bench, "failover", "--sentinel-port", str(sentinel.port),
                 "--contenders", str(args.contenders), "--seconds", str(seconds),
                 "--replicas", "1", "--hold-ms", "5", "--lease-ms", "5000",
                 "--name", "bench:failover", "--until-stdin-closes"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            hows = []
            started = time.monotonic()
            for index in range(args.failovers):
                time.sleep(args.round_seconds)
                hows.append(failover_round(index, sentinel, nodes))
                print(f"{kind}: failover {index + 1}/{args.failovers} ({hows[-1]}) done at "
                      f"{time.monotonic() - started:.1f} s", file=sys.stderr)
            time.sleep(args.round_seconds)
            out, err = bench.communicate(timeout=120)
            bench = None
            lines = [line for line in out.splitlines() if line.startswith("{")]
            if not lines:
                raise RuntimeError(f"lock_bench failover printed nothing: {err[-2000:]}")
            result = json.loads(lines[-1])
        finally:
            if bench is not None:
                bench.kill()
                bench.wait(30)
            sentinel.cleanup()
            for node in nodes.values():
                node.cleanup()
        kills = sum(how == "kill -9" for how in hows)
        good = result["violations"] == 0 and result["grants"] > 0
        ok &= good
        rows.append([kind, f"{kills} + {len(hows) - kills}", str(result["grants"]),
                     str(result["violations"]), str(result["lost"]),
                     str(result["not_durable"]), str(result["errors"]),
                     "ok" if good else "VIOLATION" if result["violations"] else "NO GRANTS"])
        if result["errors"]:
            print(f"{kind}: last error: {result['last_error']}", file=sys.stderr)
    table = markdown_table(["server", "kill -9 + SENTINEL FAILOVER", "durable grants",
                            "violations", "lost (on_lost)", "refused not durable",
                            "errors waited out", "check"], rows, right={2, 3, 4, 5, 6})
    return (f"Durable grants (require_replicas(1)) under repeated failover, primary + 1 replica "
            f"+ 1 sentinel, {args.contenders} contenders: keywarden vs redis-server\n\n{table}\n", ok)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_server_arguments(parser)
    parser.add_argument("--lock-bench", default=str(DEFAULT_LOCK_BENCH))
    parser.add_argument("--part", choices=("latency", "failover", "all"), default="all")
    parser.add_argument("--cycles", type=int, default=3000)
    parser.add_argument("--failovers", type=int, default=6)
    parser.add_argument("--round-seconds", type=float, default=3.0)
    parser.add_argument("--contenders", type=int, default=4)
    parser.add_argument("--only", choices=("keywarden", "redis"))
    parser.add_argument("--quick", action="store_true",
                        help="300 cycles, 2 failovers 1 s apart")
    args = parser.parse_args()
    resolve_server_arguments(args)

    def on_sigterm(*_):
        raise KeyboardInterrupt()  # through the finally blocks that stop every process
    signal.signal(signal.SIGTERM, on_sigterm)
    if args.quick:
        args.cycles, args.failovers, args.round_seconds = 300, 2, 1.0
    if not os.path.exists(args.lock_bench):
        sys.exit(f"{args.lock_bench} does not exist (scripts/build.sh release lock_bench)")
    kinds = {"keywarden": args.keywarden, "redis": args.redis}
    if args.only:
        kinds = {args.only: kinds[args.only]}
    ok = True
    if args.part in ("latency", "all"):
        text, good = latency_part(args, kinds)
        print(text)
        ok &= good
    if args.part in ("failover", "all"):
        text, good = failover_part(args, kinds)
        print(text)
        ok &= good
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
