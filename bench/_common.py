"""What the bench drivers share: the server arguments, starting both servers, the markdown table.

A driver builds its parser, calls add_server_arguments(parser), and after parse_args() runs its
measurements inside `with running_servers(args) as servers:` (keywarden first, then redis; both
stopped on every way out, SIGTERM included, which is turned into KeyboardInterrupt).
markdown_table() prints the rows. The servers themselves are redis_benchmark.Server (fresh,
`--save '' --appendonly no`, 127.0.0.1, a free port), so every driver starts them the same way.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from redis_benchmark import (DEFAULT_KEYWARDEN, HOST, Server, executable,  # noqa: E402,F401
                             median, server_version)


def add_server_arguments(parser) -> None:
    """KEYWARDEN positional or --keywarden (else $KEYWARDEN_SERVER, else the default build),
    and --redis (else redis-server from PATH)."""
    parser.add_argument("keywarden_pos", nargs="?", metavar="KEYWARDEN",
                        help="keywarden-server binary (same as --keywarden)")
    parser.add_argument("--keywarden", default=os.environ.get("KEYWARDEN_SERVER")
                        or str(DEFAULT_KEYWARDEN), help="keywarden-server binary")
    parser.add_argument("--redis", default=shutil.which("redis-server") or "/usr/bin/redis-server",
                        help="reference redis-server binary")


def resolve_server_arguments(args) -> None:
    if getattr(args, "keywarden_pos", None):
        args.keywarden = args.keywarden_pos


def redis_version(binary: str) -> str:
    return next((t[2:] for t in server_version(binary).split() if t.startswith("v=")), "?")


@contextlib.contextmanager
def running_servers(args, extra_args: tuple[str, ...] = ()):
    """Yields {"keywarden": Server, "redis": Server}, both started (with the same extra
    directives, e.g. ("--tls-port", "6390")); stops them on exit."""
    def on_sigterm(*_):
        raise KeyboardInterrupt()
    previous = signal.signal(signal.SIGTERM, on_sigterm)
    servers = {"keywarden": Server("keywarden", args.keywarden, tuple(extra_args)),
               "redis": Server("redis", args.redis, tuple(extra_args))}
    try:
        for s in servers.values():
            s.start()
        yield servers
    finally:
        for s in servers.values():
            s.cleanup()
        signal.signal(signal.SIGTERM, previous)


def encode(*args) -> bytes:
    """A command in RESP (what drivers that speak raw sockets send); str/int/bytes arguments."""
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def markdown_table(headers: list[str], rows: list[list[str]], right: set[int] = frozenset()) -> str:
    """A GitHub markdown table; columns whose index is in `right` are right-aligned."""
    lines = ["| " + " | ".join(headers) + " |",
             "| " + " | ".join("---:" if i in right else "---" for i in range(len(headers))) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)
