"""Streams in RDB files, DUMP/RESTORE and AOF rewrites, keywarden against redis-server 7.0.

A stream is saved as RDB_TYPE_STREAM_LISTPACKS_2 with each node a listpack laid out as Redis
lays it out, so a stream without consumer groups DUMPs to the same bytes on both servers; with
groups (whose times differ) a payload made by one server must restore on the other to the
same XINFO STREAM FULL. RDB files go both ways, DEBUG RELOAD and an AOF rewrite keep every
stream, group, consumer and pending entry, and corrupt payloads are refused without a crash.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
import time

import pytest

from conftest import ReplyError, redis_binary, start_server, with_footer


def build_streams(conn, rng: random.Random, groups: bool = True) -> None:
    """Streams of several shapes: small, multi-node, with deletions, trimmed, empty."""
    conn.execute("XADD", "small", "1-1", "a", "1", "b", "hello")
    conn.execute("XADD", "small", "1-2", "a", "-2", "b", "x" * 70)
    conn.execute("XADD", "small", "2-0", "other", "300000", "n", "9999999999")
    for i in range(1, 450):
        fields = ["f", str(rng.randrange(-10**6, 10**6))]
        if rng.random() < 0.3:
            fields += ["g" + str(rng.randrange(3)), "v" * rng.randrange(0, 200)]
        conn.execute("XADD", "big", f"{i * 3}-{rng.randrange(4)}", *fields)
    for i in range(1, 450, 7):
        conn.execute("XDEL", "big", f"{i * 3}-0", f"{i * 3}-1")
    conn.execute("XTRIM", "big", "MAXLEN", "400")
    conn.execute("XADD", "empty", "5-5", "a", "1")
    conn.execute("XDEL", "empty", "5-5")
    conn.execute("XADD", "huge", "1-1", "blob", "z" * 20000)
    if not groups:
        return
    conn.execute("XGROUP", "CREATE", "big", "g1", "0")
    conn.execute("XGROUP", "CREATE", "big", "g2", "$", "ENTRIESREAD", "3")
    conn.execute("XGROUP", "CREATE", "nogroupstream", "g", "$", "MKSTREAM")
    conn.execute("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "30", "STREAMS", "big", ">")
    conn.execute("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "5", "STREAMS", "big", ">")
    conn.execute("XGROUP", "CREATECONSUMER", "big", "g1", "idle-one")
    conn.execute("XACK", "big", "g1", *[e[0] for e in conn.execute("XRANGE", "big", "-", "+",
                                                                     "COUNT", "10")])
    conn.execute("XGROUP", "CREATE", "small", "g", "0")
    conn.execute("XREADGROUP", "GROUP", "g", "c", "NOACK", "STREAMS", "small", ">")


STREAM_KEYS = ["small", "big", "empty", "huge", "nogroupstream"]


def full_info(conn, key):
    reply = conn.execute("XINFO", "STREAM", key, "FULL", "COUNT", "0")
    assert not isinstance(reply, ReplyError), reply
    # radix-tree-nodes counts Redis's internal tree nodes.
    return [("T" if i > 0 and reply[i - 1] == b"radix-tree-nodes" else v)
            for i, v in enumerate(reply)]


def snapshot(conn):
    return {key: full_info(conn, key) for key in STREAM_KEYS
            if conn.execute("EXISTS", key) == 1}


def test_dump_bytes_equal_without_groups(keywarden, reference_redis):
    kw, ref = keywarden.raw(), reference_redis.raw()
    for conn in (kw, ref):
        build_streams(conn, random.Random(5), groups=False)
    for key in ("small", "big", "empty", "huge"):
        assert kw.execute("DUMP", key) == ref.execute("DUMP", key), key


@pytest.mark.parametrize("direction", ["redis-to-keywarden", "keywarden-to-redis"])
def test_dump_restore_with_groups(keywarden, reference_redis, direction):
    kw, ref = keywarden.raw(), reference_redis.raw()
    source, target = (ref, kw) if direction == "redis-to-keywarden" else (kw, ref)
    build_streams(source, random.Random(9))
    for key in STREAM_KEYS:
        payload = source.execute("DUMP", key)
        assert target.execute("RESTORE", key, "0", payload) == b"OK"
        assert full_info(target, key) == full_info(source, key), key
        assert target.execute("DUMP", key) == payload, key


def test_type_15_payload_loads(keywarden, reference_redis):
    """A Redis 5/6 stream (type 15: no first ID, tombstone or counters) restores as 7.0 does."""
    ref, kw = reference_redis.raw(), keywarden.raw()
    ref.execute("XADD", "s", "1-1", "a", "1")
    ref.execute("XADD", "s", "2-1", "b", "2")
    ref.execute("XGROUP", "CREATE", "s", "g", "1-1")
    payload = ref.execute("DUMP", "s")
    body = bytearray(payload[:-10])
    assert body[0] == 19
    # Rebuild the object in the type-15 layout: drop first ID, max deleted ID, entries added
    # and the group's entries_read.
    ref.execute("DEL", "s")
    ref.execute("XADD", "s", "1-1", "a", "1")
    ref.execute("XADD", "s", "2-1", "b", "2")
    ref.execute("XGROUP", "CREATE", "s", "g", "1-1")
    # Layout after the nodes (all lengths < 64 here, so one byte each): length, last ms, last
    # seq, first ms, first seq, maxdel ms, maxdel seq, entries added, groups, name, group ms,
    # group seq, entries_read (-1: 0x81 + 8 bytes), PEL 0, consumers 0.
    tail = bytes([2, 2, 1, 1, 1, 0, 0, 2, 1])
    name = bytes([1]) + b"g"
    after = tail + name + bytes([1, 1, 0x81]) + b"\xff" * 8 + bytes([0, 0])
    assert body.endswith(after), body
    nodes = bytes(body[1:len(body) - len(after)])
    old = bytes([15]) + nodes + bytes([2, 2, 1, 1]) + name + bytes([1, 1, 0, 0])
    for conn in (ref, kw):
        conn.execute("DEL", "t")
        assert conn.execute("RESTORE", "t", "0", with_footer(old, 9)) == b"OK"
    assert full_info(kw, "t") == full_info(ref, "t")


def test_corrupt_payloads_never_crash(keywarden, reference_redis):
    kw = keywarden.raw()
    build_streams(kw, random.Random(3))
    rng = random.Random(11)
    for key in ("small", "big"):
        body = kw.execute("DUMP", key)[:-10]
        for _ in range(300):
            mutated = bytearray(body)
            for _ in range(rng.randrange(1, 4)):
                at = rng.randrange(len(mutated))
                mutated[at] = rng.randrange(256)
            if rng.random() < 0.2:
                mutated = mutated[:rng.randrange(1, len(mutated))]
            reply = kw.execute("RESTORE", "victim", "0", with_footer(bytes(mutated)), "REPLACE")
            assert reply == b"OK" or isinstance(reply, ReplyError)
            if reply == b"OK":
                # Whatever loaded must be usable.
                kw.execute("XINFO", "STREAM", "victim", "FULL")
                kw.execute("XRANGE", "victim", "-", "+")
                kw.execute("XREVRANGE", "victim", "+", "-")
                kw.execute("XADD", "victim", "*", "a", "b")
                kw.execute("XTRIM", "victim", "MAXLEN", "3")
                kw.execute("XAUTOCLAIM", "victim", "g1", "c", "0", "0")
    assert kw.execute("PING") == b"PONG"


@pytest.fixture
def workdir():
    path = tempfile.mkdtemp(prefix="kw-streams-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.parametrize("writer", ["redis", "keywarden"])
def test_rdb_files_both_ways(workdir, writer):
    binaries = {"redis": redis_binary(), "keywarden": None}
    reader = "keywarden" if writer == "redis" else "redis"
    first = start_server(binaries[writer], directives=[("dir", workdir)])
    try:
        c = first.raw()
        build_streams(c, random.Random(21))
        expected = snapshot(c)
        assert c.execute("SAVE") == b"OK"
    finally:
        first.cleanup()
    second = start_server(binaries[reader], directives=[("dir", workdir)])
    try:
        assert snapshot(second.raw()) == expected
    finally:
        second.cleanup()


def test_debug_reload_and_aof_rewrite(server_factory):
    server = server_factory(("appendonly", "yes"), ("aof-use-rdb-preamble", "no"))
    c = server.raw()
    build_streams(c, random.Random(33))
    c.execute("XGROUP", "CREATE", "big", "g3", "$", "ENTRIESREAD", "-1")
    expected = snapshot(c)
    assert c.execute("DEBUG", "RELOAD") == b"OK"
    assert snapshot(c) == expected
    assert c.execute("BGREWRITEAOF") == b"Background append only file rewriting started"
    deadline = time.monotonic() + 30
    while b"aof_rewrite_in_progress:0" not in c.execute("INFO", "persistence"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert c.execute("DEBUG", "LOADAOF") == b"OK"
    got = snapshot(c)
    # An AOF rewrite re-adds the live entries (so the nodes are cut afresh) and recreates the
    # consumers, whose seen-time is then the time of loading, as with Redis's rewrite.
    def comparable(reply):
        def walk(value):
            if not isinstance(value, list):
                return value
            out = []
            for i, item in enumerate(value):
                prev = value[i - 1] if i > 0 else None
                out.append("M" if prev in (b"seen-time", b"radix-tree-keys") else walk(item))
            return out
        return walk(reply)
    assert got.keys() == expected.keys()
    for key in expected:
        assert comparable(got[key]) == comparable(expected[key]), key
