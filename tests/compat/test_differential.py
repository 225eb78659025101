"""Differential tests: the same command sequences sent to keywarden and to a stock redis-server,
replies compared.

(a) hand-written sequences (``SEQUENCES``) over the edge cases of strings, keys and expiry;
(b) seeded random sequences from ``command_generator`` (valid and invalid commands over a small
    key space).

Replies are compared byte for byte, except where the compare mode of the command says otherwise
(see command_generator): TTL-like integers within a tolerance, KEYS-like arrays as sorted lists,
RANDOMKEY by membership, SCAN by the set of keys of a whole iteration. Every sequence runs in
RESP2 and in RESP3 (random seeds alternate: even seeds RESP2, odd seeds RESP3).

Environment:
  KW_DIFF_SEEDS      number of random seeds (default 50)
  KW_DIFF_COMMANDS   commands per seed (default 400)
  KW_DIFF_SEED       run only these seeds, comma separated (e.g. to reproduce a failure)
  KW_DIFF_SEED_BASE  first seed when KW_DIFF_SEED is not set (default 1)
  KW_DIFF_FAMILIES   template families (default strings,expiry,keys,server,hashes; also
                     lists, sets, zsets once the server has them)
"""

from __future__ import annotations

import os
import time

import pytest

from command_generator import DEFAULT_FAMILIES, TEMPLATES, Command, generate
from conftest import Map, ReplyError, encode_command

TTL_TOLERANCE = {"ttl_s": 1, "ttl_ms": 1000}
COMPARE_BY_NAME = {t.name: t.compare for t in TEMPLATES}
HISTORY = 12  # commands shown before a difference


def env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


def seeds() -> list[int]:
    if os.environ.get("KW_DIFF_SEED"):
        return [int(s) for s in os.environ["KW_DIFF_SEED"].split(",") if s.strip()]
    base = env_int("KW_DIFF_SEED_BASE", 1)
    return list(range(base, base + env_int("KW_DIFF_SEEDS", 50)))


def families() -> tuple[str, ...]:
    value = os.environ.get("KW_DIFF_FAMILIES")
    return tuple(f.strip() for f in value.split(",")) if value else DEFAULT_FAMILIES


# --------------------------------------------------------------------------------------------
# running and comparing
# --------------------------------------------------------------------------------------------

class Side:
    """One server's connection in a differential run."""

    def __init__(self, name, server, protocol: int):
        self.name = name
        self.conn = server.raw()
        if protocol == 3:
            hello = self.conn.execute("HELLO", "3")
            assert isinstance(hello, Map), f"{name}: HELLO 3 answered {hello!r}"

    def scan_all(self, args: list[bytes]):
        """Run a whole SCAN iteration; ('error', raw) or ('keys', sorted distinct keys).

        HSCAN/SSCAN/ZSCAN take the cursor after the key; HSCAN and ZSCAN items are pairs."""
        at = 1 if args[0].upper() == b"SCAN" else 2
        pairs = args[0].upper() in (b"HSCAN", b"ZSCAN")
        rest = args[at + 1:]
        reply, raw = _exec(self.conn, args)
        if not isinstance(reply, list):
            return ("reply", raw)
        if args[at] != b"0":
            # A valid non-zero cursor resumes an iteration whose order is the server's own
            # business (Redis even seeds its hash function at random): only the type counts.
            return ("resumed scan", raw[:1])
        keys: set[bytes] = set()
        for _ in range(100_000):
            cursor, batch = reply
            keys.update(zip(batch[::2], batch[1::2]) if pairs else batch)
            if cursor == b"0":
                return ("keys", sorted(keys))
            reply, raw = _exec(self.conn, [*args[:at], cursor, *rest])
            if not isinstance(reply, list):
                return ("reply", raw)
        raise AssertionError(f"{self.name}: SCAN never returned cursor 0")


def _exec(conn, args):
    conn.send(encode_command(*args))
    return conn.read_reply_with_raw()


def _sortable(items):
    return sorted(items, key=repr)


def compare_replies(mode: str, kw, ref) -> bool:
    """kw and ref are (parsed, raw) pairs."""
    (kv, kraw), (rv, rraw) = kw, ref
    if kraw == rraw:
        return True
    if kraw[:1] != rraw[:1]:  # different reply types never match
        return False
    if mode in TTL_TOLERANCE:
        return (isinstance(kv, int) and isinstance(rv, int) and kv >= 0 and rv >= 0
                and abs(kv - rv) <= TTL_TOLERANCE[mode])
    if mode == "unordered":
        return isinstance(kv, list) and isinstance(rv, list) and _sortable(kv) == _sortable(rv)
    if mode == "unordered_pairs":
        if isinstance(kv, Map) and isinstance(rv, Map):
            return _sortable(kv.items()) == _sortable(rv.items())
        if isinstance(kv, list) and isinstance(rv, list):
            pairs = lambda v: _sortable(zip(v[::2], v[1::2]))  # noqa: E731
            return len(kv) == len(rv) and pairs(kv) == pairs(rv)
    return False


