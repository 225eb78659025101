"""DEBUG's subcommands against keywarden and a stock redis-server 7.0, replies compared byte for
byte (pointers, timings and structure figures that depend on the implementation normalised).

DEBUG DIGEST must give the same 40 hex digits on both servers for the same dataset: it is how
operators check that two servers hold the same data. bench/digest_compare.py does the same with
a million keys.
"""

import random
import re

import pytest

from conftest import ReplyError, redis_binary



def both_raw(keywarden, reference_redis, commands, resp3=False):
    """Runs `commands` on both servers and asserts identical reply bytes; returns them."""
    results = []
    conns = [keywarden.raw(), reference_redis.raw()]
    if resp3:
        for conn in conns:
            conn.execute("HELLO", "3")
    for command in commands:
        ours, theirs = (conn.execute_raw(*command) for conn in conns)
        assert ours == theirs, f"{command}: keywarden {ours!r} != redis {theirs!r}"
        results.append(ours)
    return results


def load(server, commands):
    conn = server.raw()
    for command in commands:
        reply = conn.execute(*command)
        assert not isinstance(reply, ReplyError), (command, reply)


def mixed_dataset(seed, count):
    """Every type in small and large encodings, integers, TTLs, three databases."""
    rng = random.Random(seed)
    commands = []
    for db in (0, 3, 15):
        commands.append(("SELECT", db))
        for i in range(count):
            key = f"k:{db}:{i}"
            kind = i % 7
            if kind == 0:
                commands.append(("SET", key, f"value-{rng.random()}"))
            elif kind == 1:
                commands.append(("SET", key, rng.randint(-10**12, 10**12)))
            elif kind == 2:
                n = rng.choice([3, 200])
                commands.append(("RPUSH", key, *[rng.choice(["a", "17", "-3", f"e{j}"])
                                                 for j in range(n)]))
            elif kind == 3:
                n = rng.choice([4, 600])
                members = [str(rng.randint(0, 10**6)) if rng.random() < 0.5 else f"m{j}"
                           for j in range(n)]
                commands.append(("SADD", key, *members))
            elif kind == 4:
                commands.append(("SADD", key, *[str(j * 3) for j in range(rng.choice([5, 700]))]))
            elif kind == 5:
                n = rng.choice([5, 300])
                args = []
                for j in range(n):
                    args += [rng.choice([j, j + 0.1, -j / 3, 1e300, "inf", "-inf"]), f"z{j}"]
                commands.append(("ZADD", key, *args))
            else:
                n = rng.choice([5, 300])
                args = []
                for j in range(n):
                    args += [f"f{j}", rng.choice([str(j), f"v{j}", "x" * 70])]
                commands.append(("HSET", key, *args))
            if i % 3 == 0:
                commands.append(("EXPIRE", key, 100000 + i))
    return commands


def test_help_is_redis_text(keywarden, reference_redis):
    both_raw(keywarden, reference_redis, [("DEBUG", "HELP")])


def test_digest_of_an_empty_server_is_zeros(keywarden, reference_redis):
    replies = both_raw(keywarden, reference_redis,
                       [("DEBUG", "DIGEST"), ("DEBUG", "DIGEST-VALUE", "nosuch", "other"),
                        ("DEBUG", "DIGEST-VALUE")])
    assert replies[0] == b"+" + b"0" * 40 + b"\r\n"


def test_digest_equal_on_both_servers_for_a_mixed_dataset(keywarden, reference_redis):
    commands = mixed_dataset(seed=25, count=300)
    load(keywarden, commands)
    load(reference_redis, commands)
    keys = [f"k:0:{i}" for i in range(0, 300, 13)] + ["missing"]
    replies = both_raw(keywarden, reference_redis,
                       [("DEBUG", "DIGEST"), ("DEBUG", "DIGEST-VALUE", *keys)])
    assert replies[0] != b"+" + b"0" * 40 + b"\r\n"


