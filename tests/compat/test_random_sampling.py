"""Random sampling is uniform: chi-square tests of HRANDFIELD, ZRANDMEMBER, SRANDMEMBER and
RANDOMKEY, on keywarden and on redis-server side by side.

Each case builds the same collection on both servers (small ones in their compact encoding,
1000-member ones in a hashtable or skiplist), draws a fixed number of members (a negative count:
independent draws; a positive count: distinct members per call, many calls) and counts how
often each member came back. Under uniform sampling every member's count is close to the same
expectation, and Pearson's statistic follows a chi-square law with (members - 1) degrees of
freedom; a sampler that favours some members (say, by picking a random bucket and then a random
entry of its chain) gives a statistic far in the tail. A case fails only at p < 1e-6, with a
fixed number of draws, so that a uniform sampler practically never fails it. (Distinct draws
have less variance than independent ones, which only makes the test more lenient.)

The statistics of both servers are printed (pytest -s); the assertion is on keywarden's.
"""

from __future__ import annotations

import math
from collections import Counter

import pytest

P_REJECT = 1e-6


def chi_square_p_value(statistic: float, df: int) -> float:
    """Upper tail of the chi-square law, by the Wilson-Hilferty cube-root normal approximation
    (accurate to a few percent of p far into the tail for the degrees of freedom used here)."""
    z = ((statistic / df) ** (1 / 3) - (1 - 2 / (9 * df))) / math.sqrt(2 / (9 * df))
    return 0.5 * math.erfc(z / math.sqrt(2))


def chi_square(counts: Counter, population: list[bytes]) -> tuple[float, float]:
    assert set(counts) <= set(population), set(counts) - set(population)
    total = sum(counts.values())
    expected = total / len(population)
    statistic = sum((counts.get(m, 0) - expected) ** 2 / expected for m in population)
    return statistic, chi_square_p_value(statistic, len(population) - 1)


def build(conn, kind: str, size: int) -> tuple[str, list[bytes]]:
    """Creates the collection and returns (key, its members as bytes)."""
    if kind == "hash":
        members = [f"field:{i}".encode() for i in range(size)]
        for start in range(0, size, 500):
            args = []
            for m in members[start:start + 500]:
                args += [m, b"v"]
            conn.execute("HSET", "coll", *args)
    elif kind == "zset":
        members = [f"member:{i}".encode() for i in range(size)]
        for start in range(0, size, 500):
            args = []
            for i, m in enumerate(members[start:start + 500], start):
                args += [str(i), m]
            conn.execute("ZADD", "coll", *args)
    elif kind in ("set", "intset"):
        members = ([str(i * 7).encode() for i in range(size)] if kind == "intset" else
                   [f"member:{i}".encode() for i in range(size)])
        for start in range(0, size, 500):
            conn.execute("SADD", "coll", *members[start:start + 500])
    else:
        raise ValueError(kind)
    return "coll", members


COMMANDS = {"hash": "HRANDFIELD", "zset": "ZRANDMEMBER", "set": "SRANDMEMBER",
            "intset": "SRANDMEMBER"}


def draw(conn, command: str, count: int, calls: int) -> Counter:
    counts: Counter = Counter()
    batch = 100
    for start in range(0, calls, batch):
        n = min(batch, calls - start)
        for _ in range(n):
            conn.send_command(command, "coll", count)
        for reply in conn.read_replies(n):
            assert isinstance(reply, list) and len(reply) == abs(count), reply[:5]
            if count > 0:
                assert len(set(reply)) == count, "distinct members promised"
            counts.update(reply)
    return counts


# (kind, size, count per call, calls): about 100 draws per member in each case.
CASES = [
    ("hash", 1000, -100_000, 1), ("hash", 1000, 10, 10_000), ("hash", 1000, 600, 167),
    ("hash", 100, -10_000, 1), ("hash", 100, 5, 2000), ("hash", 100, 60, 167),
    ("zset", 1000, -100_000, 1), ("zset", 1000, 10, 10_000), ("zset", 1000, 600, 167),
    ("zset", 100, -10_000, 1), ("zset", 100, 5, 2000), ("zset", 100, 60, 167),
    ("set", 1000, -100_000, 1), ("set", 1000, 10, 10_000), ("set", 1000, 600, 167),
    ("set", 100, -10_000, 1), ("set", 100, 5, 2000), ("set", 100, 60, 167),
    ("intset", 1000, -100_000, 1), ("intset", 1000, 10, 10_000),
    ("intset", 100, -10_000, 1), ("intset", 100, 5, 2000), ("intset", 100, 60, 167),
]


@pytest.mark.parametrize("kind,size,count,calls", CASES,
                         ids=[f"{k}-{s}-count{c}" for k, s, c, _ in CASES])
def test_random_members_are_uniform(keywarden, reference_redis, kind, size, count, calls):
    results = {}
    for server in (keywarden, reference_redis):
        with server.raw() as conn:
            key, members = build(conn, kind, size)
            encoding = conn.execute("OBJECT", "ENCODING", key).decode()
            counts = draw(conn, COMMANDS[kind], count, calls)
            results[server.name] = (encoding, *chi_square(counts, members))
    for name, (encoding, statistic, p) in results.items():
        print(f"{COMMANDS[kind]} {kind}({encoding}) n={size} count={count} x{calls}: {name} "
              f"chi2={statistic:.1f} df={size - 1} p={p:.3g}")
    _, statistic, p = results[keywarden.name]
    assert p >= P_REJECT, f"biased: chi2={statistic:.1f} with {size - 1} df, p={p:.3g}"


@pytest.mark.parametrize("keys", [1000, 100])
def test_randomkey_is_uniform(keywarden, reference_redis, keys):
    names = [f"key:{i}".encode() for i in range(keys)]
    draws = keys * 100
    results = {}
    for server in (keywarden, reference_redis):
        with server.raw() as conn:
            conn.execute("MSET", *[x for name in names for x in (name, b"v")])
            counts: Counter = Counter()
            for start in range(0, draws, 1000):
                for _ in range(1000):
                    conn.send_command("RANDOMKEY")
                counts.update(conn.read_replies(1000))
            results[server.name] = chi_square(counts, names)
    for name, (statistic, p) in results.items():
        print(f"RANDOMKEY keys={keys} x{draws}: {name} chi2={statistic:.1f} df={keys - 1} "
              f"p={p:.3g}")
    statistic, p = results[keywarden.name]
    assert p >= P_REJECT, f"biased: chi2={statistic:.1f} with {keys - 1} df, p={p:.3g}"
