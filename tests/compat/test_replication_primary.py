"""keywarden as a replication primary, with a stock redis-server 7.0 as its replica.

The replica is started with ``replicaof 127.0.0.1 <keywarden port>`` and must end up holding
exactly the primary's data (DEBUG DIGEST, which both servers compute the same way, plus every
key's PEXPIRETIME), through the full sync (diskless and disk-based), the live stream, partial
resynchronization after a cut link, a full one after the backlog was overrun, and a resync
after the replica was dropped for its output buffer. Errors of PSYNC/SYNC/REPLCONF/WAIT are
compared byte for byte with redis-server's.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from conftest import RawConnection, encode_command, redis_binary, wait_until

FAST = (("repl-diskless-sync-delay", "0"),)


def info(client, section="replication") -> dict:
    return {k: v for k, v in client.info(section).items()}


def start_replica(server_factory, primary, *extra):
    return server_factory(("replicaof", ("127.0.0.1", primary.port)), *extra,
                          binary=redis_binary())


def wait_synced(primary, replica, timeout=30.0):
    """The replica's link is up and it has applied everything the primary produced."""
    p, r = primary.client(), replica.client()

    def synced():
        ri = info(r)
        if ri.get("master_link_status") != "up" or ri.get("master_sync_in_progress") != 0:
            return False
        return ri.get("master_repl_offset") == info(p).get("master_repl_offset")

    assert wait_until(synced, timeout), (
        f"replica not in sync: primary {info(p)}\nreplica {info(r)}\n"
        f"primary clients: {p.execute_command('CLIENT', 'LIST')}\n"
        f"replica process: {open(f'/proc/{replica.pid}/status').read()[:300]}\n"
        f"primary log:\n{primary.log()[-3000:]}\nreplica log:\n{replica.log()[-3000:]}")


def snapshot(client):
    """What must be equal on both sides: the dataset digest, and every key's expiry."""
    out = {"digest": client.execute_command("DEBUG", "DIGEST")}
    for db in range(4):
        client.execute_command("SELECT", db)
        for key in sorted(client.keys("*")):
            out[(db, key)] = (client.type(key), client.execute_command("PEXPIRETIME", key),
                              client.execute_command("DEBUG", "DIGEST-VALUE", key))
    client.execute_command("SELECT", 0)
    return out


def assert_same_data(primary, replica):
    # Single connections (SELECT changes their db).
    p = primary.client(single_connection_client=True)
    r = replica.client(single_connection_client=True)
    assert snapshot(p) == snapshot(r)


def populate(client, prefix="k"):
    client.set(f"{prefix}:str", "hello")
    client.set(f"{prefix}:int", 12345)
    client.set(f"{prefix}:ttl", "v", ex=1000)
    client.rpush(f"{prefix}:list", *[f"e{i}" for i in range(200)])
    client.rpush(f"{prefix}:smalllist", "a", "b")
    client.hset(f"{prefix}:hash", mapping={f"f{i}": i for i in range(300)})
    client.hset(f"{prefix}:smallhash", mapping={"a": 1})
    client.sadd(f"{prefix}:set", *[f"m{i}" for i in range(300)])
    client.sadd(f"{prefix}:intset", 1, 2, 3)
    client.zadd(f"{prefix}:zset", {f"z{i}": i / 3 for i in range(300)})
    client.zadd(f"{prefix}:smallzset", {"a": 1.5})
    client.pexpire(f"{prefix}:hash", 500_000)


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_full_sync_then_stream(server_factory, diskless):
    primary = server_factory(("repl-diskless-sync", diskless), *FAST)
    p = primary.client()
    populate(p)
    c2 = primary.client(db=2)
    populate(c2, "db2")
    replica = start_replica(server_factory, primary)
    wait_synced(primary, replica)
    assert_same_data(primary, replica)
    assert info(p)["connected_slaves"] == 1
    assert info(p)["slave0"]["state"] == "online"

    # The live stream: plain writes, relative TTLs (made absolute), expiry as DEL,
    # transactions, scripts, several databases, FLUSHALL.
    p.set("s1", "v1")
    p.expire("s1", 1000)
    p.set("short", "x", px=50)
    pipe = p.pipeline(transaction=True)
    pipe.incr("counter").lpush("l2", "a", "b").hset("h2", "f", "v")
    pipe.execute()
    p.eval("redis.call('set', KEYS[1], ARGV[1]); redis.call('expire', KEYS[1], 77)", 1,
           "scripted", "sv")
    c3 = primary.client(db=3)
    c3.set("in3", "three")
    c3.zadd("z3", {"a": 1})
    assert p.execute_command("WAIT", 1, 5000) == 1
    # The short key expires on the primary; its DEL reaches the replica.
    assert wait_until(lambda: p.get("short") is None and p.exists("short") == 0, 10)
    wait_synced(primary, replica)
    assert_same_data(primary, replica)
    r = replica.client()
    assert r.execute_command("PEXPIRETIME", "s1") == p.execute_command("PEXPIRETIME", "s1")
    assert r.execute_command("DBSIZE") == p.execute_command("DBSIZE")
    c2.flushall()
    c3.set("after", "flush")
    wait_synced(primary, replica)
    assert_same_data(primary, replica)
    assert replica.client(db=3).get("after") == b"flush"


