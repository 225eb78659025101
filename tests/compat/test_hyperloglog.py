"""HyperLogLog (PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST) against a stock redis-server.

An HLL is a string in Redis's own byte layout, so beyond equal replies the tests compare the
values themselves: the same PFADD sequence must leave byte-identical strings (sparse and dense,
cached cardinality included), a value made by one server must count the same on the other
(GET/SET and DUMP/RESTORE both ways), and a corrupt value must get the same error — or the same
partial edit — from both, never a crash.
"""

from __future__ import annotations

import random
import struct

import pytest

from conftest import summary_set

HLL_REGISTERS = 16384
DENSE_SIZE = 16 + 12288

# Per-command case counts, reported in the run summary.
CASES: dict[str, int] = {}


def count_case(command: str, n: int = 1) -> None:
    CASES[command.upper()] = CASES.get(command.upper(), 0) + n
    summary_set("hyperloglog differential cases", command.upper(), str(CASES[command.upper()]))


def both(keywarden, reference_redis):
    return keywarden.raw(), reference_redis.raw()


def same(kw, ref, *command):
    """Runs `command` on both servers and asserts byte-equal replies; returns the reply bytes."""
    a = kw.execute_raw(*command)
    b = ref.execute_raw(*command)
    assert a == b, f"{command!r}: keywarden {a!r} != redis {b!r}"
    count_case(command[0] if command[0].upper() not in ("PFDEBUG",) else "PFDEBUG")
    return a


def elements(rng: random.Random, n: int) -> list[bytes]:
    out = []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.4:
            out.append(str(rng.randrange(10**12)).encode())
        elif kind < 0.8:
            out.append(rng.randbytes(rng.randrange(0, 24)))
        else:
            out.append(rng.randbytes(rng.randrange(24, 80)))
    return out


# --- Every command and error ----------------------------------------------------------------

SETUP = [
    ("SET", "str", "hello"),
    ("SET", "int", "12345"),
    ("SET", "hdr", "HYLL"),
    ("SET", "badenc", b"HYLL\x02" + b"\x00" * 11 + b"\x7f\xff"),
    ("SET", "shortdense", b"HYLL\x00" + b"\x00" * 11 + b"\x00" * 100),
    ("RPUSH", "list", "a"),
    ("PFADD", "h1", "a", "b", "c"),
    ("PFADD", "h2", "c", "d", "e", "f"),
]

