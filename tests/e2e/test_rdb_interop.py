"""RDB persistence end to end, and interop with a stock redis-server 7.0 in both directions.

* keywarden SAVE -> redis-check-rdb accepts the file -> redis-server started on it holds the same
  keys, values and TTLs (every type, small and big encodings, integers, 16 databases);
* redis-server SAVE -> keywarden started on the file holds the same data;
* DUMP in one server -> RESTORE in the other, both ways, with TTLs, and RESTORE's errors;
* a truncated or corrupt RDB is refused at start-up with a clear message;
* BGSAVE, LASTSAVE, INFO persistence, DEBUG RELOAD, SHUTDOWN saving, expired keys skipped on
  load, and -MISCONF after a failed background save.
Waits poll with generous deadlines; nothing asserts on timing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time

import pytest
import redis

from conftest import ServerStartError, redis_binary, start_server, with_footer

MISCONF = ("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "
           "persist to disk. Commands that may modify the data set are disabled, because this "
           "instance is configured to report errors during writes if RDB snapshotting fails "
           "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about "
           "the RDB error.")


def populate(c: redis.Redis) -> None:
    """Every type in its small and big encodings, integers, edge cases, TTLs, 16 databases."""
    p = c.pipeline(transaction=False)
    p.set("str", "hello")
    p.set("int", 12345)
    p.set("negint", -7)
    p.set("bigint", "9223372036854775807")
    p.set("notint", "007")
    p.set("empty", "")
    p.set("long", "x" * 5000)          # LZF-compressible
    p.set("binary", bytes(range(256)))
    p.set("ttl", "v", px=500_000)
    p.rpush("list", "a", "b", "1", "-2", "300000", "9999999999")
    p.rpush("biglist", *[f"item-{i}" * (1 + i % 7) for i in range(3000)])
    p.rpush("hugeitem", "y" * 20000, "z")
    p.sadd("intset", 1, -5, 70000, 5000000000)
    p.sadd("smallset", "a", "b", "c")
    p.sadd("bigset", *[f"m{i}" for i in range(700)])
    p.sadd("bigintset", *range(600))
    p.zadd("zset", {"a": 1, "b": 2.5, "c": -3.25, "inf": float("inf"), "ninf": float("-inf")})
    p.zadd("bigzset", {f"m{i}": i / 7 for i in range(300)})
    p.zadd("longmemberzset", {"q" * 100: 1})
    p.hset("hash", mapping={"f": "v", "n": "17", "e": ""})
    p.hset("bighash", mapping={f"f{i}": "v" * (i % 90) for i in range(600)})
    p.hset("longvalhash", mapping={"f": "w" * 100})
    p.pfadd("hll-sparse", "a", "b", "c")                 # HyperLogLogs: strings in Redis's
    p.pfadd("hll-dense", *[f"e{i}" for i in range(5000)])  # layout, compared byte for byte
    p.pfcount("hll-dense")                                # with its cached cardinality
    p.expire("bigzset", 100_000)
    p.expire("bighash", 200_000)
    p.execute()
    for db in range(1, 16):
        c.execute_command("SELECT", db)
        c.set(f"key-in-{db}", db)
        c.hset(f"h{db}", "db", db)
        if db % 3 == 0:
            c.set(f"ttl-{db}", "x", ex=1000 + db)
    c.execute_command("SELECT", 0)


def snapshot(c: redis.Redis) -> dict:
    data = {}
    for db in range(16):
        c.execute_command("SELECT", db)
        for key in c.scan_iter(count=1000):
            kind = c.type(key).decode()
            if kind == "string":
                value = c.get(key)
            elif kind == "list":
                value = c.lrange(key, 0, -1)
            elif kind == "set":
                value = sorted(c.smembers(key))
            elif kind == "zset":
                value = c.zrange(key, 0, -1, withscores=True)
            else:
                value = sorted(c.hgetall(key).items())
            ttl = c.pttl(key)
            # Deadlines are absolute: both sides agree within the test's running time.
            data[(db, key)] = (kind, value, -1 if ttl < 0 else round(ttl / 100_000))
    c.execute_command("SELECT", 0)
    return data


def check_rdb(path: str) -> str:
    result = subprocess.run(["redis-check-rdb", path], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "RDB looks OK" in result.stdout, result.stdout
    return result.stdout


@pytest.fixture
def workdir():
    path = tempfile.mkdtemp(prefix="kw-rdb-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def wait_for(predicate, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("compression,checksum", [("yes", "yes"), ("no", "no")])
def test_keywarden_file_loads_in_redis(workdir, compression, checksum):
    kw = start_server(directives=[("dir", workdir), ("rdbcompression", compression),
                                  ("rdbchecksum", checksum)])
    try:
        c = kw.client()
        populate(c)
        expected = snapshot(c)
        assert c.save()
    finally:
        kw.cleanup()
    path = os.path.join(workdir, "dump.rdb")
    report = check_rdb(path)
    assert "Checksum OK" in report or checksum == "no"
    ref = start_server(redis_binary(), directives=[("dir", workdir)])
    try:
        assert snapshot(ref.client()) == expected
    finally:
        ref.cleanup()


def test_redis_file_loads_in_keywarden(workdir):
    ref = start_server(redis_binary(), directives=[("dir", workdir)])
    try:
        c = ref.client()
        populate(c)
        expected = snapshot(c)
        assert c.save()
    finally:
        ref.cleanup()
    kw = start_server(directives=[("dir", workdir)])
    try:
        c = kw.client()
        assert snapshot(c) == expected
        info = c.info("persistence")
        assert info["rdb_last_load_keys_loaded"] == len(expected)
        # Encodings follow the configured limits, as in Redis.
        assert c.object("encoding", "intset") == b"intset"
        assert c.object("encoding", "bighash") == b"hashtable"
        assert c.object("encoding", "zset") == b"listpack"
    finally:
        kw.cleanup()


def test_dump_restore_both_ways(keywarden, reference_redis):
    kw, ref = keywarden.client(), reference_redis.client()
    populate(kw)
    populate(ref)
    for key in ref.scan_iter(count=1000):
        for source, target in ((ref, kw), (kw, ref)):
            payload = source.dump(key)
            assert payload is not None
            target.restore(b"copy:" + key, 0, payload, replace=True)
            kind = target.type(b"copy:" + key)
            assert kind == source.type(key), key
        for side in (kw, ref):
            assert snapshot_value(side, key) == snapshot_value(side, b"copy:" + key)
    # Small values serialize byte for byte as Redis does (LZF output of longer ones may differ:
    # our compressor is our own).
    for key in ("str", "int", "hash", "list", "empty"):
        assert kw.dump(key) == ref.dump(key), key
    # TTL relative and absolute.
    payload = ref.dump("str")
    kw.restore("t1", 100_000, payload)
    assert 90_000 < kw.pttl("t1") <= 100_000
    at = int(time.time() * 1000) + 200_000
    kw.restore("t2", at, payload, absttl=True)
    assert 150_000 < kw.pttl("t2") <= 200_000
    kw.restore("t3", 1, payload, absttl=True)   # already in the past: not created
    assert kw.exists("t3") == 0


def snapshot_value(c, key):
    kind = c.type(key).decode()
    if kind == "string":
        return c.get(key)
    if kind == "list":
        return c.lrange(key, 0, -1)
    if kind == "set":
        return sorted(c.smembers(key))
    if kind == "zset":
        return c.zrange(key, 0, -1, withscores=True)
    return sorted(c.hgetall(key).items())


PAYLOADS = {
    "GOOD": lambda good: good,
    "BADCRC": lambda good: good[:-1] + bytes([good[-1] ^ 1]),
    "NEWER": lambda good: with_footer(good[:-10], 11),
    "BADBODY": lambda good: with_footer(b"\x00\x7fshort"),
    "STREAM": lambda good: with_footer(b"\x13\x00"),
    "EMPTYSET": lambda good: with_footer(b"\x02\x00"),
    "SHORT": lambda good: b"abc",
}


@pytest.mark.parametrize("args", [
    ["RESTORE", "k", "0", "GOOD"],
    ["RESTORE", "k", "0", "GOOD", "REPLACE"],
    ["RESTORE", "k", "-1", "GOOD", "REPLACE"],
    ["RESTORE", "k", "abc", "GOOD", "REPLACE"],
    ["RESTORE", "k", "0", "BADCRC", "REPLACE"],
    ["RESTORE", "k", "0", "NEWER", "REPLACE"],
    ["RESTORE", "k", "0", "BADBODY", "REPLACE"],
    ["RESTORE", "k", "0", "STREAM", "REPLACE"],
    ["RESTORE", "k", "0", "EMPTYSET", "REPLACE"],
    ["RESTORE", "k", "0", "SHORT", "REPLACE"],
    ["RESTORE", "k", "0", "GOOD", "REPLACE", "IDLETIME", "-1"],
    ["RESTORE", "k", "0", "GOOD", "REPLACE", "IDLETIME", "x"],
    ["RESTORE", "k", "0", "GOOD", "REPLACE", "FREQ", "256"],
    ["RESTORE", "k", "0", "GOOD", "REPLACE", "FREQ", "10", "IDLETIME", "10"],
    ["RESTORE", "k", "0", "GOOD", "REPLACE", "BOGUS"],
    ["RESTORE", "k", "0", "GOOD", "REPLACE", "IDLETIME"],
    ["RESTORE", "k", "0", "GOOD", "REPLACE", "IDLETIME", "100", "ABSTTL"],
    ["RESTORE", "k", "1", "GOOD", "REPLACE", "ABSTTL"],
    ["DUMP", "missing"],
])
def test_restore_replies_match(keywarden, reference_redis, args):
    outcomes = []
    for server in (keywarden, reference_redis):
        conn = server.raw()
        conn.execute("SET", "k", "old")
        conn.execute("SET", "src", "payload-value")
        good = conn.execute("DUMP", "src")
        real = [PAYLOADS[a](good) if a in PAYLOADS else a for a in args]
        reply = conn.execute(*real)
        outcomes.append((reply, conn.execute("GET", "k"), conn.execute("OBJECT", "IDLETIME", "k")
                         if conn.execute("EXISTS", "k") else None))
        conn.close()
    assert outcomes[0][:2] == outcomes[1][:2]
    if outcomes[1][2] is not None and outcomes[1][2] >= 100:
        assert outcomes[0][2] >= 100


def test_corrupt_rdb_refused_at_startup(workdir):
    kw = start_server(directives=[("dir", workdir)])
    try:
        c = kw.client()
        populate(c)
        assert c.save()
    finally:
        kw.cleanup()
    path = os.path.join(workdir, "dump.rdb")
    with open(path, "rb") as f:
        image = f.read()
    cases = {
        "truncated": image[: len(image) // 2],
        "bad checksum": image[:-1] + bytes([image[-1] ^ 0xFF]),
        "bad length": image[:200] + b"\xbf" * 64 + image[264:],
    }
    for name, data in cases.items():
        with open(path, "wb") as f:
            f.write(data)
        with pytest.raises(ServerStartError) as failure:
            start_server(directives=[("dir", workdir)])
        message = str(failure.value)
        # Redis 7.0's lines (tests/e2e/test_startup_errors.py compares them with Redis's).
        expected = {"truncated": "Short read or OOM loading DB",
                    "bad checksum": "Wrong RDB checksum",
                    "bad length": "Internal error in RDB reading offset"}[name]
        assert expected in message, (name, message)


def test_bgsave_lastsave_info_and_reload(workdir):
    kw = start_server(directives=[("dir", workdir)])
    try:
        c = kw.client()
        populate(c)
        expected = snapshot(c)
        before = c.lastsave()
        info = c.info("persistence")
        assert info["rdb_changes_since_last_save"] > 0
        assert c.bgsave()
        assert wait_for(lambda: c.info("persistence")["rdb_bgsave_in_progress"] == 0
                        and c.info("persistence")["rdb_saves"] >= 1)
        info = c.info("persistence")
        assert info["rdb_last_bgsave_status"] == "ok"
        assert info["rdb_last_bgsave_time_sec"] >= 0
        assert info["rdb_changes_since_last_save"] == 0
        assert c.lastsave() >= before
        check_rdb(os.path.join(workdir, "dump.rdb"))
        # A second BGSAVE right away may find the first one done, never a broken state.
        conn = kw.raw()
        assert conn.execute("BGSAVE", "SCHEDULE") in (b"Background saving started",
                                                     b"Background saving scheduled")
        assert wait_for(lambda: c.info("persistence")["rdb_bgsave_in_progress"] == 0)
        assert conn.execute("BGSAVE", "BOGUS") == b"ERR syntax error"
        assert conn.execute("DEBUG", "RELOAD") == b"OK"
        assert snapshot(c) == expected
    finally:
        kw.cleanup()


def test_expired_keys_skipped_and_shutdown_saves(workdir):
    kw = start_server(directives=[("dir", workdir), ("save", "3600 1")])
    try:
        c = kw.client()
        c.set("keep", "1")
        c.set("soon", "1", px=300)
        c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        assert c.save()
        # SHUTDOWN with a save point saves again (the file is rewritten); nothing else changed.
        try:
            c.shutdown()
        except redis.ConnectionError:
            pass
        assert wait_for(lambda: not kw.alive())
    finally:
        kw.cleanup()
    time.sleep(0.4)  # let "soon" pass its deadline while the server is down
    kw = start_server(directives=[("dir", workdir)])
    try:
        c = kw.client()
        assert c.get("keep") == b"1"
        assert c.exists("soon") == 0
        info = c.info("persistence")
        assert info["rdb_last_load_keys_loaded"] == 1
        assert info["rdb_last_load_keys_expired"] == 1
    finally:
        kw.cleanup()


def test_loading_answers_clients_meanwhile(workdir):
    """A slow start-up load (key-load-delay) accepts clients and answers them as Redis does:
    -LOADING for data commands, INFO persistence loading:1 with the progress fields."""
    kw = start_server(directives=[("dir", workdir)])
    try:
        c = kw.client()
        c.mset({f"k{i}": str(i) for i in range(20000)})
        assert c.save()
    finally:
        kw.cleanup()
    # Clients are served every loading-process-events-interval-bytes of the file (2 MB by
    # default, more than this file): 1 KB, as Redis's own tests set it.
    kw = start_server(directives=[("dir", workdir), ("key-load-delay", "200"),
                                  ("loading-process-events-interval-bytes", "1024")])
    try:
        raw = kw.raw(timeout=30)
        assert raw.execute("GET", "k1") == b"LOADING Redis is loading the dataset in memory"
        def persistence():
            text = raw.execute("INFO", "persistence").decode()
            return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)

        fields = persistence()
        assert fields["loading"] == "1"
        assert int(fields["loading_total_bytes"]) == os.path.getsize(
            os.path.join(workdir, "dump.rdb"))
        assert wait_for(lambda: persistence()["loading"] == "0", timeout=120)
        assert raw.execute("GET", "k19999") == b"19999"
        assert raw.execute("DBSIZE") == 20000
    finally:
        kw.cleanup()


def test_misconf_after_failed_bgsave(workdir):
    gone = os.path.join(workdir, "gone")
    os.mkdir(gone)
    kw = start_server(directives=[("dir", gone), ("save", "3600 1")])
    try:
        os.rmdir(gone)  # the child cannot create its temp file any more
        conn = kw.raw()
        assert conn.execute("BGSAVE") == b"Background saving started"
        c = kw.client()
        assert wait_for(lambda: c.info("persistence")["rdb_last_bgsave_status"] == "err")
        assert conn.execute("SET", "a", "b") == MISCONF.encode()
        assert conn.execute("PING") == MISCONF.encode()
        assert conn.execute("GET", "a") is None
        assert conn.execute("CONFIG", "SET", "stop-writes-on-bgsave-error", "no") == b"OK"
        assert conn.execute("SET", "a", "b") == b"OK"
    finally:
        kw.cleanup()


# Two libraries for the function cases; the second one's code is long enough to be LZF'd by a
# server that compresses strings.
LIBRARIES = [
    "#!lua name=kwlib1\n"
    "redis.register_function('kw_get', function(keys, args) "
    "return redis.call('GET', keys[1]) end)\n"
    "redis.register_function{function_name='kw_ro', callback=function() return 'ro' end, "
    "flags={'no-writes'}}\n",
    "#!lua name=kwlib2\n"
    "-- " + "padding " * 40 + "\n"
    "redis.register_function('kw_incr', function(keys, args) "
    "return redis.call('INCRBY', keys[1], args[1]) end)\n",
]


def load_libraries(c: redis.Redis) -> None:
    for code in LIBRARIES:
        c.execute_command("FUNCTION", "LOAD", code)


def check_libraries(c: redis.Redis, listing=None) -> list:
    """FCALLs work; returns FUNCTION LIST WITHCODE sorted by library name."""
    c.set("fkey", "fvalue")
    assert c.execute_command("FCALL", "kw_get", 1, "fkey") == b"fvalue"
    assert c.execute_command("FCALL_RO", "kw_ro", 0) == b"ro"
    c.set("counter", 5)
    assert c.execute_command("FCALL", "kw_incr", 1, "counter", 3) == 8
    c.delete("fkey", "counter")
    current = []
    for library in c.execute_command("FUNCTION", "LIST", "WITHCODE"):
        fields = dict(zip(library[::2], library[1::2]))
        # Function order within a library is not specified (Redis: hash table order).
        fields[b"functions"] = sorted(fields[b"functions"], key=lambda f: f[1])
        current.append(sorted(fields.items()))
    current.sort()
    if listing is not None:
        assert current == listing
    return current


def test_function_libraries_keywarden_to_redis(workdir):
    kw = start_server(directives=[("dir", workdir)])
    try:
        c = kw.client()
        load_libraries(c)
        c.set("k", "v")
        listing = check_libraries(c)
        assert len(listing) == 2
        assert c.save()
    finally:
        kw.cleanup()
    check_rdb(os.path.join(workdir, "dump.rdb"))
    ref = start_server(redis_binary(), directives=[("dir", workdir)])
    try:
        c = ref.client()
        assert c.get("k") == b"v"
        check_libraries(c, listing)
    finally:
        ref.cleanup()


def test_function_libraries_redis_to_keywarden(workdir):
    ref = start_server(redis_binary(), directives=[("dir", workdir)])
    try:
        c = ref.client()
        load_libraries(c)
        c.set("k", "v")
        listing = check_libraries(c)
        assert c.save()
    finally:
        ref.cleanup()
    kw = start_server(directives=[("dir", workdir)])
    try:
        c = kw.client()
        assert c.get("k") == b"v"
        check_libraries(c, listing)
        # Loading the libraries is not client traffic.
        assert "cmdstat_function|load" not in c.info("commandstats")
    finally:
        kw.cleanup()


def test_function_libraries_bgsave_and_debug_reload(workdir):
    kw = start_server(directives=[("dir", workdir)])
    try:
        c = kw.client()
        load_libraries(c)
        listing = check_libraries(c)
        assert c.execute_command("DEBUG", "RELOAD") == b"OK"
        check_libraries(c, listing)
        assert c.bgsave()
        assert wait_for(lambda: c.info("persistence")["rdb_bgsave_in_progress"] == 0
                        and c.info("persistence")["rdb_saves"] >= 2)
        assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
        # Saving asks for the libraries internally: no FUNCTION DUMP call shows.
        assert "cmdstat_function|dump" not in c.info("commandstats")
    finally:
        kw.cleanup()
    check_rdb(os.path.join(workdir, "dump.rdb"))
    kw = start_server(directives=[("dir", workdir)])
    try:
        check_libraries(kw.client(), listing)
    finally:
        kw.cleanup()


def test_function_library_refused_fails_the_load(workdir):
    # Uncompressed strings, so that the code can be edited in the file.
    ref = start_server(redis_binary(), directives=[("dir", workdir), ("rdbcompression", "no")])
    try:
        c = ref.client()
        c.execute_command("FUNCTION", "LOAD", LIBRARIES[0])
        assert c.save()
    finally:
        ref.cleanup()
    path = os.path.join(workdir, "dump.rdb")
    data = open(path, "rb").read()
    # Break the Lua (same length keeps the RDB string valid) and disable the checksum.
    assert b"return redis.call('GET'" in data
    data = data.replace(b"return redis.call('GET'", b"retur( redis.call('GET'")
    data = data[:-8] + b"\0" * 8
    open(path, "wb").write(data)
    with pytest.raises(ServerStartError) as failure:
        start_server(directives=[("dir", workdir)])
    assert "Failed loading library" in str(failure.value)
