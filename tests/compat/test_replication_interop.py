"""Replication between keywarden and stock Redis, every way round (issue 17's interop matrix).

primary kind x replica kind x (disk | diskless full sync): a mixed dataset (every type, in its
small and large encodings, TTLs, several databases) goes over by full sync; then a live stream
(plain writes, relative TTLs, expiry reaching the replica as DEL, MULTI/EXEC, EVAL, FLUSHDB,
SELECT); after each phase the replica must hold exactly what the primary holds. Mixed chains
(redis -> keywarden -> redis, keywarden -> redis -> keywarden) carry the same data through a
middle node of the other kind.

The redis x redis rows validate the test itself and always run; rows with a keywarden in them
are skipped, with the reason, only while the keywarden under test lacks the replication
commands. The terminal summary prints the matrix as one line ("replication interop: ...").
"""

from __future__ import annotations

import time

import pytest

from conftest import summary_set
from replication_cluster import (Cluster, DataNode, differences, replication_unsupported,
                                 wait_link_up, wait_offsets_equal, wait_until)

DATABASES = (0, 1, 2)


@pytest.fixture
def cluster():
    c = Cluster()
    yield c
    c.close()


# --------------------------------------------------------------------------------------------
# Data and comparison
# --------------------------------------------------------------------------------------------

def load_dataset(node: DataNode) -> None:
    """Every type in small (listpack/intset) and large (hashtable/skiplist/quicklist) form,
    keys with and without TTLs, spread over three databases."""
    c0 = node.client(db=0)
    p = c0.pipeline(transaction=False)
    p.set("str:int", 12345)
    p.set("str:raw", "hello world")
    p.set("str:big", "x" * 20000)
    p.set("str:bin", bytes(range(256)))
    p.hset("hash:small", mapping={f"f{i}": f"v{i}" for i in range(10)})
    p.hset("hash:large", mapping={f"f{i}": f"value-{i}" for i in range(600)})
    p.hset("hash:bigvalue", mapping={"a": "1", "b": "y" * 200})
    p.rpush("list:small", *[f"e{i}" for i in range(10)])
    p.rpush("list:large", *[f"element-{i}" for i in range(3000)])
    p.sadd("set:int", *range(50))
    p.sadd("set:small", *[f"m{i}" for i in range(10)])
    p.sadd("set:large", *[f"member-{i}" for i in range(1000)])
    p.zadd("zset:small", {f"z{i}": i * 1.5 for i in range(10)})
    p.zadd("zset:large", {f"zmember-{i}": (i * 7919) % 1000 - 0.25 for i in range(800)})
    p.set("ttl:ex", "v", ex=3600)
    p.hset("ttl:hash", "f", "v")
    p.expire("ttl:hash", 7200)
    p.rpush("ttl:list", "a", "b")
    p.pexpireat("ttl:list", int(time.time() * 1000) + 5_000_000)
    p.execute()
    for db in (1, 2):
        c = node.client(db=db)
        p = c.pipeline(transaction=False)
        for i in range(50):
            p.set(f"db{db}:k{i}", f"value {i}")
        p.zadd(f"db{db}:z", {"a": 1, "b": 2})
        p.set(f"db{db}:ttl", "v", px=9_000_000)
        p.execute()


def wait_same_data(primary: DataNode, replica: DataNode, chain=()) -> None:
    """Waits for the replica (through `chain`, its upstream replicas) to catch up, then the
    data must match."""
    wait_same_data_offsets(primary, replica, chain)
    diffs = differences(primary, replica, DATABASES)
    assert not diffs, "\n".join(diffs[:30])


def live_stream(primary: DataNode, replica: DataNode, chain=()) -> None:
    """Writes of every propagation path while the replica is connected."""
    c = primary.client()
    c.incrby("str:int", 10)
    c.append("str:raw", "!")
    c.setex("stream:setex", 500, "relative ttl")  # must reach the replica as an absolute time
    c.set("stream:px", "v", px=400_000)
    c.hset("hash:small", "new", "field")
    c.hdel("hash:large", "f0", "f1")
    c.lpush("list:large", "head")
    c.rpop("list:small")
    c.srem("set:large", "member-3")
    c.sadd("set:int", 1000000)
    c.zincrby("zset:small", 2.5, "z1")
    c.zrem("zset:large", "zmember-5")
    c.expire("str:raw", 1000)
    c.persist("ttl:ex")
    c.delete("str:bin")
    c.rename("list:small", "list:renamed")
    with c.pipeline(transaction=True) as tx:
        tx.set("multi:a", 1)
        tx.incr("multi:a")
        tx.hset("multi:h", "f", "v")
        tx.execute()
    c.eval("redis.call('set', KEYS[1], ARGV[1]); redis.call('lpush', KEYS[2], ARGV[1]);"
           "return redis.call('incr', KEYS[3])", 3, "eval:s", "eval:l", "eval:n", "scripted")
    # A script's random choice must replicate as its effects, not be re-run on the replica.
    c.eval("redis.call('set', KEYS[1], redis.call('srandmember', KEYS[2]))", 2,
           "eval:random", "set:large")
    c1 = primary.client(db=1)
    c1.set("db1:stream", "written in db1")
    c1.delete("db1:k0")
    primary.client(db=2).flushdb()

    # Expiry reaches the replica as a DEL and the replica never expires a key by itself:
    # with active expiry off on the primary, a key past its TTL is hidden on the replica but
    # still counted there, until the primary's lazy expiry (a read) sends the DEL.
    primary.admin.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        c.set("expire:lazy", "v", px=200)
        wait_same_data_offsets(primary, replica, chain)
        replica_keys = replica.client().dbsize()
        wait_until(lambda: replica.client().get("expire:lazy") is None,
                   "expire:lazy hidden on the replica once past its TTL")
        time.sleep(0.3)
        assert replica.client().dbsize() == replica_keys, \
            "the replica deleted an expired key by itself"
        assert c.get("expire:lazy") is None  # the primary expires it on access: DEL goes out
        wait_until(lambda: replica.client().dbsize() == replica_keys - 1,
                   "the primary's DEL of expire:lazy applied on the replica")
    finally:
        primary.admin.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    # Active expiry on the primary sends its DEL too, with nobody touching the key (DBSIZE
    # reads no key, so it cannot expire one lazily).
    keys_before = c.dbsize()
    c.set("expire:active", "v", px=100)
    wait_until(lambda: c.dbsize() == keys_before, "active expiry of expire:active on the primary")
    wait_until(lambda: replica.client().dbsize() == keys_before,
               "active expiry's DEL applied on the replica")


