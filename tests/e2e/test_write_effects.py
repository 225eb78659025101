"""A write's effects against redis-server 7.0.15: for each form, run on the same small dataset,
both servers must reply alike and count the same number of changes
(INFO rdb_changes_since_last_save), which is also what decides whether the command reaches the
AOF and replicas. tests/unit/commands/effects_test.cc checks the other effects (propagation,
WATCH) form by form inside keywarden."""
import pytest

DATASET = [
    ("SET", "s", "10"), ("SET", "f", "1.5"), ("SET", "tmp", "x", "EX", "1000"),
    ("RPUSH", "l", "a", "b", "c"), ("SADD", "st", "a", "b", "c"), ("SADD", "st2", "b", "c", "d"),
    ("ZADD", "z", "1", "a", "2", "b", "3", "c"), ("ZADD", "z2", "2", "b", "3", "c", "4", "d"),
    ("HSET", "h", "f", "1", "g", "2"),
]

# Replies that depend on randomness are compared by shape only.
RANDOM = {"SPOP"}

FORMS = [
    "APPEND s x", "DEL s l nokey", "UNLINK nokey", "EXPIRE s -1", "EXPIRE tmp 100 NX",
    "PERSIST tmp", "PERSIST s", "FLUSHDB", "FLUSHALL", "FLUSHALL ASYNC", "SWAPDB 0 1",
    "SWAPDB 0 0", "GETEX s PXAT 1", "GETEX tmp PERSIST", "GETSET s y", "HDEL h f g",
    "HSET h a 1 f 1", "HSETNX h f 1", "HINCRBYFLOAT h f 1.5", "INCRBYFLOAT f 1",
    "LMOVE l l LEFT RIGHT", "LPOP l 10", "LPUSHX nokey x", "LTRIM l 0 -1", "LTRIM l 5 10",
    "LREM l 0 a", "MOVE s 1", "COPY s s DB 1", "COPY s st REPLACE", "MSET a 1 b 2",
    "MSETNX s 1 a 2", "SET s v NX", "SET s v GET", "SETRANGE s 1 ''", "RENAME s s",
    "RENAME s s3", "SADD st a", "SREM st a b c", "SMOVE st st2 a", "SMOVE st st2 b",
    "SDIFFSTORE st2 st st", "SORT l ALPHA STORE d", "SORT nokey STORE l", "SPOP st 10",
    "SPOP st 2", "ZADD z 1 a", "ZADD z INCR 1 a", "ZINTERSTORE z2 2 z nokey",
    "ZRANGESTORE z2 z 5 10", "ZPOPMIN z 10", "ZREMRANGEBYSCORE z 1 2",
]


def changes(conn) -> int:
    info = conn.execute("INFO", "persistence").decode()
    return int(next(line.split(":")[1] for line in info.split("\r\n")
                    if line.startswith("rdb_changes_since_last_save:")))


def run(server, form):
    conn = server.raw()
    conn.execute("FLUSHALL")
    for command in DATASET:
        conn.execute(*command)
    before = changes(conn)
    args = [arg if arg != "''" else "" for arg in form.split()]
    reply = conn.execute(*args)
    counted = changes(conn) - before
    conn.execute("SELECT", "0")
    conn.execute("FLUSHALL")
    conn.close()
    if args[0] in RANDOM and isinstance(reply, list):
        reply = len(reply)
    return reply, counted


@pytest.mark.parametrize("form", FORMS)
def test_same_reply_and_change_count(keywarden, reference_redis, form):
    assert run(keywarden, form) == run(reference_redis, form)
