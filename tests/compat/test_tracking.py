"""Client-side caching (CLIENT TRACKING, CACHING, GETREDIR, TRACKINGINFO) against a stock
redis-server 7.0: the same client scripts run on both servers and every reply, push and pub/sub
message is compared byte for byte.

The scripts cover the default mode (keys remembered per reader, one message per read), BCAST
with and without prefixes, OPTIN/OPTOUT with CLIENT CACHING, NOLOOP, REDIRECT to a RESP2
subscriber and to a RESP3 client, a redirect whose target went away, flushes (the null
invalidation), expiry, MULTI and scripts, and every error CLIENT TRACKING can answer.
"""

from __future__ import annotations

import time

import pytest

from conftest import Map, Push, assert_same_script_replies, wait_until

# Scripts of run_client_script (tests/conftest.py): "A cmd" sends and reads one reply, "A<"
# reads one more (a push), "A?" expects nothing for a moment, "$B" is client B's id.
RESP3_SCENARIOS = {
    "read-then-write-invalidates-once": """
        B SET k 1
        A CLIENT TRACKING on
        A GET k
        B SET k 2
        A<
        B SET k 3
        A?
        A GET k
        B DEL k
        A<
        """,
    "own-write-comes-after-reply": """
        A CLIENT TRACKING on
        A GET k
        A SET k 1
        A<
        A PING
        """,
    "noloop-skips-own-writes": """
        A CLIENT TRACKING on NOLOOP
        A GET k
        A SET k 1
        A PING
        A GET k
        B SET k 2
        A<
        """,
    "mget-tracks-every-key": """
        A CLIENT TRACKING on
        A MGET a b c
        B MSET a 1 c 3
        A<
        A<
        B SET b 2
        A<
        """,
    "optin-needs-caching-yes": """
        A CLIENT TRACKING on OPTIN
        A GET k1
        B SET k1 x
        A?
        A CLIENT CACHING yes
        A GET k2
        B SET k2 x
        A<
        A CLIENT CACHING yes
        A PING
        A GET k3
        B SET k3 x
        A?
        """,
    "optout-caching-no-skips": """
        A CLIENT TRACKING on OPTOUT
        A CLIENT CACHING no
        A GET k1
        B SET k1 x
        A?
        A GET k2
        B SET k2 x
        A<
        """,
    "caching-survives-client-commands": """
        A CLIENT TRACKING on OPTIN
        A CLIENT CACHING yes
        A CLIENT TRACKINGINFO
        A CLIENT GETNAME
        A GET k
        B SET k 1
        A<
        """,
    "caching-in-multi": """
        A CLIENT TRACKING on OPTIN
        A MULTI
        A CLIENT CACHING yes
        A GET k
        A EXEC
        B SET k 1
        A<
        """,
    "bcast-all-keys": """
        A CLIENT TRACKING on BCAST
        B SET x 1
        A<
        B MSET y 1 z 2
        A<
        A CLIENT TRACKINGINFO
        """,
    "bcast-prefixes": """
        A CLIENT TRACKING on BCAST PREFIX user: PREFIX lock:
        B SET user:1 a
        A<
        B SET other 1
        B SET lock:9 b
        A<
        A CLIENT TRACKINGINFO
        A CLIENT TRACKING on BCAST PREFIX session:
        A CLIENT TRACKINGINFO
        """,
    "bcast-noloop": """
        A CLIENT TRACKING on BCAST NOLOOP
        A SET mine 1
        A PING
        B SET theirs 1
        A<
        """,
    "flushall-null-invalidation": """
        B SET k 1
        A CLIENT TRACKING on
        A GET k
        C CLIENT TRACKING on BCAST
        B FLUSHALL
        A<
        C<
        """,
    "flushdb-own-client": """
        A CLIENT TRACKING on
        A FLUSHDB
        A<
        A PING
        """,
    "redirect-to-resp3-client": """
        R PING
        A CLIENT TRACKING on REDIRECT $R
        A GET k
        B SET k 1
        R<
        A?
        """,
    "expiry-invalidates": """
        B SET k 1 PX 50
        A CLIENT TRACKING on
        A GET k
        ~ 0.3
        B GET k
        A<
        """,
    "swapdb": """
        A CLIENT TRACKING on
        A GET k
        B SELECT 1
        B SET k 1
        A<
        A GET k
        B SWAPDB 0 1
        A?
        A GET k
        """,
    "own-lazy-expiry-after-reply": """
        A SET k 1 PX 30
        A CLIENT TRACKING on
        A GET k
        ~ 0.2
        A GET k
        A<
        """,
    "hash-field-change": """
        B HSET h f 1
        A CLIENT TRACKING on
        A HGET h f
        B HSET h g 2
        A<
        """,
    "script-reads-are-tracked": """
        A CLIENT TRACKING on
        A EVAL return(redis.call('GET',KEYS[1])) 1 k
        B SET k 1
        A<
        A EVAL_RO return(redis.call('GET',KEYS[1])) 1 k2
        B SET k2 1
        A<
        """,
    "off-stops-messages": """
        A CLIENT TRACKING on
        A GET k
        A CLIENT TRACKING off
        B SET k 1
        A?
        A CLIENT TRACKINGINFO
        A CLIENT GETREDIR
        """,
    "reset-turns-tracking-off": """
        A CLIENT TRACKING on BCAST
        A RESET
        A CLIENT TRACKINGINFO
        B SET k 1
        A?
        """,
}

