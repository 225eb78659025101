#!/usr/bin/python3
"""GEOSEARCH over a large geo set, keywarden-server beside a stock redis-server in one run: the
same N members (default 1 M, seeded, spread over a 10° × 10° region around 45°N so that a query
finds from a few to thousands of them) loaded into both, then redis-benchmark runs GEOSEARCH
FROMMEMBER <a random member> (redis-benchmark's __rand_int__) at a few radii, with and without
COUNT 10, and a box: throughput in queries per second, and the server's CPU time per query
(steadier than throughput on a shared machine); ratios > 1 when keywarden is faster.

    /usr/bin/python3 bench/geo_benchmark.py              # 1 M members
    /usr/bin/python3 bench/geo_benchmark.py --quick      # smoke run, a few seconds in all

The server under test is $KEYWARDEN_SERVER or <repo>/build/src/server/keywarden-server.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import random
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (HOST, add_server_arguments, markdown_table, redis_version,  # noqa: E402
                     resolve_server_arguments, running_servers)

# Members are named m:<12 digits> so that redis-benchmark's __rand_int__ (12 digits, below -r)
# picks one of them.
MEMBER = "m:{:012d}"
BATCH = 1000  # members per GEOADD


def encode(args: list[str]) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        b = a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)


def load_commands(members: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    commands = []
    for start in range(0, members, BATCH):
        args = ["GEOADD", "geo"]
        for i in range(start, min(members, start + BATCH)):
            args += [f"{rng.uniform(0, 10):.6f}", f"{rng.uniform(40, 50):.6f}", MEMBER.format(i)]
        commands.append(encode(args))
    return commands


def load(port: int, commands: list[bytes], members: int) -> None:
    """Sends the GEOADDs pipelined (a window of 64 in flight) and checks ZCARD."""
    with socket.create_connection((HOST, port)) as sock:
        stream = sock.makefile("rb")
        window = 64
        for i, command in enumerate(commands):
            sock.sendall(command)
            if i >= window:
                line = stream.readline()
                if not line.startswith(b":"):
                    sys.exit(f"GEOADD failed: {line!r}")
        for _ in range(min(window, len(commands))):
            line = stream.readline()
            if not line.startswith(b":"):
                sys.exit(f"GEOADD failed: {line!r}")
        sock.sendall(encode(["ZCARD", "geo"]))
        count = stream.readline()
        if count.strip() != b":%d" % members:
            sys.exit(f"loaded {count!r}, expected {members}")


def throughput(port: int, query: list[str], requests: int, members: int) -> float:
    out = subprocess.run(["redis-benchmark", "-h", HOST, "-p", str(port), "-c", "20",
                          "-n", str(requests), "-r", str(members), "--csv", *query],
                         capture_output=True, text=True, timeout=1800).stdout
    rows = list(csv.reader(io.StringIO(out)))
    return float(rows[1][1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_server_arguments(parser)
    parser.add_argument("--quick", action="store_true", help="smoke run: small sizes")
    parser.add_argument("--members", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=22)
    args = parser.parse_args()
    resolve_server_arguments(args)
    scale = 1.0
    if args.quick:
        args.members, scale = 20_000, 0.02

    centre = ["GEOSEARCH", "geo", "FROMMEMBER", "m:__rand_int__"]
    # (label, query arguments after the centre, requests at full scale)
    cases = [
        ("radius 1 km", ["BYRADIUS", "1", "km"], 50_000),
        ("radius 1 km, COUNT 10", ["BYRADIUS", "1", "km", "COUNT", "10"], 50_000),
        ("radius 10 km", ["BYRADIUS", "10", "km"], 3_000),
        ("radius 10 km, COUNT 10", ["BYRADIUS", "10", "km", "COUNT", "10"], 3_000),
        ("radius 10 km, COUNT 10 ANY", ["BYRADIUS", "10", "km", "COUNT", "10", "ANY"], 20_000),
        ("radius 50 km", ["BYRADIUS", "50", "km"], 300),
        ("radius 50 km, COUNT 10", ["BYRADIUS", "50", "km", "COUNT", "10"], 300),
        ("radius 50 km WITHDIST WITHCOORD, ASC", ["BYRADIUS", "50", "km", "WITHDIST",
                                                  "WITHCOORD", "ASC"], 200),
        ("box 20 × 20 km", ["BYBOX", "20", "20", "km"], 3_000),
    ]
    commands = load_commands(args.members, args.seed)
    rows = []
    with running_servers(args) as servers:
        for server in servers.values():
            load(server.port, commands, args.members)
        for label, query, requests in cases:
            n = max(100, int(requests * scale))
            qps = {}
            cpu_us = {}
            for name, server in servers.items():
                before = server.cpu_ns()
                qps[name] = throughput(server.port, centre + query, n, args.members)
                cpu_us[name] = (server.cpu_ns() - before) / 1000 / n
            rows.append([f"GEOSEARCH {label}", f"{qps['keywarden']:,.0f}", f"{qps['redis']:,.0f}",
                         f"{qps['keywarden'] / qps['redis']:.2f}", f"{cpu_us['keywarden']:,.1f}",
                         f"{cpu_us['redis']:,.1f}", f"{cpu_us['redis'] / cpu_us['keywarden']:.2f}"])
    print(f"Geo benchmark, keywarden vs redis-server {redis_version(args.redis)} "
          f"({args.members:,} members, GEOSEARCH FROMMEMBER a random member, 20 clients, "
          f"queries/s and server CPU µs per query; ratios > 1 when keywarden is faster)\n")
    print(markdown_table(["query", "keywarden q/s", "redis-server q/s", "ratio",
                          "keywarden CPU µs/q", "redis-server CPU µs/q", "CPU ratio"], rows,
                         {1, 2, 3, 4, 5, 6}))


if __name__ == "__main__":
    main()