def test_old_sync_and_psync_replies(server_factory):
    primary = server_factory(("repl-diskless-sync", "yes"), *FAST)
    primary.client().set("a", "1")
    # SYNC (no capa eof): a plain bulk image, no +FULLRESYNC line.
    conn = primary.raw()
    conn.send(encode_command("SYNC"))
    data = b""
    deadline = time.monotonic() + 20
    while b"REDIS" not in data and time.monotonic() < deadline:
        data += conn.sock.recv(65536)
    data = data.lstrip(b"\n")
    assert data.startswith(b"$"), data[:80]
    assert data.split(b"\r\n", 1)[1].startswith(b"REDIS0010")
    # PSYNC with capa eof: +FULLRESYNC <replid> <offset>, then the EOF-marked image.
    conn2 = primary.raw()
    assert conn2.execute("REPLCONF", "capa", "eof", "capa", "psync2") == b"OK"
    conn2.send(encode_command("PSYNC", "?", "-1"))
    data = b""
    deadline = time.monotonic() + 20
    while data.count(b"\r\n") < 2 and time.monotonic() < deadline:
        data += conn2.sock.recv(65536)
    data = data.lstrip(b"\n")
    line, rest = data.split(b"\r\n", 1)
    words = line.split()
    assert words[0] == b"+FULLRESYNC" and len(words[1]) == 40 and words[2].isdigit()
    assert rest.startswith(b"$EOF:")
    mark = rest[5:45]
    while not data.endswith(mark) and time.monotonic() < deadline:
        data += conn2.sock.recv(65536)
    assert data.endswith(mark)
    assert wait_until(lambda: info(primary.client())["connected_slaves"] == 2, 10)
    listing = primary.client().execute_command("CLIENT", "LIST", "TYPE", "replica")
    assert listing.count(b"flags=S") == 2


def test_partial_resync_after_link_cut(server_factory):
    primary = server_factory(*FAST)
    p = primary.client()
    populate(p)
    replica = start_replica(server_factory, primary)
    wait_synced(primary, replica)
    assert p.execute_command("CLIENT", "KILL", "TYPE", "replica") == 1
    p.set("during", "cut")
    p.rpush("k:list", "more")
    assert wait_until(lambda: info(p, "stats")["sync_partial_ok"] == 1, 20), primary.log()
    wait_synced(primary, replica)
    assert info(p, "stats")["sync_full"] == 1
    assert "Successful partial resynchronization" in replica.log()
    assert_same_data(primary, replica)


def test_backlog_overrun_needs_full_resync(server_factory):
    primary = server_factory(*FAST, ("repl-backlog-size", "16kb"))
    p = primary.client()
    replica = start_replica(server_factory, primary)
    wait_synced(primary, replica)
    # Stop the replica so that it cannot reconnect before the backlog is overrun.
    os.kill(replica.pid, signal.SIGSTOP)
    try:
        p.execute_command("CLIENT", "KILL", "TYPE", "replica")
        for i in range(100):
            p.set(f"big{i}", "x" * 1000)
        assert info(p)["repl_backlog_histlen"] == 16 * 1024
    finally:
        os.kill(replica.pid, signal.SIGCONT)
    assert wait_until(lambda: info(p, "stats")["sync_full"] == 2, 30), primary.log()
    wait_synced(primary, replica)
    assert_same_data(primary, replica)


def test_min_replicas_to_write(server_factory):
    primary = server_factory(*FAST)
    p = primary.client()
    replica = start_replica(server_factory, primary)
    wait_synced(primary, replica)
    p.config_set("min-replicas-to-write", 2)
    raw = primary.raw()
    assert wait_until(lambda: info(p).get("min_slaves_good_slaves") == 1, 5)
    assert raw.execute_raw("SET", "a", "1") == b"-NOREPLICAS Not enough good replicas to write.\r\n"
    p.config_set("min-replicas-to-write", 1)
    assert raw.execute_raw("SET", "a", "1") == b"+OK\r\n"
    p.config_set("min-replicas-to-write", 0)
    assert "min_slaves_good_slaves" not in info(p)


