"""MEMORY USAGE / STATS / DOCTOR / MALLOC-STATS / PURGE / HELP.

Errors and reply shapes are compared with a stock redis-server; the byte counts are keywarden's
own (what a key costs keywarden), so they are checked for sense, not equality.
"""

from __future__ import annotations

import pytest

ERROR_CASES = [
    ("MEMORY",),
    ("MEMORY", "foo"),
    ("MEMORY", "USAGE"),
    ("MEMORY", "USAGE", "k", "SAMPLES"),
    ("MEMORY", "USAGE", "k", "SAMPLES", "-1"),
    ("MEMORY", "USAGE", "k", "SAMPLES", "x"),
    ("MEMORY", "USAGE", "k", "bar"),
    ("MEMORY", "USAGE", "k", "SAMPLES", "5", "SAMPLES"),
    ("MEMORY", "STATS", "x"),
    ("MEMORY", "PURGE", "x"),
    ("MEMORY", "USAGE", "missing"),
    ("MEMORY", "USAGE", "missing", "SAMPLES", "0"),
    ("MEMORY", "HELP"),
    ("MEMORY", "PURGE"),
]


@pytest.mark.parametrize("args", ERROR_CASES, ids=lambda a: " ".join(a))
def test_replies_match_redis(keywarden, reference_redis, args):
    for server in (keywarden, reference_redis):
        with server.raw() as conn:
            assert conn.execute("SET", "k", "v") == b"OK"
    with keywarden.raw() as kw, reference_redis.raw() as ref:
        assert kw.execute_raw(*args) == ref.execute_raw(*args)


FILL = {
    "string": lambda c, k, n: c.execute("SET", k, "x" * (n * 10)),
    "hash": lambda c, k, n: c.execute("HSET", k, *[f"f{i}-{i}" for i in range(2 * n)]),
    "list": lambda c, k, n: c.execute("RPUSH", k, *[f"element-{i}" for i in range(n)]),
    "set": lambda c, k, n: c.execute("SADD", k, *[f"member-{i}" for i in range(n)]),
    "zset": lambda c, k, n: c.execute("ZADD", k, *[x for i in range(n) for x in (i, f"m{i}")]),
}


@pytest.mark.parametrize("kind", sorted(FILL))
def test_usage_grows_with_the_value(keywarden, kind):
    with keywarden.raw() as conn:
        sizes = []
        for n in (3, 300, 3000):
            key = f"{kind}:{n}"
            FILL[kind](conn, key, n)
            sizes.append(conn.execute("MEMORY", "USAGE", key))
            assert conn.execute("MEMORY", "USAGE", key, "SAMPLES", "0") == sizes[-1]
        assert 16 < sizes[0] < sizes[1] < sizes[2], sizes
        # Large values cost at least their bytes, and not absurdly more.
        assert sizes[2] >= 3000 * 4
        assert sizes[2] < 3000 * 200


def test_stats_is_a_map_with_redis_fields(keywarden, reference_redis):
    for server in (keywarden, reference_redis):
        with server.raw() as conn:
            conn.execute("SET", "a", "1")
            stats = conn.execute("MEMORY", "STATS")
            names = stats[0::2]
            for name in (b"peak.allocated", b"total.allocated", b"startup.allocated",
                         b"clients.normal", b"db.0", b"overhead.total", b"keys.count",
                         b"keys.bytes-per-key", b"dataset.bytes", b"dataset.percentage",
                         b"fragmentation"):
                assert name in names, (server, name)
            fields = dict(zip(names, stats[1::2]))
            assert fields[b"keys.count"] == 1


def test_doctor_and_malloc_stats_are_text(keywarden):
    with keywarden.raw() as conn:
        assert isinstance(conn.execute("MEMORY", "DOCTOR"), bytes)
        assert isinstance(conn.execute("MEMORY", "MALLOC-STATS"), bytes)


def info_memory(conn) -> list[tuple[str, str]]:
    text = conn.execute("INFO", "memory").decode()
    return [tuple(line.split(":", 1)) for line in text.split("\r\n") if line and ":" in line]


def test_info_memory_fields_and_order_match_redis(keywarden, reference_redis):
    with keywarden.raw() as kw, reference_redis.raw() as ref:
        assert [name for name, _ in info_memory(kw)] == [name for name, _ in info_memory(ref)]
        fields = dict(info_memory(kw))
        assert int(fields["used_memory"]) > 0
        assert int(fields["allocator_allocated"]) > 0
        assert int(fields["allocator_active"]) >= int(fields["allocator_allocated"]) // 2
        assert fields["mem_allocator"] in ("libc",) or fields["mem_allocator"].startswith(
            "jemalloc-")


def test_memory_stats_keys_match_redis(keywarden, reference_redis):
    names = []
    for server in (keywarden, reference_redis):
        with server.raw() as conn:
            conn.execute("SET", "a", "1")
            conn.execute("SELECT", "3")
            conn.execute("SET", "b", "1", "EX", "100")
            names.append(conn.execute("MEMORY", "STATS")[0::2])
    assert names[0] == names[1]


def used_memory(conn) -> int:
    return int(dict(info_memory(conn))["used_memory"])


def test_used_memory_grows_with_data_and_falls_after_flushall(keywarden):
    with keywarden.raw() as conn:
        conn.execute("FLUSHALL")
        empty = used_memory(conn)
        for start in range(0, 100_000, 1000):
            for i in range(start, start + 1000):
                conn.send_command("SET", f"key:{i:07d}", "v" * 10)
            conn.read_replies(1000)
        loaded = used_memory(conn)
        # 100k small keys: at least their bytes, and not absurdly more.
        assert 2_000_000 < loaded - empty < 40_000_000, (empty, loaded)
        stats = dict(zip(*[iter(conn.execute("MEMORY", "STATS"))] * 2))
        assert stats[b"total.allocated"] >= loaded - 1_000_000
        assert stats[b"keys.count"] == 100_000
        assert conn.execute("FLUSHALL") == b"OK"
        assert used_memory(conn) < empty + (loaded - empty) // 4, (empty, loaded)


def test_malloc_stats_and_purge_answer(keywarden, reference_redis):
    with keywarden.raw() as conn:
        allocator = dict(info_memory(conn))["mem_allocator"]
        text = conn.execute("MEMORY", "MALLOC-STATS")
        assert conn.execute("MEMORY", "PURGE") == b"OK"
    if allocator.startswith("jemalloc"):
        # The same report as a jemalloc-built redis-server.
        with reference_redis.raw() as ref:
            expected = ref.execute("MEMORY", "MALLOC-STATS")
        assert text.splitlines()[0] == expected.splitlines()[0]
        assert b"Version:" in text and b"Allocated:" in text
    else:
        assert text == b"Stats not supported for the current allocator"


def test_jemalloc_bg_thread_config_matches_redis(keywarden, reference_redis):
    for args in [("CONFIG", "GET", "jemalloc-bg-thread"),
                 ("CONFIG", "SET", "jemalloc-bg-thread", "no"),
                 ("CONFIG", "GET", "jemalloc-bg-thread"),
                 ("CONFIG", "SET", "jemalloc-bg-thread", "maybe"),
                 ("CONFIG", "SET", "jemalloc-bg-thread", "yes"),
                 ("CONFIG", "GET", "jemalloc-bg-thread")]:
        with keywarden.raw() as kw, reference_redis.raw() as ref:
            assert kw.execute_raw(*args) == ref.execute_raw(*args), args
