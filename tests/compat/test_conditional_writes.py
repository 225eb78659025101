"""Conditional writes without Lua: SET's IFEQ/IFNE/IFDEQ/IFDNE, DELEX, DIGEST and MSETEX
(Redis 8.4) and DELIFEQ (Valkey 9.0).

Debian's redis-server 7.0 lacks these commands, so the expected replies are written here from
Redis 8.4's documentation and command definitions (src/commands/{set,delex,digest,msetex}.json,
redis.io/commands) and from valkey.io/commands/delifeq. Digests come from the documentation's
examples and redis/redis#14496 (a digest with leading zeros). Where Redis 7.0 can still serve as
an oracle it does: a stock redis-server replica of a keywarden primary must apply what these
commands propagate (plain SET / SET … PXAT / DEL) and end up with the same data.
"""

from __future__ import annotations

import pytest
import redis

from conftest import encode_command, parse_replies, redis_binary, wait_until

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
SYNTAX = "ERR syntax error"
DIGEST_LENGTH = "ERR must be exactly 16 hexadecimal characters"
HELLO_DIGEST = "b6acb9d84a38ff74"  # DIGEST of "Hello world", redis.io/commands/digest
# A value whose XXH3 has leading zeros (redis/redis#14496): DIGEST keeps them.
ZEROS_VALUE = ("v8lf0c11xh8ymlqztfd3eeq16kfn4sspw7fqmnuuq3k3t75em5wdizgcdw7uc26nnf961u2jkfzkjy"
               "tls2kwlj7626sd")
ZEROS_DIGEST = "00006c38adf31777"

