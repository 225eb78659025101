"""MIGRATE between keywarden and a stock redis-server 7.0 in every direction (keywarden to
keywarden, keywarden to redis, redis to keywarden, and redis to redis as the reference): the
same scenario runs on each pair, and every reply and resulting dataset must be the same.
"""

import re
import time

import pytest

from conftest import ReplyError, free_port, redis_binary

KINDS = {"keywarden": None, "redis": "redis"}
PAIRS = [("keywarden", "keywarden"), ("keywarden", "redis"), ("redis", "keywarden"),
         ("redis", "redis")]


def start(server_factory, kind, *directives):
    return server_factory(*directives, binary=redis_binary() if kind == "redis" else None)


def normalise(reply):
    """Deadlines move between runs: keep only whether a PTTL is a live deadline."""
    if isinstance(reply, int) and reply > 1000:
        return "ttl>1000"
    return reply


def run_pairs(server_factory, scenario, target_directives=()):
    """Runs scenario(source, target) on every pair; asserts they all saw the same."""
    results = {}
    for source_kind, target_kind in PAIRS:
        source = start(server_factory, source_kind)
        target = start(server_factory, target_kind, *target_directives)
        results[(source_kind, target_kind)] = scenario(source, target)
        source.cleanup()
        target.cleanup()
    reference = results[("redis", "redis")]
    for pair, seen in results.items():
        for (what, ours), (_, theirs) in zip(seen, reference):
            assert ours == theirs, f"{pair[0]} -> {pair[1]}, {what}: {ours!r} != redis {theirs!r}"
    return reference


def recorder():
    seen = []

    def record(what, conn, *command):
        reply = normalise(conn.execute(*command))
        seen.append((what, reply))
        return reply

    return seen, record


def test_single_keys_copy_replace_nokey_and_busykey(server_factory):
    def scenario(source, target):
        seen, record = recorder()
        src, dst = source.raw(), target.raw()
        host, port = target.host, target.port
        src.execute("SET", "a", "1")
        src.execute("RPUSH", "l", "x", "y", "7")
        src.execute("SET", "t", "v", "PX", "100000")
        src.execute("HSET", "h", *[f"f{i}" for i in range(1200)])
        src.execute("ZADD", "z", "1.5", "m", "-2", "n")
        record("migrate a", src, "MIGRATE", host, port, "a", 0, 5000)
        record("source a", src, "EXISTS", "a")
        record("target a", dst, "GET", "a")
        record("migrate l copy", src, "MIGRATE", host, port, "l", 0, 5000, "COPY")
        record("source l", src, "LRANGE", "l", 0, -1)
        record("target l", dst, "LRANGE", "l", 0, -1)
        record("busykey", src, "MIGRATE", host, port, "l", 0, 5000, "COPY")
        record("busykey without copy", src, "MIGRATE", host, port, "l", 0, 5000)
        record("source l kept", src, "EXISTS", "l")
        record("replace", src, "MIGRATE", host, port, "l", 0, 5000, "REPLACE")
        record("source l gone", src, "EXISTS", "l")
        record("migrate t", src, "MIGRATE", host, port, "t", 0, 5000)
        record("target t ttl", dst, "PTTL", "t")
        record("big hash", src, "MIGRATE", host, port, "h", 0, 5000, "COPY")
        record("zset", src, "MIGRATE", host, port, "z", 0, 5000, "copy", "replace")
        record("nokey", src, "MIGRATE", host, port, "nosuch", 0, 5000)
        record("target digest", dst, "DEBUG", "DIGEST")
        record("source digest", src, "DEBUG", "DIGEST")
        return seen

    seen = run_pairs(server_factory, scenario)
    assert dict(seen)["busykey"] == ReplyError(
        b"ERR Target instance replied with error: BUSYKEY Target key name already exists.")
    assert dict(seen)["nokey"] == b"NOKEY"


