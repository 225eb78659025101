#!/usr/bin/python3
"""keywarden-server beside a stock redis-server under redis-benchmark --tls, in one run.

Makes throw-away certificates (scripts/gen-test-certs.sh) in a temporary directory, starts both
servers with a tls-port (tls-auth-clients yes: redis-benchmark presents the client certificate),
and runs redis-benchmark --tls for each test at pipeline depths 1 and 16, alternating the two
servers for several rounds. Reported per server: the median requests per second and the median
server CPU microseconds per request (/proc/<pid>/task/*/schedstat, as bench/redis_benchmark.py
measures it), with keywarden/redis ratios. Each redis-benchmark client opens its connection
(and does its TLS handshake) once per run, so the figures are those of steady-state encrypted
traffic, not of handshakes.

    /usr/bin/python3 bench/tls_benchmark.py                  # 3 rounds, 100000 requests a run
    /usr/bin/python3 bench/tls_benchmark.py --quick          # smoke run, a few seconds
    /usr/bin/python3 bench/tls_benchmark.py --json out.json
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (HOST, add_server_arguments, markdown_table, redis_version,  # noqa: E402
                     resolve_server_arguments, running_servers)
from redis_benchmark import REPO_ROOT, free_port  # noqa: E402

GEN_CERTS = REPO_ROOT / "scripts" / "gen-test-certs.sh"


def tls_client_args(certs: str) -> list[str]:
    return ["--tls", "--cacert", f"{certs}/ca.crt", "--cert", f"{certs}/client.crt",
            "--key", f"{certs}/client.key"]


def run(args, server, certs: str, test: str, pipeline: int) -> dict:
    argv = [args.redis_benchmark, "-h", HOST, "-p", str(server.tls_port), "-c",
            str(args.clients), "-n", str(args.requests), "-P", str(pipeline), "--csv",
            "-t", test, *tls_client_args(certs)]
    cpu_before = server.cpu_ns()
    start = time.monotonic()
    out = subprocess.run(argv, capture_output=True, text=True, timeout=args.run_timeout)
    wall = time.monotonic() - start
    cpu = server.cpu_ns() - cpu_before
    rows = [r for r in csv.reader(io.StringIO(out.stdout)) if r and r[0] != "test"]
    if out.returncode != 0 or len(rows) != 1 or not server.alive():
        raise RuntimeError(f"redis-benchmark --tls against {server.name} failed (exit "
                           f"{out.returncode}):\n{' '.join(argv)}\n{out.stdout}\n{out.stderr}")
    return {"server": server.name, "test": test, "pipeline": pipeline,
            "requests": args.requests, "rps": float(rows[0][1]), "wall_s": round(wall, 3),
            "cpu_us_per_request": cpu / 1000 / args.requests}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_server_arguments(parser)
    parser.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark")
                        or "/usr/bin/redis-benchmark")
    parser.add_argument("--tests", default="set,get", help="redis-benchmark -t names")
    parser.add_argument("--pipelines", default="1,16")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--run-timeout", type=float, default=300)
    parser.add_argument("--quick", action="store_true", help="1 round of 5000 requests")
    parser.add_argument("--json", help="write every run and the summary here")
    args = parser.parse_args()
    resolve_server_arguments(args)
    if args.quick:
        args.rounds, args.requests, args.clients = 1, 5000, 10
    tests = args.tests.split(",")
    pipelines = [int(p) for p in args.pipelines.split(",")]

    certs = tempfile.mkdtemp(prefix="kw-tls-bench-")
    runs = []
    try:
        subprocess.run([str(GEN_CERTS), certs], check=True, capture_output=True, timeout=120)
        tls_port = {"keywarden": free_port(), "redis": free_port()}
        # Both servers get the same directives but their own tls-port: start them one by one.
        common = ["--tls-cert-file", f"{certs}/server.crt", "--tls-key-file",
                  f"{certs}/server.key", "--tls-ca-cert-file", f"{certs}/ca.crt",
                  "--tls-auth-clients", "yes"]
        with running_servers(args, ("--tls-port", "0", *common)) as servers:
            for name, server in servers.items():
                # tls-port 0 at start, then the real one: CONFIG SET opens the listener.
                subprocess.run(["redis-cli", "-h", HOST, "-p", str(server.port), "CONFIG", "SET",
                                "tls-port", str(tls_port[name])], check=True,
                               capture_output=True, timeout=30)
                server.tls_port = tls_port[name]
            for _ in range(args.rounds):
                for test in tests:
                    for pipeline in pipelines:
                        for server in servers.values():
                            runs.append(run(args, server, certs, test, pipeline))
    finally:
        shutil.rmtree(certs, ignore_errors=True)

    summary = []
    rows = []
    for test in tests:
        for pipeline in pipelines:
            figures = {}
            for name in ("keywarden", "redis"):
                mine = [r for r in runs if r["server"] == name and r["test"] == test
                        and r["pipeline"] == pipeline]
                figures[name] = (statistics.median(r["rps"] for r in mine),
                                 statistics.median(r["cpu_us_per_request"] for r in mine))
            (kw_rps, kw_cpu), (redis_rps, redis_cpu) = figures["keywarden"], figures["redis"]
            summary.append({"test": test, "pipeline": pipeline, "keywarden_rps": kw_rps,
                            "redis_rps": redis_rps, "keywarden_cpu_us": kw_cpu,
                            "redis_cpu_us": redis_cpu})
            rows.append([test, str(pipeline), f"{kw_rps:,.0f}", f"{redis_rps:,.0f}",
                         f"{kw_rps / redis_rps:.2f}", f"{kw_cpu:.2f}", f"{redis_cpu:.2f}",
                         f"{kw_cpu / redis_cpu:.2f}" if redis_cpu > 0 else "-"])
    print(f"keywarden vs redis-server {redis_version(args.redis)}: redis-benchmark --tls, "
          f"{args.clients} clients, {args.requests} requests a run, "
          f"median of {args.rounds} round(s)")
    print(markdown_table(["test", "pipeline", "keywarden req/s", "redis req/s", "ratio",
                          "keywarden CPU us/req", "redis CPU us/req", "CPU ratio"], rows,
                         right={1, 2, 3, 4, 5, 6, 7}))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": runs, "summary": summary}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
