"""Streams (XADD … XAUTOCLAIM, consumer groups) against a stock redis-server 7.0.

Every case runs on both servers and the replies must be byte-equal, except for the fields
that depend on the clock or on Redis's radix tree internals (idle times, delivery and seen
times, radix-tree-nodes): those replies are parsed and the fields masked before comparing.
IDs are always explicit (or derived with "<ms>-*") so that both servers generate the same.
"""

from __future__ import annotations

import random

import pytest

from conftest import summary_set

CASES: dict[str, int] = {}

MASKED_KEYS = {b"radix-tree-nodes", b"seen-time", b"idle"}


def count_case(command: str) -> None:
    name = command.upper() if isinstance(command, str) else command.decode().upper()
    CASES[name] = CASES.get(name, 0) + 1
    summary_set("stream differential cases", name, str(CASES[name]))


def mask_pending(entries):
    """Pending entries with their delivery time (the clock's) replaced by a marker."""
    masked = []
    for e in entries:
        if isinstance(e, list) and len(e) == 4:
            masked.append([e[0], e[1], "T", e[3]])
        elif isinstance(e, list) and len(e) == 3:
            masked.append([e[0], "T", e[2]])
        else:
            masked.append(e)
    return masked


def mask(reply, command):
    """The reply with the time-dependent fields replaced by a marker."""
    words = [w.upper() if isinstance(w, str) else w.decode(errors="replace").upper()
             for w in command[:2]]
    if words[0] == "XPENDING" and isinstance(reply, list) and len(command) > 3:
        return mask_pending(reply)

    def walk_field(key, value):
        if key in MASKED_KEYS:
            return "T"
        if key == b"pending" and words[0] == "XINFO" and isinstance(value, list):
            return mask_pending(value)
        return walk(value)

    def walk(value):
        if isinstance(value, dict):
            return {k: walk_field(k, v) for k, v in value.items()}
        if not isinstance(value, list):
            return value
        out = []
        skip_next = False
        pending_next = False
        for item in value:
            if skip_next:
                out.append("T")
                skip_next = False
                continue
            if pending_next and isinstance(item, list):
                out.append(mask_pending(item))
                pending_next = False
                continue
            pending_next = False
            if isinstance(item, bytes) and item in MASKED_KEYS:
                skip_next = True
            if item == b"pending" and words[0] == "XINFO":
                pending_next = True
            out.append(walk(item))
        return out

    return walk(reply)


NEEDS_MASK = {"XINFO", "XPENDING"}


def same(kw, ref, *command):
    name = command[0].upper() if isinstance(command[0], str) else command[0].decode().upper()
    if name in NEEDS_MASK:
        a = kw.execute(*command)
        b = ref.execute(*command)
        a_masked, b_masked = mask(a, command), mask(b, command)
        assert a_masked == b_masked, f"{command!r}: keywarden {a!r} != redis {b!r}"
        count_case(name)
        return a
    a = kw.execute_raw(*command)
    b = ref.execute_raw(*command)
    assert a == b, f"{command!r}: keywarden {a!r} != redis {b!r}"
    count_case(name)
    return a


def run_all(kw, ref, commands):
    for command in commands:
        same(kw, ref, *command)


def both(keywarden, reference_redis):
    return keywarden.raw(), reference_redis.raw()


# --- Fixed cases ------------------------------------------------------------------------------