class Difference(AssertionError):
    pass


class DifferentialRun:
    """Send each command to both servers and stop at the first difference."""

    def __init__(self, keywarden, reference, protocol: int, label: str, reproduce: str):
        self.kw = Side("keywarden", keywarden, protocol)
        self.ref = Side("redis", reference, protocol)
        self.protocol = protocol
        self.label = label
        self.reproduce = reproduce
        self.history: list[str] = []
        self.seen_args: set[bytes] = set()  # a superset of every key name used so far

    def fail(self, index: int, cmd: Command, kw_text, ref_text, note: str = ""):
        lines = [f"DIFFERENCE in {self.label} (RESP{self.protocol}) at command #{index}"
                 f" [{cmd.compare}]{' - ' + note if note else ''}",
                 f"  command:   {cmd}",
                 f"  keywarden: {kw_text!r}",
                 f"  redis:     {ref_text!r}",
                 "  previous commands:"]
        lines += [f"    {h}" for h in self.history[-HISTORY:]] or ["    (none)"]
        lines.append(f"  reproduce: {self.reproduce}")
        raise Difference("\n".join(lines))

    def run(self, commands: list[Command]) -> int:
        for index, cmd in enumerate(commands):
            self.step(index, cmd)
            self.history.append(f"#{index} {cmd}")
        return len(commands)

    def step(self, index: int, cmd: Command) -> None:
        args = cmd.encoded_args()
        self.seen_args.update(args[1:])
        if cmd.compare == "dbsize" and self.seen_args:
            # Lazy expiry on access, on both sides alike, so that DBSIZE does not depend on
            # whether one server's active expiry cycle happened to run.
            names = sorted(self.seen_args)
            for side in (self.kw, self.ref):
                reply = side.conn.execute("EXISTS", *names)
                if not isinstance(reply, int):
                    self.fail(index, cmd, reply, "an integer", "EXISTS before DBSIZE failed")
        if cmd.compare == "scan":
            k, r = self.kw.scan_all(args), self.ref.scan_all(args)
            if k != r:
                self.fail(index, cmd, k, r)
            return
        request = encode_command(*args)
        self.kw.conn.send(request)
        self.ref.conn.send(request)
        kw = self.kw.conn.read_reply_with_raw()
        ref = self.ref.conn.read_reply_with_raw()
        if cmd.compare == "randomkey":
            self.check_randomkey(index, cmd, kw, ref)
        elif cmd.compare == "random_members":
            self.check_random_members(index, cmd, args, kw, ref)
        elif not compare_replies(cmd.compare, kw, ref):
            self.fail(index, cmd, kw[1], ref[1])

    def check_random_members(self, index, cmd, args, kw, ref):
        """SPOP and SRANDMEMBER: the same reply type and size on both sides, distinct members
        where the command promises them, every member taken from the set. Two SPOPs that took
        different members leave different sets: the key is then rebuilt alike on both sides."""
        (kv, kraw), (rv, rraw) = kw, ref
        if kraw == rraw:
            return
        if kraw[:1] != rraw[:1] or isinstance(kv, ReplyError) or isinstance(rv, ReplyError):
            self.fail(index, cmd, kraw, rraw)

        def items(value):
            return [] if value is None else [value] if isinstance(value, bytes) else list(value)

        name, key = args[0].upper(), args[1]
        ki, ri = items(kv), items(rv)
        if len(ki) != len(ri):
            self.fail(index, cmd, kraw, rraw, "different sizes")
        distinct = name == b"SPOP" or (len(args) > 2 and not args[2].startswith(b"-"))
        if distinct and (len(set(ki)) != len(ki) or len(set(ri)) != len(ri)):
            self.fail(index, cmd, kraw, rraw, "a member repeated")
        if name == b"SRANDMEMBER":
            for side, got in ((self.kw, ki), (self.ref, ri)):
                unique = sorted(set(got))
                if unique and side.conn.execute("SMISMEMBER", key, *unique) != [1] * len(unique):
                    self.fail(index, cmd, kraw, rraw, f"{side.name} returned a non-member")
            return
        # SPOP: what one side popped and the other did not must still be in the other's set.
        for side, got, other in ((self.ref, ki, ri), (self.kw, ri, ki)):
            extra = sorted(set(got) - set(other))
            if extra and side.conn.execute("SMISMEMBER", key, *extra) != [1] * len(extra):
                self.fail(index, cmd, kraw, rraw, f"popped members {side.name} never had")
        if set(ki) != set(ri):
            self.resync_set(key)

    def resync_set(self, key: bytes) -> None:
        """Gives both servers Redis's members (and deadline) for `key`, built the same way."""
        members = self.ref.conn.execute("SMEMBERS", key)
        deadline = self.ref.conn.execute("PEXPIRETIME", key)
        for side in (self.kw, self.ref):
            side.conn.execute("DEL", key)
            if members:
                side.conn.execute("SADD", key, *members)
            if isinstance(deadline, int) and deadline > 0:
                side.conn.execute("PEXPIREAT", key, deadline)

    def check_randomkey(self, index, cmd, kw, ref):
        if kw[1] == ref[1]:
            return
        if not (isinstance(kw[0], bytes) and isinstance(ref[0], bytes)) \
                or isinstance(kw[0], ReplyError) or isinstance(ref[0], ReplyError) \
                or kw[1][:1] != ref[1][:1]:
            self.fail(index, cmd, kw[1], ref[1])
        for side, (key, raw) in ((self.kw, kw), (self.ref, ref)):
            if side.conn.execute("EXISTS", key) != 1:
                self.fail(index, cmd, kw[1], ref[1], f"{side.name} returned a key it does not have")


