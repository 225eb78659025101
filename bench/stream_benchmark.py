#!/usr/bin/python3
"""keywarden-server beside a stock redis-server: streams (issue 23).

Tests:

* ``xadd``: redis-benchmark running ``XADD bench:s * f __rand_int__`` (50 clients, pipelines 1
  and 16): appends with generated IDs, the tail node filling and closing.
* ``xreadgroup+xack``: one client consuming a stream of ENTRIES entries through a consumer
  group, pipelined: ``XREADGROUP GROUP g c COUNT 100 STREAMS bench:q >`` then ``XACK`` of the
  100 IDs it got, until the stream is drained; figure: entries consumed and acknowledged per
  second (the client's own parsing is the same for both servers).
* ``memory``: used_memory growth per entry after ENTRIES ``XADD bench:m <i>-0 name <8 bytes>
  count <int>`` (explicit IDs, so both servers hold the same nodes), and MEMORY USAGE of the key
  divided by its length.

Each throughput test runs on both servers in alternating order for several rounds; the table
shows medians with keywarden/redis ratios. Before the runs the servers must agree on the
consumed stream (XINFO STREAM length and last ID, the same XRANGE).

    /usr/bin/python3 bench/stream_benchmark.py             # 3 rounds
    /usr/bin/python3 bench/stream_benchmark.py --quick     # smoke run, a few seconds

The server under test is --keywarden, else $KEYWARDEN_SERVER, else
<repo>/build/src/server/keywarden-server. It builds nothing.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (HOST, add_server_arguments, encode, markdown_table, median,  # noqa: E402
                     redis_version, resolve_server_arguments, running_servers)


class Conn:
    """A raw RESP connection with just enough parsing for the replies used here."""

    def __init__(self, port: int):
        self.sock = socket.create_connection((HOST, port), timeout=60)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def _line(self) -> bytes:
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n: int) -> bytes:
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind in (b"+", b"-"):
            return rest
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise ValueError(line)

    def call(self, *args):
        self.sock.sendall(encode(*args))
        return self.read()

    def pipeline(self, commands):
        self.sock.sendall(b"".join(encode(*c) for c in commands))
        return [self.read() for _ in commands]

    def close(self):
        self.sock.close()


def used_memory(conn: Conn) -> int:
    text = conn.call("INFO", "memory").decode()
    return int(next(line.split(":")[1] for line in text.splitlines()
                    if line.startswith("used_memory:")))


def fill_queue(conn: Conn, entries: int) -> None:
    conn.call("DEL", "bench:q")
    batch = []
    for i in range(1, entries + 1):
        batch.append(("XADD", "bench:q", f"{i}-0", "payload", f"value-{i % 1000:04d}"))
        if len(batch) == 1000:
            conn.pipeline(batch)
            batch = []
    if batch:
        conn.pipeline(batch)
    conn.call("XGROUP", "CREATE", "bench:q", "g", "0")


def consume(server, entries: int) -> dict:
    conn = Conn(server.port)
    fill_queue(conn, entries)
    cpu_before = server.cpu_ns()
    start = time.perf_counter()
    done = 0
    while True:
        reply = conn.call("XREADGROUP", "GROUP", "g", "c", "COUNT", "100", "STREAMS", "bench:q", ">")
        if reply is None:
            break
        ids = [entry[0] for entry in reply[0][1]]
        if not ids:
            break
        acked = conn.call("XACK", "bench:q", "g", *ids)
        assert acked == len(ids), acked
        done += len(ids)
    elapsed = time.perf_counter() - start
    cpu = server.cpu_ns() - cpu_before
    pending = conn.call("XPENDING", "bench:q", "g")[0]
    conn.close()
    assert done == entries and pending == 0, (done, pending)
    return {"server": server.name, "test": "xreadgroup+xack", "entries": entries,
            "rps": entries / elapsed, "cpu_us_per_request": cpu / 1000 / entries}


def memory(server, entries: int) -> dict:
    conn = Conn(server.port)
    conn.call("DEL", "bench:m")
    before = used_memory(conn)
    batch = []
    for i in range(1, entries + 1):
        batch.append(("XADD", "bench:m", f"{i}-0", "name", f"user{i % 10000:04d}",
                      "count", str(i % 977)))
        if len(batch) == 1000:
            conn.pipeline(batch)
            batch = []
    if batch:
        conn.pipeline(batch)
    after = used_memory(conn)
    usage = conn.call("MEMORY", "USAGE", "bench:m", "SAMPLES", "0")
    conn.close()
    return {"server": server.name, "entries": entries,
            "used_memory_per_entry": (after - before) / entries,
            "memory_usage_per_entry": usage / entries}


def run_xadd(args, server, pipeline: int, requests: int) -> dict:
    argv = [args.redis_benchmark, "-h", HOST, "-p", str(server.port), "-c", str(args.clients),
            "-n", str(requests), "-P", str(pipeline), "-r", "1000000", "--csv",
            "XADD", "bench:s", "MAXLEN", "~", "100000", "*", "f", "__rand_int__"]
    cpu_before = server.cpu_ns()
    out = subprocess.run(argv, capture_output=True, text=True, timeout=args.run_timeout)
    cpu = server.cpu_ns() - cpu_before
    rows = [r for r in csv.reader(io.StringIO(out.stdout)) if r and r[0] != "test"]
    if out.returncode != 0 or len(rows) != 1 or not server.alive():
        raise RuntimeError(f"redis-benchmark against {server.name} failed "
                           f"(exit {out.returncode}):\n{' '.join(argv)}\n{out.stdout}\n{out.stderr}")
    return {"server": server.name, "test": f"xadd P{pipeline}", "pipeline": pipeline,
            "requests": requests, "rps": float(rows[0][1]),
            "cpu_us_per_request": cpu / 1000 / requests}


def same_stream(servers, entries: int) -> bool:
    views = {}
    for name, server in servers.items():
        conn = Conn(server.port)
        fill_queue(conn, entries)
        info = conn.call("XINFO", "STREAM", "bench:q")
        views[name] = (info[1], info[7], conn.call("XRANGE", "bench:q", "-", "+", "COUNT", "50"),
                       conn.call("XREVRANGE", "bench:q", "+", "-", "COUNT", "50"))
        conn.close()
    return views["keywarden"] == views["redis"]


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_server_arguments(parser)
    parser.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark")
                        or "/usr/bin/redis-benchmark")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--xadd-requests", type=int, default=200_000)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--run-timeout", type=float, default=300.0)
    parser.add_argument("--quick", action="store_true", help="one round of small runs (smoke)")
    parser.add_argument("--json", help="also write every run and the summary here")
    args = parser.parse_args()
    resolve_server_arguments(args)
    if args.quick:
        args.rounds = 1
        args.xadd_requests = 20_000
        args.entries = 10_000

    runs: list[dict] = []
    mem: dict[str, dict] = {}
    with running_servers(args) as servers:
        same = same_stream(servers, 2_000)
        print(f"checks: same stream on both servers before the runs: {'yes' if same else 'NO'}")
        order = ["redis", "keywarden"]
        for round_index in range(args.rounds):
            for pipeline in (1, 16):
                names = order if (round_index + pipeline) % 2 == 0 else order[::-1]
                for name in names:
                    runs.append(run_xadd(args, servers[name], pipeline, args.xadd_requests))
            names = order if round_index % 2 == 0 else order[::-1]
            for name in names:
                runs.append(consume(servers[name], args.entries))
        for name, server in servers.items():
            mem[name] = memory(server, args.entries)
        versions = {"keywarden": "keywarden", "redis": redis_version(args.redis)}

    tests = ["xadd P1", "xadd P16", "xreadgroup+xack"]
    rows = []
    summary = {}
    for test in tests:
        figures = {}
        for name in ("keywarden", "redis"):
            picked = [r for r in runs if r["test"] == test and r["server"] == name]
            figures[name] = (median([r["rps"] for r in picked]),
                             median([r["cpu_us_per_request"] for r in picked]))
        summary[test] = figures
        rows.append([test, f"{figures['keywarden'][0]:,.0f}", f"{figures['redis'][0]:,.0f}",
                     ratio(figures["keywarden"][0], figures["redis"][0]),
                     f"{figures['keywarden'][1]:.2f}", f"{figures['redis'][1]:.2f}",
                     ratio(figures["keywarden"][1], figures["redis"][1])])
    print(f"## Streams, keywarden vs redis-server {versions['redis']} "
          f"({datetime.date.today().isoformat()}, {args.rounds} round(s))\n")
    print(markdown_table(["test", "keywarden ops/s", "redis ops/s", "ratio",
                          "keywarden CPU µs/op", "redis CPU µs/op", "ratio"], rows,
                         right={1, 2, 3, 4, 5, 6}))
    print()
    mem_rows = []
    for field, label in (("used_memory_per_entry", "used_memory growth per entry (bytes)"),
                         ("memory_usage_per_entry", "MEMORY USAGE per entry (bytes)")):
        k, r = mem["keywarden"][field], mem["redis"][field]
        mem_rows.append([label, f"{k:.1f}", f"{r:.1f}", ratio(k, r)])
    print(markdown_table(["memory", "keywarden", "redis", "ratio"], mem_rows, right={1, 2, 3}))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"same": same, "runs": runs, "memory": mem, "summary": summary}, f, indent=1)
    if not same:
        print("FAILED: the servers disagree before the runs", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
