"""Replication under faults (issue 17): kills, pauses, cut links, overruns, huge values, restarts.

Each scenario runs with a primary and a replica of each pair of kinds (keywarden or redis; the
redis-to-redis rows always run and validate the test). Links are cut through a Python TCP proxy (TcpProxy) that
the replica is pointed at, so that a cut can be held down while the primary takes writes.
Every test ends with the replica holding exactly the primary's data; whether a reconnection
was a partial or a full resync is read from the primary's INFO stats (sync_partial_ok,
sync_full), as Redis reports them.
"""

from __future__ import annotations

import os

import pytest

from replication_cluster import (KINDS, Cluster, differences, replication_unsupported,
                                 wait_link_up, wait_offsets_equal, wait_until)


@pytest.fixture
def cluster():
    c = Cluster()
    yield c
    c.close()


PAIRS = [(p, r) for p in KINDS for r in KINDS]


@pytest.fixture(params=PAIRS, ids=[f"{p}-to-{r}" for p, r in PAIRS])
def kinds(request):
    """(primary kind, replica kind): both same-kind pairs and both mixed ones."""
    primary_kind, replica_kind = request.param
    reason = (replication_unsupported(primary_kind, ["primary"]) or
              replication_unsupported(replica_kind, ["replica"]))
    if reason:
        pytest.skip(reason)
    return request.param


def stats(node) -> tuple[int, int]:
    """(full syncs, partial resyncs accepted) the primary has served."""
    info = node.info("stats")
    return int(info["sync_full"]), int(info["sync_partial_ok"])


