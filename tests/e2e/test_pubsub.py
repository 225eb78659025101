"""Pub/sub (SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE, their UNSUBSCRIBEs, PUBLISH, SPUBLISH, PUBSUB)
with several clients over raw sockets, keywarden against a stock redis-server, in RESP2 and
RESP3; CLIENT LIST and INFO fields; and the cut-off of slow subscribers by
client-output-buffer-limit.

Scenarios are scripts in conftest.run_client_script's language; the raw bytes of every reply
are compared between the two servers. Redis walks hash tables where several channels or
patterns are involved at once (UNSUBSCRIBE of everything, PUBSUB CHANNELS, a message matching
several patterns of one client), so scenarios keep to one element there: that order is not
part of the contract.
"""

from __future__ import annotations

import time

import pytest

from conftest import assert_same_script_replies, redis_binary

SCENARIOS: dict[str, str] = {
    "subscribe-and-publish": """
        A SUBSCRIBE ch1 ch2
        A<
        B PUBLISH ch1 hello
        A<
        B PUBLISH ch2 world
        A<
        B PUBLISH nobody x
        A?
        A SUBSCRIBE ch1
        B PUBLISH ch1 again
        A<
        """,
    "patterns": """
        A PSUBSCRIBE news.*
        B PUBLISH news.it ciao
        A<
        B PUBLISH sport.it x
        A?
        B PUBSUB NUMPAT
        C PSUBSCRIBE news.*
        B PUBSUB NUMPAT
        B PUBLISH news.fr salut
        A<
        C<
        A PUNSUBSCRIBE news.*
        B PUBLISH news.it x
        A?
        C<
        """,
    "channel-and-pattern": """
        A SUBSCRIBE news
        A PSUBSCRIBE n*
        B PUBLISH news m
        A<
        A<
        A PSUBSCRIBE h?llo
        B PUBLISH hallo m2
        A<
        B PUBLISH hllo m3
        A?
        """,
    "shard-channels": """
        A SSUBSCRIBE s1 s2
        A<
        B SPUBLISH s1 m
        A<
        B PUBLISH s1 m
        A?
        B PUBSUB SHARDNUMSUB s1 s2 s3
        B PUBSUB SHARDCHANNELS s1*
        B PUBSUB SHARDCHANNELS x*
        B PUBSUB NUMSUB s1
        A SUNSUBSCRIBE s1
        B SPUBLISH s1 m
        A?
        A SUNSUBSCRIBE
        A SUNSUBSCRIBE
        A PING
        """,
    "subscribed-mode": """
        A SUBSCRIBE c
        A GET k
        A SET k v
        A PING
        A PING hi
        A ECHO x
        A NOSUCHCOMMAND x
        A GET
        A PSUBSCRIBE p
        A UNSUBSCRIBE c
        A PING
        A PUNSUBSCRIBE
        A PING
        A GET k
        """,
    "counts-across-kinds": """
        A SUBSCRIBE a
        A PSUBSCRIBE p*
        A SSUBSCRIBE s
        A UNSUBSCRIBE a
        A PING
        A PUNSUBSCRIBE p*
        A UNSUBSCRIBE
        A PING
        A SUNSUBSCRIBE s
        A PING
        """,
    "unsubscribe-from-nothing": """
        A UNSUBSCRIBE
        A PUNSUBSCRIBE
        A SUNSUBSCRIBE
        A UNSUBSCRIBE x y
        A<
        A PUNSUBSCRIBE x
        A SUNSUBSCRIBE x
        A PING
        """,
    "reset-unsubscribes": """
        A SUBSCRIBE c
        A PSUBSCRIBE p*
        A SSUBSCRIBE s
        A RESET
        A PING
        B PUBSUB NUMSUB c
        B PUBSUB NUMPAT
        B PUBSUB SHARDNUMSUB s
        B PUBLISH c x
        B PUBLISH pq x
        A?
        """,
    "disconnect-unsubscribes": """
        A SUBSCRIBE c
        A PSUBSCRIBE *
        A SSUBSCRIBE s
        A!
        B PUBSUB NUMSUB c
        B PUBSUB NUMPAT
        B PUBSUB SHARDNUMSUB s
        B PUBLISH c x
        B SPUBLISH s x
        """,
    "inside-multi": """
        A MULTI
        A SUBSCRIBE a b
        A SSUBSCRIBE s
        A PING
        A EXEC
        A<
        A PING
        B PUBLISH a m
        A<
        """,
    "multi-refused-when-subscribed": """
        A SUBSCRIBE c
        A MULTI
        A EXEC
        A DISCARD
        A UNSUBSCRIBE
        A MULTI
        A PUBLISH c x
        A EXEC
        """,
    "introspection": """
        A SUBSCRIBE c1
        B SUBSCRIBE c1
        B PSUBSCRIBE x
        C PUBSUB NUMSUB c1 c2
        C PUBSUB NUMSUB
        C PUBSUB CHANNELS c*
        C PUBSUB CHANNELS nomatch*
        C PUBSUB NUMPAT
        C PUBSUB SHARDNUMSUB
        C PUBSUB CHANNELS a b
        C pubsub shardchannels a b
        C PUBSUB NUMPAT x
        C PUBSUB HELP
        C PUBSUB FOO
        C PUBSUB
        C PUBLISH c1 m
        A<
        B<
        """,
    "duplicates": """
        A SUBSCRIBE a b a
        A<
        A<
        A PSUBSCRIBE p* p*
        A<
        A UNSUBSCRIBE a a
        A<
        B PUBSUB NUMSUB a b p*
        B PUBSUB NUMPAT
        B PUBLISH pq m
        A<
        A PUNSUBSCRIBE p* p*
        A<
        B CLIENT KILL TYPE pubsub
        B PUBSUB NUMSUB b
        """,
    "arity-errors": """
        A SUBSCRIBE
        A PSUBSCRIBE
        A SSUBSCRIBE
        A PUBLISH c
        A PUBLISH c m extra
        A SPUBLISH c
        A PUBLISH c m
        """,
    # Redis 7.0 delivers (un)subscription confirmations and messages whatever CLIENT REPLY
    # says, in RESP2 as in RESP3; only the commands' other replies are dropped.
    "reply-off-confirmations": """
        A> CLIENT REPLY OFF
        A> SUBSCRIBE c
        A<
        B PUBLISH c m
        A<
        A> PSUBSCRIBE p*
        A<
        B PUBLISH px m2
        A<
        A> SUBSCRIBE
        A> PING
        A?
        A> UNSUBSCRIBE c
        A<
        A> PUNSUBSCRIBE
        A<
        A> UNSUBSCRIBE
        A<
        A> SSUBSCRIBE s
        A<
        A> SUNSUBSCRIBE s
        A<
        A> GET k
        A?
        A> CLIENT REPLY ON
        A<
        A PING
        """,
    "reply-skip-confirmations": """
        A> CLIENT REPLY SKIP
        A> SUBSCRIBE c
        A<
        A UNSUBSCRIBE c
        A> CLIENT REPLY SKIP
        A> UNSUBSCRIBE
        A<
        A> CLIENT REPLY SKIP
        A> PUNSUBSCRIBE x
        A<
        A PING
        """,
    "reply-off-subscribe-inside-multi": """
        A> CLIENT REPLY OFF
        A> MULTI
        A> SUBSCRIBE x
        A> EXEC
        A<
        B PUBLISH x m
        A<
        A> UNSUBSCRIBE x
        A<
        A> CLIENT REPLY ON
        A<
        A PING
        """,
    # Leaving what one is not subscribed to, and the RESP2 subscribed mode around it: a client
    # stays in it while any kind of subscription is left.
    "unsubscribe-interplay": """
        A UNSUBSCRIBE
        A GET k
        A SSUBSCRIBE s
        A UNSUBSCRIBE
        A PUNSUBSCRIBE
        A GET k
        A UNSUBSCRIBE a b
        A<
        A PUNSUBSCRIBE a
        A SUNSUBSCRIBE x
        A GET k
        A SUNSUBSCRIBE s
        A GET k
        A PSUBSCRIBE p
        A SUNSUBSCRIBE
        A GET k
        A SUBSCRIBE c
        A PUNSUBSCRIBE p q
        A<
        A GET k
        A UNSUBSCRIBE c c
        A<
        A GET k
        A SUNSUBSCRIBE s1 s2
        A<
        A PING
        """,
    "quit-when-subscribed": """
        A SUBSCRIBE c
        A QUIT
        B PUBSUB NUMSUB c
        """,
}

