"""Seeded random command sequences for differential testing (keywarden vs redis-server).

A sequence is a list of ``Command`` (arguments + how to compare the two replies). It depends
only on the seed, the length, the enabled families and ``now_s`` (the wall clock in seconds at
generation, from which absolute deadlines are derived), so a failing seed reproduces.

The generator is a table of templates (``TEMPLATES``): a name, a family, a weight, a builder
that draws the arguments from a ``Context``, and a compare mode. To cover a new family
(hashes, lists, ...) add rows; nothing else changes. The ``Context`` draws keys from a small
key space so that commands interact, and mixes valid and invalid arguments (wrong arity,
non-integers, overflows, bad options, conflicting options).

Time is drawn so that the result never depends on *when* each server executes a command:
  * relative TTLs are at least 1000 s and pairwise distinct by at least 100 s, so that no key
    expires during a run and NX/XX/GT/LT comparisons between two relative deadlines never
    hinge on a millisecond of difference between the two servers;
  * absolute future deadlines sit 50 s off the relative grid for the same reason;
  * past deadlines are far in the past. Most delete the key at once, but SET ... EXAT/PXAT
    <past> leaves an already expired key that DBSIZE may count until active expiry (on its
    own clock) reclaims it: hence the dbsize compare mode below;
  * no small positive relative TTL is ever generated, not even as an "invalid" value.

Compare modes (see test_differential.py): exact (bytes), ttl_s / ttl_ms (integers within a
tolerance when both are >= 0), unordered (array compared sorted), unordered_pairs (flat
field/value array or map compared as sorted pairs), randomkey (both nil or both a key that
exists), scan (a whole SCAN iteration compared as a set of keys), dbsize (every key name the
sequence has used is first touched with EXISTS on both servers, so that no logically expired
key is left for DBSIZE to count, then exact), random_members (SPOP/SRANDMEMBER: same reply type
and size, distinct members where promised, each one a member; different SPOPs are followed by
a resync of the key), encoding (exact: OBJECT ENCODING reports Redis 7.0's names, see
test_object_encoding.py).

Run ``python3 tests/compat/command_generator.py --seed 7 --count 40`` to print a sequence.
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass
from typing import Callable

LLONG_MAX = 2**63 - 1
LLONG_MIN = -(2**63)

KEYS = ["k1", "k2", "k10", "key", "K1", "x", "[a]", "a*b"]
DB_INDEXES = ["0", "1", "2"]
BAD_DB_INDEXES = ["16", "-1", "abc", "9999999999999999999"]
VALUES = ["", "v", "hello", "hello world", "0", "1", "-1", "12", "42", "007", "10.5", "1e3",
          "3.0", "-0", " 1", "+5", "9223372036854775807", "-9223372036854775808",
          "9223372036854775808", "abc\x00def", "x" * 44, "y" * 45, "z" * 100, "\u00e9t\u00e9",
          "ohmytext", "mynewtext", "12345678901234567890"]
BAD_INTEGERS = ["abc", "1.5", "", " 1", "1 ", "0x10", "1e3", "9223372036854775808",
                "-9223372036854775809", "99999999999999999999999"]
EDGE_INTEGERS = ["0", "-0", "+1", "01", str(LLONG_MAX), str(LLONG_MIN), str(2**31), "-1"]
FLOATS = ["1.5", "-0.5", "3", "1e3", "5.0e3", "0.1", "-0.1", "1e-5", "17.0000001", "1e308",
          "-1e308", "2.5e-3", "100", "-100.25", "1.7976931348623157e308"]
BAD_FLOATS = ["abc", "", "inf", "-inf", "nan", "1e400x", "1.5.5", " ", "0x"]
# Relative times that are not "large unique": all deterministic, none expires during a run.
ODD_RELATIVE_TIMES = ["0", "-1", "-100", str(LLONG_MAX), str(LLONG_MIN), str(2**62),
                      "9223372036854775", "-9223372036854775", "abc", "1.5", ""]
PATTERNS = ["*", "k?", "k*", "*1*", "K*", "[kx]*", "[^k]*", "[a-z]*", "k[0-9]", "k[!1]",
            "\\[a\\]", "a\\*b", "a*b", "[", "[a-", "\\", "?", "??", "*[", "k[1-]",
            "[]]", "[\\]]*", "*y*", "nomatch", "k[^0-9]*", "[a-z0-9]?"]
JUNK_TOKENS = ["junk", "0", "-1", ""]


@dataclass
class Command:
    args: list[str | bytes]
    compare: str = "exact"
    template: str = ""

    def encoded_args(self) -> list[bytes]:
        return [a.encode() if isinstance(a, str) else a for a in self.args]

    def __str__(self) -> str:
        return " ".join(repr(a) if (not a or any(c in a for c in " \"'\\\r\n\0")) else a
                        for a in (x if isinstance(x, str) else x.decode("latin-1")
                                  for x in self.args))


class Context:
    """Draws arguments; ``p_invalid`` is the chance that a drawn argument is a bad one."""

    def __init__(self, rng: random.Random, now_s: int, p_invalid: float = 0.06):
        self.rng = rng
        self.now_s = now_s
        self.p_invalid = p_invalid
        # pairwise-distinct relative TTL slots (in units of 100 s) for the whole sequence
        self._slots = iter(rng.sample(range(10, 2_000_000), 20_000))

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def bad(self) -> bool:
        return self.rng.random() < self.p_invalid

    def pick(self, seq):
        return self.rng.choice(seq)

    # keys, values, numbers ----------------------------------------------------------------
    def key(self) -> str:
        return self.pick(KEYS)

    def keys(self, lo: int = 1, hi: int = 4) -> list[str]:
        return [self.key() for _ in range(self.rng.randint(lo, hi))]

    def value(self) -> str:
        if self.chance(0.3):
            return str(self.rng.randint(-50, 50))
        if self.chance(0.15):
            return "".join(self.pick("abcxyz") for _ in range(self.rng.randint(1, 12)))
        return self.pick(VALUES)

    def short_value(self) -> str:
        return self.pick(["a", "bc", "1", "22", "", "xyz", "-", "0", "hello", "é"])

    def integer(self, lo: int = -100, hi: int = 100) -> str:
        if self.bad():
            return self.pick(BAD_INTEGERS + EDGE_INTEGERS)
        return str(self.rng.randint(lo, hi))

    def float_(self) -> str:
        if self.bad():
            return self.pick(BAD_FLOATS)
        if self.chance(0.5):
            return self.pick(FLOATS)
        return repr(round(self.rng.uniform(-1000, 1000), self.rng.randint(0, 6)))

    def db(self) -> str:
        return self.pick(BAD_DB_INDEXES) if self.bad() else self.pick(DB_INDEXES)

    def pattern(self) -> str:
        return self.pick(PATTERNS)

    # time ----------------------------------------------------------------------------------
    def _slot(self) -> int:
        return next(self._slots)

    def ttl_s(self) -> str:
        """A relative TTL in seconds: unique and >= 1000 s, or an odd/invalid value."""
        if self.bad():
            return self.pick(ODD_RELATIVE_TIMES)
        return str(100 * self._slot())

    def ttl_ms(self) -> str:
        if self.bad():
            return self.pick(ODD_RELATIVE_TIMES)
        return str(100_000 * self._slot() + self.rng.randrange(1000))

    def future_s(self) -> str:
        return str(self.now_s + 100 * self.rng.randint(10, 2_000_000) + 50)

    def future_ms(self) -> str:
        return str((self.now_s + 100 * self.rng.randint(10, 2_000_000) + 50) * 1000
                   + self.rng.randrange(1000))

    def past_s(self) -> str:
        return self.pick(["1", "0", "-1", str(self.now_s - 100_000 - self.rng.randrange(10**6))])

    def past_ms(self) -> str:
        return self.pick(["1", "0", "-1",
                          str((self.now_s - 100_000 - self.rng.randrange(10**6)) * 1000)])

    def abs_s(self) -> str:
        if self.bad():
            return self.pick(ODD_RELATIVE_TIMES[3:])
        return self.future_s() if self.chance(0.75) else self.past_s()

    def abs_ms(self) -> str:
        if self.bad():
            return self.pick(ODD_RELATIVE_TIMES[3:])
        return self.future_ms() if self.chance(0.75) else self.past_ms()

    def opt(self, word: str) -> str:
        """An option keyword, sometimes in lower or mixed case (all accepted)."""
        r = self.rng.random()
        if r < 0.15:
            return word.lower()
        if r < 0.2:
            return "".join(c.lower() if self.chance(0.5) else c for c in word)
        return word


# --------------------------------------------------------------------------------------------
# builders: Context -> argument list (command name first)
# --------------------------------------------------------------------------------------------

def _expiry_option(ctx: Context, command: str) -> list[str]:
    """One of the SET / GETEX expiry options (PERSIST only for GETEX, KEEPTTL only for SET)."""
    choices = [["EX", ctx.ttl_s], ["PX", ctx.ttl_ms], ["EXAT", ctx.abs_s], ["PXAT", ctx.abs_ms]]
    choices.append(["KEEPTTL"] if command == "SET" else ["PERSIST"])
    word, *value = ctx.pick(choices)
    return [ctx.opt(word)] + [v() for v in value]


def build_set(ctx: Context) -> list[str]:
    groups: list[list[str]] = []
    if ctx.chance(0.3):
        groups.append([ctx.opt(ctx.pick(["NX", "XX"]))])
    if ctx.chance(0.2):
        groups.append([ctx.opt("GET")])
    if ctx.chance(0.55):
        groups.append(_expiry_option(ctx, "SET"))
    if ctx.chance(0.08):  # conflicting or repeated options
        groups.append(ctx.pick([[ctx.pick(["NX", "XX"])], _expiry_option(ctx, "SET"), ["GET"]]))
    if ctx.chance(0.03):
        groups.append([ctx.pick(["FOO", "EX", "PX", "EXAT"])])  # unknown / missing value
    ctx.rng.shuffle(groups)
    return ["SET", ctx.key(), ctx.value()] + [a for g in groups for a in g]


def build_getex(ctx: Context) -> list[str]:
    args = ["GETEX", ctx.key()]
    if ctx.chance(0.75):
        args += _expiry_option(ctx, "GETEX")
    if ctx.chance(0.06):
        args += _expiry_option(ctx, "GETEX")  # two options: syntax error
    return args


def build_expire(name: str, when: Callable[[Context], str]):
    def build(ctx: Context) -> list[str]:
        args = [name, ctx.key(), when(ctx)]
        r = ctx.rng.random()
        if r < 0.45:
            args.append(ctx.opt(ctx.pick(["NX", "XX", "GT", "LT"])))
        elif r < 0.52:
            args += [ctx.pick(["NX", "XX", "GT", "LT"]) for _ in range(2)]
        elif r < 0.54:
            args.append(ctx.pick(["FOO", "EX", "1"]))
        return args
    return build


def build_lcs(ctx: Context) -> list[str]:
    args = ["LCS", ctx.key(), ctx.key()]
    options = ctx.pick([[], ["LEN"], ["IDX"], ["IDX", "WITHMATCHLEN"],
                        ["IDX", "MINMATCHLEN", ctx.integer(0, 6)],
                        ["IDX", "MINMATCHLEN", ctx.integer(0, 4), "WITHMATCHLEN"],
                        ["LEN", "IDX"], ["MINMATCHLEN", "abc"], ["FOO"]])
    return args + [ctx.opt(o) if o.isupper() else o for o in options]


def build_copy(ctx: Context) -> list[str]:
    args = ["COPY", ctx.key(), ctx.key()]
    groups = []
    if ctx.chance(0.4):
        groups.append([ctx.opt("DB"), ctx.db()])
    if ctx.chance(0.4):
        groups.append([ctx.opt("REPLACE")])
    if ctx.chance(0.03):
        groups.append(["FOO"])
    ctx.rng.shuffle(groups)
    return args + [a for g in groups for a in g]


def build_scan(ctx: Context) -> list[str]:
    args = ["SCAN", "0" if not ctx.bad() else ctx.pick(["abc", "-1", "18446744073709551616"])]
    if ctx.chance(0.5):
        args += [ctx.opt("MATCH"), ctx.pattern()]
    if ctx.chance(0.4):
        args += [ctx.opt("COUNT"), ctx.pick(["1", "2", "10", "100", "0", "-1", "abc"])]
    if ctx.chance(0.3):
        args += [ctx.opt("TYPE"), ctx.pick(["string", "list", "hash", "set", "zset", "foo"])]
    return args


def build_setrange(ctx: Context) -> list[str]:
    # never an offset that would make a real 512 MB string: huge offsets always overflow
    if ctx.bad():
        offset = ctx.pick(["-1", "abc", str(512 * 1024 * 1024), str(2**40), str(LLONG_MAX)])
    else:
        offset = str(ctx.rng.randint(0, 60))
    return ["SETRANGE", ctx.key(), offset, ctx.short_value()]


def build_getrange(name: str):
    def build(ctx: Context) -> list[str]:
        def bound():
            if ctx.bad():
                return ctx.pick([str(LLONG_MAX), str(LLONG_MIN), "abc", "1.5"])
            return str(ctx.rng.randint(-12, 12))
        return [name, ctx.key(), bound(), bound()]
    return build


def build_object(ctx: Context) -> list[str]:
    sub = ctx.pick(["ENCODING"] * 8 + ["FREQ", "encoding", "NOSUCH"])
    return ["OBJECT", sub, ctx.key()]


FIELDS = ["a", "bc", "1", "22", "", "xyz", "-", "0", "hello", "\u00e9", "n", "f" * 65]
FIELD_PATTERNS = ["*", "a*", "?", "*c", "[ab]*", "h*", "x?z", "[^a]*", "nomatch"]


def field(ctx: Context) -> str:
    return ctx.pick(FIELDS)


def field_pairs(ctx: Context, lo: int = 1, hi: int = 3) -> list[str]:
    out: list[str] = []
    for _ in range(ctx.rng.randint(lo, hi)):
        out += [field(ctx), ctx.value()]
    return out


def build_hrandfield(ctx: Context) -> list[str]:
    """Counts whose reply is a deterministic set: the whole hash, nothing, or an error."""
    count = ctx.pick(["100", "20", "0", "0"] + (BAD_INTEGERS[:3] + [str(LLONG_MIN),
                     str(LLONG_MAX), str(2**62), str(-2**62)] if ctx.bad() else []))
    args = ["HRANDFIELD", ctx.key(), count]
    # -2**62 is out of range only WITHVALUES; alone it would ask for 2**62 random fields.
    if count == str(-2**62) or ctx.chance(0.5):
        args.append(ctx.opt("WITHVALUES") if not ctx.bad() else ctx.pick(["WITHVALUE", "junk"]))
    return args


def build_hscan(ctx: Context) -> list[str]:
    cursor = ctx.pick(["abc", "-1", "1x", ""]) if ctx.bad() else "0"
    args = ["HSCAN", ctx.key(), cursor]
    if ctx.chance(0.4):
        args += [ctx.opt("MATCH"), ctx.pick(FIELD_PATTERNS)]
    if ctx.chance(0.4):
        args += [ctx.opt("COUNT"), ctx.pick(["1", "2", "5", "100"]) if not ctx.bad()
                 else ctx.pick(["0", "-1", "abc"])]
    if ctx.chance(0.05):
        args += [ctx.pick(["NOVALUES", "TYPE", "junk"])]
    return args


# Members mix canonical integers (intsets), strings (listpacks), integer look-alikes that are
# strings ("007", "+5", "1.5") and one member over 64 bytes (straight to a hashtable).
SET_MEMBERS = ["a", "b", "c", "xyz", "", "1", "2", "3", "-1", "0", "10", "42", "007", "+5",
               "1.5", "9223372036854775807", "-9223372036854775808", "12345678901234567890",
               "\u00e9", "m" * 65]
MEMBER_PATTERNS = ["*", "a*", "?", "1*", "[ab]*", "-*", "*0*", "x?z", "[^a]*", "nomatch"]


def member(ctx: Context) -> str:
    return ctx.pick(SET_MEMBERS) if ctx.chance(0.7) else str(ctx.rng.randint(-20, 20))


def members(ctx: Context, lo: int = 1, hi: int = 3) -> list[str]:
    return [member(ctx) for _ in range(ctx.rng.randint(lo, hi))]


def build_sadd_many(ctx: Context) -> list[str]:
    """Enough members to pass set-max-listpack-entries (128) or set-max-intset-entries (512)."""
    count = ctx.pick([129, 300, 513])
    start = ctx.rng.randint(-50, 50)
    if ctx.chance(0.5):
        items = [str(start + i) for i in range(count)]
    else:
        items = [f"s{start + i}" for i in range(count)]
    return ["SADD", ctx.key()] + items


def build_spop(ctx: Context) -> list[str]:
    args = ["SPOP", ctx.key()]
    if ctx.chance(0.7):
        args.append(ctx.pick(["-1", "abc", "1.5", "", str(LLONG_MIN), "9223372036854775808"])
                    if ctx.bad() else ctx.pick(["0", "1", "2", "3", "5", "1000", str(LLONG_MAX)]))
    return args


def build_srandmember(ctx: Context) -> list[str]:
    # Never a huge negative count: Redis would try to reply that many members.
    args = ["SRANDMEMBER", ctx.key()]
    if ctx.chance(0.8):
        args.append(ctx.pick(["abc", "1.5", "", str(LLONG_MIN), "9223372036854775808"])
                    if ctx.bad() else
                    ctx.pick(["0", "1", "2", "3", "-1", "-3", "-10", "100", str(LLONG_MAX)]))
    return args


def build_sintercard(ctx: Context) -> list[str]:
    keys = ctx.keys(1, 3)
    numkeys = str(len(keys))
    if ctx.bad():
        numkeys = ctx.pick(["0", "-1", "abc", str(len(keys) + 1), "9223372036854775808"])
    args = ["SINTERCARD", numkeys] + keys
    if ctx.chance(0.4):
        args += [ctx.opt("LIMIT"),
                 ctx.pick(["-1", "abc", ""]) if ctx.bad() else ctx.pick(["0", "1", "2", "10"])]
    if ctx.chance(0.05):
        args += [ctx.pick(["LIMIT", "junk"])]
    return args


def build_sscan(ctx: Context) -> list[str]:
    cursor = ctx.pick(["abc", "-1", "1x", ""]) if ctx.bad() else "0"
    args = ["SSCAN", ctx.key(), cursor]
    if ctx.chance(0.4):
        args += [ctx.opt("MATCH"), ctx.pick(MEMBER_PATTERNS)]
    if ctx.chance(0.4):
        args += [ctx.opt("COUNT"), ctx.pick(["1", "2", "5", "100"]) if not ctx.bad()
                 else ctx.pick(["0", "-1", "abc"])]
    if ctx.chance(0.05):
        args += [ctx.pick(["TYPE", "junk"])]
    return args


# Sorted sets. Lex ranges only mean something when the members in range share one score: on a
# skiplist whose scores differ, Redis's own answer depends on the random levels of its nodes.
# So the lex commands mostly work on keys of their own (LEX_KEYS), which only ever hold score 0
# (ZADD with "0", and stores that read only LEX_KEYS: 0 * weight is 0, or NaN which stores 0),
# and only sometimes on the common keys, whose sorted sets stay small listpacks (answered
# deterministically whatever the scores). Big sorted sets (past zset-max-listpack-entries or
# -value: skiplists) live on BIG_KEYS, and a store command reading them writes there too.
ZSET_MEMBERS = ["a", "b", "c", "d", "aa", "ab", "xyz", "", "1", "2", "10", "-1", "007",
                "b\x00c", "\u00e9", "hello world"]
ZSET_SCORES = ["0", "1", "2", "3", "-1", "1.5", "-2.5", "100", "0.1", "1e3", "inf", "-inf",
               "+inf", "-0", "1e-5", "0x10", "12345678901234567", "3.0000000000000001"]
BAD_ZSET_SCORES = ["abc", "", "nan", " 1", "1x", "1e400", "--1", "(1", "0x"]
SCORE_BOUNDS = ["-inf", "+inf", "inf", "0", "1", "2", "3", "(1", "(2", "(3", "-1", "1.5",
                "(1.5", "100", "(-inf", "(+inf", "", "(", " 2", "0x2", "1e400", "-0", "5", "(0"]
BAD_SCORE_BOUNDS = ["abc", "nan", "(nan", "((1", "1x", "[1", "1 "]
LEX_BOUNDS = ["-", "+", "[a", "(a", "[b", "(b", "[c", "(c", "[", "(", "[aa", "(xyz", "[\u00e9",
              "[1", "(b\x00c", "[l5", "(l12"]
BAD_LEX_BOUNDS = ["a", "", "+a", "-a", "{a", "++", "--"]
LEX_KEYS = ["lex1", "lex2", "lex3"]
BIG_KEYS = ["big1", "big2"]
ZWEIGHTS = ["1", "2", "0", "-1", "0.5", "inf", "-inf", "1e3", "3"]


def zmember(ctx: Context) -> str:
    if ctx.chance(0.8):
        return ctx.pick(ZSET_MEMBERS)
    return "".join(ctx.pick("abcd") for _ in range(ctx.rng.randint(1, 3)))


def zmembers(ctx: Context, lo: int = 1, hi: int = 3) -> list[str]:
    return [zmember(ctx) for _ in range(ctx.rng.randint(lo, hi))]


def zscore(ctx: Context) -> str:
    if ctx.bad():
        return ctx.pick(BAD_ZSET_SCORES)
    if ctx.chance(0.6):
        return ctx.pick(ZSET_SCORES)
    if ctx.chance(0.5):
        return str(ctx.rng.randint(-20, 20))
    return repr(round(ctx.rng.uniform(-100, 100), ctx.rng.randint(1, 4)))


def score_bound(ctx: Context) -> str:
    return ctx.pick(BAD_SCORE_BOUNDS) if ctx.bad() else ctx.pick(SCORE_BOUNDS)


def lex_bound(ctx: Context) -> str:
    return ctx.pick(BAD_LEX_BOUNDS) if ctx.bad() else ctx.pick(LEX_BOUNDS)


def zkey(ctx: Context) -> str:
    """A common key, sometimes a big one (never a lex key: score commands change scores)."""
    return ctx.pick(BIG_KEYS) if ctx.chance(0.2) else ctx.key()


def zkey_read(ctx: Context) -> str:
    """Any key, for commands that change no score."""
    r = ctx.rng.random()
    return ctx.pick(LEX_KEYS) if r < 0.2 else ctx.pick(BIG_KEYS) if r < 0.35 else ctx.key()


def lex_key(ctx: Context) -> str:
    return ctx.pick(LEX_KEYS) if ctx.chance(0.85) else ctx.key()


def store_key_for(ctx: Context, source: str) -> str:
    """A destination in the source's pool, so that each pool keeps its invariant."""
    if source in LEX_KEYS:
        return ctx.pick(LEX_KEYS)
    if source in BIG_KEYS:
        return ctx.pick(BIG_KEYS)
    return ctx.key()


