"""SORT and SORT_RO against a stock redis-server: the same data, the same commands, the raw reply
bytes compared (RESP2 and RESP3).

Sets are sorted only in ways whose result does not depend on the server's hashing (numeric or
ALPHA, or BY a constant for STORE, which Redis turns into ALPHA). A set sorted BY a constant
without STORE comes back in storage order, so only its length is compared.
"""

from __future__ import annotations

import pytest

from conftest import Map

SETUP = [
    ("RPUSH", "nums", "3", "1", "2", "10", "-5", "2.5", "1e2", "0x10", " 7"),
    ("RPUSH", "words", "pear", "apple", "fig", "banana", "Apple", "10", "9"),
    ("RPUSH", "mixed", "1", "two", "3"),
    ("RPUSH", "ids", "1", "2", "3", "4", "5"),
    ("RPUSH", "emptystr", "", "1", "0"),
    ("SADD", "snums", "5", "3", "9", "1", "7"),
    ("SADD", "swords", "kiwi", "plum", "date", "lime"),
    ("ZADD", "z", "3", "c", "1", "a", "2", "b", "5", "e", "4", "d"),
    ("ZADD", "znums", "1", "30", "2", "10", "3", "20"),
    ("MSET", "w_1", "50", "w_2", "10", "w_3", "30", "w_4", "20", "w_5", "40"),
    ("MSET", "name_1", "one", "name_2", "two", "name_3", "three", "name_4", "four"),
    ("HSET", "h_1", "f", "5", "g", "x1"),
    ("HSET", "h_2", "f", "3", "g", "x2"),
    ("HSET", "h_3", "f", "4"),
    ("HSET", "h_5", "f", "1", "g", "x5"),
    ("SET", "str", "value"),
    ("HSET", "ahash", "f", "v"),
    ("SET", "w_a", "notanumber"),
]

