"""Bitmap commands against a stock redis-server 7.0: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP,
BITFIELD and BITFIELD_RO, their options and every error, compared byte for byte.

* hand-written cases: each runs on both servers after the same setup, raw replies compared;
* side effects: OBJECT ENCODING, TTL, the change counter (what Redis counts is what it
  propagates) and the keyspace events of each write;
* MULTI/EXEC and EVAL forms;
* a seeded random run of SETBIT/GETBIT/BITCOUNT/BITPOS/BITOP/BITFIELD over a few keys, replies
  and final values compared (KW_BITMAP_STEPS, default 3000; KW_BITMAP_SEED to pick the seed);
* persistence: a bitmap survives DEBUG RELOAD and a SAVE + restart.
"""

from __future__ import annotations

import os
import random

import pytest

from conftest import wait_until

SETUP = [
    ("SET", "s", "foobar"),
    ("SET", "int", "123"),
    ("SET", "neg", "-9223372036854775808"),
    ("SET", "empty", ""),
    ("SET", "ff", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"),
    ("SET", "zeros", "\x00" * 40),
    ("SET", "long", "The quick brown fox jumps over the lazy dog, twice and more: " * 3),
    ("SETBIT", "sparse", "1000", "1"),
    ("SETBIT", "sparse", "7", "1"),
    ("HSET", "hash", "f", "v"),
    ("RPUSH", "list", "a"),
    ("SET", "ttl", "\x0f\xf0"),
    ("PEXPIRE", "ttl", "100000"),
]

INT64_MAX = "9223372036854775807"
INT64_MIN = "-9223372036854775808"

CASES = [
    # --- SETBIT --------------------------------------------------------------------------
    ("SETBIT", "new", "0", "1"),
    ("SETBIT", "new", "7", "0"),
    ("SETBIT", "new", "100", "1"),
    ("SETBIT", "s", "1", "0"),
    ("SETBIT", "s", "1", "1"),
    ("SETBIT", "s", "0", "1"),
    ("SETBIT", "s", "47", "1"),
    ("SETBIT", "s", "48", "0"),
    ("SETBIT", "int", "0", "0"),
    ("SETBIT", "int", "2", "1"),
    ("SETBIT", "int", "30", "1"),
    ("SETBIT", "empty", "0", "0"),
    ("SETBIT", "ttl", "0", "1"),
    ("SETBIT", "s", "-1", "1"),
    ("SETBIT", "s", "4294967296", "1"),
    ("SETBIT", "s", "4294967295x", "1"),
    ("SETBIT", "s", "abc", "1"),
    ("SETBIT", "s", "", "1"),
    ("SETBIT", "s", " 1", "1"),
    ("SETBIT", "s", "01", "1"),
    ("SETBIT", "s", "1.0", "1"),
    ("SETBIT", "s", INT64_MAX, "1"),
    ("SETBIT", "s", INT64_MIN, "1"),
    ("SETBIT", "s", "0", "2"),
    ("SETBIT", "s", "0", "-1"),
    ("SETBIT", "s", "0", "x"),
    ("SETBIT", "s", "0", ""),
    ("SETBIT", "s", "0", "01"),
    ("SETBIT", "s", "x", "2"),
    ("SETBIT", "hash", "0", "1"),
    ("SETBIT", "hash", "x", "1"),
    ("SETBIT", "hash", "0", "5"),
    ("SETBIT", "s", "0"),
    ("SETBIT", "s", "0", "1", "1"),
    ("setbit", "s", "3", "1"),
    # --- GETBIT --------------------------------------------------------------------------
    ("GETBIT", "s", "0"),
    ("GETBIT", "s", "1"),
    ("GETBIT", "s", "2"),
    ("GETBIT", "s", "47"),
    ("GETBIT", "s", "48"),
    ("GETBIT", "s", "1000000"),
    ("GETBIT", "int", "2"),
    ("GETBIT", "int", "3"),
    ("GETBIT", "int", "23"),
    ("GETBIT", "int", "24"),
    ("GETBIT", "neg", "2"),
    ("GETBIT", "sparse", "1000"),
    ("GETBIT", "sparse", "999"),
    ("GETBIT", "missing", "5"),
    ("GETBIT", "missing", "-1"),
    ("GETBIT", "s", "-1"),
    ("GETBIT", "s", "4294967296"),
    ("GETBIT", "s", "4294967295"),
    ("GETBIT", "s", "x"),
    ("GETBIT", "hash", "0"),
    ("GETBIT", "hash", "-1"),
    ("GETBIT", "s"),
    ("GETBIT", "s", "1", "2"),
    # --- BITCOUNT ------------------------------------------------------------------------
    ("BITCOUNT", "s"),
    ("BITCOUNT", "int"),
    ("BITCOUNT", "neg"),
    ("BITCOUNT", "ff"),
    ("BITCOUNT", "zeros"),
    ("BITCOUNT", "long"),
    ("BITCOUNT", "sparse"),
    ("BITCOUNT", "empty"),
    ("BITCOUNT", "empty", "0", "-1"),
    ("BITCOUNT", "missing"),
    ("BITCOUNT", "missing", "0", "1"),
    ("BITCOUNT", "missing", "a", "b"),
    ("BITCOUNT", "missing", "0"),
    ("BITCOUNT", "missing", "0", "1", "bit", "x"),
    ("BITCOUNT", "s", "0", "0"),
    ("BITCOUNT", "s", "1", "1"),
    ("BITCOUNT", "s", "1", "3"),
    ("BITCOUNT", "s", "0", "-1"),
    ("BITCOUNT", "s", "-1", "-1"),
    ("BITCOUNT", "s", "-2", "-1"),
    ("BITCOUNT", "s", "-100", "100"),
    ("BITCOUNT", "s", "-100", "-90"),
    ("BITCOUNT", "s", "-1", "-2"),
    ("BITCOUNT", "s", "-1", "-2", "foo"),
    ("BITCOUNT", "s", "3", "1"),
    ("BITCOUNT", "s", "5", "100"),
    ("BITCOUNT", "s", "6", "100"),
    ("BITCOUNT", "s", INT64_MIN, INT64_MAX),
    ("BITCOUNT", "s", INT64_MAX, INT64_MIN),
    ("BITCOUNT", "s", "0", "0", "BIT"),
    ("BITCOUNT", "s", "1", "1", "bit"),
    ("BITCOUNT", "s", "1", "2", "bit"),
    ("BITCOUNT", "s", "5", "30", "BIT"),
    ("BITCOUNT", "s", "0", "-1", "BIT"),
    ("BITCOUNT", "s", "-1", "-1", "BIT"),
    ("BITCOUNT", "s", "-9", "-2", "BIT"),
    ("BITCOUNT", "s", "-48", "-1", "BIT"),
    ("BITCOUNT", "s", "-1000", "1000", "BIT"),
    ("BITCOUNT", "s", "3", "3", "BIT"),
    ("BITCOUNT", "s", "7", "8", "BIT"),
    ("BITCOUNT", "ff", "3", "131", "BIT"),
    ("BITCOUNT", "ff", "9", "14", "bit"),
    ("BITCOUNT", "long", "13", "1000", "bit"),
    ("BITCOUNT", "int", "0", "23", "BIT"),
    ("BITCOUNT", "s", "0", "1", "BYTE"),
    ("BITCOUNT", "s", "0", "1", "byte"),
    ("BITCOUNT", "s", "0", "1", "bits"),
    ("BITCOUNT", "s", "0", "1", "bit\x00x"),
    ("BITCOUNT", "s", "0", "1", ""),
    ("BITCOUNT", "s", "0"),
    ("BITCOUNT", "s", "0", "1", "bit", "bit"),
    ("BITCOUNT", "s", "x", "1"),
    ("BITCOUNT", "s", "1", "x"),
    ("BITCOUNT", "s", "x", "1", "foo"),
    ("BITCOUNT", "s", "0", "1.5"),
    ("BITCOUNT", "hash"),
    ("BITCOUNT", "hash", "x", "y"),
    ("BITCOUNT",),
    # --- BITPOS --------------------------------------------------------------------------
    ("BITPOS", "s", "1"),
    ("BITPOS", "s", "0"),
    ("BITPOS", "ff", "0"),
    ("BITPOS", "ff", "1"),
    ("BITPOS", "zeros", "1"),
    ("BITPOS", "zeros", "0"),
    ("BITPOS", "sparse", "1"),
    ("BITPOS", "sparse", "1", "1"),
    ("BITPOS", "sparse", "1", "2"),
    ("BITPOS", "sparse", "1", "2", "-1"),
    ("BITPOS", "sparse", "1", "1", "-1", "bit"),
    ("BITPOS", "sparse", "1", "8", "-1", "bit"),
    ("BITPOS", "sparse", "1", "8", "999", "bit"),
    ("BITPOS", "sparse", "1", "8", "1000", "bit"),
    ("BITPOS", "sparse", "1", "1001", "-1", "bit"),
    ("BITPOS", "sparse", "0", "0", "-1", "bit"),
    ("BITPOS", "int", "1"),
    ("BITPOS", "int", "0"),
    ("BITPOS", "int", "0", "1"),
    ("BITPOS", "empty", "0"),
    ("BITPOS", "empty", "1"),
    ("BITPOS", "empty", "0", "0"),
    ("BITPOS", "empty", "0", "0", "-1"),
    ("BITPOS", "missing", "0"),
    ("BITPOS", "missing", "1"),
    ("BITPOS", "missing", "1", "x"),
    ("BITPOS", "missing", "1", "0", "1", "foo"),
    ("BITPOS", "missing", "2"),
    ("BITPOS", "missing", "x"),
    ("BITPOS", "ff", "0", "0"),
    ("BITPOS", "ff", "0", "5"),
    ("BITPOS", "ff", "0", "0", "-1"),
    ("BITPOS", "ff", "0", "-3"),
    ("BITPOS", "ff", "0", "100"),
    ("BITPOS", "ff", "0", "0", "-1", "bit"),
    ("BITPOS", "ff", "0", "0", "-1", "byte"),
    ("BITPOS", "ff", "1", "3", "3", "bit"),
    ("BITPOS", "ff", "1", "3", "2", "bit"),
    ("BITPOS", "s", "1", "2", "-1"),
    ("BITPOS", "s", "0", "2", "-1"),
    ("BITPOS", "s", "1", "-1"),
    ("BITPOS", "s", "1", "-100"),
    ("BITPOS", "s", "1", "100"),
    ("BITPOS", "s", "0", "100"),
    ("BITPOS", "s", "1", "3", "1"),
    ("BITPOS", "s", "1", "-1", "-2"),
    ("BITPOS", "s", "1", "-100", "-90"),
    ("BITPOS", "s", "0", "-100", "-90"),
    ("BITPOS", "s", "1", "7", "15", "bit"),
    ("BITPOS", "s", "0", "7", "15", "BIT"),
    ("BITPOS", "s", "1", "10", "12", "bit"),
    ("BITPOS", "s", "0", "1", "1", "bit"),
    ("BITPOS", "s", "0", "-5", "-1", "bit"),
    ("BITPOS", "s", "1", INT64_MIN, INT64_MAX),
    ("BITPOS", "s", "1", INT64_MIN, INT64_MAX, "bit"),
    ("BITPOS", "s", "2"),
    ("BITPOS", "s", "-1"),
    ("BITPOS", "s", "x"),
    ("BITPOS", "s", "01"),
    ("BITPOS", "s", "1", "x"),
    ("BITPOS", "s", "1", "0", "x"),
    ("BITPOS", "s", "1", "0", "1", "foo"),
    ("BITPOS", "s", "1", "x", "1", "foo"),
    ("BITPOS", "s", "1", "0", "x", "foo"),
    ("BITPOS", "s", "1", "0", "1", "bit", "x"),
    ("BITPOS", "hash", "1"),
    ("BITPOS", "hash", "2"),
    ("BITPOS", "hash", "1", "x"),
    ("BITPOS", "s"),
    # --- BITOP ---------------------------------------------------------------------------
    ("BITOP", "AND", "dest", "s", "ff"),
    ("BITOP", "AND", "dest", "s", "long"),
    ("BITOP", "AND", "dest", "s", "missing"),
    ("BITOP", "OR", "dest", "s", "int", "long"),
    ("BITOP", "OR", "dest", "missing"),
    ("BITOP", "OR", "dest", "missing", "empty"),
    ("BITOP", "OR", "s", "missing"),
    ("BITOP", "XOR", "dest", "s", "s"),
    ("BITOP", "XOR", "dest", "s", "long", "ff", "sparse"),
    ("BITOP", "NOT", "dest", "s"),
    ("BITOP", "NOT", "dest", "int"),
    ("BITOP", "NOT", "dest", "empty"),
    ("BITOP", "NOT", "dest", "missing"),
    ("BITOP", "NOT", "dest", "s", "s"),
    ("BITOP", "not", "s", "s"),
    ("BITOP", "and", "ttl", "ttl"),
    ("BITOP", "And", "int", "int", "neg"),
    ("BITOP", "AND", "hash", "s"),
    ("BITOP", "AND", "dest", "hash"),
    ("BITOP", "AND", "dest", "s", "list"),
    ("BITOP", "NOT", "dest", "hash"),
    ("BITOP", "NAND", "dest", "s"),
    ("BITOP", "AN", "dest", "s"),
    ("BITOP", "and\x00x", "dest", "s"),
    ("BITOP", "", "dest", "s"),
    ("BITOP", "AND", "dest"),
    ("BITOP", "DIFF", "dest", "s", "ff"),
    # --- BITFIELD ------------------------------------------------------------------------
    ("BITFIELD", "s"),
    ("BITFIELD", "missing"),
    ("BITFIELD", "s", "GET", "u8", "0"),
    ("BITFIELD", "s", "GET", "i8", "0", "GET", "u4", "4", "GET", "i64", "0", "GET", "u63", "1"),
    ("BITFIELD", "s", "GET", "u1", "0", "GET", "i1", "1", "GET", "u63", "40"),
    ("BITFIELD", "s", "GET", "i64", "47", "GET", "i64", "#0", "GET", "u8", "#5", "GET", "u8", "#6"),
    ("BITFIELD", "int", "GET", "u24", "0", "GET", "i16", "#1"),
    ("BITFIELD", "neg", "GET", "i64", "#1", "GET", "u63", "#2"),
    ("BITFIELD", "missing", "GET", "u8", "0", "GET", "i64", "1000"),
    ("BITFIELD", "s", "SET", "u8", "0", "255"),
    ("BITFIELD", "s", "SET", "u8", "0", "256"),
    ("BITFIELD", "s", "SET", "u8", "0", "-1"),
    ("BITFIELD", "s", "SET", "i8", "0", "-129"),
    ("BITFIELD", "s", "SET", "i8", "0", "128"),
    ("BITFIELD", "s", "SET", "i64", "0", INT64_MIN),
    ("BITFIELD", "s", "SET", "u63", "1", INT64_MAX),
    ("BITFIELD", "s", "SET", "u63", "1", "-1"),
    ("BITFIELD", "s", "SET", "u8", "#1", "102"),
    ("BITFIELD", "s", "SET", "u8", "1", "0", "GET", "u8", "1", "GET", "u16", "0"),
    ("BITFIELD", "s", "SET", "i5", "100", "-3", "GET", "i5", "100", "GET", "u5", "100"),
    ("BITFIELD", "new", "SET", "u4", "#3", "9"),
    ("BITFIELD", "new", "SET", "u4", "0", "0"),
    ("BITFIELD", "new", "OVERFLOW", "FAIL", "SET", "u4", "100", "16"),
    ("BITFIELD", "int", "SET", "u8", "0", "49"),
    ("BITFIELD", "int", "SET", "u8", "0", "50"),
    ("BITFIELD", "s", "INCRBY", "u8", "0", "10"),
    ("BITFIELD", "s", "INCRBY", "u8", "0", "200"),
    ("BITFIELD", "s", "INCRBY", "u8", "0", "-200"),
    ("BITFIELD", "s", "INCRBY", "u2", "0", "1", "INCRBY", "u2", "0", "1", "INCRBY", "u2", "0", "1"),
    ("BITFIELD", "s", "INCRBY", "i8", "0", "100", "INCRBY", "i8", "0", "100"),
    ("BITFIELD", "s", "OVERFLOW", "SAT", "INCRBY", "u8", "0", "500", "INCRBY", "u8", "0", "-500"),
    ("BITFIELD", "s", "OVERFLOW", "SAT", "INCRBY", "i8", "0", "500", "INCRBY", "i8", "0", "-500"),
    ("BITFIELD", "s", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "500", "INCRBY", "u8", "0", "1"),
    ("BITFIELD", "s", "OVERFLOW", "FAIL", "INCRBY", "i8", "0", "-500", "GET", "i8", "0"),
    ("BITFIELD", "s", "OVERFLOW", "FAIL", "SET", "u8", "0", "256", "SET", "u8", "0", "255"),
    ("BITFIELD", "s", "OVERFLOW", "SAT", "SET", "u8", "0", "256", "SET", "i8", "8", "-256"),
    ("BITFIELD", "s", "OVERFLOW", "WRAP", "INCRBY", "u8", "0", "256", "OVERFLOW", "SAT",
     "INCRBY", "u8", "0", "256", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "256"),
    ("BITFIELD", "s", "SET", "i64", "0", INT64_MAX, "INCRBY", "i64", "0", "1"),
    ("BITFIELD", "s", "SET", "i64", "0", INT64_MIN, "INCRBY", "i64", "0", "-1"),
    ("BITFIELD", "s", "OVERFLOW", "SAT", "SET", "i64", "0", INT64_MAX, "INCRBY", "i64", "0",
     INT64_MAX, "INCRBY", "i64", "0", INT64_MIN, "INCRBY", "i64", "0", INT64_MIN),
    ("BITFIELD", "s", "OVERFLOW", "FAIL", "SET", "i64", "0", "-5", "INCRBY", "i64", "0",
     INT64_MIN, "INCRBY", "i64", "0", INT64_MAX, "INCRBY", "i64", "0", INT64_MAX),
    ("BITFIELD", "s", "SET", "u63", "0", INT64_MAX, "INCRBY", "u63", "0", "1",
     "INCRBY", "u63", "0", INT64_MIN, "INCRBY", "u63", "0", "-1"),
    ("BITFIELD", "s", "OVERFLOW", "SAT", "INCRBY", "u63", "0", INT64_MAX, "INCRBY", "u63", "0",
     INT64_MAX, "INCRBY", "u63", "0", INT64_MIN, "INCRBY", "u63", "0", INT64_MIN),
    ("BITFIELD", "s", "OVERFLOW", "SAT", "INCRBY", "i63", "3", INT64_MAX, "INCRBY", "i63", "3",
     INT64_MIN, "INCRBY", "i1", "0", "1", "INCRBY", "i1", "0", "-5"),
    ("BITFIELD", "s", "OVERFLOW", "WRAP", "INCRBY", "i63", "3", INT64_MAX, "INCRBY", "i63", "3",
     INT64_MIN, "INCRBY", "i1", "0", "1", "INCRBY", "i1", "0", "-5", "INCRBY", "u1", "5", "3"),
    ("BITFIELD", "s", "overflow", "sat", "incrby", "u8", "0", "1", "get", "u8", "0"),
    ("BITFIELD", "s", "GET", "u64", "0"),
    ("BITFIELD", "s", "GET", "i65", "0"),
    ("BITFIELD", "s", "GET", "i0", "0"),
    ("BITFIELD", "s", "GET", "u0", "0"),
    ("BITFIELD", "s", "GET", "x8", "0"),
    ("BITFIELD", "s", "GET", "", "0"),
    ("BITFIELD", "s", "GET", "u", "0"),
    ("BITFIELD", "s", "GET", "u08", "0"),
    ("BITFIELD", "s", "GET", "u-8", "0"),
    ("BITFIELD", "s", "GET", "U8", "0"),
    ("BITFIELD", "s", "GET", "u8\x00x", "0"),
    ("BITFIELD", "s", "GET", "u8", "-1"),
    ("BITFIELD", "s", "GET", "u8", "#-1"),
    ("BITFIELD", "s", "GET", "u8", "#"),
    ("BITFIELD", "s", "GET", "u8", "##1"),
    ("BITFIELD", "s", "GET", "u8", "x"),
    ("BITFIELD", "s", "GET", "u8", "4294967296"),
    ("BITFIELD", "s", "GET", "u8", "4294967295"),
    ("BITFIELD", "s", "GET", "u8", "#536870912"),
    ("BITFIELD", "s", "GET", "u8", "#536870911"),
    ("BITFIELD", "s", "GET", "u4", "#4611686018427387904"),
    ("BITFIELD", "s", "GET", "u4", "#4611686018427387905"),
    ("BITFIELD", "s", "GET", "u8", "#1152921504606846976"),
    ("BITFIELD", "s", "GET", "u8"),
    ("BITFIELD", "s", "GET"),
    ("BITFIELD", "s", "SET", "u8", "0"),
    ("BITFIELD", "s", "SET", "u8", "0", "x"),
    ("BITFIELD", "s", "SET", "u8", "0", "1.5"),
    ("BITFIELD", "s", "INCRBY", "u8", "0", "x"),
    ("BITFIELD", "s", "INCRBY", "u8", "0"),
    ("BITFIELD", "s", "OVERFLOW"),
    ("BITFIELD", "s", "OVERFLOW", "BAD", "GET", "u8", "0"),
    ("BITFIELD", "s", "OVERFLOW", "WRAP"),
    ("BITFIELD", "s", "OVERFLOW", "FAIL", "OVERFLOW", "SAT"),
    ("BITFIELD", "s", "BAD", "u8", "0"),
    ("BITFIELD", "s", "GET", "u8", "0", "extra"),
    ("BITFIELD", "s", "SET", "u8", "0", "1", "GET", "u8", "x"),
    ("BITFIELD", "s", "SET", "u8", "0", "1", "GET", "u99", "0"),
    ("BITFIELD", "s", "GET", "u8", "0", "SET", "u8", "-1", "1"),
    ("BITFIELD", "hash", "GET", "u8", "0"),
    ("BITFIELD", "hash", "SET", "u8", "0", "1"),
    ("BITFIELD", "hash", "GET", "u8", "x"),
    ("BITFIELD", "hash"),
    ("BITFIELD", "ttl", "SET", "u8", "0", "1"),
    ("BITFIELD", "s", "SET", "u8", "4294967288", "1"),
    ("BITFIELD", "s", "SET", "i64", "4294967290", "1"),
    ("BITFIELD",),
    # --- BITFIELD_RO ---------------------------------------------------------------------
    ("BITFIELD_RO", "s"),
    ("BITFIELD_RO", "missing"),
    ("BITFIELD_RO", "s", "GET", "u8", "0", "GET", "i64", "#0"),
    ("BITFIELD_RO", "missing", "GET", "u8", "0"),
    ("BITFIELD_RO", "int", "GET", "i8", "8"),
    ("BITFIELD_RO", "s", "SET", "u8", "0", "1"),
    ("BITFIELD_RO", "s", "INCRBY", "u8", "0", "1"),
    ("BITFIELD_RO", "s", "GET", "u8", "0", "INCRBY", "u8", "0", "1"),
    ("BITFIELD_RO", "s", "OVERFLOW", "SAT", "GET", "u8", "0"),
    ("BITFIELD_RO", "s", "OVERFLOW", "BAD"),
    ("BITFIELD_RO", "s", "SET", "u8", "0", "x"),
    ("BITFIELD_RO", "s", "GET", "u64", "0"),
    ("BITFIELD_RO", "hash", "GET", "u8", "0"),
    ("BITFIELD_RO", "hash", "SET", "u8", "0", "1"),
    ("BITFIELD_RO", "missing", "SET", "u8", "0", "1"),
]

# Keys whose value, type, encoding and TTL are compared after each case.
CHECKED_KEYS = ["s", "int", "neg", "empty", "new", "dest", "ttl", "hash", "sparse", "missing"]


def _setup(conn) -> None:
    for command in SETUP:
        conn.execute(*command)


def _changes(conn) -> int:
    info = conn.execute("INFO", "persistence").decode()
    for line in info.splitlines():
        if line.startswith("rdb_changes_since_last_save:"):
            return int(line.split(":")[1])
    raise AssertionError(info)


def _state(conn) -> list:
    state = []
    for key in CHECKED_KEYS:
        kind = conn.execute("TYPE", key)
        value = conn.execute_raw("GET", key) if kind == b"string" else None
        encoding = conn.execute_raw("OBJECT", "ENCODING", key)
        ttl = conn.execute("TTL", key)
        state.append((key, kind, value, encoding, ttl > 0 if isinstance(ttl, int) else ttl))
    return state


@pytest.fixture
def pair(keywarden, reference_redis):
    mine, theirs = keywarden.raw(), reference_redis.raw()
    yield mine, theirs
    mine.close()
    theirs.close()


@pytest.mark.parametrize("command", CASES, ids=[" ".join(c)[:60] for c in CASES])
def test_bitmap_command_matches_redis(pair, command):
    mine, theirs = pair
    for conn in pair:
        _setup(conn)
    before = (_changes(mine), _changes(theirs))
    reply_mine, reply_theirs = mine.execute_raw(*command), theirs.execute_raw(*command)
    assert reply_mine == reply_theirs
    # What Redis counts as changed is what it propagates to replicas and the AOF.
    assert _changes(mine) - before[0] == _changes(theirs) - before[1]
    assert _state(mine) == _state(theirs)


@pytest.mark.parametrize("command", [
    ("BITFIELD", "s", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "500", "GET", "u8", "0"),
    ("BITFIELD_RO", "missing", "GET", "i8", "0"),
    ("BITPOS", "s", "0", "0", "-1"),
    ("BITCOUNT", "s", "1", "2", "BIT"),
])
def test_bitmap_replies_in_resp3_match_redis(pair, command):
    for conn in pair:
        conn.execute("HELLO", "3")
        _setup(conn)
    assert pair[0].execute_raw(*command) == pair[1].execute_raw(*command)


# (command, events it should publish) run on a fresh key space: compared between the servers.
EVENT_SCRIPTS = [
    [("SETBIT", "k", "3", "1"), ("SETBIT", "k", "3", "1"), ("SETBIT", "k", "3", "0"),
     ("SETBIT", "k", "100", "0")],
    [("SET", "k", "12"), ("SETBIT", "k", "0", "0"), ("SETBIT", "k", "1", "0")],
    [("BITOP", "OR", "d", "nokey"), ("SET", "a", "x"), ("BITOP", "OR", "d", "a"),
     ("BITOP", "NOT", "d", "d"), ("BITOP", "AND", "d", "nokey")],
    [("BITFIELD", "k", "GET", "u8", "0"), ("BITFIELD", "k", "SET", "u8", "0", "0"),
     ("BITFIELD", "k", "SET", "u8", "0", "0"), ("BITFIELD", "k", "INCRBY", "u8", "0", "1",
                                                "INCRBY", "u8", "0", "1"),
     ("BITFIELD", "k", "OVERFLOW", "FAIL", "SET", "u8", "0", "300"),
     ("BITFIELD", "k", "OVERFLOW", "FAIL", "SET", "u8", "64", "300"),
     ("BITFIELD_RO", "k", "GET", "u8", "0")],
]


def _events(server, script) -> list:
    admin = server.raw()
    admin.execute("CONFIG", "SET", "notify-keyspace-events", "KEA")
    listener = server.raw()
    listener.execute("PSUBSCRIBE", "__key*__:*")
    writer = server.raw()
    for command in script:
        writer.execute(*command)
    writer.execute("PUBLISH", "__keyevent@0__:end", "end")
    messages = []
    while True:
        message = listener.read_reply()
        messages.append(message)
        if message[2] == b"__keyevent@0__:end":
            break
    for conn in (admin, listener, writer):
        conn.close()
    return messages


@pytest.mark.parametrize("script", EVENT_SCRIPTS, ids=range(len(EVENT_SCRIPTS)))
def test_bitmap_keyspace_events_match_redis(keywarden, reference_redis, script):
    try:
        assert _events(keywarden, script) == _events(reference_redis, script)
    finally:
        for server in (keywarden, reference_redis):
            with server.raw() as conn:
                conn.execute("CONFIG", "SET", "notify-keyspace-events", "")


def test_bitmap_commands_in_multi_and_eval_match_redis(pair):
    script = [
        ("MULTI",),
        ("SETBIT", "m", "5", "1"),
        ("GETBIT", "m", "5"),
        ("BITFIELD", "m", "INCRBY", "u8", "#1", "7", "GET", "u16", "0"),
        ("BITFIELD", "m", "GET", "u99", "0"),
        ("BITOP", "NOT", "n", "m"),
        ("BITCOUNT", "n"),
        ("BITPOS", "n", "0"),
        ("BITFIELD_RO", "n", "GET", "i16", "0"),
        ("EXEC",),
        ("EVAL", "return redis.call('SETBIT', KEYS[1], 9, 1)", "1", "e"),
        ("EVAL", "return redis.call('BITFIELD', KEYS[1], 'OVERFLOW', 'FAIL', 'INCRBY', 'u2', "
                 "'0', 5, 'GET', 'u8', 0)", "1", "e"),
        ("EVAL", "return {redis.call('BITCOUNT', KEYS[1]), redis.call('BITPOS', KEYS[1], 1), "
                 "redis.call('GETBIT', KEYS[1], 9)}", "1", "e"),
        ("EVAL", "return redis.call('BITOP', 'XOR', KEYS[1], KEYS[2], KEYS[2])", "2", "x", "e"),
        ("EVAL", "return redis.pcall('BITFIELD_RO', KEYS[1], 'SET', 'u8', 0, 1)", "1", "e"),
        ("EVAL", "return redis.pcall('SETBIT', KEYS[1], -1, 1)", "1", "e"),
        ("EVAL_RO", "return redis.pcall('BITFIELD', KEYS[1], 'GET', 'u8', 0)", "1", "e"),
        ("EVAL_RO", "return redis.call('BITFIELD_RO', KEYS[1], 'GET', 'u8', 0)", "1", "e"),
        ("EVAL_RO", "return redis.pcall('SETBIT', KEYS[1], 1, 1)", "1", "e"),
    ]
    for command in script:
        assert pair[0].execute_raw(*command) == pair[1].execute_raw(*command), command
    for key in ("m", "n", "e", "x"):
        assert pair[0].execute_raw("GET", key) == pair[1].execute_raw("GET", key)


def test_offset_limit_follows_proto_max_bulk_len(pair):
    for conn in pair:
        conn.execute("CONFIG", "SET", "proto-max-bulk-len", "1048576")
    try:
        for command in [("SETBIT", "k", "8388607", "1"), ("SETBIT", "k", "8388608", "1"),
                        ("GETBIT", "k", "8388608"), ("BITFIELD", "k", "GET", "u8", "8388600"),
                        ("BITFIELD", "k", "SET", "u8", "#1048575", "1"),
                        ("BITFIELD", "k", "SET", "u8", "#1048576", "1"), ("STRLEN", "k")]:
            assert pair[0].execute_raw(*command) == pair[1].execute_raw(*command), command
    finally:
        for conn in pair:
            conn.execute("CONFIG", "SET", "proto-max-bulk-len", "536870912")


# --------------------------------------------------------------------------------------------
# Randomized differential run
# --------------------------------------------------------------------------------------------

RANDOM_KEYS = ["b1", "b2", "b3", "b4"]


def _random_offset(rng: random.Random, bits: bool = True) -> str:
    pick = rng.random()
    limit = 700 if bits else 90
    if pick < 0.8:
        return str(rng.randint(0, limit))
    if pick < 0.95:
        return str(rng.randint(-limit, -1))
    return rng.choice(["9223372036854775807", "-9223372036854775808", "x", "4294967296"])


def _random_command(rng: random.Random) -> tuple:
    key = rng.choice(RANDOM_KEYS)
    kind = rng.choices(["setbit", "getbit", "bitcount", "bitpos", "bitop", "bitfield", "set",
                        "setrange", "del"], weights=[30, 6, 14, 16, 8, 18, 2, 3, 1])[0]
    if kind == "setbit":
        return ("SETBIT", key, str(rng.randint(0, 700)), rng.choice("01"))
    if kind == "getbit":
        return ("GETBIT", key, str(rng.randint(0, 800)))
    if kind == "bitcount":
        args = ["BITCOUNT", key]
        if rng.random() < 0.8:
            args += [_random_offset(rng, False), _random_offset(rng, False)]
            if rng.random() < 0.6:
                args.append(rng.choice(["BIT", "BYTE", "bit"]))
                if rng.random() < 0.5:
                    args[2:4] = [_random_offset(rng), _random_offset(rng)]
        return tuple(args)
    if kind == "bitpos":
        args = ["BITPOS", key, rng.choice("01")]
        n = rng.randint(0, 3)
        unit_bit = n == 3 and rng.random() < 0.7
        if n >= 1:
            args.append(_random_offset(rng, unit_bit))
        if n >= 2:
            args.append(_random_offset(rng, unit_bit))
        if n == 3:
            args.append("BIT" if unit_bit else "BYTE")
        return tuple(args)
    if kind == "bitop":
        op = rng.choice(["AND", "OR", "XOR", "NOT"])
        sources = [rng.choice(RANDOM_KEYS + ["nokey"])]
        if op != "NOT":
            sources += [rng.choice(RANDOM_KEYS + ["nokey"]) for _ in range(rng.randint(0, 3))]
        return ("BITOP", op, key, *sources)
    if kind == "bitfield":
        args = ["BITFIELD" if rng.random() < 0.85 else "BITFIELD_RO", key]
        for _ in range(rng.randint(1, 4)):
            sub = rng.choice(["GET", "SET", "INCRBY", "OVERFLOW"])
            if sub == "OVERFLOW":
                args += ["OVERFLOW", rng.choice(["WRAP", "SAT", "FAIL"])]
                continue
            signed = rng.random() < 0.5
            width = rng.randint(1, 64 if signed else 63)
            offset = (f"#{rng.randint(0, 20)}" if rng.random() < 0.3
                      else str(rng.randint(0, 600)))
            args += [sub, f"{'i' if signed else 'u'}{width}", offset]
            if sub != "GET":
                value = rng.choice([rng.randint(-300, 300), rng.randint(-2**63, 2**63 - 1),
                                    2**(width - 1), -2**(width - 1), 2**width - 1])
                args.append(str(value))
        return tuple(args)
    if kind == "set":
        return ("SET", key, rng.choice(["123", "-7", "hello", "", "\x00\xff\x80"]))
    if kind == "setrange":
        return ("SETRANGE", key, str(rng.randint(0, 60)), rng.choice(["\xff", "ab", "\x00\x00"]))
    return ("DEL", key)


def test_random_bitmap_operations_match_redis(pair):
    steps = int(os.environ.get("KW_BITMAP_STEPS", 3000))
    seed = int(os.environ.get("KW_BITMAP_SEED", 20261127))
    rng = random.Random(seed)
    mine, theirs = pair
    batch = 100
    done = 0
    while done < steps:
        commands = [_random_command(rng) for _ in range(min(batch, steps - done))]
        for command in commands:
            mine.send_command(*command)
            theirs.send_command(*command)
        for command in commands:
            assert mine.read_reply_bytes() == theirs.read_reply_bytes(), (seed, done, command)
            done += 1
        for key in RANDOM_KEYS:
            assert mine.execute_raw("GET", key) == theirs.execute_raw("GET", key), (seed, done, key)
    assert _changes(mine) == _changes(theirs)


# --------------------------------------------------------------------------------------------
# Persistence
# --------------------------------------------------------------------------------------------

def _fill(conn) -> bytes:
    for bit in (0, 7, 100, 65535, 800001):
        conn.execute("SETBIT", "bm", str(bit), "1")
    conn.execute("BITFIELD", "bm", "SET", "i64", "#3", "-12345")
    conn.execute("PEXPIRE", "bm", "1000000")
    return conn.execute("GET", "bm")


def test_bitmap_survives_debug_reload(keywarden):
    with keywarden.raw() as conn:
        value = _fill(conn)
        assert conn.execute("DEBUG", "RELOAD") == b"OK"
        assert conn.execute("GET", "bm") == value
        assert conn.execute("BITCOUNT", "bm") == 5 + bin(2**64 - 12345).count("1")
        assert conn.execute("OBJECT", "ENCODING", "bm") == b"raw"
        assert conn.execute("PTTL", "bm") > 0


def test_bitmap_survives_save_and_restart(server_factory, tmp_path):
    server = server_factory(("dir", str(tmp_path)), ("dbfilename", "bitmap.rdb"))
    with server.raw() as conn:
        value = _fill(conn)
        assert conn.execute("SAVE") == b"OK"
    server.stop()
    restarted = server_factory(("dir", str(tmp_path)), ("dbfilename", "bitmap.rdb"))
    with restarted.raw() as conn:
        wait_until(lambda: conn.execute("DBSIZE") == 1)
        assert conn.execute("GET", "bm") == value
        assert conn.execute("BITFIELD_RO", "bm", "GET", "i64", "#3") == [-12345]


# --------------------------------------------------------------------------------------------
# Replication: what keywarden propagates, a stock Redis replica and a keywarden one apply
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("replica_kind", ["redis", "keywarden"])
def test_bitmap_writes_reach_a_replica(server_factory, replica_kind):
    from conftest import redis_binary
    primary = server_factory()
    replica = (server_factory(binary=redis_binary()) if replica_kind == "redis"
               else server_factory())
    with primary.raw() as p, replica.raw() as r:
        assert r.execute("REPLICAOF", "127.0.0.1", str(primary.port)) == b"OK"
        wait_until(lambda: b"master_link_status:up" in r.execute("INFO", "replication"))
        rng = random.Random(5)
        for _ in range(400):
            p.execute(*_random_command(rng))
        p.execute("SET", "marker", "done")
        wait_until(lambda: r.execute("GET", "marker") == b"done")
        for key in RANDOM_KEYS:
            assert r.execute_raw("GET", key) == p.execute_raw("GET", key), key
