"""keywarden used through redis-py, the way an application uses Redis.

No test sleeps to let a key expire: deadlines in the past (PEXPIREAT, EXAT, PXAT), long TTLs
checked by range, and DEBUG SLEEP / DEBUG SET-ACTIVE-EXPIRE on the server side.
"""

import time

import pytest
import redis


@pytest.fixture
def r(keywarden):
    return keywarden.client()


def now_ms() -> int:
    return int(time.time() * 1000)


# --------------------------------------------------------------------------------------------
# strings
# --------------------------------------------------------------------------------------------

def test_get_set_getset_getdel(r):
    assert r.get("s") is None
    assert r.set("s", "one") is True
    assert r.get("s") == b"one"
    assert r.getset("s", "two") == b"one"
    assert r.getdel("s") == b"two"
    assert r.get("s") is None
    assert r.getdel("s") is None
    assert r.set("bin", b"\x00\xff\r\n") and r.get("bin") == b"\x00\xff\r\n"
    assert r.set("empty", "") and r.get("empty") == b"" and r.exists("empty") == 1


def test_set_conditions_and_get_option(r):
    assert r.set("k", "v1", nx=True) is True
    assert r.set("k", "v2", nx=True) is None
    assert r.set("k", "v3", xx=True) is True
    assert r.set("missing", "v", xx=True) is None
    assert r.set("k", "v4", get=True) == b"v3"
    assert r.set("new", "v", get=True) is None
    assert r.get("new") == b"v"
    assert r.setnx("k", "x") is False and r.setnx("k2", "x") is True


def test_set_with_expiry_options(r):
    r.set("ex", "v", ex=100)
    assert 95 <= r.ttl("ex") <= 100
    r.set("px", "v", px=100_000)
    assert 95_000 <= r.pttl("px") <= 100_000
    at = int(time.time()) + 1000
    r.set("exat", "v", exat=at)
    assert r.expiretime("exat") == at
    pat = now_ms() + 1_000_000
    r.set("pxat", "v", pxat=pat)
    assert r.pexpiretime("pxat") == pat
    r.set("pxat", "v2", keepttl=True)
    assert r.pexpiretime("pxat") == pat and r.get("pxat") == b"v2"
    r.set("pxat", "v3")  # a plain SET clears the TTL
    assert r.ttl("pxat") == -1
    r.setex("setex", 100, "v")
    assert 95 <= r.ttl("setex") <= 100
    r.psetex("psetex", 100_000, "v")
    assert 95_000 <= r.pttl("psetex") <= 100_000


def test_set_option_errors(r):
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("SET", "k", "v", "NX", "XX")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("SET", "k", "v", "EX", "10", "PX", "100")
    with pytest.raises(redis.ResponseError, match="^invalid expire time in 'set' command$"):
        r.set("k", "v", ex=0)
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        r.execute_command("SET", "k", "v", "EX", "ten")
    with pytest.raises(redis.ResponseError, match="^invalid expire time in 'setex' command$"):
        r.setex("k", -1, "v")
    assert r.exists("k") == 0


def test_getex(r):
    r.set("g", "v")
    assert r.getex("g", ex=100) == b"v"
    assert 95 <= r.ttl("g") <= 100
    assert r.getex("g", persist=True) == b"v"
    assert r.ttl("g") == -1
    assert r.getex("g", pxat=now_ms() - 1000) == b"v"  # a past deadline deletes the key
    assert r.exists("g") == 0
    assert r.getex("g") is None


def test_mset_mget_msetnx(r):
    assert r.mset({"a": "1", "b": "2"}) is True
    assert r.mget("a", "b", "c") == [b"1", b"2", None]
    assert r.msetnx({"c": "3", "a": "x"}) is False
    assert r.get("c") is None and r.get("a") == b"1"
    assert r.msetnx({"c": "3", "d": "4"}) is True
    assert r.mget(["c", "d"]) == [b"3", b"4"]


def test_append_strlen_ranges(r):
    assert r.append("s", "Hello") == 5
    assert r.append("s", " World") == 11
    assert r.strlen("s") == 11 and r.strlen("missing") == 0
    assert r.getrange("s", 0, 4) == b"Hello"
    assert r.getrange("s", -5, -1) == b"World"
    assert r.getrange("s", 5, 2) == b""
    assert r.getrange("s", 0, 1000) == b"Hello World"
    assert r.substr("s", 6) == b"World"
    assert r.setrange("s", 6, "Redis") == 11
    assert r.get("s") == b"Hello Redis"
    assert r.setrange("pad", 3, "x") == 4
    assert r.get("pad") == b"\x00\x00\x00x"
    with pytest.raises(redis.ResponseError, match="offset is out of range"):
        r.setrange("s", -1, "x")
    with pytest.raises(redis.ResponseError,
                       match=r"string exceeds maximum allowed size \(proto-max-bulk-len\)"):
        r.setrange("s", 512 * 1024 * 1024, "x")


