"""Streams over replication between keywarden and stock Redis 7.0, both ways.

A primary holding streams with consumer groups (several nodes, deletions, pending entries)
full-syncs to a replica of the other kind; then a live stream of every stream write
(generated IDs, approximate trims, group reads with and without NOACK, claims, autoclaims,
acks, XSETID, group and consumer management) must leave the replica with the same streams:
XINFO STREAM FULL equal on both, up to Redis's radix-tree-nodes and the consumers' seen-time,
which each node sets from its own clock when a propagated XCLAIM creates a consumer.
"""

from __future__ import annotations

import random

import pytest

from replication_cluster import (Cluster, replication_unsupported, wait_link_up,
                                 wait_offsets_equal)

KEYS = ["s:small", "s:big", "s:empty", "s:groups"]


@pytest.fixture
def cluster():
    c = Cluster()
    yield c
    c.close()


def load(c, rng: random.Random) -> None:
    c.execute_command("XADD", "s:small", "1-1", "a", "1")
    for i in range(1, 400):
        c.execute_command("XADD", "s:big", f"{i}-0", "f", str(rng.randrange(10**6)),
                          *(["g", "x" * rng.randrange(100)] if i % 5 == 0 else []))
    for i in range(1, 400, 9):
        c.execute_command("XDEL", "s:big", f"{i}-0")
    c.execute_command("XGROUP", "CREATE", "s:empty", "g", "$", "MKSTREAM")
    for i in range(1, 60):
        c.execute_command("XADD", "s:groups", f"{i}-1", "n", str(i))
    c.execute_command("XGROUP", "CREATE", "s:groups", "g1", "0")
    c.execute_command("XGROUP", "CREATE", "s:groups", "g2", "$")
    c.execute_command("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "10", "STREAMS",
                      "s:groups", ">")
    c.execute_command("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "5", "STREAMS",
                      "s:groups", ">")
    c.execute_command("XACK", "s:groups", "g1", "2-1", "3-1")


def live(c) -> None:
    c.execute_command("XADD", "s:small", "*", "b", "2")
    c.execute_command("XADD", "s:small", "MAXLEN", "~", "1", "*", "c", "3")
    c.execute_command("XADD", "s:big", "MAXLEN", "~", "250", "*", "f", "1")
    c.execute_command("XTRIM", "s:big", "MINID", "~", "200")
    c.execute_command("XTRIM", "s:big", "MAXLEN", "=", "180")
    c.execute_command("XREADGROUP", "GROUP", "g1", "carol", "COUNT", "3", "STREAMS",
                      "s:groups", ">")
    c.execute_command("XREADGROUP", "GROUP", "g1", "dave", "NOACK", "COUNT", "3", "STREAMS",
                      "s:groups", ">")
    # (A consumer reading its own history is not propagated by Redis 7.0 — its delivery
    # counts diverge between primary and replica even Redis to Redis — so it is left out.)
    c.execute_command("XCLAIM", "s:groups", "g1", "erin", "0", "4-1", "5-1")
    c.execute_command("XCLAIM", "s:groups", "g1", "erin", "0", "6-1", "JUSTID", "LASTID", "40-1")
    c.execute_command("XDEL", "s:groups", "7-1")
    c.execute_command("XAUTOCLAIM", "s:groups", "g1", "frank", "0", "0", "COUNT", "4")
    c.execute_command("XACK", "s:groups", "g1", "8-1")
    c.execute_command("XGROUP", "CREATECONSUMER", "s:groups", "g2", "idle")
    c.execute_command("XGROUP", "DELCONSUMER", "s:groups", "g1", "bob")
    c.execute_command("XGROUP", "SETID", "s:groups", "g2", "10-1", "ENTRIESREAD", "10")
    c.execute_command("XSETID", "s:small", "99999999999999-0")
    c.execute_command("XGROUP", "CREATE", "s:new", "g", "$", "MKSTREAM")
    c.execute_command("XGROUP", "DESTROY", "s:new", "g")


def view(node, key):
    reply = node.client(decode_responses=False).execute_command(
        "XINFO", "STREAM", key, "FULL", "COUNT", "0")

    def walk(value):
        if not isinstance(value, list):
            return value
        out = []
        for i, item in enumerate(value):
            prev = value[i - 1] if i > 0 else None
            out.append("M" if prev in (b"radix-tree-nodes", b"seen-time") else walk(item))
        return out
    return walk(reply)


def assert_same(primary, replica):
    wait_offsets_equal(primary, [replica])
    for key in KEYS + ["s:new"]:
        p = primary.client().exists(key)
        assert p == replica.client().exists(key), key
        if p:
            assert view(primary, key) == view(replica, key), key


@pytest.mark.parametrize("primary_kind,replica_kind",
                         # redis-to-redis validates the test itself.
                         [("keywarden", "redis"), ("redis", "keywarden"), ("redis", "redis"),
                          ("keywarden", "keywarden")])
def test_streams_replicate(cluster, primary_kind, replica_kind):
    reason = (replication_unsupported(primary_kind, ["primary"]) or
              replication_unsupported(replica_kind, ["replica"]))
    if reason:
        pytest.skip(reason)
    primary = cluster.node(primary_kind)
    load(primary.client(), random.Random(4))
    replica = cluster.node(replica_kind, replica_of=primary)
    wait_link_up(replica, primary)
    assert_same(primary, replica)
    live(primary.client())
    assert_same(primary, replica)
