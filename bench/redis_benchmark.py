#!/usr/bin/python3
"""keywarden-server beside a stock redis-server under redis-benchmark, in one run.

Starts a fresh keywarden-server and a fresh redis-server (both `--save '' --appendonly no`,
127.0.0.1, ephemeral ports), then runs redis-benchmark (--csv, one test per invocation) for
every test x pipeline depth, alternating the two servers for several rounds. For each run it
reads the server's own CPU time (the sum over its threads of /proc/<pid>/task/*/schedstat,
field 1, nanoseconds on CPU) before and after, and reports per server the median requests per
second and the median CPU microseconds per request, with the keywarden/redis ratios.

CPU per request is the steadier figure on a small shared machine: redis-benchmark competes
with the server for the same cores, so requests per second moves with whatever else runs,
while the CPU a server spends per request does not (much).

    /usr/bin/python3 bench/redis_benchmark.py                 # defaults: 3 rounds, ~3 s a run
    /usr/bin/python3 bench/redis_benchmark.py --quick         # smoke run, a few seconds in all
    /usr/bin/python3 bench/redis_benchmark.py --json out.json --rounds 5
    /usr/bin/python3 bench/redis_benchmark.py --baseline /tmp/keywarden-before  # before/after

With --baseline, a third server (another keywarden-server build, typically the one before a
change) runs in the same rounds, and the table adds its figures and keywarden's ratio to it, so
a refactoring's cost is measured against the same redis-server in the same run.

The server under test is $KEYWARDEN_SERVER or <repo>/build/src/server/keywarden-server.
"""

from __future__ import annotations

import argparse
import csv
import ctypes
import datetime
import glob
import io
import json
import os
import platform
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_KEYWARDEN = REPO_ROOT / "build" / "src" / "server" / "keywarden-server"
HOST = "127.0.0.1"

# The aims of issue 2: keywarden CPU per request at most this fraction of Redis's, per
# pipeline depth, and at least Redis's requests per second.
CPU_GOAL = {1: 0.8, 16: 0.5}
RPS_GOAL = 1.0


# --------------------------------------------------------------------------------------------
# servers
# --------------------------------------------------------------------------------------------

def _die_with_parent() -> None:
    try:
        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def ping(port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=timeout) as s:
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            return s.recv(64).startswith((b"+PONG", b"-"))
    except OSError:
        return False


def executable(binary: str) -> str:
    """A server binary as a process started in its own working directory needs it: a path with
    a directory part made absolute (a bare name is still looked up in PATH)."""
    return os.path.abspath(binary) if os.sep in binary else binary


class Server:
    def __init__(self, name: str, binary: str, extra_args: tuple[str, ...] = ()):
        self.name = name
        self.binary = executable(binary)
        self.extra_args = list(extra_args)  # more directives, e.g. ("--enable-debug-command", "yes")
        self.workdir = tempfile.mkdtemp(prefix=f"kw-bench-{name}-")
        self.log_path = os.path.join(self.workdir, "server.log")
        self.proc = None
        self.port = None

    def start(self, timeout: float = 10.0) -> "Server":
        if not os.path.exists(self.binary):
            sys.exit(f"{self.name}: {self.binary} does not exist (build it, or set "
                     f"KEYWARDEN_SERVER / --keywarden)")
        for _ in range(5):
            self.port = free_port()
            argv = [self.binary, "--port", str(self.port), "--bind", HOST, "--save", "",
                    "--appendonly", "no", *self.extra_args]
            with open(self.log_path, "wb") as log:
                self.proc = subprocess.Popen(argv, cwd=self.workdir, stdin=subprocess.DEVNULL,
                                             stdout=log, stderr=subprocess.STDOUT,
                                             preexec_fn=_die_with_parent)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and self.proc.poll() is None:
                if ping(self.port):
                    return self
                time.sleep(0.01)
            output = Path(self.log_path).read_text(errors="replace")
            self.stop()
            if "in use" not in output.lower():
                break
        sys.exit(f"{self.name} did not start ({' '.join(argv)}):\n{output}")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def cpu_ns(self) -> int:
        """Nanoseconds on CPU, summed over the server's threads (schedstat field 1)."""
        total = 0
        for path in glob.glob(f"/proc/{self.pid}/task/*/schedstat"):
            try:
                with open(path) as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass  # a thread that ended between glob and open
        return total

    def user_system_s(self) -> tuple[float, float]:
        """Seconds in user space and in the kernel, summed over the server's threads
        (/proc/<pid>/task/*/stat utime and stime, in clock ticks: coarser than schedstat)."""
        user = system = 0
        for path in glob.glob(f"/proc/{self.pid}/task/*/stat"):
            try:
                with open(path) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                user += int(fields[11])
                system += int(fields[12])
            except (OSError, ValueError, IndexError):
                pass  # a thread that ended between glob and open
        tick = os.sysconf("SC_CLK_TCK")
        return user / tick, system / tick

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


