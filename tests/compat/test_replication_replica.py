"""keywarden as a replica of a stock redis-server 7.0 primary (the replica side of replication).

Each test starts its own primary (redis-server) and keywarden with ``replicaof``; where Redis's
behaviour is the reference, a redis-server replica of the same primary runs beside keywarden
and both are asked the same things. Nothing here asserts on timing: every wait polls with a
generous deadline (wait_until).
"""

from __future__ import annotations

import os
import socket
import threading
import time

import pytest

from conftest import (HOST, RawConnection, ReplyError, encode_command, redis_binary,
                      wait_until)

DEADLINE = 30.0


def info(server, section: str = "replication") -> dict[str, str]:
    with server.admin() as conn:
        text = conn.execute("INFO", section).decode()
    fields = {}
    for line in text.splitlines():
        if ":" in line and not line.startswith("#"):
            name, value = line.split(":", 1)
            fields[name] = value
    return fields


def linked(server) -> bool:
    return info(server).get("master_link_status") == "up"


def primary_offset(primary) -> int:
    return int(info(primary)["master_repl_offset"])


def caught_up(primary, replica) -> bool:
    fields = info(replica)
    return (fields.get("master_link_status") == "up"
            and int(fields["slave_repl_offset"]) == primary_offset(primary))


def wait_synced(primary, *replicas) -> None:
    for replica in replicas:
        assert wait_until(lambda: caught_up(primary, replica), timeout=DEADLINE)


def dataset(server, dbs=(0,)) -> dict:
    """Every key of the given databases with its type, value and TTL presence."""
    client = server.client()
    out = {}
    for db in dbs:
        client.execute_command("SELECT", db)
        for key in sorted(client.keys("*")):
            kind = client.type(key)
            if kind == b"string":
                value = client.get(key)
            elif kind == b"list":
                value = client.lrange(key, 0, -1)
            elif kind == b"set":
                value = sorted(client.smembers(key))
            elif kind == b"zset":
                value = client.zrange(key, 0, -1, withscores=True)
            elif kind == b"hash":
                value = sorted(client.hgetall(key).items())
            else:
                value = kind
            out[(db, key)] = (kind, value, client.pttl(key) > 0)
    client.execute_command("SELECT", 0)
    return out


@pytest.fixture
def primary(server_factory):
    return server_factory(("repl-diskless-sync", "no"), binary=redis_binary())


def keywarden_replica(server_factory, primary, *directives):
    return server_factory(("replicaof", f"{primary.host} {primary.port}"), *directives)


def redis_replica(server_factory, primary, *directives):
    return server_factory(("replicaof", f"{primary.host} {primary.port}"), *directives,
                          binary=redis_binary())


def fill_every_type(client, prefix: str = "") -> None:
    client.set(f"{prefix}s", "v")
    client.set(f"{prefix}n", 10)
    client.incr(f"{prefix}n")
    client.rpush(f"{prefix}l", "a", "b", "c")
    client.sadd(f"{prefix}set", "x", "y")
    client.zadd(f"{prefix}z", {"m": 1.5, "n": 2})
    client.hset(f"{prefix}h", mapping={"f": "1", "g": "2"})
    client.set(f"{prefix}ttl", "t", ex=1000)


# ---- full synchronization ----

@pytest.mark.parametrize("diskless_sync", ["no", "yes"])
@pytest.mark.parametrize("diskless_load", ["disabled", "swapdb", "on-empty-db"])
def test_full_sync_then_stream(server_factory, diskless_sync, diskless_load):
    primary = server_factory(("repl-diskless-sync", diskless_sync),
                             ("repl-diskless-sync-delay", 0), binary=redis_binary())
    client = primary.client()
    fill_every_type(client, "before:")
    client.execute_command("SELECT", 3)
    client.set("in3", "three")
    client.execute_command("SELECT", 0)
    client.execute_command("FUNCTION", "LOAD",
                           "#!lua name=lib\nredis.register_function{function_name='f', "
                           "callback=function() return 1 end, flags={'no-writes'}}")
    replica = keywarden_replica(server_factory, primary, ("repl-diskless-load", diskless_load))
    wait_synced(primary, replica)
    fill_every_type(client, "after:")
    client.execute_command("SELECT", 5)
    client.set("in5", "five")
    client.execute_command("SELECT", 0)
    wait_synced(primary, replica)
    assert dataset(replica, (0, 3, 5)) == dataset(primary, (0, 3, 5))
    assert replica.client().execute_command("FCALL_RO", "f", 0) == 1
    if diskless_load == "disabled":
        assert os.path.exists(os.path.join(replica.workdir, "dump.rdb"))
    assert not [f for f in os.listdir(replica.workdir) if f.startswith("temp-")]


