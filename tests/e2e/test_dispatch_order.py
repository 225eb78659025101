"""The order of the dispatcher's generic checks, against a stock redis-server 7.0.

Where two refusals could both answer a command (NOAUTH, unknown command, wrong arity, -OOM,
-MISCONF, the RESP2 subscribed context, -LOADING, -BUSY, no-multi inside MULTI, CLIENT PAUSE),
the one Redis's processCommand tests first must answer. Each scenario puts a server in two or
more of those states at once and runs the same commands on both servers; the replies are
compared byte for byte, and the decisive ones are also checked against what Redis answers.

Sleeps and waits only bring a server into a state (a slow load in progress, a busy script, a
failed background save); no assertion depends on how long anything takes.
"""

from __future__ import annotations

import os
import shutil

from conftest import keywarden_binary, redis_binary, start_server, wait_until

SERVERS = {"keywarden": keywarden_binary, "redis": redis_binary}

NOAUTH = b"-NOAUTH Authentication required.\r\n"
LOADING = b"-LOADING Redis is loading the dataset in memory\r\n"
OOM = b"-OOM command not allowed when used memory > 'maxmemory'.\r\n"
NOT_IN_MULTI = b"-ERR Command not allowed inside a transaction\r\n"
GET_ARITY = b"-ERR wrong number of arguments for 'get' command\r\n"
SET_ARITY = b"-ERR wrong number of arguments for 'set' command\r\n"


def subscribed_refusal(name: str) -> bytes:
    return (f"-ERR Can't execute '{name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT "
            f"/ RESET are allowed in this context\r\n").encode()


def info_field(conn, section: str, name: str) -> str:
    text = conn.execute("INFO", section).decode()
    rows = dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)
    return rows[name]


# --- Authentication, unknown command, arity, protected, no-multi, maxmemory ------------------

def auth_and_memory_scenario(server) -> list:
    stranger, admin, subscriber = server.raw(), server.raw(), server.raw()
    seen = [stranger.execute_raw("NOSUCH", "a"),       # unknown before NOAUTH
            stranger.execute_raw("GET"),               # arity before NOAUTH
            stranger.execute_raw("DEBUG", "SLEEP", "0"),  # protected before NOAUTH
            stranger.execute_raw("SET", "k", "v"),     # NOAUTH before -OOM
            stranger.execute_raw("MULTI")]             # NOAUTH
    assert admin.execute("AUTH", "pw") == b"OK"
    seen += [admin.execute_raw("SET", "k"),            # arity before -OOM
             admin.execute_raw("SET", "k", "v"),       # -OOM
             admin.execute_raw("GET", "k"),            # not denyoom: runs
             admin.execute_raw("MULTI"),
             admin.execute_raw("SAVE"),                # no-multi before -OOM
             admin.execute_raw("GET", "k"),            # inside MULTI everything is -OOM
             admin.execute_raw("EXEC")]
    # -OOM comes before the RESP2 subscribed context.
    assert subscriber.execute("AUTH", "pw") == b"OK"
    subscriber.send_command("SUBSCRIBE", "ch")
    seen += [subscriber.read_reply_bytes(), subscriber.execute_raw("SET", "k", "v"),
             subscriber.execute_raw("GET", "k")]
    return seen


def test_auth_arity_protected_multi_and_oom(server_factory):
    directives = [("requirepass", "pw"), ("maxmemory", "1"), ("enable-debug-command", "no")]
    got = {name: auth_and_memory_scenario(server_factory(*directives, binary=binary()))
           for name, binary in SERVERS.items()}
    assert got["keywarden"] == got["redis"]
    redis = got["redis"]
    assert redis[0].startswith(b"-ERR unknown command 'NOSUCH'")
    assert redis[1] == GET_ARITY
    assert redis[2].startswith(b"-ERR DEBUG command not allowed.")
    assert redis[3] == NOAUTH
    assert redis[5] == SET_ARITY
    assert redis[6] == OOM
    assert redis[9] == NOT_IN_MULTI
    assert redis[10] == OOM
    assert redis[-2] == OOM
    assert redis[-1] == subscribed_refusal("get")