def server_version(binary: str) -> str:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10)
        return (out.stdout or out.stderr).strip().splitlines()[0]
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "unknown"


# --------------------------------------------------------------------------------------------
# runs
# --------------------------------------------------------------------------------------------

# Tests redis-benchmark has no -t name for, run as explicit commands. ZRANGE reads the sorted set
# the zadd test fills (list zadd before zrange in --tests).
CUSTOM_TESTS = {
    "zrange": ["ZRANGE", "myzset", "0", "9", "WITHSCORES"],
}


def run_benchmark(args, server: Server, test: str, pipeline: int, requests: int) -> dict:
    argv = [args.redis_benchmark, "-h", HOST, "-p", str(server.port), "-c", str(args.clients),
            "-n", str(requests), "-P", str(pipeline), "--csv"]
    if args.keyspace:
        argv += ["-r", str(args.keyspace)]
    if getattr(args, "benchmark_threads", 0):
        argv += ["--threads", str(args.benchmark_threads)]  # redis-benchmark's own threads
    argv += CUSTOM_TESTS.get(test) or ["-t", test]
    cpu_before = server.cpu_ns()
    user_before, system_before = server.user_system_s()
    start = time.monotonic()
    out = subprocess.run(argv, capture_output=True, text=True, timeout=args.run_timeout)
    wall = time.monotonic() - start
    cpu = server.cpu_ns() - cpu_before
    user_after, system_after = server.user_system_s()
    rows = [r for r in csv.reader(io.StringIO(out.stdout)) if r and r[0] != "test"]
    if out.returncode != 0 or len(rows) != 1 or not server.alive():
        raise RuntimeError(f"redis-benchmark against {server.name} failed "
                           f"(exit {out.returncode}, server alive: {server.alive()}):\n"
                           f"{' '.join(argv)}\n{out.stdout}\n{out.stderr}")
    row = rows[0]
    return {"server": server.name, "test": test, "pipeline": pipeline, "requests": requests,
            "rps": float(row[1]), "p50_ms": float(row[4]), "wall_s": round(wall, 3),
            "cpu_ns": cpu, "cpu_us_per_request": cpu / 1000 / requests,
            "user_us_per_request": (user_after - user_before) * 1e6 / requests,
            "system_us_per_request": (system_after - system_before) * 1e6 / requests}


def calibrate(args, reference: Server, test: str, pipeline: int) -> int:
    """-n so that one run on redis-server takes about args.seconds."""
    # a probe of about a third of a second at typical rates (50k req/s unpipelined)
    probe = int(min(args.seconds, 1.0) * (15_000 if pipeline == 1 else 100_000))
    result = run_benchmark(args, reference, test, pipeline, probe)
    n = int(result["rps"] * args.seconds)
    step = 10_000 if n > 100_000 else 1_000
    return max(step, round(n / step) * step)


def median(values):
    return statistics.median(values) if values else float("nan")


def summarize(results: list[dict], tests, pipelines, names=("redis", "keywarden")) -> list[dict]:
    summary = []
    for test in tests:
        for p in pipelines:
            row = {"test": test.upper(), "pipeline": p}
            for name in names:
                runs = [r for r in results if r["test"] == test and r["pipeline"] == p
                        and r["server"] == name]
                row[f"{name}_rps"] = median([r["rps"] for r in runs])
                row[f"{name}_cpu_us"] = median([r["cpu_us_per_request"] for r in runs])
                for part in ("user", "system"):
                    row[f"{name}_{part}_us"] = median([r[f"{part}_us_per_request"] for r in runs])
                row[f"{name}_runs"] = len(runs)
            row["rps_ratio"] = row["keywarden_rps"] / row["redis_rps"]
            row["cpu_ratio"] = row["keywarden_cpu_us"] / row["redis_cpu_us"]
            if "baseline" in names:
                row["baseline_rps_ratio"] = row["keywarden_rps"] / row["baseline_rps"]
                row["baseline_cpu_ratio"] = row["keywarden_cpu_us"] / row["baseline_cpu_us"]
            goal = CPU_GOAL.get(p)
            row["goal_met"] = (row["rps_ratio"] >= RPS_GOAL
                               and (goal is None or row["cpu_ratio"] <= goal))
            summary.append(row)
    return summary


