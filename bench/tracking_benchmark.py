#!/usr/bin/python3
"""keywarden-server beside a stock redis-server: client-side caching invalidation fan-out
(CLIENT TRACKING, issue 23).

On each server: KEYS keys are written, CLIENTS RESP3 connections turn tracking on (default
mode) and each reads every key (MGET in batches), so the tracking table holds KEYS keys with
CLIENTS readers each. Then one writer rewrites every key (MSET in batches of 1,000, pipelined)
and every reader receives one `invalidate` push per key. Measured per round:

* ``table memory``: INFO used_memory growth while the readers read, per (key, reader) item;
* ``fan-out``: from the first MSET sent to the last push received by the last reader (ms);
* ``server CPU``: the server process's CPU time over the same span (ms), and per push (ns).

Keys have a fixed width, so every push has the same size and the readers count bytes instead
of parsing 1 M pushes in Python (the replies were checked byte for byte against Redis by
tests/compat/test_tracking.py). Rounds alternate the servers; the table shows medians and the
keywarden/redis ratios.

    /usr/bin/python3 bench/tracking_benchmark.py             # 10,000 keys, 100 readers, 3 rounds
    /usr/bin/python3 bench/tracking_benchmark.py --quick     # smoke run, a few seconds

The server under test is --keywarden, else $KEYWARDEN_SERVER, else
<repo>/build/src/server/keywarden-server. It builds nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (HOST, add_server_arguments, encode, markdown_table, median,  # noqa: E402
                     redis_version, resolve_server_arguments, running_servers)

KEY_FORMAT = "tracked:{:08d}"
BATCH = 1000


class Conn:
    """A blocking socket that reads replies by counting: enough for the fixed-size traffic
    here (OK lines, MGET arrays of known size) and the INFO text."""

    def __init__(self, port: int):
        self.sock = socket.create_connection((HOST, port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_until(self, marker: bytes, count: int = 1) -> bytes:
        """Reads until `marker` was seen `count` times after what was consumed; returns it all."""
        while self.buffer.count(marker) < count:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buffer += chunk
        end = 0
        for _ in range(count):
            end = self.buffer.index(marker, end) + len(marker)
        data, self.buffer = self.buffer[:end], self.buffer[end:]
        return data

    def command(self, *args) -> bytes:
        self.send(encode(*args))
        return self.read_until(b"\r\n")

    def info_field(self, section: str, name: str) -> int:
        self.send(encode("INFO", section))
        header = self.read_until(b"\r\n")
        size = int(header[1:-2])
        while len(self.buffer) < size + 2:
            self.buffer += self.sock.recv(1 << 20)
        text, self.buffer = self.buffer[:size].decode(), self.buffer[size + 2:]
        for line in text.splitlines():
            if line.startswith(name + ":"):
                return int(line.split(":", 1)[1])
        raise KeyError(name)

    def close(self) -> None:
        self.sock.close()


def read_all_keys(reader: Conn, keys: list[str]) -> None:
    """MGET every key in batches, pipelined; each reply is an array of BATCH bulk strings."""
    batches = [keys[i:i + BATCH] for i in range(0, len(keys), BATCH)]
    reader.send(b"".join(encode("MGET", *batch) for batch in batches))
    for batch in batches:
        # "*n\r\n" then n times "$len\r\nvalue\r\n": 1 + 2n CRLFs.
        reader.read_until(b"\r\n", 1 + 2 * len(batch))


def one_round(server, keys: int, clients: int) -> dict:
    names = [KEY_FORMAT.format(i) for i in range(keys)]
    push_size = len(b">2\r\n$10\r\ninvalidate\r\n*1\r\n$%d\r\n%s\r\n"
                    % (len(names[0]), names[0].encode()))
    admin = Conn(server.port)
    admin.command("FLUSHALL")
    for i in range(0, keys, BATCH):
        batch = names[i:i + BATCH]
        admin.send(encode("MSET", *[x for key in batch for x in (key, "v")]))
    for _ in range(0, keys, BATCH):
        admin.read_until(b"\r\n")
    readers = []
    for _ in range(clients):
        reader = Conn(server.port)
        reader.send(encode("HELLO", "3") + encode("CLIENT", "TRACKING", "on"))
        reader.read_until(b"+OK\r\n")  # HELLO's map, then tracking's OK
        readers.append(reader)
    memory_before = admin.info_field("memory", "used_memory")
    for reader in readers:
        read_all_keys(reader, names)
    items = admin.info_field("stats", "tracking_total_items")
    memory_after = admin.info_field("memory", "used_memory")
    assert items == keys * clients, f"{server.name}: {items} items tracked"

    selector = selectors.DefaultSelector()
    remaining = {}
    for reader in readers:
        reader.sock.setblocking(False)
        selector.register(reader.sock, selectors.EVENT_READ, reader)
        remaining[reader] = push_size * keys - len(reader.buffer)
    writer = Conn(server.port)
    cpu_before = server.cpu_ns()
    start = time.perf_counter()
    writer.send(b"".join(encode("MSET", *[x for key in names[i:i + BATCH] for x in (key, "w")])
                         for i in range(0, keys, BATCH)))
    pending = len(readers)
    while pending:
        for event, _ in selector.select(timeout=30):
            reader = event.data
            chunk = reader.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError(f"{server.name} closed a reader")
            remaining[reader] -= len(chunk)
            if remaining[reader] == 0:
                pending -= 1
                selector.unregister(reader.sock)
            elif remaining[reader] < 0:
                raise AssertionError(f"{server.name}: more bytes than {keys} pushes")
    elapsed = time.perf_counter() - start
    cpu = server.cpu_ns() - cpu_before
    for _ in range(0, keys, BATCH):
        writer.read_until(b"\r\n")
    for conn in readers + [writer, admin]:
        conn.close()
    pushes = keys * clients
    return {"server": server.name, "table_bytes_per_item": (memory_after - memory_before) / pushes,
            "fanout_ms": elapsed * 1000, "cpu_ms": cpu / 1e6, "cpu_ns_per_push": cpu / pushes}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_server_arguments(parser)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="1,000 keys, 20 readers, 1 round")
    parser.add_argument("--json", help="write the runs here")
    args = parser.parse_args()
    resolve_server_arguments(args)
    if args.quick:
        args.keys, args.clients, args.rounds = 1_000, 20, 1
    runs = []
    with running_servers(args) as servers:
        for round_index in range(args.rounds):
            order = ["keywarden", "redis"] if round_index % 2 == 0 else ["redis", "keywarden"]
            for name in order:
                runs.append(one_round(servers[name], args.keys, args.clients))
    print(f"# Invalidation fan-out, keywarden vs redis-server: {args.keys:,} keys, "
          f"{args.clients} tracking readers, "
          f"{args.rounds} round(s); redis {redis_version(args.redis)}")
    rows = []
    for field, label, fmt in [("table_bytes_per_item", "table memory per (key, reader) item, B",
                               "{:,.1f}"),
                              ("fanout_ms", "fan-out of all pushes, ms", "{:,.1f}"),
                              ("cpu_ms", "server CPU for the fan-out, ms", "{:,.1f}"),
                              ("cpu_ns_per_push", "server CPU per push, ns", "{:,.0f}")]:
        kw = median([r[field] for r in runs if r["server"] == "keywarden"])
        rd = median([r[field] for r in runs if r["server"] == "redis"])
        ratio = f"{kw / rd:.2f}" if rd else "-"
        rows.append([label, fmt.format(kw), fmt.format(rd), ratio])
    print(markdown_table(["measure", "keywarden", "redis", "keywarden/redis"], rows, {1, 2, 3}))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"keys": args.keys, "clients": args.clients, "runs": runs}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
