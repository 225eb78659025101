"""Native lock commands (LOCK.ACQUIRE / LOCK.RELEASE / LOCK.INFO) over real sockets: the FIFO
queue the server serves itself, reentrancy, timeouts, waiters that disconnect or are killed,
a bound holder killed with kill -9, expiry while waiters queue, Redisson-style scripts and
native clients on the same lock, MULTI and script forms, and what the AOF and a replica see.

Every wait is a blocking read or a poll with a generous deadline; nothing asserts on time.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import RawConnection, ReplyError, wait_until

# Redisson's tryLockInnerAsync and unlockInnerAsync (the hash layout libkeywarden shares), with
# the pub/sub message left out: native waiters need none.
REDISSON_TRY_LOCK = (
    "if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) "
    "then redis.call('hincrby', KEYS[1], ARGV[2], 1); "
    "redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; "
    "return redis.call('pttl', KEYS[1]);")
REDISSON_UNLOCK = (
    "if (redis.call('hexists', KEYS[1], ARGV[2]) == 0) then return nil; end; "
    "local counter = redis.call('hincrby', KEYS[1], ARGV[2], -1); "
    "if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[1]); return 0; "
    "else redis.call('del', KEYS[1]); return 1; end; return nil;")


def blocked_count(server) -> int:
    info = server.raw().execute("INFO", "clients").decode()
    for line in info.split("\r\n"):
        if line.startswith("blocked_clients:"):
            return int(line.split(":")[1])
    return -1


def lock_info(server, name) -> dict:
    reply = server.raw().execute("LOCK.INFO", name)
    return {reply[i].decode(): reply[i + 1] for i in range(0, len(reply), 2)}


def queue(server, name) -> list[bytes]:
    return [owner for owner, _ in lock_info(server, name)["waiters"]]


def locks_info(server) -> dict[str, int]:
    text = server.raw().execute("INFO", "locks").decode()
    return {line.split(":")[0]: int(line.split(":")[1])
            for line in text.split("\r\n") if ":" in line}


def test_fifo_order_with_five_queued_clients(keywarden):
    holder = keywarden.raw()
    assert holder.execute("LOCK.ACQUIRE", "lk", "holder", 60000) == 1
    waiters = []
    for i in range(5):
        conn = keywarden.raw()
        conn.send_command("LOCK.ACQUIRE", "lk", f"w{i}", 60000, "TIMEOUT", 0)
        # Queue them one by one so that arrival order is known.
        assert wait_until(lambda: len(queue(keywarden, "lk")) == i + 1)
        waiters.append(conn)
    assert queue(keywarden, "lk") == [b"w0", b"w1", b"w2", b"w3", b"w4"]
    previous, releaser = "holder", holder
    for i, conn in enumerate(waiters):
        assert releaser.execute("LOCK.RELEASE", "lk", previous) == 0
        # The head of the queue, and only it, is granted.
        assert conn.read_reply() == 1
        assert keywarden.raw().execute("HGETALL", "lk") == [f"w{i}".encode(), b"1"]
        for later in waiters[i + 1:]:
            assert not later.reader.buffered()
        previous, releaser = f"w{i}", conn
    stats = locks_info(keywarden)
    assert stats["lock_handoffs"] >= 5


def test_reentrancy_and_release_counts(keywarden):
    conn = keywarden.raw()
    assert conn.execute("LOCK.ACQUIRE", "lk", "me", 10000) == 1
    assert conn.execute("LOCK.ACQUIRE", "lk", "me", 10000, "TIMEOUT", 0) == 2
    assert conn.execute("LOCK.ACQUIRE", "lk", "other", 10000) is None
    assert conn.execute("LOCK.RELEASE", "lk", "me") == 1
    assert conn.execute("LOCK.RELEASE", "lk", "other") is None
    assert conn.execute("LOCK.RELEASE", "lk", "me") == 0
    assert conn.execute("EXISTS", "lk") == 0


def test_timeout_replies_nil_and_leaves_the_queue(keywarden):
    keywarden.raw().execute("LOCK.ACQUIRE", "lk", "holder", 60000)
    conn = keywarden.raw()
    conn.send_command("LOCK.ACQUIRE", "lk", "late", 1000, "TIMEOUT", 50)
    assert conn.read_reply() is None
    assert queue(keywarden, "lk") == []
    assert conn.execute("PING") == b"PONG"


def test_disconnected_and_killed_waiters_leave_the_queue(keywarden):
    admin = keywarden.raw()
    admin.execute("LOCK.ACQUIRE", "lk", "holder", 60000)
    gone = keywarden.raw()
    gone.send_command("LOCK.ACQUIRE", "lk", "gone", 1000, "TIMEOUT", 0)
    killed = keywarden.raw()
    killed.send_command("CLIENT", "ID")
    killed_id = killed.read_reply()
    killed.send_command("LOCK.ACQUIRE", "lk", "killed", 1000, "TIMEOUT", 0)
    unblocked = keywarden.raw()
    unblocked.send_command("CLIENT", "ID")
    unblocked_id = unblocked.read_reply()
    unblocked.send_command("LOCK.ACQUIRE", "lk", "unblocked", 1000, "TIMEOUT", 0)
    last = keywarden.raw()
    last.send_command("LOCK.ACQUIRE", "lk", "last", 1000, "TIMEOUT", 0)
    assert wait_until(lambda: len(queue(keywarden, "lk")) == 4)
    gone.close()
    assert admin.execute("CLIENT", "KILL", "ID", killed_id) == 1
    assert admin.execute("CLIENT", "UNBLOCK", unblocked_id) == 1
    assert unblocked.read_reply() is None
    assert wait_until(lambda: queue(keywarden, "lk") == [b"last"])
    admin.execute("LOCK.RELEASE", "lk", "holder")
    assert last.read_reply() == 1


HOLDER_PROCESS = """
import socket, sys, time
sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
def command(*args):
    out = b"*%d\\r\\n" % len(args)
    for arg in args:
        arg = str(arg).encode()
        out += b"$%d\\r\\n%s\\r\\n" % (len(arg), arg)
    sock.sendall(out)
    return sock.recv(100)
