"""FAILOVER: a coordinated hand-over from a primary to one of its replicas (Redis 6.2+).

Every pairing of keywarden and a stock redis-server 7.0 as the primary and the target replica:
the primary holds writes back, waits for the replica to catch up, turns into its replica and
sends PSYNC … FAILOVER, which promotes the target. No write is lost and the two swap roles.
Errors are compared byte for byte with redis-server's, and a timeout rolls back.
"""

from __future__ import annotations

import os
import signal

import pytest

from conftest import ReplyError, redis_binary, wait_until

FAST = (("repl-diskless-sync-delay", "0"),)
KINDS = ["keywarden", "redis"]


def binary_of(kind):
    return None if kind == "keywarden" else redis_binary()


def info(server, section="replication") -> dict:
    return server.client().info(section)


def linked(primary, replica):
    # Synced on the replica's side, and online on the primary's: after a diskless sync Redis
    # marks the replica online only at its first REPLCONF ACK, and FAILOVER TO refuses a
    # replica that is not online yet.
    def synced():
        ri, pi = info(replica), info(primary)
        online = any(isinstance(v, dict) and v.get("port") == replica.port and
                     v.get("state") == "online" for k, v in pi.items() if k.startswith("slave"))
        return (online and ri.get("master_link_status") == "up" and
                ri.get("master_repl_offset") == pi.get("master_repl_offset"))
    assert wait_until(synced, 30), (info(primary), info(replica))


def pair(server_factory, primary_kind, replica_kind):
    primary = server_factory(*FAST, binary=binary_of(primary_kind))
    replica = server_factory(*FAST, ("replicaof", ("127.0.0.1", primary.port)),
                             binary=binary_of(replica_kind))
    linked(primary, replica)
    return primary, replica


@pytest.mark.parametrize("primary_kind", KINDS)
@pytest.mark.parametrize("replica_kind", KINDS)
def test_failover_swaps_roles_without_losing_writes(server_factory, primary_kind, replica_kind):
    primary, replica = pair(server_factory, primary_kind, replica_kind)
    p = primary.client()
    for i in range(200):
        p.set(f"k{i}", i)
    p.expire("k0", 1000)
    assert p.execute_command("FAILOVER") == b"OK"
    assert wait_until(lambda: info(replica)["role"] == "master" and
                      info(primary)["role"] == "slave" and
                      info(primary)["master_link_status"] == "up", 30), (
        info(primary), info(replica), primary.log()[-2000:], replica.log()[-2000:])
    assert wait_until(lambda: info(primary)["master_failover_state"] == "no-failover", 30)
    r = replica.client()
    assert r.dbsize() == 200 and r.get("k199") == b"199" and r.ttl("k0") > 900
    # The old primary follows the new one and refuses writes; the new one takes them.
    with pytest.raises(Exception, match="read only replica"):
        p.set("after", "x")
    r.set("after", "y")
    assert wait_until(lambda: p.get("after") == b"y", 30)
    # It continued the history: a partial resynchronization, no second full sync.
    assert info(replica, "stats")["sync_partial_ok"] >= 1


@pytest.mark.parametrize("kind", KINDS)
def test_failover_to_a_named_replica(server_factory, kind):
    primary = server_factory(*FAST, binary=binary_of(kind))
    first = server_factory(*FAST, ("replicaof", ("127.0.0.1", primary.port)),
                           binary=binary_of(kind))
    second = server_factory(*FAST, ("replicaof", ("127.0.0.1", primary.port)),
                            binary=binary_of(kind))
    linked(primary, first)
    linked(primary, second)
    primary.client().set("k", "v")
    assert primary.client().execute_command(
        "FAILOVER", "TO", "127.0.0.1", second.port, "TIMEOUT", 10000) == b"OK"
    assert wait_until(lambda: info(second)["role"] == "master" and
                      info(primary).get("master_port") == second.port, 30), (
        info(primary), info(second))
    assert info(first)["role"] == "slave"


@pytest.mark.parametrize("kind", KINDS)
def test_failover_times_out_and_rolls_back(server_factory, kind):
    primary, replica = pair(server_factory, kind, kind)
    os.kill(replica.pid, signal.SIGSTOP)
    try:
        p = primary.client()
        p.set("k", "v")  # the stopped replica cannot acknowledge this
        assert p.execute_command("FAILOVER", "TIMEOUT", 500) == b"OK"
        assert info(primary)["master_failover_state"] == "waiting-for-sync"
        assert wait_until(lambda: info(primary)["master_failover_state"] == "no-failover", 15)
        assert info(primary)["role"] == "master"
        assert p.set("k2", "v2")  # writes flow again
        assert "Replica never caught up before timeout" in primary.log()
    finally:
        os.kill(replica.pid, signal.SIGCONT)


@pytest.mark.parametrize("kind", KINDS)
def test_failover_abort_lets_writes_go(server_factory, kind):
    primary, replica = pair(server_factory, kind, kind)
    os.kill(replica.pid, signal.SIGSTOP)
    try:
        p = primary.client()
        p.set("k", "v")
        assert p.execute_command("FAILOVER") == b"OK"
        admin = primary.admin()
        assert admin.execute("FAILOVER") == ReplyError(b"ERR FAILOVER already in progress.")
        assert admin.execute("REPLICAOF", "127.0.0.1", "1") == ReplyError(
            b"ERR REPLICAOF not allowed while failing over.")
        assert admin.execute("FAILOVER", "ABORT") == b"OK"
        assert info(primary)["master_failover_state"] == "no-failover"
        assert p.set("k2", "v2")
    finally:
        os.kill(replica.pid, signal.SIGCONT)


ERROR_CASES = [
    ("FAILOVER", "ABORT"),
    ("FAILOVER",),
    ("FAILOVER", "TIMEOUT", "0"),
    ("FAILOVER", "TIMEOUT", "x"),
    ("FAILOVER", "TIMEOUT"),
    ("FAILOVER", "FORCE", "FORCE"),
    ("FAILOVER", "TO", "127.0.0.1"),
    ("FAILOVER", "TO", "127.0.0.1", "x"),
    ("FAILOVER", "bogus"),
    ("PSYNC", "?", "-1", "FAILOVER"),
]


def test_errors_without_replicas_match_redis(keywarden, reference_redis):
    def attempt(server):
        conn = server.admin()
        return [conn.execute(*case) for case in ERROR_CASES]
    assert attempt(keywarden) == attempt(reference_redis)


def test_errors_with_a_replica_match_redis(server_factory):
    def attempt(kind):
        primary, replica = pair(server_factory, kind, kind)
        conn, on_replica = primary.admin(), replica.admin()
        return [
            conn.execute("FAILOVER", "TIMEOUT", "100", "FORCE"),
            conn.execute("FAILOVER", "TO", "127.0.0.1", "1"),
            conn.execute("FAILOVER", "TO", "127.0.0.1", "1", "FORCE"),
            on_replica.execute("FAILOVER"),
            on_replica.execute("PSYNC", "0" * 40, "1", "FAILOVER"),
        ]
    assert attempt("keywarden") == attempt("redis")