BASIC = [
    ("SET", "str", "x"),
    # XADD arity, IDs, options and errors
    ("XADD",),
    ("XADD", "s"),
    ("XADD", "s", "1-1"),
    ("XADD", "s", "1-1", "a"),
    ("XADD", "s", "1-1", "a", "1", "b"),
    ("XADD", "s", "0-0", "a", "1"),
    ("XADD", "s", "0", "a", "1"),
    ("XADD", "s", "0-*", "a", "1"),
    ("XADD", "s", "-", "a", "1"),
    ("XADD", "s", "+", "a", "1"),
    ("XADD", "s", "abc", "a", "1"),
    ("XADD", "s", "1-x", "a", "1"),
    ("XADD", "s", "1-*-", "a", "1"),
    ("XADD", "s", "-1", "a", "1"),
    ("XADD", "s", "1--1", "a", "1"),
    ("XADD", "s", "18446744073709551616", "a", "1"),
    ("XADD", "s", "+5", "a", "1"),
    ("XADD", "s", " 5", "a", "1"),
    ("XADD", "s", "5-", "a", "1"),
    ("XADD", "str", "1-1", "a", "1"),
    ("XADD", "nokey", "NOMKSTREAM", "1-1", "a", "1"),
    ("EXISTS", "nokey"),
    ("XADD", "s", "1-1", "a", "1"),
    ("XADD", "s", "1-1", "a", "1"),
    ("XADD", "s", "1-0", "a", "1"),
    ("XADD", "s", "1-*", "a", "2"),
    ("XADD", "s", "1", "a", "3"),
    ("XADD", "s", "2-*", "b", "1"),
    ("XADD", "s", "1-*", "b", "1"),
    ("XADD", "s", "3", "a", "1", "b", "2", "c", "3"),
    ("XADD", "s", "3-5", "a", "1", "a", "2"),
    ("XADD", "s", "4-0", "", ""),
    ("XADD", "s", "MAXLEN", "abc", "5-0", "a", "1"),
    ("XADD", "s", "MAXLEN", "-1", "5-0", "a", "1"),
    ("XADD", "s", "MAXLEN", "~", "-1", "5-0", "a", "1"),
    ("XADD", "s", "MINID", "abc", "5-0", "a", "1"),
    ("XADD", "s", "MAXLEN", "1", "MINID", "1", "5-0", "a", "1"),
    ("XADD", "s", "LIMIT", "10", "5-0", "a", "1"),
    ("XADD", "s", "MAXLEN", "10", "LIMIT", "10", "5-0", "a", "1"),
    ("XADD", "s", "MAXLEN", "~", "10", "LIMIT", "-1", "5-0", "a", "1"),
    ("XADD", "s", "MAXLEN", "~", "10", "LIMIT", "x", "5-0", "a", "1"),
    ("XADD", "s", "FOO", "5-0", "a", "1"),
    ("XADD", "s", "NOMKSTREAM", "MAXLEN", "=", "100", "5-0", "a", "1"),
    ("XADD", "s", "MAXLEN", "~", "100", "LIMIT", "0", "6-0", "a", "1"),
    ("XADD", "s", "MINID", "=", "0", "*", "a"),
    ("XADD", "s", "maxlen"),
    ("XLEN", "s"),
    ("XLEN", "nokey"),
    ("XLEN", "str"),
    ("XLEN",),
    ("XLEN", "s", "x"),
    # XRANGE / XREVRANGE
    ("XRANGE", "s", "-", "+"),
    ("XRANGE", "s", "+", "-"),
    ("XREVRANGE", "s", "+", "-"),
    ("XREVRANGE", "s", "-", "+"),
    ("XRANGE", "s", "1", "1"),
    ("XRANGE", "s", "1", "2"),
    ("XRANGE", "s", "(1-1", "+"),
    ("XRANGE", "s", "-", "(3-5"),
    ("XRANGE", "s", "(", "+"),
    ("XRANGE", "s", "(-", "+"),
    ("XRANGE", "s", "-", "(+"),
    ("XRANGE", "s", "(0-0", "+"),
    ("XRANGE", "s", "(18446744073709551615-18446744073709551615", "+"),
    ("XRANGE", "s", "-", "(0-0"),
    ("XRANGE", "s", "-", "(0"),
    ("XREVRANGE", "s", "(4", "(1-1"),
    ("XREVRANGE", "s", "+", "-", "COUNT", "2"),
    ("XRANGE", "s", "-", "+", "COUNT", "0"),
    ("XRANGE", "s", "-", "+", "COUNT", "-5"),
    ("XRANGE", "s", "-", "+", "COUNT", "1", "COUNT", "3"),
    ("XRANGE", "s", "-", "+", "COUNT"),
    ("XRANGE", "s", "-", "+", "COUNT", "x"),
    ("XRANGE", "s", "-", "+", "FOO", "1"),
    ("XRANGE", "s", "x", "+"),
    ("XRANGE", "s", "-", "x"),
    ("XRANGE", "s", "1-*", "+"),
    ("XRANGE", "nokey", "-", "+"),
    ("XRANGE", "nokey", "-", "+", "COUNT", "0"),
    ("XRANGE", "str", "-", "+"),
    ("XRANGE", "str", "x", "+"),
    ("XREVRANGE", "s", "3-5", "3-0"),
    ("XRANGE", "s", "3", "3"),
    # XDEL
    ("XDEL", "s"),
    ("XDEL", "s", "x"),
    ("XDEL", "s", "1-1", "x"),
    ("XDEL", "s", "-"),
    ("XDEL", "nokey", "x"),
    ("XDEL", "str", "1-1"),
    ("XDEL", "s", "1-1", "1-1", "99-0"),
    ("XDEL", "s", "1-2"),
    ("XDEL", "s", "3"),
    ("XINFO", "STREAM", "s"),
    ("XRANGE", "s", "-", "+"),
    ("XLEN", "s"),
    # XTRIM
    ("XTRIM", "s"),
    ("XTRIM", "s", "MAXLEN"),
    ("XTRIM", "s", "FOO", "1"),
    ("XTRIM", "s", "LIMIT", "1"),
    ("XTRIM", "s", "MAXLEN", "~"),
    ("XTRIM", "s", "MAXLEN", "1", "LIMIT", "1"),
    ("XTRIM", "s", "MAXLEN", "1", "MINID", "1"),
    ("XTRIM", "s", "MAXLEN", "-1"),
    ("XTRIM", "s", "MINID", "x"),
    ("XTRIM", "s", "MINID", "-"),
    ("XTRIM", "nokey", "MAXLEN", "1"),
    ("XTRIM", "str", "MAXLEN", "1"),
    ("XTRIM", "s", "MAXLEN", "~", "0"),
    ("XTRIM", "s", "MAXLEN", "100"),
    ("XTRIM", "s", "MINID", "2"),
    ("XINFO", "STREAM", "s"),
    ("XTRIM", "s", "MAXLEN", "=", "2"),
    ("XRANGE", "s", "-", "+"),
    ("XTRIM", "s", "MAXLEN", "0"),
    ("XINFO", "STREAM", "s"),
    ("EXISTS", "s"),
    ("TYPE", "s"),
    ("OBJECT", "ENCODING", "s"),
    ("XADD", "s", "7", "a", "1"),
    ("XINFO", "STREAM", "s"),
    ("XINFO", "STREAM", "s", "FULL"),
]