def test_multi_exec_and_scripts(server_factory, primary):
    replica = keywarden_replica(server_factory, primary)
    wait_synced(primary, replica)
    client = primary.client()
    pipe = client.pipeline(transaction=True)
    pipe.set("a", 1).incr("a").lpush("q", "x", "y")
    pipe.execute()
    client.eval("redis.call('set', KEYS[1], ARGV[1]); redis.call('expire', KEYS[1], 100)",
                1, "scripted", "value")
    client.eval("redis.call('select', 7); redis.call('set', 'in7', 'seven')", 0)
    client.setex("ex", 500, "v")
    client.delete("q")
    wait_synced(primary, replica)
    assert dataset(replica, (0, 7)) == dataset(primary, (0, 7))


def test_large_value(server_factory, primary):
    replica = keywarden_replica(server_factory, primary)
    wait_synced(primary, replica)
    big = os.urandom(50 * 1024 * 1024) * 2  # 100 MB
    client = primary.client()
    client.set("big", big)
    wait_synced(primary, replica)
    assert replica.client().strlen("big") == len(big)
    assert replica.client().getrange("big", 12345, 12400) == big[12345:12401]


# ---- roles, errors, INFO ----

def test_replica_refuses_writes_and_role(server_factory, primary):
    replica = keywarden_replica(server_factory, primary)
    reference = redis_replica(server_factory, primary)
    wait_synced(primary, replica, reference)
    for server in (replica, reference):
        assert server.admin().execute("SET", "k", "v") == ReplyError(
            b"READONLY You can't write against a read only replica.")
    role = replica.admin().execute("ROLE")
    assert role[:4] == [b"slave", HOST.encode(), primary.port, b"connected"]
    assert role[4] == primary_offset(primary)
    assert reference.admin().execute("ROLE")[:4] == [b"slave", HOST.encode(), primary.port,
                                                      b"connected"]
    for server in (replica, reference):
        conn = server.admin()
        assert conn.execute("REPLICAOF", primary.host, "notaport") == ReplyError(
            b"ERR Invalid master port")
        assert conn.execute("REPLICAOF", primary.host, "70000") == ReplyError(
            b"ERR Invalid master port")
        assert conn.execute("REPLICAOF", primary.host, str(primary.port)) == \
            b"OK Already connected to specified master"
        assert conn.execute("SLAVEOF", primary.host, str(primary.port)) == \
            b"OK Already connected to specified master"
        assert conn.execute("REPLICAOF", "a") == ReplyError(
            b"ERR wrong number of arguments for 'replicaof' command")
        conn.execute("MULTI")
        assert conn.execute("REPLICAOF", primary.host, str(primary.port)) == b"QUEUED"
        assert conn.execute("EXEC") == [b"OK Already connected to specified master"]
    # INFO replication: the same fields in the same order as Redis.
    ours, theirs = info(replica), info(reference)
    assert list(ours) == list(theirs)
    for name in ("role", "master_host", "master_port", "master_link_status",
                 "master_sync_in_progress", "slave_priority", "slave_read_only",
                 "replica_announced", "connected_slaves"):
        assert ours[name] == theirs[name], name


def test_info_while_link_down(server_factory):
    dead = server_factory(binary=redis_binary())
    port = dead.port
    dead.stop()
    replica = server_factory(("replicaof", f"{HOST} {port}"))
    reference = server_factory(("replicaof", f"{HOST} {port}"), binary=redis_binary())
    ours, theirs = info(replica), info(reference)
    assert list(ours) == list(theirs)
    for name in ("master_link_status", "master_last_io_seconds_ago", "slave_read_repl_offset",
                 "slave_repl_offset", "master_sync_in_progress",
                 "master_link_down_since_seconds"):
        assert ours[name] == theirs[name], name
    for server in (replica, reference):
        role = server.admin().execute("ROLE")
        assert role[0] == b"slave" and role[4] == -1
        assert role[3] in (b"connect", b"connecting")


