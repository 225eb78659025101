#!/usr/bin/python3
"""keywarden-server beside a stock redis-server: GET, SET and SETRANGE on a 64 MB string.

One key ``big`` holds 64 MB of seeded pseudo-random bytes on both servers. Measured, per call:

* ``GET big``: the whole value as one bulk reply (what a server copies on the way out);
* ``SETRANGE big <random offset> <16 bytes>``: a small overwrite inside the value (in place,
  nothing should be copied);
* ``SETRANGE big <length> <16 bytes>``: a small write at the end, each call extending the
  value by 16 bytes (amortised: the spare room a growth leaves absorbs the next calls);
* ``SETRANGE tmp <64 MB> <16 bytes>`` on a fresh exact-size copy of ``big`` (made untimed by
  ``COPY big tmp REPLACE``): the growth itself, one reallocation of 64 MB;
* ``SET big <64 MB>``: the value arriving as one request.
* ``MULTI``, ``SET big <64 MB>``, ``EXEC`` in one write: the same value queued by a transaction.

Two figures per command, medians over ``--rounds`` x ``--reps`` calls: the wall time from the
client over loopback (the client reads a GET reply with recv_into into one preallocated buffer,
so its own cost is a small, equal share on both sides) and the server's CPU time, summed over
all its threads (/proc/<pid>/task/*/schedstat), which is what the server spent whatever the
scheduling of the two-core machine. Rounds alternate which server goes first; replies and
final contents are checked against each other, so a fast wrong answer cannot win.

    /usr/bin/python3 bench/large_string_benchmark.py            # 64 MB, 3 rounds x 3 reps
    /usr/bin/python3 bench/large_string_benchmark.py --quick    # smoke: 1 MB, 1 round x 3 reps

The server under test is --keywarden (or the positional argument), else $KEYWARDEN_SERVER, else
<repo>/build/src/server/keywarden-server. It builds nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (HOST, add_server_arguments, encode, markdown_table,  # noqa: E402
                     median, redis_version, resolve_server_arguments, running_servers)


class Connection:
    """A RESP client for integers, statuses and bulks; bulks are read straight into a buffer."""

    def __init__(self, port: int):
        self.sock = socket.create_connection((HOST, port), timeout=300)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.pending = bytearray()  # bytes received past the last reply

    def _fill(self) -> None:
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.pending += chunk

    def _line(self) -> bytes:
        while (end := self.pending.find(b"\r\n")) < 0:
            self._fill()
        line = bytes(self.pending[:end])
        del self.pending[:end + 2]
        return line

    def _bulk(self, size: int) -> bytearray:
        out = bytearray(size + 2)
        view = memoryview(out)
        have = min(len(self.pending), size + 2)
        view[:have] = self.pending[:have]
        del self.pending[:have]
        while have < size + 2:
            got = self.sock.recv_into(view[have:])
            if got == 0:
                raise ConnectionError("server closed the connection")
            have += got
        view.release()
        del out[size:]
        return out

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
            return None if size < 0 else self._bulk(size)
        raise RuntimeError(f"{args[0]!r}: {line.decode(errors='replace')}")

    def transaction(self, *commands) -> list:
        """MULTI, the commands, EXEC in one write; EXEC's replies (statuses and integers)."""
        self.sock.sendall(b"".join(encode(*c) for c in (("MULTI",), *commands, ("EXEC",))))
        expected = [b"+OK"] + [b"+QUEUED"] * len(commands) + [b"*%d" % len(commands)]
        for want in expected:
            if (line := self._line()) != want:
                raise RuntimeError(f"transaction: {line.decode(errors='replace')}")
        out = []
        for _ in commands:
            line = self._line()
            out.append(int(line[1:]) if line[:1] == b":" else line[1:].decode())
        return out

    def close(self) -> None:
        self.sock.close()