SETID = [
    ("XSETID", "s", "1-1"),
    ("XSETID", "str", "1-1"),
    ("XADD", "s", "5-5", "a", "1"),
    ("XADD", "s", "6-6", "a", "1"),
    ("XSETID", "s", "x"),
    ("XSETID", "s", "-"),
    ("XSETID", "s", "5-0"),
    ("XSETID", "s", "6-6"),
    ("XSETID", "s", "6"),
    ("XSETID", "s", "10-0", "ENTRIESADDED"),
    ("XSETID", "s", "10-0", "ENTRIESADDED", "x"),
    ("XSETID", "s", "10-0", "ENTRIESADDED", "-1"),
    ("XSETID", "s", "10-0", "ENTRIESADDED", "1"),
    ("XSETID", "s", "10-0", "MAXDELETEDID", "11-0"),
    ("XSETID", "s", "10-0", "MAXDELETEDID", "x"),
    ("XSETID", "s", "10-0", "FOO", "1"),
    ("XSETID", "s", "10-0", "ENTRIESADDED", "5", "MAXDELETEDID", "3-0"),
    ("XINFO", "STREAM", "s"),
    ("XSETID", "s", "2-0"),
    ("XSETID", "s", "10-0", "MAXDELETEDID", "2-0"),
    ("XINFO", "STREAM", "s"),
    ("XADD", "s", "10-0", "a", "1"),
    ("XADD", "s", "10-*", "a", "1"),
    ("XDEL", "s", "5-5", "6-6", "10-1"),
    ("XINFO", "STREAM", "s"),
    ("XSETID", "s", "18446744073709551614-18446744073709551615"),
    ("XADD", "s", "*", "a", "1"),
    ("XSETID", "s", "18446744073709551615-18446744073709551615"),
    ("XADD", "s", "*", "a", "1"),
    ("XADD", "s", "18446744073709551615-*", "a", "1"),
    ("XINFO", "STREAM", "s"),
    ("XADD", "e", "1-1", "a", "1"),
    ("XDEL", "e", "1-1"),
    ("XINFO", "STREAM", "e"),
    ("XSETID", "e", "0-5"),
    ("XINFO", "STREAM", "e"),
]

