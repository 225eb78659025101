#!/usr/bin/python3
"""The unlock path of a single-key lock: server CPU per release, as a command and as a script.

A lock release must delete the key only if it still holds the releaser's token. Before Redis
8.4 that takes a script (GET, compare, DEL: what every Redlock-style client sends by EVALSHA);
keywarden has Redis 8.4's ``DELEX key IFEQ token`` (and Valkey's ``DELIFEQ``), which does the
same in one command. This measures, in one run:

* keywarden, ``DELEX lock IFEQ token``
* keywarden, ``EVALSHA <compare-and-delete> 1 lock token``
* redis-server 7.0, the same EVALSHA (the unlock every client sends to it today)

Each run first takes N locks (``SET lock:<i> <token i> NX PX 600000``, not measured), then
releases all of them through pipelined batches of 1,000 and reads the server's CPU time
(utime + stime of /proc/<pid>/stat) around the release phase only. Every reply must be 1 (each
release really deleted its key) and the database must be empty afterwards. Runs alternate
between the servers for several rounds; the table shows medians.

    /usr/bin/python3 bench/unlock_benchmark.py            # 3 rounds of 300,000 unlocks
    /usr/bin/python3 bench/unlock_benchmark.py --quick    # smoke run, a few seconds

The server under test is --keywarden, else $KEYWARDEN_SERVER, else
<repo>/build/src/server/keywarden-server. It builds nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (HOST, add_server_arguments, encode, markdown_table, median,  # noqa: E402
                     redis_version, resolve_server_arguments, running_servers)

RELEASE = """if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0"""
RELEASE_SHA = hashlib.sha1(RELEASE.encode()).hexdigest()
BATCH = 1000


class Conn:
    def __init__(self, port: int):
        self.sock = socket.create_connection((HOST, port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def pipeline(self, payload: bytes, count: int) -> list[bytes]:
        """Sends `count` commands and returns their reply lines (simple replies only)."""
        self.sock.sendall(payload)
        replies: list[bytes] = []
        while len(replies) < count:
            at = self.buffer.find(b"\r\n")
            if at < 0:
                chunk = self.sock.recv(1 << 20)
                if not chunk:
                    raise ConnectionError("server closed the connection")
                self.buffer += chunk
                continue
            line, self.buffer = self.buffer[:at], self.buffer[at + 2:]
            if line.startswith(b"$"):  # a bulk (SCRIPT LOAD's sha): read its payload line next
                continue
            replies.append(line)
        return replies

    def close(self) -> None:
        self.sock.close()


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(server, method: str, count: int) -> dict:
    conn = Conn(server.port)
    try:
        conn.pipeline(encode("FLUSHALL"), 1)
        if method == "evalsha":
            conn.pipeline(encode("SCRIPT", "LOAD", RELEASE), 1)
        tokens = [b"%032x" % (i * 2654435761 + 12345) for i in range(count)]
        for start in range(0, count, BATCH):
            end = min(count, start + BATCH)
            payload = b"".join(encode("SET", f"lock:{i}", tokens[i], "NX", "PX", 600000)
                               for i in range(start, end))
            replies = conn.pipeline(payload, end - start)
            assert all(r == b"+OK" for r in replies), replies[:3]
        batches = []
        for start in range(0, count, BATCH):
            end = min(count, start + BATCH)
            if method == "delex":
                batches.append(b"".join(encode("DELEX", f"lock:{i}", "IFEQ", tokens[i])
                                        for i in range(start, end)))
            else:
                batches.append(b"".join(encode("EVALSHA", RELEASE_SHA, 1, f"lock:{i}", tokens[i])
                                        for i in range(start, end)))
        released = 0
        cpu_before = cpu_seconds(server.proc.pid)
        wall_before = time.perf_counter()
        for index, payload in enumerate(batches):
            replies = conn.pipeline(payload, min(BATCH, count - index * BATCH))
            released += sum(1 for r in replies if r == b":1")
        wall = time.perf_counter() - wall_before
        cpu = cpu_seconds(server.proc.pid) - cpu_before
        left = int(conn.pipeline(encode("DBSIZE"), 1)[0][1:])
        return {"cpu": cpu, "wall": wall, "released": released, "left": left}
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_server_arguments(parser)
    parser.add_argument("--unlocks", type=int, default=300_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="20,000 unlocks, one round")
    args = parser.parse_args()
    resolve_server_arguments(args)
    if args.quick:
        args.unlocks, args.rounds = 20_000, 1
    cases = [("keywarden", "delex"), ("keywarden", "evalsha"), ("redis", "evalsha")]
    results: dict[tuple[str, str], list[dict]] = {case: [] for case in cases}
    with running_servers(args) as servers:
        for round_index in range(args.rounds):
            order = cases if round_index % 2 == 0 else list(reversed(cases))
            for name, method in order:
                results[(name, method)].append(one_run(servers[name], method, args.unlocks))
    baseline = median([r["cpu"] for r in results[("redis", "evalsha")]])
    rows = []
    for name, method in cases:
        runs = results[(name, method)]
        cpu = median([r["cpu"] for r in runs])
        wall = median([r["wall"] for r in runs])
        ok = all(r["released"] == args.unlocks and r["left"] == 0 for r in runs)
        label = "DELEX key IFEQ token" if method == "delex" else "EVALSHA compare-and-delete"
        rows.append([name, label, f"{args.unlocks:,}", f"{cpu / args.unlocks * 1e6:.2f}",
                     f"{args.unlocks / wall:,.0f}", f"{cpu / baseline:.2f}" if baseline else "-",
                     "all released" if ok else "NOT all released"])
    print(f"unlock path, keywarden vs redis-server, {args.unlocks:,} unlocks per run, pipelined by {BATCH:,}, "
          f"median of {args.rounds} round(s); redis-server {redis_version(args.redis)}")
    print(markdown_table(["server", "unlock", "unlocks", "server CPU µs/unlock", "unlocks/s",
                          "CPU ÷ redis EVALSHA", "check"], rows, right={2, 3, 4, 5}))


if __name__ == "__main__":
    main()