def test_counters(r):
    assert r.incr("n") == 1
    assert r.incrby("n", 10) == 11
    assert r.decr("n") == 10
    assert r.decrby("n", 20) == -10
    assert r.incrbyfloat("f", 10.5) == 10.5
    assert r.get("f") == b"10.5"
    assert r.incrbyfloat("f", -0.5) == 10.0
    assert r.get("f") == b"10"
    r.set("e", "5.0e3")
    assert r.incrbyfloat("e", 1) == 5001.0
    assert r.get("e") == b"5001"
    r.set("max", 2**63 - 1)
    with pytest.raises(redis.ResponseError, match="^increment or decrement would overflow$"):
        r.incr("max")
    r.set("word", "abc")
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        r.incr("word")
    with pytest.raises(redis.ResponseError, match="^value is not a valid float$"):
        r.incrbyfloat("word", 1)
    with pytest.raises(redis.ResponseError,
                       match="^increment would produce NaN or Infinity$"):
        r.incrbyfloat("f", "inf")


def test_lcs(r):
    r.mset({"x": "ohmytext", "y": "mynewtext"})
    assert r.lcs("x", "y") == b"mytext"
    assert r.lcs("x", "y", len=True) == 6
    assert r.lcs("x", "y", idx=True, minmatchlen=4, withmatchlen=True) == [
        b"matches", [[[4, 7], [5, 8], 4]], b"len", 6]


def test_object_encoding(r):
    r.set("int", 12345)
    r.set("short", "hello")
    r.set("long", "x" * 100)
    assert r.object("encoding", "int") == b"int"
    assert r.object("encoding", "short") == b"embstr"
    assert r.object("encoding", "long") == b"raw"
    r.append("short", "!")
    assert r.object("encoding", "short") == b"raw"
    assert r.object("encoding", "missing") is None


def test_wrong_type_error(keywarden, r):
    assert r.rpush("list", "a") == 1
    with pytest.raises(redis.ResponseError,
                       match="^WRONGTYPE Operation against a key holding the wrong kind of value$"):
        r.get("list")


# --------------------------------------------------------------------------------------------
# expiry
# --------------------------------------------------------------------------------------------

def test_expire_ttl_persist(r):
    r.set("k", "v")
    assert r.ttl("k") == -1 and r.pttl("k") == -1
    assert r.ttl("missing") == -2 and r.pttl("missing") == -2
    assert r.expire("k", 1000) is True
    assert 990 <= r.ttl("k") <= 1000
    assert r.pexpire("k", 2_000_000) is True
    assert 1_990_000 <= r.pttl("k") <= 2_000_000
    assert r.persist("k") is True
    assert r.persist("k") is False
    assert r.ttl("k") == -1
    assert r.expire("missing", 10) is False


def test_expire_nx_xx_gt_lt(r):
    r.set("k", "v")
    assert r.expire("k", 1000, xx=True) is False  # no TTL yet
    assert r.expire("k", 1000, gt=True) is False  # no TTL counts as infinite
    assert r.expire("k", 1000, lt=True) is True
    assert r.expire("k", 2000, nx=True) is False
    assert r.expire("k", 2000, gt=True) is True
    assert r.expire("k", 1500, gt=True) is False
    assert r.expire("k", 1500, lt=True) is True
    assert r.expire("k", 3000, xx=True) is True
    assert 2990 <= r.ttl("k") <= 3000
    with pytest.raises(redis.ResponseError, match="GT and LT options at the same time"):
        r.expire("k", 10, gt=True, lt=True)


def test_absolute_expiry_round_trips(r):
    r.set("k", "v")
    at = int(time.time()) + 5000
    assert r.expireat("k", at) is True
    assert r.expiretime("k") == at
    assert r.pexpiretime("k") == at * 1000
    pat = (int(time.time()) + 7000) * 1000 + 600
    assert r.pexpireat("k", pat) is True
    assert r.pexpiretime("k") == pat
    assert r.expiretime("k") == pat // 1000 + 1  # EXPIRETIME rounds to the nearest second
    assert r.expiretime("missing") == -2
    r.set("nottl", "v")
    assert r.expiretime("nottl") == -1


