"""Output buffer limits cut a huge reply off as it is produced, side by side with redis-server.

Redis checks client-output-buffer-limit each time it appends to a client's replies: once the
hard limit is reached the client is flagged to be closed, nothing more is appended, and the
commands that can produce without end (HRANDFIELD, ZRANDMEMBER, SRANDMEMBER with a negative
count) stop drawing. So a client asking for a reply far larger than its limit is closed with
about the limit in its buffer, not after the whole reply was built. Both servers log the
closing with the client's CLIENT LIST line, whose omem= is what the buffer held then: that is
what these tests compare (far from the limit, the servers' slightly different accounting of
reply blocks cannot change an outcome).
"""

from __future__ import annotations

import re

import pytest

from conftest import redis_binary

MB = 1024 * 1024
CLOSE_LINE = re.compile(rb"Client (.*) scheduled to be closed ASAP for overcoming of output "
                        rb"buffer limits\.")
# A reply block (Redis: 16 KiB) and one element over the limit is all a server may hold more.
SLACK = 64 * 1024


@pytest.fixture(params=["keywarden", "redis"])
def limited_server(request, server_factory):
    """A server whose normal clients have a 1 MB hard limit."""
    directives = [("client-output-buffer-limit", ("normal", "1mb", "0", "0"))]
    if request.param == "keywarden":
        return server_factory(*directives)
    return server_factory(*directives, binary=redis_binary())


def closing_omem(server) -> list[int]:
    with open(server.log_path, "rb") as f:
        log = f.read()
    return [int(re.search(rb" omem=(\d+) ", m.group(1)).group(1))
            for m in CLOSE_LINE.finditer(log)]


def assert_cut_off(server, *command) -> None:
    """Sends `command` on a fresh client and checks it is closed without a byte of reply,
    holding about the hard limit when the server gave up on it; others are still served."""
    with server.raw() as admin, server.raw() as greedy:
        greedy.send_command(*command)
        assert greedy.read_until_close(timeout=60) == b""
        omem = closing_omem(server)
        assert len(omem) == 1, server.log()
        print(f"{server.name} {' '.join(map(str, command))}: closed with omem={omem[0]}")
        assert MB <= omem[0] < MB + SLACK, server.log()
        assert admin.execute("PING") == b"PONG"


def test_keys_on_200k_keys_closed_at_hard_limit(limited_server):
    with limited_server.raw() as conn:
        for start in range(0, 200_000, 1000):
            args = []
            for i in range(start, start + 1000):
                args += [f"key:{i:06}", "v"]
            conn.send_command("MSET", *args)
        for _ in range(200):
            assert conn.read_reply() == b"OK"
        assert conn.execute("DBSIZE") == 200_000
    assert_cut_off(limited_server, "KEYS", "*")


@pytest.mark.parametrize("command", [
    ("HRANDFIELD", "h", "-100000000"),
    ("HRANDFIELD", "h", "-100000000", "WITHVALUES"),
    ("ZRANDMEMBER", "z", "-100000000"),
    ("ZRANDMEMBER", "z", "-100000000", "WITHSCORES"),
    ("SRANDMEMBER", "s", "-100000000"),
    ("SRANDMEMBER", "si", "-100000000"),
])
def test_random_draws_closed_at_hard_limit(limited_server, command):
    with limited_server.raw() as conn:
        # Small (listpack/intset) and large (hashtable/skiplist) collections alike.
        conn.execute("HSET", "h", "a", "1", "b", "2")
        conn.execute("ZADD", "z", "1", "a", "2", "b")
        conn.execute("SADD", "s", *[f"m{i}" for i in range(1000)])
        conn.execute("SADD", "si", "1", "2", "3")
    assert_cut_off(limited_server, *command)


def test_reply_under_the_limit_is_whole(limited_server):
    with limited_server.raw() as conn:
        conn.execute("SADD", "s", "a", "b", "c")
        reply = conn.execute("SRANDMEMBER", "s", "-20000")
        assert len(reply) == 20000 and set(reply) == {b"a", b"b", b"c"}
    assert closing_omem(limited_server) == []