def wait_same_data_offsets(primary: DataNode, replica: DataNode, chain=()) -> None:
    upstream = primary
    for node in (*chain, replica):
        wait_offsets_equal(upstream, [node])
        upstream = node


def check_replica_state(replica: DataNode, upstream: DataNode) -> None:
    role = replica.role()
    assert role[0] == "slave" and role[1] == upstream.host and int(role[2]) == upstream.port, role
    assert role[3] == "connected", role
    info = replica.info()
    assert info["master_link_status"] == "up"
    assert info["slave_read_only"] == "1"
    err = None
    try:
        replica.client().set("write-on-replica", "x")
    except Exception as e:
        err = str(e)
    assert err == "You can't write against a read only replica.", err
    prim = upstream.info()
    assert int(prim["connected_slaves"]) >= 1
    assert any(f"port={replica.port}" in prim.get(f"slave{i}", "")
               and "state=online" in prim.get(f"slave{i}", "")
               for i in range(int(prim["connected_slaves"]))), prim


# --------------------------------------------------------------------------------------------
# The matrix
# --------------------------------------------------------------------------------------------

MATRIX = [(p, r, d) for p in ("redis", "keywarden") for r in ("redis", "keywarden")
          for d in ("disk", "diskless")]


@pytest.mark.parametrize("primary_kind,replica_kind,sync", MATRIX,
                         ids=[f"{p}-to-{r}-{d}" for p, r, d in MATRIX])
def test_interop_matrix(cluster, primary_kind, replica_kind, sync):
    row = f"{primary_kind}>{replica_kind}/{sync}"
    summary_set("replication interop", row, "FAIL")
    reason = (replication_unsupported(primary_kind, ["primary"]) or
              replication_unsupported(replica_kind, ["replica"]))
    if reason:
        summary_set("replication interop", row, "skip")
        pytest.skip(reason)
    primary = cluster.node(primary_kind, ("repl-diskless-sync", "yes" if sync == "diskless"
                                          else "no"))
    load_dataset(primary)
    replica = cluster.node(replica_kind, replica_of=primary)
    wait_link_up(replica, primary)
    wait_same_data(primary, replica)
    check_replica_state(replica, primary)
    full_syncs = int(primary.info("stats")["sync_full"])
    assert full_syncs == 1

    live_stream(primary, replica)
    wait_same_data(primary, replica)
    # WAIT works across kinds (REPLCONF GETACK from the primary, REPLCONF ACK back).
    assert primary.client().execute_command("WAIT", 1, 30000) == 1
    # The live stream needed no second full sync.
    assert int(primary.info("stats")["sync_full"]) == full_syncs
    summary_set("replication interop", row, "ok")


CHAINS = [("redis", "keywarden", "redis"), ("keywarden", "redis", "keywarden")]


@pytest.mark.parametrize("kinds", CHAINS, ids=["-".join(k) for k in CHAINS])
def test_mixed_chain(cluster, kinds):
    row = ">".join(kinds)
    summary_set("replication chains", row, "FAIL")
    reason = (replication_unsupported(kinds[0], ["primary"]) or
              replication_unsupported(kinds[1]) or replication_unsupported(kinds[2], ["replica"]))
    if reason:
        summary_set("replication chains", row, "skip")
        pytest.skip(reason)
    head = cluster.node(kinds[0])
    load_dataset(head)
    middle = cluster.node(kinds[1], replica_of=head)
    tail = cluster.node(kinds[2], replica_of=middle)
    wait_link_up(middle, head)
    wait_link_up(tail, middle)
    wait_same_data(head, tail, chain=(middle,))
    check_replica_state(tail, middle)
    live_stream(head, tail, chain=(middle,))
    wait_same_data(head, tail, chain=(middle,))
    assert differences(head, middle, DATABASES) == []
    assert head.client().execute_command("WAIT", 1, 30000) == 1
    summary_set("replication chains", row, "ok")


def test_redis_rows_always_run():
    """The harness itself works against stock Redis (so a skip of the keywarden rows can never
    hide a broken test)."""
    assert replication_unsupported("redis") is None