# --------------------------------------------------------------------------------------------
# (b) seeded random sequences
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", seeds(), ids=lambda s: f"seed{s}")
def test_random_sequence(keywarden, reference_redis, seed):
    count = env_int("KW_DIFF_COMMANDS", 400)
    fams = families()
    commands = generate(seed, count, fams)
    protocol = 3 if seed % 2 else 2
    reproduce = (f"KW_DIFF_SEED={seed} KW_DIFF_COMMANDS={count}"
                 + (f" KW_DIFF_FAMILIES={','.join(fams)}" if fams != DEFAULT_FAMILIES else "")
                 + " /usr/bin/python3 -m pytest tests/compat -k random"
                 + f"   (list it: /usr/bin/python3 tests/compat/command_generator.py --seed {seed}"
                 f" --count {count})")
    run = DifferentialRun(keywarden, reference_redis, protocol, f"seed {seed}", reproduce)
    assert run.run(commands) == count


# --------------------------------------------------------------------------------------------
# (a) hand-written sequences
# --------------------------------------------------------------------------------------------

# One command per line, split by split_line(). {future_s}/{future_ms} are ~1 day ahead, {past_s}/{past_ms}
# ~1 day back. Relative TTLs are large and distinct: no key may expire during a sequence, and
# no NX/XX/GT/LT decision may depend on which millisecond a server ran the command.
SEQUENCES: dict[str, str] = {
    "set-options": r"""
        SET k v NX
        SET k v2 NX
        SET k v3 XX GET
        SET nokey v XX
        SET nokey v NX GET
        GET nokey
        SET k v4 GET NX
        SET k v NX XX
        SET k v EX 1000 PX 5000
        SET k v KEEPTTL EX 1000
        SET k v EXAT {future_s} PXAT {future_ms}
        SET k v EX 0
        SET k v EX -5
        SET k v PX 0
        SET k v EXAT 0
        SET k v EX abc
        SET k v EX 1.5
        SET k v EX
        SET k v FOO
        SET k v EX 9223372036854775807
        SET k v PX 9223372036854775807
        SET k v EXAT 9223372036854775807
        SET k v PXAT 9223372036854775807
        PTTL k
        SET k v EX 2000
        TTL k
        SET k v2 KEEPTTL
        TTL k
        set k v3 keepttl get
        TTL k
        SET k v4
        TTL k
        SET k v PX 3000000
        PTTL k
        SET k v EXAT {future_s}
        EXPIRETIME k
        SET k v PXAT {future_ms}
        PEXPIRETIME k
        SET k v EXAT {past_s}
        EXISTS k
        SET k v PXAT {past_ms} GET
        EXISTS k
        SET k v GET GET
        SET k
        SET k v ex 4000 nx
        SET k v ex 5000 xx get
        TTL k
        SETNX k x
        SETNX k2 x
        SETEX k 6000 v
        TTL k
        SETEX k 0 v
        SETEX k -1 v
        SETEX k abc v
        PSETEX k 7000000 v
        PTTL k
        PSETEX k 0 v
        SETEX k 100
        """,
    "counters": r"""
        INCR n
        INCRBY n 10
        DECR n
        DECRBY n 20
        INCRBY n abc
        INCRBY n 1.5
        SET n 9223372036854775806
        INCR n
        INCR n
        INCRBY n -1
        SET n -9223372036854775807
        DECR n
        DECR n
        DECRBY n 1
        SET n 0
        DECRBY n -9223372036854775808
        INCRBY n -9223372036854775808
        INCRBY n 9223372036854775808
        SET s 007
        INCR s
        SET s " 1"
        INCR s
        SET s 1.0
        INCR s
        SET s ""
        INCR s
        SET s abc
        DECR s
        SET s 18446744073709551615
        INCR s
        SET s -0
        INCR s
        GET s
        SET s +5
        INCR s
        INCR s x
        INCR
        """,
    "incrbyfloat-format": r"""
        INCRBYFLOAT f 0.1
        INCRBYFLOAT f 0.2
        GET f
        INCRBYFLOAT f -0.3
        INCRBYFLOAT f 3.0
        INCRBYFLOAT f 1.5e2
        INCRBYFLOAT f 5.0e3
        INCRBYFLOAT f -5153
        INCRBYFLOAT f 1e-5
        INCRBYFLOAT f 17.0000001
        SET g 10
        INCRBYFLOAT g 0
        OBJECT ENCODING g
        INCRBYFLOAT g 1e308
        INCRBYFLOAT g 1e308
        INCRBYFLOAT g 1.7976931348623157e308
        SET g 1e400
        INCRBYFLOAT g 1
        SET g 1
        INCRBYFLOAT g inf
        INCRBYFLOAT g -inf
        INCRBYFLOAT g nan
        INCRBYFLOAT g abc
        INCRBYFLOAT g ""
        INCRBYFLOAT g " 1"
        SET g abc
        INCRBYFLOAT g 1
        SET g 1.5abc
        INCRBYFLOAT g 1
        SET g 0x10
        INCRBYFLOAT g 1
        SET h 3
        INCRBYFLOAT h 0.5
        INCRBYFLOAT h -3.5
        GET h
        INCRBYFLOAT h -0.0
        INCRBYFLOAT h 1.23456789012345678
        INCRBYFLOAT h 100000000000000000000
        INCRBYFLOAT h 1e-20
        INCRBYFLOAT h 0.1 0.2
        """,
    "ranges": r"""
        SET s "Hello World"
        GETRANGE s 0 4
        GETRANGE s -5 -1
        GETRANGE s 5 2
        GETRANGE s 0 1000
        GETRANGE s -1000 3
        GETRANGE s -1000 -900
        GETRANGE s 11 11
        GETRANGE s 10 10
        GETRANGE s 0 -1
        GETRANGE s 9223372036854775807 9223372036854775807
        GETRANGE s -9223372036854775808 9223372036854775807
        GETRANGE s a 1
        GETRANGE s 0
        GETRANGE nokey 0 -1
        SUBSTR s 6 -1
        SUBSTR s 0 0
        SETRANGE s 6 Redis
        GET s
        SETRANGE s 20 x
        GET s
        STRLEN s
        SETRANGE s 0 ""
        SETRANGE nokey 0 ""
        SETRANGE nokey 5 ""
        EXISTS nokey
        SETRANGE pad 3 abc
        GET pad
        SETRANGE s -1 x
        SETRANGE s abc x
        SETRANGE s 536870912 x
        SETRANGE s 536870911 xx
        SETRANGE s 536870912 ""
        SETRANGE nokey 536870912 ""
        SETRANGE s 9223372036854775807 x
        SET n 12345
        SETRANGE n 1 9
        GET n
        OBJECT ENCODING n
        APPEND n 6
        STRLEN n
        STRLEN nokey
        APPEND new abc
        APPEND new ""
        APPEND new2 ""
        EXISTS new2
        """,
    "lcs": r"""
        MSET a ohmytext b mynewtext
        LCS a b
        LCS a b LEN
        LCS a b IDX
        LCS a b IDX MINMATCHLEN 4
        LCS a b IDX WITHMATCHLEN
        LCS a b IDX MINMATCHLEN 2 WITHMATCHLEN
        LCS a b idx minmatchlen 0 withmatchlen
        LCS a b LEN IDX
        LCS a b MINMATCHLEN abc
        LCS a b MINMATCHLEN -1 IDX
        LCS a b FOO
        LCS a nokey
        LCS nokey nokey2 IDX
        LCS a a
        LCS a
        SET c ""
        LCS a c IDX
        MSET x "the quick brown fox" y "a quick brown dog"
        LCS x y
        LCS x y IDX WITHMATCHLEN
        """,
    "expire-options": r"""
        SET k v
        EXPIRE k 1000 XX
        EXPIRE k 1000 GT
        TTL k
        EXPIRE k 1000 LT
        TTL k
        EXPIRE k 2000 NX
        EXPIRE k 2100 GT
        TTL k
        EXPIRE k 1500 GT
        EXPIRE k 1400 LT
        TTL k
        EXPIRE k 3000 XX
        TTL k
        EXPIRE k 10 NX XX
        EXPIRE k 10 GT LT
        EXPIRE k 10 NX GT
        EXPIRE k 3100 XX GT
        EXPIRE k 3200 gt xx
        TTL k
        EXPIRE k 10 FOO
        EXPIRE k 10 1
        PEXPIRE k 4000000 GT
        PTTL k
        EXPIREAT k {future_s} LT
        EXPIRETIME k
        PEXPIREAT k {future_ms} GT
        PEXPIRETIME k
        PERSIST k
        EXPIREAT k {future_s} GT
        EXPIREAT k {future_s} LT
        EXPIRETIME k
        PERSIST k
        PEXPIREAT k {future_ms} XX
        PEXPIREAT k {future_ms} NX
        PEXPIRETIME k
        EXPIRE k -1 GT
        EXISTS k
        SET k v
        EXPIRE k -1 XX
        EXISTS k
        EXPIRE k -1 LT
        EXISTS k
        EXPIRE nokey 1000 NX
        """,
    "expire-edges": r"""
        SET k v
        TTL k
        PTTL k
        EXPIRETIME k
        PEXPIRETIME k
        TTL nokey
        PTTL nokey
        EXPIRETIME nokey
        PEXPIRETIME nokey
        EXPIRE nokey 1000
        EXPIRE k abc
        EXPIRE k 1.5
        EXPIRE k ""
        EXPIRE k 9223372036854775807
        EXPIRE k -9223372036854775808
        EXPIRE k 9223372036854775
        PEXPIRE k 9223372036854775807
        EXPIREAT k 9223372036854775807
        PEXPIREAT k 9223372036854775807
        TTL k
        PTTL k
        PEXPIRETIME k
        EXPIREAT k 9223372036854775
        EXPIRETIME k
        PEXPIRE k 4611686018427387904
        PERSIST k
        PERSIST k
        PERSIST nokey
        TTL k
        EXPIRE k 0
        EXISTS k
        SET k v
        PEXPIRE k -5
        EXISTS k
        SET k v
        EXPIREAT k {past_s}
        EXISTS k
        SET k v
        PEXPIREAT k {past_ms}
        EXISTS k
        SET k v
        EXPIREAT k 0
        EXISTS k
        SET k v
        PEXPIREAT k -1
        GET k
        SET k v
        EXPIRE k
        EXPIRE
        TTL
        TTL k k
        EXPIRETIME
        """,
    "getex": r"""
        SET k v
        GETEX k
        GETEX k EX 1000
        TTL k
        GETEX k PX 2000000
        PTTL k
        GETEX k EXAT {future_s}
        EXPIRETIME k
        GETEX k PXAT {future_ms}
        PEXPIRETIME k
        GETEX k PERSIST
        TTL k
        GETEX k EX 0
        GETEX k EX -1
        GETEX k PX 0
        GETEX k EX abc
        GETEX k EX
        GETEX k EX 1000 PX 2000
        GETEX k EX 1000 PERSIST
        GETEX k PERSIST PERSIST
        GETEX k FOO
        GETEX k EX 9223372036854775807
        GETEX k ex 3000
        TTL k
        GETEX nokey EX 1000
        GETEX nokey PERSIST
        GETEX k EXAT {past_s}
        EXISTS k
        SET k v
        GETEX k PXAT {past_ms}
        GET k
        GETEX
        GETDEL
        GETDEL nokey
        SET k v EX 5000
        GETDEL k
        TTL k
        GETSET k new
        GETSET k newer
        SET k v EX 5000
        GETSET k w
        TTL k
        GETSET k
        """,
    "multi-key": r"""
        MSET a 1 b 2 c 3
        MGET a b c nokey a
        MSET a 1 b
        MSET
        MSET a x a y
        GET a
        MSETNX a 1 z 2
        EXISTS z
        MSETNX y 1 z 2
        MGET y z
        MSETNX q 1 q 2
        GET q
        MSETNX q
        MGET
        DEL a b nokey a
        EXISTS a a a b y y
        UNLINK y z nokey
        TOUCH q nokey q
        DEL
        EXISTS
        DBSIZE
        DBSIZE x
        """,
    "keyspace": r"""
        SET k v EX 1000
        TYPE k
        TYPE nokey
        RENAME k k2
        TTL k2
        EXISTS k
        RENAME k2 k2
        RENAME nokey x
        RENAMENX nokey x
        SET other v
        RENAMENX k2 other
        RENAMENX k2 k2
        RENAMENX k2 fresh
        TTL fresh
        RENAME fresh other
        TTL other
        GET other
        COPY other c1
        TTL c1
        COPY other c1
        COPY other c1 REPLACE
        COPY other other
        COPY other c2 DB 1
        COPY other c2 DB 1
        COPY other c2 DB 1 REPLACE
        COPY other c2 DB 16
        COPY other c2 DB abc
        COPY other c2 DB
        COPY other c2 FOO
        COPY nokey c3
        COPY other
        MOVE other 1
        MOVE c1 0
        MOVE c1 16
        MOVE c1 -1
        MOVE c1 abc
        MOVE nokey 1
        MOVE c1 1
        EXISTS c1
        SELECT 1
        KEYS *
        TTL other
        GET c2
        MOVE other 0
        SELECT 0
        MOVE c1 1
        RENAME
        TYPE
        """,
    "databases": r"""
        SET a 0
        SELECT 1
        SET a 1
        SET b 1
        SELECT 2
        DBSIZE
        SWAPDB 1 2
        DBSIZE
        KEYS *
        SELECT 1
        DBSIZE
        SWAPDB 0 0
        SWAPDB 0 16
        SWAPDB -1 0
        SWAPDB a 0
        SWAPDB 0
        SELECT 16
        SELECT -1
        SELECT abc
        SELECT 15
        SET z 15
        SELECT 0
        COPY a a DB 15
        COPY a z DB 15
        COPY a z DB 15 REPLACE
        SELECT 15
        GET z
        FLUSHDB
        DBSIZE
        SELECT 2
        DBSIZE
        FLUSHDB ASYNC
        DBSIZE
        SELECT 0
        DBSIZE
        FLUSHDB FOO
        FLUSHALL SYNC
        FLUSHALL FOO
        DBSIZE
        SELECT 1
        DBSIZE
        """,
    "keys-globs": r"""
        MSET hello 1 hallo 1 hxllo 1 hllo 1 heeeello 1 a*b 1 [a] 1 k1 1 k10 1 K1 1 x\y 1 ^x 1 - 1 ] 1
        KEYS *
        KEYS h?llo
        KEYS h*llo
        KEYS h[ae]llo
        KEYS h[^e]llo
        KEYS h[a-b]llo
        KEYS h[b-a]llo
        KEYS k?
        KEYS k*
        KEYS K*
        KEYS *1*
        KEYS a\*b
        KEYS a*b
        KEYS \[a\]
        KEYS [[]a]
        KEYS [
        KEYS [a-
        KEYS \
        KEYS x\\y
        KEYS x\y
        KEYS [\^]x
        KEYS ^*
        KEYS [-]
        KEYS []]
        KEYS [\]]
        KEYS ?
        KEYS ??
        KEYS *[
        KEYS k[!1]*
        KEYS ***llo
        KEYS h*l*o
        KEYS nomatch
        KEYS ""
        KEYS
        KEYS a b
        """,
    "object-encoding": r"""
        SET i 12345
        OBJECT ENCODING i
        SET i -9223372036854775808
        OBJECT ENCODING i
        SET i 9223372036854775808
        OBJECT ENCODING i
        SET i 12345678901234567890
        OBJECT ENCODING i
        SET i 007
        OBJECT ENCODING i
        SET i -0
        OBJECT ENCODING i
        SET i " 1"
        OBJECT ENCODING i
        SET i 0
        OBJECT ENCODING i
        SET s 01234567890123456789012345678901234567890123
        OBJECT ENCODING s
        SET s 012345678901234567890123456789012345678901234
        OBJECT ENCODING s
        SET s hello
        OBJECT ENCODING s
        APPEND s x
        OBJECT ENCODING s
        SET n 10
        INCR n
        OBJECT ENCODING n
        INCRBYFLOAT n 1.5
        OBJECT ENCODING n
        SETRANGE n 0 9
        OBJECT ENCODING n
        SET n 20000
        COPY n n2
        OBJECT ENCODING n2
        RENAME n2 n3
        OBJECT ENCODING n3
        GETSET n3 abc
        OBJECT ENCODING n3
        SETEX e 1000 12
        OBJECT ENCODING e
        GETEX e PERSIST
        OBJECT ENCODING e
        MSET m1 5 m2 xyz
        OBJECT ENCODING m1
        OBJECT ENCODING m2
        OBJECT ENCODING nokey
        OBJECT ENCODING
        OBJECT encoding i
        OBJECT FREQ i
        OBJECT NOSUCH i
        OBJECT
        OBJECT HELP
        """,
    "arity-and-unknown": r"""
        GET
        GET a b
        SET a
        SETNX a
        SETEX a 100
        PSETEX a 100
        GETEX
        GETDEL a b
        GETSET a
        MGET
        MSET a
        MSETNX a
        APPEND a
        STRLEN
        INCR
        DECR a b
        INCRBY a
        DECRBY a
        INCRBYFLOAT a
        GETRANGE a 0
        SUBSTR a
        SETRANGE a 0
        LCS a
        EXPIRE a
        PEXPIRE a
        EXPIREAT a
        PEXPIREAT a
        TTL
        PTTL
        EXPIRETIME a b
        PEXPIRETIME
        PERSIST
        DEL
        UNLINK
        EXISTS
        TYPE
        KEYS
        RENAME a
        RENAMENX a
        COPY a
        MOVE a
        SWAPDB 0
        SELECT
        DBSIZE a
        TOUCH
        RANDOMKEY a
        ECHO
        ECHO a b
        PING a b
        FOO
        FOO a b c
        foo bar
        GETT a
        OBJECT
        OBJECT FOO
        """,
    "scan": r"""
        MSET a 1 b 2 c 3 k1 1 k2 2 k10 10 hello x
        SCAN 0
        SCAN 0 COUNT 1
        SCAN 0 COUNT 1000
        SCAN 0 MATCH k*
        SCAN 0 MATCH k? COUNT 2
        SCAN 0 TYPE string
        SCAN 0 TYPE list
        SCAN 0 TYPE foo
        SCAN 0 MATCH * TYPE string COUNT 3
        SCAN 0 COUNT 0
        SCAN 0 COUNT -1
        SCAN 0 COUNT abc
        SCAN 0 MATCH
        SCAN 0 FOO bar
        SCAN abc
        SCAN -1
        SCAN 18446744073709551616
        SCAN
        RANDOMKEY
        FLUSHDB
        RANDOMKEY
        SCAN 0
        """,
    "sets": r"""
        SADD s 3 1 2 1
        SMEMBERS s
        OBJECT ENCODING s
        SADD s -9223372036854775808 9223372036854775807 100000 1
        SMEMBERS s
        SISMEMBER s 02
        SISMEMBER s 1
        SMISMEMBER s 1 x 100000 1
        SMISMEMBER nokey a b
        SADD s x
        OBJECT ENCODING s
        SREM s x
        OBJECT ENCODING s
        SMEMBERS s
        SADD w b a "" c
        SMEMBERS w
        SCARD w
        SREM w a zz ""
        SREM w b c
        EXISTS w
        SET str x
        SADD str a
        SREM str a
        SMEMBERS str
        SCARD str
        SISMEMBER str a
        SMISMEMBER str a
        SPOP str
        SPOP str 0
        SPOP str -1
        SRANDMEMBER str
        SRANDMEMBER str 0
        SRANDMEMBER str abc
        SPOP nokey
        SPOP nokey 3
        SPOP s 0
        SPOP s -1
        SPOP s abc
        SPOP s ""
        SPOP s 1 2
        SRANDMEMBER nokey
        SRANDMEMBER nokey 3
        SRANDMEMBER s 0
        SRANDMEMBER s -9223372036854775808
        SRANDMEMBER s 1.5
        SRANDMEMBER s 1 2
        SRANDMEMBER s 100
        SRANDMEMBER s 9223372036854775807
        SRANDMEMBER s -5
        SMOVE nokey str a
        SMOVE s str 1
        SMOVE str s 1
        SMOVE s s 1
        SMOVE s s 99
        SMOVE s d 1
        SMOVE s d 99
        SMEMBERS d
        OBJECT ENCODING d
        SADD e 2 3 4 y
        SINTER s e
        SINTER s nokey str
        SINTER nokey str
        SINTERCARD 2 s e
        SINTERCARD 2 s e LIMIT 1
        SINTERCARD 2 s e limit 0
        SINTERCARD 2 s e LIMIT 1 LIMIT 2
        SINTERCARD 2 s LIMIT
        SINTERCARD 0 s
        SINTERCARD -1 s
        SINTERCARD abc s
        SINTERCARD 3 s e
        SINTERCARD 9223372036854775807 s
        SINTERCARD 1 s LIMIT
        SINTERCARD 1 s LIMIT -1
        SINTERCARD 1 str LIMIT abc
        SINTERCARD 1 s FOO
        SINTERCARD 1 str
        SINTERSTORE dst s e
        SMEMBERS dst
        OBJECT ENCODING dst
        SINTERSTORE dst s nokey
        EXISTS dst
        SINTERSTORE dst s nokey
        SINTERSTORE dst nokey str
        SUNION s e nokey
        SUNIONSTORE dst s e
        SMEMBERS dst
        OBJECT ENCODING dst
        SDIFF s e
        SDIFF e s
        SDIFF s s
        SDIFF s e s
        SDIFF nokey s
        SDIFFSTORE dst e s
        SMEMBERS dst
        SDIFFSTORE dst s s
        EXISTS dst
        SET dst x EX 1000
        SUNIONSTORE dst s
        TTL dst
        TYPE dst
        SUNION str s
        SDIFF str nokey
        SDIFFSTORE dst nokey str
        SUNIONSTORE str nokey
        TYPE str
        SSCAN s 0
        SSCAN s abc
        SSCAN nokey 0 COUNT 0
        SSCAN s 0 COUNT 0
        SSCAN s 0 COUNT abc
        SSCAN s 0 MATCH
        SSCAN s 0 TYPE set
        SSCAN s 0 MATCH 1*
        SPOP e 4
        EXISTS e
        SPOP s 100
        EXISTS s
        SADD s
        SMOVE a b
        SINTERCARD 1
        """,
    "ping-echo": r"""
        PING
        PING hello
        PING ""
        ECHO hello
        ECHO ""
        ECHO "a b c"
        SELECT 0
        DBSIZE
        """,
}