def test_keys_option_databases_and_errors(server_factory):
    def scenario(source, target):
        seen, record = recorder()
        src, dst = source.raw(), target.raw()
        host, port = target.host, target.port
        for i in range(20):
            src.execute("SET", f"k{i}", i)
        dst.execute("SELECT", 3)
        dst.execute("SET", "k5", "there")
        record("keys", src, "MIGRATE", host, port, "", 0, 5000, "KEYS", "k1", "nosuch", "k2")
        record("source keys", src, "EXISTS", "k1", "k2", "k3")
        record("db 3 with a busy key", src, "MIGRATE", host, port, "", 3, 5000,
               "KEYS", "k4", "k5", "k6")
        record("source after busy", src, "EXISTS", "k4", "k5", "k6")
        record("target db 3", dst, "MGET", "k4", "k5", "k6")
        record("db 3 again", src, "MIGRATE", host, port, "k7", 3, 5000)
        record("back to db 0", src, "MIGRATE", host, port, "k8", 0, 5000)
        record("bad db", src, "MIGRATE", host, port, "k9", 99, 5000)
        record("after bad db", src, "MIGRATE", host, port, "k9", 0, 5000)
        record("all missing", src, "MIGRATE", host, port, "", 0, 5000, "KEYS", "x", "y")
        record("keys with key", src, "MIGRATE", host, port, "k10", 0, 5000, "KEYS", "k11")
        record("bad timeout", src, "MIGRATE", host, port, "k10", 0, "soon")
        record("bad db arg", src, "MIGRATE", host, port, "k10", "zero", 5000)
        record("bad option", src, "MIGRATE", host, port, "k10", 0, 5000, "FAST")
        record("auth without value", src, "MIGRATE", host, port, "k10", 0, 5000, "AUTH")
        record("auth2 short", src, "MIGRATE", host, port, "k10", 0, 5000, "AUTH2", "u")
        record("arity", src, "MIGRATE", host, port, "k10", 0)
        record("zero timeout means 1000", src, "MIGRATE", host, port, "k10", 0, 0)
        record("target digest", dst, "DEBUG", "DIGEST")
        record("source digest", src, "DEBUG", "DIGEST")
        record("cached", src, "INFO", "stats")
        return [(what, re.search(rb"migrate_cached_sockets:\d+", reply)[0]
                 if what == "cached" else reply) for what, reply in seen]

    seen = dict(run_pairs(server_factory, scenario))
    assert seen["bad db"] == ReplyError(
        b"ERR Target instance replied with error: ERR DB index is out of range")
    assert seen["cached"] == b"migrate_cached_sockets:1"


def test_auth_and_auth2_targets(server_factory):
    def scenario(source, target):
        seen, record = recorder()
        src = source.raw()
        host, port = target.host, target.port
        for key in ("a", "b", "c", "d"):
            src.execute("SET", key, key)
        record("no auth", src, "MIGRATE", host, port, "a", 0, 5000)
        record("wrong password", src, "MIGRATE", host, port, "a", 0, 5000, "AUTH", "nope")
        record("auth", src, "MIGRATE", host, port, "a", 0, 5000, "AUTH", "s3cret")
        record("auth2", src, "MIGRATE", host, port, "b", 0, 5000, "AUTH2", "default", "s3cret")
        record("auth2 wrong user", src, "MIGRATE", host, port, "c", 0, 5000,
               "AUTH2", "nobody", "s3cret")
        record("keys with auth", src, "MIGRATE", host, port, "", 0, 5000, "AUTH", "s3cret",
               "KEYS", "c", "d")
        record("source", src, "EXISTS", "a", "b", "c", "d")
        dst = target.admin()
        record("target", dst, "MGET", "a", "b", "c", "d")
        return seen

    seen = dict(run_pairs(server_factory, scenario, target_directives=[("requirepass", "s3cret")]))
    assert seen["no auth"] == ReplyError(
        b"ERR Target instance replied with error: NOAUTH Authentication required.")
    assert seen["target"] == [b"a", b"b", b"c", b"d"]