# --- CLIENT PAUSE comes last: errors found before it are replied at once ---------------------

def pause_scenario(server) -> list:
    admin, writer, stranger = server.admin(), server.admin(), server.raw()
    seen = [admin.execute_raw("CLIENT", "PAUSE", "60000", "WRITE")]
    # Each of these would be held if it were valid; refused, it is answered at once (a held
    # command would leave read_reply_bytes waiting until its timeout).
    seen += [writer.execute_raw("SET", "k"), writer.execute_raw("NOSUCH", "k"),
             stranger.execute_raw("SET", "k", "v"),
             writer.execute_raw("MULTI"), writer.execute_raw("SET", "k"),
             writer.execute_raw("EXEC")]
    writer.send_command("SET", "k", "v")  # valid: held until the pause ends
    seen.append(info_field(admin, "clients", "blocked_clients"))
    seen.append(admin.execute_raw("CLIENT", "UNPAUSE"))
    seen.append(writer.read_reply_bytes())
    return seen


def test_pause_holds_only_what_passed_every_other_check(server_factory):
    got = {name: pause_scenario(server_factory(("requirepass", "pw"), binary=binary()))
           for name, binary in SERVERS.items()}
    assert got["keywarden"] == got["redis"]
    redis = got["redis"]
    assert redis[1] == SET_ARITY
    assert redis[3] == NOAUTH
    assert redis[6].startswith(b"-EXECABORT")


# --- -LOADING comes after authentication, arity and the subscribed context -------------------

def make_dump(directory: str) -> str:
    """An RDB file of 20000 small keys, written by keywarden; returns its path."""
    server = start_server(directives=[("dir", directory)])
    try:
        c = server.client()
        c.mset({f"k{i}": str(i) for i in range(20000)})
        assert c.save()
    finally:
        server.cleanup()
    return os.path.join(directory, "dump.rdb")


def loading_scenario(server) -> list:
    stranger, client, subscriber = server.raw(timeout=30), server.raw(timeout=30), server.raw(
        timeout=30)
    seen = [stranger.execute_raw("GET", "k1"),   # NOAUTH before -LOADING
            stranger.execute_raw("GET"),         # arity before NOAUTH and -LOADING
            stranger.execute_raw("NOSUCH")]
    assert client.execute("AUTH", "pw") == b"OK"
    seen += [client.execute_raw("GET", "k1"),
             client.execute_raw("SET", "k"),     # arity before -LOADING
             client.execute_raw("MULTI"),
             client.execute_raw("GET", "k1"),    # refused: the transaction is aborted
             client.execute_raw("EXEC")]
    assert subscriber.execute("AUTH", "pw") == b"OK"
    subscriber.send_command("SUBSCRIBE", "ch")
    seen += [subscriber.read_reply_bytes(),
             subscriber.execute_raw("GET", "k1"),  # the subscribed context before -LOADING
             subscriber.execute_raw("PING")]       # allowed while subscribed, not while loading
    # All of it happened during the load.
    assert info_field(client, "persistence", "loading") == "1"
    return seen


def test_loading_comes_after_auth_arity_and_the_subscribed_context(server_factory, tmp_path):
    dump = make_dump(str(tmp_path))
    got = {}
    for name, binary in SERVERS.items():
        directory = tmp_path / name
        directory.mkdir()
        shutil.copy(dump, directory / "dump.rdb")
        server = server_factory(("dir", str(directory)), ("requirepass", "pw"),
                                ("key-load-delay", "200"),
                                ("loading-process-events-interval-bytes", "1024"),
                                binary=binary())
        got[name] = loading_scenario(server)
    assert got["keywarden"] == got["redis"]
    redis = got["redis"]
    assert redis[0] == NOAUTH
    assert redis[1] == GET_ARITY
    assert redis[3] == LOADING
    assert redis[4] == SET_ARITY
    assert redis[6] == LOADING
    assert redis[7].startswith(b"-EXECABORT")
    assert redis[9] == subscribed_refusal("get")
    assert redis[10] == LOADING