def split_line(line: str) -> list[str]:
    """Split on spaces; "double quotes" group words (and "" is an empty argument). Nothing
    else is special: backslashes reach the server as typed, which glob patterns need."""
    args, i = [], 0
    while i < len(line):
        if line[i] == " ":
            i += 1
        elif line[i] == '"':
            end = line.index('"', i + 1)
            args.append(line[i + 1:end])
            i = end + 1
        else:
            end = line.find(" ", i)
            end = len(line) if end < 0 else end
            args.append(line[i:end])
            i = end
    return args


def sequence_commands(text: str) -> list[Command]:
    now = int(time.time())
    times = {"future_s": now + 86_400 + 7, "future_ms": (now + 86_400 + 9) * 1000 + 321,
             "past_s": now - 86_400, "past_ms": (now - 86_400) * 1000 - 123}
    commands = []
    for line in text.strip().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        args = split_line(line.format(**times))
        compare = COMPARE_BY_NAME.get(args[0].upper(), "exact")
        commands.append(Command(args, compare, args[0].upper()))
    return commands


@pytest.mark.parametrize("protocol", [2, 3], ids=["resp2", "resp3"])
@pytest.mark.parametrize("name", list(SEQUENCES))
def test_handwritten_sequence(keywarden, reference_redis, name, protocol):
    reproduce = f"/usr/bin/python3 -m pytest 'tests/compat/test_differential.py::" \
                f"test_handwritten_sequence[{name}-resp{protocol}]'"
    run = DifferentialRun(keywarden, reference_redis, protocol, f"sequence '{name}'", reproduce)
    run.run(sequence_commands(SEQUENCES[name]))


