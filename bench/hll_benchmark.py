#!/usr/bin/python3
"""keywarden-server beside a stock redis-server: HyperLogLog throughput (issue 22).

Tests, each a redis-benchmark run of one command (``--csv``, 50 clients):

* ``pfadd-sparse``: ``PFADD hll:s:__rand_int__ __rand_int__`` over 100,000 keys: new and small
  HLLs, the sparse encoding's splits and merges.
* ``pfadd-dense``: ``PFADD hll:d1 __rand_int__`` into one dense HLL (50,000 elements before).
* ``pfcount-1``: ``PFCOUNT hll:d1``, the cached cardinality (the first call refreshes it).
* ``pfcount-3``: ``PFCOUNT hll:d1 hll:d2 hll:d3``: the union of three dense HLLs, computed on
  every call (the cache is for one key only).
* ``pfmerge``: ``PFMERGE hll:m hll:d1 hll:d2 hll:d3`` into a dense target.

The three dense HLLs are filled the same way on both servers before the runs (50,000 random
elements each, a third of them shared). Each test and pipeline depth runs on both servers in
alternating order for several rounds; the table shows the median requests per second and the
server's CPU time per request (utime + stime of the process) with keywarden/redis ratios.
Before the runs the servers must agree: the same PFCOUNT of each key and the same bytes (GET).

    /usr/bin/python3 bench/hll_benchmark.py             # 3 rounds, ~2 s a run
    /usr/bin/python3 bench/hll_benchmark.py --quick     # smoke run, a few seconds
    /usr/bin/python3 bench/hll_benchmark.py --tests pfcount-3 --pipelines 1

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
import random
import shutil
import subprocess
import sys
import time

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (HOST, add_server_arguments, markdown_table, median,  # noqa: E402
                     redis_version, resolve_server_arguments, running_servers)

TESTS = {
    "pfadd-sparse": ["PFADD", "hll:s:__rand_int__", "__rand_int__"],
    "pfadd-dense": ["PFADD", "hll:d1", "__rand_int__"],
    "pfcount-1": ["PFCOUNT", "hll:d1"],
    "pfcount-3": ["PFCOUNT", "hll:d1", "hll:d2", "hll:d3"],
    "pfmerge": ["PFMERGE", "hll:m", "hll:d1", "hll:d2", "hll:d3"],
}
# -r per test: keys for the sparse test, element values otherwise.
KEYSPACE = {"pfadd-sparse": 100_000, "pfadd-dense": 100_000_000}
DENSE_ELEMENTS = 50_000


def fill(server, seed: int = 22) -> None:
    rng = random.Random(seed)
    shared = [rng.randbytes(12) for _ in range(DENSE_ELEMENTS // 3)]
    client = redis.Redis(host=HOST, port=server.port)
    pipe = client.pipeline(transaction=False)
    for key in ("hll:d1", "hll:d2", "hll:d3"):
        own = [rng.randbytes(12) for _ in range(DENSE_ELEMENTS - len(shared))]
        items = shared + own
        for i in range(0, len(items), 1000):
            pipe.pfadd(key, *items[i:i + 1000])
    pipe.execute()
    client.close()


def snapshot(server) -> list:
    client = redis.Redis(host=HOST, port=server.port)
    keys = ["hll:d1", "hll:d2", "hll:d3"]
    out = [client.pfcount(k) for k in keys] + [client.get(k) for k in keys]
    out.append(client.pfcount(*keys))
    client.close()
    return out


def run_one(args, server, test: str, pipeline: int, requests: int) -> dict:
    argv = [args.redis_benchmark, "-h", HOST, "-p", str(server.port), "-c", str(args.clients),
            "-n", str(requests), "-P", str(pipeline), "--csv"]
    if test in KEYSPACE:
        argv += ["-r", str(KEYSPACE[test])]
    argv += TESTS[test]
    cpu_before = server.cpu_ns()
    out = subprocess.run(argv, capture_output=True, text=True, timeout=args.run_timeout)
    cpu = server.cpu_ns() - cpu_before
    rows = [r for r in csv.reader(io.StringIO(out.stdout)) if r and r[0] != "test"]
    if out.returncode != 0 or len(rows) != 1 or not server.alive():
        raise RuntimeError(f"redis-benchmark against {server.name} failed "
                           f"(exit {out.returncode}, alive {server.alive()}):\n"
                           f"{' '.join(argv)}\n{out.stdout}\n{out.stderr}")
    return {"server": server.name, "test": test, "pipeline": pipeline, "requests": requests,
            "rps": float(rows[0][1]), "cpu_us_per_request": cpu / 1000 / requests}


def requests_for(args, reference, test: str, pipeline: int) -> int:
    """-n so that a run on redis-server takes about args.seconds (a short probe first)."""
    if args.quick:
        return 2_000 if test in ("pfcount-3", "pfmerge") else 20_000
    probe = run_one(args, reference, test, pipeline, 5_000 if pipeline == 1 else 20_000)
    n = int(probe["rps"] * args.seconds)
    return max(1_000, round(n / 1_000) * 1_000)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_server_arguments(parser)
    parser.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark")
                        or "/usr/bin/redis-benchmark")
    parser.add_argument("--tests", default=",".join(TESTS))
    parser.add_argument("--pipelines", default="1,16")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0, help="target seconds per run")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--run-timeout", type=float, default=300.0)
    parser.add_argument("--quick", action="store_true", help="one round of small runs (smoke)")
    parser.add_argument("--json", help="also write every run and the summary here")
    args = parser.parse_args()
    resolve_server_arguments(args)
    if args.quick:
        args.rounds = 1
    tests = [t for t in args.tests.split(",") if t]
    for t in tests:
        if t not in TESTS:
            parser.error(f"unknown test {t}; known: {', '.join(TESTS)}")
    pipelines = [int(p) for p in args.pipelines.split(",")]

    runs: list[dict] = []
    with running_servers(args) as servers:
        for server in servers.values():
            fill(server)
        views = {name: snapshot(s) for name, s in servers.items()}
        same = views["keywarden"] == views["redis"]
        print(f"checks: keywarden and redis hold the same HLLs (counts and bytes): "
              f"{'yes' if same else 'NO'}", file=sys.stderr)
        if not same:
            print("FAILED: the servers disagree before the runs", file=sys.stderr)
        order = ["redis", "keywarden"]
        for round_index in range(args.rounds):
            for test in tests:
                for pipeline in pipelines:
                    requests = requests_for(args, servers["redis"], test, pipeline)
                    names = order if (round_index + pipeline) % 2 == 0 else order[::-1]
                    for name in names:
                        result = run_one(args, servers[name], test, pipeline, requests)
                        runs.append(result)
                        print(f"round {round_index + 1} {test:13s} -P {pipeline:<2d} {name:9s} "
                              f"{result['rps']:>11,.0f} req/s "
                              f"{result['cpu_us_per_request']:7.2f} µs CPU/req",
                              file=sys.stderr)
        version = redis_version(args.redis)

    rows, summary = [], []
    for test in tests:
        for pipeline in pipelines:
            entry = {"test": test, "pipeline": pipeline}
            for name in ("redis", "keywarden"):
                mine = [r for r in runs if r["test"] == test and r["pipeline"] == pipeline
                        and r["server"] == name]
                entry[f"{name}_rps"] = median([r["rps"] for r in mine])
                entry[f"{name}_cpu_us"] = median([r["cpu_us_per_request"] for r in mine])
            entry["rps_ratio"] = entry["keywarden_rps"] / entry["redis_rps"]
            entry["cpu_ratio"] = (entry["keywarden_cpu_us"] / entry["redis_cpu_us"]
                                  if entry["redis_cpu_us"] else float("nan"))
            summary.append(entry)
            rows.append([test, str(pipeline), f"{entry['redis_rps']:,.0f}",
                         f"{entry['keywarden_rps']:,.0f}", f"{entry['rps_ratio']:.2f}",
                         f"{entry['redis_cpu_us']:.2f}", f"{entry['keywarden_cpu_us']:.2f}",
                         f"{entry['cpu_ratio']:.2f}"])
    print(f"### HyperLogLog throughput, keywarden vs redis-server {version}, "
          f"{args.clients} clients, median of {args.rounds} round(s)")
    print(f"machine: {os.cpu_count()} CPUs, {datetime.date.today()}")
    print()
    print(markdown_table(["test", "-P", "redis req/s", "keywarden req/s", "ratio",
                          "redis µs CPU/req", "keywarden µs CPU/req", "CPU ratio"], rows,
                         right={1, 2, 3, 4, 5, 6, 7}))
    print()
    print(f"checks: same HLLs before the runs: {'yes' if same else 'NO'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": " ".join(sys.argv), "same": same, "runs": runs,
                       "summary": summary}, f, indent=1)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