@pytest.mark.parametrize("kind", ["keywarden", "redis"])
def test_dead_target_is_an_ioerr_and_the_key_stays(server_factory, kind):
    source = start(server_factory, kind)
    conn = source.raw()
    conn.execute("SET", "k", "v")
    assert conn.execute("MIGRATE", "127.0.0.1", free_port(), "k", 0, 500) == ReplyError(
        b"IOERR error or timeout writing to target instance")
    assert conn.execute("MIGRATE", "nosuchhost.invalid", 6379, "k", 0, 500) == ReplyError(
        b"IOERR error or timeout connecting to the client")
    assert conn.execute("GET", "k") == b"v"


@pytest.mark.parametrize("kind", ["keywarden", "redis"])
def test_target_restart_is_retried_on_a_new_connection(server_factory, kind):
    source = start(server_factory, "keywarden")
    target = start(server_factory, kind)
    conn = source.raw()
    conn.execute("SET", "a", "1")
    conn.execute("SET", "b", "2")
    assert conn.execute("MIGRATE", target.host, target.port, "a", 0, 5000) == b"OK"
    # The target drops our cached connection: the next MIGRATE reconnects once and succeeds.
    admin = target.raw()
    assert admin.execute("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes") == 1
    assert conn.execute("MIGRATE", target.host, target.port, "b", 0, 5000) == b"OK"
    assert admin.execute("MGET", "a", "b") == [b"1", b"2"]


@pytest.mark.parametrize("source_kind, target_kind", PAIRS)
def test_one_cached_connection_serves_many_migrates(server_factory, source_kind, target_kind):
    source = start(server_factory, source_kind)
    target = start(server_factory, target_kind)
    conn = source.raw()
    for i in range(5):
        conn.execute("SET", f"k{i}", i)
        assert conn.execute("MIGRATE", target.host, target.port, f"k{i}", i % 2, 5000) == b"OK"
    clients = target.raw().execute("CLIENT", "LIST").decode().splitlines()
    # Our own CLIENT LIST connection and the one MIGRATE keeps.
    assert len(clients) == 2, clients
    assert re.search(rb"migrate_cached_sockets:1\r\n", conn.execute("INFO", "stats"))


def test_migrate_propagates_as_del(server_factory):
    source = start(server_factory, "keywarden", ("appendonly", "yes"))
    target = start(server_factory, "keywarden")
    conn = source.raw()
    conn.execute("SET", "a", "1")
    conn.execute("SET", "b", "2")
    conn.execute("SET", "c", "3")
    assert conn.execute("MIGRATE", target.host, target.port, "", 0, 5000, "KEYS", "a", "b") == b"OK"
    assert conn.execute("MIGRATE", target.host, target.port, "c", 0, 5000, "COPY") == b"OK"
    digest = conn.execute("DEBUG", "DIGEST")
    assert conn.execute("DEBUG", "LOADAOF") == b"OK"
    assert conn.execute("DEBUG", "DIGEST") == digest
    assert conn.execute("KEYS", "*") == [b"c"]


def test_idle_cached_connection_is_closed_after_ten_seconds(server_factory):
    source = start(server_factory, "keywarden")
    target = start(server_factory, "keywarden")
    conn = source.raw()
    conn.execute("SET", "k", "v")
    assert conn.execute("MIGRATE", target.host, target.port, "k", 0, 5000) == b"OK"
    assert re.search(rb"migrate_cached_sockets:1\r\n", conn.execute("INFO", "stats"))
    admin = target.raw()
    for _ in range(30):  # the cron closes it once it has been idle for more than 10 s
        time.sleep(0.5)
        if re.search(rb"migrate_cached_sockets:0\r\n", conn.execute("INFO", "stats")):
            break
    assert re.search(rb"migrate_cached_sockets:0\r\n", conn.execute("INFO", "stats"))
    assert len(admin.execute("CLIENT", "LIST").decode().splitlines()) == 1
