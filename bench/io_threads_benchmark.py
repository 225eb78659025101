#!/usr/bin/python3
"""I/O threads: keywarden-server beside redis-server 7.0, io-threads 1, 2, 3 × do-reads no/yes.

For every configuration both servers are started fresh with the same `--io-threads N
--io-threads-do-reads yes|no`, then redis-benchmark (-c 50 by default) runs SET and GET at
pipeline 1 and 16 on each, alternating which goes first, for a few rounds. Per server and run
it records requests per second and the server's CPU time per request (summed over all its
threads from /proc/<pid>/task/*/schedstat, so the I/O threads' CPU counts, spinning included),
and after the configuration the INFO counters that show whether the threads were used
(io_threaded_writes_processed ÷ total_writes_processed, the same for reads). It prints, per
configuration and test, the medians and the ratios keywarden ÷ redis, then the scaling curve:
each server's throughput relative to its own io-threads 1.

    /usr/bin/python3 bench/io_threads_benchmark.py               # 2 rounds, ~2 s a run
    /usr/bin/python3 bench/io_threads_benchmark.py --quick       # smoke run
    /usr/bin/python3 bench/io_threads_benchmark.py --threads 1,2,4,8 --server-cpus 0-7 \\
        --client-cpus 8-15 --benchmark-threads 8                 # a bigger machine

--server-cpus / --client-cpus pin the servers (every thread) and redis-benchmark to separate
CPU sets (Linux CPU list syntax), so that the client does not compete with the I/O threads;
on a 2-core machine there is no such split worth making, and the figures say mostly what the
threads cost, not what they gain (docs/benchmarks.md, issue 24).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (HOST, Server, add_server_arguments, markdown_table, median,  # noqa: E402
                     redis_version, resolve_server_arguments)
from redis_benchmark import calibrate, run_benchmark  # noqa: E402


def parse_cpus(text: str | None) -> set[int] | None:
    if not text:
        return None
    cpus: set[int] = set()
    for part in text.split(","):
        if "-" in part:
            low, high = part.split("-")
            cpus.update(range(int(low), int(high) + 1))
        elif part.strip():
            cpus.add(int(part))
    return cpus


def pin_server(server: Server, cpus: set[int] | None) -> None:
    """Every thread of the server onto `cpus` (threads started later inherit the main's)."""
    if cpus is None:
        return
    for task in os.listdir(f"/proc/{server.pid}/task"):
        os.sched_setaffinity(int(task), cpus)


def info(server: Server) -> dict[str, str]:
    with socket.create_connection((HOST, server.port), timeout=10) as s:
        s.sendall(b"*2\r\n$4\r\nINFO\r\n$5\r\nstats\r\n")
        data = b""
        while b"\r\n" not in data:
            data += s.recv(65536)
        header, _, rest = data.partition(b"\r\n")
        length = int(header[1:])
        while len(rest) < length + 2:
            rest += s.recv(65536)
    text = rest[:length].decode()
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def threaded_share(before: dict[str, str], after: dict[str, str], kind: str) -> float:
    """The share of reads or writes an I/O-thread round handled between two INFO readings."""
    total = int(after[f"total_{kind}_processed"]) - int(before[f"total_{kind}_processed"])
    threaded = (int(after[f"io_threaded_{kind}_processed"]) -
                int(before[f"io_threaded_{kind}_processed"]))
    return threaded / total if total > 0 else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(
        description="I/O-thread scaling of keywarden-server and redis-server, side by side",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    add_server_arguments(parser)
    parser.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark")
                        or "/usr/bin/redis-benchmark")
    parser.add_argument("--threads", default="1,2,3", help="io-threads values")
    parser.add_argument("--do-reads", default="no,yes", help="io-threads-do-reads values")
    parser.add_argument("--tests", default="set,get", help="redis-benchmark -t names")
    parser.add_argument("--pipelines", default="1,16", help="pipeline depths (-P)")
    parser.add_argument("--clients", type=int, default=50, help="parallel connections (-c)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds per configuration")
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="target length of one run; -n is calibrated once on redis-server "
                        "with io-threads 1")
    parser.add_argument("--keyspace", type=int, default=100_000, help="-r (0: one fixed key)")
    parser.add_argument("--run-timeout", type=float, default=300, help="seconds per run")
    parser.add_argument("--server-cpus", help="CPU list for the servers (e.g. 0-7)")
    parser.add_argument("--client-cpus", help="CPU list for redis-benchmark (e.g. 8-15)")
    parser.add_argument("--benchmark-threads", type=int, default=0,
                        help="redis-benchmark --threads (0: its default, one thread); a client "
                        "on one thread cannot load a server with several I/O threads")
    parser.add_argument("--json", metavar="FILE", help="also write every run and the summary")
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 round, 0.3 s a run")
    args = parser.parse_args()
    resolve_server_arguments(args)
    if args.quick:
        args.rounds, args.seconds = 1, 0.3
    thread_counts = [int(t) for t in args.threads.split(",")]
    do_reads_values = [v.strip() for v in args.do_reads.split(",") if v.strip()]
    tests = [t.strip().lower() for t in args.tests.split(",") if t.strip()]
    pipelines = [int(p) for p in args.pipelines.split(",")]
    server_cpus = parse_cpus(args.server_cpus)
    client_cpus = parse_cpus(args.client_cpus)
    if client_cpus is not None:
        os.sched_setaffinity(0, client_cpus)  # redis-benchmark inherits it

    print(f"# keywarden {args.keywarden} vs redis {redis_version(args.redis)}; "
          f"{args.clients} clients, keyspace {args.keyspace}, {args.rounds} rounds, "
          f"{os.cpu_count()} CPUs (servers on {args.server_cpus or 'any'}, "
          f"client on {args.client_cpus or 'any'})", file=sys.stderr)
    results: list[dict] = []
    usage: dict[tuple, dict] = {}
    requests: dict[tuple, int] = {}
    for threads in thread_counts:
        for do_reads in do_reads_values:
            extra = ("--io-threads", str(threads), "--io-threads-do-reads", do_reads)
            servers = {"keywarden": Server("keywarden", args.keywarden, extra),
                       "redis": Server("redis", args.redis, extra)}
            try:
                for server in servers.values():
                    server.start()
                    pin_server(server, server_cpus)
                if not requests:
                    for test in tests:
                        for p in pipelines:
                            requests[(test, p)] = calibrate(args, servers["redis"], test, p)
                            print(f"#   {test} -P {p}: -n {requests[(test, p)]}",
                                  file=sys.stderr)
                before = {name: info(server) for name, server in servers.items()}
                for round_no in range(args.rounds):
                    order = list(servers) if round_no % 2 == 0 else list(reversed(servers))
                    for test in tests:
                        for p in pipelines:
                            for name in order:
                                r = run_benchmark(args, servers[name], test, p,
                                                  requests[(test, p)])
                                r.update(round=round_no, threads=threads, do_reads=do_reads)
                                results.append(r)
                                print(f"#   io-threads {threads} do-reads {do_reads:3s} "
                                      f"{name:9s} {test:4s} -P {p:<2d} {r['rps']:>11,.0f} req/s "
                                      f"{r['cpu_us_per_request']:6.2f} µs CPU/req",
                                      file=sys.stderr)
                for name, server in servers.items():
                    after = info(server)
                    usage[(name, threads, do_reads)] = {
                        "writes": threaded_share(before[name], after, "writes"),
                        "reads": threaded_share(before[name], after, "reads")}
            except RuntimeError as e:
                print(f"\nbenchmark aborted: {e}", file=sys.stderr)
                return 1
            finally:
                for server in servers.values():
                    server.cleanup()

    def figures(name, threads, do_reads, test, p):
        runs = [r for r in results if r["server"] == name and r["threads"] == threads and
                r["do_reads"] == do_reads and r["test"] == test and r["pipeline"] == p]
        return (median([r["rps"] for r in runs]),
                median([r["cpu_us_per_request"] for r in runs]))

    summary = []
    rows = []
    for threads in thread_counts:
        for do_reads in do_reads_values:
            for test in tests:
                for p in pipelines:
                    kw_rps, kw_cpu = figures("keywarden", threads, do_reads, test, p)
                    rd_rps, rd_cpu = figures("redis", threads, do_reads, test, p)
                    kw_base, _ = figures("keywarden", thread_counts[0], do_reads_values[0],
                                         test, p)
                    rd_base, _ = figures("redis", thread_counts[0], do_reads_values[0], test, p)
                    kw_use = usage[("keywarden", threads, do_reads)]
                    rd_use = usage[("redis", threads, do_reads)]
                    entry = {"threads": threads, "do_reads": do_reads, "test": test.upper(),
                             "pipeline": p, "keywarden_rps": kw_rps, "redis_rps": rd_rps,
                             "keywarden_cpu_us": kw_cpu, "redis_cpu_us": rd_cpu,
                             "rps_ratio": kw_rps / rd_rps, "cpu_ratio": kw_cpu / rd_cpu,
                             "keywarden_scaling": kw_rps / kw_base,
                             "redis_scaling": rd_rps / rd_base,
                             "keywarden_threaded": kw_use, "redis_threaded": rd_use}
                    summary.append(entry)
                    rows.append([str(threads), do_reads, test.upper(), str(p),
                                 f"{kw_rps:,.0f}", f"{rd_rps:,.0f}", f"{kw_rps / rd_rps:.2f}",
                                 f"{kw_cpu:.2f}", f"{rd_cpu:.2f}", f"{kw_cpu / rd_cpu:.2f}",
                                 f"{kw_rps / kw_base:.2f}", f"{rd_rps / rd_base:.2f}",
                                 f"{kw_use['writes']:.0%} / {kw_use['reads']:.0%}",
                                 f"{rd_use['writes']:.0%} / {rd_use['reads']:.0%}"])
    print(markdown_table(
        ["io-threads", "do-reads", "test", "P", "keywarden req/s", "redis req/s", "req/s ratio",
         "keywarden µs CPU/req", "redis µs CPU/req", "CPU ratio", "keywarden scaling",
         "redis scaling", "keywarden threaded w / r", "redis threaded w / r"],
        rows, right=set(range(4, 12))))
    print("\nratio: keywarden ÷ redis (req/s: higher is better for keywarden; CPU: lower is). "
          "scaling: req/s ÷ the same server's at the first configuration. threaded w / r: "
          "share of the writes and reads an I/O-thread round handled (INFO io_threaded_* ÷ "
          "total_*).")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": results, "summary": summary}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