# (name, setup commands, the command, its expected reply, then checks as (command, reply)).
# A reply written as an Exception-like string starting with "ERR"/"WRONGTYPE" is an error.
CASES = [
    # --- DIGEST ---
    ("digest-doc-example", [("SET", "k", "Hello world")], ("DIGEST", "k"), HELLO_DIGEST, []),
    ("digest-leading-zeros", [("SET", "k", ZEROS_VALUE)], ("DIGEST", "k"), ZEROS_DIGEST, []),
    ("digest-integer-encoded", [("SET", "k", "123")], ("DIGEST", "k"), None, []),
    ("digest-missing", [], ("DIGEST", "nokey"), None, []),
    ("digest-wrongtype", [("RPUSH", "k", "a")], ("DIGEST", "k"), WRONGTYPE, []),
    # --- SET IFEQ: never creates; sets only on an equal string ---
    ("set-ifeq-equal", [("SET", "k", "v1")], ("SET", "k", "v2", "IFEQ", "v1"), "OK",
     [(("GET", "k"), "v2")]),
    ("set-ifeq-differs", [("SET", "k", "v1")], ("SET", "k", "v2", "IFEQ", "zz"), None,
     [(("GET", "k"), "v1")]),
    ("set-ifeq-missing", [], ("SET", "k", "v2", "IFEQ", "v1"), None, [(("EXISTS", "k"), 0)]),
    ("set-ifeq-wrongtype", [("RPUSH", "k", "a")], ("SET", "k", "v", "IFEQ", "a"), WRONGTYPE,
     [(("TYPE", "k"), "list")]),
    ("set-ifeq-get-equal", [("SET", "k", "v1")], ("SET", "k", "v2", "IFEQ", "v1", "GET"), "v1",
     [(("GET", "k"), "v2")]),
    ("set-ifeq-get-differs", [("SET", "k", "v1")], ("SET", "k", "v2", "IFEQ", "x", "GET"), "v1",
     [(("GET", "k"), "v1")]),
    ("set-ifeq-get-missing", [], ("SET", "k", "v2", "IFEQ", "x", "GET"), None,
     [(("EXISTS", "k"), 0)]),
    ("set-ifeq-int-encoded", [("SET", "k", "42")], ("SET", "k", "43", "IFEQ", "42"), "OK",
     [(("GET", "k"), "43")]),
    ("set-ifeq-keepttl", [("SET", "k", "v1", "EX", "1000")],
     ("SET", "k", "v2", "IFEQ", "v1", "KEEPTTL"), "OK", [(("TTL", "k"), 1000)]),
    ("set-ifeq-drops-ttl", [("SET", "k", "v1", "EX", "1000")], ("SET", "k", "v2", "IFEQ", "v1"),
     "OK", [(("TTL", "k"), -1)]),
    ("set-ifeq-ex", [("SET", "k", "v1")], ("SET", "k", "v2", "IFEQ", "v1", "EX", "500"), "OK",
     [(("TTL", "k"), 500)]),
    # --- SET IFNE: creates when absent ---
    ("set-ifne-differs", [("SET", "k", "v1")], ("SET", "k", "v2", "IFNE", "zz"), "OK",
     [(("GET", "k"), "v2")]),
    ("set-ifne-equal", [("SET", "k", "v1")], ("SET", "k", "v2", "IFNE", "v1"), None,
     [(("GET", "k"), "v1")]),
    ("set-ifne-missing", [], ("SET", "k", "v2", "IFNE", "v1"), "OK", [(("GET", "k"), "v2")]),
    ("set-ifne-wrongtype", [("SADD", "k", "a")], ("SET", "k", "v", "IFNE", "a"), WRONGTYPE, []),
    # --- SET IFDEQ / IFDNE ---
    ("set-ifdeq-equal", [("SET", "k", "Hello world")], ("SET", "k", "v2", "IFDEQ", HELLO_DIGEST),
     "OK", [(("GET", "k"), "v2")]),
    ("set-ifdeq-uppercase", [("SET", "k", "Hello world")],
     ("SET", "k", "v2", "IFDEQ", HELLO_DIGEST.upper()), "OK", [(("GET", "k"), "v2")]),
    ("set-ifdeq-leading-zeros", [("SET", "k", ZEROS_VALUE)],
     ("SET", "k", "v2", "IFDEQ", ZEROS_DIGEST), "OK", [(("GET", "k"), "v2")]),
    ("set-ifdeq-differs", [("SET", "k", "Hello world")],
     ("SET", "k", "v2", "IFDEQ", "0123456789abcdef"), None, [(("GET", "k"), "Hello world")]),
    ("set-ifdeq-missing", [], ("SET", "k", "v2", "IFDEQ", HELLO_DIGEST), None,
     [(("EXISTS", "k"), 0)]),
    ("set-ifdeq-short", [("SET", "k", "Hello world")], ("SET", "k", "v2", "IFDEQ", "b6acb9d8"),
     DIGEST_LENGTH, [(("GET", "k"), "Hello world")]),
    ("set-ifdeq-long", [], ("SET", "k", "v2", "IFDEQ", HELLO_DIGEST + "0"), DIGEST_LENGTH, []),
    ("set-ifdne-equal", [("SET", "k", "Hello world")], ("SET", "k", "v2", "IFDNE", HELLO_DIGEST),
     None, [(("GET", "k"), "Hello world")]),
    ("set-ifdne-differs", [("SET", "k", "Hello world")],
     ("SET", "k", "v2", "IFDNE", "0123456789abcdef"), "OK", [(("GET", "k"), "v2")]),
    ("set-ifdne-missing", [], ("SET", "k", "v2", "IFDNE", HELLO_DIGEST), "OK",
     [(("GET", "k"), "v2")]),
    ("set-ifdne-wrongtype", [("HSET", "k", "f", "v")], ("SET", "k", "v", "IFDNE", HELLO_DIGEST),
     WRONGTYPE, []),
    # --- conditions exclude each other ---
    ("set-nx-ifeq", [], ("SET", "k", "v", "NX", "IFEQ", "x"), SYNTAX, []),
    ("set-ifeq-xx", [], ("SET", "k", "v", "IFEQ", "x", "XX"), SYNTAX, []),
    ("set-ifeq-ifne", [], ("SET", "k", "v", "IFEQ", "x", "IFNE", "y"), SYNTAX, []),
    ("set-ifdeq-ifdne", [], ("SET", "k", "v", "IFDEQ", HELLO_DIGEST, "IFDNE", HELLO_DIGEST),
     SYNTAX, []),
    ("set-ifeq-no-value", [], ("SET", "k", "v", "IFEQ"), SYNTAX, []),
    ("set-ifeq-ex-keepttl", [], ("SET", "k", "v", "IFEQ", "x", "EX", "1", "KEEPTTL"), SYNTAX, []),
    ("set-plain-wrongtype-overwrites", [("RPUSH", "k", "a")], ("SET", "k", "v"), "OK",
     [(("TYPE", "k"), "string")]),
    # --- DELEX ---
    ("delex-plain-string", [("SET", "k", "v")], ("DELEX", "k"), 1, [(("EXISTS", "k"), 0)]),
    ("delex-plain-any-type", [("RPUSH", "k", "a")], ("DELEX", "k"), 1, [(("EXISTS", "k"), 0)]),
    ("delex-missing", [], ("DELEX", "k"), 0, []),
    ("delex-ifeq-equal", [("SET", "k", "v")], ("DELEX", "k", "IFEQ", "v"), 1,
     [(("EXISTS", "k"), 0)]),
    ("delex-ifeq-differs", [("SET", "k", "v")], ("DELEX", "k", "IFEQ", "w"), 0,
     [(("EXISTS", "k"), 1)]),
    ("delex-ifne-differs", [("SET", "k", "v")], ("DELEX", "k", "IFNE", "w"), 1,
     [(("EXISTS", "k"), 0)]),
    ("delex-ifne-equal", [("SET", "k", "v")], ("DELEX", "k", "IFNE", "v"), 0, []),
    ("delex-ifne-missing", [], ("DELEX", "k", "IFNE", "v"), 0, []),
    ("delex-ifdeq-equal", [("SET", "k", "Hello world")], ("DELEX", "k", "IFDEQ", HELLO_DIGEST), 1,
     [(("EXISTS", "k"), 0)]),
    ("delex-ifdeq-uppercase", [("SET", "k", ZEROS_VALUE)],
     ("DELEX", "k", "IFDEQ", ZEROS_DIGEST.upper()), 1, [(("EXISTS", "k"), 0)]),
    ("delex-ifdeq-differs", [("SET", "k", "Hello world")],
     ("DELEX", "k", "IFDEQ", "0123456789abcdef"), 0, [(("EXISTS", "k"), 1)]),
    ("delex-ifdne-differs", [("SET", "k", "Hello world")],
     ("DELEX", "k", "IFDNE", "0123456789abcdef"), 1, [(("EXISTS", "k"), 0)]),
    ("delex-ifdne-equal", [("SET", "k", "Hello world")], ("DELEX", "k", "IFDNE", HELLO_DIGEST), 0,
     []),
    ("delex-ifdeq-short", [("SET", "k", "v")], ("DELEX", "k", "IFDEQ", "abc"), DIGEST_LENGTH,
     [(("EXISTS", "k"), 1)]),
    ("delex-ifeq-wrongtype", [("RPUSH", "k", "a")], ("DELEX", "k", "IFEQ", "a"), WRONGTYPE,
     [(("EXISTS", "k"), 1)]),
    ("delex-unknown-condition", [("SET", "k", "v")], ("DELEX", "k", "IFGT", "v"), SYNTAX, []),
    ("delex-condition-no-value", [("SET", "k", "v")], ("DELEX", "k", "IFEQ"), SYNTAX, []),
    ("delex-extra-argument", [("SET", "k", "v")], ("DELEX", "k", "IFEQ", "v", "x"), SYNTAX, []),
    ("delex-arity", [], ("DELEX",), "ERR wrong number of arguments for 'delex' command", []),
    # --- DELIFEQ (Valkey 9.0) ---
    ("delifeq-equal", [("SET", "k", "v")], ("DELIFEQ", "k", "v"), 1, [(("EXISTS", "k"), 0)]),
    ("delifeq-differs", [("SET", "k", "v")], ("DELIFEQ", "k", "w"), 0, [(("EXISTS", "k"), 1)]),
    ("delifeq-missing", [], ("DELIFEQ", "k", "v"), 0, []),
    ("delifeq-wrongtype", [("SADD", "k", "v")], ("DELIFEQ", "k", "v"), WRONGTYPE, []),
    ("delifeq-arity", [], ("DELIFEQ", "k"),
     "ERR wrong number of arguments for 'delifeq' command", []),
    # --- MSETEX ---
    ("msetex-plain", [("SET", "a", "old", "EX", "100")], ("MSETEX", "2", "a", "1", "b", "2"), 1,
     [(("MGET", "a", "b"), ["1", "2"]), (("TTL", "a"), -1)]),
    ("msetex-ex", [], ("MSETEX", "2", "a", "1", "b", "2", "EX", "100"), 1,
     [(("TTL", "a"), 100), (("TTL", "b"), 100)]),
    ("msetex-px", [], ("MSETEX", "1", "a", "1", "PX", "100000"), 1, [(("TTL", "a"), 100)]),
    ("msetex-keepttl", [("SET", "a", "x", "EX", "100")],
     ("MSETEX", "2", "a", "1", "b", "2", "KEEPTTL"), 1, [(("TTL", "a"), 100), (("TTL", "b"), -1)]),
    ("msetex-nx-none-exist", [], ("MSETEX", "2", "a", "1", "b", "2", "NX"), 1,
     [(("MGET", "a", "b"), ["1", "2"])]),
    ("msetex-nx-one-exists", [("SET", "b", "x")], ("MSETEX", "2", "a", "1", "b", "2", "NX"), 0,
     [(("MGET", "a", "b"), [None, "x"])]),
    ("msetex-xx-all-exist", [("SET", "a", "x"), ("SET", "b", "y")],
     ("MSETEX", "2", "a", "1", "b", "2", "XX", "EX", "50"), 1,
     [(("MGET", "a", "b"), ["1", "2"]), (("TTL", "b"), 50)]),
    ("msetex-xx-one-missing", [("SET", "a", "x")], ("MSETEX", "2", "a", "1", "b", "2", "XX"), 0,
     [(("MGET", "a", "b"), ["x", None])]),
    ("msetex-overwrites-other-types", [("RPUSH", "a", "x")], ("MSETEX", "1", "a", "1"), 1,
     [(("TYPE", "a"), "string")]),
    ("msetex-nx-xx", [], ("MSETEX", "1", "a", "1", "NX", "XX"), SYNTAX, []),
    ("msetex-ex-px", [], ("MSETEX", "1", "a", "1", "EX", "1", "PX", "1"), SYNTAX, []),
    ("msetex-get", [], ("MSETEX", "1", "a", "1", "GET"), SYNTAX, []),
    ("msetex-ifeq", [], ("MSETEX", "1", "a", "1", "IFEQ", "x"), SYNTAX, []),
    ("msetex-bad-ex", [], ("MSETEX", "1", "a", "1", "EX", "0"),
     "ERR invalid expire time in 'msetex' command", []),
    ("msetex-numkeys-not-integer", [], ("MSETEX", "x", "a", "1"),
     "ERR value is not an integer or out of range", []),
    ("msetex-numkeys-zero", [], ("MSETEX", "0", "a", "1"), "ERR invalid numkeys value", []),
    ("msetex-numkeys-too-many", [], ("MSETEX", "2", "a", "1"),
     "ERR wrong number of key-value pairs", [(("EXISTS", "a"), 0)]),
    ("msetex-arity", [], ("MSETEX", "1", "a"),
     "ERR wrong number of arguments for 'msetex' command", []),
]

