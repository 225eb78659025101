#!/usr/bin/python3
"""AOF cost, keywarden-server beside a stock redis-server in one run: SET throughput with
`appendonly yes` under `appendfsync everysec` and `always`, at pipeline depth 1 and 16
(redis-benchmark, 50 clients, random keys), and the restart time from an AOF of N keys (the same
generated directory loaded by both servers: spawn until INFO says loading:0 and DBSIZE is N).

    /usr/bin/python3 bench/aof_benchmark.py              # 200k requests a run, 1M keys
    /usr/bin/python3 bench/aof_benchmark.py --quick      # smoke run, a few seconds in all

The AOF part of issue 7's benchmark; bench/persistence_benchmark.py (the RDB side) is kept
separate so that the two halves never edit the same file. The server under test is
$KEYWARDEN_SERVER or <repo>/build/src/server/keywarden-server.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import add_server_arguments, executable, markdown_table, redis_version, \
    resolve_server_arguments  # noqa: E402
from redis_benchmark import HOST, _die_with_parent, free_port  # noqa: E402


def encode(*args: str) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        b = a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)


class AofServer:
    def __init__(self, binary: str, directives: list[str], workdir: str | None = None):
        self.binary = executable(binary)
        self.directives = directives
        self.workdir = workdir or tempfile.mkdtemp(prefix="kw-aof-bench-")
        self.proc = None
        self.port = None

    def start(self, timeout: float = 600.0) -> float:
        """Starts the server; returns seconds from spawn until it answers PING with PONG
        (not -LOADING)."""
        self.port = free_port()
        argv = [self.binary, "--port", str(self.port), "--bind", HOST, "--save", "",
                "--dir", self.workdir, *self.directives]
        log = open(os.path.join(self.workdir, "server.log"), "wb")
        started = time.monotonic()
        self.proc = subprocess.Popen(argv, cwd=self.workdir, stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=subprocess.STDOUT,
                                     preexec_fn=_die_with_parent)
        log.close()
        deadline = started + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            if self.cli("PING") == "PONG":
                return time.monotonic() - started
            time.sleep(0.005)
        sys.exit(f"{self.binary} did not start: {open(os.path.join(self.workdir, 'server.log')).read()}")

    def cli(self, *args: str) -> str:
        try:
            return subprocess.run(["redis-cli", "-p", str(self.port), *args], capture_output=True,
                                  text=True, timeout=30).stdout.strip()
        except subprocess.TimeoutExpired:
            return ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


def set_throughput(binary: str, fsync: str, pipeline: int, requests: int) -> float:
    server = AofServer(binary, ["--appendonly", "yes", "--appendfsync", fsync])
    try:
        server.start()
        out = subprocess.run(["redis-benchmark", "-h", HOST, "-p", str(server.port), "-t", "set",
                              "-n", str(requests), "-P", str(pipeline), "-c", "50",
                              "-r", "1000000", "-d", "16", "--csv"],
                             capture_output=True, text=True, timeout=900).stdout
        rows = list(csv.reader(io.StringIO(out)))
        return float(rows[1][1])
    finally:
        server.cleanup()


def make_aof_dir(path: str, keys: int) -> None:
    directory = os.path.join(path, "appendonlydir")
    os.makedirs(directory)
    with open(os.path.join(directory, "appendonly.aof.1.incr.aof"), "wb") as f:
        f.write(encode("SELECT", "0"))
        chunk = []
        for i in range(keys):
            chunk.append(encode("SET", f"key:{i:010d}", f"value:{i}"))
            if len(chunk) == 10000:
                f.write(b"".join(chunk))
                chunk.clear()
        f.write(b"".join(chunk))
    with open(os.path.join(directory, "appendonly.aof.manifest"), "w") as f:
        f.write("file appendonly.aof.1.incr.aof seq 1 type i\n")


def restart_time(binary: str, source: str, keys: int) -> float:
    workdir = tempfile.mkdtemp(prefix="kw-aof-bench-load-")
    shutil.copytree(os.path.join(source, "appendonlydir"), os.path.join(workdir, "appendonlydir"))
    server = AofServer(binary, ["--appendonly", "yes"], workdir)
    try:
        seconds = server.start()
        size = server.cli("DBSIZE")
        if size != str(keys):
            sys.exit(f"{binary} loaded {size} keys, expected {keys}")
        return seconds
    finally:
        server.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_server_arguments(parser)
    parser.add_argument("--quick", action="store_true", help="smoke run: small sizes")
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--keys", type=int, default=1_000_000)
    args = parser.parse_args()
    resolve_server_arguments(args)
    if args.quick:
        args.requests, args.keys = 5_000, 20_000
    binaries = {"keywarden": os.path.abspath(args.keywarden), "redis": os.path.abspath(args.redis)}

    rows = []
    for fsync in ("everysec", "always"):
        for pipeline in (1, 16):
            rps = {name: set_throughput(b, fsync, pipeline, args.requests)
                   for name, b in binaries.items()}
            rows.append([f"SET, appendfsync {fsync}, -P {pipeline}", f"{rps['keywarden']:,.0f}",
                         f"{rps['redis']:,.0f}", f"{rps['keywarden'] / rps['redis']:.2f}"])
    source = tempfile.mkdtemp(prefix="kw-aof-bench-src-")
    try:
        make_aof_dir(source, args.keys)
        size_mb = os.path.getsize(os.path.join(source, "appendonlydir",
                                               "appendonly.aof.1.incr.aof")) / 1e6
        load = {name: restart_time(b, source, args.keys) for name, b in binaries.items()}
    finally:
        shutil.rmtree(source, ignore_errors=True)
    rows.append([f"restart from AOF, {args.keys:,} keys ({size_mb:.0f} MB), s",
                 f"{load['keywarden']:.2f}", f"{load['redis']:.2f}",
                 f"{load['redis'] / load['keywarden']:.2f}"])
    print(f"AOF benchmark, keywarden vs redis-server {redis_version(args.redis)} "
          f"({args.requests:,} requests a run, 50 clients; ratio > 1 is keywarden better)\n")
    print(markdown_table(["measure", "keywarden", "redis-server", "ratio"], rows, {1, 2, 3}))


if __name__ == "__main__":
    main()