# Scenarios whose shape depends on RESP3 (a subscribed RESP2 client could not run them).
RESP3_SCENARIOS: dict[str, str] = {
    "publish-to-self": """
        A SUBSCRIBE c
        A PUBLISH c self
        A<
        A SET k v
        A GET k
        """,
    "reply-off-still-delivers": """
        A SUBSCRIBE c
        A> CLIENT REPLY OFF
        B PUBLISH c m1
        A> PUBLISH c self
        A> CLIENT REPLY ON
        A<
        A<
        A<
        A PING
        """,
    "commands-between-messages": """
        A PSUBSCRIBE k*
        A SET k1 v
        B PUBLISH k1 m
        A<
        A MULTI
        A GET k1
        A EXEC
        A PUNSUBSCRIBE
        """,
}

SCENARIO_NAMES = sorted(SCENARIOS)


@pytest.mark.parametrize("protocol", [2, 3])
@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_scenario(keywarden, reference_redis, name, protocol):
    assert_same_script_replies(keywarden, reference_redis, name, SCENARIOS[name], protocol)


@pytest.mark.parametrize("name", sorted(RESP3_SCENARIOS))
def test_resp3_scenario(keywarden, reference_redis, name):
    assert_same_script_replies(keywarden, reference_redis, name, RESP3_SCENARIOS[name], 3)


