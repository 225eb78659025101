"""AOF interop with Redis 7.0 both ways: keywarden's AOF directory passes `redis-check-aof` and a
stock `redis-server --appendonly yes` loads it with the same keys, values and TTLs; a
redis-server AOF directory is loaded by keywarden the same way; both with an RDB-format base
(aof-use-rdb-preamble yes) and an AOF-format one (no), function libraries included. A
truncated tail is handled as Redis
handles it (aof-load-truncated yes and no).
"""

from __future__ import annotations

import shutil
import time
import subprocess
from pathlib import Path

import pytest

from conftest import ConnectionClosed, ServerProcess, ServerStartError, encode_command, keywarden_binary, \
    redis_binary

AOF = [("appendonly", "yes"), ("appendfsync", "always")]
LIBRARY = ("#!lua name=interlib\n"
           "redis.register_function('inter_a', function(keys) "
           "return redis.call('GET', keys[1]) end)\n"
           "redis.register_function('inter_b', function() return 2 end)\n")


def populate(c) -> None:
    c.execute("SET", "str", "hello")
    c.execute("SET", "int", "12345")
    c.execute("SET", "ttl", "v", "EX", "1000")
    c.execute("HSET", "hash", *[x for i in range(200) for x in (f"f{i}", f"v{i}")])
    c.execute("HSET", "smallhash", "a", "1")
    c.execute("RPUSH", "list", *[str(i) for i in range(300)])
    c.execute("SADD", "intset", "1", "2", "3")
    c.execute("SADD", "set", *[f"m{i}" for i in range(150)])
    c.execute("ZADD", "zset", "1.5", "a", "-2", "b", "1e20", "c")
    c.execute("PEXPIRE", "hash", "5000000")
    # HyperLogLogs: replayed PFADDs (sparse, then promoted) and a PFCOUNT that refreshed the
    # cache must rebuild the same bytes.
    c.execute("PFADD", "hll", "a", "b", "c")
    c.execute("PFADD", "hll-dense", *[f"e{i}" for i in range(3000)])
    c.execute("PFCOUNT", "hll-dense")
    c.execute("FUNCTION", "LOAD", LIBRARY)
    c.execute("SELECT", "5")
    c.execute("SET", "db5", "x")
    c.execute("MULTI")
    c.execute("INCR", "counter")
    c.execute("RPUSH", "list5", "a")
    c.execute("EXEC")
    c.execute("SELECT", "0")


def more(c) -> None:
    c.execute("DEL", "smallhash")
    c.execute("INCRBY", "int", "5")
    c.execute("LPOP", "list")
    c.execute("SET", "gone", "v", "PX", "1")
    time.sleep(0.05)  # "gone" expires before anyone looks


def snapshot(c) -> dict:
    # Both servers answer (-LOADING) while they load: wait for the end.
    deadline = time.monotonic() + 60
    while b"loading:1" in c.execute("INFO", "persistence") and time.monotonic() < deadline:
        time.sleep(0.02)
    data = {}
    for db in range(16):
        c.execute("SELECT", str(db))
        cursor = b"0"
        while True:
            cursor, keys = c.execute("SCAN", cursor, "COUNT", "1000")
            for key in keys:
                kind = c.execute("TYPE", key)
                if kind == b"string":
                    value = c.execute("GET", key)
                elif kind == b"hash":
                    value = sorted(c.execute("HGETALL", key))
                elif kind == b"list":
                    value = c.execute("LRANGE", key, "0", "-1")
                elif kind == b"set":
                    value = sorted(c.execute("SMEMBERS", key))
                elif kind == b"zset":
                    value = c.execute("ZRANGE", key, "0", "-1", "WITHSCORES")
                else:
                    value = kind
                ttl = c.execute("PTTL", key)
                # TTLs compared to the second: the two reads are not at the same instant.
                data[(db, key)] = (kind, value, -1 if ttl < 0 else round(ttl / 10000))
            if cursor == b"0":
                break
    c.execute("SELECT", "0")
    libraries = []
    for library in c.execute("FUNCTION", "LIST", "WITHCODE"):
        fields = dict(zip(library[::2], library[1::2]))
        # Function order within a library is not specified (Redis: hash table order).
        fields[b"functions"] = sorted(fields[b"functions"], key=lambda f: f[1])
        libraries.append(sorted(fields.items()))
    if libraries:
        data["functions"] = sorted(libraries)
        assert c.execute("FCALL", "inter_b", "0") == 2
    return data


def start_in(binary: str, aof_from: Path | None, directives) -> ServerProcess:
    server = ServerProcess(binary, directives)
    if aof_from is not None:
        shutil.copytree(aof_from, Path(server.workdir) / "appendonlydir")
    try:
        return server.start(attempts=1)
    except BaseException:
        server.cleanup()
        raise