assert command("LOCK.ACQUIRE", "lk", "crashing", 600000, "BIND") == b":1\\r\\n"
print("granted", flush=True)
time.sleep(600)
"""


def test_kill_9_of_a_bound_holder_hands_the_lock_over(keywarden):
    holder = subprocess.Popen([sys.executable, "-c", HOLDER_PROCESS, str(keywarden.port)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "granted"
        waiter = keywarden.raw(timeout=30)
        waiter.send_command("LOCK.ACQUIRE", "lk", "next", 60000, "TIMEOUT", 0)
        assert wait_until(lambda: queue(keywarden, "lk") == [b"next"])
        os.kill(holder.pid, signal.SIGKILL)
        # The lease is ten minutes: only the closed connection can free it.
        assert waiter.read_reply() == 1
        assert keywarden.raw().execute("HGETALL", "lk") == [b"next", b"1"]
    finally:
        holder.kill()
        holder.wait()


def test_bound_lease_still_bounds_a_holder_whose_connection_stays(keywarden):
    hung = keywarden.raw()
    assert hung.execute("LOCK.ACQUIRE", "lk", "hung", 100, "BIND") == 1
    waiter = keywarden.raw(timeout=30)
    assert waiter.execute("LOCK.ACQUIRE", "lk", "next", 60000, "TIMEOUT", 0) == 1
    # The hung holder's connection closing later releases nothing of the new holder's.
    hung.close()
    assert wait_until(lambda: blocked_count(keywarden) == 0)
    assert keywarden.raw().execute("HGETALL", "lk") == [b"next", b"1"]


def test_expiry_while_waiters_queue(keywarden):
    before = locks_info(keywarden)["lock_expired_while_held"]
    keywarden.raw().execute("LOCK.ACQUIRE", "lk", "holder", 200)
    waiters = []
    for i in range(3):
        conn = keywarden.raw(timeout=30)
        conn.send_command("LOCK.ACQUIRE", "lk", f"w{i}", 60000, "TIMEOUT", 0)
        assert wait_until(lambda: len(queue(keywarden, "lk")) == i + 1)
        waiters.append(conn)
    # Nobody touches the key: active expiry reclaims it and the head of the queue gets it.
    assert waiters[0].read_reply() == 1
    assert queue(keywarden, "lk") == [b"w1", b"w2"]
    assert locks_info(keywarden)["lock_expired_while_held"] == before + 1


def test_redisson_script_release_wakes_a_native_waiter(keywarden):
    script = keywarden.raw()
    assert script.execute("EVAL", REDISSON_TRY_LOCK, 1, "lk", 30000, "uuid:1") is None
    waiter = keywarden.raw()
    waiter.send_command("LOCK.ACQUIRE", "lk", "native", 30000, "TIMEOUT", 0)
    assert wait_until(lambda: queue(keywarden, "lk") == [b"native"])
    # The script's own retry loses against the queue: the lock is handed over inside EVAL's turn.
    assert script.execute("EVAL", REDISSON_UNLOCK, 1, "lk", 30000, "uuid:1") == 1
    assert waiter.read_reply() == 1
    assert script.execute("EVAL", REDISSON_TRY_LOCK, 1, "lk", 30000, "uuid:1") > 0
    assert waiter.execute("LOCK.RELEASE", "lk", "native") == 0
    assert script.execute("EVAL", REDISSON_TRY_LOCK, 1, "lk", 30000, "uuid:1") is None


def test_mixed_script_and_native_contention_never_double_grants(keywarden):
    rounds = 30
    violations: list[str] = []
    grants = {"native": 0, "script": 0}
    marker = "owner-of-the-critical-section"

    def critical(conn, me):
        # Inside the lock: claim the section, check nobody else holds it, give it back.
        if conn.execute("SET", marker, me, "NX") is None:
            violations.append(f"{me} found {conn.execute('GET', marker)!r}")
        conn.execute("DEL", marker)

    def native(index):
        conn = RawConnection(keywarden.host, keywarden.port, timeout=60)
        me = f"native-{index}"
        for _ in range(rounds):
            assert conn.execute("LOCK.ACQUIRE", "lk", me, 30000, "TIMEOUT", 0) == 1
            critical(conn, me)
            grants["native"] += 1
            assert conn.execute("LOCK.RELEASE", "lk", me) == 0
        conn.close()

    def scripted(index):
        conn = RawConnection(keywarden.host, keywarden.port, timeout=60)
        me = f"script-{index}"
        done = 0
        while done < rounds:
            if conn.execute("EVAL", REDISSON_TRY_LOCK, 1, "lk", 30000, me) is not None:
                continue  # Redisson would wait for the pub/sub message; polling is enough here
            critical(conn, me)
            grants["script"] += 1
            assert conn.execute("EVAL", REDISSON_UNLOCK, 1, "lk", 30000, me) == 1
            done += 1
        conn.close()

    threads = [threading.Thread(target=native, args=(i,)) for i in range(3)]
    threads += [threading.Thread(target=scripted, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    assert violations == []
    assert grants == {"native": 3 * rounds, "script": 2 * rounds}


def test_multi_and_scripts_use_the_non_blocking_form(keywarden):
    conn = keywarden.raw()
    conn.execute("LOCK.ACQUIRE", "lk", "holder", 60000)
    conn.execute("MULTI")
    conn.execute("LOCK.ACQUIRE", "lk", "other", 1000, "TIMEOUT", 0)
    conn.execute("LOCK.ACQUIRE", "free", "other", 1000, "TIMEOUT", 0)
    assert conn.execute("EXEC") == [None, 1]
    acquire = "return redis.call('lock.acquire', KEYS[1], ARGV[1], 1000, 'TIMEOUT', 0)"
    assert conn.execute("EVAL", acquire, 1, "lk", "x") is None
    assert conn.execute("EVAL", acquire, 1, "free2", "x") == 1
    bind = "return redis.call('lock.acquire', KEYS[1], 'x', 1000, 'BIND')"
    reply = conn.execute("EVAL", bind, 1, "free3")
    assert isinstance(reply, ReplyError) and b"BIND is not allowed from scripts" in reply


def test_info_locks_and_lock_info(keywarden):
    conn = keywarden.raw()
    conn.execute("LOCK.ACQUIRE", "lk", "holder", 60000)
    waiter = keywarden.raw()
    waiter.send_command("LOCK.ACQUIRE", "lk", "w", 60000, "TIMEOUT", 0)
    assert wait_until(lambda: locks_info(keywarden)["lock_waiters"] == 1)
    info = lock_info(keywarden, "lk")
    assert info["holder"] == b"holder" and info["holds"] == 1
    assert 0 < info["lease-ms"] <= 60000
    assert [owner for owner, _ in info["waiters"]] == [b"w"]
    assert locks_info(keywarden)["locks_held"] >= 1
    conn.execute("LOCK.RELEASE", "lk", "holder")
    assert waiter.read_reply() == 1
    assert locks_info(keywarden)["lock_waiters"] == 0
    # INFO all keeps Redis's sections; the locks section is asked for by name.
    assert b"# Locks" not in conn.execute("INFO", "everything")


def test_aof_and_replica_see_ordinary_commands(server_factory, tmp_path):
    primary = server_factory(("appendonly", "yes"), ("appendfsync", "always"))
    replica = server_factory()
    replica.raw().execute("REPLICAOF", "127.0.0.1", primary.port)
    assert wait_until(lambda: b"master_link_status:up" in replica.raw().execute("INFO",
                                                                                 "replication"))
    holder = primary.raw()
    assert holder.execute("LOCK.ACQUIRE", "lk", "holder", 60000, "BIND") == 1
    waiter = primary.raw()
    waiter.send_command("LOCK.ACQUIRE", "lk", "next", 60000, "TIMEOUT", 0)
    assert wait_until(lambda: queue(primary, "lk") == [b"next"])
    holder.close()  # a bound grant: released with the connection, handed to the waiter
    assert waiter.read_reply() == 1
    assert waiter.execute("LOCK.ACQUIRE", "lk", "next", 60000) == 2
    assert waiter.execute("LOCK.RELEASE", "lk", "next") == 1
    assert wait_until(lambda: replica.raw().execute("HGETALL", "lk") == [b"next", b"1"])
    assert 0 < replica.raw().execute("PTTL", "lk") <= 60000
    aof = (Path(primary.workdir) / "appendonlydir" / "appendonly.aof.1.incr.aof").read_bytes()
    commands = [line for line in aof.split(b"\r\n") if line.isupper() and line.isalpha()]
    assert b"LOCK.ACQUIRE" not in aof and b"LOCK.RELEASE" not in aof
    assert commands == [b"SELECT", b"HINCRBY", b"PEXPIREAT", b"DEL", b"HINCRBY", b"PEXPIREAT",
                        b"HINCRBY", b"PEXPIREAT", b"HINCRBY"]