def markdown_table(summary: list[dict]) -> str:
    lines = ["| test | pipeline | redis req/s | keywarden req/s | req/s ratio | "
             "redis CPU µs/req | keywarden CPU µs/req | CPU ratio | goal |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in summary:
        goal = CPU_GOAL.get(r["pipeline"])
        goal_text = (f"≥{RPS_GOAL:.1f}× req/s" + (f", ≤{goal}× CPU" if goal else "")
                     + (": met" if r["goal_met"] else ": not met"))
        lines.append(
            f"| {r['test']} | {r['pipeline']} | {r['redis_rps']:,.0f} | {r['keywarden_rps']:,.0f}"
            f" | {r['rps_ratio']:.2f} | {r['redis_cpu_us']:.2f} | {r['keywarden_cpu_us']:.2f}"
            f" | {r['cpu_ratio']:.2f} | {goal_text} |")
    return "\n".join(lines)


def kernel_table(summary: list[dict]) -> str:
    """User and kernel time per request. The kernel's part (the system calls and, on loopback,
    the TCP work of delivering each reply to the client, which the sending process pays) is
    much the same for any server that reads and writes the same sockets, so keywarden's kernel
    time alone divided by Redis's whole CPU is the lowest CPU ratio a faster user space could
    reach with the same system calls: the floor."""
    lines = ["| test | pipeline | redis user µs/req | redis kernel µs/req | keywarden user µs/req | "
             "keywarden kernel µs/req | floor: keywarden kernel ÷ redis total |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in summary:
        redis_total = r["redis_user_us"] + r["redis_system_us"]
        floor = r["keywarden_system_us"] / redis_total if redis_total > 0 else float("nan")
        lines.append(
            f"| {r['test']} | {r['pipeline']} | {r['redis_user_us']:.2f} | {r['redis_system_us']:.2f}"
            f" | {r['keywarden_user_us']:.2f} | {r['keywarden_system_us']:.2f} | {floor:.2f} |")
    return "\n".join(lines)


def baseline_table(summary: list[dict]) -> str:
    """keywarden against the --baseline build and redis-server, from the same rounds."""
    lines = ["| test | pipeline | redis req/s | before req/s | after req/s | after/before req/s | "
             "redis CPU µs/req | before CPU µs/req | after CPU µs/req | after/before CPU |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in summary:
        lines.append(
            f"| {r['test']} | {r['pipeline']} | {r['redis_rps']:,.0f} | {r['baseline_rps']:,.0f}"
            f" | {r['keywarden_rps']:,.0f} | {r['baseline_rps_ratio']:.2f}"
            f" | {r['redis_cpu_us']:.2f} | {r['baseline_cpu_us']:.2f} | {r['keywarden_cpu_us']:.2f}"
            f" | {r['baseline_cpu_ratio']:.2f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(
        description="redis-benchmark against keywarden-server and redis-server, side by side",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--keywarden", default=os.environ.get("KEYWARDEN_SERVER")
                        or str(DEFAULT_KEYWARDEN), help="keywarden-server binary")
    parser.add_argument("--redis", default=shutil.which("redis-server") or "/usr/bin/redis-server",
                        help="reference redis-server binary")
    parser.add_argument("--baseline", metavar="BINARY",
                        help="another keywarden-server build (before a change) run alongside")
    parser.add_argument("--keywarden-args", default="", metavar="DIRECTIVES",
                        help="more command-line directives for keywarden, e.g. '--io-uring yes'")
    parser.add_argument("--baseline-args", default="", metavar="DIRECTIVES",
                        help="the same for the --baseline server (which may be the same binary)")
    parser.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark")
                        or "/usr/bin/redis-benchmark")
    parser.add_argument("--tests",
                        default="set,get,incr,mset,lpush,lpop,sadd,spop,hset,zadd,zrange",
                        help="redis-benchmark -t names (or " + ", ".join(CUSTOM_TESTS)
                        + "), comma separated")
    parser.add_argument("--pipelines", default="1,16", help="pipeline depths (-P)")
    parser.add_argument("--clients", type=int, default=50, help="parallel connections (-c)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds; each runs every test on both servers, order alternating")
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="target length of one run; -n is calibrated on redis-server")
    parser.add_argument("--requests", type=int, default=None,
                        help="fixed -n for every run (skips the calibration)")
    parser.add_argument("--keyspace", type=int, default=100_000,
                        help="-r: random keys out of this many (0: one fixed key)")
    parser.add_argument("--run-timeout", type=float, default=300, help="seconds per run")
    parser.add_argument("--json", metavar="FILE", help="also write every run and the summary")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 1 round, 0.3 s per run")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.seconds = 1, 0.3
    tests = [t.strip().lower() for t in args.tests.split(",") if t.strip()]
    pipelines = [int(p) for p in args.pipelines.split(",")]

    servers = {"keywarden": Server("keywarden", args.keywarden, shlex.split(args.keywarden_args)),
               "redis": Server("redis", args.redis)}
    if args.baseline:
        servers["baseline"] = Server("baseline", args.baseline, shlex.split(args.baseline_args))
    results: list[dict] = []
    try:
        for s in servers.values():
            s.start()
        print(f"# keywarden {args.keywarden} (pid {servers['keywarden'].pid}) vs "
              f"redis {args.redis} (pid {servers['redis'].pid}); "
              f"{args.clients} clients, keyspace {args.keyspace}, {args.rounds} rounds",
              file=sys.stderr)
        requests = {}
        for test in tests:
            for p in pipelines:
                if args.requests:
                    requests[(test, p)] = args.requests
                else:
                    requests[(test, p)] = calibrate(args, servers["redis"], test, p)
                    for name in servers:
                        if name != "redis":
                            run_benchmark(args, servers[name], test, p, 10_000)  # warm-up
                print(f"#   {test} -P {p}: -n {requests[(test, p)]}", file=sys.stderr)
        for round_no in range(args.rounds):
            order = list(servers) if round_no % 2 == 0 else list(reversed(servers))
            for test in tests:
                for p in pipelines:
                    for name in order:
                        r = run_benchmark(args, servers[name], test, p, requests[(test, p)])
                        r["round"] = round_no
                        results.append(r)
                        print(f"#   round {round_no + 1}/{args.rounds} {name:9s} {test:5s} "
                              f"-P {p:<2d} {r['rps']:>12,.0f} req/s "
                              f"{r['cpu_us_per_request']:7.2f} µs CPU/req", file=sys.stderr)
    except RuntimeError as e:
        print(f"\nbenchmark aborted: {e}", file=sys.stderr)
        return 1
    finally:
        for s in servers.values():
            s.cleanup()

    summary = summarize(results, tests, pipelines, tuple(servers))
    print()
    redis_v = next((t[2:] for t in server_version(args.redis).split() if t.startswith("v=")), "?")
    print(f"keywarden vs redis-server {redis_v}: "
          f"redis-benchmark -c {args.clients} -r {args.keyspace}, median of {args.rounds} "
          f"rounds, {os.cpu_count()} CPUs, {datetime.date.today()}")
    print()
    print(markdown_table(summary))
    print()
    print("Where the CPU goes (utime and stime, clock ticks):")
    print()
    print(kernel_table(summary))
    if args.baseline:
        print()
        print(f"before ({args.baseline}) and after ({args.keywarden}), same rounds:")
        print()
        print(baseline_table(summary))
    if args.json:
        meta = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
                "command": " ".join(sys.argv), "cpus": os.cpu_count(),
                "machine": platform.platform(), "keywarden": args.keywarden,
                "keywarden_version": server_version(args.keywarden), "redis": args.redis,
                "redis_version": server_version(args.redis), "clients": args.clients,
                "keyspace": args.keyspace, "rounds": args.rounds,
                "requests": {f"{t}/P{p}": n for (t, p), n in requests.items()}}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "summary": summary, "runs": results}, f, indent=2)
        print(f"\nwrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