@pytest.mark.parametrize("which", ["keywarden", "redis"])
def test_hello_2_enters_subscribed_mode(keywarden, reference_redis, which):
    server = keywarden if which == "keywarden" else reference_redis
    with server.raw() as a, server.raw() as b:
        a.execute("HELLO", "3")
        assert a.execute("SUBSCRIBE", "c") == [b"subscribe", b"c", 1]
        assert a.execute("GET", "k") is None
        a.execute("HELLO", "2")
        refused = a.execute("GET", "k")
        assert bytes(refused).startswith(b"ERR Can't execute 'get': only (P|S)SUBSCRIBE")
        assert b.execute("PUBLISH", "c", "x") == 1
        assert a.read_reply_bytes() == b"*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nx\r\n"
        assert bytes(a.execute("HELLO", "3")).startswith(b"ERR Can't execute 'hello'")
        assert a.execute("RESET") == b"RESET"
        assert a.execute("PING") == b"PONG"


def client_fields(conn) -> dict[str, str]:
    line = conn.execute("CLIENT", "INFO").decode().strip()
    return dict(item.split("=", 1) for item in line.split(" "))


def info_fields(conn, section: str) -> dict[str, str]:
    rows = conn.execute("INFO", section).decode().splitlines()
    return dict(row.split(":", 1) for row in rows if ":" in row)


@pytest.mark.parametrize("which", ["keywarden", "redis"])
def test_client_list_and_info_fields(keywarden, reference_redis, which):
    server = keywarden if which == "keywarden" else reference_redis
    with server.raw() as a, server.raw() as b:
        # CLIENT INFO is refused in RESP2 subscribed mode: look at A from B.
        a_id = a.execute("CLIENT", "ID")
        a.execute("SUBSCRIBE", "c1")
        a.send_command("SUBSCRIBE", "c2", "c3")
        a.read_replies(2)
        a.execute("PSUBSCRIBE", "p*")
        a.execute("SSUBSCRIBE", "s")
        line = b.execute("CLIENT", "LIST", "ID", str(a_id)).decode().strip()
        fields = dict(item.split("=", 1) for item in line.split(" "))
        assert (fields["flags"], fields["sub"], fields["psub"], fields["ssub"]) == \
            ("P", "3", "1", "1")
        assert fields["omem"] == "0"
        listed = b.execute("CLIENT", "LIST", "TYPE", "pubsub").decode().strip().splitlines()
        assert [row.split(" ")[0] for row in listed] == [f"id={a_id}"]
        stats = info_fields(b, "stats")
        assert (stats["pubsub_channels"], stats["pubsub_patterns"],
                stats["pubsubshard_channels"]) == ("3", "1", "1")
        assert client_fields(b)["flags"] == "N"
        a.execute("SUNSUBSCRIBE")
        a.execute("PUNSUBSCRIBE")
        a.send_command("UNSUBSCRIBE")
        a.read_replies(3)
        fields = client_fields(a)
        assert (fields["flags"], fields["sub"], fields["psub"], fields["ssub"]) == \
            ("N", "0", "0", "0")
        stats = info_fields(b, "stats")
        assert (stats["pubsub_channels"], stats["pubsub_patterns"],
                stats["pubsubshard_channels"]) == ("0", "0", "0")


