"""Lazy free end to end: UNLINK of a 1M-field hash returns and the background thread frees it
(lazyfreed_objects becomes 1), FLUSHALL ASYNC empties the keyspace at once, the lazyfree-*
switches through CONFIG GET/SET, and the INFO memory lazy-free fields against redis-server's
(names, order, counts). No timing is asserted: how long the command thread is blocked is the
benchmark's business (bench/memory_expiry_benchmark.py --only lazyfree).
"""

from __future__ import annotations

import time

import pytest

SWITCHES = [
    "lazyfree-lazy-eviction",
    "lazyfree-lazy-expire",
    "lazyfree-lazy-server-del",
    "lazyfree-lazy-user-del",
    "lazyfree-lazy-user-flush",
    "replica-lazy-flush",
]


def memory_info(conn) -> list[tuple[str, str]]:
    text = conn.execute("INFO", "memory").decode()
    pairs = []
    for line in text.splitlines():
        if line and not line.startswith("#") and ":" in line:
            name, value = line.split(":", 1)
            pairs.append((name, value))
    return pairs


def lazy_fields(conn) -> dict[str, int]:
    return {k: int(v) for k, v in memory_info(conn) if k.startswith("lazyfree")}


def wait_freed(conn, expected: int, timeout: float = 30.0) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    fields = lazy_fields(conn)
    while fields["lazyfreed_objects"] != expected and time.monotonic() < deadline:
        time.sleep(0.02)
        fields = lazy_fields(conn)
    return fields


def settle(conn, timeout: float = 30.0) -> int:
    """Waits until nothing is pending; returns lazyfreed_objects."""
    deadline = time.monotonic() + timeout
    while lazy_fields(conn)["lazyfree_pending_objects"] and time.monotonic() < deadline:
        time.sleep(0.01)
    return lazy_fields(conn)["lazyfreed_objects"]


def fill_hash(conn, key: str, fields: int, batch: int = 10000) -> None:
    for start in range(0, fields, batch):
        args = []
        for i in range(start, min(start + batch, fields)):
            args += [f"f{i}", "v"]
        conn.execute("HSET", key, *args)


def test_unlink_of_a_million_field_hash_returns_and_is_freed_by_the_thread(keywarden):
    with keywarden.raw(timeout=60) as conn:
        conn.execute("CONFIG", "RESETSTAT")
        fill_hash(conn, "big", 1_000_000)
        assert conn.execute("HLEN", "big") == 1_000_000
        assert conn.execute("UNLINK", "big") == 1
        assert conn.execute("EXISTS", "big") == 0
        fields = wait_freed(conn, 1)
        assert fields == {"lazyfree_pending_objects": 0, "lazyfreed_objects": 1}


def test_flushall_async_empties_the_keyspace_at_once(keywarden, reference_redis):
    for server in (keywarden, reference_redis):
        with server.raw(timeout=60) as conn:
            conn.execute("CONFIG", "RESETSTAT")
            for db in (0, 5):
                conn.execute("SELECT", db)
                conn.execute("MSET", *[x for i in range(1000) for x in (f"k{i}", "v")])
            fill_hash(conn, "big", 100_000)
            assert conn.execute("FLUSHALL", "ASYNC") == b"OK"
            assert conn.execute("DBSIZE") == 0
            conn.execute("SELECT", 0)
            assert conn.execute("DBSIZE") == 0
            assert conn.execute("SET", "k1", "new") == b"OK"
            assert conn.execute("GET", "k1") == b"new"
            # One object per key, as Redis counts a flushed database.
            assert wait_freed(conn, 2001)["lazyfreed_objects"] == 2001, server


