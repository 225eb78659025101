"""OBJECT ENCODING against redis-server 7.0: random grow/shrink/convert sequences.

Tools and tests read encodings (OBJECT ENCODING, DEBUG OBJECT) to check that small values stay
compact, so keywarden reports what Redis 7.0 reports for the same data under the same
*-max-listpack-* / set-max-intset-entries settings, even where its own buffers differ:

  strings  int (a canonical 64-bit integer), embstr (up to 44 bytes, as SET stores it), raw
           (longer, or modified in place: APPEND, SETRANGE)
  lists    quicklist, always (7.0 has no listpack lists: they came with 7.2)
  sets     intset while every member is an integer and there are at most
           set-max-intset-entries of them, else hashtable (7.0 has no listpack sets either)
  hashes   listpack until a field or value is longer than hash-max-listpack-value or there are
           more than hash-max-listpack-entries fields, then hashtable
  zsets    listpack / skiplist by zset-max-listpack-entries/-value; the STORE commands build
           their destination in whichever fits

Each seed runs a random sequence of writes over a few keys of every type, with CONFIG SET of
the limits (positive and negative list-max-listpack-size included) mixed in, on both servers.
Every reply is compared byte for byte (only commands with deterministic replies are generated),
and after every step OBJECT ENCODING of every key the step touched.

Environment: KW_ENCODING_SEEDS (default 12), KW_ENCODING_STEPS (default 400),
KW_ENCODING_SEED (only these seeds, comma separated, to reproduce a failure).
"""

from __future__ import annotations

import os
import random

import pytest

from conftest import encode_command

STRINGS = ["s1", "s2", "s3"]
LISTS = ["l1", "l2"]
SETS = ["S1", "S2", "S3"]
HASHES = ["h1", "h2"]
ZSETS = ["z1", "z2", "z3"]
ALL_KEYS = STRINGS + LISTS + SETS + HASHES + ZSETS

LIMITS = {
    "hash-max-listpack-entries": ["0", "1", "2", "3", "5", "8", "128"],
    "hash-max-ziplist-entries": ["1", "4", "128"],
    "hash-max-listpack-value": ["0", "1", "3", "8", "20", "64"],
    "zset-max-listpack-entries": ["0", "1", "2", "3", "5", "8", "128"],
    "zset-max-ziplist-value": ["2", "8", "64"],
    "zset-max-listpack-value": ["0", "1", "3", "8", "20", "64"],
    "set-max-intset-entries": ["0", "1", "2", "3", "5", "512"],
    "list-max-listpack-size": ["-5", "-4", "-3", "-2", "-1", "1", "2", "3", "8", "128"],
    "list-max-ziplist-size": ["-2", "4"],
}


def seeds() -> list[int]:
    if os.environ.get("KW_ENCODING_SEED"):
        return [int(s) for s in os.environ["KW_ENCODING_SEED"].split(",") if s.strip()]
    return list(range(1, 1 + int(os.environ.get("KW_ENCODING_SEEDS", 12))))


