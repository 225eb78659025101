"""Process directives against redis-server 7.0 (issue 25): rename-command,
loading-process-events-interval-bytes, bind-source-addr, oom-score-adj and
oom-score-adj-values. Every scenario runs on both servers and compares replies byte for byte,
or what the servers do (the start-up load answering clients or not, the oom_score_adj the
kernel holds for the server and its fork child, read from /proc).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from conftest import ReplyError, keywarden_binary, redis_binary, start_server
from test_startup_errors import failed_start

SERVERS = {"keywarden": keywarden_binary, "redis": redis_binary}


def both(server_factory, *directives):
    return [server_factory(*directives),
            server_factory(*directives, binary=redis_binary())]


def same_replies(servers, commands) -> list:
    """Runs each command on every server, asserts identical raw replies, returns them."""
    conns = [s.raw() for s in servers]
    out = []
    for command in commands:
        raws = [c.execute_raw(*command) for c in conns]
        assert raws[0] == raws[1], f"{command}: keywarden {raws[0]!r}, redis {raws[1]!r}"
        out.append(raws[0])
    return out


# --- rename-command ----------------------------------------------------------------------------

def test_rename_command(server_factory):
    renamed = both(server_factory, ("rename-command", ("set", "myset")),
                   ("rename-command", ("FLUSHALL", "")))
    plain = both(server_factory)
    same_replies(renamed, [
        ["myset", "a", "b"], ["get", "a"],
        ["myset", "a", "b", "c", "d", "e"],  # errors name the command by its own name
        ["myset"],
        ["set", "a", "b"],
        ["flushall"],
        ["COMMAND", "GETKEYS", "myset", "k", "v"],
        ["COMMAND", "GETKEYS", "set", "k", "v"],
        ["CONFIG", "GET", "rename-command"],
        ["CONFIG", "SET", "rename-command", "get", "x"],
        ["EVAL", "return redis.call('myset', 'b', '1')", "0"],
        ["EVAL", "return redis.pcall('set', 'b', '1')", "0"],
        ["MULTI"], ["myset", "c", "1"], ["EXEC"],
    ])
    for server, reference in zip(renamed, plain):
        with server.raw() as conn, reference.raw() as ref:
            # COMMAND INFO finds it by the new name and shows its own; the old name is gone.
            info = conn.execute("COMMAND", "INFO", "myset", "set", "flushall")
            assert info[0][0] == b"set" and info[1] is None and info[2] is None, info
            # A removed command leaves COMMAND and COMMAND COUNT; a renamed one stays.
            assert conn.execute("COMMAND", "COUNT") == ref.execute("COMMAND", "COUNT") - 1
            assert len(conn.execute("COMMAND")) == conn.execute("COMMAND", "COUNT")
            names = conn.execute("COMMAND", "LIST")
            assert b"set" in names and b"myset" not in names and b"flushall" not in names
            stats = conn.execute("INFO", "commandstats").decode()
            assert "cmdstat_set:calls=" in stats and "cmdstat_myset" not in stats


@pytest.mark.parametrize("args,reason", [
    (("nosuch", "x"), "No such command in rename-command"),
    (("get", "set"), "Target command name already exists"),
    (("get",), "Bad directive or wrong number of arguments"),
    (("get", "a", "b"), "Bad directive or wrong number of arguments"),
])
def test_rename_command_refused_at_start(args, reason):
    reports = {}
    for name, binary in SERVERS.items():
        status, log = failed_start(binary(), [("rename-command", args)])
        assert status not in (0, None), log
        lines = [line for line in log.splitlines() if line.startswith(">>>") or line == reason]
        reports[name] = lines
    assert reports["keywarden"] == reports["redis"] and len(reports["redis"]) == 2, reports


# --- loading-process-events-interval-bytes -----------------------------------------------------

@pytest.fixture(scope="module")
def rdb_of_500_keys() -> bytes:
    source = start_server(redis_binary())
    try:
        conn = source.raw()
        conn.execute("MSET", *[x for i in range(500) for x in (f"key:{i}", "v" * 20)])
        assert conn.execute("SAVE") == b"OK"
        return (Path(source.workdir) / "dump.rdb").read_bytes()
    finally:
        source.cleanup()


def test_loading_process_events_interval_bytes_config(server_factory):
    same_replies(both(server_factory), [
        ["CONFIG", "GET", "loading-process-events-interval-bytes"],
        ["CONFIG", "SET", "loading-process-events-interval-bytes", "1000"],
        ["CONFIG", "SET", "loading-process-events-interval-bytes", "1k"],
        ["CONFIG", "SET", "loading-process-events-interval-bytes", "4096"],
        ["CONFIG", "GET", "loading-process-events-interval-bytes"],
    ])


@pytest.mark.parametrize("interval,serves", [("1024", True), ("2097152", False)])
@pytest.mark.parametrize("which", ["keywarden", "redis"])
def test_loading_serves_clients_every_interval_bytes(tmp_path, rdb_of_500_keys, which, interval,
                                                     serves):
    """A slow load (2 ms a key, about a second) of a 10 KB file: with an interval of 1 KB the
    server answers meanwhile (-LOADING), with the 2 MB default it answers nobody until done."""
    (tmp_path / "dump.rdb").write_bytes(rdb_of_500_keys)
    server = start_server(SERVERS[which](), [("dir", str(tmp_path)), ("key-load-delay", "2000"),
                                             ("loading-process-events-interval-bytes", interval)])
    try:
        with server.raw() as conn:
            reply = conn.execute("GET", "key:1")
            if serves:
                assert reply == ReplyError(b"LOADING Redis is loading the dataset in memory")
            else:
                assert reply == b"v" * 20
    finally:
        server.cleanup()


# --- bind-source-addr --------------------------------------------------------------------------

def test_bind_source_addr(server_factory):
    same_replies(both(server_factory), [
        ["CONFIG", "GET", "bind-source-addr"],
        ["CONFIG", "SET", "bind-source-addr", "127.0.0.1"],
        ["CONFIG", "GET", "bind-source-addr"],
        ["CONFIG", "SET", "bind-source-addr", ""],
        ["CONFIG", "GET", "bind-source-addr"],
    ])
    same_replies(both(server_factory, ("bind-source-addr", "127.0.0.1")), [
        ["CONFIG", "GET", "bind-source-addr"],
    ])


# --- oom-score-adj -----------------------------------------------------------------------------

def oom_score(pid: int) -> int:
    return int(Path(f"/proc/{pid}/oom_score_adj").read_text())


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def test_oom_score_adj_applied(server_factory):
    # Negative scores need CAP_SYS_RESOURCE (root without it, in a container, is refused):
    # then both servers refuse the same CONFIG SETs and keep the same score.
    servers = both(server_factory)
    base = oom_score(os.getpid())  # what the servers inherited
    conns = [s.raw() for s in servers]
    steps = [
        ["CONFIG", "GET", "oom-score-adj"], ["CONFIG", "GET", "oom-score-adj-values"],
        ["CONFIG", "SET", "oom-score-adj", "yes"],
        ["CONFIG", "SET", "oom-score-adj-values", "10 20 30"],
        ["CONFIG", "SET", "oom-score-adj", "absolute"],
        ["CONFIG", "SET", "oom-score-adj-values", "-100 200 800"],
        ["CONFIG", "SET", "oom-score-adj-values", "-3000 0 0"],
        ["CONFIG", "SET", "oom-score-adj-values", "1 2"],
        ["CONFIG", "SET", "oom-score-adj-values", "a b c"],
        ["CONFIG", "SET", "oom-score-adj-values", "1500 1600 1700"],
        ["CONFIG", "SET", "oom-score-adj", "relative"],
        ["CONFIG", "SET", "oom-score-adj-values", "-1500 -10 +5"],
        ["CONFIG", "GET", "oom-score-adj"], ["CONFIG", "GET", "oom-score-adj-values"],
        ["CONFIG", "SET", "oom-score-adj", "maybe"],
        ["CONFIG", "SET", "oom-score-adj", "no"],
        ["CONFIG", "GET", "oom-score-adj"], ["CONFIG", "GET", "oom-score-adj-values"],
    ]
    for step in steps:
        raws = [c.execute_raw(*step) for c in conns]
        assert raws[0] == raws[1], f"{step}: keywarden {raws[0]!r}, redis {raws[1]!r}"
        scores = [oom_score(s.pid) for s in servers]
        assert scores[0] == scores[1], f"after {step}: keywarden {scores[0]}, redis {scores[1]}"
    # Back to "no": the score from before.
    assert [oom_score(s.pid) for s in servers] == [base, base]


def test_oom_score_adj_at_start_and_in_fork_child(server_factory):
    # Scores above the inherited one need no privilege: the primary's and the child's.
    base = oom_score(os.getpid())
    values = [min(base + 3, 1000), min(base + 6, 1000), min(base + 7, 1000)]
    servers = both(server_factory, ("oom-score-adj", "absolute"),
                   ("oom-score-adj-values", tuple(map(str, values))),
                   ("rdb-key-save-delay", "100000"))
    found = {}
    for server in servers:
        with server.raw() as conn:
            conn.execute("MSET", *[x for i in range(100) for x in (f"k{i}", "v")])
            assert conn.execute("BGSAVE") == b"Background saving started"
            deadline = time.monotonic() + 10
            while not children(server.pid):
                assert time.monotonic() < deadline, "no fork child"
                time.sleep(0.01)
            child = children(server.pid)[0]
            # The child sets its score first thing; give it a moment to get there.
            deadline = time.monotonic() + 10
            while oom_score(child) != values[2] and time.monotonic() < deadline:
                time.sleep(0.01)
            found[server.name] = (oom_score(server.pid), oom_score(child))
            conn.execute("CONFIG", "SET", "rdb-key-save-delay", "0")
    assert list(found.values()) == [(values[0], values[2])] * 2, found
