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
  arrives.
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
