"""Fork children that fail, against a stock redis-server (issue 25).

`rdb-key-save-delay` makes a save (BGSAVE, or the RDB base of an AOF rewrite) sleep after each
key, so a test can see the child running and kill it with SIGKILL. Each test runs the same
steps on keywarden and on redis-server 7.0 and compares what both answered: the replies byte
for byte, the INFO persistence fields, the files left behind and the log lines Redis writes.

* Work scheduled behind a child (BGREWRITEAOF during a BGSAVE, BGSAVE SCHEDULE during a
  rewrite) starts once that child is reaped, whether it succeeded or was killed.
* A killed BGSAVE sets rdb_last_bgsave_status:err; with save points and
  stop-writes-on-bgsave-error, writes get -MISCONF until a save succeeds again.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from conftest import keywarden_binary, redis_binary
from test_aof import info, wait_for

SERVERS = {"keywarden": keywarden_binary, "redis": redis_binary}

# 20 keys at 0.1 s each: a save lasts 2 s, long enough to be seen and killed.
SLOW_SAVES = [("rdb-key-save-delay", "100000"), ("save", "3600 1")]


def children(server) -> list[int]:
    """The pids of the server's child processes (its fork child, when one runs)."""
    path = Path(f"/proc/{server.pid}/task/{server.pid}/children")
    return [int(pid) for pid in path.read_text().split()]


def kill_child(server) -> None:
    pids = children(server)
    assert len(pids) == 1, f"{server.name} has children {pids}"
    os.kill(pids[0], signal.SIGKILL)


def fill(conn, count: int = 20) -> None:
    for i in range(count):
        assert conn.execute("SET", f"key:{i}", f"value:{i}") == b"OK"


def fields(conn, *names: str) -> dict[str, str]:
    row = info(conn)
    return {name: row[name] for name in names}


def aof_files(server) -> list[str]:
    directory = Path(server.workdir) / "appendonlydir"
    return sorted(os.listdir(directory)) if directory.exists() else []


def rewrite_after_failed_bgsave(server_factory, binary) -> list:
    server = server_factory(*SLOW_SAVES, binary=binary)
    c = server.raw()
    fill(c)
    seen = [c.execute_raw("BGSAVE"), c.execute_raw("BGREWRITEAOF"),
            fields(c, "rdb_bgsave_in_progress", "aof_rewrite_scheduled")]
    kill_child(server)
    assert wait_for(lambda: info(c)["rdb_bgsave_in_progress"] == "0", 10)
    # The rewrite's own RDB base need not be slow.
    assert c.execute("CONFIG", "SET", "rdb-key-save-delay", "0") == b"OK"
    assert wait_for(lambda: info(c)["aof_rewrite_scheduled"] == "0"
                    and info(c)["aof_rewrite_in_progress"] == "0", 10)
    seen.append(fields(c, "rdb_last_bgsave_status", "aof_last_bgrewrite_status",
                       "aof_rewrite_scheduled"))
    seen.append(aof_files(server))
    log = server.log()
    seen.append([line in log for line in (
        "Background saving terminated by signal 9",
        "Background append only file rewriting started by pid",
        "Background AOF rewrite finished successfully")])
    return seen


def test_rewrite_scheduled_during_a_killed_bgsave_runs(server_factory):
    """BGREWRITEAOF answered 'scheduled' during a BGSAVE runs once the save is reaped, even
    when the save was killed (it stayed scheduled for good before)."""
    got = {name: rewrite_after_failed_bgsave(server_factory, binary())
           for name, binary in SERVERS.items()}
    assert got["keywarden"] == got["redis"]
    assert got["redis"][0] == b"+Background saving started\r\n"
    assert got["redis"][1] == b"+Background append only file rewriting scheduled\r\n"
    assert got["redis"][3]["aof_rewrite_scheduled"] == "0"
    assert got["redis"][4] == ["appendonly.aof.1.base.rdb", "appendonly.aof.manifest"]
    assert got["redis"][5] == [True, True, True]


def bgsave_after_failed_rewrite(server_factory, binary) -> list:
    server = server_factory(*SLOW_SAVES, binary=binary)
    c = server.raw()
    fill(c)
    seen = [c.execute_raw("BGREWRITEAOF"), c.execute_raw("BGSAVE"),
            c.execute_raw("BGSAVE", "SCHEDULE"),
            fields(c, "aof_rewrite_in_progress", "rdb_bgsave_in_progress")]
    kill_child(server)
    assert wait_for(lambda: info(c)["aof_rewrite_in_progress"] == "0", 10)
    assert c.execute("CONFIG", "SET", "rdb-key-save-delay", "0") == b"OK"
    dump = Path(server.workdir) / "dump.rdb"
    assert wait_for(lambda: dump.exists() and info(c)["rdb_bgsave_in_progress"] == "0", 10)
    seen.append(fields(c, "rdb_last_bgsave_status", "aof_last_bgrewrite_status"))
    log = server.log()
    seen.append([line in log for line in (
        "Background AOF rewrite terminated by signal 9",
        "Background saving started by pid",
        "Background saving terminated with success")])
    return seen


