"""Enforced fencing over real sockets: LOCK.ACQUIRE … FENCE tokens (shared with libkeywarden's
FencedLock counters, never going back across DEBUG RELOAD, an RDB restart or an AOF restart),
LOCK.FENCED accepting and refusing writes (plain, inside MULTI, from EVAL), its refusals of
commands it may not run, ACL of the inner command, what the AOF and a replica see, a paused
holder's late write refused, and a lease that ends while native waiters queue.

Waits are blocking reads or polls with generous deadlines; the one timing assertion (a grant at
the lease deadline) has bounds loose enough for a loaded machine.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import ReplyError, wait_until


def counter_keys(conn) -> list[bytes]:
    return conn.execute("KEYS", "keywarden:fence:*")


def mark_keys(conn) -> list[bytes]:
    return conn.execute("KEYS", "keywarden:fence-marks:*")


def lock_info(conn, name) -> dict:
    reply = conn.execute("LOCK.INFO", name)
    return {reply[i].decode(): reply[i + 1] for i in range(0, len(reply), 2)}


def acquire_token(conn, name, owner, lease=60000) -> int:
    holds, token = conn.execute("LOCK.ACQUIRE", name, owner, lease, "FENCE")
    assert holds >= 1
    return token


def release_all(conn, name, owner) -> None:
    assert conn.execute("LOCK.RELEASE", name, owner, "ALL") == 0


def test_fence_tokens_grow_and_reentry_keeps_the_token(keywarden):
    conn = keywarden.raw()
    assert conn.execute("LOCK.ACQUIRE", "lk", "a", 60000, "FENCE") == [1, 1]
    assert conn.execute("LOCK.ACQUIRE", "lk", "a", 60000, "FENCE") == [2, 1]
    info = lock_info(conn, "lk")
    assert info["holder"] == b"a" and info["holds"] == 2 and info["fencing-token"] == 1
    # The token field is not an owner: releasing the last hold deletes the whole hash.
    assert conn.execute("LOCK.RELEASE", "lk", "a") == 1
    assert conn.execute("LOCK.RELEASE", "lk", "a") == 0
    assert conn.execute("EXISTS", "lk") == 0
    assert conn.execute("LOCK.ACQUIRE", "lk", "b", 60000, "FENCE") == [1, 2]
    # Another holder does not own the token field.
    assert conn.execute("LOCK.RELEASE", "lk", "keywarden:fencing-token") is None
    release_all(conn, "lk", "b")
    # A hold taken without FENCE has no token; LOCK.INFO says so.
    assert conn.execute("LOCK.ACQUIRE", "lk", "c", 60000) == 1
    assert lock_info(conn, "lk")["fencing-token"] is None
    # ... and gets one when re-entered with FENCE.
    assert conn.execute("LOCK.ACQUIRE", "lk", "c", 60000, "FENCE") == [2, 3]
    release_all(conn, "lk", "c")
    # One counter key for the slot, holding the last token, without a TTL.
    [counter] = counter_keys(conn)
    assert conn.execute("GET", counter) == b"3" and conn.execute("TTL", counter) == -1


def test_many_names_share_per_slot_counters(keywarden):
    conn = keywarden.raw()
    tokens = []
    for i in range(200):
        tokens.append(acquire_token(conn, f"name-{i}", "o"))
        release_all(conn, f"name-{i}", "o")
    assert len(tokens) == 200 and all(t >= 1 for t in tokens)
    # No key per name: at most one counter per slot, and no lock hash left behind.
    assert len(counter_keys(conn)) <= 200
    assert conn.execute("KEYS", "name-*") == []
    # Names with one hash tag share one counter, so their tokens strictly grow.
    tagged = [acquire_token(conn, f"{i}{{tag}}", "o") for i in range(5)]
    assert tagged == sorted(tagged) and len(set(tagged)) == 5


def test_tokens_continue_from_the_shared_and_the_redisson_counters(keywarden):
    conn = keywarden.raw()
    first = acquire_token(conn, "lk", "a")
    release_all(conn, "lk", "a")
    [counter] = counter_keys(conn)
    # FencedLock's script (same counter) moved it on: the server continues from there.
    conn.execute("SET", counter, 41)
    assert acquire_token(conn, "lk", "a") == 42 > first
    release_all(conn, "lk", "a")
    # A name once fenced with Redisson's per-name layout never gets a token below it.
    conn.execute("SET", "redisson_lock_token:{lk}", 100)
    assert acquire_token(conn, "lk", "a") == 101
    release_all(conn, "lk", "a")
    conn.execute("SET", counter, "not a number")
    reply = conn.execute("LOCK.ACQUIRE", "lk", "a", 1000, "FENCE")
    assert isinstance(reply, ReplyError) and b"not an integer" in reply
    assert conn.execute("EXISTS", "lk") == 0


def test_tokens_never_go_back_across_reload_and_restarts(server_factory):
    for persistence in (("appendonly", "no"), ("appendonly", "yes")):
        server = server_factory(persistence, ("appendfsync", "always"))
        conn = server.raw()
        seen = [acquire_token(conn, "lk", "a")]
        release_all(conn, "lk", "a")
        assert conn.execute("LOCK.FENCED", "res", seen[-1], "SET", "res", "v1") == b"OK"
        assert conn.execute("DEBUG", "RELOAD") == b"OK"
        seen.append(acquire_token(conn, "lk", "a"))
        release_all(conn, "lk", "a")
        if persistence[1] == "no":
            assert conn.execute("SAVE") == b"OK"
        server.stop()
        server.start()
        conn = server.raw()
        seen.append(acquire_token(conn, "lk", "a"))
        assert seen == sorted(seen) and len(set(seen)) == 3, (persistence, seen)
        # The marks survived too: the first token is refused now.
        reply = conn.execute("LOCK.FENCED", "res", seen[0] - 1, "SET", "res", "late")
        assert isinstance(reply, ReplyError) and reply.startswith(b"FENCED "), reply
        assert conn.execute("GET", "res") == b"v1"


def test_lock_fenced_accepts_newer_and_refuses_older_tokens(keywarden):
    conn = keywarden.raw()
    assert conn.execute("LOCK.FENCED", "res", 5, "SET", "res", "a") == b"OK"
    reply = conn.execute("LOCK.FENCED", "res", 4, "SET", "res", "b")
    assert isinstance(reply, ReplyError)
    assert bytes(reply) == (b"FENCED token 4 is below 5, the highest token already used for "
                            b"this resource")
    assert conn.execute("GET", "res") == b"a"
    # The same token again is accepted (one holder writes many times).
    assert conn.execute("LOCK.FENCED", "res", 5, "APPEND", "res", "c") == 2
    assert conn.execute("LOCK.FENCED", "res", 9, "HSET", "other{res}", "f", "v") == 1
    assert conn.execute("GET", "res") == b"ac"
    # One marks hash per slot, one field per resource; the reply is the inner command's.
    [marks] = mark_keys(conn)
    assert conn.execute("HGET", marks, "res") == b"9"
    assert conn.execute("LOCK.FENCED", "another", 1, "INCR", "n") == 1
    # An inner error is the reply; the token still counts as used.
    conn.execute("SET", "str", "x")
    reply = conn.execute("LOCK.FENCED", "typed", 3, "LPUSH", "str", "x")
    assert isinstance(reply, ReplyError) and reply.startswith(b"WRONGTYPE")
    assert isinstance(conn.execute("LOCK.FENCED", "typed", 2, "SET", "k", "v"), ReplyError)


def test_lock_fenced_refusals(keywarden):
    conn = keywarden.raw()

    def error(*args) -> bytes:
        reply = conn.execute("LOCK.FENCED", *args)
        assert isinstance(reply, ReplyError), (args, reply)
        return bytes(reply)

    assert error("r", "x", "SET", "k", "v") == b"ERR fencing token is not an integer"
    assert error("r", "1", "NOSUCH", "k").startswith(b"ERR unknown command 'NOSUCH'")
    assert error("r", "1", "SET", "k") == b"ERR wrong number of arguments for 'set' command"
    assert error("r", "1", "GET", "k") == b"ERR LOCK.FENCED runs only write commands that take keys"
    assert error("r", "1", "FLUSHALL") == b"ERR LOCK.FENCED runs only write commands that take keys"
    assert error("r", "1", "BLPOP", "k", "0") == b"ERR LOCK.FENCED cannot run a blocking command"
    assert error("r", "1", "LOCK.ACQUIRE", "k", "o", "100") == (
        b"ERR LOCK.FENCED cannot run a blocking command")
    assert error("r", "1", "LOCK.FENCED", "r", "1", "SET", "k", "v") == (
        b"ERR LOCK.FENCED cannot run LOCK.FENCED")
    not_allowed = b"ERR LOCK.FENCED cannot run admin, scripting, transaction or pub/sub commands"
    assert error("r", "1", "EVAL", "return 1", "1", "k") == not_allowed
    assert error("r", "1", "CONFIG", "SET", "hz", "10") == not_allowed
    assert error("r", "1", "MULTI") == not_allowed
    assert conn.execute("LOCK.FENCED", "r", 1) == ReplyError(
        b"ERR wrong number of arguments for 'lock.fenced' command")
    # Nothing of the refused ones was recorded or written.
    assert mark_keys(conn) == [] and conn.execute("DBSIZE") == 0


def test_lock_fenced_checks_the_inner_commands_acl(keywarden):
    admin = keywarden.raw()
    assert admin.execute("ACL", "SETUSER", "fencer", "on", ">pw", "~*", "+lock.fenced",
                         "+get", "+incr") == b"OK"
    try:
        conn = keywarden.raw()
        assert conn.execute("AUTH", "fencer", "pw") == b"OK"
        assert conn.execute("LOCK.FENCED", "r", 1, "INCR", "n") == 1
        reply = conn.execute("LOCK.FENCED", "r", 2, "SET", "k", "v")
        assert reply == ReplyError(b"NOPERM this user has no permissions to run the 'set' command")
        admin.execute("ACL", "SETUSER", "fencer", "resetkeys", "~r", "~n")
        reply = conn.execute("LOCK.FENCED", "r", 3, "INCR", "elsewhere")
        assert reply == ReplyError(
            b"NOPERM this user has no permissions to access one of the keys used as arguments")
        assert admin.execute("EXISTS", "k", "elsewhere") == 0
    finally:
        admin.execute("ACL", "DELUSER", "fencer")


def test_lock_fenced_in_multi_and_in_eval(keywarden):
    conn = keywarden.raw()
    assert conn.execute("MULTI") == b"OK"
    assert conn.execute("LOCK.FENCED", "res", 7, "SET", "res", "seven") == b"QUEUED"
    assert conn.execute("LOCK.FENCED", "res", 6, "SET", "res", "six") == b"QUEUED"
    assert conn.execute("LOCK.FENCED", "res", 8, "INCR", "n") == b"QUEUED"
    ok, refused, incremented = conn.execute("EXEC")
    assert ok == b"OK" and incremented == 1
    assert isinstance(refused, ReplyError) and refused.startswith(b"FENCED token 6")
    assert conn.execute("GET", "res") == b"seven"

    script = "return redis.pcall('lock.fenced', KEYS[1], ARGV[1], 'set', KEYS[1], ARGV[2])"
    assert conn.execute("EVAL", script, 1, "res", 9, "nine") == b"OK"
    reply = conn.execute("EVAL", script, 1, "res", 3, "three")
    assert isinstance(reply, ReplyError) and reply.startswith(b"FENCED token 3 is below 9")
    assert conn.execute("GET", "res") == b"nine"
    # FENCE from a script and inside MULTI (never blocking there).
    acquire = "return redis.call('lock.acquire', KEYS[1], 'o', 1000, 'FENCE')"
    holds, token = conn.execute("EVAL", acquire, 1, "lk")
    assert holds == 1 and token >= 1
    conn.execute("MULTI")
    conn.execute("LOCK.ACQUIRE", "lk2", "o", 1000, "FENCE")
    [[holds2, token2]] = conn.execute("EXEC")
    assert holds2 == 1 and token2 >= 1


def test_aof_and_replica_see_the_marks_and_the_write(server_factory):
    primary = server_factory(("appendonly", "yes"), ("appendfsync", "always"))
    replica = server_factory()
    replica.raw().execute("REPLICAOF", "127.0.0.1", primary.port)
    assert wait_until(lambda: b"master_link_status:up" in replica.raw().execute("INFO",
                                                                                 "replication"))
    conn = primary.raw()
    token = acquire_token(conn, "lk", "a")
    assert conn.execute("LOCK.FENCED", "lk", token, "SET", "data{lk}", "v") == b"OK"
    assert conn.execute("LOCK.FENCED", "lk", token, "SET", "data{lk}", "w") == b"OK"
    assert isinstance(conn.execute("LOCK.FENCED", "lk", token - 1, "DEL", "data{lk}"),
                      ReplyError)
    [counter] = counter_keys(conn)
    [marks] = mark_keys(conn)
    view = replica.raw()
    assert wait_until(lambda: view.execute("GET", "data{lk}") == b"w")
    assert view.execute("HGET", marks, "lk") == str(token).encode()
    assert view.execute("GET", counter) == str(token).encode()
    assert view.execute("HGET", "lk", "keywarden:fencing-token") == str(token).encode()
    aof = (Path(primary.workdir) / "appendonlydir" / "appendonly.aof.1.incr.aof").read_bytes()
    assert b"LOCK.FENCED" not in aof and b"LOCK.ACQUIRE" not in aof
    commands = [line for line in aof.split(b"\r\n")
                if line.isupper() and line.isalpha() and line != b"KEEPTTL"]
    assert commands == [b"SELECT",
                        b"MULTI", b"SET", b"HINCRBY", b"HSET", b"PEXPIREAT", b"EXEC",
                        b"MULTI", b"HSET", b"SET", b"EXEC",
                        b"SET"]


# A holder in its own process: takes the lock with FENCE, reports its token, then waits for a
# line on stdin before its (by then late) fenced write, and reports the reply.
PAUSED_HOLDER = r"""
import sys
sys.path.insert(0, sys.argv[2])
from conftest import RawConnection
conn = RawConnection("127.0.0.1", int(sys.argv[1]), timeout=60)
holds, token = conn.execute("LOCK.ACQUIRE", "job", "slow", 300, "FENCE")
print(token, flush=True)
sys.stdin.readline()
reply = conn.execute("LOCK.FENCED", "job", token, "SET", "result{job}", "slow")
print(bytes(reply).decode(), flush=True)
"""


def test_a_paused_holders_late_write_is_refused(keywarden):
    tests_dir = str(Path(__file__).resolve().parents[1])
    holder = subprocess.Popen([sys.executable, "-c", PAUSED_HOLDER, str(keywarden.port),
                               tests_dir], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        slow_token = int(holder.stdout.readline())
        os.kill(holder.pid, signal.SIGSTOP)  # a GC pause, a swapped-out VM...
        fast = keywarden.raw(timeout=30)
        # Queued natively; granted when the paused holder's 300 ms lease ends.
        holds, fast_token = fast.execute("LOCK.ACQUIRE", "job", "fast", 60000, "TIMEOUT", 0,
                                         "FENCE")
        assert holds == 1 and fast_token > slow_token
        assert fast.execute("LOCK.FENCED", "job", fast_token, "SET", "result{job}",
                            "fast") == b"OK"
        os.kill(holder.pid, signal.SIGCONT)
        holder.stdin.write("go\n")
        holder.stdin.flush()
        late = holder.stdout.readline().strip()
        assert late.startswith(f"FENCED token {slow_token} is below {fast_token}"), late
        assert fast.execute("GET", "result{job}") == b"fast"
    finally:
        os.kill(holder.pid, signal.SIGCONT)
        holder.kill()
        holder.wait()


def test_a_lease_ending_with_waiters_is_handed_over_at_its_deadline(server_factory):
    server = server_factory()
    conn = server.raw()
    # No active expiry at all: only the lease deadline can hand the lock over.
    assert conn.execute("DEBUG", "SET-ACTIVE-EXPIRE", 0) == b"OK"
    assert conn.execute("LOCK.ACQUIRE", "lk", "holder", 400) == 1
    waiter = server.raw(timeout=30)
    started = time.monotonic()
    waiter.send_command("LOCK.ACQUIRE", "lk", "next", 60000, "TIMEOUT", 0)
    second = server.raw(timeout=30)
    second.send_command("LOCK.ACQUIRE", "lk", "after", 60000, "TIMEOUT", 0)
    assert waiter.read_reply() == 1
    waited = time.monotonic() - started
    assert 0.2 < waited < 5.0, waited
    info = lock_info(conn, "lk")
    assert info["holder"] == b"next" and [o for o, _ in info["waiters"]] == [b"after"]

    # A renewed lease (the watchdog's PEXPIRE) moves the hand-off to the new deadline.
    assert conn.execute("PEXPIRE", "lk", 300) == 1
    time.sleep(0.1)
    assert conn.execute("PEXPIRE", "lk", 700) == 1
    renewed = time.monotonic()
    assert second.read_reply() == 1
    assert time.monotonic() - renewed > 0.5
    assert lock_info(conn, "lk")["holder"] == b"after"


def test_a_lease_ending_during_client_pause_is_handed_over_after_it(server_factory):
    server = server_factory()
    conn = server.raw()
    assert conn.execute("LOCK.ACQUIRE", "lk", "holder", 200) == 1
    waiter = server.raw(timeout=30)
    waiter.send_command("LOCK.ACQUIRE", "lk", "next", 60000, "TIMEOUT", 0)
    assert wait_until(lambda: lock_info(conn, "lk")["waiters"] != [])
    paused = time.monotonic()
    assert conn.execute("CLIENT", "PAUSE", 800, "WRITE") == b"OK"
    # The lease ends during the pause; the grant (a write) waits for the pause to end.
    assert waiter.read_reply() == 1
    assert time.monotonic() - paused > 0.6
    assert lock_info(conn, "lk")["holder"] == b"next"