@pytest.mark.parametrize("kind", ["keywarden", "redis"])
def test_serve_stale_data_no(server_factory, kind):
    dead = server_factory(binary=redis_binary())
    port = dead.port
    dead.stop()
    replica = server_factory(("replicaof", f"{HOST} {port}"), ("replica-serve-stale-data", "no"),
                             binary=None if kind == "keywarden" else redis_binary())
    conn = replica.admin()
    assert conn.execute("GET", "k") == ReplyError(
        b"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.")
    assert conn.execute("PING") == ReplyError(
        b"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.")
    assert conn.execute("INFO", "server").startswith(b"# Server")
    conn.execute("CONFIG", "SET", "replica-read-only", "no")
    conn.execute("CONFIG", "SET", "replica-serve-stale-data", "yes")
    assert conn.execute("SET", "k", "v") == b"OK"
    assert conn.execute("GET", "k") == b"v"


def test_replicaof_no_one_then_writes(server_factory, primary):
    replica = keywarden_replica(server_factory, primary)
    wait_synced(primary, replica)
    primary.client().set("k", "v")
    wait_synced(primary, replica)
    before = info(replica)
    conn = replica.admin()
    assert conn.execute("REPLICAOF", "NO", "ONE") == b"OK"
    after = info(replica)
    assert after["role"] == "master"
    assert after["master_replid2"] == before["master_replid"]
    assert int(after["second_repl_offset"]) == int(before["master_repl_offset"]) + 1
    assert conn.execute("SET", "k2", "v2") == b"OK"
    assert conn.execute("GET", "k") == b"v"
    # The promoted server keeps its backlog, so its own writes extend the history.
    offset = int(info(replica)["master_repl_offset"])
    assert offset > int(after["master_repl_offset"])
    assert conn.execute("ROLE")[:2] == [b"master", offset]
    # And back: it offers its own history to the primary, which answers with a full sync.
    assert conn.execute("REPLICAOF", primary.host, str(primary.port)) == b"OK"
    wait_synced(primary, replica)
    assert conn.execute("GET", "k2") is None


def test_config_rewrite_writes_replicaof(server_factory, primary, tmp_path):
    config = tmp_path / "kw.conf"
    config.write_text("")
    replica = server_factory(config_file=str(config))
    conn = replica.admin()
    assert conn.execute("REPLICAOF", primary.host, str(primary.port)) == b"OK"
    wait_synced(primary, replica)
    assert conn.execute("CONFIG", "REWRITE") == b"OK"
    assert f"replicaof {primary.host} {primary.port}" in config.read_text()


# ---- expired keys ----

def test_expired_keys_hidden_not_deleted(server_factory, primary):
    replica = keywarden_replica(server_factory, primary)
    reference = redis_replica(server_factory, primary)
    wait_synced(primary, replica, reference)
    client = primary.client()
    client.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    client.set("live", "v")
    client.set("gone", "v", px=100)
    client.hset("gone_h", "f", "v")
    client.pexpire("gone_h", 100)
    wait_synced(primary, replica, reference)
    time.sleep(0.3)  # let the deadlines pass (the assertions do not depend on how long)
    checks = [("GET", "gone"), ("TTL", "gone"), ("PTTL", "gone"), ("EXISTS", "gone", "live"),
              ("HGET", "gone_h", "f"), ("TYPE", "gone"), ("DBSIZE",), ("KEYS", "*"),
              ("SCAN", "0", "COUNT", "100"), ("GET", "live")]
    for check in checks:
        ours = replica.admin().execute(*check)
        theirs = reference.admin().execute(*check)
        if isinstance(theirs, list) and check[0] in ("KEYS",):
            ours, theirs = sorted(ours), sorted(theirs)
        if check[0] == "SCAN":
            ours, theirs = sorted(ours[1]), sorted(theirs[1])
        assert ours == theirs, check
    # Still there: DBSIZE counts them, and the primary's DEL removes them.
    assert replica.admin().execute("DBSIZE") == 3
    # INCR on the primary of an expired key deletes it there first (a DEL reaches replicas).
    client.get("gone")
    wait_synced(primary, replica, reference)
    assert replica.admin().execute("DBSIZE") == reference.admin().execute("DBSIZE") == 2