def test_digest_tracks_changes_as_redis_does(keywarden, reference_redis):
    both_raw(keywarden, reference_redis, [
        ("RPUSH", "l", "a", "b"), ("DEBUG", "DIGEST"),
        ("LPUSH", "l", "c"), ("DEBUG", "DIGEST"),  # order matters for lists
        ("SADD", "s", "x", "y"), ("DEBUG", "DIGEST"),
        ("SET", "n", "10"), ("DEBUG", "DIGEST"),
        ("EXPIRE", "n", "1000"), ("DEBUG", "DIGEST"),  # a deadline changes it
        ("EXPIRE", "n", "2000"), ("DEBUG", "DIGEST"),  # but not its value
        ("PERSIST", "n"), ("DEBUG", "DIGEST"),
        ("MOVE", "n", "2"), ("DEBUG", "DIGEST"),  # nor the same key in another database
        ("DEBUG", "DIGEST-VALUE", "l", "s", "n"),
    ])


def test_populate_matches_redis(keywarden, reference_redis):
    both_raw(keywarden, reference_redis, [
        ("DEBUG", "POPULATE", "1000"),
        ("DEBUG", "POPULATE", "10", "p", "20"),
        ("DEBUG", "POPULATE", "5", "q", "3"),
        ("DEBUG", "POPULATE", "3", "x" * 200),  # the name is cut at 127 bytes
        ("DEBUG", "POPULATE", "1000"),  # existing keys are left alone
        ("DBSIZE",), ("GET", "key:999"), ("GET", "p:7"), ("GET", "q:1"), ("STRLEN", "p:3"),
        ("OBJECT", "ENCODING", "key:1"),
        ("DEBUG", "DIGEST"),
        ("DEBUG", "POPULATE", "-1"), ("DEBUG", "POPULATE", "abc"),
        ("DEBUG", "POPULATE", "2", "p", "-1"), ("DEBUG", "POPULATE", "2", "p", "3", "4"),
        ("DEBUG", "POPULATE"), ("DEBUG", "POPULATE", "0"),
    ])


@pytest.mark.parametrize("resp3", [False, True])
def test_protocol_replies_match_redis(keywarden, reference_redis, resp3):
    types = ["string", "integer", "double", "bignum", "null", "array", "set", "map", "attrib",
             "push", "verbatim", "true", "false", "nosuch", "STRING"]
    conns = [keywarden.raw(), reference_redis.raw()]
    for conn in conns:
        if resp3:
            conn.execute("HELLO", "3")
    for name in types:
        raw = []
        for conn in conns:
            conn.send_command("DEBUG", "PROTOCOL", name)
            data = conn.read_reply_bytes()
            # A push comes before the real reply: read that one too (the reader already takes
            # the reply that follows an attribute).
            if data[:1] == b">":
                data += conn.read_reply_bytes()
            raw.append(data)
        assert raw[0] == raw[1], f"PROTOCOL {name}: {raw[0]!r} != {raw[1]!r}"


