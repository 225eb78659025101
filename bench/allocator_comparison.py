#!/usr/bin/env python3
"""Which allocator serves keywarden better: libc malloc, jemalloc or mimalloc.

Runs one keywarden-server binary under each allocator (LD_PRELOAD of the Debian shared
library, so the same code is measured three times) and reports:
  - RSS growth per key after loading 1M keys `key:NNNNNNN` -> 10-byte value, then per key for
    1M more with EX 3600 (the issue-5 memory rows);
  - the share of that growth still resident 12 s after FLUSHALL;
  - redis-benchmark SET and GET with -P 16: requests per second and the server's CPU time per
    request (the steadier figure on a shared machine).
The binary should be built with KEYWARDEN_ALLOCATOR=libc so that the preloaded library is the
only allocator in the process.

Usage: bench/allocator_comparison.py BINARY [--keys N] [--rounds R] [--requests N]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import tempfile
import time

JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
MIMALLOC = "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2"
# name -> environment; "jemalloc+bg" is what keywarden runs (jemalloc-bg-thread yes).
ALLOCATORS = {
    "libc": {},
    "jemalloc": {"LD_PRELOAD": JEMALLOC},
    "jemalloc+bg": {"LD_PRELOAD": JEMALLOC, "MALLOC_CONF": "background_thread:true"},
    "mimalloc": {"LD_PRELOAD": MIMALLOC},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def start(binary: str, allocator: str) -> tuple[subprocess.Popen, int]:
    port = free_port()
    env = dict(os.environ)
    env.update(ALLOCATORS[allocator])
    process = subprocess.Popen([binary, "--port", str(port), "--save", "", "--appendonly", "no"],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return process, port
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("server did not start")


def command(*args: str) -> bytes:
    parts = [f"*{len(args)}\r\n".encode()]
    for arg in args:
        parts.append(f"${len(arg)}\r\n{arg}\r\n".encode())
    return b"".join(parts)


def load(port: int, first: int, count: int, ttl: bool) -> None:
    with tempfile.NamedTemporaryFile() as commands:
        for i in range(first, first + count):
            extra = ("EX", "3600") if ttl else ()
            commands.write(command("SET", f"key:{i:07d}", "v" * 10, *extra))
        commands.flush()
        with open(commands.name, "rb") as data:
            subprocess.run(["redis-cli", "-p", str(port), "--pipe"], stdin=data, check=True,
                           stdout=subprocess.DEVNULL)


def memory(binary: str, allocator: str, keys: int) -> tuple[float, float, float]:
    process, port = start(binary, allocator)
    try:
        time.sleep(0.3)
        base = rss_bytes(process.pid)
        load(port, 0, keys, ttl=False)
        plain = rss_bytes(process.pid)
        load(port, keys, keys, ttl=True)
        with_ttl = rss_bytes(process.pid)
        subprocess.run(["redis-cli", "-p", str(port), "FLUSHALL"], check=True,
                       stdout=subprocess.DEVNULL)
        # jemalloc returns dirty pages over its 10 s decay; glibc trims only the heap's top.
        time.sleep(12)
        held = rss_bytes(process.pid)
        return (plain - base) / keys, (with_ttl - plain) / keys, (held - base) / (with_ttl - base)
    finally:
        process.terminate()
        process.wait()


def cpu_ns(pid: int) -> int:
    """The server's CPU time so far: the first field of schedstat, summed over its threads."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/schedstat") as schedstat:
            total += int(schedstat.read().split()[0])
    return total


def throughput(binary: str, allocator: str, requests: int) -> dict[str, float]:
    """req/s and the server's CPU ns per request, for SET then GET."""
    process, port = start(binary, allocator)
    try:
        rates = {}
        for test in ("set", "get"):
            before = cpu_ns(process.pid)
            out = subprocess.run(["redis-benchmark", "-p", str(port), "-t", test, "-P", "16",
                                  "-n", str(requests), "-r", "1000000", "-q"],
                                 capture_output=True, text=True, check=True).stdout
            used = cpu_ns(process.pid) - before
            for line in out.replace("\r", "\n").splitlines():
                if "requests per second" in line:
                    rates[f"{test.upper()} req/s"] = float(line.split(":", 1)[1].split()[0])
            rates[f"{test.upper()} CPU ns/req"] = used / requests
        return rates
    finally:
        process.terminate()
        process.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=2_000_000)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--skip-throughput", action="store_true")
    options = parser.parse_args()
    if not options.skip_memory:
        print(f"RSS growth per key, {options.keys} keys each")
        for allocator in ALLOCATORS:
            plain, ttl, held = memory(options.binary, allocator, options.keys)
            print(f"  {allocator:11s} no TTL {plain:6.1f} B   EX 3600 {ttl:6.1f} B   "
                  f"still held 12 s after FLUSHALL {held * 100:5.1f}%")
    if not options.skip_throughput:
        print(f"redis-benchmark -P 16 -n {options.requests} "
              f"(median of {options.rounds}, rounds interleaved)")
        best: dict[str, dict[str, list[float]]] = {a: {} for a in ALLOCATORS}
        for _ in range(options.rounds):
            for allocator in ALLOCATORS:
                for name, rate in throughput(options.binary, allocator, options.requests).items():
                    best[allocator].setdefault(name, []).append(rate)
        for allocator, rates in best.items():
            print(f"  {allocator:11s} " + "   ".join(
                f"{k} {statistics.median(v):8.0f}" for k, v in rates.items()))


if __name__ == "__main__":
    main()