def zlimit(ctx: Context) -> list[str]:
    offset = ctx.pick(["abc", "1.5", ""]) if ctx.bad() else ctx.pick(["0", "0", "1", "2", "-1", "5"])
    count = ctx.pick(["abc", "1.5", ""]) if ctx.bad() else ctx.pick(["1", "2", "3", "-1", "0", "10"])
    return [ctx.opt("LIMIT"), offset, count]


def build_zadd(ctx: Context) -> list[str]:
    options = []
    if ctx.chance(0.3):
        options.append(ctx.pick(["NX", "XX"]))
    if ctx.chance(0.25):
        options.append(ctx.pick(["GT", "LT"]))
    if ctx.chance(0.25):
        options.append("CH")
    incr = ctx.chance(0.15)
    if incr:
        options.append("INCR")
    if ctx.chance(0.05):  # conflicting or repeated
        options.append(ctx.pick(["NX", "XX", "GT", "LT", "INCR", "CH"]))
    ctx.rng.shuffle(options)
    args = ["ZADD", zkey(ctx)] + [ctx.opt(o) for o in options]
    pairs = 1 if incr and ctx.chance(0.9) else ctx.rng.randint(1, 3)
    for _ in range(pairs):
        args += [zscore(ctx), zmember(ctx)]
    if ctx.chance(0.03):
        args.append(zscore(ctx))  # an odd number of words
    return args


