"""Hash-field expiration end to end (Redis 8.4 semantics; the 7.0 oracle lacks it, so the
expected replies are written here):

* active expiry reclaims due fields nobody reads, and the key with its last field;
* RDB: a file with field deadlines is written as RDB 12 (types 24/25) and loads back with
  them, in both encodings; a file without any stays RDB 10 and redis-server 7.0 loads it;
* DUMP/RESTORE keep field deadlines;
* AOF: HEXPIRE is logged as HPEXPIREAT, a rewrite emits HPEXPIREAT per field, and a restart
  from the AOF restores the deadlines;
* a keywarden replica of a keywarden primary gets the deadlines by full sync and by the
  stream, hides due fields without deleting them, and drops them when the primary's HDEL
  arrives;
* keys of every type deleted, overwritten, renamed, copied, moved, swapped, flushed, reloaded
  and restored beside hashes with field TTLs (a regression: the field index once read any
  value as a hash);
* INFO's expired_subkeys counts fields expired lazily and actively.
Waits poll with generous deadlines; nothing asserts on timing.
"""

from __future__ import annotations

import os
import subprocess

from conftest import redis_binary, wait_until


def fill(c, key: str, fields: int) -> None:
    c.hset(key, mapping={f"f{i}": f"v{i}" for i in range(fields)})


def httl(c, key: str, *fields: str) -> list:
    return c.execute_command("HTTL", key, "FIELDS", len(fields), *fields)


def test_active_expiry_reclaims_fields_and_the_key(server_factory):
    server = server_factory()
    c = server.client()
    fill(c, "small", 3)
    fill(c, "big", 1000)
    c.execute_command("HPEXPIRE", "small", 50, "FIELDS", 2, "f0", "f1")
    c.execute_command("HPEXPIRE", "big", 50, "FIELDS", 1000, *[f"f{i}" for i in range(1000)])
    # Nobody reads them: only the active cycle can find them. DBSIZE does not touch the
    # hashes, so the key count drops only when the cycle deleted `big`'s last field.
    wait_until(lambda: c.dbsize() == 1, timeout=30)
    assert c.hgetall("small") == {b"f2": b"v2"}


def test_rdb_round_trip_keeps_field_deadlines(server_factory):
    server = server_factory()
    c = server.client()
    fill(c, "small", 3)
    fill(c, "big", 600)
    fill(c, "plain", 2)
    assert c.execute_command("HEXPIRE", "small", 1000, "FIELDS", 1, "f1") == [1]
    assert c.execute_command("HPEXPIREAT", "big", 4_000_000_000_000, "FIELDS", 2, "f1", "f2") \
        == [1, 1]
    assert c.object("encoding", "big") == b"hashtable"
    assert c.save()
    path = os.path.join(server.workdir, "dump.rdb")
    with open(path, "rb") as f:
        assert f.read(9) == b"REDIS0012"
    server.stop()
    server.start()
    c = server.client()
    ttls = httl(c, "small", "f0", "f1", "zz")
    assert ttls[0] == -1 and ttls[2] == -2 and 990 <= ttls[1] <= 1000, ttls
    assert c.execute_command("HPEXPIRETIME", "big", "FIELDS", 3, "f1", "f2", "f3") == \
        [4_000_000_000_000, 4_000_000_000_000, -1]
    assert c.hlen("big") == 600
    assert c.hgetall("plain") == {b"f0": b"v0", b"f1": b"v1"}


