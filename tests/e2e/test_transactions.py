"""MULTI/EXEC/DISCARD/WATCH/UNWATCH over raw sockets, keywarden against a stock redis-server.

Each scenario is a script of commands sent by named clients (A, B, C) of one server; the raw
reply bytes of every command are compared between the two servers. A line ``~ 0.2`` sleeps
(client side) so that keys with short deadlines expire: the scenarios check what Redis 7.0.15
does with watched keys that expire, and with keys already expired when WATCHed.
"""

from __future__ import annotations

import pytest

from conftest import assert_same_script_replies, encode_command

SCENARIOS: dict[str, str] = {
    "basic": """
        A MULTI
        A SET k v
        A GET k
        A INCR n
        A EXEC
        A GET k
        A MULTI
        A EXEC
        """,
    "control-errors": """
        A EXEC
        A DISCARD
        A WATCH k
        A EXEC x
        B SET k 1
        A MULTI
        A EXEC
        A MULTI x
        A UNWATCH x
        A WATCH
        A MULTI
        A MULTI
        A WATCH k
        A SET k 1
        A EXEC
        A MULTI
        A DISCARD x
        A DISCARD
        A EXEC
        """,
    "queueing-errors-abort": """
        A MULTI
        A SET k v
        A NOSUCH a b
        A GET
        A SET k2 v
        A EXEC
        A EXISTS k k2
        A EXEC
        A MULTI
        A OBJECT NOPE k
        A EXEC
        A MULTI
        A SET k v
        A EXEC x
        A EXISTS k
        A EXEC
        """,
    "runtime-errors-no-rollback": """
        A MULTI
        A SET a x
        A INCR a
        A SET b 2
        A SET c v BADOPT
        A EXPIRE b abc
        A EXEC
        A MGET a b c
        """,
    "select-inside": """
        A MULTI
        A SELECT 2
        A SET k v
        A EXEC
        A GET k
        A SELECT 0
        A GET k
        """,
    "watch-other-client": """
        A SET k 1
        A WATCH k
        B SET k 2
        A MULTI
        A SET k 3
        A EXEC
        A GET k
        A MULTI
        A EXEC
        """,
    "watch-own-write": """
        A WATCH k
        A SET k 1
        A MULTI
        A PING
        A EXEC
        """,
    "watch-no-change": """
        A SET k 1
        A WATCH k missing
        B SET other 1
        B GET k
        B DEL missing
        B EXPIRE k 100 XX
        B PERSIST k
        B GETEX k
        B SETNX k 5
        B RENAME k k
        A MULTI
        A GET k
        A EXEC
        """,
    "unwatch": """
        A WATCH k
        A UNWATCH
        B SET k 1
        A MULTI
        A EXEC
        A WATCH k
        B SET k 2
        A WATCH j
        A UNWATCH
        A MULTI
        A EXEC
        """,
    "discard-unwatches": """
        A WATCH k
        A MULTI
        A SET k mine
        A DISCARD
        B SET k 2
        A MULTI
        A EXEC
        """,
    "exec-unwatches": """
        A WATCH k
        A MULTI
        A SET k mine
        A EXEC
        B SET k 2
        A MULTI
        A EXEC
        """,
    "watch-per-db": """
        A SELECT 3
        A WATCH k
        B SET k 1
        A MULTI
        A EXEC
        A WATCH k
        B SELECT 3
        B SET k 1
        A MULTI
        A EXEC
        """,
    "writes-that-touch": """
        A SET k 1
        A WATCH k
        B EXPIRE k 100
        A MULTI
        A EXEC
        A WATCH k
        B PERSIST k
        A MULTI
        A EXEC
        A WATCH k
        B RENAME k j
        A MULTI
        A EXEC
        A WATCH k
        B RENAME j k
        A MULTI
        A EXEC
        A WATCH k
        B MOVE k 1
        A MULTI
        A EXEC
        A WATCH j
        B SELECT 1
        B COPY k j DB 0
        B SELECT 0
        A MULTI
        A EXEC
        A WATCH j
        B APPEND j x
        A MULTI
        A EXEC
        A WATCH j
        B INCRBYFLOAT n 1
        B SETRANGE j 0 y
        A MULTI
        A EXEC
        A WATCH j
        B DEL j
        A MULTI
        A EXEC
        """,
    "flush-and-swap": """
        A WATCH k
        B FLUSHDB
        A MULTI
        A EXEC
        A SET k 1
        A WATCH k
        B FLUSHDB
        A MULTI
        A EXEC
        A SET k 1
        A WATCH k
        B FLUSHALL
        A MULTI
        A EXEC
        A SET k 1
        A WATCH k
        B SWAPDB 2 3
        A MULTI
        A EXEC
        A WATCH k
        B SWAPDB 0 1
        A MULTI
        A EXEC
        A WATCH k
        B SWAPDB 0 1
        A MULTI
        A EXEC
        A WATCH nothere
        B SWAPDB 0 1
        A MULTI
        A EXEC
        """,
    "watched-key-expires": """
        A SET k 1 PX 50
        A WATCH k
        ~ 0.2
        A MULTI
        A EXEC
        A SET k 1 PX 50
        A WATCH k
        ~ 0.2
        B GET k
        A MULTI
        A EXEC
        A SET k 1 PX 50
        A WATCH k
        ~ 0.2
        B SET k 2
        A MULTI
        A EXEC
        A SET k 1 PX 5000
        A WATCH k
        A MULTI
        A EXEC
        """,
    "watched-key-already-expired": """
        A DEBUG SET-ACTIVE-EXPIRE 0
        A SET k 1 PX 50
        ~ 0.2
        A WATCH k
        A MULTI
        A EXEC
        A SET k 1 PX 50
        ~ 0.2
        A WATCH k
        B GET k
        B DEL k
        A MULTI
        A EXEC
        A SET k 1 PX 50
        ~ 0.2
        A WATCH k
        A SET k 2
        A MULTI
        A EXEC
        A SET k 1 PX 50
        ~ 0.2
        A WATCH k
        B FLUSHDB
        A MULTI
        A EXEC
        A SET w 1 PX 50
        ~ 0.2
        A WATCH w
        B SWAPDB 0 1
        A MULTI
        A EXEC
        B FLUSHALL
        B SELECT 1
        B SET w 1 PX 50
        ~ 0.2
        A WATCH w
        B SWAPDB 0 1
        A MULTI
        A EXEC
        A DEBUG SET-ACTIVE-EXPIRE 1
        """,
    "reset": """
        A WATCH k
        A MULTI
        A SET k v
        A RESET
        A EXEC
        B SET k 1
        A MULTI
        A EXEC
        A EXISTS k
        """,
    "quit-inside": """
        A MULTI
        A SET k v
        A QUIT
        B EXISTS k
        """,
}

