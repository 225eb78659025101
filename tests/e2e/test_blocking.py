"""Blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP) with
several clients over raw sockets, keywarden against a stock redis-server.

Each scenario is a script for named clients (A, B, C, D) of one server (the language is
conftest.run_client_script's), and the raw bytes of every reply are compared between the two
servers.
"""

from __future__ import annotations

import time

import pytest

from conftest import assert_same_script_replies

SCENARIOS: dict[str, str] = {
    "wake-by-push": """
        A> BLPOP k 0
        A?
        B RPUSH k x
        A<
        B LLEN k
        B EXISTS k
        """,
    "served-at-once": """
        B RPUSH k a b
        A BLPOP k 0
        A BRPOP k 0
        A BLPOP k 0.05
        """,
    "fifo-per-key": """
        A> BLPOP k 0
        B> BLPOP k 0
        C> BRPOP k 0
        D RPUSH k 1 2 3 4
        A<
        B<
        C<
        D LRANGE k 0 -1
        """,
    "several-keys": """
        A> BLPOP k1 k2 k3 0
        B RPUSH k3 c
        A<
        B RPUSH k2 b
        B RPUSH k1 a
        A BLPOP k1 k2 0
        A BLPOP k3 k2 0
        """,
    "timeouts": """
        A BLPOP k 0.05
        A BRPOP k 0.01
        A BLMOVE k d LEFT LEFT 0.02
        A BRPOPLPUSH k d 0.02
        A BLMPOP 0.02 1 k LEFT
        A BZPOPMIN z 0.02
        A BZPOPMAX z 0.02
        A BZMPOP 0.02 1 z MIN
        """,
    # Issue 25: "0.001" is just under 1 ms in binary; truncated to 0 it meant "forever".
    # Redis 7.0 rounds up to whole milliseconds, so every positive fraction times out.
    "sub-millisecond-timeouts": """
        A BLPOP k 0.001
        A BRPOP k 0.001
        A BLMOVE k d LEFT RIGHT 0.001
        A BRPOPLPUSH k d 0.001
        A BLMPOP 0.001 1 k LEFT
        A BZPOPMIN z 0.001
        A BZPOPMAX z 0.001
        A BZMPOP 0.001 1 z MIN
        A BLPOP k 0.0001
        A BZPOPMAX z 0.0005
        A BLMPOP 0.0015 2 k d RIGHT COUNT 3
        """,
    "fractional-timeouts": """
        A BLPOP k 0.01
        A BRPOP k 0.01
        A BLMOVE k d RIGHT LEFT 0.01
        A BRPOPLPUSH k d 0.01
        A BLMPOP 0.01 1 k RIGHT
        A BZPOPMIN z 0.01
        A BZPOPMAX z 0.01
        A BZMPOP 0.01 1 z MAX
        A BLPOP k 0.5
        A BZMPOP 0.5 1 z MIN COUNT 2
        """,
    "bad-timeouts-every-command": """
        A BRPOP k -0.5
        A BRPOPLPUSH k d -1
        A BLMPOP -1 1 k LEFT
        A BZPOPMAX z -1
        A BZMPOP -1.5 1 z MIN
        A BRPOP k 1.5x
        A BLMOVE k d LEFT LEFT abc
        A BRPOPLPUSH k d 1.5.5
        A BLMPOP nan 1 k LEFT
        A BZPOPMAX z inf
        A BZMPOP 1e400 1 z MIN
        A BLPOP k 9223372036854775807
        A BLMOVE k d LEFT LEFT -inf
        A BZPOPMIN z 1e30
        """,
    "bad-timeouts": """
        A BLPOP k -1
        A BLPOP k abc
        A BLPOP k 1e400
        A BLPOP k nan
        A BLMOVE k d LEFT LEFT -0.5
        A BZPOPMIN z x
        """,
    "pipeline-waits-behind": """
        A> BLPOP k 0
        A> PING
        A> GET k
        A?
        B RPUSH k v
        A<
        A<
        A<
        """,
    "multi-serves-after-exec": """
        A> BLPOP k 0
        B MULTI
        B RPUSH k a b
        B LPOP k
        B EXEC
        A<
        B LRANGE k 0 -1
        """,
    "no-blocking-inside-multi": """
        A MULTI
        A BLPOP k 0
        A BLMOVE k d LEFT LEFT 0
        A BZPOPMIN z 0
        A EXEC
        """,
    "wrong-type-keeps-waiting": """
        A> BLPOP k 0
        B SET k str
        A?
        B DEL k
        A?
        B RPUSH k v
        A<
        """,
    "rename-and-move-wake": """
        A> BLPOP k 0
        B RPUSH other x
        B RENAME other k
        A<
        A> BLPOP k 0
        B SELECT 1
        B RPUSH k y
        B MOVE k 0
        A<
        """,
    "swapdb-wakes": """
        A> BLPOP k 0
        B SELECT 1
        B RPUSH k v
        B SWAPDB 0 1
        A<
        """,
    "client-unblock": """
        A> BLPOP k 0
        B CLIENT UNBLOCK $A
        A<
        A> BLMOVE k d LEFT LEFT 0
        B CLIENT UNBLOCK $A TIMEOUT
        A<
        A> BLPOP k 0
        B CLIENT UNBLOCK $A ERROR
        A<
        B CLIENT UNBLOCK $A
        A PING
        """,
    "blmove-chain": """
        A> BLMOVE a b LEFT RIGHT 0
        B> BLPOP b 0
        C RPUSH a v
        A<
        B<
        C EXISTS a b
        """,
    "brpoplpush-rotation": """
        A> BRPOPLPUSH k k 0
        B RPUSH k v
        A<
        B LRANGE k 0 -1
        """,
    "blmpop-count": """
        A> BLMPOP 0 2 k1 k2 RIGHT COUNT 2
        B RPUSH k2 a b c
        A<
        B LRANGE k2 0 -1
        """,
    "disconnect-while-blocked": """
        A> BLPOP k 0
        A!
        B RPUSH k v
        B LLEN k
        """,
    "sorted-sets": """
        A> BZPOPMIN z 0
        B> BZPOPMAX z 0
        C ZADD z 1 a 2 b 3 c
        A<
        B<
        C ZRANGE z 0 -1 WITHSCORES
        A> BZMPOP 0 2 y z MAX COUNT 5
        C ZADD y 5 x
        A<
        """,
    "served-from-the-key-that-became-ready": """
        A> BLPOP a b 0
        B MULTI
        B RPUSH b x
        B RPUSH a y
        B EXEC
        A<
        A> BLMPOP 0 2 a b RIGHT COUNT 5
        B DEL a
        B MULTI
        B RPUSH b 1 2
        B RPUSH a 3
        B EXEC
        A<
        A> BZPOPMIN y z 0
        B MULTI
        B ZADD z 1 m
        B ZADD y 2 n
        B EXEC
        A<
        A> BZMPOP 0 2 y z MAX
        B DEL y z
        B MULTI
        B ZADD z 1 m
        B ZADD y 2 n
        B EXEC
        A<
        """,
    "list-waiter-ignores-zset": """
        A> BLPOP k 0
        B ZADD k 1 m
        A?
        B DEL k
        B LPUSH k v
        A<
        """,
}