ERROR_PREFIXES = ("ERR", "WRONGTYPE")


def as_text(reply):
    if isinstance(reply, bytes):
        return reply.decode()
    if isinstance(reply, list):
        return [as_text(r) for r in reply]
    return reply


def run(conn, command):
    """One command's reply, errors as their text: through a raw connection (RawConnection
    .execute) the replies come unconverted; through redis-py, errors are raised."""
    if hasattr(conn, "execute_command"):
        try:
            return as_text(conn.execute_command(*command))
        except Exception as error:  # redis.ResponseError
            return str(error)
    return as_text(conn.execute(*command))


@pytest.mark.parametrize("name,setup,command,expected,checks", CASES, ids=[c[0] for c in CASES])
def test_documented_reply(keywarden, name, setup, command, expected, checks):
    conn = keywarden.raw()
    for step in setup:
        conn.execute(*step)
    reply = run(conn, command)
    if isinstance(expected, str) and expected.startswith(ERROR_PREFIXES):
        assert reply == expected, f"{command}: expected the error {expected!r}, got {reply!r}"
    elif name == "digest-integer-encoded":
        # The digest of an integer-encoded value is the digest of its text.
        assert reply == run(conn, ("DIGEST", "k")) and len(reply) == 16
        conn.execute("SET", "k2", "1234")
        assert reply != run(conn, ("DIGEST", "k2"))
    else:
        assert reply == expected, f"{command}: expected {expected!r}, got {reply!r}"
    for check, want in checks:
        got = run(conn, check)
        if check[0] == "TTL" and isinstance(want, int) and want > 0:
            assert want - 2 <= got <= want, f"{check}: {got}"
        else:
            assert got == want, f"{check}: expected {want!r}, got {got!r}"