SCENARIO_NAMES = sorted(SCENARIOS)


@pytest.mark.parametrize("protocol", [2, 3])
@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_scenario(keywarden, reference_redis, name, protocol):
    assert_same_script_replies(keywarden, reference_redis, name, SCENARIOS[name], protocol)


def client_fields(raw: bytes) -> dict[str, str]:
    text = raw.split(b"\r\n", 1)[1].decode()
    return dict(field.split("=", 1) for field in text.split())


@pytest.mark.parametrize("which", ["keywarden", "redis"])
def test_client_list_multi_state(keywarden, reference_redis, which):
    server = keywarden if which == "keywarden" else reference_redis
    with server.raw() as a, server.raw() as b:
        info = client_fields(a.execute_raw("CLIENT", "INFO"))
        assert (info["flags"], info["multi"], info["multi-mem"]) == ("N", "-1", "0")
        assert a.execute("WATCH", "k") == b"OK"
        assert b.execute("SET", "k", "1") == b"OK"
        info = client_fields(a.execute_raw("CLIENT", "INFO"))
        assert info["flags"] == "d"
        assert a.execute("UNWATCH") == b"OK"
        assert a.execute("MULTI") == b"OK"
        assert a.execute("SET", "q", "1") == b"QUEUED"
        assert a.execute("GET", "q") == b"QUEUED"
        # Seen from another client while queueing, and from inside the EXEC.
        rows = [row for row in b.execute("CLIENT", "LIST").decode().splitlines()
                if "multi=-1" not in row]
        assert len(rows) == 1 and " flags=x " in rows[0] and " multi=2 " in rows[0]
        assert a.execute("CLIENT", "INFO") == b"QUEUED"
        replies = a.execute("EXEC")
        inside = dict(f.split("=", 1) for f in replies[-1].decode().split())
        assert (inside["flags"], inside["multi"], inside["cmd"]) == ("x", "3", "exec")
        assert int(inside["multi-mem"]) > 0
        after = client_fields(a.execute_raw("CLIENT", "INFO"))
        assert (after["flags"], after["multi"], after["multi-mem"]) == ("N", "-1", "0")


@pytest.mark.parametrize("which", ["keywarden", "redis"])
def test_pipelined_transaction_is_atomic(keywarden, reference_redis, which):
    server = keywarden if which == "keywarden" else reference_redis
    with server.raw() as a, server.raw() as b:
        n = 500
        a.send(encode_command("MULTI")
               + b"".join(encode_command("INCR", "counter") for _ in range(n))
               + encode_command("EXEC"))
        # B's reads land before or after the whole transaction, never inside it.
        seen = {b.execute("GET", "counter") for _ in range(50)}
        replies = a.read_replies(n + 2)
        assert replies[0] == b"OK" and all(r == b"QUEUED" for r in replies[1:-1])
        assert replies[-1] == list(range(1, n + 1))
        assert seen <= {None, str(n).encode()}
        assert b.execute("GET", "counter") == str(n).encode()