@pytest.mark.parametrize("which", ["keywarden", "redis"])
def test_client_output_buffer_limit_config(server_factory, which):
    server = server_factory(binary=None if which == "keywarden" else redis_binary())
    with server.raw() as conn:
        def get():
            return conn.execute("CONFIG", "GET", "client-output-buffer-limit")[1]

        assert get() == b"normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
        assert conn.execute("CONFIG", "SET", "client-output-buffer-limit",
                            "replica 1k 2kb 3 PUBSUB 1mb 8mb 0") == b"OK"
        assert get() == b"normal 0 0 0 slave 1000 2048 3 pubsub 1048576 8388608 0"
        assert conn.execute("CONFIG", "SET", "client-output-buffer-limit", "") == b"OK"
        prefix = ("ERR CONFIG SET failed (possibly related to argument "
                  "'client-output-buffer-limit') - ")
        for value, reason in [
            ("master 1 2 3", "Invalid client class specified in buffer limit configuration."),
            ("foo 1 2 3", "Invalid client class specified in buffer limit configuration."),
            ("pubsub 1 2", "Wrong number of arguments in buffer limit configuration."),
            ("pubsub x 2 3", "Error in hard, soft or soft_seconds setting in buffer limit "
                             "configuration."),
            ("pubsub 1 2 x", "Error in hard, soft or soft_seconds setting in buffer limit "
                             "configuration."),
            ("pubsub -1 2 3", "Error in hard, soft or soft_seconds setting in buffer limit "
                              "configuration."),
            # All or nothing: the valid first class is not applied either.
            ("normal 5 5 5 pubsub 1 2 x", "Error in hard, soft or soft_seconds setting in "
                                          "buffer limit configuration."),
        ]:
            reply = conn.execute("CONFIG", "SET", "client-output-buffer-limit", value)
            assert bytes(reply).decode() == prefix + reason, value
        assert get() == b"normal 0 0 0 slave 1000 2048 3 pubsub 1048576 8388608 0"


@pytest.mark.parametrize("which", ["keywarden", "redis"])
def test_client_output_buffer_limit_at_startup(server_factory, which):
    server = server_factory(("client-output-buffer-limit", ("pubsub", "1mb", "2mb", "3")),
                            ("client-output-buffer-limit", ("replica", "0", "0", "0")),
                            binary=None if which == "keywarden" else redis_binary())
    with server.raw() as conn:
        assert conn.execute("CONFIG", "GET", "client-output-buffer-limit")[1] == \
            b"normal 0 0 0 slave 0 0 0 pubsub 1048576 2097152 3"


def flood(publisher, channel: str, count: int, size: int) -> None:
    """PUBLISH `count` messages of `size` bytes, pipelined, and read every reply."""
    payload = "x" * size
    batch = 50
    for start in range(0, count, batch):
        n = min(batch, count - start)
        for _ in range(n):
            publisher.send_command("PUBLISH", channel, payload)
        for reply in publisher.read_replies(n):
            assert isinstance(reply, int)