COMMANDS = [
    ("PFADD",),
    ("PFADD", "new"),
    ("PFADD", "new"),
    ("PFADD", "new", "x"),
    ("PFADD", "new", "x"),
    ("PFADD", "new", "x", "y", "z", "x"),
    ("PFADD", "str", "a"),
    ("PFADD", "int", "a"),
    ("PFADD", "hdr", "a"),
    ("PFADD", "badenc", "a"),
    ("PFADD", "shortdense", "a"),
    ("PFADD", "list", "a"),
    ("PFCOUNT",),
    ("PFCOUNT", "missing"),
    ("PFCOUNT", "h1"),
    ("PFCOUNT", "h1"),
    ("PFCOUNT", "h1", "h2"),
    ("PFCOUNT", "h1", "h2", "missing"),
    ("PFCOUNT", "missing", "missing2"),
    ("PFCOUNT", "str"),
    ("PFCOUNT", "h1", "str"),
    ("PFCOUNT", "h1", "list"),
    ("PFCOUNT", "list"),
    ("PFCOUNT", "int"),
    ("GET", "h1"),
    ("PFMERGE",),
    ("PFMERGE", "m"),
    ("PFMERGE", "m", "h1", "h2"),
    ("GET", "m"),
    ("PFCOUNT", "m"),
    ("PFMERGE", "m2", "missing"),
    ("GET", "m2"),
    ("PFMERGE", "h1", "str"),
    ("PFMERGE", "str", "h1"),
    ("PFMERGE", "list", "h1"),
    ("PFMERGE", "m", "m"),
    ("PFDEBUG",),
    ("PFDEBUG", "getreg"),
    ("PFDEBUG", "getreg", "h1", "extra"),
    ("PFDEBUG", "encoding", "missing"),
    ("PFDEBUG", "nosuch", "missing"),
    ("PFDEBUG", "nosuch", "h1"),
    ("PFDEBUG", "encoding", "h1"),
    ("PFDEBUG", "ENCODING", "h1"),
    ("PFDEBUG", "decode", "h1"),
    ("PFDEBUG", "decode", "str"),
    ("PFDEBUG", "encoding", "list"),
    ("PFDEBUG", "todense", "h2"),
    ("PFDEBUG", "todense", "h2"),
    ("PFDEBUG", "encoding", "h2"),
    ("PFDEBUG", "decode", "h2"),
    ("GET", "h2"),
    ("PFDEBUG", "getreg", "h1"),
    ("PFDEBUG", "encoding", "h1"),
    ("PFSELFTEST", "x"),
    ("OBJECT", "ENCODING", "h1"),
    ("OBJECT", "ENCODING", "new"),
    ("TYPE", "new"),
    ("STRLEN", "new"),
    ("CONFIG", "GET", "hll-sparse-max-bytes"),
    ("CONFIG", "SET", "hll-sparse-max-bytes", "-1"),
    ("CONFIG", "SET", "hll-sparse-max-bytes", "1kb"),
    ("CONFIG", "GET", "hll-sparse-max-bytes"),
    ("CONFIG", "SET", "hll-sparse-max-bytes", "3000"),
    ("COMMAND", "INFO", "pfadd", "pfcount", "pfmerge", "pfdebug", "pfselftest"),
    ("COMMAND", "DOCS", "pfadd", "pfcount", "pfmerge", "pfdebug", "pfselftest"),
    ("COMMAND", "GETKEYS", "PFMERGE", "d", "s1", "s2"),
    ("COMMAND", "GETKEYS", "PFCOUNT", "a", "b"),
    ("COMMAND", "GETKEYS", "PFDEBUG", "getreg", "k"),
]


@pytest.mark.parametrize("protocol", [2, 3])
def test_commands_and_errors_match_redis(keywarden, reference_redis, protocol):
    kw, ref = both(keywarden, reference_redis)
    if protocol == 3:
        kw.execute("HELLO", "3")
        ref.execute("HELLO", "3")
    for command in SETUP:
        same(kw, ref, *command)
    for command in COMMANDS:
        if command[0] == "COMMAND" and command[1] == "DOCS":
            # Compared as parsed structures: map order inside DOCS is Redis's dict order.
            a = kw.execute(*command)
            b = ref.execute(*command)
            assert sorted(map(repr, a)) == sorted(map(repr, b)) if isinstance(a, list) else \
                {k: repr(v) for k, v in a.items()} == {k: repr(v) for k, v in b.items()}
            count_case("COMMAND DOCS")
            continue
        same(kw, ref, *command)


def test_pfselftest(keywarden, reference_redis):
    kw, ref = both(keywarden, reference_redis)
    same(kw, ref, "PFSELFTEST")


# --- Random inputs: equal counts, equal bytes --------------------------------------------------

SIZES = [1, 2, 5, 10, 50, 100, 300, 1000, 2000, 3000, 5000, 20000, 100000, 200000]


@pytest.mark.parametrize("size", SIZES)
def test_random_adds_leave_redis_bytes(keywarden, reference_redis, size):
    rng = random.Random(size * 7919)
    items = elements(rng, size)
    batches = []
    i = 0
    while i < len(items):
        # Small batches while sparse (the edit order shapes the bytes), larger ones after.
        step = rng.randrange(1, 4) if i < 3000 else rng.randrange(500, 2000)
        batches.append(items[i:i + step])
        i += step
    replies = []
    for client in (keywarden.client(), reference_redis.client()):
        pipe = client.pipeline(transaction=False)
        for batch in batches:
            pipe.pfadd("h", *batch)
        pipe.pfcount("h")
        pipe.get("h")
        pipe.execute_command("PFDEBUG", "ENCODING", "h")
        pipe.pfcount("h")
        pipe.get("h")
        replies.append(pipe.execute())
    kw_replies, ref_replies = replies
    assert kw_replies == ref_replies
    count_case("PFADD", len(kw_replies) - 5)
    count_case("PFCOUNT", 2)
    count_case("PFDEBUG")
    count = kw_replies[-2]
    assert abs(count - size) <= max(3, 0.05 * size)