# --- -BUSY comes after arity, authentication and no-multi; no -OOM during a busy script ----------

def busy_scenario(server) -> list:
    runner, other, stranger = server.admin(), server.admin(), server.raw()
    assert other.execute("CONFIG", "SET", "busy-reply-threshold", "100") == b"OK"
    runner.send_command("EVAL", "local i = 0 while true do i = i + 1 end", "0")
    assert wait_until(lambda: other.execute_raw("PING").startswith(b"-BUSY"))
    seen = [other.execute_raw("GET"), other.execute_raw("NOSUCH"),
            stranger.execute_raw("GET", "k"),    # NOAUTH before -BUSY
            other.execute_raw("SET", "k", "v"),  # over maxmemory, but nothing is refused for
                                                 # memory while a script is busy: -BUSY
            other.execute_raw("MULTI"),          # allow-busy
            other.execute_raw("SAVE"),           # no-multi before -BUSY
            other.execute_raw("GET", "k"),       # -BUSY
            other.execute_raw("DISCARD"),
            other.execute_raw("SCRIPT", "KILL"),
            runner.read_reply_bytes()]
    assert other.execute("CONFIG", "SET", "busy-reply-threshold", "5000") == b"OK"
    return seen


def test_busy_comes_after_arity_auth_and_no_multi(server_factory):
    directives = [("requirepass", "pw"), ("maxmemory", "1")]
    got = {name: busy_scenario(server_factory(*directives, binary=binary()))
           for name, binary in SERVERS.items()}
    assert got["keywarden"] == got["redis"]
    redis = got["redis"]
    assert redis[0] == GET_ARITY
    assert redis[2] == NOAUTH
    assert redis[3].startswith(b"-BUSY")
    assert redis[5] == NOT_IN_MULTI
    assert redis[6].startswith(b"-BUSY")


# --- -MISCONF comes before the subscribed context ---------------------------------------------

def misconf_scenario(server, gone: str) -> list:
    conn, subscriber = server.raw(), server.raw()
    os.rmdir(gone)  # the child cannot create its temp file any more
    assert conn.execute("BGSAVE") == b"Background saving started"
    assert wait_until(lambda: info_field(conn, "persistence", "rdb_last_bgsave_status") == "err")
    subscriber.send_command("SUBSCRIBE", "ch")
    seen = [subscriber.read_reply_bytes(),
            subscriber.execute_raw("SET", "a", "b"),  # -MISCONF before the subscribed context
            subscriber.execute_raw("GET", "a"),
            subscriber.execute_raw("PING"),
            conn.execute_raw("SET", "a"),             # arity before -MISCONF
            conn.execute_raw("MULTI"),
            conn.execute_raw("SET", "a", "b"),
            conn.execute_raw("EXEC")]
    return seen


def test_misconf_comes_before_the_subscribed_context(server_factory, tmp_path):
    got = {}
    for name, binary in SERVERS.items():
        gone = tmp_path / name
        gone.mkdir()
        server = server_factory(("dir", str(gone)), ("save", "3600 1"), binary=binary())
        got[name] = misconf_scenario(server, str(gone))
    assert got["keywarden"] == got["redis"]
    redis = got["redis"]
    assert redis[1].startswith(b"-MISCONF ")
    assert redis[2] == subscribed_refusal("get")
    assert redis[3].startswith(b"-MISCONF ")
    assert redis[4] == SET_ARITY
    assert redis[6].startswith(b"-MISCONF ")
    assert redis[7].startswith(b"-EXECABORT")