# ---- partial resynchronization ----

def partial_ok(primary) -> int:
    return int(info(primary, "stats")["sync_partial_ok"])


def test_partial_resync_after_link_cut(server_factory, primary):
    replica = keywarden_replica(server_factory, primary)
    wait_synced(primary, replica)
    client = primary.client()
    fill_every_type(client)
    wait_synced(primary, replica)
    assert partial_ok(primary) == 0
    client.execute_command("CLIENT", "KILL", "TYPE", "replica")
    client.set("after_cut", "1")
    assert wait_until(lambda: partial_ok(primary) == 1, timeout=DEADLINE)
    wait_synced(primary, replica)
    assert dataset(replica) == dataset(primary)
    # And from the replica's side: CLIENT KILL TYPE master.
    assert replica.admin().execute("CLIENT", "KILL", "TYPE", "master") == 1
    client.set("after_kill", "1")
    assert wait_until(lambda: partial_ok(primary) == 2, timeout=DEADLINE)
    wait_synced(primary, replica)
    assert replica.client().get("after_kill") == b"1"


def test_partial_resync_after_restart(server_factory, primary):
    replica = keywarden_replica(server_factory, primary)
    wait_synced(primary, replica)
    client = primary.client()
    client.execute_command("SELECT", 2)
    fill_every_type(client)
    wait_synced(primary, replica)
    assert replica.admin().execute("SAVE") == b"OK"
    replica.stop()
    client.set("while_down", "1")
    replica.start()
    assert wait_until(lambda: partial_ok(primary) == 1, timeout=DEADLINE)
    wait_synced(primary, replica)
    assert dataset(replica, (0, 2)) == dataset(primary, (0, 2))


def test_full_sync_rewrites_the_replicas_aof(server_factory, primary):
    # A replica with an AOF holding its own old data: after the full sync the AOF is rewritten
    # from the new dataset, so a restart from the AOF alone gives the primary's data.
    replica = server_factory(("appendonly", "yes"))
    replica.client().set("old", "data")
    client = primary.client()
    fill_every_type(client)
    assert replica.admin().execute("REPLICAOF", primary.host, str(primary.port)) == b"OK"
    wait_synced(primary, replica)
    assert wait_until(lambda: replica.client().info("persistence")["aof_rewrite_in_progress"] == 0
                      and replica.client().info("persistence")["aof_rewrite_scheduled"] == 0,
                      timeout=DEADLINE)
    client.set("after", "sync")
    wait_synced(primary, replica)
    expected = dataset(primary)
    assert b"old" not in expected and dataset(replica) == expected
    # Restarted (as a primary: REPLICAOF came at run time), it loads the AOF alone.
    replica.stop()
    replica.start()
    assert dataset(replica) == expected


def test_replicaof_ends_blocked_clients_as_redis(server_factory, primary):
    def attempt(binary):
        server = server_factory(binary=binary)
        blocked = server.raw()
        blocked.send_command("BLPOP", "list", "0")
        assert wait_until(lambda: server.client().info("clients")["blocked_clients"] == 1,
                          timeout=DEADLINE)
        assert server.admin().execute("REPLICAOF", primary.host, str(primary.port)) == b"OK"
        return blocked.read_reply()
    reply = attempt(None)
    assert reply == attempt(redis_binary())
    assert reply == ReplyError(b"UNBLOCKED force unblock from blocking operation, instance "
                               b"state changed (master -> replica?)")


# ---- chained replication ----