def test_bgsave_scheduled_during_a_killed_rewrite_runs(server_factory):
    got = {name: bgsave_after_failed_rewrite(server_factory, binary())
           for name, binary in SERVERS.items()}
    assert got["keywarden"] == got["redis"]
    assert got["redis"][2] == b"+Background saving scheduled\r\n"
    assert got["redis"][4] == {"rdb_last_bgsave_status": "ok",
                               "aof_last_bgrewrite_status": "err"}
    assert got["redis"][5] == [True, True, True]


def killed_bgsave_and_misconf(server_factory, binary, extra) -> list:
    server = server_factory(*SLOW_SAVES, *extra, binary=binary)
    c = server.raw()
    fill(c)
    seen = [c.execute_raw("BGSAVE"), fields(c, "rdb_bgsave_in_progress")]
    # Still saving: the delay is honoured (20 keys at 0.1 s).
    seen.append(c.execute_raw("BGSAVE"))
    kill_child(server)
    assert wait_for(lambda: info(c)["rdb_bgsave_in_progress"] == "0", 10)
    seen.append(fields(c, "rdb_last_bgsave_status"))
    seen += [c.execute_raw("SET", "k", "v"), c.execute_raw("GET", "key:1"),
             c.execute_raw("PING"), c.execute_raw("DEL", "key:1"),
             c.execute_raw("EVAL", "return redis.call('set', 'k', 'v')", "0"),
             c.execute_raw("EVAL", "#!lua\nreturn 1", "0"),
             c.execute_raw("EVAL", "#!lua flags=no-writes\nreturn redis.call('get', 'key:2')",
                           "0"),
             c.execute_raw("EVAL", "#!lua flags=no-writes\nreturn redis.call('del', 'key:2')",
                           "0")]
    assert c.execute("CONFIG", "SET", "rdb-key-save-delay", "0") == b"OK"
    seen.append(c.execute_raw("BGSAVE"))
    assert wait_for(lambda: info(c)["rdb_bgsave_in_progress"] == "0", 10)
    seen.append(fields(c, "rdb_last_bgsave_status"))
    seen += [c.execute_raw("SET", "k", "v"), c.execute_raw("PING")]
    seen.append("Background saving terminated by signal 9" in server.log())
    return seen


@pytest.mark.parametrize("stop_writes", ["yes", "no"])
def test_killed_bgsave_refuses_writes_until_a_save_succeeds(server_factory, stop_writes):
    extra = [("stop-writes-on-bgsave-error", stop_writes)]
    got = {name: killed_bgsave_and_misconf(server_factory, binary(), extra)
           for name, binary in SERVERS.items()}
    assert got["keywarden"] == got["redis"]
    redis = got["redis"]
    assert redis[1] == {"rdb_bgsave_in_progress": "1"}
    assert redis[2] == b"-ERR Background save already in progress\r\n"
    assert redis[3] == {"rdb_last_bgsave_status": "err"}
    if stop_writes == "yes":
        assert redis[4].startswith(b"-MISCONF ")
    else:
        assert redis[4] == b"+OK\r\n"
    assert redis[13] == {"rdb_last_bgsave_status": "ok"}
    assert redis[14] == b"+OK\r\n"


def test_rdb_key_save_delay_slows_the_rewrite_base(server_factory):
    """The delay applies to the RDB base of an AOF rewrite too: it can be killed mid-way,
    and then it is a failed rewrite and the old files stay."""
    got = {}
    for name, binary in SERVERS.items():
        server = server_factory(("rdb-key-save-delay", "100000"), binary=binary())
        c = server.raw()
        fill(c)
        seen = [c.execute_raw("BGREWRITEAOF"), fields(c, "aof_rewrite_in_progress")]
        kill_child(server)
        assert wait_for(lambda: info(c)["aof_rewrite_in_progress"] == "0", 10)
        seen.append(fields(c, "aof_last_bgrewrite_status", "aof_rewrite_scheduled"))
        seen.append([f for f in aof_files(server) if "base" in f])
        got[name] = seen
    assert got["keywarden"] == got["redis"]
    assert got["redis"][1] == {"aof_rewrite_in_progress": "1"}
    assert got["redis"][2]["aof_last_bgrewrite_status"] == "err"