GROUPS = [
    ("XGROUP",),
    ("XGROUP", "HELP"),
    ("XGROUP", "HELP", "x"),
    ("XGROUP", "FOO"),
    ("XGROUP", "FOO", "s", "g"),
    ("XGROUP", "CREATE", "s", "g"),
    ("XGROUP", "CREATE", "s", "g", "$"),
    ("XGROUP", "CREATE", "str", "g", "$"),
    ("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM", "FOO"),
    ("XGROUP", "CREATE", "s", "g", "$", "ENTRIESREAD"),
    ("XGROUP", "CREATE", "s", "g", "$", "ENTRIESREAD", "x"),
    ("XGROUP", "CREATE", "s", "g", "$", "ENTRIESREAD", "-2"),
    ("XGROUP", "CREATE", "s", "g", "x", "MKSTREAM"),
    ("XGROUP", "CREATE", "s", "g", "-", "MKSTREAM"),
    ("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"),
    ("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"),
    ("XGROUP", "CREATE", "s", "g", "$"),
    ("TYPE", "s"),
    ("XINFO", "GROUPS", "s"),
    ("XGROUP", "CREATE", "s", "g2", "0", "ENTRIESREAD", "5"),
    ("XGROUP", "CREATE", "s", "g3", "0", "MKSTREAM", "ENTRIESREAD", "-1", "MKSTREAM"),
    ("XGROUP", "CREATE", "s", "g4", "0", "MKSTREAM", "ENTRIESREAD", "-1", "MKSTREAM", "x"),
    ("XADD", "s", "1-1", "f", "v1"),
    ("XADD", "s", "1-2", "f", "v2"),
    ("XADD", "s", "2-1", "f", "v3", "g", "x"),
    ("XADD", "s", "3-1", "f", "v4"),
    ("XINFO", "GROUPS", "s"),
    ("XGROUP", "SETID", "s", "nog", "0"),
    ("XGROUP", "SETID", "nokey", "g", "0"),
    ("XGROUP", "SETID", "s", "g", "x"),
    ("XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD"),
    ("XGROUP", "SETID", "s", "g", "0", "FOO", "1"),
    ("XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "-3"),
    ("XGROUP", "SETID", "s", "g", "-"),
    ("XGROUP", "SETID", "s", "g", "1"),
    ("XINFO", "GROUPS", "s"),
    ("XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "0"),
    ("XINFO", "GROUPS", "s"),
    ("XGROUP", "SETID", "s", "g2", "$"),
    ("XINFO", "GROUPS", "s"),
    ("XGROUP", "CREATECONSUMER", "s", "g"),
    ("XGROUP", "CREATECONSUMER", "s", "nog", "c"),
    ("XGROUP", "CREATECONSUMER", "nokey", "g", "c"),
    ("XGROUP", "CREATECONSUMER", "s", "g", "c1"),
    ("XGROUP", "CREATECONSUMER", "s", "g", "c1"),
    ("XGROUP", "CREATECONSUMER", "s", "g", "c0"),
    ("XINFO", "CONSUMERS", "s", "g"),
    ("XINFO", "CONSUMERS", "s", "nog"),
    ("XINFO", "CONSUMERS", "nokey", "g"),
    ("XINFO", "CONSUMERS", "str", "g"),
    ("XINFO", "GROUPS", "nokey"),
    ("XINFO", "GROUPS", "str"),
    ("XINFO", "STREAM", "nokey"),
    ("XINFO", "STREAM", "s", "FOO"),
    ("XINFO", "STREAM", "s", "FULL", "COUNT"),
    ("XINFO", "STREAM", "s", "FULL", "COUNT", "x"),
    ("XINFO", "STREAM", "s", "FULL", "FOO", "1"),
    ("XINFO", "STREAM", "s", "FULL", "COUNT", "-1"),
    ("XINFO", "STREAM", "s", "FULL", "COUNT", "0"),
    ("XINFO", "STREAM", "s", "FULL", "COUNT", "1"),
    ("XINFO",),
    ("XINFO", "HELP"),
    ("XINFO", "HELP", "x"),
    ("XINFO", "FOO"),
    ("XINFO", "FOO", "s"),
    ("XINFO", "GROUPS"),
    ("XINFO", "GROUPS", "s", "x"),
    ("XGROUP", "DELCONSUMER", "s", "g", "nobody"),
    ("XGROUP", "DELCONSUMER", "s", "nog", "c1"),
    ("XGROUP", "DELCONSUMER", "s", "g", "c0"),
    ("XGROUP", "DESTROY", "s", "nog"),
    ("XGROUP", "DESTROY", "nokey", "g"),
    ("XGROUP", "DESTROY", "s", "g3"),
    ("XGROUP", "DESTROY", "s", "g3", "x"),
    ("XINFO", "GROUPS", "s"),
]

READS = [
    ("XREAD",),
    ("XREAD", "STREAMS"),
    ("XREAD", "STREAMS", "s"),
    ("XREAD", "STREAMS", "s", "t", "0"),
    ("XREAD", "COUNT", "x", "STREAMS", "s", "0"),
    ("XREAD", "BLOCK", "x", "STREAMS", "s", "0"),
    ("XREAD", "BLOCK", "-1", "STREAMS", "s", "0"),
    ("XREAD", "FOO", "STREAMS", "s", "0"),
    ("XREAD", "COUNT", "1"),
    ("XREAD", "GROUP", "g", "c", "STREAMS", "s", "0"),
    ("XREAD", "NOACK", "STREAMS", "s", "0"),
    ("XREAD", "STREAMS", "s", ">"),
    ("XREAD", "STREAMS", "s", "x"),
    ("XREAD", "STREAMS", "s", "-"),
    ("XREAD", "STREAMS", "str", "0"),
    ("XREAD", "STREAMS", "nokey", "0"),
    ("XADD", "s", "1-1", "a", "1"),
    ("XADD", "s", "1-2", "b", "2"),
    ("XADD", "s", "2-0", "c", "3"),
    ("XADD", "t", "5-0", "d", "4"),
    ("XREAD", "STREAMS", "s", "0"),
    ("XREAD", "COUNT", "2", "STREAMS", "s", "0"),
    ("XREAD", "COUNT", "0", "STREAMS", "s", "0"),
    ("XREAD", "COUNT", "-1", "STREAMS", "s", "0"),
    ("XREAD", "STREAMS", "s", "1-1"),
    ("XREAD", "STREAMS", "s", "$"),
    ("XREAD", "STREAMS", "s", "2"),
    ("XREAD", "STREAMS", "s", "nokey", "t", "0", "0", "0"),
    ("XREAD", "STREAMS", "s", "t", "1-2", "4"),
    ("XREAD", "COUNT", "1", "STREAMS", "s", "t", "0", "0"),
    ("XREAD", "BLOCK", "10", "STREAMS", "s", "0"),
    ("XREAD", "streams", "s", "STREAMS", "0"),
    # XREADGROUP
    ("XREADGROUP", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "g", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "nokey", ">"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "str", ">"),
    ("XGROUP", "CREATE", "s", "g", "0"),
    ("XGROUP", "CREATE", "t", "g", "$"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "$"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "x"),
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">"),
    ("XINFO", "GROUPS", "s"),
    ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", "t", ">", ">"),
    ("XINFO", "GROUPS", "s"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0"),
    ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", "0"),
    ("XREADGROUP", "GROUP", "g", "c2", "COUNT", "1", "STREAMS", "s", "1-1"),
    ("XREADGROUP", "GROUP", "g", "c3", "STREAMS", "s", "0"),
    ("XPENDING", "s", "g"),
    ("XPENDING", "s", "g", "-", "+", "10"),
    ("XDEL", "s", "1-2"),
    ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", "0"),
    ("XADD", "s", "3-0", "e", "5"),
    ("XADD", "s", "4-0", "f", "6"),
    ("XINFO", "GROUPS", "s"),
    ("XREADGROUP", "GROUP", "g", "c", "NOACK", "COUNT", "1", "STREAMS", "s", ">"),
    ("XINFO", "GROUPS", "s"),
    ("XPENDING", "s", "g"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"),
    ("XINFO", "STREAM", "s", "FULL"),
    ("XINFO", "CONSUMERS", "s", "g"),
    ("XREADGROUP", "GROUP", "g", "c", "BLOCK", "10", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "nog", "c", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "t", ">"),
]

PENDING = [
    ("XADD", "s", "1-0", "a", "1"),
    ("XADD", "s", "2-0", "a", "2"),
    ("XADD", "s", "3-0", "a", "3"),
    ("XADD", "s", "4-0", "a", "4"),
    ("XADD", "s", "5-0", "a", "5"),
    ("XPENDING", "s", "g"),
    ("XPENDING", "nokey", "g"),
    ("XPENDING", "str", "g"),
    ("XGROUP", "CREATE", "s", "g", "0"),
    ("XPENDING", "s", "g"),
    ("XPENDING", "s", "g", "-"),
    ("XPENDING", "s", "g", "-", "+"),
    ("XPENDING", "s", "g", "-", "+", "x"),
    ("XPENDING", "s", "g", "x", "+", "10"),
    ("XPENDING", "s", "g", "-", "x", "10"),
    ("XPENDING", "s", "g", "IDLE", "x", "-", "+", "10"),
    ("XPENDING", "s", "g", "IDLE", "10", "-", "+"),
    ("XPENDING", "s", "g", "-", "+", "10", "c", "x"),
    ("XPENDING", "s", "g", "IDLE", "0", "-", "+", "10", "c", "x"),
    ("XPENDING", "s", "g", "(-", "+", "10"),
    ("XPENDING", "s", "g", "(18446744073709551615-18446744073709551615", "+", "10"),
    ("XPENDING", "s", "g", "-", "(0-0", "10"),
    ("XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "g", "bob", "COUNT", "2", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "g", "carol", "STREAMS", "s", ">"),
    ("XPENDING", "s", "g"),
    ("XPENDING", "s", "g", "-", "+", "10"),
    ("XPENDING", "s", "g", "-", "+", "0"),
    ("XPENDING", "s", "g", "-", "+", "-3"),
    ("XPENDING", "s", "g", "(1-0", "(5-0", "10"),
    ("XPENDING", "s", "g", "2", "3", "10"),
    ("XPENDING", "s", "g", "-", "+", "2"),
    ("XPENDING", "s", "g", "-", "+", "10", "bob"),
    ("XPENDING", "s", "g", "-", "+", "10", "nobody"),
    ("XPENDING", "s", "g", "IDLE", "100000000", "-", "+", "10"),
    ("XPENDING", "s", "g", "IDLE", "0", "-", "+", "10", "alice"),
    ("XPENDING", "s", "g", "IDLE", "-5", "-", "+", "10"),
    # XACK
    ("XACK", "s", "g"),
    ("XACK", "s", "g", "x"),
    ("XACK", "s", "g", "1-0", "x"),
    ("XACK", "nokey", "g", "1-0"),
    ("XACK", "s", "nog", "1-0"),
    ("XACK", "str", "g", "1-0"),
    ("XACK", "s", "g", "-"),
    ("XACK", "s", "g", "1-0", "1-0", "9-0"),
    ("XACK", "s", "g", "1"),
    ("XPENDING", "s", "g"),
    # XCLAIM
    ("XCLAIM", "s", "g", "dave", "0"),
    ("XCLAIM", "nokey", "g", "dave", "0", "2-0"),
    ("XCLAIM", "str", "g", "dave", "0", "2-0"),
    ("XCLAIM", "s", "nog", "dave", "0", "2-0"),
    ("XCLAIM", "s", "g", "dave", "x", "2-0"),
    ("XCLAIM", "s", "g", "dave", "0", "2-0", "FOO"),
    ("XCLAIM", "s", "g", "dave", "0", "2-0", "IDLE"),
    ("XCLAIM", "s", "g", "dave", "0", "2-0", "IDLE", "x"),
    ("XCLAIM", "s", "g", "dave", "0", "2-0", "TIME", "x"),
    ("XCLAIM", "s", "g", "dave", "0", "2-0", "RETRYCOUNT", "x"),
    ("XCLAIM", "s", "g", "dave", "0", "2-0", "LASTID", "x"),
    ("XCLAIM", "s", "g", "dave", "0", "x", "2-0"),
    ("XCLAIM", "s", "g", "dave", "0", "+"),
    ("XCLAIM", "s", "g", "dave", "100000000", "2-0"),
    ("XINFO", "CONSUMERS", "s", "g"),
    ("XCLAIM", "s", "g", "dave", "0", "2-0"),
    ("XCLAIM", "s", "g", "dave", "-5", "3-0", "JUSTID"),
    ("XPENDING", "s", "g", "-", "+", "10"),
    ("XCLAIM", "s", "g", "erin", "0", "2-0", "3-0", "9-0", "RETRYCOUNT", "7"),
    ("XPENDING", "s", "g", "-", "+", "10"),
    ("XCLAIM", "s", "g", "erin", "0", "4-0", "IDLE", "5000", "JUSTID"),
    ("XCLAIM", "s", "g", "erin", "0", "4-0", "TIME", "-5", "JUSTID"),
    ("XCLAIM", "s", "g", "erin", "0", "1-0", "JUSTID"),
    ("XCLAIM", "s", "g", "erin", "0", "1-0", "FORCE", "JUSTID"),
    ("XCLAIM", "s", "g", "erin", "0", "1-0", "FORCE"),
    ("XCLAIM", "s", "g", "erin", "0", "8-0", "FORCE"),
    ("XPENDING", "s", "g", "-", "+", "10"),
    ("XCLAIM", "s", "g", "erin", "0", "5-0", "LASTID", "9-0"),
    ("XINFO", "GROUPS", "s"),
    ("XCLAIM", "s", "g", "erin", "0", "5-0", "LASTID", "1-0", "force", "justid", "retrycount", "2"),
    ("XDEL", "s", "3-0"),
    ("XCLAIM", "s", "g", "frank", "0", "3-0", "2-0"),
    ("XPENDING", "s", "g"),
    ("XINFO", "CONSUMERS", "s", "g"),
    # XAUTOCLAIM
    ("XAUTOCLAIM", "s", "g", "gina", "0"),
    ("XAUTOCLAIM", "s", "g", "gina", "x", "0"),
    ("XAUTOCLAIM", "s", "g", "gina", "0", "x"),
    ("XAUTOCLAIM", "s", "g", "gina", "0", "(18446744073709551615-18446744073709551615"),
    ("XAUTOCLAIM", "s", "g", "gina", "0", "0", "COUNT"),
    ("XAUTOCLAIM", "s", "g", "gina", "0", "0", "COUNT", "0"),
    ("XAUTOCLAIM", "s", "g", "gina", "0", "0", "COUNT", "x"),
    ("XAUTOCLAIM", "s", "g", "gina", "0", "0", "COUNT", "9223372036854775807"),
    ("XAUTOCLAIM", "s", "g", "gina", "0", "0", "FOO"),
    ("XAUTOCLAIM", "nokey", "g", "gina", "0", "0"),
    ("XAUTOCLAIM", "str", "g", "gina", "0", "0"),
    ("XAUTOCLAIM", "s", "nog", "gina", "0", "0"),
    ("XAUTOCLAIM", "s", "g", "gina", "100000000", "0"),
    ("XINFO", "CONSUMERS", "s", "g"),
    ("XAUTOCLAIM", "s", "g", "gina", "0", "0", "COUNT", "1"),
    ("XAUTOCLAIM", "s", "g", "gina", "0", "(2-0", "COUNT", "2", "JUSTID"),
    ("XDEL", "s", "4-0", "5-0"),
    ("XAUTOCLAIM", "s", "g", "hank", "0", "-"),
    ("XAUTOCLAIM", "s", "g", "hank", "0", "-", "JUSTID"),
    ("XPENDING", "s", "g"),
    ("XPENDING", "s", "g", "-", "+", "10"),
    ("XINFO", "STREAM", "s", "FULL"),
    ("XGROUP", "DELCONSUMER", "s", "g", "hank"),
    ("XPENDING", "s", "g"),
]


@pytest.mark.parametrize("name,commands", [("basic", BASIC), ("setid", SETID),
                                           ("groups", GROUPS), ("reads", READS),
                                           ("pending", PENDING)])
def test_fixed_cases(keywarden, reference_redis, name, commands):
    kw, ref = both(keywarden, reference_redis)
    run_all(kw, ref, commands)


def test_resp3_replies(keywarden, reference_redis):
    kw, ref = both(keywarden, reference_redis)
    run_all(kw, ref, [("HELLO", "3")][:0])
    for conn in (kw, ref):
        conn.execute("HELLO", "3")
    run_all(kw, ref, [
        ("XADD", "s", "1-1", "a", "1"),
        ("XADD", "s", "2-1", "b", "2"),
        ("XADD", "t", "2-1", "b", "2"),
        ("XREAD", "STREAMS", "s", "t", "0", "0"),
        ("XREAD", "STREAMS", "s", "t", "$", "$"),
        ("XRANGE", "s", "-", "+", "COUNT", "0"),
        ("XGROUP", "CREATE", "s", "g", "0"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"),
        ("XINFO", "STREAM", "s"),
        ("XINFO", "STREAM", "s", "FULL"),
        ("XINFO", "GROUPS", "s"),
        ("XINFO", "CONSUMERS", "s", "g"),
        ("XPENDING", "s", "g"),
        ("XAUTOCLAIM", "s", "g", "c2", "0", "0"),
    ])


def test_node_layout_and_approximate_trim(keywarden, reference_redis):
    """Approximate trimming drops whole nodes: the nodes must be cut where Redis cuts them."""
    kw, ref = both(keywarden, reference_redis)
    rng = random.Random(7)
    for i in range(1, 700):
        fields = []
        for f in range(rng.randrange(1, 4)):
            fields += [f"f{f}" if rng.random() < 0.8 else f"g{rng.randrange(5)}",
                       rng.choice(["1", "-7", "300", "70000", "x" * rng.randrange(0, 90),
                                   str(rng.randrange(-10**12, 10**12))])]
        same(kw, ref, "XADD", "s", f"{i}-{rng.randrange(3)}", *fields)
        if i % 97 == 0:
            same(kw, ref, "XINFO", "STREAM", "s")
    same(kw, ref, "XTRIM", "s", "MAXLEN", "~", "500")
    same(kw, ref, "XTRIM", "s", "MAXLEN", "~", "300", "LIMIT", "100")
    same(kw, ref, "XTRIM", "s", "MINID", "~", "400")
    same(kw, ref, "XTRIM", "s", "MINID", "450")
    same(kw, ref, "XINFO", "STREAM", "s")
    same(kw, ref, "XADD", "s", "MAXLEN", "~", "100", "1000-0", "a", "1")
    same(kw, ref, "XINFO", "STREAM", "s")
    same(kw, ref, "XRANGE", "s", "-", "+")
    # Large values close nodes by bytes.
    for i in range(1, 60):
        same(kw, ref, "XADD", "big", f"{i}-0", "field", "v" * (i * 37))
    same(kw, ref, "XINFO", "STREAM", "big")
    same(kw, ref, "XTRIM", "big", "MAXLEN", "~", "10")
    same(kw, ref, "XINFO", "STREAM", "big")


def test_config_node_limits(keywarden, reference_redis):
    kw, ref = both(keywarden, reference_redis)
    run_all(kw, ref, [("XADD", "s", "0-1", "a", "b"),
                      ("CONFIG", "SET", "stream-node-max-entries", "3"),
                      ("CONFIG", "GET", "stream-node-max-entries"),
                      ("CONFIG", "SET", "stream-node-max-bytes", "4kb"),
                      ("CONFIG", "GET", "stream-node-max-bytes")])
    try:
        for i in range(1, 20):
            same(kw, ref, "XADD", "s", f"{i}", "a", "b")
        run_all(kw, ref, [("XINFO", "STREAM", "s"), ("XTRIM", "s", "MAXLEN", "~", "5"),
                          ("XINFO", "STREAM", "s"), ("XDEL", "s", "16", "17", "18"),
                          ("XINFO", "STREAM", "s"), ("XADD", "s", "30", "a", "b"),
                          ("XINFO", "STREAM", "s")])
    finally:
        for conn in (kw, ref):
            conn.execute("CONFIG", "SET", "stream-node-max-entries", "100")


def test_keyspace_events(keywarden, reference_redis):
    kw, ref = both(keywarden, reference_redis)
    subs = []
    for server, conn in ((keywarden, kw), (reference_redis, ref)):
        conn.execute("CONFIG", "SET", "notify-keyspace-events", "KEA")
        sub = server.raw()
        sub.execute("PSUBSCRIBE", "__keyevent@0__:*")
        subs.append(sub)
    try:
        commands = [
            ("XADD", "s", "1-1", "a", "1"),
            ("XADD", "s", "MAXLEN", "1", "2-1", "a", "1"),
            ("XDEL", "s", "2-1"),
            ("XADD", "s", "3-1", "a", "1"),
            ("XTRIM", "s", "MAXLEN", "0"),
            ("XSETID", "s", "5-5"),
            ("XGROUP", "CREATE", "s", "g", "$"),
            ("XGROUP", "CREATE", "m", "g", "$", "MKSTREAM"),
            ("XGROUP", "CREATECONSUMER", "s", "g", "c"),
            ("XADD", "s", "6-1", "a", "1"),
            ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">"),
            ("XCLAIM", "s", "g", "c3", "0", "6-1"),
            ("XGROUP", "SETID", "s", "g", "0"),
            ("XGROUP", "DELCONSUMER", "s", "g", "c"),
            ("XGROUP", "DESTROY", "s", "g"),
            ("SET", "done", "1"),
        ]
        run_all(kw, ref, commands)
        events = []
        for sub in subs:
            got = []
            while True:
                message = sub.read_reply()
                got.append(message[2:])
                if message[3] == b"done":
                    break
            events.append(got)
        assert events[0] == events[1]
    finally:
        for sub in subs:
            sub.close()
        for conn in (kw, ref):
            conn.execute("CONFIG", "SET", "notify-keyspace-events", "")


def test_generic_key_commands(keywarden, reference_redis):
    kw, ref = both(keywarden, reference_redis)
    run_all(kw, ref, [
        ("XADD", "s", "1-1", "a", "1"),
        ("XGROUP", "CREATE", "s", "g", "0"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"),
        ("TYPE", "s"),
        ("OBJECT", "ENCODING", "s"),
        ("SCAN", "0", "TYPE", "stream"),
        ("COPY", "s", "s2"),
        ("XINFO", "STREAM", "s2", "FULL"),
        ("RENAME", "s2", "s3"),
        ("XPENDING", "s3", "g"),
        ("LPUSH", "s", "x"),
        ("GET", "s"),
        ("DEL", "s", "s3"),
        ("COMMAND", "INFO", "xadd", "xread", "xreadgroup", "xclaim", "xautoclaim", "xsetid"),
        ("COMMAND", "INFO", "xgroup|create", "xinfo|stream", "xgroup|help"),
        ("COMMAND", "GETKEYS", "XREAD", "COUNT", "1", "STREAMS", "a", "b", "0", "0"),
        ("COMMAND", "GETKEYS", "XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", ">"),
    ])
    size = kw.execute("XADD", "m", "1-1", "a", "1")
    assert size == b"1-1"
    assert isinstance(kw.execute("MEMORY", "USAGE", "m"), int)


def test_transactions_and_scripts(keywarden, reference_redis):
    kw, ref = both(keywarden, reference_redis)
    run_all(kw, ref, [
        ("MULTI",),
        ("XADD", "s", "1-1", "a", "1"),
        ("XREAD", "BLOCK", "0", "STREAMS", "s", "$"),
        ("XREAD", "BLOCK", "0", "STREAMS", "s", "0"),
        ("EXEC",),
        ("EVAL", "return redis.call('XREAD', 'BLOCK', '0', 'STREAMS', 's', '$')", "0"),
        ("EVAL", "return redis.call('XREAD', 'STREAMS', 's', '0')", "0"),
        ("EVAL", "return redis.call('XADD', 's', '2-2', 'x', 'y')", "0"),
    ])


# --- Randomized run ---------------------------------------------------------------------------


def random_commands(rng: random.Random, n: int):
    keys = ["s1", "s2"]
    groups = ["g1", "g2"]
    consumers = ["c1", "c2", "c3"]
    next_ms = {k: 1 for k in keys}

    def some_id(key):
        top = next_ms[key]
        choice = rng.random()
        if choice < 0.1:
            return "-"
        if choice < 0.2:
            return "+"
        if choice < 0.3:
            return f"({rng.randrange(0, top + 2)}-{rng.randrange(3)}"
        return f"{rng.randrange(0, top + 2)}-{rng.randrange(3)}"

    for _ in range(n):
        key = rng.choice(keys)
        group = rng.choice(groups)
        consumer = rng.choice(consumers)
        op = rng.random()
        if op < 0.3:
            ms = next_ms[key]
            next_ms[key] += rng.randrange(0, 3)
            id_ = rng.choice([f"{ms}-*", f"{ms}-{rng.randrange(5)}", f"{ms}"])
            args = ["XADD", key]
            trim = rng.random()
            if trim < 0.1:
                args += ["MAXLEN", rng.choice(["=", "~"]), str(rng.randrange(0, 30))]
            elif trim < 0.15:
                args += ["MINID", f"{rng.randrange(0, ms + 1)}"]
            args.append(id_)
            for f in range(rng.randrange(1, 3)):
                args += [f"f{f}", str(rng.randrange(100))]
            yield tuple(args)
        elif op < 0.38:
            yield ("XRANGE", key, some_id(key), some_id(key), "COUNT", str(rng.randrange(0, 6)))
        elif op < 0.42:
            yield ("XREVRANGE", key, some_id(key), some_id(key))
        elif op < 0.47:
            ids = [f"{rng.randrange(0, next_ms[key] + 1)}-{rng.randrange(3)}"
                   for _ in range(rng.randrange(1, 4))]
            yield ("XDEL", key, *ids)
        elif op < 0.5:
            yield ("XTRIM", key, rng.choice(["MAXLEN", "MINID"]), rng.choice(["=", "~"]),
                   str(rng.randrange(0, max(2, next_ms[key]))))
        elif op < 0.55:
            yield ("XGROUP", "CREATE", key, group, rng.choice(["0", "$", "1-1"]), "MKSTREAM")
        elif op < 0.57:
            yield ("XGROUP", "SETID", key, group, rng.choice(["0", "$", "2-0"]))
        elif op < 0.66:
            args = ["XREADGROUP", "GROUP", group, consumer, "COUNT", str(rng.randrange(0, 4))]
            if rng.random() < 0.2:
                args.append("NOACK")
            args += ["STREAMS", key, rng.choice([">", ">", "0", "1-0"])]
            yield tuple(args)
        elif op < 0.72:
            yield ("XREAD", "COUNT", str(rng.randrange(0, 4)), "STREAMS", key,
                   f"{rng.randrange(0, next_ms[key] + 1)}-0")
        elif op < 0.77:
            yield ("XACK", key, group,
                   *[f"{rng.randrange(0, next_ms[key] + 1)}-{rng.randrange(3)}"
                     for _ in range(rng.randrange(1, 3))])
        elif op < 0.82:
            args = ["XCLAIM", key, group, consumer, "0",
                    *[f"{rng.randrange(0, next_ms[key] + 1)}-{rng.randrange(3)}"
                      for _ in range(rng.randrange(1, 3))]]
            if rng.random() < 0.3:
                args.append("JUSTID")
            if rng.random() < 0.2:
                args.append("FORCE")
            if rng.random() < 0.2:
                args += ["RETRYCOUNT", str(rng.randrange(5))]
            yield tuple(args)
        elif op < 0.86:
            args = ["XAUTOCLAIM", key, group, consumer, "0", some_id(key).replace("+", "-"),
                    "COUNT", str(rng.randrange(1, 4))]
            if rng.random() < 0.3:
                args.append("JUSTID")
            yield tuple(args)
        elif op < 0.9:
            yield ("XPENDING", key, group, "-", "+", str(rng.randrange(0, 10)),
                   *([consumer] if rng.random() < 0.5 else []))
        elif op < 0.92:
            yield ("XPENDING", key, group)
        elif op < 0.95:
            yield ("XINFO", rng.choice(["GROUPS", "STREAM"]), key)
        elif op < 0.97:
            yield ("XINFO", "STREAM", key, "FULL")
        elif op < 0.98:
            yield ("XGROUP", "DELCONSUMER", key, group, consumer)
        elif op < 0.99:
            yield ("XINFO", "CONSUMERS", key, group)
        else:
            yield ("XLEN", key)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_randomized(keywarden, reference_redis, seed):
    kw, ref = both(keywarden, reference_redis)
    rng = random.Random(seed)
    for command in random_commands(rng, 1500):
        same(kw, ref, *command)