def test_rdb_without_field_deadlines_stays_loadable_by_redis_70(server_factory):
    server = server_factory()
    c = server.client()
    fill(c, "h", 3)
    c.execute_command("HEXPIRE", "h", 1000, "FIELDS", 1, "f1")
    c.execute_command("HPERSIST", "h", "FIELDS", 1, "f1")
    assert c.save()
    path = os.path.join(server.workdir, "dump.rdb")
    with open(path, "rb") as f:
        assert f.read(9) == b"REDIS0010"
    check = subprocess.run([os.path.join(os.path.dirname(redis_binary()), "redis-check-rdb"),
                            path], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    reference = server_factory(("dbfilename", "dump.rdb"), ("dir", server.workdir),
                               binary=redis_binary())
    r = reference.client()
    assert r.hgetall("h") == {b"f0": b"v0", b"f1": b"v1", b"f2": b"v2"}


def test_dump_restore_keeps_field_deadlines(server_factory):
    c = server_factory().client()
    fill(c, "small", 3)
    fill(c, "big", 600)
    c.execute_command("HPEXPIREAT", "small", 4_000_000_000_000, "FIELDS", 1, "f1")
    c.execute_command("HPEXPIREAT", "big", 4_000_000_000_000, "FIELDS", 1, "f7")
    for key in ("small", "big"):
        payload = c.dump(key)
        assert payload[-10:-8] == b"\x0c\x00"  # RDB 12 in the footer
        c.restore(key + "-copy", 0, payload)
        assert c.execute_command("HPEXPIRETIME", key + "-copy", "FIELDS", 2, "f1", "f7")[
            0 if key == "small" else 1] == 4_000_000_000_000
        assert c.hgetall(key + "-copy") == c.hgetall(key)
    # Corrupt payloads are refused, never a crash.
    payload = bytearray(c.dump("small"))
    for cut in range(1, len(payload) - 10):
        try:
            c.restore("broken", 0, bytes(payload[:cut]) + bytes(payload[-10:]), replace=True)
        except Exception:
            pass
    assert c.ping()


def test_aof_logs_hpexpireat_and_restores_deadlines(server_factory):
    server = server_factory(("appendonly", "yes"))
    c = server.client()
    fill(c, "h", 3)
    assert c.execute_command("HEXPIREAT", "h", 4_000_000_000, "FIELDS", 2, "f1", "nofield") \
        == [1, -2]
    wait_until(lambda: any(
        b"HPEXPIREAT" in open(os.path.join(root, name), "rb").read()
        for root, _, names in os.walk(server.workdir) for name in names if ".aof" in name))
    server.stop()
    server.start()
    c = server.client()
    assert c.execute_command("HEXPIRETIME", "h", "FIELDS", 2, "f0", "f1") == [-1, 4_000_000_000]
    # A rewrite keeps them too.
    assert c.bgrewriteaof()
    wait_until(lambda: c.info("persistence")["aof_rewrite_in_progress"] == 0 and
               c.info("persistence")["aof_rewrite_scheduled"] == 0, timeout=30)
    server.stop()
    server.start()
    c = server.client()
    assert c.execute_command("HEXPIRETIME", "h", "FIELDS", 2, "f0", "f1") == [-1, 4_000_000_000]


def test_keywarden_replica_of_keywarden_primary(server_factory):
    primary = server_factory()
    replica = server_factory()
    p = primary.client()
    r = replica.client()
    fill(p, "before", 3)
    p.execute_command("HPEXPIREAT", "before", 4_000_000_000_000, "FIELDS", 1, "f1")
    r.replicaof("127.0.0.1", primary.port)
    wait_until(lambda: r.info("replication")["master_link_status"] == "up", timeout=30)
    wait_until(lambda: r.hlen("before") == 3)
    assert r.execute_command("HPEXPIRETIME", "before", "FIELDS", 1, "f1") == [4_000_000_000_000]
    # By the stream: HEXPIRE arrives as HPEXPIREAT.
    fill(p, "h", 2)
    p.execute_command("HPEXPIRE", "h", 300, "FIELDS", 1, "f0")
    deadline = p.execute_command("HPEXPIRETIME", "h", "FIELDS", 1, "f0")[0]
    wait_until(lambda: r.execute_command("HPEXPIRETIME", "h", "FIELDS", 1, "f0") == [deadline])
    # After the deadline the primary deletes f0 (actively) and sends HDEL; the replica never
    # shows it in between, and ends with exactly what the primary has.
    wait_until(lambda: r.hgetall("h") == {b"f1": b"v1"}, timeout=30)
    wait_until(lambda: p.hgetall("h") == {b"f1": b"v1"}, timeout=30)
    # HSETEX and HGETEX propagate deterministically.
    p.execute_command("HSETEX", "s", "EX", 1000, "FIELDS", 1, "a", "1")
    p.execute_command("HGETEX", "s", "PX", 500000, "FIELDS", 1, "a")
    expected = p.execute_command("HPEXPIRETIME", "s", "FIELDS", 1, "a")
    wait_until(lambda: r.execute_command("HPEXPIRETIME", "s", "FIELDS", 1, "a") == expected)


def _every_type(c, prefix: str = "") -> list[str]:
    """One key of every type, and two hashes with a volatile field (listpack and hashtable)."""
    c.set(prefix + "str", "1")
    c.rpush(prefix + "list", "a", "b")
    c.sadd(prefix + "set", "a", "b")
    c.zadd(prefix + "zset", {"a": 1})
    c.hset(prefix + "plain", "f", "v")
    c.pfadd(prefix + "hll", "a")
    for key, big in ((prefix + "vh", False), (prefix + "vbig", True)):
        fill(c, key, 600 if big else 3)
        c.execute_command("HPEXPIRE", key, 100_000, "FIELDS", 1, "f1")
    return [prefix + name for name in ("str", "list", "set", "zset", "plain", "hll", "vh", "vbig")]


def volatile(c, key: str, field: str) -> bool:
    """The field has the 100 s deadline _every_type gave it (a few seconds may have passed)."""
    return 50 <= httl(c, key, field)[0] <= 100


def test_keys_of_every_type_come_and_go_beside_volatile_hashes(server_factory):
    """Regression: deleting or overwriting a non-hash key once read its value as a hash in the
    field-deadline index (SET a 1; DEL a crashed the server). Every way a key leaves, changes
    type or moves, with the server alive and the deadlines intact after each."""
    server = server_factory()
    c = server.client()
    c.set("a", "1")
    assert c.delete("a") == 1
    keys = _every_type(c)
    assert c.delete(*keys) == len(keys)
    keys = _every_type(c)
    assert c.unlink(*keys) == len(keys)
    # A string over a hash with field TTLs, and over every other type.
    keys = _every_type(c)
    for key in keys:
        assert c.set(key, "s")
    assert c.object("encoding", "vh") == b"embstr"
    c.flushall()
    # RENAME both ways, COPY onto each type, MOVE to db 1 and SWAPDB.
    keys = _every_type(c)
    for key in keys:
        fill(c, "target", 3)
        c.execute_command("HPEXPIRE", "target", 100_000, "FIELDS", 1, "f0")
        assert c.rename(key, "target")
        assert c.rename("target", key)
    assert volatile(c, "vh", "f1") and httl(c, "vh", "f2") == [-1]
    for key in keys:
        assert c.copy("vbig", key + "-copy")
    for key in keys[:-2]:  # every type but the volatile hashes themselves
        assert c.copy("vh", key, replace=True)
    assert volatile(c, "str", "f1")
    assert volatile(c, "str-copy", "f1")
    for key in keys:
        assert c.move(key, 1)
    assert c.dbsize() == len(keys)  # the copies
    assert c.swapdb(0, 1)
    assert volatile(c, "vbig", "f1")
    c.execute_command("SELECT", 1)
    assert volatile(c, "vbig-copy", "f1")
    c.execute_command("SELECT", 0)
    # DEBUG RELOAD keeps them, then FLUSHALL (sync and async) drops everything.
    assert c.execute_command("DEBUG", "RELOAD")
    assert volatile(c, "str", "f1")
    assert c.hlen("vbig") == 600
    c.flushall(asynchronous=True)
    assert c.dbsize() == 0
    keys = _every_type(c)
    c.flushall()
    # DUMP/RESTORE REPLACE over every type, and a key TTL on a hash with field TTLs.
    keys = _every_type(c)
    payload = c.dump("vbig")
    for key in keys:
        assert c.restore(key, 0, payload, replace=True)
    assert volatile(c, "list", "f1") and httl(c, "list", "f2") == [-1]
    assert c.pexpire("vbig", 1)
    wait_until(lambda: c.exists("vbig") == 0, timeout=30)
    assert c.expire("vh", -1)
    assert c.exists("vh") == 0
    assert c.ping()


def _expired_subkeys(c) -> int:
    return int(c.info("stats")["expired_subkeys"])


def test_info_counts_expired_subkeys_lazy_and_active(server_factory):
    c = server_factory().client()
    assert _expired_subkeys(c) == 0
    # Lazy: active expiry off, a read after the deadline reclaims (and counts) the due fields.
    assert c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    fill(c, "h", 5)
    c.execute_command("HPEXPIRE", "h", 1, "FIELDS", 2, "f1", "f2")
    wait_until(lambda: httl(c, "h", "f1") == [-2], timeout=30)
    assert _expired_subkeys(c) == 2
    assert sorted(c.hkeys("h")) == [b"f0", b"f3", b"f4"]
    # An HDEL of a field, or a key expiring, is not a field expiring.
    c.execute_command("HPEXPIRE", "h", 100_000, "FIELDS", 1, "f0")
    assert c.hdel("h", "f0") == 1
    assert _expired_subkeys(c) == 2
    assert c.config_resetstat()
    assert _expired_subkeys(c) == 0
    # Active: nobody reads the hashes; the cycle reclaims and counts every field.
    assert c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)
    fill(c, "big", 300)
    c.execute_command("HPEXPIRE", "big", 1, "FIELDS", 300, *[f"f{i}" for i in range(300)])
    c.execute_command("HPEXPIRE", "h", 1, "FIELDS", 1, "f3")
    wait_until(lambda: _expired_subkeys(c) == 301, timeout=30)
    assert c.exists("big") == 0
    assert c.hkeys("h") == [b"f4"]