def test_replica_over_output_limit_is_dropped_and_resyncs(server_factory):
    primary = server_factory(*FAST, ("client-output-buffer-limit", ("replica", "1mb", "0", "0")))
    p = primary.client()
    replica = start_replica(server_factory, primary)
    wait_synced(primary, replica)
    os.kill(replica.pid, signal.SIGSTOP)
    try:
        value = "v" * 100_000
        for i in range(400):  # 40 MB: far more than the socket buffers hold
            p.set(f"fill{i % 50}", value)
            if info(p)["connected_slaves"] == 0:
                break
        assert wait_until(lambda: info(p)["connected_slaves"] == 0, 10)
        assert "overcoming of output buffer limits" in primary.log()
    finally:
        os.kill(replica.pid, signal.SIGCONT)
    wait_synced(primary, replica, timeout=60)
    assert_same_data(primary, replica)


def test_big_value_in_stream(server_factory):
    primary = server_factory(*FAST)
    p = primary.client()
    replica = start_replica(server_factory, primary)
    wait_synced(primary, replica)
    value = os.urandom(1 << 20) * 100  # 100 MB
    p.set("huge", value)
    wait_synced(primary, replica, timeout=120)
    r = replica.client()
    assert r.strlen("huge") == len(value)
    assert (r.execute_command("DEBUG", "DIGEST-VALUE", "huge") ==
            p.execute_command("DEBUG", "DIGEST-VALUE", "huge"))


def test_wait(server_factory):
    primary = server_factory(*FAST)
    p = primary.client()
    assert p.execute_command("WAIT", 1, 50) == 0  # no replica: times out with the count
    replica = start_replica(server_factory, primary)
    wait_synced(primary, replica)
    p.set("x", "1")
    assert p.execute_command("WAIT", 1, 0) == 1
    assert p.execute_command("WAIT", 2, 100) == 1
    # Inside MULTI it answers at once.
    pipe = p.pipeline(transaction=True)
    pipe.set("y", "2").execute_command("WAIT", 5, 0)
    assert pipe.execute()[1] in (0, 1)


ERROR_CASES = [
    [("REPLCONF", "foo", "bar")],
    [("REPLCONF", "foo")],
    [("REPLCONF",)],
    [("REPLCONF", "listening-port", "abc")],
    [("REPLCONF", "listening-port", "70000")],
    [("REPLCONF", "ip-address", "x" * 300)],
    [("REPLCONF", "capa", "eof", "capa", "psync2", "capa", "other")],
    [("REPLCONF", "rdb-only", "2")],
    [("REPLCONF", "rdb-only", "x")],
    [("REPLCONF", "rdb-filter-only", "")],
    [("REPLCONF", "rdb-filter-only", "keys")],
    [("REPLCONF", "ACK", "10"), ("PING",)],
    [("REPLCONF", "GETACK", "*"), ("PING",)],
    [("WAIT", "a", "1")],
    [("WAIT", "1", "a")],
    [("WAIT", "1", "-1")],
    [("WAIT", "1", "1.5")],
    [("WAIT", "1", "99999999999999999999")],
    [("WAIT", "0", "0")],
    [("WAIT", "-1", "0")],
    [("WAIT", "1", "20")],
    [("WAIT",)],
    [("MULTI",), ("WAIT", "1", "0"), ("EXEC",)],
    [("MULTI",), ("PSYNC", "?", "-1"), ("SYNC",), ("DISCARD",)],
    [("PSYNC", "?")],
    [("SYNC", "x")],
    [("PSYNC", "?", "abc"), ("PING",)],
    [("EVAL", "return redis.call('wait', 1, 0)", "0")],
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=lambda c: " ".join(c[0])[:40])
def test_errors_match_redis(server_factory, case):
    kw = server_factory(*FAST)
    ref = server_factory(*FAST, binary=redis_binary())

    def run(server):
        conn = server.raw()
        return [conn.execute_raw(*command) for command in case]

    if case[0][0] == "REPLCONF" and len(case[0]) > 1 and case[0][1] in ("ACK", "GETACK"):
        # No reply at all: the PING answers first.
        def run(server):  # noqa: F811
            conn = server.raw()
            conn.send(b"".join(encode_command(*c) for c in case))
            return conn.read_reply_bytes()
    kw_out, ref_out = run(kw), run(ref)
    if case[0][0] == "EVAL":
        # The script's SHA differs by nothing; compare the error's first words.
        assert kw_out[0].split(b"script:")[0] == ref_out[0].split(b"script:")[0]
    else:
        assert kw_out == ref_out


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_two_replicas_share_a_sync(server_factory, diskless):
    # Diskless: the delay gathers both replicas into one transfer (max-replicas 2 starts it as
    # soon as both are there). Disk: the second attaches to the first one's save or waits.
    primary = server_factory(("repl-diskless-sync", diskless), ("repl-diskless-sync-delay", "5"),
                             ("repl-diskless-sync-max-replicas", "2"))
    p = primary.client()
    populate(p)
    first = start_replica(server_factory, primary)
    second = start_replica(server_factory, primary)
    wait_synced(primary, first)
    wait_synced(primary, second)
    assert_same_data(primary, first)
    assert_same_data(primary, second)
    replication = info(p)
    assert replication["connected_slaves"] == 2
    for name in ("slave0", "slave1"):
        assert replication[name]["state"] == "online"
        assert replication[name]["ip"] == "127.0.0.1"
        assert replication[name]["port"] in (first.port, second.port)
    p.set("after", "both")
    assert p.execute_command("WAIT", 2, 10000) == 2
    assert first.client().get("after") == b"both" and second.client().get("after") == b"both"


