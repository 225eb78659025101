#!/usr/bin/python3
"""Loads the same mixed dataset into keywarden and a stock redis-server and compares DEBUG DIGEST.

DEBUG DIGEST is how operators check that two servers hold the same data; keywarden computes it
with Redis's algorithm, so the same dataset must give the same 40 hex digits on both. The
dataset (default 1,000,000 keys, --keys to change) mixes every type keywarden has, in small and
large encodings: strings (text and integers), lists, sets of integers and of strings, sorted sets
(fractional, negative and infinite scores), hashes; every third key has a deadline (PEXPIREAT far
in the future, the same absolute time on both); keys spread over databases 0, 1 and 9. The
commands are generated once from a fixed seed and the same bytes are sent to both servers.

Usage: /usr/bin/python3 bench/digest_compare.py [--keys N] [--keywarden BIN] [--redis BIN]
Prints DBSIZE, the digest and the time DEBUG DIGEST took on each server; exits 1 if the digests
differ.
"""

from __future__ import annotations

import argparse
import random
import signal
import socket
import sys
import time

from _common import (HOST, Server, add_server_arguments, redis_version,
                     resolve_server_arguments)

DEADLINE_MS = 4_000_000_000_000  # year 2096: the same absolute deadline on both servers


def encode(*args) -> bytes:
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


def generate(keys: int, seed: int = 25) -> tuple[bytes, int]:
    """The load as RESP bytes and the number of commands (each gets a one-line reply)."""
    rng = random.Random(seed)
    out = []
    commands = 0
    databases = (0, 1, 9)
    per_db = [keys // 3 + (1 if i < keys % 3 else 0) for i in range(3)]
    for db, count in zip(databases, per_db):
        out.append(encode("SELECT", db))
        commands += 1
        for i in range(count):
            key = f"key:{db}:{i}"
            big = i % 1000 == 0  # hashtable / skiplist / multi-node encodings
            n = 600 if big else 5
            kind = i % 7
            if kind == 0:
                out.append(encode("SET", key, f"text-{rng.random()}"))
            elif kind == 1:
                out.append(encode("SET", key, rng.randint(-10**15, 10**15)))
            elif kind == 2:
                out.append(encode("RPUSH", key, *[rng.choice(("a", "17", "-3", f"e{j}"))
                                                  for j in range(n)]))
            elif kind == 3:
                out.append(encode("SADD", key, *[rng.randint(0, 10**9) for _ in range(n)]))
            elif kind == 4:
                out.append(encode("SADD", key, *[f"m{rng.randint(0, 10**6)}" for _ in range(n)]))
            elif kind == 5:
                args = []
                for j in range(n):
                    args += [rng.choice((j, j + 0.1, -j / 3, 1e300, "inf", "-inf")), f"z{j}"]
                out.append(encode("ZADD", key, *args))
            else:
                args = []
                for j in range(n):
                    args += [f"f{j}", rng.choice((j, f"v{j}", "x" * 70))]
                out.append(encode("HSET", key, *args))
            commands += 1
            if i % 3 == 0:
                out.append(encode("PEXPIREAT", key, DEADLINE_MS + i))
                commands += 1
    return b"".join(out), commands


def load(port: int, data: bytes, replies: int) -> float:
    """Sends the load pipelined (a sender thread would not help: replies are tiny) and waits
    for every reply line; returns the seconds it took."""
    start = time.monotonic()
    with socket.create_connection((HOST, port)) as s:
        s.setblocking(True)
        s.settimeout(300)
        seen = 0
        chunk = 1 << 20
        for offset in range(0, len(data), chunk):
            s.sendall(data[offset:offset + chunk])
            # Drain what is there so that neither side's buffers fill up.
            s.setblocking(False)
            try:
                while True:
                    got = s.recv(1 << 20)
                    if not got:
                        break
                    seen += got.count(b"\r\n")
            except BlockingIOError:
                pass
            s.settimeout(300)
        while seen < replies:
            got = s.recv(1 << 20)
            if not got:
                sys.exit("server closed the connection during the load")
            seen += got.count(b"\r\n")
    return time.monotonic() - start


def command(port: int, *args) -> bytes:
    with socket.create_connection((HOST, port), timeout=600) as s:
        s.sendall(encode(*args))
        data = b""
        while not data.endswith(b"\r\n"):
            data += s.recv(65536)
        return data.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_server_arguments(parser)
    parser.add_argument("--keys", type=int, default=1_000_000)
    args = parser.parse_args()
    resolve_server_arguments(args)

    def on_sigterm(*_):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, on_sigterm)
    print(f"### DEBUG DIGEST of {args.keys:,} mixed keys: keywarden vs redis-server "
          f"{redis_version(args.redis)}")
    started = time.monotonic()
    data, replies = generate(args.keys)
    print(f"generated {args.keys:,} keys ({len(data) / 1e6:.0f} MB of commands) in "
          f"{time.monotonic() - started:.1f} s")
    servers = [Server("keywarden", args.keywarden, ("--enable-debug-command", "yes")),
               Server("redis", args.redis, ("--enable-debug-command", "yes"))]
    digests = {}
    try:
        for server in servers:
            server.start()
            seconds = load(server.port, data, replies)
            info = command(server.port, "INFO", "keyspace")
            start = time.monotonic()
            digest = command(server.port, "DEBUG", "DIGEST").decode().lstrip("+")
            took = time.monotonic() - start
            digests[server.name] = digest
            keyspace = " ".join(line.split(b",")[0].decode()
                                for line in info.split(b"\r\n") if line.startswith(b"db"))
            print(f"{server.name:10} load {seconds:6.1f} s  {keyspace}  "
                  f"DEBUG DIGEST {digest} in {took:.2f} s")
            server.cleanup()
    finally:
        for server in servers:
            server.cleanup()
    same = len(set(digests.values())) == 1
    print("digests " + ("EQUAL" if same else "DIFFER"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