@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_keywarden_aof_loads_in_redis(preamble):
    kw = start_in(keywarden_binary(), None, [*AOF, ("aof-use-rdb-preamble", preamble)])
    base = "appendonly.aof.2.base." + ("rdb" if preamble == "yes" else "aof")
    redis = None
    try:
        c = kw.raw()
        populate(c)
        assert c.execute("BGREWRITEAOF") == b"Background append only file rewriting started"
        deadline_rewrite(c)
        more(c)
        expected = snapshot(c)
        kw.stop()
        manifest = (Path(kw.workdir) / "appendonlydir" / "appendonly.aof.manifest").read_text()
        assert manifest == (f"file {base} seq 2 type b\n"
                            "file appendonly.aof.2.incr.aof seq 2 type i\n")
        directory = Path(kw.workdir) / "appendonlydir"
        check = subprocess.run(["redis-check-aof", str(directory / "appendonly.aof.manifest")],
                               capture_output=True, text=True, timeout=60)
        assert "All AOF files and manifest are valid" in check.stdout, check.stdout
        redis = start_in(redis_binary(), directory, AOF)
        assert snapshot(redis.raw()) == expected
        assert (0, b"gone") not in expected
    finally:
        kw.cleanup()
        if redis is not None:
            redis.cleanup()


@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_redis_aof_loads_in_keywarden(preamble):
    redis = start_in(redis_binary(), None, [*AOF, ("aof-use-rdb-preamble", preamble)])
    kw = None
    try:
        c = redis.raw()
        populate(c)
        assert c.execute("BGREWRITEAOF") == b"Background append only file rewriting started"
        deadline_rewrite(c)
        more(c)
        expected = snapshot(c)
        redis.stop()
        directory = Path(redis.workdir) / "appendonlydir"
        assert "type b" in (directory / "appendonly.aof.manifest").read_text()
        kw = start_in(keywarden_binary(), directory, AOF)
        assert snapshot(kw.raw()) == expected
    finally:
        redis.cleanup()
        if kw is not None:
            kw.cleanup()


def deadline_rewrite(c, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = c.execute("INFO", "persistence").decode()
        if "aof_rewrite_in_progress:0" in text and "aof_rewrite_scheduled:0" in text:
            return
        time.sleep(0.05)
    raise AssertionError("rewrite did not finish")


@pytest.mark.parametrize("load_truncated", ["yes", "no"])
def test_truncated_tail_like_redis(load_truncated):
    """The same truncated directory given to both servers: both load the same keys (yes) or
    both refuse to start (no)."""
    source = start_in(keywarden_binary(), None, AOF)
    try:
        c = source.raw()
        for i in range(20):
            c.execute("SET", f"k{i}", str(i))
        source.kill()
        directory = Path(source.workdir) / "appendonlydir"
        with open(directory / "appendonly.aof.1.incr.aof", "ab") as f:
            f.write(encode_command("SET", "half", "written")[:-3])
        outcomes = []
        for binary in (redis_binary(), keywarden_binary()):
            try:
                server = start_in(binary, directory, [*AOF, ("aof-load-truncated",
                                                             load_truncated)])
            except ServerStartError as e:
                assert "Unexpected end of file" in str(e)
                outcomes.append("refused")
                continue
            try:
                # redis-server answers (-LOADING) before it has read the files, then exits.
                outcomes.append(snapshot(server.raw()))
            except (ConnectionClosed, OSError):
                server.proc.wait(30)
                assert "Unexpected end of file" in server.log()
                outcomes.append("refused")
            finally:
                server.cleanup()
        assert outcomes[0] == outcomes[1]
        if load_truncated == "yes":
            assert len(outcomes[0]) == 20
        else:
            assert outcomes[0] == "refused"
    finally:
        source.cleanup()


def test_info_persistence_aof_fields_like_redis():
    """Same aof_* field names in the same order as redis-server, AOF on and off."""
    for directives in (AOF, [("appendonly", "no")]):
        names = []
        for binary in (redis_binary(), keywarden_binary()):
            server = start_in(binary, None, directives)
            try:
                snapshot(server.raw())  # waits for the end of loading
                text = server.raw().execute("INFO", "persistence").decode()
                names.append([line.split(":")[0] for line in text.splitlines()
                              if line.startswith("aof_")])
            finally:
                server.cleanup()
        assert names[0] == names[1]


@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_first_start_layout_like_redis(preamble):
    """A first start with appendonly yes creates the same files and manifest as Redis 7.0."""
    layouts = []
    for binary in (redis_binary(), keywarden_binary()):
        server = start_in(binary, None, [*AOF, ("aof-use-rdb-preamble", preamble)])
        try:
            snapshot(server.raw())  # waits for the end of loading
            directory = Path(server.workdir) / "appendonlydir"
            layouts.append((sorted(p.name for p in directory.iterdir()),
                            (directory / "appendonly.aof.manifest").read_text()))
        finally:
            server.cleanup()
    assert layouts[0] == layouts[1]