RESP2_SCENARIOS = {
    "redirect-to-subscriber": """
        R SUBSCRIBE __redis__:invalidate
        A CLIENT TRACKING on REDIRECT $R
        A GET k
        A MGET a b
        B SET k 1
        R<
        B MSET a 1 b 2
        R<
        R<
        B FLUSHALL
        R<
        """,
    "redirect-bcast-to-subscriber": """
        R SUBSCRIBE __redis__:invalidate
        A CLIENT TRACKING on BCAST PREFIX p REDIRECT $R
        B MSET p1 1 p2 2 q 3
        R<
        """,
    "resp2-without-redirect-hears-nothing": """
        A CLIENT TRACKING on
        A GET k
        B SET k 1
        A?
        A CLIENT GETREDIR
        """,
    "redirect-to-unsubscribed-resp2": """
        R PING
        A CLIENT TRACKING on REDIRECT $R
        A GET k
        B SET k 1
        R?
        """,
    "errors": """
        A CLIENT TRACKING
        A CLIENT TRACKING maybe
        A CLIENT TRACKING on bogus
        A CLIENT TRACKING on REDIRECT
        A CLIENT TRACKING on REDIRECT abc
        A CLIENT TRACKING on REDIRECT 999999
        A CLIENT TRACKING on REDIRECT 0
        A CLIENT TRACKING on PREFIX a
        A CLIENT TRACKING on BCAST OPTIN
        A CLIENT TRACKING on BCAST OPTOUT
        A CLIENT TRACKING on OPTIN OPTOUT
        A CLIENT TRACKING on BCAST PREFIX ab PREFIX a
        A CLIENT TRACKING on BCAST PREFIX a PREFIX b
        A CLIENT TRACKING on BCAST PREFIX abc
        A CLIENT TRACKING on
        A CLIENT TRACKING off
        A CLIENT TRACKING on OPTIN
        A CLIENT TRACKING on OPTOUT
        A CLIENT TRACKING on BCAST
        A CLIENT TRACKING off bogus
        A CLIENT TRACKING off
        A CLIENT CACHING yes
        A CLIENT CACHING
        A CLIENT CACHING maybe
        A CLIENT TRACKING on
        A CLIENT CACHING yes
        A CLIENT CACHING no
        A CLIENT CACHING maybe
        A CLIENT TRACKING off
        A CLIENT TRACKING on OPTOUT
        A CLIENT CACHING yes
        A CLIENT CACHING no
        A CLIENT TRACKINGINFO
        A CLIENT GETREDIR
        A CLIENT GETREDIR extra
        A CLIENT TRACKINGINFO extra
        """,
    "trackinginfo-modes": """
        A CLIENT TRACKINGINFO
        A CLIENT TRACKING on OPTIN NOLOOP
        A CLIENT CACHING yes
        A CLIENT TRACKINGINFO
        A CLIENT GETREDIR
        A CLIENT TRACKING off
        A CLIENT TRACKING on BCAST PREFIX b PREFIX a
        A CLIENT TRACKINGINFO
        A CLIENT TRACKING on BCAST PREFIX c
        A CLIENT TRACKINGINFO
        """,
}