def measurements(size: int, reps: int, rng: random.Random) -> list[tuple[str, object]]:
    """(row name, command factory): factory(rep, current length) returns (an untimed setup
    command or None, the timed command); the same rep gives the same command on both servers."""
    mb = f"{size / (1 << 20):g} MB"
    patch = b"0123456789abcdef"
    offsets = [rng.randrange(0, size - len(patch)) for _ in range(reps + 1)]
    return [
        (f"GET ({mb})", lambda _rep, _length: (None, ("GET", "big"))),
        (f"SETRANGE 16 B at a random offset ({mb})",
         lambda rep, _length: (None, ("SETRANGE", "big", offsets[rep], patch))),
        (f"SETRANGE 16 B at the end, growing ({mb})",
         lambda _rep, length: (None, ("SETRANGE", "big", length, patch))),
        (f"SETRANGE 16 B past the end of an exact-size copy ({mb})",
         lambda _rep, _length: (("COPY", "big", "tmp", "REPLACE"),
                                ("SETRANGE", "tmp", size, patch))),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_server_arguments(parser)
    parser.add_argument("--quick", action="store_true", help="1 MB, one round (smoke test)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reps", type=int, default=3, help="calls per command per round")
    parser.add_argument("--mb", type=float, default=64.0, help="size of the string")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    resolve_server_arguments(args)
    if args.quick:
        args.rounds, args.reps, args.mb = 1, 3, 1.0
    size = int(args.mb * (1 << 20))
    rng = random.Random(20261207)
    data = rng.randbytes(size)
    plan = measurements(size, args.reps, rng)
    set_name = f"SET ({args.mb:g} MB)"
    multi_name = f"MULTI, SET ({args.mb:g} MB), EXEC"
    names = [name for name, _ in plan] + [set_name, multi_name]

    print("## Large strings: keywarden vs redis-server\n")
    print(f"machine: {os.cpu_count()} CPUs, {platform.platform()}")
    print(f"redis-server {redis_version(args.redis)} ({args.redis}); keywarden {args.keywarden}")
    print(f"rounds {args.rounds} x {args.reps} calls per command; milliseconds per call "
          f"(median); ratio = keywarden / redis (below 1: keywarden faster)\n")

    wall = {name: {"keywarden": [], "redis": []} for name in names}
    cpu = {name: {"keywarden": [], "redis": []} for name in names}
    with running_servers(args) as servers:
        conns = {name: Connection(server.port) for name, server in servers.items()}
        order = ["keywarden", "redis"]
        for round_index in range(args.rounds):
            systems = order if round_index % 2 == 0 else order[::-1]
            for system in systems:
                conn, server = conns[system], servers[system]
                for _ in range(args.reps):
                    start_cpu, start = server.cpu_ns(), time.perf_counter()
                    assert conn.call("SET", "big", data) == "OK"
                    wall[set_name][system].append((time.perf_counter() - start) * 1e3)
                    cpu[set_name][system].append((server.cpu_ns() - start_cpu) / 1e6)
                for _ in range(args.reps):
                    start_cpu, start = server.cpu_ns(), time.perf_counter()
                    assert conn.transaction(("SET", "big", data)) == ["OK"]
                    wall[multi_name][system].append((time.perf_counter() - start) * 1e3)
                    cpu[multi_name][system].append((server.cpu_ns() - start_cpu) / 1e6)
            for name, factory in plan:
                replies = {}
                for system in systems:
                    conn, server = conns[system], servers[system]
                    conn.call("SET", "big", data)
                    length = size
                    for rep in range(args.reps + 1):  # the first call warms up, untimed
                        setup, command = factory(rep, length)
                        if setup is not None:
                            conn.call(*setup)
                        start_cpu, start = server.cpu_ns(), time.perf_counter()
                        reply = conn.call(*command)
                        elapsed = (time.perf_counter() - start) * 1e3
                        spent = (server.cpu_ns() - start_cpu) / 1e6
                        if rep > 0:
                            wall[name][system].append(elapsed)
                            cpu[name][system].append(spent)
                        if isinstance(reply, int) and command[1] == "big":
                            length = reply
                        elif isinstance(reply, bytearray):
                            reply = hashlib.sha1(reply).hexdigest()
                    replies[system] = (reply, conn.call("STRLEN", "big"),
                                       hashlib.sha1(conn.call("GET", "big")).hexdigest())
                if replies["keywarden"] != replies["redis"]:
                    print(f"FAILED: {name}: keywarden {replies['keywarden']!r} != "
                          f"redis {replies['redis']!r}")
                    return 1
        for conn in conns.values():
            conn.close()

    rows, results = [], {}
    for name in names:
        kw, rw = median(wall[name]["keywarden"]), median(wall[name]["redis"])
        kc, rc = median(cpu[name]["keywarden"]), median(cpu[name]["redis"])
        results[name] = {"keywarden_ms": kw, "redis_ms": rw, "keywarden_cpu_ms": kc,
                         "redis_cpu_ms": rc}
        rows.append([name, f"{kw:.2f}", f"{rw:.2f}", f"{kw / rw:.2f}" if rw else "n/a",
                     f"{kc:.2f}", f"{rc:.2f}", f"{kc / rc:.2f}" if rc else "n/a"])
    print(markdown_table(["command", "keywarden ms", "redis ms", "ratio",
                          "keywarden CPU ms", "redis CPU ms", "CPU ratio"], rows,
                         right={1, 2, 3, 4, 5, 6}))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": args.rounds, "reps": args.reps, "bytes": size,
                       "results": results}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