def build_zadd_big(ctx: Context) -> list[str]:
    """Enough members for a skiplist (or one member past zset-max-listpack-value)."""
    key = ctx.pick(BIG_KEYS)
    if ctx.chance(0.25):
        return ["ZADD", key, str(ctx.rng.randint(-5, 5)), "L" * ctx.pick([64, 65, 100]),
                str(ctx.rng.randint(-5, 5)), zmember(ctx)]
    args = ["ZADD", key]
    start = ctx.rng.randint(-100, 100)
    for i in range(ctx.pick([10, 129, 200])):
        score = str(start + i) if ctx.chance(0.8) else f"{start + i}.5"
        args += [score, f"m{ctx.rng.randint(0, 300)}"]
    return args


def build_zadd_lex(ctx: Context) -> list[str]:
    """Members scored 0 on a lex key; sometimes enough of them for a skiplist."""
    key = ctx.pick(LEX_KEYS)
    if ctx.chance(0.1):
        members = [f"l{ctx.rng.randint(0, 400)}" for _ in range(ctx.pick([129, 200]))]
    else:
        members = zmembers(ctx, 1, 4)
    options = [ctx.opt(ctx.pick(["NX", "XX", "CH"]))] if ctx.chance(0.2) else []
    args = ["ZADD", key] + options
    for m in members:
        args += [ctx.pick(["0", "0", "-0", "0.0"]), m]
    return args