COMMANDS = [
    ("SORT", "nums"),
    ("SORT", "nums", "DESC"),
    ("SORT", "nums", "ALPHA"),
    ("SORT", "words"),
    ("SORT", "words", "ALPHA"),
    ("SORT", "words", "ALPHA", "DESC"),
    ("SORT", "words", "ALPHA", "LIMIT", "1", "3"),
    ("SORT", "mixed"),
    ("SORT", "emptystr"),
    ("SORT", "ids", "LIMIT", "0", "2"),
    ("SORT", "ids", "LIMIT", "2", "-1"),
    ("SORT", "ids", "LIMIT", "-3", "2"),
    ("SORT", "ids", "LIMIT", "4", "10"),
    ("SORT", "ids", "LIMIT", "5", "1"),
    ("SORT", "ids", "LIMIT", "100", "1"),
    ("SORT", "ids", "LIMIT", "1", "0"),
    ("SORT", "ids", "LIMIT", "9223372036854775807", "9223372036854775807"),
    ("SORT", "ids", "LIMIT", "1"),
    ("SORT", "ids", "LIMIT", "a", "1"),
    ("SORT", "ids", "LIMIT", "1", "b"),
    ("SORT", "ids", "BY", "w_*"),
    ("SORT", "ids", "BY", "w_*", "DESC"),
    ("SORT", "ids", "BY", "w_*", "LIMIT", "1", "2"),
    ("SORT", "ids", "BY", "nosort"),
    ("SORT", "ids", "BY", "nosort", "DESC"),
    ("SORT", "ids", "BY", "nosort", "LIMIT", "1", "2"),
    ("SORT", "ids", "BY", "nosort", "DESC", "LIMIT", "1", "2"),
    ("SORT", "ids", "BY", "nosort", "DESC", "LIMIT", "3", "10"),
    ("SORT", "ids", "BY", "name_*", "ALPHA"),
    ("SORT", "ids", "BY", "name_*", "ALPHA", "DESC"),
    ("SORT", "ids", "BY", "h_*->f"),
    ("SORT", "ids", "BY", "h_*->g", "ALPHA"),
    ("SORT", "ids", "BY", "h_*->"),
    ("SORT", "ids", "GET", "#"),
    ("SORT", "ids", "GET", "name_*"),
    ("SORT", "ids", "GET", "#", "GET", "name_*", "GET", "h_*->g"),
    ("SORT", "ids", "GET", "nostar"),
    ("SORT", "ids", "GET", "h_*->f", "BY", "w_*", "DESC", "LIMIT", "0", "3"),
    ("SORT", "ids", "BY", "w_a"),
    ("SORT", "words"),
    ("SORT", "snums"),
    ("SORT", "snums", "DESC", "LIMIT", "1", "2"),
    ("SORT", "swords", "ALPHA"),
    ("SORT", "snums", "BY", "w_*"),
    ("SORT", "z"),
    ("SORT", "z", "ALPHA"),
    ("SORT", "z", "ALPHA", "DESC"),
    ("SORT", "z", "BY", "nosort"),
    ("SORT", "z", "BY", "nosort", "DESC"),
    ("SORT", "z", "BY", "nosort", "LIMIT", "1", "3"),
    ("SORT", "z", "BY", "nosort", "DESC", "LIMIT", "1", "3"),
    ("SORT", "znums"),
    ("SORT", "missing"),
    ("SORT", "missing", "BY", "nosort", "LIMIT", "0", "5"),
    ("SORT", "str"),
    ("SORT", "ahash"),
    ("SORT", "ids", "FOO"),
    ("SORT", "ids", "BY"),
    ("SORT", "ids", "GET"),
    ("SORT", "ids", "STORE"),
    ("SORT", "str", "FOO"),
    ("SORT_RO", "ids", "STORE", "dst"),
    ("SORT_RO", "ids", "DESC", "GET", "name_*"),
    ("SORT_RO", "z", "ALPHA"),
    ("SORT_RO", "str"),
    ("SORT",),
    ("SORT_RO",),
    ("SORT", "ids", "STORE", "dst"),
    ("LRANGE", "dst", "0", "-1"),
    ("SORT", "ids", "GET", "name_*", "GET", "#", "STORE", "dst"),
    ("LRANGE", "dst", "0", "-1"),
    ("OBJECT", "ENCODING", "dst"),
    ("SORT", "swords", "BY", "nosort", "STORE", "dst"),
    ("LRANGE", "dst", "0", "-1"),
    ("SORT", "missing", "STORE", "dst"),
    ("EXISTS", "dst"),
    ("SORT", "missing", "STORE", "dst"),
    ("SORT", "mixed", "STORE", "dst"),
    ("SORT", "ids", "STORE", "str"),
    ("TYPE", "str"),
    ("SET", "str", "value"),
    ("OBJECT", "ENCODING", "z"),
]

# Replies whose content depends on a set's storage order: compared by length only.
LENGTH_ONLY = {("SORT", "snums", "BY", "w_*")}


def run(server, protocol: int) -> list[bytes]:
    with server.raw() as conn:
        if protocol == 3:
            assert isinstance(conn.execute("HELLO", "3"), Map)
        for command in SETUP:
            conn.execute(*command)
        out = []
        for command in COMMANDS:
            reply, raw = (conn.send_command(*command), conn.read_reply_with_raw())[1]
            out.append(len(reply) if command in LENGTH_ONLY else raw)
        return out


@pytest.mark.parametrize("protocol", [2, 3])
def test_sort_matches_redis(keywarden, reference_redis, protocol):
    kw = run(keywarden, protocol)
    ref = run(reference_redis, protocol)
    for command, k, r in zip(COMMANDS, kw, ref):
        assert k == r, f"{' '.join(command)}: keywarden {k!r}, redis {r!r}"


def test_sort_store_propagates_verbatim_and_counts_changes(keywarden):
    with keywarden.raw() as conn:
        conn.execute("RPUSH", "l", "3", "1", "2")
        before = int(dict(line.split(":", 1) for line in conn.execute("INFO", "persistence")
                          .decode().split("\r\n") if ":" in line)["rdb_changes_since_last_save"])
        assert conn.execute("SORT", "l", "STORE", "out") == 3
        after = int(dict(line.split(":", 1) for line in conn.execute("INFO", "persistence")
                         .decode().split("\r\n") if ":" in line)["rdb_changes_since_last_save"])
        assert after - before == 3
        assert conn.execute("LRANGE", "out", "0", "-1") == [b"1", b"2", b"3"]
