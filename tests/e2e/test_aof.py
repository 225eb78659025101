"""AOF end to end: the multi-part layout in appenddirname (manifest lines exactly as Redis 7.0
writes them), writes surviving SIGKILL and restart, keys expired while down not served, the
truncated tail (aof-load-truncated yes and no) and a corrupt middle, CONFIG SET appendonly at
run time, BGREWRITEAOF, #TS annotations, the upgrade from a single-file appendonly.aof, and the
INFO persistence aof_* fields and aof config directives.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from conftest import ServerStartError, encode_command

AOF = [("appendonly", "yes"), ("appendfsync", "always")]


def aof_dir(server) -> Path:
    return Path(server.workdir) / "appendonlydir"


def manifest(server) -> str:
    return (aof_dir(server) / "appendonly.aof.manifest").read_text()


def restart(server):
    server.kill()
    server.start()
    wait_loaded(server)
    return server


def wait_loaded(server) -> None:
    """start() returns once the server answers PING, which may be -LOADING."""
    with server.raw() as conn:
        # (a substring test would also match async_loading:0)
        assert wait_for(lambda: info(conn)["loading"] == "0")


def wait_for(predicate, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def info(conn, section: str = "persistence") -> dict[str, str]:
    text = conn.execute("INFO", section).decode()
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def test_writes_survive_kill_and_restart(server_factory):
    server = server_factory(*AOF)
    c = server.raw()
    assert c.execute("SET", "s", "v") == b"OK"
    assert c.execute("SET", "ttl", "v", "EX", "1000") == b"OK"
    assert c.execute("INCR", "n") == 1
    assert c.execute("HSET", "h", "f", "1", "g", "2") == 2
    assert c.execute("RPUSH", "l", "a", "b", "c") == 3
    assert c.execute("SADD", "set", "x", "y") == 2
    assert c.execute("ZADD", "z", "1.5", "m") == 1
    assert c.execute("MULTI") == b"OK"
    assert c.execute("INCR", "n") == b"QUEUED"
    assert c.execute("LPOP", "l") == b"QUEUED"
    assert c.execute("EXEC") == [2, b"a"]
    assert c.execute("SELECT", "3") == b"OK"
    assert c.execute("SET", "in3", "yes") == b"OK"
    # As Redis 7 on a first start: a base of the empty dataset (RDB, the preamble default) and
    # the first incremental file.
    assert manifest(server) == ("file appendonly.aof.1.base.rdb seq 1 type b\n"
                                "file appendonly.aof.1.incr.aof seq 1 type i\n")
    incr = (aof_dir(server) / "appendonly.aof.1.incr.aof").read_bytes()
    assert incr.startswith(encode_command("SELECT", "0"))
    assert encode_command("MULTI") in incr and encode_command("EXEC") in incr
    assert encode_command("SELECT", "3") + encode_command("SET", "in3", "yes") in incr

    restart(server)
    c = server.raw()
    assert c.execute("GET", "s") == b"v"
    assert 990_000 < c.execute("PTTL", "ttl") <= 1_000_000
    assert c.execute("GET", "n") == b"2"
    assert c.execute("HGETALL", "h") == [b"f", b"1", b"g", b"2"]
    assert c.execute("LRANGE", "l", "0", "-1") == [b"b", b"c"]
    assert sorted(c.execute("SMEMBERS", "set")) == [b"x", b"y"]
    assert c.execute("ZSCORE", "z", "m") == b"1.5"
    assert c.execute("SELECT", "3") == b"OK"
    assert c.execute("GET", "in3") == b"yes"
    # Loading appends to the same incremental file.
    assert manifest(server) == ("file appendonly.aof.1.base.rdb seq 1 type b\n"
                                "file appendonly.aof.1.incr.aof seq 1 type i\n")
    fields = info(c)
    assert fields["aof_enabled"] == "1"
    assert int(fields["aof_current_size"]) == sum(
        f.stat().st_size for f in aof_dir(server).glob("appendonly.aof.1.*"))
    assert fields["aof_last_write_status"] == "ok"
    assert fields["aof_delayed_fsync"] == "0"


def test_key_expired_while_down_is_not_served(server_factory):
    server = server_factory(*AOF)
    c = server.raw()
    assert c.execute("SET", "short", "v", "PX", "200") == b"OK"
    assert c.execute("SET", "long", "v", "EX", "1000") == b"OK"
    server.kill()
    time.sleep(0.3)
    server.start()
    wait_loaded(server)
    c = server.raw()
    assert c.execute("GET", "short") is None
    assert c.execute("EXISTS", "short") == 0
    assert c.execute("GET", "long") == b"v"


def test_truncated_tail(server_factory):
    server = server_factory(*AOF)
    c = server.raw()
    for i in range(10):
        c.execute("SET", f"k{i}", str(i))
    server.kill()
    incr = aof_dir(server) / "appendonly.aof.1.incr.aof"
    good = incr.stat().st_size
    with open(incr, "ab") as f:
        f.write(encode_command("SET", "partial", "value")[:-5])

    # aof-load-truncated no: refused, with Redis's message.
    server.extra.append(("aof-load-truncated", "no"))
    with pytest.raises(ServerStartError):
        server.start(attempts=1)
    assert "Unexpected end of file reading the append only file appendonly.aof.1.incr.aof" in \
        server.log()

    # yes (the default): truncated at the last whole command, loaded, and appended to.
    server.extra.pop()
    server.start()
    assert "Truncating the AOF appendonly.aof.1.incr.aof at offset %d" % good in server.log()
    assert incr.stat().st_size == good
    c = server.raw()
    assert c.execute("GET", "k9") == b"9"
    assert c.execute("EXISTS", "partial") == 0
    assert c.execute("SET", "after", "1") == b"OK"
    restart(server)
    assert server.raw().execute("GET", "after") == b"1"


def test_open_multi_at_the_end_is_reverted(server_factory):
    server = server_factory(*AOF)
    c = server.raw()
    c.execute("SET", "a", "1")
    server.kill()
    incr = aof_dir(server) / "appendonly.aof.1.incr.aof"
    good = incr.stat().st_size
    with open(incr, "ab") as f:
        f.write(encode_command("MULTI") + encode_command("SET", "b", "2"))
    server.start()
    assert "Revert incomplete MULTI/EXEC transaction" in server.log()
    assert incr.stat().st_size == good
    c = server.raw()
    assert c.execute("GET", "a") == b"1"
    assert c.execute("EXISTS", "b") == 0


def test_corrupt_middle_is_refused(server_factory):
    server = server_factory(*AOF)
    c = server.raw()
    c.execute("SET", "a", "1")
    c.execute("SET", "b", "2")
    server.kill()
    incr = aof_dir(server) / "appendonly.aof.1.incr.aof"
    data = incr.read_bytes()
    first = len(encode_command("SELECT", "0") + encode_command("SET", "a", "1"))
    incr.write_bytes(data[:first] + b"garbage\r\n" + data[first:])
    with pytest.raises(ServerStartError):
        server.start(attempts=1)
    assert "Bad file format reading the append only file appendonly.aof.1.incr.aof" in \
        server.log()
    incr.write_bytes(data)  # untouched file still loads
    server.start()
    assert server.raw().execute("GET", "b") == b"2"


def test_config_set_appendonly_rewrites_existing_data(server_factory):
    server = server_factory(("appendfsync", "always"))
    c = server.raw()
    c.execute("SET", "before", "1")
    c.execute("HSET", "h", *[x for i in range(100) for x in (f"f{i}", str(i))])
    c.execute("SET", "ttl", "v", "EX", "500")
    assert c.execute("CONFIG", "SET", "appendonly", "yes") == b"OK"
    assert wait_for(lambda: info(c)["aof_rewrite_in_progress"] == "0")
    # aof-use-rdb-preamble yes (the default): the base is an RDB image.
    assert manifest(server) == ("file appendonly.aof.1.base.rdb seq 1 type b\n"
                                "file appendonly.aof.2.incr.aof seq 2 type i\n")
    assert sorted(os.listdir(aof_dir(server))) == [
        "appendonly.aof.1.base.rdb", "appendonly.aof.2.incr.aof", "appendonly.aof.manifest"]
    assert (aof_dir(server) / "appendonly.aof.1.base.rdb").read_bytes().startswith(b"REDIS0010")
    c.execute("SET", "after", "2")
    server.extra.append(("appendonly", "yes"))
    restart(server)
    c = server.raw()
    assert c.execute("GET", "before") == b"1"
    assert c.execute("GET", "after") == b"2"
    assert c.execute("HLEN", "h") == 100
    assert 490_000 < c.execute("PTTL", "ttl") <= 500_000
    assert c.execute("CONFIG", "SET", "appendonly", "no") == b"OK"
    assert info(c)["aof_enabled"] == "0"


@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_bgrewriteaof_replaces_base_and_incr(server_factory, preamble):
    server = server_factory(*AOF, ("aof-use-rdb-preamble", preamble))
    base_name = "appendonly.aof.2.base." + ("rdb" if preamble == "yes" else "aof")
    c = server.raw()
    for i in range(50):
        c.execute("INCR", "counter")
    c.execute("RPUSH", "list", *[str(i) for i in range(200)])
    c.execute("ZADD", "z", "1e300", "big", "-inf", "low")
    assert c.execute("BGREWRITEAOF") == b"Background append only file rewriting started"
    assert wait_for(lambda: info(c)["aof_rewrite_in_progress"] == "0")
    assert manifest(server) == (f"file {base_name} seq 2 type b\n"
                                "file appendonly.aof.2.incr.aof seq 2 type i\n")
    assert not (aof_dir(server) / "appendonly.aof.1.incr.aof").exists()
    fields = info(c)
    assert fields["aof_last_bgrewrite_status"] == "ok"
    assert fields["aof_rewrites"] == "1"
    base = (aof_dir(server) / base_name).read_bytes()
    assert b"INCR" not in base
    assert base.startswith(b"REDIS0010") == (preamble == "yes")
    c.execute("INCR", "counter")
    restart(server)
    c = server.raw()
    assert c.execute("GET", "counter") == b"51"
    assert c.execute("LLEN", "list") == 200
    assert c.execute("ZRANGE", "z", "0", "-1", "WITHSCORES") == [b"low", b"-inf", b"big",
                                                                  b"1.0000000000000001e+300"]


def test_timestamp_annotations(server_factory):
    server = server_factory(*AOF, ("aof-timestamp-enabled", "yes"))
    c = server.raw()
    c.execute("SET", "a", "1")
    incr = (aof_dir(server) / "appendonly.aof.1.incr.aof").read_bytes()
    assert incr.startswith(b"#TS:")
    assert incr.split(b"\r\n", 1)[1].startswith(encode_command("SELECT", "0"))
    restart(server)
    assert server.raw().execute("GET", "a") == b"1"


def test_upgrade_from_single_file_aof(server_factory, tmp_path):
    server = server_factory()
    server.stop()
    Path(server.workdir, "appendonly.aof").write_bytes(
        encode_command("SELECT", "0") + encode_command("SET", "old", "style"))
    server.extra.append(("appendonly", "yes"))
    server.start()
    assert server.raw().execute("GET", "old") == b"style"
    assert manifest(server) == ("file appendonly.aof seq 1 type b\n"
                                "file appendonly.aof.1.incr.aof seq 1 type i\n")
    assert not Path(server.workdir, "appendonly.aof").exists()
    assert (aof_dir(server) / "appendonly.aof").exists()


def test_config_directives_like_redis(server_factory):
    server = server_factory()
    c = server.raw()
    expected = {
        b"appendonly": b"no", b"appendfsync": b"everysec", b"appenddirname": b"appendonlydir",
        b"appendfilename": b"appendonly.aof", b"aof-load-truncated": b"yes",
        b"aof-use-rdb-preamble": b"yes", b"aof-timestamp-enabled": b"no",
        b"no-appendfsync-on-rewrite": b"no", b"auto-aof-rewrite-percentage": b"100",
        b"auto-aof-rewrite-min-size": b"67108864",
    }
    for name, value in expected.items():
        assert c.execute("CONFIG", "GET", name) == [name, value]
    assert c.execute("CONFIG", "SET", "appendfsync", "always") == b"OK"
    assert c.execute("CONFIG", "SET", "appendfsync", "sometimes") == (
        b"ERR CONFIG SET failed (possibly related to argument 'appendfsync') - argument(s) must "
        b"be one of the following: always, everysec, no")
    reply = c.execute("CONFIG", "SET", "appenddirname", "x")
    assert b"can't set immutable config" in reply
    fields = info(c)
    assert fields["aof_enabled"] == "0"
    assert "aof_current_size" not in fields


def test_loading_replies_and_progress(server_factory):
    """A slow load (key-load-delay) answers clients meanwhile: -LOADING for data commands,
    INFO persistence with loading:1 and the progress fields."""
    server = server_factory()
    server.stop()
    directory = aof_dir(server)
    directory.mkdir()
    (directory / "appendonly.aof.manifest").write_text(
        "file appendonly.aof.1.incr.aof seq 1 type i\n")
    commands = [encode_command("SELECT", "0")]
    commands += [encode_command("SET", f"k{i}", str(i)) for i in range(20000)]
    (directory / "appendonly.aof.1.incr.aof").write_bytes(b"".join(commands))
    server.extra += [("appendonly", "yes"), ("key-load-delay", "200")]
    server.start()
    c = server.raw(timeout=30)
    assert c.execute("GET", "k1") == b"LOADING Redis is loading the dataset in memory"
    fields = info(c)
    assert fields["loading"] == "1"
    assert int(fields["loading_total_bytes"]) == len(b"".join(commands))
    assert fields["loading_loaded_perc"].endswith("%")
    assert "loading_eta_seconds" in fields
    assert wait_for(lambda: info(c)["loading"] == "0", timeout=120)
    assert c.execute("GET", "k19999") == b"19999"
    assert c.execute("DBSIZE") == 20000


def test_writes_during_rewrite_go_to_the_new_incremental_file(server_factory):
    """The fork child writes the base while the parent appends to incr seq 2; both survive."""
    server = server_factory(*AOF, ("rdb-key-save-delay", "1000"), ("aof-use-rdb-preamble", "no"))
    c = server.raw()
    c.execute("MSET", *[x for i in range(1000) for x in (f"key:{i}", str(i))])
    assert c.execute("BGREWRITEAOF") == b"Background append only file rewriting started"
    assert info(c)["aof_rewrite_in_progress"] == "1"
    assert c.execute("BGREWRITEAOF") == \
        b"ERR Background append only file rewriting already in progress"
    assert manifest(server) == ("file appendonly.aof.1.base.aof seq 1 type b\n"
                                "file appendonly.aof.1.incr.aof seq 1 type i\n"
                                "file appendonly.aof.2.incr.aof seq 2 type i\n")
    assert c.execute("SET", "during", "rewrite") == b"OK"
    incr2 = (aof_dir(server) / "appendonly.aof.2.incr.aof").read_bytes()
    assert encode_command("SET", "during", "rewrite") in incr2
    assert wait_for(lambda: info(c)["aof_rewrite_in_progress"] == "0", timeout=120)
    assert info(c)["aof_last_bgrewrite_status"] == "ok"
    assert manifest(server) == ("file appendonly.aof.2.base.aof seq 2 type b\n"
                                "file appendonly.aof.2.incr.aof seq 2 type i\n")
    restart(server)
    c = server.raw()
    assert c.execute("DBSIZE") == 1001
    assert c.execute("GET", "during") == b"rewrite"


def test_appendonly_no_kills_the_rewrite(server_factory):
    server = server_factory(*AOF, ("rdb-key-save-delay", "100000"),
                            ("aof-use-rdb-preamble", "no"))
    c = server.raw()
    c.execute("MSET", *[x for i in range(100) for x in (f"key:{i}", str(i))])
    assert c.execute("BGREWRITEAOF") == b"Background append only file rewriting started"
    assert c.execute("CONFIG", "SET", "appendonly", "no") == b"OK"
    fields = info(c)
    assert fields["aof_rewrite_in_progress"] == "0"
    assert fields["aof_enabled"] == "0"
    assert fields["aof_last_bgrewrite_status"] == "err"
    assert not [n for n in os.listdir(aof_dir(server)) if n.startswith("temp-")]


def test_auto_rewrite_on_growth(server_factory):
    server = server_factory(*AOF, ("auto-aof-rewrite-percentage", "100"),
                            ("auto-aof-rewrite-min-size", "20kb"))
    c = server.raw()
    value = "x" * 100
    for i in range(300):  # ~40 KB of SETs of 30 keys: mostly overwrites a rewrite drops
        c.execute("SET", f"k{i % 30}", value)
    # Writes go on while the child runs, so sizes after the rewrite are not exact.
    assert wait_for(lambda: int(info(c)["aof_rewrites"]) >= 1)
    assert wait_for(lambda: info(c)["aof_rewrite_in_progress"] == "0")
    assert "Starting automatic rewriting of AOF on" in server.log()
    fields = info(c)
    assert 0 < int(fields["aof_base_size"]) <= int(fields["aof_current_size"]) < 60 * 1024
    restart(server)
    assert server.raw().execute("DBSIZE") == 30


def test_upgrade_from_single_file_aof_with_rdb_preamble(server_factory):
    """A pre-7.0 appendonly.aof: an RDB preamble, then commands."""
    source = server_factory(*AOF)
    c = source.raw()
    c.execute("SET", "from", "preamble")
    c.execute("HSET", "h", "f", "v")
    assert c.execute("BGREWRITEAOF") == b"Background append only file rewriting started"
    assert wait_for(lambda: info(c)["aof_rewrite_in_progress"] == "0")
    image = (aof_dir(source) / "appendonly.aof.2.base.rdb").read_bytes()
    server = server_factory()
    server.stop()
    Path(server.workdir, "appendonly.aof").write_bytes(
        image + encode_command("SELECT", "0") + encode_command("SET", "from", "tail"))
    server.extra.append(("appendonly", "yes"))
    server.start()
    wait_loaded(server)
    c = server.raw()
    assert c.execute("GET", "from") == b"tail"
    assert c.execute("HGET", "h", "f") == b"v"
    assert "Reading RDB preamble from AOF file..." in server.log()


def test_rewrite_inside_multi_keeps_the_transaction_whole(server_factory):
    # The slow child keeps incr 1 (deleted when the rewrite ends) around to be read.
    server = server_factory(*AOF, ("aof-use-rdb-preamble", "no"), ("rdb-key-save-delay", "500000"))
    c = server.raw()
    assert c.execute("MULTI") == b"OK"
    c.execute("SET", "a", "1")
    c.execute("BGREWRITEAOF")
    c.execute("INCR", "n")
    assert c.execute("EXEC") == [b"OK", b"Background append only file rewriting scheduled", 1]
    incr1 = (aof_dir(server) / "appendonly.aof.1.incr.aof").read_bytes()
    assert encode_command("MULTI") + encode_command("SET", "a", "1") + \
        encode_command("INCR", "n") + encode_command("EXEC") in incr1
    assert wait_for(lambda: info(c)["aof_rewrites"] == "1")
    assert not (aof_dir(server) / "appendonly.aof.1.incr.aof").exists()
    restart(server)
    c = server.raw()
    assert c.execute("GET", "a") == b"1"
    assert c.execute("GET", "n") == b"1"


@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_function_libraries_survive_rewrite_and_restart(server_factory, preamble):
    server = server_factory(*AOF, ("aof-use-rdb-preamble", preamble))
    c = server.raw()
    code = ("#!lua name=auditlib\n"
            "redis.register_function('audit_set', function(keys, args) "
            "return redis.call('SET', keys[1], args[1]) end)\n")
    assert c.execute("FUNCTION", "LOAD", code) == b"auditlib"
    c.execute("SET", "k", "v")
    assert c.execute("BGREWRITEAOF") == b"Background append only file rewriting started"
    assert wait_for(lambda: info(c)["aof_rewrite_in_progress"] == "0")
    assert info(c)["aof_last_bgrewrite_status"] == "ok"
    base_name = "appendonly.aof.2.base." + ("rdb" if preamble == "yes" else "aof")
    base = (aof_dir(server) / base_name).read_bytes()
    assert b"auditlib" in base
    if preamble == "no":
        assert base.index(b"FUNCTION") < base.index(b"SELECT")
    restart(server)
    c = server.raw()
    assert c.execute("FCALL", "audit_set", "1", "x", "1") == b"OK"
    assert c.execute("GET", "k") == b"v"
    listing = c.execute("FUNCTION", "LIST")
    assert listing[0][1] == b"auditlib"