def test_digest_equals_for_equal_values_and_ifdeq_round_trip(keywarden):
    conn = keywarden.client()
    conn.set("a", "same")
    conn.set("b", "same")
    conn.set("c", "other")
    da, db, dc = (run(conn, ("DIGEST", k)) for k in ("a", "b", "c"))
    assert da == db != dc
    big = "x" * 100_000
    conn.set("big", big)
    digest = run(conn, ("DIGEST", "big"))
    assert run(conn, ("SET", "big", "small", "IFDEQ", digest)) is True
    assert conn.get("big") == b"small"


def test_inside_multi_and_scripts(keywarden):
    conn = keywarden.client()
    conn.set("lock", "token-1")
    pipe = conn.pipeline(transaction=True)
    pipe.execute_command("SET", "lock", "token-2", "IFEQ", "token-1", "PX", "30000")
    pipe.execute_command("DELEX", "lock", "IFEQ", "token-1")
    pipe.execute_command("DIGEST", "lock")
    pipe.execute_command("MSETEX", "2", "m1", "a", "m2", "b", "EX", "60")
    pipe.execute_command("DELIFEQ", "m1", "a")
    ok, not_deleted, digest, msetex, deleted = pipe.execute()
    assert ok is True and not_deleted == 0 and len(digest) == 16
    assert msetex == 1 and deleted == 1
    assert conn.get("lock") == b"token-2" and 29 <= conn.ttl("lock") <= 30
    # The same from a script, the way a lock release runs today.
    release = "return redis.call('DELEX', KEYS[1], 'IFEQ', ARGV[1])"
    assert conn.eval(release, 1, "lock", "token-1") == 0
    assert conn.eval(release, 1, "lock", "token-2") == 1
    renew = "return redis.call('SET', KEYS[1], ARGV[1], 'IFEQ', ARGV[1], 'PX', ARGV[2])"
    conn.set("lock", "t")
    assert conn.eval(renew, 1, "lock", "t", "5000") == b"OK"
    assert conn.eval(renew, 1, "lock", "u", "5000") is None
    script_error = "return redis.pcall('SET', KEYS[1], 'v', 'IFEQ', 'x', 'NX')"
    with pytest.raises(redis.ResponseError, match="syntax error"):
        conn.eval(script_error, 1, "lock")