class Generator:
    """Random commands whose replies are the same on any correct server."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def integer(self) -> str:
        r = self.rng
        return r.choice(["0", "1", "-1", "7", "42", "9999", "10000", "-10000", "123456789",
                         "-9223372036854775808", "9223372036854775807", str(r.randint(-99, 99)),
                         str(r.randint(-10**12, 10**12))])

    def not_quite_integer(self) -> str:
        return self.rng.choice(["007", "+1", "-0", " 1", "1 ", "1.5", "0x10", "1e3",
                                "9223372036854775808", "-9223372036854775809", ""])

    def text(self) -> str:
        r = self.rng
        length = r.choice([1, 2, 3, 5, 8, 10, 19, 20, 21, 43, 44, 45, 63, 64, 65, 100])
        return r.choice("abcdefgh") * length

    def value(self) -> str:
        pick = self.rng.random()
        if pick < 0.4:
            return self.integer()
        if pick < 0.5:
            return self.not_quite_integer()
        return self.text()

    def member(self) -> str:
        """Set and zset members: many integers (intsets), some text, few long ones."""
        r = self.rng
        pick = r.random()
        if pick < 0.55:
            return str(r.randint(-20, 40))
        if pick < 0.6:
            return self.integer()
        if pick < 0.65:
            return self.not_quite_integer()
        if pick < 0.9:
            return r.choice("mnop") + str(r.randint(0, 30))
        return self.text()

    def field(self) -> str:
        r = self.rng
        return (r.choice("fgh") + str(r.randint(0, 12)) if r.random() < 0.85 else self.text())

    def score(self) -> str:
        return self.rng.choice(["0", "1", "-1", "2.5", "10", "-inf", "+inf", "3", "7"])

    def some(self, make, low=1, high=4):
        return [make() for _ in range(self.rng.randint(low, high))]

    # -- one step ------------------------------------------------------------------------------
    def step(self) -> tuple[list[str], list[str]]:
        """(command, keys whose encoding to compare afterwards)."""
        r = self.rng
        family = r.choices(["config", "string", "list", "set", "hash", "zset", "del", "reload",
                            "restore"],
                           weights=[6, 14, 14, 20, 20, 20, 3, 1, 2])[0]
        return getattr(self, "step_" + family)()

    def step_reload(self):
        # A reload rebuilds every value under the current limits: Redis 7.0 converts back what
        # fits (a hashtable hash or set that shrank, a skiplist that fits a listpack again).
        return ["DEBUG", "RELOAD"], ALL_KEYS

    def step_restore(self):
        # Marker: DUMP on each server, RESTORE its own payload (see run_sequence).
        key = self.rng.choice(ALL_KEYS)
        return ["RESTORE-COPY", key, key + "r"], [key + "r"]

    def step_config(self):
        name = self.rng.choice(list(LIMITS))
        return ["CONFIG", "SET", name, self.rng.choice(LIMITS[name])], ALL_KEYS

    def step_del(self):
        key = self.rng.choice(ALL_KEYS)
        return ["DEL", key], [key]

    def step_string(self):
        r = self.rng
        k = r.choice(STRINGS)
        v = self.value()
        op = r.choice(["set", "set", "setnx", "getset", "setget", "append", "append", "setrange",
                       "incr", "incrby", "decrby", "incrbyfloat", "mset", "getdel",
                       "copy", "setex"])
        if op == "set":
            return ["SET", k, v], [k]
        if op == "setnx":
            return ["SETNX", k, v], [k]
        if op == "getset":
            return ["GETSET", k, v], [k]
        if op == "setget":
            return ["SET", k, v, "GET"], [k]
        if op == "append":
            return ["APPEND", k, r.choice(["1", "x", "23", self.text()])], [k]
        if op == "setrange":
            return ["SETRANGE", k, str(r.choice([0, 1, 3, 10, 44, 50])), r.choice(["z", "9",
                                                                                   "abc"])], [k]
        if op == "incr":
            return ["INCR", k], [k]
        if op == "incrby":
            return ["INCRBY", k, str(r.randint(-100, 100))], [k]
        if op == "decrby":
            return ["DECRBY", k, str(r.randint(-5, 5))], [k]
        if op == "incrbyfloat":
            return ["INCRBYFLOAT", k, r.choice(["1", "0.5", "-2", "1e3", "3.0e-2"])], [k]
        if op == "mset":
            other = r.choice(STRINGS)
            return ["MSET", k, v, other, self.value()], [k, other]
        if op == "getdel":
            return ["GETDEL", k], [k]
        if op == "copy":
            other = r.choice(STRINGS)
            return ["COPY", k, other, "REPLACE"], [other]
        return ["SETEX", k, "1000", v], [k]

    def step_list(self):
        r = self.rng
        k = r.choice(LISTS)
        op = r.choice(["rpush", "rpush", "lpush", "lpop", "rpop", "linsert", "lset", "lrem",
                       "ltrim", "lmove"])
        if op in ("rpush", "lpush"):
            return [op.upper(), k, *self.some(self.value, 1, 6)], [k]
        if op in ("lpop", "rpop"):
            return [op.upper(), k, str(r.randint(1, 4))], [k]
        if op == "linsert":
            return ["LINSERT", k, r.choice(["BEFORE", "AFTER"]), self.value(), self.value()], [k]
        if op == "lset":
            return ["LSET", k, str(r.randint(-3, 3)), self.value()], [k]
        if op == "lrem":
            return ["LREM", k, str(r.randint(-2, 2)), self.value()], [k]
        if op == "ltrim":
            return ["LTRIM", k, str(r.randint(0, 3)), str(r.randint(-3, 20))], [k]
        other = r.choice(LISTS)
        return ["LMOVE", k, other, r.choice(["LEFT", "RIGHT"]), r.choice(["LEFT", "RIGHT"])], \
            [k, other]

    def step_set(self):
        r = self.rng
        k = r.choice(SETS)
        op = r.choice(["sadd", "sadd", "sadd", "srem", "smove", "sinterstore", "sunionstore",
                       "sdiffstore", "spopall", "grow"])
        if op == "sadd":
            return ["SADD", k, *self.some(self.member, 1, 5)], [k]
        if op == "grow":
            start = r.randint(0, 600)
            return ["SADD", k, *[str(i) for i in range(start, start + r.randint(1, 40))]], [k]
        if op == "srem":
            return ["SREM", k, *self.some(self.member, 1, 6)], [k]
        if op == "smove":
            other = r.choice(SETS)
            return ["SMOVE", k, other, self.member()], [k, other]
        if op == "spopall":
            return ["SPOP", k, "100000"], [k]
        dest = r.choice(SETS)
        return [op.upper(), dest, *r.sample(SETS, r.randint(1, 3))], [dest]

    def step_hash(self):
        r = self.rng
        k = r.choice(HASHES)
        op = r.choice(["hset", "hset", "hset", "hsetnx", "hmset", "hincrby", "hincrbyfloat",
                       "hdel", "grow", "copy"])
        if op == "hset":
            pairs = []
            for _ in range(r.randint(1, 3)):
                pairs += [self.field(), self.value()]
            return ["HSET", k, *pairs], [k]
        if op == "hmset":
            return ["HMSET", k, self.field(), self.value()], [k]
        if op == "hsetnx":
            return ["HSETNX", k, self.field(), self.value()], [k]
        if op == "hincrby":
            return ["HINCRBY", k, self.field(), str(r.randint(-10**9, 10**9))], [k]
        if op == "hincrbyfloat":
            return ["HINCRBYFLOAT", k, self.field(), r.choice(["1.5", "1e10", "-3"])], [k]
        if op == "hdel":
            return ["HDEL", k, *self.some(self.field, 1, 4)], [k]
        if op == "grow":
            pairs = []
            for i in range(r.randint(1, 30)):
                pairs += [f"g{i}", "v"]
            return ["HSET", k, *pairs], [k]
        other = r.choice(HASHES)
        return ["COPY", k, other, "REPLACE"], [other]

    def step_zset(self):
        r = self.rng
        k = r.choice(ZSETS)
        op = r.choice(["zadd", "zadd", "zadd", "zaddopt", "zincrby", "zrem", "zremrangebyrank",
                       "zpopmin", "zunionstore", "zinterstore", "zdiffstore", "zrangestore",
                       "grow", "zunionstore"])
        if op == "zadd":
            pairs = []
            for _ in range(r.randint(1, 4)):
                pairs += [self.score(), self.member()]
            return ["ZADD", k, *pairs], [k]
        if op == "zaddopt":
            option = r.choice(["NX", "XX", "GT", "LT", "CH"])
            return ["ZADD", k, option, self.score(), self.member()], [k]
        if op == "zincrby":
            return ["ZINCRBY", k, r.choice(["1", "2.5", "-1"]), self.member()], [k]
        if op == "zrem":
            return ["ZREM", k, *self.some(self.member, 1, 5)], [k]
        if op == "zremrangebyrank":
            return ["ZREMRANGEBYRANK", k, str(r.randint(0, 2)), str(r.randint(-3, 5))], [k]
        if op == "zpopmin":
            return ["ZPOPMIN", k, str(r.randint(1, 4))], [k]
        if op == "grow":
            pairs = []
            for i in range(r.randint(1, 40)):
                pairs += [str(i), f"g{i}"]
            return ["ZADD", k, *pairs], [k]
        dest = r.choice(ZSETS)
        if op == "zrangestore":
            return ["ZRANGESTORE", dest, r.choice(ZSETS), str(r.randint(0, 3)),
                    str(r.randint(-2, 40))], [dest]
        sources = r.sample(ZSETS, r.randint(1, 3))
        return [op.upper(), dest, str(len(sources)), *sources], [dest]


def run_sequence(kw, ref, seed: int, steps: int) -> None:
    rng = random.Random(seed)
    gen = Generator(rng)
    history: list[str] = []

    def both(args):
        request = encode_command(*args)
        kw.send(request)
        ref.send(request)
        (kv, k), (rv, r) = kw.read_reply_with_raw(), ref.read_reply_with_raw()
        if args[0] == "SPOP" and isinstance(kv, list) and isinstance(rv, list):
            # The whole set, in each server's own order.
            return sorted(kv), sorted(rv)
        return k, r

    def where() -> str:
        return (f"seed {seed}; last commands:\n  " + "\n  ".join(history[-15:]) +
                f"\nreproduce: KW_ENCODING_SEED={seed}")

    for _ in range(steps):
        command, keys = gen.step()
        history.append(" ".join(repr(a) if a == "" or " " in a else a for a in command))
        if command[0] == "RESTORE-COPY":
            # Each server restores its own DUMP (the payloads need not be equal byte for byte).
            replies = []
            for conn in (kw, ref):
                payload = conn.execute("DUMP", command[1])
                replies.append(conn.execute_raw("DEL", command[2]) if payload is None else
                               conn.execute_raw("RESTORE", command[2], "0", payload, "REPLACE"))
            k, r = replies
        else:
            k, r = both(command)
        assert k == r, f"reply differs: keywarden {k!r}, redis {r!r}; {where()}"
        for key in keys:
            k, r = both(["OBJECT", "ENCODING", key])
            assert k == r, (f"OBJECT ENCODING {key}: keywarden {k!r}, redis {r!r}; "
                            f"{where()}")


@pytest.mark.parametrize("seed", seeds())
def test_object_encoding_random_sequence(keywarden, reference_redis, seed):
    steps = int(os.environ.get("KW_ENCODING_STEPS", 400))
    with keywarden.raw() as kw, reference_redis.raw() as ref:
        try:
            run_sequence(kw, ref, seed, steps)
        finally:
            # The limits are per module server: back to the defaults for the next test.
            for conn in (kw, ref):
                conn.execute("CONFIG", "SET", "hash-max-listpack-entries", "128",
                             "hash-max-listpack-value", "64", "zset-max-listpack-entries",
                             "128", "zset-max-listpack-value", "64",
                             "set-max-intset-entries", "512", "list-max-listpack-size", "-2")