def test_knobs_and_errors_match_redis(keywarden, reference_redis):
    both_raw(keywarden, reference_redis, [
        ("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100"),
        ("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1kb"),
        ("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "5gb"),
        ("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "abc"),
        ("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "-1"),
        ("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0"),
        ("DEBUG", "QUICKLIST-PACKED-THRESHOLD"),
        ("DEBUG", "PAUSE-CRON", "1"), ("DEBUG", "PAUSE-CRON", "0"), ("DEBUG", "PAUSE-CRON"),
        ("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0"), ("DEBUG", "SET-DISABLE-DENY-SCRIPTS"),
        ("DEBUG", "AOF-FLUSH-SLEEP", "0"), ("DEBUG", "AOF-FLUSH-SLEEP"),
        ("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "NEVER"),
        ("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "RESET"),
        ("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "100"),
        ("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "abc"),
        ("DEBUG", "REPLYBUFFER", "RESIZING", "1"),
        ("DEBUG", "REPLYBUFFER", "foo", "1"),
        ("DEBUG", "REPLYBUFFER", "RESIZING"),
        ("DEBUG", "CHANGE-REPL-ID"), ("DEBUG", "CHANGE-REPL-ID", "x"),
        # STRINGMATCH-LEN came with Redis 7.2: 7.0 does not know it.
        ("DEBUG", "STRINGMATCH-LEN", "x"),
        ("DEBUG", "CONFIG-REWRITE-FORCE-ALL"),  # no config file: Redis's "Bad address"
        ("DEBUG", "RELOAD", "bogus"),
        ("DEBUG", "DIGEST", "extra"),
    ])
    # Redis 7.0.15 runs its glob matcher's fuzz test for 5 to 20 s before this reply (longer than
    # a read may wait on a loaded machine): the reply it gives is compared as text.
    assert keywarden.raw().execute_raw("DEBUG", "STRINGMATCH-TEST") == (
        b"+Apparently Redis did not crash: test passed\r\n")


def test_mallctl_matches_redis(keywarden, reference_redis):
    # Like Redis built without jemalloc, a libc build (the sanitizer one) does not have them.
    if b"mem_allocator:jemalloc" not in keywarden.raw().execute("INFO", "memory"):
        pytest.skip("keywarden built without jemalloc")
    both_raw(keywarden, reference_redis, [
        ("DEBUG", "MALLCTL-STR", "version"),
        ("DEBUG", "MALLCTL-STR", "nosuch.key"),
        ("DEBUG", "MALLCTL", "nosuch.key"),
        # 7.0 reads only 8-byte settings back: a 4-byte one is "Invalid argument".
        ("DEBUG", "MALLCTL", "opt.narenas"),
        ("DEBUG", "MALLCTL", "opt.narenas", "abc"),
        ("DEBUG", "MALLCTL", "arenas.page"),
        ("DEBUG", "MALLCTL-STR", "opt.dss"),
        ("DEBUG", "MALLCTL"),
    ])


def test_introspection_errors_match_redis(keywarden, reference_redis):
    both_raw(keywarden, reference_redis, [
        ("DEBUG", "HTSTATS", "0"),  # empty: Redis's "No stats available" text
        ("DEBUG", "HTSTATS", "16"), ("DEBUG", "HTSTATS", "-1"), ("DEBUG", "HTSTATS", "x"),
        ("DEBUG", "HTSTATS", "0", "full"),
        ("DEBUG", "HTSTATS-KEY", "nosuch"),
        ("SET", "str", "v"), ("RPUSH", "list", "a"), ("HSET", "small", "f", "v"),
        ("DEBUG", "HTSTATS-KEY", "str"), ("DEBUG", "HTSTATS-KEY", "small"),
        ("DEBUG", "LISTPACK", "nosuch"), ("DEBUG", "LISTPACK", "str"),
        ("DEBUG", "LISTPACK", "small"),
        ("DEBUG", "QUICKLIST", "nosuch"), ("DEBUG", "QUICKLIST", "str"),
        ("DEBUG", "QUICKLIST", "list"),
    ])


STATS = re.compile(
    rb"Hash table 0 stats \(main hash table\):\n table size: (\d+)\n number of elements: (\d+)\n"
    rb" different slots: \d+\n max chain length: \d+\n avg chain length \(counted\): [\d.]+\n"
    rb" avg chain length \(computed\): [\d.]+\n Chain length distribution:\n"
    rb"(   \d+: \d+ \([\d.]+%\)\n)+")


def test_htstats_reports_in_redis_format(server_factory):
    for binary in (None, redis_binary()):
        conn = server_factory(binary=binary).raw()
        conn.execute("DEBUG", "POPULATE", "100")
        conn.execute("HSET", "big", *[f"f{i}" for i in range(1200)])
        conn.execute("EXPIRE", "key:1", "100")
        # Settle incremental rehashing so that only the main table is reported.
        conn.execute("DEBUG", "SLEEP", "0.3")
        text = conn.execute("DEBUG", "HTSTATS", "0")
        assert text.startswith(b"[Dictionary HT]\n"), text
        dictionary, expires = text[len(b"[Dictionary HT]\n"):].split(b"[Expires HT]\n")
        match = STATS.fullmatch(dictionary)
        assert match and match.group(2) == b"101", dictionary
        match = STATS.fullmatch(expires)
        assert match and match.group(2) == b"1", expires
        match = STATS.fullmatch(conn.execute("DEBUG", "HTSTATS-KEY", "big"))
        assert match and match.group(2) == b"600"


def test_object_line_for_a_list_has_the_quicklist_fields(make_server):
    conn = make_server().raw()
    conn.execute("RPUSH", "l", *range(300))
    line = conn.execute("DEBUG", "OBJECT", "l")
    assert re.fullmatch(
        rb"Value at:0x[0-9a-f]+ refcount:1 encoding:quicklist serializedlength:\d+ lru:\d+ "
        rb"lru_seconds_idle:\d+ ql_nodes:\d+ ql_avg_node:[\d.]+ ql_listpack_max:-2 "
        rb"ql_compressed:0 ql_uncompressed_size:\d+", line), line


def test_reload_and_its_options(make_server):
    server = make_server()
    conn = server.raw()
    load(server, mixed_dataset(seed=7, count=60))
    digest = conn.execute("DEBUG", "DIGEST")
    assert conn.execute("DEBUG", "RELOAD") == b"OK"
    assert conn.execute("DEBUG", "DIGEST") == digest
    # NOSAVE loads what the last save wrote; NOFLUSH MERGE adds it to what is there.
    conn.execute("SET", "after", "1")
    conn.execute("DEL", "k:0:0")
    assert conn.execute("DEBUG", "RELOAD", "NOSAVE") == b"OK"
    assert conn.execute("DEBUG", "DIGEST") == digest
    conn.execute("SET", "extra", "1")
    conn.execute("SET", "k:0:0", "changed")
    assert conn.execute("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE") == b"OK"
    assert conn.execute("GET", "extra") == b"1"
    conn.execute("DEL", "extra")
    assert conn.execute("DEBUG", "DIGEST") == digest


def test_reload_nosave_without_a_file_fails_as_redis(make_server):
    conn = make_server().raw()
    conn.execute("SET", "k", "v")
    assert conn.execute("DEBUG", "RELOAD", "NOSAVE") == ReplyError(
        b"ERR Error trying to load the RDB dump")
    assert conn.execute("DBSIZE") == 0


def test_loadaof_reloads_the_dataset(make_server):
    server = make_server(("appendonly", "yes"))
    conn = server.raw()
    load(server, mixed_dataset(seed=9, count=40))
    digest = conn.execute("DEBUG", "DIGEST")
    assert conn.execute("DEBUG", "LOADAOF") == b"OK"
    assert conn.execute("DEBUG", "DIGEST") == digest
    # The reload wrote nothing back: a second one gives the same data again.
    assert conn.execute("DEBUG", "LOADAOF") == b"OK"
    assert conn.execute("DEBUG", "DIGEST") == digest


def test_loadaof_without_an_aof_exits_as_redis(make_server):
    server = make_server()
    conn = server.raw()
    conn.send_command("DEBUG", "LOADAOF")
    assert conn.read_until_close(timeout=5) == b""
    assert server.proc.wait(5) == 1


def test_change_repl_id_changes_master_replid(make_server):
    conn = make_server().raw()

    def replid():
        return re.search(rb"master_replid:([0-9a-f]{40})", conn.execute("INFO", "replication"))[1]

    before = replid()
    assert conn.execute("DEBUG", "CHANGE-REPL-ID") == b"OK"
    assert replid() != before


def test_set_disable_deny_scripts_lets_scripts_call_noscript_commands(keywarden, reference_redis):
    script = "return redis.call('debug', 'sleep', '0')"
    replies = both_raw(keywarden, reference_redis, [
        ("EVAL", script, "0"),
        ("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1"),
        ("EVAL", script, "0"),
        ("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0"),
        ("EVAL", script, "0"),
    ])
    assert replies[2] == b"+OK\r\n" and replies[0].startswith(b"-")


def test_pause_cron_stops_idle_client_timeouts(make_server):
    server = make_server(("timeout", "1"))
    conn = server.raw()
    assert conn.execute("DEBUG", "PAUSE-CRON", "1") == b"OK"
    idle = server.raw()
    idle.execute("PING")
    conn.execute("DEBUG", "SLEEP", "0")
    # With the cron paused nobody closes the idle client, however long it waits.
    assert not idle.is_closed(timeout=2.5)
    assert conn.execute("DEBUG", "PAUSE-CRON", "0") == b"OK"