def test_sparse_max_bytes_settings(keywarden, reference_redis):
    kw, ref = both(keywarden, reference_redis)
    rng = random.Random(11)
    items = elements(rng, 1500)
    for limit in ("0", "40", "100", "1000", "5000", "20000"):
        same(kw, ref, "CONFIG", "SET", "hll-sparse-max-bytes", limit)
        same(kw, ref, "DEL", f"h{limit}")
        for i in range(0, len(items), 7):
            same(kw, ref, "PFADD", f"h{limit}", *items[i:i + 7])
        same(kw, ref, "PFDEBUG", "ENCODING", f"h{limit}")
        same(kw, ref, "GET", f"h{limit}")
        same(kw, ref, "PFCOUNT", f"h{limit}")
    same(kw, ref, "CONFIG", "SET", "hll-sparse-max-bytes", "3000")


def test_merge_mixes_of_sparse_and_dense(keywarden, reference_redis):
    kw, ref = both(keywarden, reference_redis)
    rng = random.Random(5)
    sizes = {"s1": 10, "s2": 200, "s3": 1500, "d1": 4000, "d2": 30000}
    for key, n in sizes.items():
        items = elements(rng, n)
        for i in range(0, n, 500):
            same(kw, ref, "PFADD", key, *items[i:i + 500])
    same(kw, ref, "PFDEBUG", "TODENSE", "s1")  # a small dense HLL, too
    combos = [("s2", "s3"), ("s2",), ("s3", "s2", "missing"), ("d1", "s2"), ("s3", "d2"),
              ("d1", "d2"), ("s1", "s2", "s3"), ("missing",)]
    for n, sources in enumerate(combos):
        for dest in (f"new{n}", "s2copy"):
            if dest == "s2copy":
                same(kw, ref, "PFMERGE", "s2copy", "s2")
            same(kw, ref, "PFMERGE", dest, *sources)
            same(kw, ref, "PFDEBUG", "ENCODING", dest)
            same(kw, ref, "GET", dest)
            same(kw, ref, "PFCOUNT", dest)
            same(kw, ref, "GET", dest)
        same(kw, ref, "PFCOUNT", *sources)
    same(kw, ref, "PFCOUNT", "s1", "s2", "s3", "d1", "d2")


def test_values_cross_between_servers(keywarden, reference_redis):
    """A value made by either server counts the same on the other, through GET/SET and through
    DUMP/RESTORE, both ways, and keeps being edited identically there."""
    kw, ref = both(keywarden, reference_redis)
    rng = random.Random(17)
    for n in (3, 400, 2500, 8000, 60000):
        items = elements(rng, n)
        for i in range(0, n, 1000):
            same(kw, ref, "PFADD", f"h{n}", *items[i:i + 1000])
        for source, target in ((kw, ref), (ref, kw)):
            value = source.execute("GET", f"h{n}")
            payload = source.execute("DUMP", f"h{n}")
            target.execute("SET", f"copy{n}", value)
            target.execute("RESTORE", f"dump{n}", "0", payload)
            expected = source.execute("PFCOUNT", f"h{n}")
            assert target.execute("PFCOUNT", f"copy{n}") == expected
            assert target.execute("PFCOUNT", f"dump{n}") == expected
            assert target.execute("GET", f"dump{n}") == source.execute("GET", f"h{n}")
            count_case("DUMP/RESTORE", 2)
        # The copies on both sides now hold the same bytes: further edits stay equal.
        more = elements(rng, 50)
        same(kw, ref, "PFADD", f"dump{n}", *more)
        same(kw, ref, "GET", f"dump{n}")
        same(kw, ref, "PFCOUNT", f"dump{n}", f"copy{n}")