def build_zrange_generic(name: str):
    """ZRANGE and ZRANGESTORE: rank, BYSCORE or BYLEX, REV, LIMIT, WITHSCORES and misuses."""
    store = name == "ZRANGESTORE"

    def build(ctx: Context) -> list[str]:
        kind = ctx.pick(["rank", "rank", "score", "lex"])
        if kind == "lex":
            source = lex_key(ctx)
            low, high = lex_bound(ctx), lex_bound(ctx)
        else:
            source = zkey_read(ctx) if not store else zkey(ctx)
            if kind == "rank":
                low, high = ctx.integer(-6, 6), ctx.integer(-6, 6)
            else:
                low, high = score_bound(ctx), score_bound(ctx)
        groups = []
        if kind != "rank":
            groups.append([ctx.opt("BYSCORE" if kind == "score" else "BYLEX")])
        if ctx.chance(0.3):
            groups.append([ctx.opt("REV")])
        if (kind != "rank" and ctx.chance(0.4)) or ctx.chance(0.04):
            groups.append(zlimit(ctx))
        if (not store and kind != "lex" and ctx.chance(0.4)) or ctx.chance(0.03):
            groups.append([ctx.opt("WITHSCORES")])
        if ctx.chance(0.04):
            groups.append([ctx.pick(["BYSCORE", "BYLEX", "REV", "LIMIT", "FOO"])])
        ctx.rng.shuffle(groups)
        args = [name] + ([store_key_for(ctx, source)] if store else []) + [source, low, high]
        return args + [a for g in groups for a in g]
    return build


def build_zrank(name: str):
    def build(ctx: Context) -> list[str]:
        args = [name, zkey_read(ctx), zmember(ctx)]
        return args[:2] if ctx.chance(0.03) else args
    return build


def build_zrangebyscore(name: str):
    def build(ctx: Context) -> list[str]:
        args = [name, zkey_read(ctx), score_bound(ctx), score_bound(ctx)]
        groups = []
        if ctx.chance(0.4):
            groups.append([ctx.opt("WITHSCORES")])
        if ctx.chance(0.4):
            groups.append(zlimit(ctx))
        if ctx.chance(0.04):
            groups.append([ctx.pick(["BYSCORE", "REV", "LIMIT", "FOO"])])
        ctx.rng.shuffle(groups)
        return args + [a for g in groups for a in g]
    return build


def build_zrangebylex(name: str):
    def build(ctx: Context) -> list[str]:
        args = [name, lex_key(ctx), lex_bound(ctx), lex_bound(ctx)]
        if ctx.chance(0.4):
            args += zlimit(ctx)
        if ctx.chance(0.05):
            args.append(ctx.pick(["WITHSCORES", "BYLEX", "REV", "FOO"]))
        return args
    return build


def build_zrevrange(ctx: Context) -> list[str]:
    args = ["ZREVRANGE", zkey_read(ctx), ctx.integer(-6, 6), ctx.integer(-6, 6)]
    if ctx.chance(0.4):
        args.append(ctx.opt("WITHSCORES"))
    if ctx.chance(0.04):
        args += ctx.pick([["REV"], ["BYSCORE"], zlimit(ctx)])
    return args


def build_zpop(name: str):
    def build(ctx: Context) -> list[str]:
        args = [name, zkey_read(ctx)]
        if ctx.chance(0.6):
            args.append(ctx.pick(["-1", "abc", "1.5", "", str(LLONG_MIN)]) if ctx.bad()
                        else ctx.pick(["0", "1", "2", "3", "100", str(LLONG_MAX)]))
        return args
    return build


def _mpop_tail(ctx: Context) -> list[str]:
    keys = [zkey_read(ctx) for _ in range(ctx.rng.randint(1, 3))]
    numkeys = str(len(keys))
    if ctx.bad():
        numkeys = ctx.pick(["0", "-1", "abc", str(len(keys) + 1), str(LLONG_MAX)])
    args = [numkeys] + keys + [ctx.opt(ctx.pick(["MIN", "MAX"])) if not ctx.bad() else "MID"]
    if ctx.chance(0.5):
        args += [ctx.opt("COUNT"), ctx.pick(["0", "-1", "abc"]) if ctx.bad()
                 else ctx.pick(["1", "2", "5", "100"])]
    if ctx.chance(0.04):
        args += ctx.pick([["COUNT", "1"], ["COUNT"], ["junk"]])
    return args


def build_zmpop(ctx: Context) -> list[str]:
    return ["ZMPOP"] + _mpop_tail(ctx)


def block_timeout(ctx: Context) -> str:
    # Never 0 or long: a command that finds nothing blocks both servers that long.
    return ctx.pick(["-1", "abc", "", "0.01x"]) if ctx.bad() else ctx.pick(["0.01", "0.02"])


def build_bzpop(name: str):
    def build(ctx: Context) -> list[str]:
        return [name] + [zkey_read(ctx) for _ in range(ctx.rng.randint(1, 3))] + [block_timeout(ctx)]
    return build


def build_bzmpop(ctx: Context) -> list[str]:
    return ["BZMPOP", block_timeout(ctx)] + _mpop_tail(ctx)


def build_zrandmember(ctx: Context) -> list[str]:
    """Only the forms whose reply is certain: no count and small or negative counts pick at
    random (covered by the unit tests); a count of 0 or beyond any set's size is exact."""
    key = zkey_read(ctx)
    if ctx.bad():
        return ctx.pick([["ZRANDMEMBER", key, ctx.pick(["abc", "1.5", "", str(LLONG_MIN)])],
                         ["ZRANDMEMBER", key, "5000000000000000000", "WITHSCORES"],
                         ["ZRANDMEMBER", key, "1000", ctx.pick(["WITHSCORE", "junk"])],
                         ["ZRANDMEMBER", key, "1000", "WITHSCORES", "x"]])
    args = ["ZRANDMEMBER", key, ctx.pick(["0", "1000", "4611686018427387903"])]
    if ctx.chance(0.5):
        args.append(ctx.opt("WITHSCORES"))
    return args


