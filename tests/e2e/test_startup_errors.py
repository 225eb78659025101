"""Start-up failures and their log lines, against a stock redis-server 7.0 (issue 25).

Supervisors and log scrapers look for Redis's wording: "Failed listening on port …" when the
port is taken, "Short read or OOM loading DB", "Wrong RDB checksum … Aborting now" / "RDB CRC
error", "Fatal error loading the DB: … Exiting." for an RDB file that cannot be loaded, and the
AOF loader's "Unexpected end of file …" / "Bad file format …". Each case starts keywarden and
redis-server on the same broken input, checks that both exit non-zero, and that both logs hold
the same Redis lines (the log prefix and the source locations may differ).
"""

from __future__ import annotations

import socket
import struct
from pathlib import Path

import pytest

from conftest import (ServerProcess, ServerStartError, encode_command, keywarden_binary,
                      redis_binary, start_server)

SERVERS = {"keywarden": keywarden_binary, "redis": redis_binary}


def failed_start(binary: str, directives=(), prepare=None) -> tuple[int | None, str]:
    """Starts a server expected to give up; returns its exit status and its log. A server
    that answered PING first (Redis answers -LOADING while it loads) is waited for."""
    server = ServerProcess(binary, list(directives))
    try:
        if prepare is not None:
            prepare(Path(server.workdir))
        try:
            server.start(attempts=1)
        except ServerStartError:
            pass
        try:
            server.proc.wait(10)
        except Exception:
            pass
        return server.proc.poll(), server.log()
    finally:
        server.cleanup()


@pytest.fixture(scope="module")
def rdb_image() -> bytes:
    """An RDB file of 50 string keys, written by redis-server."""
    source = start_server(redis_binary())
    try:
        conn = source.raw()
        for i in range(50):
            assert conn.execute("SET", f"key:{i}", "v" * 50) == b"OK"
        assert conn.execute("SAVE") == b"OK"
        return (Path(source.workdir) / "dump.rdb").read_bytes()
    finally:
        source.cleanup()


def expect_same_lines(directives, prepare, lines: list[str]) -> None:
    for name, binary in SERVERS.items():
        status, log = failed_start(binary(), directives, prepare)
        assert status not in (None, 0), f"{name} exited with {status}:\n{log}"
        for line in lines:
            assert line in log, f"{name} did not log {line!r}:\n{log}"


def test_port_in_use():
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        expect_same_lines([("port", port)], None, [
            f"Warning: Could not create server TCP listening socket 127.0.0.1:{port}: "
            "bind: Address already in use",
            f"Failed listening on port {port} (TCP), aborting.",
        ])


def write_rdb(data: bytes):
    return lambda workdir: (workdir / "dump.rdb").write_bytes(data)


SHORT_READ = ["Short read or OOM loading DB. Unrecoverable error, aborting now.",
              "Internal error in RDB reading offset ",
              " -> Unexpected EOF reading RDB file"]


@pytest.mark.parametrize("cut", ["half", "header", "signature"])
def test_truncated_rdb(rdb_image, cut):
    keep = {"half": len(rdb_image) // 2, "header": 9, "signature": 5}[cut]
    expect_same_lines([], write_rdb(rdb_image[:keep]), SHORT_READ)


def test_rdb_checksum_mismatch(rdb_image):
    stored = struct.unpack("<Q", rdb_image[-8:])[0]
    flipped = stored ^ (0xFF << 56)
    broken = rdb_image[:-8] + struct.pack("<Q", flipped)
    expect_same_lines([], write_rdb(broken), [
        f"Wrong RDB checksum expected: ({stored:x}) but got ({flipped:x}). Aborting now.",
        "Internal error in RDB reading offset ",
        " -> RDB CRC error",
    ])


@pytest.mark.parametrize("header, reason", [
    (b"XEDIS0010", "Wrong signature trying to load DB from file"),
    (b"REDIS0099", "Can't handle RDB format version 99"),
])
def test_rdb_refused_format(rdb_image, header, reason):
    expect_same_lines([], write_rdb(header + rdb_image[9:]), [
        reason, "Fatal error loading the DB: Invalid argument. Exiting."])


def write_aof(incr: bytes, base: bytes | None = None):
    def prepare(workdir: Path) -> None:
        directory = workdir / "appendonlydir"
        directory.mkdir()
        manifest = ""
        if base is not None:
            (directory / "appendonly.aof.1.base.rdb").write_bytes(base)
            manifest += "file appendonly.aof.1.base.rdb seq 1 type b\n"
        (directory / "appendonly.aof.1.incr.aof").write_bytes(incr)
        manifest += "file appendonly.aof.1.incr.aof seq 1 type i\n"
        (directory / "appendonly.aof.manifest").write_text(manifest)
    return prepare


GOOD_COMMAND = encode_command("SET", "a", "1")


def test_aof_truncated_without_aof_load_truncated():
    expect_same_lines(
        [("appendonly", "yes"), ("aof-load-truncated", "no")],
        write_aof(GOOD_COMMAND + encode_command("SET", "b", "2")[:-6]),
        ["Unexpected end of file reading the append only file appendonly.aof.1.incr.aof."])


def test_aof_bad_format():
    expect_same_lines(
        [("appendonly", "yes")], write_aof(GOOD_COMMAND + b"garbage\r\n" + GOOD_COMMAND),
        ["Bad file format reading the append only file appendonly.aof.1.incr.aof"])


def test_aof_truncated_rdb_base(rdb_image):
    # (Redis exits from the RDB loader; keywarden then also names the file it was reading.)
    expect_same_lines(
        [("appendonly", "yes")], write_aof(GOOD_COMMAND, base=rdb_image[:len(rdb_image) // 2]),
        SHORT_READ)