# --- Corrupt values ---------------------------------------------------------------------------


def header(encoding: int, cache: bytes = b"\x00" * 8) -> bytes:
    return b"HYLL" + bytes([encoding]) + b"\x00\x00\x00" + cache


def xzero(n: int) -> bytes:
    return bytes([0x40 | ((n - 1) >> 8), (n - 1) & 0xff])


def val(value: int, length: int) -> bytes:
    return bytes([0x80 | ((value - 1) << 2) | (length - 1)])


def zero(n: int) -> bytes:
    return bytes([n - 1])


CORRUPT = [
    header(1),                                            # no opcodes at all
    header(1) + xzero(16000),                             # too few registers
    header(1) + xzero(16384) + zero(1),                   # too many
    header(1) + xzero(16384) + val(3, 2),                 # VAL past the end
    header(1) + xzero(16383) + val(5, 4),                 # VAL overflowing the last register
    header(1) + xzero(16384)[:1],                         # truncated XZERO (reads the NUL)
    header(1) + xzero(8192) + xzero(8192)[:1],
    header(1) + xzero(100) + val(32, 4) + xzero(16280),   # one register short
    header(1) + b"\xff" * 40,                             # all VAL 32x4: too many
    header(1) + xzero(16384) * 3,
    header(1, b"\x05" + b"\x00" * 7) + xzero(16000),      # valid cache, corrupt body
]


def corrupt_values(rng: random.Random) -> list[bytes]:
    values = list(CORRUPT)
    for _ in range(60):
        length = rng.randrange(0, 600)
        values.append(header(1, bytes([0, 0, 0, 0, 0, 0, 0, rng.choice([0, 0x80])]))
                      + rng.randbytes(length))
    # Mutations of a valid sparse value: flipped, dropped and inserted bytes.
    base = bytearray(header(1) + xzero(1000) + val(3, 1) + zero(20) + val(2, 3) + xzero(15360))
    for _ in range(40):
        value = bytearray(base)
        what = rng.randrange(3)
        at = rng.randrange(16, len(value))
        if what == 0:
            value[at] ^= 1 << rng.randrange(8)
        elif what == 1:
            del value[at]
        else:
            value.insert(at, rng.randrange(256))
        values.append(bytes(value))
    return values


def test_corrupt_values_get_redis_errors(keywarden, reference_redis):
    kw, ref = both(keywarden, reference_redis)
    rng = random.Random(2024)
    same(kw, ref, "PFADD", "good", "a", "b", "c")
    for n, value in enumerate(corrupt_values(rng)):
        for command in (("PFCOUNT", "k"), ("PFCOUNT", "k", "good"), ("PFMERGE", "dst", "k"),
                        ("PFMERGE", "k", "good"), ("PFDEBUG", "DECODE", "k"),
                        ("PFDEBUG", "GETREG", "k"), ("PFDEBUG", "TODENSE", "k"),
                        ("PFADD", "k", *elements(rng, 5)), ("PFADD", "k", *elements(rng, 40))):
            same(kw, ref, "SET", "k", value)
            same(kw, ref, *command)
            assert kw.execute("GET", "k") == ref.execute("GET", "k"), (value, command)
            count_case("GET")
            same(kw, ref, "PFDEBUG", "ENCODING", "k")
    # A dense value is only its size and header: any register bytes are valid.
    for _ in range(10):
        value = header(0) + rng.randbytes(12288)
        same(kw, ref, "SET", "d", value)
        same(kw, ref, "PFCOUNT", "d")
        same(kw, ref, "PFADD", "d", *elements(rng, 20))
        same(kw, ref, "GET", "d")
        same(kw, ref, "PFMERGE", "d2", "d", "good")
        same(kw, ref, "GET", "d2")
    assert keywarden.alive() and reference_redis.alive()