def build_zsetop(name: str):
    """ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD: sources from one pool (sets and
    other types too, on the common keys), WEIGHTS, AGGREGATE, WITHSCORES, LIMIT, misuses."""
    store = name.endswith("STORE")
    card = name == "ZINTERCARD"
    diff = name.startswith("ZDIFF")

    def build(ctx: Context) -> list[str]:
        pool = ctx.pick(["common"] * 6 + ["lex", "big"])
        pick_key = {"common": Context.key, "lex": lambda c: c.pick(LEX_KEYS),
                    "big": lambda c: c.pick(BIG_KEYS + [c.key()])}[pool]
        keys = [pick_key(ctx) for _ in range(ctx.rng.randint(1, 3))]
        numkeys = str(len(keys))
        if ctx.bad():
            numkeys = ctx.pick(["0", "-1", "abc", str(len(keys) + 1), "9223372036854775808"])
        args = [name]
        if store:
            args.append({"common": ctx.key, "lex": lambda: ctx.pick(LEX_KEYS),
                         "big": lambda: ctx.pick(BIG_KEYS)}[pool]())
        args += [numkeys] + keys
        if (not card and not diff) or ctx.chance(0.03):
            if ctx.chance(0.35):
                args += [ctx.opt("WEIGHTS")] + [ctx.pick(["abc", "nan", ""]) if ctx.bad()
                                                else ctx.pick(ZWEIGHTS) for _ in keys]
            if ctx.chance(0.35):
                args += [ctx.opt("AGGREGATE"),
                         "AVG" if ctx.bad() else ctx.opt(ctx.pick(["SUM", "MIN", "MAX"]))]
        if (not store and not card and ctx.chance(0.5)) or ctx.chance(0.02):
            args.append(ctx.opt("WITHSCORES"))
        if card and ctx.chance(0.5) or ctx.chance(0.02):
            args += [ctx.opt("LIMIT"), ctx.pick(["-1", "abc"]) if ctx.bad()
                     else ctx.pick(["0", "1", "2", "10"])]
        if ctx.chance(0.03):
            args.append(ctx.pick(["WEIGHTS", "AGGREGATE", "junk"]))
        return args
    return build


def build_zscan(ctx: Context) -> list[str]:
    cursor = ctx.pick(["abc", "-1", "1x", ""]) if ctx.bad() else "0"
    args = ["ZSCAN", zkey_read(ctx), cursor]
    if ctx.chance(0.4):
        args += [ctx.opt("MATCH"), ctx.pick(["*", "a*", "?", "m1*", "[ab]*", "*0*", "l?", "nomatch"])]
    if ctx.chance(0.4):
        args += [ctx.opt("COUNT"), ctx.pick(["1", "2", "5", "100"]) if not ctx.bad()
                 else ctx.pick(["0", "-1", "abc"])]
    if ctx.chance(0.05):
        args += [ctx.pick(["TYPE", "junk"])]
    return args


# Lists. Elements repeat a lot so that LREM, LPOS and LINSERT find what they look for; a few
# long pushes make lists of several quicklist nodes (8 KiB each by default) on LIST_BIG_KEYS.
LIST_VALUES = ["a", "b", "c", "a", "b", "1", "-1", "0", "", "hello", "a b", "007", "\u00e9",
               "x\x00y", "9223372036854775808", "z" * 70]
LIST_BIG_KEYS = ["lbig1", "lbig2"]


def list_key(ctx: Context) -> str:
    return ctx.pick(LIST_BIG_KEYS) if ctx.chance(0.15) else ctx.key()


def list_value(ctx: Context) -> str:
    return ctx.pick(LIST_VALUES)


def list_index(ctx: Context) -> str:
    if ctx.bad():
        return ctx.pick(BAD_INTEGERS + [str(LLONG_MAX), str(LLONG_MIN)])
    return str(ctx.rng.randint(-8, 8)) if ctx.chance(0.8) else str(ctx.rng.randint(-400, 400))


def list_end(ctx: Context) -> str:
    return ctx.pick(["MIDDLE", "", "LEFTX"]) if ctx.bad() else ctx.opt(ctx.pick(["LEFT", "RIGHT"]))


def list_timeout(ctx: Context) -> str:
    # Never 0 or long: a command that finds nothing blocks both servers that long.
    return ctx.pick(["-1", "abc", "", "0.01x", "inf"]) if ctx.bad() else ctx.pick(["0.01", "0.02"])


def build_list_push(name: str):
    def build(ctx: Context) -> list[str]:
        return [name, list_key(ctx)] + [list_value(ctx) for _ in range(ctx.rng.randint(1, 4))]
    return build


def build_list_push_many(ctx: Context) -> list[str]:
    values = [ctx.pick(LIST_VALUES) if ctx.chance(0.7) else ctx.pick("abc") * ctx.rng.randint(1, 300)
              for _ in range(ctx.rng.randint(50, 250))]
    return [ctx.pick(["RPUSH", "LPUSH"]), ctx.pick(LIST_BIG_KEYS + [ctx.key()])] + values


def build_list_pop(name: str):
    def build(ctx: Context) -> list[str]:
        args = [name, list_key(ctx)]
        if ctx.chance(0.5):
            args.append(ctx.pick(["-1", "abc", "1.5", "", str(LLONG_MIN)]) if ctx.bad()
                        else ctx.pick(["0", "1", "2", "3", "100", str(LLONG_MAX)]))
        return args
    return build


def build_linsert(ctx: Context) -> list[str]:
    where = ctx.pick(["MIDDLE", "", "BEFOREX"]) if ctx.bad() else ctx.opt(ctx.pick(["BEFORE", "AFTER"]))
    return ["LINSERT", list_key(ctx), where, list_value(ctx), list_value(ctx)]


def build_lrem(ctx: Context) -> list[str]:
    count = ctx.pick(BAD_INTEGERS[:3]) if ctx.bad() else ctx.pick(
        ["0", "1", "2", "-1", "-2", "5", "-5", str(LLONG_MIN), str(LLONG_MAX)])
    return ["LREM", list_key(ctx), count, list_value(ctx)]


def build_lpos(ctx: Context) -> list[str]:
    args = ["LPOS", list_key(ctx), list_value(ctx)]
    options = []
    if ctx.chance(0.5):
        rank = ctx.pick(["0", "abc", ""]) if ctx.bad() else ctx.pick(
            ["1", "2", "3", "-1", "-2", "-3", str(LLONG_MAX), str(-LLONG_MAX), str(LLONG_MIN)])
        options.append([ctx.opt("RANK"), rank])
    if ctx.chance(0.5):
        count = ctx.pick(["-1", "abc", ""]) if ctx.bad() else ctx.pick(["0", "1", "2", "5"])
        options.append([ctx.opt("COUNT"), count])
    if ctx.chance(0.3):
        maxlen = ctx.pick(["-1", "abc"]) if ctx.bad() else ctx.pick(["0", "1", "2", "3", "10"])
        options.append([ctx.opt("MAXLEN"), maxlen])
    if ctx.chance(0.04):
        options.append([ctx.pick(["RANK", "COUNT", "MAXLEN", "junk"])])
    ctx.rng.shuffle(options)
    return args + [a for o in options for a in o]


def build_lmove(ctx: Context) -> list[str]:
    return ["LMOVE", list_key(ctx), list_key(ctx), list_end(ctx), list_end(ctx)]


def _lmpop_tail(ctx: Context) -> list[str]:
    keys = [list_key(ctx) for _ in range(ctx.rng.randint(1, 3))]
    numkeys = str(len(keys))
    if ctx.bad():
        numkeys = ctx.pick(["0", "-1", "abc", str(len(keys) + 1), str(LLONG_MAX)])
    args = [numkeys] + keys + [list_end(ctx)]
    if ctx.chance(0.5):
        args += [ctx.opt("COUNT"), ctx.pick(["0", "-1", "abc"]) if ctx.bad()
                 else ctx.pick(["1", "2", "5", "100", str(LLONG_MAX)])]
    if ctx.chance(0.04):
        args += ctx.pick([["COUNT", "1"], ["COUNT"], ["junk"]])
    return args


def build_blpop(name: str):
    def build(ctx: Context) -> list[str]:
        return [name] + [list_key(ctx) for _ in range(ctx.rng.randint(1, 3))] + [list_timeout(ctx)]
    return build


def build_unknown(ctx: Context) -> list[str]:
    return [ctx.pick(["FOO", "getx", "SETT", "EXPIRES"])] + ctx.keys(0, 2)


def build_flush(name: str):
    def build(ctx: Context) -> list[str]:
        return [name] + ctx.pick([[], [], ["ASYNC"], ["SYNC"], ["async"], ["FOO"]])
    return build


def kv_pairs(ctx: Context, lo: int = 1, hi: int = 3) -> list[str]:
    out = []
    for _ in range(ctx.rng.randint(lo, hi)):
        out += [ctx.key(), ctx.value()]
    return out