def test_chained_replication(server_factory, primary):
    replica = keywarden_replica(server_factory, primary)
    wait_synced(primary, replica)
    sub = server_factory(("replicaof", f"{replica.host} {replica.port}"), binary=redis_binary())
    assert wait_until(lambda: info(sub).get("master_link_status") == "up", timeout=DEADLINE)
    primary.client().set("chained", "1")
    assert wait_until(lambda: sub.client().get("chained") == b"1", timeout=DEADLINE)
    # The middle replica hands on its primary's stream byte for byte: the offsets agree.
    assert wait_until(lambda: info(sub)["master_repl_offset"] == info(primary)["master_repl_offset"],
                      timeout=DEADLINE)
    roles = replica.admin().execute("ROLE")
    assert roles[0] == b"slave" and info(replica)["connected_slaves"] == "1"


# ---- a hostile primary ----

class FakePrimary:
    """A listening socket that answers the handshake and then sends `payload`."""

    def __init__(self, payload: bytes):
        self.payload = payload
        self.sock = socket.socket()
        self.sock.bind((HOST, 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.stopping = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        self.sock.settimeout(0.5)
        while not self.stopping:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.settimeout(5)
            try:
                data = b""
                acked = False
                while b"PSYNC" not in data or not data.endswith(b"\r\n"):
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                    if data.startswith(b"PING\r\n") and data.count(b"\r\n") == 1:
                        conn.sendall(b"+PONG\r\n")
                    if b"capa" in data and not acked:
                        conn.sendall(b"+OK\r\n+OK\r\n")
                        acked = True
                conn.sendall(self.payload)
                time.sleep(0.2)
            except OSError:
                pass
            finally:
                conn.close()

    def close(self):
        self.stopping = True
        self.thread.join(5)
        self.sock.close()


GARBAGE = [
    b"+FULLRESYNC nonsense\r\n",
    b"+FULLRESYNC " + b"a" * 40 + b" -5\r\n",
    b"+FULLRESYNC " + b"a" * 40 + b" 0\r\n$-20\r\n",
    b"+FULLRESYNC " + b"a" * 40 + b" 0\r\n$abc\r\n",
    b"+FULLRESYNC " + b"a" * 40 + b" 0\r\n$5\r\nhello",
    b"+FULLRESYNC " + b"a" * 40 + b" 0\r\nXYZ\r\n",
    b"+FULLRESYNC " + b"a" * 40 + b" 0\r\n$EOF:" + b"b" * 40 + b"\r\nREDIS0010junk" + b"b" * 40,
    b"+CONTINUE\r\n*1\r\n$4\r\nPING\r\n",
    b"-ERR go away\r\n",
    b"\xff" * 100000,
]


@pytest.mark.parametrize("payload", GARBAGE, ids=range(len(GARBAGE)))
def test_hostile_primary(server_factory, payload):
    fake = FakePrimary(payload)
    try:
        replica = server_factory(("replicaof", f"{HOST} {fake.port}"))
        replica.admin().execute("SET", "x", "1")  # read-only: refused, the server lives
        assert wait_until(lambda: fake.connections >= 2, timeout=DEADLINE)
        assert replica.alive()
        conn = replica.admin()
        assert conn.execute("PING") == b"PONG"
        assert info(replica)["master_link_status"] == "down"
    finally:
        fake.close()


def test_hostile_stream_after_valid_sync(server_factory):
    """A primary whose stream turns to garbage after a good full sync: the link drops, the
    data stays served."""
    image_source = server_factory(binary=redis_binary())
    image_source.client().set("k", "v")
    image_source.admin().execute("SAVE")
    with open(os.path.join(image_source.workdir, "dump.rdb"), "rb") as f:
        image = f.read()
    payload = (b"+FULLRESYNC " + b"c" * 40 + b" 100\r\n$" + str(len(image)).encode() + b"\r\n"
               + image + encode_command("SET", "k2", "v2") + b"*2\r\n$3\r\nGET\r\n$-7\r\n")
    fake = FakePrimary(payload)
    try:
        replica = server_factory(("replicaof", f"{HOST} {fake.port}"))
        assert wait_until(lambda: replica.client().get("k2") == b"v2", timeout=DEADLINE)
        assert wait_until(lambda: fake.connections >= 2, timeout=DEADLINE)
        assert replica.client().get("k") == b"v", replica.log()
        assert replica.alive()
    finally:
        fake.close()