# --- Keyspace events and propagation ----------------------------------------------------------


def test_keyspace_events_match_redis(keywarden, reference_redis):
    streams = []
    for server in (keywarden, reference_redis):
        admin = server.client()
        admin.config_set("notify-keyspace-events", "KEA")
        sub = server.client().pubsub()
        sub.psubscribe("__key*__:*")
        sub.get_message(timeout=5)
        c = server.raw()
        for command in (("PFADD", "h", "a"), ("PFADD", "h", "a"), ("PFADD", "h2"),
                        ("PFCOUNT", "h"), ("PFMERGE", "m", "h", "h2"),
                        ("PFDEBUG", "TODENSE", "h"), ("PFADD", "h", "b", "c"), ("DEL", "h")):
            c.execute(*command)
        events = []
        while True:
            message = sub.get_message(timeout=1)
            if message is None:
                break
            events.append((message["channel"], message["data"]))
        streams.append(events)
        admin.config_set("notify-keyspace-events", "")
        sub.close()
    assert streams[0] == streams[1]
    assert (b"__keyevent@0__:pfadd", b"m") in streams[0]
    count_case("keyspace events", len(streams[0]))


def test_pfcount_cache_refresh_is_a_write(keywarden, reference_redis):
    """PFCOUNT of one key with a stale cache writes the value (dirty++), a cached one does not;
    PFDEBUG TODENSE counts as a change; INFO's rdb_changes_since_last_save shows both."""
    results = []
    for server in (keywarden, reference_redis):
        c = server.client()
        c.config_resetstat()
        steps = []
        base = c.info("persistence")["rdb_changes_since_last_save"]
        for command in (("PFADD", "h", "a", "b"), ("PFCOUNT", "h"), ("PFCOUNT", "h"),
                        ("PFCOUNT", "h", "h"), ("PFDEBUG", "TODENSE", "h"),
                        ("PFDEBUG", "TODENSE", "h"), ("PFMERGE", "h", "h")):
            c.execute_command(*command)
            steps.append(c.info("persistence")["rdb_changes_since_last_save"] - base)
        results.append(steps)
    assert results[0] == results[1]


@pytest.mark.parametrize("script", [
    "return redis.call('pfcount', KEYS[1])",
    "return redis.call('pfcount', KEYS[1], KEYS[1])",
    "return redis.call('pfadd', KEYS[1], 'x')",
    "return redis.call('pfmerge', KEYS[1], KEYS[1])",
])
def test_read_only_scripts_refuse_pfcount_as_redis(keywarden, reference_redis, script):
    kw, ref = both(keywarden, reference_redis)
    same(kw, ref, "PFADD", "h", "a")
    for command in ("EVAL_RO", "EVAL"):
        a = kw.execute(command, script, "1", "h")
        b = ref.execute(command, script, "1", "h")
        # The error names the script's SHA1, the same on both.
        assert a == b, (command, script, a, b)
        count_case(command)


def test_pfadd_dirty_counts_match(keywarden, reference_redis):
    results = []
    for server in (keywarden, reference_redis):
        c = server.client()
        base = c.info("persistence")["rdb_changes_since_last_save"]
        c.pfadd("fresh", *[f"e{i}" for i in range(100)])
        results.append(c.info("persistence")["rdb_changes_since_last_save"] - base)
    assert results[0] == results[1]


def test_cached_cardinality_is_trusted(keywarden, reference_redis):
    """A value whose cache is valid answers the cache, whatever the registers say, as Redis."""
    kw, ref = both(keywarden, reference_redis)
    value = header(1, struct.pack("<Q", 4242)) + xzero(16384)
    same(kw, ref, "SET", "h", value)
    same(kw, ref, "PFCOUNT", "h")
    same(kw, ref, "PFCOUNT", "h", "h")