# --------------------------------------------------------------------------------------------
# the template table
# --------------------------------------------------------------------------------------------

@dataclass
class Template:
    name: str
    family: str
    weight: float
    build: Callable[[Context], list]
    compare: str = "exact"
    # arity mutation: a fuzz on top of the builder (drop the last argument / append junk)
    mutate: bool = True


def T(name, family, weight, build, compare="exact", mutate=True) -> Template:
    return Template(name, family, weight, build, compare, mutate)


TEMPLATES: list[Template] = [
    # strings
    T("GET", "strings", 6, lambda c: ["GET", c.key()]),
    T("SET", "strings", 10, build_set),
    T("SETNX", "strings", 1.5, lambda c: ["SETNX", c.key(), c.value()]),
    T("SETEX", "strings", 1.5, lambda c: ["SETEX", c.key(), c.ttl_s(), c.value()]),
    T("PSETEX", "strings", 1.5, lambda c: ["PSETEX", c.key(), c.ttl_ms(), c.value()]),
    T("GETEX", "strings", 3, build_getex),
    T("GETDEL", "strings", 1.5, lambda c: ["GETDEL", c.key()]),
    T("GETSET", "strings", 1.5, lambda c: ["GETSET", c.key(), c.value()]),
    T("MGET", "strings", 2, lambda c: ["MGET"] + c.keys()),
    T("MSET", "strings", 2, lambda c: ["MSET"] + kv_pairs(c)),
    T("MSETNX", "strings", 1.5, lambda c: ["MSETNX"] + kv_pairs(c)),
    T("APPEND", "strings", 2, lambda c: ["APPEND", c.key(), c.short_value()]),
    T("STRLEN", "strings", 2, lambda c: ["STRLEN", c.key()]),
    T("INCR", "strings", 3, lambda c: ["INCR", c.key()]),
    T("DECR", "strings", 2, lambda c: ["DECR", c.key()]),
    T("INCRBY", "strings", 2.5, lambda c: ["INCRBY", c.key(), c.integer(-1000, 1000)]),
    T("DECRBY", "strings", 2, lambda c: ["DECRBY", c.key(), c.integer(-1000, 1000)]),
    T("INCRBYFLOAT", "strings", 3, lambda c: ["INCRBYFLOAT", c.key(), c.float_()]),
    T("GETRANGE", "strings", 2, build_getrange("GETRANGE")),
    T("SUBSTR", "strings", 1, build_getrange("SUBSTR")),
    T("SETRANGE", "strings", 2, build_setrange),
    T("LCS", "strings", 1.5, build_lcs),
    # expiry
    T("EXPIRE", "expiry", 3, build_expire("EXPIRE", Context.ttl_s)),
    T("PEXPIRE", "expiry", 2.5, build_expire("PEXPIRE", Context.ttl_ms)),
    T("EXPIREAT", "expiry", 2.5, build_expire("EXPIREAT", Context.abs_s)),
    T("PEXPIREAT", "expiry", 2.5, build_expire("PEXPIREAT", Context.abs_ms)),
    T("TTL", "expiry", 3, lambda c: ["TTL", c.key()], "ttl_s"),
    T("PTTL", "expiry", 3, lambda c: ["PTTL", c.key()], "ttl_ms"),
    T("EXPIRETIME", "expiry", 2, lambda c: ["EXPIRETIME", c.key()], "ttl_s"),
    T("PEXPIRETIME", "expiry", 2, lambda c: ["PEXPIRETIME", c.key()], "ttl_ms"),
    T("PERSIST", "expiry", 2, lambda c: ["PERSIST", c.key()]),
    # keyspace
    T("DEL", "keys", 2, lambda c: ["DEL"] + c.keys(1, 3)),
    T("UNLINK", "keys", 1, lambda c: ["UNLINK"] + c.keys(1, 3)),
    T("EXISTS", "keys", 2.5, lambda c: ["EXISTS"] + c.keys(1, 4)),
    T("TOUCH", "keys", 1, lambda c: ["TOUCH"] + c.keys(1, 3)),
    T("TYPE", "keys", 2, lambda c: ["TYPE", c.key()]),
    T("KEYS", "keys", 2.5, lambda c: ["KEYS", c.pattern()], "unordered"),
    T("SCAN", "keys", 1.5, build_scan, "scan", mutate=False),
    T("RANDOMKEY", "keys", 0.7, lambda c: ["RANDOMKEY"], "randomkey", mutate=False),
    T("RENAME", "keys", 2, lambda c: ["RENAME", c.key(), c.key()]),
    T("RENAMENX", "keys", 1.5, lambda c: ["RENAMENX", c.key(), c.key()]),
    T("COPY", "keys", 2, build_copy),
    T("MOVE", "keys", 1.5, lambda c: ["MOVE", c.key(), c.db()]),
    T("SWAPDB", "keys", 0.7, lambda c: ["SWAPDB", c.db(), c.db()]),
    T("SELECT", "keys", 1.2, lambda c: ["SELECT", c.db()]),
    T("DBSIZE", "keys", 1.5, lambda c: ["DBSIZE"], "dbsize"),
    # "encoding": exact (Redis 7.0's names)
    T("OBJECT", "keys", 2.5, build_object, "encoding"),
    T("FLUSHDB", "keys", 0.15, build_flush("FLUSHDB")),
    T("FLUSHALL", "keys", 0.05, build_flush("FLUSHALL")),
    # connection-level odds and ends
    T("PING", "server", 0.3, lambda c: ["PING"] + ([c.value()] if c.chance(0.5) else [])),
    T("ECHO", "server", 0.3, lambda c: ["ECHO", c.value()]),
    T("unknown", "server", 0.3, build_unknown),
    # transactions: generate() keeps track of MULTI so that only exactly-compared commands are
    # queued (an EXEC reply is compared byte for byte, with every queued reply inside it)
    T("MULTI", "transactions", 1.5, lambda c: ["MULTI"]),
    T("EXEC", "transactions", 1.2, lambda c: ["EXEC"]),
    T("DISCARD", "transactions", 0.3, lambda c: ["DISCARD"]),
    T("WATCH", "transactions", 1, lambda c: ["WATCH"] + c.keys(1, 3)),
    T("UNWATCH", "transactions", 0.3, lambda c: ["UNWATCH"]),
    # hashes (small ones stay listpack-encoded and reply in insertion order, as in Redis;
    # fields or values over 64 bytes make a hashtable, whose order is the server's own)
    T("HSET", "hashes", 4, lambda c: ["HSET", c.key()] + field_pairs(c)),
    T("HMSET", "hashes", 1, lambda c: ["HMSET", c.key()] + field_pairs(c)),
    T("HSETNX", "hashes", 1.5, lambda c: ["HSETNX", c.key(), field(c), c.value()]),
    T("HGET", "hashes", 2, lambda c: ["HGET", c.key(), field(c)]),
    T("HMGET", "hashes", 1.5, lambda c: ["HMGET", c.key()] + [field(c) for _ in range(3)]),
    T("HGETALL", "hashes", 2, lambda c: ["HGETALL", c.key()], "unordered_pairs"),
    T("HKEYS", "hashes", 1, lambda c: ["HKEYS", c.key()], "unordered"),
    T("HVALS", "hashes", 1, lambda c: ["HVALS", c.key()], "unordered"),
    T("HDEL", "hashes", 2, lambda c: ["HDEL", c.key()] + [field(c) for _ in range(2)]),
    T("HLEN", "hashes", 1, lambda c: ["HLEN", c.key()]),
    T("HSTRLEN", "hashes", 1, lambda c: ["HSTRLEN", c.key(), field(c)]),
    T("HEXISTS", "hashes", 1, lambda c: ["HEXISTS", c.key(), field(c)]),
    T("HINCRBY", "hashes", 2, lambda c: ["HINCRBY", c.key(), field(c), c.integer()]),
    T("HINCRBYFLOAT", "hashes", 1.5, lambda c: ["HINCRBYFLOAT", c.key(), field(c), c.float_()]),
    # not mutated: dropping the count would ask for one random field
    T("HRANDFIELD", "hashes", 1, build_hrandfield, "unordered", mutate=False),
    T("HSCAN", "hashes", 1.5, build_hscan, "scan"),
    # ---- families the server does not have yet (enable with KW_DIFF_FAMILIES) ----
    # lists (every reply is deterministic; blocking commands use timeouts of 10-20 ms and are
    # never mutated, since a junk "0" appended as the timeout would block forever)
    T("RPUSH", "lists", 3, build_list_push("RPUSH")),
    T("LPUSH", "lists", 2.5, build_list_push("LPUSH")),
    T("RPUSHX", "lists", 0.8, build_list_push("RPUSHX")),
    T("LPUSHX", "lists", 0.8, build_list_push("LPUSHX")),
    T("PUSH many", "lists", 0.25, build_list_push_many, mutate=False),
    T("LPOP", "lists", 1.5, build_list_pop("LPOP")),
    T("RPOP", "lists", 1.5, build_list_pop("RPOP")),
    T("LLEN", "lists", 1, lambda c: ["LLEN", list_key(c)]),
    T("LRANGE", "lists", 2.5, lambda c: ["LRANGE", list_key(c), list_index(c), list_index(c)]),
    T("LINDEX", "lists", 1.5, lambda c: ["LINDEX", list_key(c), list_index(c)]),
    T("LSET", "lists", 1.2, lambda c: ["LSET", list_key(c), list_index(c), list_value(c)]),
    T("LINSERT", "lists", 1.2, build_linsert),
    T("LREM", "lists", 1.2, build_lrem),
    T("LTRIM", "lists", 0.6, lambda c: ["LTRIM", list_key(c), list_index(c), list_index(c)]),
    T("LPOS", "lists", 1.5, build_lpos),
    T("LMOVE", "lists", 1.2, build_lmove),
    T("RPOPLPUSH", "lists", 0.8, lambda c: ["RPOPLPUSH", list_key(c), list_key(c)]),
    T("LMPOP", "lists", 1, lambda c: ["LMPOP"] + _lmpop_tail(c)),
    T("BLPOP", "lists", 0.4, build_blpop("BLPOP"), mutate=False),
    T("BRPOP", "lists", 0.4, build_blpop("BRPOP"), mutate=False),
    T("BLMOVE", "lists", 0.4, lambda c: ["BLMOVE", list_key(c), list_key(c), list_end(c),
                                         list_end(c), list_timeout(c)], mutate=False),
    T("BRPOPLPUSH", "lists", 0.3, lambda c: ["BRPOPLPUSH", list_key(c), list_key(c),
                                             list_timeout(c)], mutate=False),
    T("BLMPOP", "lists", 0.4, lambda c: ["BLMPOP", list_timeout(c)] + _lmpop_tail(c),
      mutate=False),
    # "encoding": list keys are shared with the other families, so this may name a set
    T("OBJECT ENCODING list", "lists", 0.3, lambda c: ["OBJECT", "ENCODING", list_key(c)],
      "encoding"),
    T("DEL list pools", "lists", 0.15, lambda c: ["DEL", c.pick(LIST_BIG_KEYS)]),
    # sets: intsets reply in ascending order as in Redis; small sets of strings are kept as
    # listpacks here (reported as hashtables, as in Redis 7.0), so their order differs. SPOP and
    # SRANDMEMBER are compared by shape, size and membership ("random_members"), and a SPOP
    # that popped other members than Redis did is followed by a resync of the key.
    T("SADD", "sets", 4, lambda c: ["SADD", c.key()] + members(c)),
    T("SADD many", "sets", 0.3, build_sadd_many, mutate=False),
    T("SREM", "sets", 2, lambda c: ["SREM", c.key()] + members(c)),
    T("SMEMBERS", "sets", 1.5, lambda c: ["SMEMBERS", c.key()], "unordered"),
    T("SISMEMBER", "sets", 1.5, lambda c: ["SISMEMBER", c.key(), member(c)]),
    T("SMISMEMBER", "sets", 1, lambda c: ["SMISMEMBER", c.key()] + members(c)),
    T("SCARD", "sets", 1.5, lambda c: ["SCARD", c.key()]),
    T("SPOP", "sets", 1.5, build_spop, "random_members"),
    T("SRANDMEMBER", "sets", 1.5, build_srandmember, "random_members"),
    T("SMOVE", "sets", 1.5, lambda c: ["SMOVE", c.key(), c.key(), member(c)]),
    T("SINTER", "sets", 1, lambda c: ["SINTER"] + c.keys(1, 3), "unordered"),
    T("SINTERCARD", "sets", 1, build_sintercard),
    T("SINTERSTORE", "sets", 1, lambda c: ["SINTERSTORE", c.key()] + c.keys(1, 3)),
    T("SUNION", "sets", 1, lambda c: ["SUNION"] + c.keys(1, 3), "unordered"),
    T("SUNIONSTORE", "sets", 1, lambda c: ["SUNIONSTORE", c.key()] + c.keys(1, 3)),
    T("SDIFF", "sets", 1, lambda c: ["SDIFF"] + c.keys(1, 3), "unordered"),
    T("SDIFFSTORE", "sets", 1, lambda c: ["SDIFFSTORE", c.key()] + c.keys(1, 3)),
    T("SSCAN", "sets", 1, build_sscan, "scan"),
    # sorted sets (key pools and lex ranges: see ZSET_MEMBERS above); ZRANDMEMBER only in its
    # forms with a certain reply; blocking pops with short timeouts and never mutated (a junk
    # "0" appended would become a timeout of forever)
    T("ZADD", "zsets", 5, build_zadd),
    T("ZADD big", "zsets", 0.4, build_zadd_big, mutate=False),
    T("ZADD lex", "zsets", 1.5, build_zadd_lex, mutate=False),
    T("ZINCRBY", "zsets", 1.5, lambda c: ["ZINCRBY", zkey(c), zscore(c), zmember(c)]),
    T("ZREM", "zsets", 1.5, lambda c: ["ZREM", zkey_read(c)] + zmembers(c)),
    T("ZCARD", "zsets", 1, lambda c: ["ZCARD", zkey_read(c)]),
    T("ZSCORE", "zsets", 1.5, lambda c: ["ZSCORE", zkey_read(c), zmember(c)]),
    T("ZMSCORE", "zsets", 1, lambda c: ["ZMSCORE", zkey_read(c)] + zmembers(c)),
    # never a fourth argument: keywarden takes Redis 7.2's WITHSCORE there
    T("ZRANK", "zsets", 1, build_zrank("ZRANK"), mutate=False),
    T("ZREVRANK", "zsets", 1, build_zrank("ZREVRANK"), mutate=False),
    T("ZRANGE", "zsets", 3, build_zrange_generic("ZRANGE")),
    T("ZRANGESTORE", "zsets", 1.2, build_zrange_generic("ZRANGESTORE")),
    T("ZRANGEBYSCORE", "zsets", 1.5, build_zrangebyscore("ZRANGEBYSCORE")),
    T("ZREVRANGEBYSCORE", "zsets", 1, build_zrangebyscore("ZREVRANGEBYSCORE")),
    T("ZRANGEBYLEX", "zsets", 1.5, build_zrangebylex("ZRANGEBYLEX")),
    T("ZREVRANGEBYLEX", "zsets", 1, build_zrangebylex("ZREVRANGEBYLEX")),
    T("ZREVRANGE", "zsets", 1, build_zrevrange),
    T("ZCOUNT", "zsets", 1, lambda c: ["ZCOUNT", zkey_read(c), score_bound(c), score_bound(c)]),
    T("ZLEXCOUNT", "zsets", 1, lambda c: ["ZLEXCOUNT", lex_key(c), lex_bound(c), lex_bound(c)]),
    T("ZREMRANGEBYRANK", "zsets", 0.8,
      lambda c: ["ZREMRANGEBYRANK", zkey_read(c), c.integer(-4, 4), c.integer(-4, 4)]),
    T("ZREMRANGEBYSCORE", "zsets", 0.8,
      lambda c: ["ZREMRANGEBYSCORE", zkey_read(c), score_bound(c), score_bound(c)]),
    T("ZREMRANGEBYLEX", "zsets", 0.8,
      lambda c: ["ZREMRANGEBYLEX", lex_key(c), lex_bound(c), lex_bound(c)]),
    T("ZPOPMIN", "zsets", 1, build_zpop("ZPOPMIN")),
    T("ZPOPMAX", "zsets", 1, build_zpop("ZPOPMAX")),
    T("ZMPOP", "zsets", 1, build_zmpop),
    T("BZPOPMIN", "zsets", 0.6, build_bzpop("BZPOPMIN"), mutate=False),
    T("BZPOPMAX", "zsets", 0.6, build_bzpop("BZPOPMAX"), mutate=False),
    T("BZMPOP", "zsets", 0.6, build_bzmpop, mutate=False),
    T("ZRANDMEMBER", "zsets", 0.8, build_zrandmember, mutate=False),
    T("ZUNION", "zsets", 1, build_zsetop("ZUNION")),
    T("ZINTER", "zsets", 1, build_zsetop("ZINTER")),
    T("ZDIFF", "zsets", 1, build_zsetop("ZDIFF")),
    T("ZUNIONSTORE", "zsets", 1, build_zsetop("ZUNIONSTORE")),
    T("ZINTERSTORE", "zsets", 1, build_zsetop("ZINTERSTORE")),
    T("ZDIFFSTORE", "zsets", 0.8, build_zsetop("ZDIFFSTORE")),
    T("ZINTERCARD", "zsets", 0.8, build_zsetop("ZINTERCARD")),
    T("ZSCAN", "zsets", 1, build_zscan, "scan"),
    T("OBJECT ENCODING zset", "zsets", 0.8, lambda c: ["OBJECT", "ENCODING", zkey_read(c)],
      "encoding", mutate=False),
    T("DEL zset pools", "zsets", 0.2, lambda c: ["DEL", c.pick(LEX_KEYS + BIG_KEYS)]),
    # pub/sub, as one client with nobody subscribed sees it (scenarios with subscribers are in
    # tests/e2e/test_pubsub.py); an UNSUBSCRIBE answers once per argument, hence at most one.
    T("PUBLISH", "pubsub", 1, lambda c: ["PUBLISH", c.key(), c.value()]),
    T("SPUBLISH", "pubsub", 0.5, lambda c: ["SPUBLISH", c.key(), c.value()]),
    T("PUBSUB NUMSUB", "pubsub", 0.5, lambda c: ["PUBSUB", "NUMSUB", *c.keys(0, 3)]),
    T("PUBSUB SHARDNUMSUB", "pubsub", 0.5, lambda c: ["PUBSUB", "SHARDNUMSUB", *c.keys(0, 3)]),
    T("PUBSUB NUMPAT", "pubsub", 0.3, lambda c: ["PUBSUB", "NUMPAT"]),
    T("PUBSUB CHANNELS", "pubsub", 0.5,
      lambda c: ["PUBSUB", c.pick(["CHANNELS", "SHARDCHANNELS"]),
                 *[c.pick(PATTERNS) for _ in range(c.rng.randint(0, 2))]]),
    T("UNSUBSCRIBE", "pubsub", 0.5,
      lambda c: [c.pick(["UNSUBSCRIBE", "PUNSUBSCRIBE", "SUNSUBSCRIBE"]), *c.keys(0, 1)],
      mutate=False),
]