def test_generator_is_deterministic():
    a = generate(1234, 200, now_s=1_700_000_000)
    b = generate(1234, 200, now_s=1_700_000_000)
    assert [c.args for c in a] == [c.args for c in b]
    assert {c.template for c in generate(99, 3000)} >= {"SET", "GETEX", "LCS", "SCAN", "COPY"}


# --------------------------------------------------------------------------------------------
# the harness itself
# --------------------------------------------------------------------------------------------

def test_compare_modes():
    def r(value, raw):
        return (value, raw)
    assert compare_replies("exact", r(1, b":1\r\n"), r(1, b":1\r\n"))
    assert not compare_replies("exact", r(b"OK", b"+OK\r\n"), r(b"OK", b"$2\r\nOK\r\n"))
    assert compare_replies("ttl_s", r(99, b":99\r\n"), r(100, b":100\r\n"))
    assert not compare_replies("ttl_s", r(98, b":98\r\n"), r(100, b":100\r\n"))
    assert not compare_replies("ttl_s", r(-1, b":-1\r\n"), r(0, b":0\r\n"))
    assert compare_replies("ttl_ms", r(99_500, b":99500\r\n"), r(100_000, b":100000\r\n"))
    assert compare_replies("unordered", r([b"a", b"b"], b"*2..a..b"), r([b"b", b"a"], b"*2..b..a"))
    assert not compare_replies("unordered", r([b"a"], b"*1..a"), r([b"b"], b"*1..b"))
    assert compare_replies("unordered_pairs", r([b"f", b"1", b"g", b"2"], b"*4.f1g2"),
                           r([b"g", b"2", b"f", b"1"], b"*4.g2f1"))
    assert not compare_replies("unordered_pairs", r([b"f", b"1", b"g", b"2"], b"*4.f1g2"),
                               r([b"f", b"2", b"g", b"1"], b"*4.f2g1"))


def test_harness_reports_a_difference(keywarden, reference_redis):
    with keywarden.raw() as conn:
        conn.execute("SET", "only-here", "1")
    run = DifferentialRun(keywarden, reference_redis, 2, "self-test", "n/a")
    with pytest.raises(Difference) as info:
        run.run(sequence_commands("""
            SET a 1
            GET only-here
            GET a
        """))
    text = str(info.value)
    assert "at command #1" in text and "GET only-here" in text
    assert "b'$1\\r\\n1\\r\\n'" in text and "b'$-1\\r\\n'" in text
    assert "#0 SET a 1" in text