def test_propagated_forms_in_the_aof(server_factory):
    """What reaches the AOF (and replicas, through the same path): the condition is gone, a
    relative expiry is absolute, a failed condition writes nothing, MSETEX is one SET per key in
    MULTI/EXEC, and DELEX/DELIFEQ are DEL."""
    server = server_factory(("appendonly", "yes"), ("appendfsync", "always"))
    conn = server.client()
    conn.set("k", "v1")
    conn.execute_command("SET", "k", "v2", "IFEQ", "v1")
    conn.execute_command("SET", "k", "v3", "IFEQ", "nope")
    conn.execute_command("SET", "k", "v4", "IFNE", "x", "KEEPTTL")
    conn.execute_command("SET", "k", "v5", "IFDNE", "0123456789abcdef", "EX", "100")
    conn.execute_command("MSETEX", "2", "a", "1", "b", "2", "PX", "100000")
    conn.execute_command("MSETEX", "1", "a", "1", "NX")  # not applied: nothing written
    conn.execute_command("DELEX", "k", "IFEQ", "nope")
    conn.execute_command("DELEX", "k", "IFEQ", "v5")
    conn.execute_command("DELIFEQ", "a", "1")
    conn.execute_command("SET", "end", "1")
    from pathlib import Path
    incr = sorted(Path(server.workdir, "appendonlydir").glob("*.incr.aof"))
    data = b"".join(p.read_bytes() for p in incr)
    commands = [[a.decode() for a in c] for c in parse_replies(data)]
    commands = [c for c in commands if c[0].upper() != "SELECT"]
    shapes = []
    for c in commands:
        c = [x if not x.isdigit() or len(x) < 10 else "<ms>" for x in c]
        shapes.append(" ".join(c))
    assert shapes == [
        "SET k v1",
        "SET k v2",
        "SET k v4 KEEPTTL",
        "SET k v5 PXAT <ms>",
        "MULTI", "SET a 1 PXAT <ms>", "SET b 2 PXAT <ms>", "EXEC",
        "DEL k",
        "DEL a",
        "SET end 1",
    ], shapes