# Scripts: a command of another family, drawn from the exactly-compared templates, run through
# EVAL (redis.call raises its errors, redis.pcall returns them, RESP3 under setresp(3),
# EVAL_RO refuses writes) or through FCALL of a library the sequence (re)loads. The reply
# conversions both ways are then compared on every reply shape the other families produce.
SCRIPT_WRAPPERS = [
    ("EVAL", "return redis.call(unpack(ARGV))"),
    ("EVAL", "return redis.pcall(unpack(ARGV))"),
    ("EVAL", "redis.setresp(3) return redis.call(unpack(ARGV))"),
    ("EVAL", "redis.setresp(3) local r = redis.pcall(unpack(ARGV)) return r"),
    ("EVAL", "local ok, r = pcall(redis.call, unpack(ARGV)) return {tostring(ok), r}"),
    ("EVAL_RO", "return redis.call(unpack(ARGV))"),
]
SCRIPT_LIBRARY = ("#!lua name=kwdiff\n"
                  "redis.register_function('kwcall', function(keys, args) "
                  "return redis.call(unpack(args)) end)\n"
                  "redis.register_function{function_name='kwread', callback=function(keys, args) "
                  "return redis.pcall(unpack(args)) end, flags={'no-writes'}}")
SCRIPTED_FAMILIES = ("strings", "expiry", "keys", "hashes", "sets", "zsets", "lists")