def test_deadline_in_the_past_deletes_the_key(r):
    r.mset({"a": "1", "b": "2", "c": "3", "d": "4", "e": "5"})
    assert r.pexpireat("a", now_ms() - 1) is True
    assert r.expireat("b", 1) is True
    assert r.expire("c", -5) is True
    assert r.pexpire("d", 0) is True
    assert r.set("e", "new", pxat=1) is True
    assert r.exists("a", "b", "c", "d", "e") == 0
    assert r.dbsize() == 0


def test_lazy_expiry_with_active_expiry_off(keywarden, r):
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        r.set("short", "v", px=1)
        r.set("long", "v", ex=1000)
        r.execute_command("DEBUG", "SLEEP", "0.02")  # the server sleeps, not the test
        assert r.get("short") is None
        assert r.exists("short") == 0
        assert r.ttl("short") == -2
        assert r.get("long") == b"v"
        assert r.dbsize() == 1
    finally:
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def test_active_expiry_reclaims_untouched_keys(r):
    before = r.info("stats")["expired_keys"]
    with r.pipeline(transaction=False) as p:
        for i in range(200):
            p.set(f"volatile:{i}", "v", px=1)
        for i in range(10):
            p.set(f"stable:{i}", "v")
        p.execute()
    r.execute_command("DEBUG", "SLEEP", "0.02")
    deadline = time.monotonic() + 10
    while r.dbsize() != 10:  # nobody touches the volatile keys: only the cron can reclaim them
        assert time.monotonic() < deadline, f"active expiry left {r.dbsize() - 10} keys"
        time.sleep(0.02)
    assert r.info("stats")["expired_keys"] - before == 200
    assert sorted(r.keys("*")) == sorted(f"stable:{i}".encode() for i in range(10))


def test_info_keyspace(r):
    r.set("a", "1")
    r.set("b", "2", ex=1000)
    keyspace = r.info("keyspace")
    assert keyspace["db0"]["keys"] == 2
    assert keyspace["db0"]["expires"] == 1
    assert "avg_ttl" in keyspace["db0"]


# --------------------------------------------------------------------------------------------
# keyspace
# --------------------------------------------------------------------------------------------

def test_del_exists_type_keys(r):
    r.mset({"user:1": "a", "user:2": "b", "user:10": "c", "other": "d"})
    assert r.exists("user:1", "user:1", "missing") == 2  # repeats count
    assert r.type("user:1") == b"string" and r.type("missing") == b"none"
    assert sorted(r.keys("user:?")) == [b"user:1", b"user:2"]
    assert sorted(r.keys("user:*")) == [b"user:1", b"user:10", b"user:2"]
    assert sorted(r.keys("[ou]*r")) == [b"other"]
    assert r.delete("user:1", "user:2", "missing") == 2
    assert r.unlink("user:10") == 1
    assert r.keys("*") == [b"other"]
    assert r.touch("other", "missing") == 1
    assert r.randomkey() == b"other"
    r.flushdb()
    assert r.randomkey() is None


def test_rename_carries_ttl(r):
    r.set("src", "v", ex=1000)
    assert r.rename("src", "dst") is True
    assert r.exists("src") == 0 and r.get("dst") == b"v"
    assert 990 <= r.ttl("dst") <= 1000
    r.set("taken", "x")
    assert r.renamenx("dst", "taken") is False
    assert r.renamenx("dst", "free") is True
    with pytest.raises(redis.ResponseError, match="^no such key$"):
        r.rename("missing", "x")


def test_copy_move_swapdb_select(keywarden, r):
    r.set("k", "v", ex=1000)
    assert r.copy("k", "k2") is True
    assert r.copy("k", "k2") is False
    assert r.copy("k", "k2", replace=True) is True
    assert 990 <= r.ttl("k2") <= 1000
    assert r.copy("k", "k", destination_db=3) is True
    assert r.move("k2", 4) is True
    assert r.exists("k2") == 0
    db4 = keywarden.client(db=4)
    assert db4.get("k2") == b"v"
    assert r.swapdb(0, 4) is True
    assert r.keys("*") == [b"k2"]
    assert sorted(db4.keys("*")) == [b"k"]
    assert keywarden.client(db=3).get("k") == b"v"
    with pytest.raises(redis.ResponseError, match="DB index is out of range"):
        keywarden.client(db=16).ping()