@pytest.mark.parametrize("which", ["keywarden", "redis"])
def test_slow_subscriber_hard_limit(server_factory, which):
    server = server_factory(binary=None if which == "keywarden" else redis_binary())
    with server.raw() as admin, server.raw() as slow, server.raw() as fast, \
            server.raw() as publisher:
        assert admin.execute("CONFIG", "SET", "client-output-buffer-limit",
                             "pubsub 256kb 0 0") == b"OK"
        slow.execute("SUBSCRIBE", "firehose")
        fast.execute("SUBSCRIBE", "other")
        # The slow subscriber never reads: the kernel buffers fill, then its output grows
        # past the hard limit and it is cut off. 40 MB is far more than loopback buffers hold.
        flood(publisher, "firehose", 4000, 10_000)
        deadline = time.monotonic() + 5
        while admin.execute("PUBSUB", "NUMSUB", "firehose")[1] != 0:
            assert time.monotonic() < deadline, "slow subscriber still subscribed"
            time.sleep(0.05)
        slow.read_until_close(timeout=10)
        # Nobody else noticed.
        assert publisher.execute("PUBLISH", "other", "still here") == 1
        assert fast.read_reply() == [b"message", b"other", b"still here"]
        assert admin.execute("PING") == b"PONG"
        assert admin.execute("PUBSUB", "NUMSUB", "other") == [b"other", 1]
    assert "scheduled to be closed ASAP for overcoming of output buffer limits" in server.log()


@pytest.mark.parametrize("which", ["keywarden", "redis"])
def test_slow_subscriber_soft_limit(server_factory, which):
    server = server_factory(binary=None if which == "keywarden" else redis_binary())
    with server.raw() as admin, server.raw() as slow, server.raw() as publisher:
        assert admin.execute("CONFIG", "SET", "client-output-buffer-limit",
                             "pubsub 0 128kb 1") == b"OK"
        slow.execute("SUBSCRIBE", "firehose")
        flood(publisher, "firehose", 2000, 10_000)
        # Over the soft limit, but not yet for longer than a second: still subscribed.
        assert admin.execute("PUBSUB", "NUMSUB", "firehose") == [b"firehose", 1]
        time.sleep(2.2)
        # The next message finds it over the soft limit for too long.
        publisher.execute("PUBLISH", "firehose", "one more")
        deadline = time.monotonic() + 5
        while admin.execute("PUBSUB", "NUMSUB", "firehose")[1] != 0:
            assert time.monotonic() < deadline, "slow subscriber still subscribed"
            time.sleep(0.05)
        slow.read_until_close(timeout=10)
        assert admin.execute("PING") == b"PONG"


@pytest.mark.parametrize("which", ["keywarden", "redis"])
def test_slow_subscriber_soft_limit_without_more_traffic(server_factory, which):
    # Redis's clientsCron checks the limits of every client: a subscriber that stays over the
    # soft limit for longer than its seconds is closed even when nothing more is published.
    server = server_factory(binary=None if which == "keywarden" else redis_binary())
    with server.raw() as admin, server.raw() as slow, server.raw() as publisher:
        assert admin.execute("CONFIG", "SET", "client-output-buffer-limit",
                             "pubsub 0 128kb 1") == b"OK"
        slow.execute("SUBSCRIBE", "firehose")
        flood(publisher, "firehose", 2000, 10_000)
        deadline = time.monotonic() + 10
        while admin.execute("PUBSUB", "NUMSUB", "firehose")[1] != 0:
            assert time.monotonic() < deadline, "slow subscriber still subscribed"
            time.sleep(0.05)
        slow.read_until_close(timeout=10)
        assert admin.execute("PING") == b"PONG"
    # Closed by the cron, at once (not scheduled), in Redis's words.
    assert " closed for overcoming of output buffer limits." in server.log()
    assert "scheduled to be closed ASAP" not in server.log()


def test_many_subscribers_each_get_every_message(keywarden):
    subscribers = [keywarden.raw() for _ in range(30)]
    try:
        for i, conn in enumerate(subscribers):
            if i % 2:
                conn.execute("SUBSCRIBE", "room")
            else:
                conn.execute("PSUBSCRIBE", "ro*")
        with keywarden.raw() as publisher:
            for n in range(20):
                assert publisher.execute("PUBLISH", "room", f"m{n}") == 30
        for i, conn in enumerate(subscribers):
            for n in range(20):
                expected = ([b"message", b"room", f"m{n}".encode()] if i % 2 else
                            [b"pmessage", b"ro*", b"room", f"m{n}".encode()])
                assert conn.read_reply() == expected
    finally:
        for conn in subscribers:
            conn.close()
