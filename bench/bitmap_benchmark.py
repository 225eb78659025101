#!/usr/bin/python3
"""keywarden-server beside a stock redis-server: BITCOUNT and BITPOS over a 64 MB bitmap, BITOP
over four 16 MB keys.

Each command scans all its input, so the figure is the time of one call (milliseconds, the
median of --reps calls), measured from the client over loopback: the reply is a few bytes, so
the time is the server's scan. The data is the same on both servers:

* ``bm``: 64 MB of zero bytes whose very last bit is set (BITPOS bm 1 must scan everything to
  find it; BITCOUNT's cost does not depend on the bytes);
* ``k1`` … ``k4``: 16 MB each of seeded pseudo-random bytes.

Measured: BITCOUNT bm; BITCOUNT bm 1 -2 BIT (unaligned bit range); BITPOS bm 1; BITPOS bm 1
3 -1 BIT; BITOP AND / OR / XOR dest k1 k2 k3 k4; BITOP NOT dest k1. The rounds alternate which
server goes first. Every reply is checked against the other server's (and BITOP's destination
against its digest), so a fast wrong answer cannot win.

    /usr/bin/python3 bench/bitmap_benchmark.py             # 64 MB / 4 x 16 MB, 3 rounds x 5 reps
    /usr/bin/python3 bench/bitmap_benchmark.py --quick     # smoke run: 1 MB / 4 x 256 KB, 1 round

The server under test is --keywarden (or the positional argument), else $KEYWARDEN_SERVER, else
<repo>/build/src/server/keywarden-server. It builds nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (HOST, add_server_arguments, markdown_table, median,  # noqa: E402
                     redis_version, resolve_server_arguments, running_servers)


def encode(*args) -> bytes:
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


class Connection:
    """A minimal RESP client: these commands answer integers, statuses, errors or bulks."""

    def __init__(self, port: int):
        self.sock = socket.create_connection((HOST, port), timeout=120)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def _line(self) -> bytes:
        while b"\r\n" not in self.buffer:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def _exactly(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def call(self, *args):
        self.sock.sendall(encode(*args))
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b":":
            return int(rest)
        if kind == b"+":
            return rest.decode()
        if kind == b"$":
            size = int(rest)
            return None if size < 0 else self._exactly(size + 2)[:-2]
        raise RuntimeError(f"{args[0]}: {line.decode(errors='replace')}")

    def close(self) -> None:
        self.sock.close()


def load(conn: Connection, key: str, data: bytes) -> None:
    # In 8 MB pieces (SETRANGE), so that no single request needs a huge query buffer.
    conn.call("DEL", key)
    piece = 8 << 20
    for offset in range(0, len(data), piece):
        conn.call("SETRANGE", key, offset, data[offset:offset + piece])
    assert conn.call("STRLEN", key) == len(data)


def build_data(bitmap_bytes: int, source_bytes: int) -> dict[str, bytes]:
    rng = random.Random(20261127)
    data = {"bm": bytes(bitmap_bytes - 1) + b"\x01"}
    for i in range(1, 5):
        data[f"k{i}"] = rng.randbytes(source_bytes)
    return data


def measurements(bitmap_bytes: int, source_bytes: int) -> list[tuple[str, tuple]]:
    mb = bitmap_bytes / (1 << 20)
    smb = source_bytes / (1 << 20)
    size = f"{mb:g} MB"
    four = f"4 x {smb:g} MB"
    return [
        (f"BITCOUNT ({size})", ("BITCOUNT", "bm")),
        (f"BITCOUNT BIT range ({size})", ("BITCOUNT", "bm", "1", "-2", "BIT")),
        (f"BITPOS 1 ({size})", ("BITPOS", "bm", "1")),
        (f"BITPOS 1 BIT range ({size})", ("BITPOS", "bm", "1", "3", "-1", "BIT")),
        (f"BITOP AND ({four})", ("BITOP", "AND", "dest", "k1", "k2", "k3", "k4")),
        (f"BITOP OR ({four})", ("BITOP", "OR", "dest", "k1", "k2", "k3", "k4")),
        (f"BITOP XOR ({four})", ("BITOP", "XOR", "dest", "k1", "k2", "k3", "k4")),
        (f"BITOP NOT ({smb:g} MB)", ("BITOP", "NOT", "dest", "k1")),
    ]


def time_calls(conn: Connection, command: tuple, reps: int) -> tuple[list[float], object]:
    times, reply = [], None
    for _ in range(reps):
        start = time.perf_counter()
        reply = conn.call(*command)
        times.append((time.perf_counter() - start) * 1000.0)
    return times, reply


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_server_arguments(parser)
    parser.add_argument("--quick", action="store_true", help="small data, one round (smoke test)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reps", type=int, default=5, help="calls per command per round")
    parser.add_argument("--bitmap-mb", type=float, default=64.0)
    parser.add_argument("--source-mb", type=float, default=16.0)
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    resolve_server_arguments(args)
    if args.quick:
        args.rounds, args.reps, args.bitmap_mb, args.source_mb = 1, 3, 1.0, 0.25
    bitmap_bytes = int(args.bitmap_mb * (1 << 20))
    source_bytes = int(args.source_mb * (1 << 20))
    data = build_data(bitmap_bytes, source_bytes)
    plan = measurements(bitmap_bytes, source_bytes)

    print("## Bitmap commands: keywarden vs redis-server\n")
    print(f"machine: {os.cpu_count()} CPUs, {platform.platform()}")
    print(f"redis-server {redis_version(args.redis)} ({args.redis}); keywarden {args.keywarden}")
    print(f"rounds {args.rounds} x {args.reps} calls per command; milliseconds per call "
          f"(median); ratio = keywarden time / redis time (below 1: keywarden faster)\n")

    times = {name: {"keywarden": [], "redis": []} for name, _ in plan}
    with running_servers(args) as servers:
        conns = {name: Connection(server.port) for name, server in servers.items()}
        for conn in conns.values():
            for key, value in data.items():
                load(conn, key, value)
        order = ["keywarden", "redis"]
        for round_index in range(args.rounds):
            for name, command in plan:
                replies = {}
                for system in (order if round_index % 2 == 0 else order[::-1]):
                    conn = conns[system]
                    conn.call(*command)  # warm-up (page faults of a new destination, caches)
                    measured, replies[system] = time_calls(conn, command, args.reps)
                    times[name][system] += measured
                    if command[0] == "BITOP":
                        replies[system] = (replies[system], conn.call("BITCOUNT", "dest"),
                                           conn.call("GETRANGE", "dest", "-64", "-1"))
                if replies["keywarden"] != replies["redis"]:
                    print(f"FAILED: {name}: keywarden {replies['keywarden']!r} != "
                          f"redis {replies['redis']!r}")
                    return 1
        for conn in conns.values():
            conn.close()

    rows, results = [], {}
    for name, _ in plan:
        k = median(times[name]["keywarden"])
        r = median(times[name]["redis"])
        results[name] = {"keywarden_ms": k, "redis_ms": r, "ratio": k / r if r else None}
        rows.append([name, f"{k:.2f}", f"{r:.2f}", f"{k / r:.2f}" if r else "n/a"])
    print(markdown_table(["command", "keywarden ms", "redis ms", "ratio"], rows, right={1, 2, 3}))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": args.rounds, "reps": args.reps, "bitmap_bytes": bitmap_bytes,
                       "source_bytes": source_bytes, "results": results}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