@pytest.mark.parametrize("name", sorted(RESP3_SCENARIOS))
def test_resp3_scenario(keywarden, reference_redis, name):
    assert_same_script_replies(keywarden, reference_redis, name, RESP3_SCENARIOS[name], 3)


@pytest.mark.parametrize("name", sorted(RESP2_SCENARIOS))
def test_resp2_scenario(keywarden, reference_redis, name):
    assert_same_script_replies(keywarden, reference_redis, name, RESP2_SCENARIOS[name], 2)


def info_fields(conn, section: str) -> dict[str, str]:
    text = conn.execute("INFO", section).decode()
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def test_info_counts_clients_keys_items_and_prefixes(keywarden):
    readers = [keywarden.raw() for _ in range(2)]
    for conn in readers:
        assert isinstance(conn.execute("HELLO", "3"), Map)
        assert conn.execute("CLIENT", "TRACKING", "on") == b"OK"
        conn.execute("MGET", "a", "b", "c")
    bcast = keywarden.raw()
    assert bcast.execute("HELLO", "3")
    assert bcast.execute("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "x", "PREFIX", "y") == b"OK"
    admin = keywarden.raw()
    assert info_fields(admin, "clients")["tracking_clients"] == "3"
    stats = info_fields(admin, "stats")
    assert (stats["tracking_total_keys"], stats["tracking_total_items"],
            stats["tracking_total_prefixes"]) == ("3", "6", "2")
    admin.execute("SET", "a", "1")
    stats = info_fields(admin, "stats")
    assert (stats["tracking_total_keys"], stats["tracking_total_items"]) == ("2", "4")
    bcast.close()
    readers[0].close()
    assert wait_until(lambda: info_fields(admin, "clients")["tracking_clients"] == "1")
    assert info_fields(admin, "stats")["tracking_total_prefixes"] == "0"
    # Keys read by clients that have gone stay remembered until they change, then go.
    readers[1].close()
    assert wait_until(lambda: info_fields(admin, "clients")["tracking_clients"] == "0")
    assert info_fields(admin, "stats")["tracking_total_keys"] == "2"
    admin.execute("SET", "b", "1")
    assert info_fields(admin, "stats")["tracking_total_keys"] == "1"


def test_table_limit_forgets_keys_and_tells_readers(keywarden):
    """Over tracking-table-max-keys the server forgets random keys, telling their readers."""
    admin = keywarden.raw()
    assert admin.execute("CONFIG", "SET", "tracking-table-max-keys", "10") == b"OK"
    try:
        reader = keywarden.raw()
        assert isinstance(reader.execute("HELLO", "3"), Map)
        assert reader.execute("CLIENT", "TRACKING", "on") == b"OK"
        keys = [f"key:{i}" for i in range(50)]
        reader.execute("MGET", *keys)
        assert wait_until(lambda: int(info_fields(admin, "stats")["tracking_total_keys"]) <= 10)
        invalidated = set()
        while len(invalidated) < 40:
            push = reader.read_reply()
            assert isinstance(push, Push) and push[0] == b"invalidate", push
            invalidated.update(push[1])
        assert invalidated <= set(k.encode() for k in keys)
    finally:
        admin.execute("CONFIG", "SET", "tracking-table-max-keys", "1000000")


def test_redis_py_client_side_cache(keywarden):
    """redis-py's own client-side cache (RESP3, cache_config) stays correct across writes."""
    import redis
    if not hasattr(redis, "CacheConfig") and "cache_config" not in redis.Redis.__init__.__code__.co_varnames:
        pytest.skip("this redis-py has no client-side cache")
    from redis.cache import CacheConfig
    cached = redis.Redis(host="127.0.0.1", port=keywarden.port, protocol=3,
                         cache_config=CacheConfig())
    writer = keywarden.client()
    try:
        writer.set("k", "1")
        assert cached.get("k") == b"1"
        assert cached.get("k") == b"1"  # from the cache
        writer.set("k", "2")
        assert wait_until(lambda: cached.get("k") == b"2")
    finally:
        cached.close()


def test_invalidation_never_lands_inside_a_reply(keywarden):
    """A tracking client's own write invalidates after its reply, also inside MULTI/EXEC."""
    conn = keywarden.raw()
    assert isinstance(conn.execute("HELLO", "3"), Map)
    assert conn.execute("CLIENT", "TRACKING", "on") == b"OK"
    conn.execute("MGET", "a", "b")
    assert conn.execute("MULTI") == b"OK"
    assert conn.execute("SET", "a", "1") == b"QUEUED"
    assert conn.execute("SET", "b", "1") == b"QUEUED"
    assert conn.execute("EXEC") == [b"OK", b"OK"]
    pushes = [conn.read_reply(), conn.read_reply()]
    assert pushes == [Push([b"invalidate", [b"a"]]), Push([b"invalidate", [b"b"]])]
    time.sleep(0.05)
    assert conn.execute("PING") == b"PONG"


@pytest.mark.parametrize("server_name", ["keywarden", "redis"])
def test_broken_redirect(keywarden, reference_redis, server_name):
    """A redirect target that went away: the tracking client hears tracking-redir-broken with
    the target's id, and TRACKINGINFO and CLIENT LIST show it (ids differ between servers, so
    this runs the same checks on each instead of comparing bytes)."""
    server = keywarden if server_name == "keywarden" else reference_redis
    target = server.raw()
    target_id = target.execute("CLIENT", "ID")
    tracker = server.raw()
    assert isinstance(tracker.execute("HELLO", "3"), Map)
    assert tracker.execute("CLIENT", "TRACKING", "on", "REDIRECT", str(target_id)) == b"OK"
    tracker.execute("GET", "k")
    target.close()
    writer = server.raw()
    assert wait_until(lambda: f"id={target_id} ".encode()
                      not in writer.execute("CLIENT", "LIST"))
    writer.execute("SET", "k", "1")
    assert tracker.read_reply() == Push([b"tracking-redir-broken", target_id])
    info = tracker.execute("CLIENT", "TRACKINGINFO")
    assert info[b"flags"] == [b"on", b"broken_redirect"]
    assert info[b"redirect"] == target_id
    assert b"flags=tR " in tracker.execute("CLIENT", "INFO")


@pytest.mark.parametrize("server_name", ["keywarden", "redis"])
def test_client_list_shows_tracking(keywarden, reference_redis, server_name):
    """CLIENT INFO/LIST: flags t (tracking) and B (BCAST), redir= the target, 0, or -1."""
    server = keywarden if server_name == "keywarden" else reference_redis
    conn = server.raw()
    other_id = server.raw().execute("CLIENT", "ID")

    def fields():
        line = conn.execute("CLIENT", "INFO").decode()
        return dict(item.split("=", 1) for item in line.split())

    assert (fields()["flags"], fields()["redir"]) == ("N", "-1")
    assert conn.execute("CLIENT", "TRACKING", "on", "BCAST") == b"OK"
    assert (fields()["flags"], fields()["redir"]) == ("tB", "0")
    assert conn.execute("CLIENT", "TRACKING", "off") == b"OK"
    assert conn.execute("CLIENT", "TRACKING", "on", "REDIRECT", str(other_id)) == b"OK"
    assert (fields()["flags"], fields()["redir"]) == ("t", str(other_id))
