"""Big bulk arguments (32 KiB or more, Redis's PROTO_MBULK_BIG_ARG) sent in pieces.

keywarden reads such an argument into a block of its own size and SET keeps that block as the
value instead of copying it out of the query buffer (docs/benchmarks.md, issue 24). These tests
check that nothing around it changed: the value and the commands after it in a pipeline, every
SET form, MULTI, CLIENT PAUSE holding the command back, the query-buffer limit, CLIENT LIST,
the slow log, MONITOR, the AOF and a replica. Where both servers can run a scenario, the same
bytes are sent to keywarden and to redis-server and their answers compared.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from conftest import ConnectionClosed, _no_reply_within, encode_command, wait_until
from replication_cluster import Cluster, wait_link_up, wait_offsets_equal

MB = 1024 * 1024


def value_of(size: int, seed: int = 1) -> bytes:
    """`size` bytes of a pattern that depends on `seed` and does not repeat at a power of two
    (a block copied to the wrong offset would not compare equal)."""
    block = bytes((i * 31 + seed) % 251 for i in range(65521))
    return (block * (size // len(block) + 1))[:size]


def send_in_pieces(conn, data: bytes, piece: int = 64 * 1024, pause_every: int = 16) -> None:
    """Sends `data` in many writes, pausing now and then so the server reads it in many calls."""
    for n, at in enumerate(range(0, len(data), piece)):
        conn.send(data[at:at + piece])
        if n % pause_every == pause_every - 1:
            time.sleep(0.002)


def client_fields(admin, client_name: str) -> dict[str, str]:
    for line in admin.execute("CLIENT", "LIST").decode().splitlines():
        fields = dict(item.split("=", 1) for item in line.split(" "))
        if fields["name"] == client_name:
            return fields
    raise AssertionError(f"no client named {client_name}")


def test_big_set_in_a_pipeline_split_over_many_reads(make_server):
    server = make_server()
    conn = server.raw(timeout=60)
    value = value_of(6 * MB)
    request = (encode_command("SET", "big", value) + encode_command("STRLEN", "big") +
               encode_command("SET", "small", "x") + encode_command("GETRANGE", "big", "0", "9") +
               encode_command("OBJECT", "ENCODING", "big"))
    send_in_pieces(conn, request)
    assert conn.read_replies(5) == [b"OK", 6 * MB, b"OK", value[:10], b"raw"]
    assert conn.execute("GET", "big") == value
    # Overwritten by another big value, then by a small one.
    other = value_of(3 * MB + 5, seed=7)
    send_in_pieces(conn, encode_command("SET", "big", other))
    assert conn.read_reply() == b"OK"
    assert conn.execute("GET", "big") == other
    assert conn.execute("SET", "big", "12") == b"OK"
    assert conn.execute("OBJECT", "ENCODING", "big") == b"int"


def test_every_set_form_with_a_big_value(make_server):
    server = make_server()
    conn = server.raw(timeout=60)
    a, b = value_of(MB, seed=2), value_of(MB + 3, seed=3)
    commands = [
        ("SETNX", "n", a), ("SETNX", "n", b),
        ("SETEX", "e", "1000", a), ("PSETEX", "p", "1000000", b),
        ("GETSET", "n", b), ("SET", "n", a, "GET"), ("SET", "n", b, "XX", "GET", "KEEPTTL"),
        ("SET", "absent", a, "XX"), ("SET", "n", a, "NX"), ("SET", "x", a, "EX", "nope"),
        ("SET", "x", a, "EX", "1000", "GET"),
    ]
    send_in_pieces(conn, b"".join(encode_command(*c) for c in commands))
    replies = conn.read_replies(len(commands))
    assert replies[:2] == [1, 0]
    assert replies[2:4] == [b"OK", b"OK"]
    assert replies[4:7] == [a, b, a]
    assert replies[7:9] == [None, None]
    assert replies[9] == b"ERR value is not an integer or out of range"
    assert replies[10] is None
    assert [conn.execute("GET", k) for k in ("n", "e", "p", "x", "absent")] == [b, a, b, a, None]
    assert 0 < conn.execute("TTL", "e") <= 1000
    assert 0 < conn.execute("TTL", "x") <= 1000


def test_big_set_queued_in_multi(make_server):
    server = make_server()
    conn = server.raw(timeout=60)
    value = value_of(4 * MB, seed=4)
    request = (encode_command("MULTI") + encode_command("SET", "m", value) +
               encode_command("APPEND", "m", "!") + encode_command("STRLEN", "m") +
               encode_command("EXEC"))
    send_in_pieces(conn, request)
    assert conn.read_replies(5) == [b"OK", b"QUEUED", b"QUEUED", b"QUEUED",
                                    [b"OK", 4 * MB + 1, 4 * MB + 1]]
    assert conn.execute("GET", "m") == value + b"!"


def test_big_arguments_queued_kept_discarded_and_aborted(make_server):
    # A queued SET keeps the block its big argument was read into, and EXEC hands it on; other
    # queued commands read it; DISCARD and an aborted EXEC free it.
    server = make_server()
    conn, other = server.raw(timeout=60), server.raw()
    a, b = value_of(2 * MB, seed=8), value_of(MB + 7, seed=9)
    request = (encode_command("MULTI") + encode_command("SET", "a", a) +
               encode_command("SET", "b", b) + encode_command("RPUSH", "l", a) +
               encode_command("SET", "c", b, "GET") + encode_command("EXEC"))
    send_in_pieces(conn, request)
    assert conn.read_replies(6) == [b"OK"] + [b"QUEUED"] * 4 + [[b"OK", b"OK", 1, None]]
    assert [conn.execute("GET", k) for k in ("a", "b", "c")] == [a, b, b]
    assert conn.execute("LINDEX", "l", "0") == a

    send_in_pieces(conn, encode_command("MULTI") + encode_command("SET", "d", a) +
                   encode_command("DISCARD"))
    assert conn.read_replies(3) == [b"OK", b"QUEUED", b"OK"]
    assert conn.execute("EXISTS", "d") == 0

    assert conn.execute("WATCH", "w") == b"OK"
    assert other.execute("SET", "w", "1") == b"OK"
    send_in_pieces(conn, encode_command("MULTI") + encode_command("SET", "d", b) +
                   encode_command("EXEC"))
    assert conn.read_replies(3) == [b"OK", b"QUEUED", None]
    assert conn.execute("EXISTS", "d") == 0


def test_big_set_held_by_client_pause_runs_once_unpaused(make_server):
    server = make_server()
    admin, conn = server.raw(), server.raw(timeout=60)
    value = value_of(3 * MB, seed=5)
    request = encode_command("SET", "held", value) + encode_command("GET", "held")
    # Part of the value arrives before the pause, the rest during it.
    send_in_pieces(conn, request[:MB])
    time.sleep(0.1)
    assert admin.execute("CLIENT", "PAUSE", "60000", "WRITE") == b"OK"
    send_in_pieces(conn, request[MB:])
    assert _no_reply_within(conn, 0.5)
    assert admin.execute("GET", "held") is None
    assert admin.execute("CLIENT", "UNPAUSE") == b"OK"
    assert conn.read_replies(2) == [b"OK", value]


def test_query_buffer_figures_while_a_big_argument_arrives(make_server):
    server = make_server()
    admin, conn = server.raw(), server.raw(timeout=60)
    assert conn.execute("CLIENT", "SETNAME", "sender") == b"OK"
    value = value_of(4 * MB, seed=6)
    request = encode_command("SET", "k", value)
    conn.send(request[:MB])
    # Everything sent so far is counted in qbuf, the room left for the value in qbuf-free.
    wait_until(lambda: int(client_fields(admin, "sender")["qbuf"]) >= MB - 64)
    fields = client_fields(admin, "sender")
    assert int(fields["qbuf"]) + int(fields["qbuf-free"]) >= 4 * MB
    assert int(fields["tot-mem"]) >= 4 * MB
    conn.send(request[MB:])
    assert conn.read_reply() == b"OK"
    assert conn.execute("STRLEN", "k") == 4 * MB
    # Once the command ran, the client holds nothing for it.
    wait_until(lambda: int(client_fields(admin, "sender")["tot-mem"]) < MB, timeout=30)


def test_big_argument_over_the_query_buffer_limit_closes(make_server):
    server = make_server()
    admin, conn = server.raw(), server.raw(timeout=60)
    assert admin.execute("CONFIG", "SET", "client-query-buffer-limit", "1mb") == b"OK"
    try:
        request = encode_command("SET", "k", value_of(3 * MB))
        with pytest.raises((ConnectionClosed, OSError)):
            send_in_pieces(conn, request)
            conn.read_reply()
        assert admin.execute("EXISTS", "k") == 0
    finally:
        assert admin.execute("CONFIG", "SET", "client-query-buffer-limit", "1gb") == b"OK"


def test_proto_max_bulk_len_still_refuses_a_big_argument(make_server):
    server = make_server()
    admin = server.raw()
    conn = server.raw(timeout=60)  # opened before the CONFIG SET: the new limit applies too
    assert conn.execute("PING") == b"PONG"
    assert admin.execute("CONFIG", "SET", "proto-max-bulk-len", "1mb") == b"OK"
    conn.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000000\r\n" + b"x" * 100000)
    assert conn.read_reply() == b"ERR Protocol error: invalid bulk length"


def test_slowlog_truncates_and_monitor_shows_a_big_argument(make_server):
    server = make_server()
    admin, conn, monitor = server.raw(), server.raw(timeout=60), server.raw(timeout=60)
    assert monitor.execute("MONITOR") == b"OK"
    assert admin.execute("CONFIG", "SET", "slowlog-log-slower-than", "0") == b"OK"
    assert admin.execute("SLOWLOG", "RESET") == b"OK"
    value = b"v" * 100000
    send_in_pieces(conn, encode_command("SET", "logged", value), piece=8192, pause_every=2)
    assert conn.read_reply() == b"OK"
    entries = admin.execute("SLOWLOG", "GET", "10")
    logged = [e[3] for e in entries if e[3][:1] == [b"SET"]]
    assert logged == [[b"SET", b"logged", b"v" * 128 + b"... (99872 more bytes)"]]
    line = monitor.read_reply()
    assert line.endswith(b'"SET" "logged" "' + value + b'"')
    assert admin.execute("CONFIG", "SET", "slowlog-log-slower-than", "10000") == b"OK"


AOF = [("appendonly", "yes"), ("appendfsync", "always")]


def test_big_set_is_appended_to_the_aof_and_reloaded(server_factory):
    server = server_factory(*AOF)
    conn = server.raw(timeout=60)
    plain, timed = value_of(5 * MB, seed=8), value_of(2 * MB + 1, seed=9)
    send_in_pieces(conn, encode_command("SET", "plain", plain) +
                   encode_command("SETEX", "timed", "100000", timed) +
                   encode_command("SET", "after", "1"))
    assert conn.read_replies(3) == [b"OK", b"OK", b"OK"]
    conn.close()
    incr = Path(server.workdir) / "appendonlydir" / "appendonly.aof.1.incr.aof"
    assert encode_command("SET", "plain", plain) in incr.read_bytes()

    server.kill()
    server.start()
    conn = server.raw(timeout=60)
    wait_until(lambda: b"loading:0" in conn.execute("INFO", "persistence"), timeout=60)
    assert conn.execute("GET", "plain") == plain
    assert conn.execute("GET", "timed") == timed
    assert 0 < conn.execute("TTL", "timed") <= 100000
    assert conn.execute("GET", "after") == b"1"


@pytest.mark.parametrize("replica_kind", ["keywarden", "redis"])
def test_big_set_reaches_a_replica(replica_kind):
    cluster = Cluster()
    try:
        primary = cluster.node("keywarden")
        replica = cluster.node(replica_kind, replica_of=primary)
        wait_link_up(replica, primary)
        c = primary.client(decode_responses=False, socket_timeout=120)
        value = value_of(8 * MB, seed=10)
        c.set("big", value)
        c.set("big2", value[:MB], ex=100000)
        c.set("after", "1")
        wait_offsets_equal(primary, [replica], timeout=180)
        r = replica.client(decode_responses=False, socket_timeout=120)
        assert r.get("big") == value
        assert r.get("big2") == value[:MB]
        assert 0 < r.ttl("big2") <= 100000
        assert r.get("after") == b"1"
    finally:
        cluster.close()