def fill(node, count: int, prefix: str = "key", size: int = 100, random: bool = False) -> None:
    """`count` strings of about `size` bytes; `random` ones do not compress in an RDB."""
    c = node.client()
    p = c.pipeline(transaction=False)
    for i in range(count):
        p.set(f"{prefix}:{i}", f"{i}:" + (os.urandom(size // 2).hex() if random else "v" * size))
        if i % 1000 == 999:
            p.execute()
    p.execute()


def assert_same(primary, replica) -> None:
    wait_offsets_equal(primary, [replica])
    diffs = differences(primary, replica)
    assert not diffs, "\n".join(diffs[:20])


@pytest.mark.parametrize("phase", ["transfer", "load"])
def test_replica_killed_during_full_sync(cluster, kinds, phase):
    """kill -9 of the replica while the RDB is being produced/sent (rdb-key-save-delay on the
    primary) or loaded (key-load-delay on the replica); the restarted replica syncs fully and
    the primary is unharmed."""
    primary_directives = [("rdb-key-save-delay", 500)] if phase == "transfer" else []
    replica_directives = [("key-load-delay", 500)] if phase == "load" else []
    primary = cluster.node(kinds[0], *primary_directives)
    # ~6 MB of RDB: a loading server answers clients only between chunks of its input (Redis:
    # every loading-process-events-interval-bytes, 2 MB), so the test can see it loading.
    fill(primary, 3000, size=2000, random=True)
    replica = cluster.node(kinds[1], *replica_directives, replica_of=primary)
    if phase == "transfer":  # the primary is producing the RDB for this replica
        wait_until(lambda: replica.info().get("master_sync_in_progress") == "1" and
                   "state=wait_bgsave" in primary.info().get("slave0", ""),
                   "the primary producing the replica's RDB")
    else:  # the replica has the RDB and is loading it
        wait_until(lambda: replica.info("persistence").get("loading") == "1",
                   "the replica loading the RDB")
    replica.kill()
    assert primary.client().ping()
    if phase == "transfer":
        primary.config_set("rdb-key-save-delay", 0)
    # Once the primary notices the replica is gone it must be able to serve another one.
    wait_until(lambda: int(primary.info()["connected_slaves"]) == 0, "the replica dropped")
    replica.directives = []
    replica.start()  # its config file has no replicaof: point it at the primary again
    if phase == "load":
        replica.config_set("key-load-delay", 0)
    # A replica killed after its RDB reached the disk loads that file at start, and answers
    # REPLICAOF with -LOADING meanwhile (Redis as keywarden).
    wait_until(lambda: replica.info("persistence").get("loading") == "0",
               "the restarted replica done loading its own RDB")
    replica.replicaof(primary)
    wait_link_up(replica, primary)
    fill(primary, 100, prefix="after")
    assert_same(primary, replica)


def test_primary_killed_mid_stream(cluster, kinds):
    """kill -9 of the primary while it streams writes: the replica reports the link down,
    keeps serving (stale) reads, and resynchronises when the primary is back."""
    primary = cluster.node(kinds[0])
    replica = cluster.node(kinds[1], replica_of=primary)
    wait_link_up(replica, primary)
    fill(primary, 1000)
    wait_offsets_equal(primary, [replica])
    # The restarted primary comes back with this data. (SAVE is refused while the child that
    # produced the replica's RDB is still being reaped.)
    wait_until(lambda: primary.client().save(), "SAVE on the primary")
    c = primary.client()
    for i in range(2000):
        c.set(f"stream:{i}", i)
    primary.kill()
    wait_until(lambda: replica.info()["master_link_status"] == "down", "link down on replica")
    r = replica.client()
    assert r.get("key:999") == "999:" + "v" * 100
    assert replica.role()[0] == "slave"
    primary.start()
    wait_link_up(replica, primary)
    c = primary.client()
    c.set("after-restart", 1)
    assert_same(primary, replica)
    assert r.get("after-restart") == "1"


def test_link_cut_partial_resync(cluster, kinds):
    """The link cut and held down while the primary takes writes that fit in its backlog:
    the replica comes back with a partial resync."""
    primary = cluster.node(kinds[0])
    proxy = cluster.proxy(primary)
    replica = cluster.node(kinds[1], replica_of=proxy)
    wait_link_up(replica, proxy)
    fill(primary, 1000)
    wait_offsets_equal(primary, [replica])
    full, partial = stats(primary)
    proxy.cut()
    wait_until(lambda: replica.info()["master_link_status"] == "down", "link down on replica")
    fill(primary, 500, prefix="during-cut")
    proxy.restore()
    wait_link_up(replica, proxy)
    assert_same(primary, replica)
    assert stats(primary) == (full, partial + 1)

    # The same with the primary dropping its replica (CLIENT KILL TYPE replica).
    full, partial = stats(primary)
    assert primary.client().execute_command("CLIENT", "KILL", "TYPE", "replica") >= 1
    fill(primary, 100, prefix="after-kill")
    wait_until(lambda: stats(primary)[1] == partial + 1, "a second partial resync")
    wait_link_up(replica, proxy)
    assert_same(primary, replica)
    assert stats(primary)[0] == full


def test_backlog_overrun_full_resync(cluster, kinds):
    """More written during a cut than the backlog holds: the replica must sync fully."""
    primary = cluster.node(kinds[0], ("repl-backlog-size", "16kb"))
    proxy = cluster.proxy(primary)
    replica = cluster.node(kinds[1], replica_of=proxy)
    wait_link_up(replica, proxy)
    fill(primary, 100)
    wait_offsets_equal(primary, [replica])
    full, partial = stats(primary)
    proxy.cut()
    wait_until(lambda: replica.info()["master_link_status"] == "down", "link down on replica")
    fill(primary, 2000, prefix="overrun")  # ~250 KB of stream, far over 16 KB
    proxy.restore()
    wait_link_up(replica, proxy)
    assert_same(primary, replica)
    assert stats(primary) == (full + 1, partial)


def test_slow_replica_output_buffer_limit(cluster, kinds):
    """A paused replica's output buffer passes client-output-buffer-limit replica: the primary
    drops it; once resumed it resyncs and catches up."""
    primary = cluster.node(kinds[0], ("client-output-buffer-limit", "replica 256kb 0 0"))
    replica = cluster.node(kinds[1], replica_of=primary)
    wait_link_up(replica, primary)
    wait_until(lambda: int(primary.info()["connected_slaves"]) == 1, "replica registered")
    replica.pause()
    try:
        c = primary.client()
        chunk = "x" * 65536
        # Loopback socket buffers can swallow several MB before the output buffer grows.
        for i in range(400):
            c.set(f"big:{i % 50}", chunk)
            if i % 50 == 49 and int(primary.info()["connected_slaves"]) == 0:
                break
        wait_until(lambda: int(primary.info()["connected_slaves"]) == 0,
                   "the primary dropping the slow replica")
    finally:
        replica.resume()
    wait_link_up(replica, primary)
    assert_same(primary, replica)


def test_100mb_value_in_stream(cluster, kinds):
    """A 100 MB string goes through the live stream (not the RDB) intact."""
    primary = cluster.node(kinds[0])
    replica = cluster.node(kinds[1], replica_of=primary)
    wait_link_up(replica, primary)
    size = 100 * 1024 * 1024
    pattern = bytes(range(256)) * 4096  # 1 MB
    value = pattern * 100
    c = primary.client(decode_responses=False, socket_timeout=120)
    c.set("huge", value)
    c.setrange("huge", 50_000_000, b"<marker>")
    c.set("after-huge", "1")
    wait_offsets_equal(primary, [replica], timeout=180)
    r = replica.client(decode_responses=False, socket_timeout=120)
    assert r.strlen("huge") == size
    expected = bytearray(value)
    expected[50_000_000:50_000_008] = b"<marker>"
    for offset in (0, 1_048_575, 49_999_990, 50_000_000, size - 4096):
        assert r.getrange("huge", offset, offset + 4095) == bytes(expected[offset:offset + 4096])
    assert r.get("after-huge") == b"1"
    assert replica.info()["master_link_status"] == "up"


def test_replica_restart_from_rdb_partial_resync(cluster, kinds):
    """SHUTDOWN SAVE on the replica and a restart: the RDB carries the replication ID and
    offset, so the replica continues with a partial resync, writes made while it was down
    included."""
    primary = cluster.node(kinds[0])
    replica = cluster.node(kinds[1], replica_of=primary)
    wait_link_up(replica, primary)
    fill(primary, 1000)
    wait_offsets_equal(primary, [replica])
    replica.admin.execute_command("CONFIG", "REWRITE")  # the restart must find replicaof
    with open(replica.config_path) as f:
        assert f"replicaof 127.0.0.1 {primary.port}" in f.read()
    full, partial = stats(primary)
    try:
        replica.admin.execute_command("SHUTDOWN", "SAVE")
    except Exception:
        pass  # the connection closes under the reply
    wait_until(lambda: not replica.alive(), "the replica exiting")
    assert replica.proc.returncode == 0, replica.log()
    fill(primary, 200, prefix="while-down")
    replica.start()
    wait_link_up(replica, primary)
    assert_same(primary, replica)
    assert stats(primary) == (full, partial + 1)