def test_lazyfreed_objects_counts_what_redis_counts(keywarden, reference_redis):
    """The same sequence on both servers gives the same counters at each step."""
    steps = [
        # 200 members: a hashtable in both (keywarden keeps up to 128 in a listpack, as 7.2).
        ("SADD", "s", *[f"m{i}" for i in range(200)]),
        ("UNLINK", "s"),
        ("HSET", "h", *[x for i in range(600) for x in (f"f{i}", "v")]),
        ("DEL", "h"),                                      # lazyfree-lazy-user-del no: inline
        ("CONFIG", "SET", "lazyfree-lazy-user-del", "yes"),
        ("HSET", "h", *[x for i in range(600) for x in (f"f{i}", "v")]),
        ("DEL", "h"),
        ("CONFIG", "SET", "lazyfree-lazy-server-del", "yes"),
        ("ZADD", "z", *[x for i in range(200) for x in (i, f"m{i}")]),
        ("SET", "z", "string now"),
        ("RPUSH", "l", *[f"e{i}" for i in range(100)]),  # one quicklist node: inline
        ("UNLINK", "l"),
        ("SET", "a", "1"),
        ("FLUSHDB",),                                      # lazyfree-lazy-user-flush no: inline
        ("CONFIG", "SET", "lazyfree-lazy-user-flush", "yes"),
        ("SET", "a", "1"),
        ("FLUSHDB",),
    ]
    seen = []
    for server in (keywarden, reference_redis):
        counts = []
        with server.raw(timeout=60) as conn:
            conn.execute("CONFIG", "RESETSTAT")
            try:
                for step in steps:
                    conn.execute(*step)
                    counts.append(settle(conn))
            finally:
                for name in ("lazyfree-lazy-user-del", "lazyfree-lazy-server-del",
                             "lazyfree-lazy-user-flush"):
                    conn.execute("CONFIG", "SET", name, "no")
        seen.append(counts)
    assert seen[0] == seen[1]
    assert seen[0][-1] == 4


def test_config_resetstat_zeroes_lazyfreed_objects(keywarden, reference_redis):
    for server in (keywarden, reference_redis):
        with server.raw() as conn:
            conn.execute("SADD", "s", *[f"m{i}" for i in range(200)])
            conn.execute("UNLINK", "s")
            assert settle(conn) > 0
            assert conn.execute("CONFIG", "RESETSTAT") == b"OK"
            assert lazy_fields(conn) == {"lazyfree_pending_objects": 0, "lazyfreed_objects": 0}


@pytest.mark.parametrize("name", SWITCHES)
def test_switches_get_and_set_like_redis(keywarden, reference_redis, name):
    with keywarden.raw() as kw, reference_redis.raw() as ref:
        assert kw.execute_raw("CONFIG", "GET", name) == ref.execute_raw("CONFIG", "GET", name)
        for value in ("yes", "no", "maybe"):
            assert (kw.execute_raw("CONFIG", "SET", name, value)
                    == ref.execute_raw("CONFIG", "SET", name, value))
            assert kw.execute_raw("CONFIG", "GET", name) == ref.execute_raw("CONFIG", "GET", name)


def test_config_get_lazy_pattern_matches_redis(keywarden, reference_redis):
    def pairs(conn):
        flat = conn.execute("CONFIG", "GET", "*lazy*")
        return sorted(zip(flat[::2], flat[1::2]))
    with keywarden.raw() as kw, reference_redis.raw() as ref:
        assert pairs(kw) == pairs(ref)


def test_info_memory_lazyfree_fields_match_redis(keywarden, reference_redis):
    """Same names, same place (the last two fields of the memory section), same values at rest."""
    with keywarden.raw() as kw, reference_redis.raw() as ref:
        kw_names = [name for name, _ in memory_info(kw)]
        ref_names = [name for name, _ in memory_info(ref)]
        assert kw_names[-2:] == ref_names[-2:] == ["lazyfree_pending_objects",
                                                   "lazyfreed_objects"]
        kw.execute("CONFIG", "RESETSTAT")
        ref.execute("CONFIG", "RESETSTAT")
        assert lazy_fields(kw) == lazy_fields(ref)