SCENARIO_NAMES = sorted(SCENARIOS)


@pytest.mark.parametrize("protocol", [2, 3])
@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_scenario(keywarden, reference_redis, name, protocol):
    assert_same_script_replies(keywarden, reference_redis, name, SCENARIOS[name], protocol)


def info_field(conn, name: str) -> int:
    for row in conn.execute("INFO", "clients").decode().splitlines():
        if row.startswith(name + ":"):
            return int(row.split(":", 1)[1])
    raise AssertionError(f"INFO clients has no {name}")


@pytest.mark.parametrize("which", ["keywarden", "redis"])
def test_blocked_clients_are_reported(keywarden, reference_redis, which):
    server = keywarden if which == "keywarden" else reference_redis
    with server.raw() as a, server.raw() as b, server.raw() as c:
        assert info_field(c, "blocked_clients") == 0
        a.send_command("BLPOP", "k", "0")
        b.send_command("BZPOPMIN", "z", "100")
        time.sleep(0.1)
        assert info_field(c, "blocked_clients") == 2
        assert info_field(c, "clients_in_timeout_table") == 1
        rows = [row for row in c.execute("CLIENT", "LIST").decode().splitlines()
                if "cmd=client" not in row]
        assert len(rows) == 2
        assert all(" flags=b " in row for row in rows)
        assert {row.split(" cmd=")[1].split()[0] for row in rows} == {"blpop", "bzpopmin"}
        assert c.execute("RPUSH", "k", "v") == 1
        assert a.read_reply() == [b"k", b"v"]
        assert info_field(c, "blocked_clients") == 1
        b.close()
        time.sleep(0.1)
        assert info_field(c, "blocked_clients") == 0
        assert info_field(c, "clients_in_timeout_table") == 0


def test_many_waiters_are_served_in_order(keywarden):
    n = 50
    waiters = [keywarden.raw() for _ in range(n)]
    try:
        for conn in waiters:
            conn.send_command("BLPOP", "queue", "5")
        time.sleep(0.2)
        with keywarden.raw() as pusher:
            assert pusher.execute("RPUSH", "queue", *range(n)) == n
        for i, conn in enumerate(waiters):
            assert conn.read_reply() == [b"queue", str(i).encode()]
    finally:
        for conn in waiters:
            conn.close()


def test_sub_second_timeouts_expire_on_their_own(keywarden):
    # No other traffic: the server must wake for the deadline itself, not wait for the cron.
    with keywarden.raw() as a:
        start = time.monotonic()
        assert a.execute("BLPOP", "k", "0.3") is None
        assert time.monotonic() - start >= 0.29