def test_scan_iter_returns_every_key(r):
    with r.pipeline(transaction=False) as p:
        for i in range(1500):
            p.set(f"scan:{i}", i)
        for i in range(50):
            p.set(f"other:{i}", i)
        p.execute()
    assert sorted(r.scan_iter()) == sorted(r.keys("*"))
    assert len(set(r.scan_iter(count=7))) == 1550
    matched = set(r.scan_iter(match="scan:1*", count=100))
    assert matched == {f"scan:{i}".encode() for i in range(1500) if str(i).startswith("1")}
    assert len(set(r.scan_iter(_type="string"))) == 1550
    assert list(r.scan_iter(_type="list")) == []


def test_scan_errors(r):
    with pytest.raises(redis.ResponseError, match="^invalid cursor$"):
        r.execute_command("SCAN", "abc")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("SCAN", "0", "COUNT", "0")


# --------------------------------------------------------------------------------------------
# pipelines
# --------------------------------------------------------------------------------------------

def test_pipeline(r):
    with r.pipeline(transaction=False) as p:
        for i in range(500):
            p.set(f"p:{i}", i).incr(f"p:{i}")
        results = p.execute()
    assert results == [x for i in range(500) for x in (True, i + 1)]
    with r.pipeline(transaction=False) as p:
        p.get("p:0").incr("p:nope").get("p:499")
        assert p.execute() == [b"1", 1, b"500"]


def test_pipeline_with_errors(r):
    r.set("word", "abc")
    with r.pipeline(transaction=False) as p:
        p.set("a", 1).incr("word").get("a").execute_command("NOSUCH")
        results = p.execute(raise_on_error=False)
    assert results[0] is True and results[2] == b"1"
    assert isinstance(results[1], redis.ResponseError)
    assert str(results[1]) == "value is not an integer or out of range"
    assert isinstance(results[3], redis.ResponseError)
    assert str(results[3]).startswith("unknown command 'NOSUCH'")


# --------------------------------------------------------------------------------------------
# server and connection
# --------------------------------------------------------------------------------------------

def test_config_get_set(keywarden, r):
    assert r.config_get("port") == {"port": str(keywarden.port)} or \
        r.config_get("port") == {b"port": str(keywarden.port).encode()}
    both = r.execute_command("CONFIG", "GET", "hz", "maxclients")
    assert set(dict(zip(both[::2], both[1::2]))) == {b"hz", b"maxclients"}
    glob = r.execute_command("CONFIG", "GET", "proto-max-*")
    assert dict(zip(glob[::2], glob[1::2])) == {b"proto-max-bulk-len": b"536870912"}
    original_hz = dict(zip(both[::2], both[1::2]))[b"hz"]
    try:
        assert r.execute_command("CONFIG", "SET", "hz", "20", "timeout", "0") == b"OK"
        assert r.execute_command("CONFIG", "GET", "hz") == [b"hz", b"20"]
        # all or nothing: one bad value and nothing changes
        with pytest.raises(redis.ResponseError, match="argument 'timeout'"):
            r.execute_command("CONFIG", "SET", "hz", "30", "timeout", "abc")
        assert r.execute_command("CONFIG", "GET", "hz") == [b"hz", b"20"]
        with pytest.raises(redis.ResponseError, match="Unknown option"):
            r.execute_command("CONFIG", "SET", "no-such-option", "1")
    finally:
        r.execute_command("CONFIG", "SET", "hz", original_hz)
    assert r.execute_command("CONFIG", "RESETSTAT") == b"OK"


def test_client_commands(r):
    assert r.client_setname("worker-1") is True
    assert r.client_getname() == "worker-1"  # redis-py decodes this one itself
    client_id = r.client_id()
    assert isinstance(client_id, int)
    mine = [c for c in r.client_list() if c["name"] == "worker-1"]
    assert len(mine) == 1 and int(mine[0]["id"]) == client_id


def test_info_and_time(r):
    info = r.info()
    for field in ("redis_version", "connected_clients", "used_memory", "total_commands_processed",
                  "expired_keys", "role"):
        assert field in info, field
    seconds, micros = r.time()
    assert abs(seconds - time.time()) < 60 and 0 <= micros < 1_000_000


def test_echo_ping_decoded_client(keywarden):
    r = keywarden.client(decode_responses=True)
    assert r.ping() is True
    assert r.echo("héllo") == "héllo"
    r.set("unicode", "ключ")
    assert r.get("unicode") == "ключ"
    assert r.strlen("unicode") == len("ключ".encode())


def test_flushall_and_flushdb(keywarden, r):
    r.set("a", 1)
    db1 = keywarden.client(db=1)
    db1.set("b", 1)
    assert r.flushdb() is True
    assert r.dbsize() == 0 and db1.dbsize() == 1
    assert r.flushall(asynchronous=True) is True
    assert db1.dbsize() == 0
