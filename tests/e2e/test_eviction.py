"""maxmemory eviction against a stock redis-server.

A limit of 1 byte is over for any server whatever its memory accounting, so with it every reply
(OOM errors in commands, MULTI/EXEC and scripts), every evicted key and every `evicted` event
must match Redis's exactly. With a realistic limit the evicted keys differ between the servers
(both approximate LRU with random samples), so those tests compare behaviour: writes go on,
some keys go, evicted_keys counts them.
"""

from __future__ import annotations

import pytest

from conftest import redis_binary

OOM = b"-OOM command not allowed when used memory > 'maxmemory'.\r\n"


@pytest.fixture
def pair(server_factory):
    """A fresh keywarden and a fresh redis-server (eviction changes global state)."""
    return server_factory(), server_factory(binary=redis_binary())


def both(pair, *commands):
    """Runs the commands on both servers over one connection each; returns both reply lists."""
    results = []
    for server in pair:
        with server.raw() as conn:
            results.append([conn.execute_raw(*command) for command in commands])
    return results


def info_field(conn, section, name):
    text = conn.execute("INFO", section).decode()
    for line in text.split("\r\n"):
        if line.startswith(name + ":"):
            return line.split(":", 1)[1]
    raise AssertionError(f"{name} not in INFO {section}")


NOEVICTION_SEQUENCE = [
    ("SET", "a", "1"),
    ("CONFIG", "SET", "maxmemory", "1"),
    ("SET", "b", "2"),
    ("INCR", "a"),
    ("GET", "a"),
    ("EXPIRE", "a", "100"),
    ("MULTI",),
    ("SET", "c", "1"),
    ("GET", "a"),
    ("EXEC",),
    ("MULTI",),
    ("DISCARD",),
    ("EVAL", "redis.call('set','x',1) return 1", "0"),
    ("EVAL", "return redis.pcall('set','x',1)", "0"),
    ("EVAL", "return redis.call('get','a')", "0"),
    ("EVAL", "#!lua\nreturn redis.call('get','a')", "0"),
    ("EVAL", "#!lua flags=no-writes\nreturn redis.call('get','a')", "0"),
    ("EVAL", "#!lua flags=allow-oom\nreturn redis.call('set','y','1')", "0"),
    ("EVAL_RO", "#!lua\nreturn 1", "0"),
    ("EVAL", "redis.call('del','y') redis.call('set','x',1) return 1", "0"),
    ("DBSIZE",),
    ("OBJECT", "FREQ", "a"),
    ("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"),
    ("OBJECT", "IDLETIME", "a"),
    ("CONFIG", "SET", "maxmemory-policy", "noeviction"),
    ("CONFIG", "SET", "maxmemory-eviction-tenacity", "101"),
    ("CONFIG", "SET", "maxmemory-eviction-tenacity", "-1"),
    ("CONFIG", "SET", "maxmemory-eviction-tenacity", "100"),
    ("CONFIG", "GET", "maxmemory-eviction-tenacity"),
    ("CONFIG", "SET", "maxmemory", "0"),
    ("SET", "b", "2"),
]


def test_noeviction_replies_match_redis(pair):
    ours, theirs = both(pair, *NOEVICTION_SEQUENCE)
    for command, mine, reference in zip(NOEVICTION_SEQUENCE, ours, theirs):
        assert mine == reference, command
    assert OOM in ours


def test_exec_refused_when_memory_grew_after_queueing(pair):
    for server in pair:
        with server.raw() as conn, server.raw() as other:
            assert conn.execute("MULTI") == b"OK"
            assert conn.execute("SET", "k", "v") == b"QUEUED"
            assert other.execute("CONFIG", "SET", "maxmemory", "1") == b"OK"
            assert conn.execute_raw("EXEC") == (
                b"-EXECABORT Transaction discarded because of: OOM command not allowed when "
                b"used memory > 'maxmemory'.\r\n")
            assert other.execute("CONFIG", "SET", "maxmemory", "0") == b"OK"


@pytest.mark.parametrize("policy", ["allkeys-lru", "allkeys-lfu", "allkeys-random",
                                    "volatile-lru", "volatile-lfu", "volatile-random",
                                    "volatile-ttl"])
def test_tiny_limit_evicts_every_candidate_then_refuses(pair, policy):
    """With maxmemory 1 every candidate goes on the next command, the same keys on both."""
    results = []
    for server in pair:
        with server.raw() as conn, server.raw() as listener:
            conn.execute("CONFIG", "SET", "notify-keyspace-events", "Ee")
            listener.send_command("SUBSCRIBE", "__keyevent@0__:evicted")
            listener.read_reply()
            for i in range(50):
                conn.execute("SET", f"plain{i}", "v")
                conn.execute("SET", f"ttl{i}", "v", "EX", str(1000 + i))
            conn.execute("CONFIG", "SET", "maxmemory-policy", policy)
            # No time limit: a slow build must not turn the OOM into "still evicting".
            conn.execute("CONFIG", "SET", "maxmemory-eviction-tenacity", "100")
            conn.execute("CONFIG", "SET", "maxmemory", "1")
            first = conn.execute_raw("SET", "new", "v")
            get = conn.execute_raw("GET", "plain1")
            conn.execute("CONFIG", "SET", "maxmemory", "0")
            evicted = int(info_field(conn, "stats", "evicted_keys"))
            left = sorted(conn.execute("KEYS", "*"))
            events = sorted(listener.read_reply()[2] for _ in range(evicted))
            results.append((first, get, evicted, left, events))
    ours, theirs = results
    assert ours == theirs
    assert ours[0] == OOM
    assert ours[2] == (100 if policy.startswith("allkeys") else 50)


def test_realistic_limit_keeps_accepting_writes(pair):
    """Fill past a limit a few MB above the start: both evict and keep serving writes."""
    for server in pair:
        with server.raw() as conn:
            used = int(info_field(conn, "memory", "used_memory"))
            limit = used + 4 * 1024 * 1024
            conn.execute("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
            conn.execute("CONFIG", "SET", "maxmemory", str(limit))
            value = "x" * 10_000
            written = 2000  # 20 MB of values against a 4 MB allowance
            for i in range(written):
                reply = conn.execute_raw("SET", f"key:{i}", value)
                assert reply == b"+OK\r\n", (server, i, reply)
            evicted = int(info_field(conn, "stats", "evicted_keys"))
            dbsize = conn.execute("DBSIZE")
            assert evicted > 0, server
            assert 0 < dbsize < written, server
            assert dbsize + evicted == written, server
            # The newest keys survive LRU.
            assert conn.execute("EXISTS", f"key:{written - 1}") == 1, server
            conn.execute("CONFIG", "SET", "maxmemory", "0")