def test_a_redis_70_replica_applies_what_they_propagate(server_factory):
    """A stock Redis 7.0 replica of a keywarden primary: every conditional write reaches it in a
    form 7.0 knows, and both end with the same data and deadlines."""
    primary = server_factory(("repl-diskless-sync-delay", "0"))
    replica = server_factory(("replicaof", ("127.0.0.1", primary.port)), binary=redis_binary())
    p = primary.client()
    r = replica.client()
    assert wait_until(lambda: r.info("replication").get("master_link_status") == "up", 30)
    p.set("lock", "owner-a", px=60000)
    p.execute_command("SET", "lock", "owner-a", "IFEQ", "owner-a", "PX", "90000")
    p.execute_command("SET", "gone", "x")
    p.execute_command("DELEX", "gone", "IFDEQ", run(p, ("DIGEST", "gone")))
    p.execute_command("MSETEX", "3", "m1", "1", "m2", "2", "m3", "3", "EX", "300")
    p.execute_command("SET", "cas", "v", "IFNE", "v")
    p.execute_command("DELIFEQ", "m3", "3")
    p.execute_command("SET", "done", "1")
    assert wait_until(lambda: r.get("done") == b"1", 30)
    for key in ("lock", "gone", "m1", "m2", "m3", "cas"):
        assert p.get(key) == r.get(key), key
        assert p.execute_command("PEXPIRETIME", key) == r.execute_command("PEXPIRETIME", key), key
    assert p.execute_command("DEBUG", "DIGEST") == r.execute_command("DEBUG", "DIGEST")