def test_repl_timeout_drops_a_silent_replica(server_factory):
    primary = server_factory(*FAST, ("repl-timeout", "2"))
    p = primary.client()
    replica = start_replica(server_factory, primary)
    wait_synced(primary, replica)
    os.kill(replica.pid, signal.SIGSTOP)
    try:
        assert wait_until(lambda: info(p)["connected_slaves"] == 0, 20)
        assert "Disconnecting timedout replica" in primary.log()
    finally:
        os.kill(replica.pid, signal.SIGCONT)
    wait_synced(primary, replica)


def test_backlog_freed_after_ttl(server_factory):
    primary = server_factory(*FAST, ("repl-backlog-ttl", "1"))
    p = primary.client()
    assert info(p)["repl_backlog_active"] == 0
    replica = start_replica(server_factory, primary)
    wait_synced(primary, replica)
    replid = info(p)["master_replid"]
    assert info(p)["repl_backlog_active"] == 1
    replica.stop()
    assert wait_until(lambda: info(p)["repl_backlog_active"] == 0, 20)
    assert info(p)["master_replid"] != replid
    # Without a backlog nothing is encoded for replicas: the offset stays put.
    offset = info(p)["master_repl_offset"]
    p.set("x", "1")
    assert info(p)["master_repl_offset"] == offset


def test_replica_client_is_not_timed_out_and_killable_as_slave(server_factory):
    primary = server_factory(*FAST, ("timeout", "1"))
    p = primary.client()
    replica = start_replica(server_factory, primary)
    wait_synced(primary, replica)
    def replica_ids():
        listing = p.execute_command("CLIENT", "LIST", "TYPE", "replica").decode()
        return [word for word in listing.split() if word.startswith("id=")]

    before = replica_ids()
    assert len(before) == 1
    time.sleep(2.5)  # longer than `timeout`: a normal idle client would be gone
    assert replica_ids() == before  # the same connection, never dropped
    assert p.execute_command("CLIENT", "KILL", "TYPE", "slave") == 1
    wait_synced(primary, replica)


def test_wait_blocks_until_unblocked_or_timeout(server_factory):
    primary = server_factory(*FAST)
    p = primary.client()
    replica = start_replica(server_factory, primary)
    wait_synced(primary, replica)
    waiter = primary.raw()
    waiter_id = waiter.execute("CLIENT", "ID")
    waiter.execute("SET", "k", "v")
    assert waiter.execute("WAIT", 1, 0) == 1  # blocks until the replica acknowledged the SET
    # The GETACK that WAIT sent is in the stream too (Redis counts it as well): wait for the
    # replica's periodic ACK to cover everything, so that the next WAIT has one replica.
    assert wait_until(lambda: info(p)["slave0"]["offset"] == info(p)["master_repl_offset"], 10)
    waiter.send(encode_command("WAIT", 2, 0))  # only one replica: waits forever
    assert wait_until(lambda: info(p, "clients")["blocked_clients"] == 1, 10)
    assert p.execute_command("CLIENT", "UNBLOCK", waiter_id, "TIMEOUT") == 1
    assert waiter.read_reply() == 1  # the replicas that acknowledged, as on a timeout
    waiter.send(encode_command("WAIT", 2, 200))
    assert waiter.read_reply() == 1
    assert info(p, "clients")["blocked_clients"] == 0


def test_stream_held_during_sync_counts_against_output_limit(server_factory):
    primary = server_factory(("repl-diskless-sync", "no"), ("rdb-key-save-delay", "200000"),
                             ("client-output-buffer-limit", ("replica", "1mb", "0", "0")))
    p = primary.client()
    for i in range(10):
        p.set(f"slow{i}", i)
    replica = start_replica(server_factory, primary)
    assert wait_until(lambda: info(p).get("slave0", {}).get("state") == "wait_bgsave", 10)
    for i in range(3):
        p.set(f"big{i}", "x" * 500_000)
    assert wait_until(lambda: "overcoming of output buffer limits" in primary.log(), 10)
    p.config_set("rdb-key-save-delay", 0)
    wait_synced(primary, replica, timeout=60)
    assert_same_data(primary, replica)