def build_scripted(ctx: Context) -> list[str]:
    inner = ctx.pick([t for t in TEMPLATES
                      if t.family in SCRIPTED_FAMILIES and t.compare == "exact"])
    args = inner.build(ctx)
    if ctx.chance(0.2):
        return [ctx.pick(["FCALL", "FCALL_RO"]), ctx.pick(["kwcall", "kwread"]), "0", *args]
    command, body = ctx.pick(SCRIPT_WRAPPERS)
    return [command, body, "0", *args]


TEMPLATES += [
    T("script", "scripts", 6, build_scripted, mutate=False),
    T("FUNCTION LOAD", "scripts", 0.3,
      lambda c: ["FUNCTION", "LOAD", "REPLACE", SCRIPT_LIBRARY], mutate=False),
]

DEFAULT_FAMILIES = ("strings", "expiry", "keys", "server", "hashes")
DEFAULT_FAMILIES += ("transactions",)
DEFAULT_FAMILIES += ("sets",)
DEFAULT_FAMILIES += ("zsets",)
DEFAULT_FAMILIES += ("lists",)
DEFAULT_FAMILIES += ("pubsub",)
DEFAULT_FAMILIES += ("scripts",)
ALL_FAMILIES = tuple(dict.fromkeys(t.family for t in TEMPLATES))


def generate(seed: int, count: int, families=DEFAULT_FAMILIES, now_s: int | None = None,
             p_mutate: float = 0.04) -> list[Command]:
    """The sequence for ``seed``: ``count`` commands from the templates of ``families``."""
    rng = random.Random(seed)
    ctx = Context(rng, int(time.time()) if now_s is None else now_s)
    table = [t for t in TEMPLATES if t.family in families]
    unknown = set(families) - set(ALL_FAMILIES)
    if unknown:
        raise ValueError(f"unknown families {sorted(unknown)}; known: {ALL_FAMILIES}")
    weights = [t.weight for t in table]
    # Inside MULTI only templates compared exactly: their replies end up inside EXEC's.
    queueable = [t for t in table if t.compare == "exact"]
    queueable_weights = [t.weight for t in queueable]
    in_multi = False
    commands = []
    for _ in range(count):
        if in_multi:
            template = rng.choices(queueable, queueable_weights)[0]
        else:
            template = rng.choices(table, weights)[0]
        args = template.build(ctx)
        if template.mutate and rng.random() < p_mutate:
            if len(args) > 1 and rng.random() < 0.5:
                args = args[:-1]
            else:
                args = args + [rng.choice(JUNK_TOKENS)]
        if rng.random() < 0.05:  # command names are case-insensitive
            args[0] = args[0].lower() if rng.random() < 0.5 else args[0].capitalize()
        commands.append(Command(args, template.compare, template.name))
        in_multi = _in_multi_after(in_multi, args)
    return commands


def _in_multi_after(in_multi: bool, args: list) -> bool:
    """Whether the client is inside MULTI after ``args`` (as Redis 7.0 decides it)."""
    name = args[0].upper() if isinstance(args[0], str) else ""
    if name == "MULTI" and len(args) == 1:
        return True
    if in_multi and name == "EXEC":
        return False  # runs, or (with a wrong arity) aborts the transaction at once
    if in_multi and name == "DISCARD" and len(args) == 1:
        return False
    return in_multi


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--families", default=",".join(DEFAULT_FAMILIES))
    parser.add_argument("--now", type=int, default=None, help="generation time, Unix seconds")
    args = parser.parse_args()
    for i, cmd in enumerate(generate(args.seed, args.count, args.families.split(","), args.now)):
        print(f"{i:5d} [{cmd.compare}] {cmd}")


if __name__ == "__main__":
    main()
