"""Process administration over the wire: SHUTDOWN, DEBUG, MONITOR, SLOWLOG, LATENCY, TIME,
LASTSAVE, FUNCTION FLUSH and COMMAND, each run against keywarden and a stock redis-server and
compared (timestamps, durations, client ports and addresses normalised away).

SHUTDOWN SAVE writes the RDB file; one that cannot save fails unless FORCE is given.
"""

import re
import subprocess
import time

import pytest

from conftest import RawConnection, ReplyError


@pytest.fixture(params=["keywarden", "redis"])
def server(request):
    """The shared keywarden server, then the shared reference redis-server."""
    name = "keywarden" if request.param == "keywarden" else "reference_redis"
    return request.getfixturevalue(name)



def replies(server, commands):
    conn = server.raw()
    return [conn.execute(*command) for command in commands]


def same_replies(keywarden, reference_redis, commands):
    ours = replies(keywarden, commands)
    theirs = replies(reference_redis, commands)
    for command, a, b in zip(commands, ours, theirs):
        assert a == b, f"{command}: keywarden {a!r} != redis {b!r}"
        assert type(a) is type(b), f"{command}: reply types differ: {type(a)} vs {type(b)}"


def wait_for_exit(server, timeout=5.0):
    try:
        return server.proc.wait(timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{server.name} still running {timeout}s after SHUTDOWN")


# --------------------------------------------------------------------------------------------
# SHUTDOWN
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("options", [(), ("NOSAVE",), ("NOW", "FORCE"), ("nosave", "now")])
def test_shutdown_closes_the_connection_without_a_reply(make_server, options):
    server = make_server()
    conn = server.raw()
    # What is pipelined after SHUTDOWN never runs.
    conn.send_command("SHUTDOWN", *options)
    conn.send_command("PING")
    assert conn.read_until_close(timeout=5) == b""
    assert wait_for_exit(server) == 0


def test_shutdown_option_errors_match_redis(keywarden, reference_redis):
    same_replies(keywarden, reference_redis, [
        ("SHUTDOWN", "ABORT"),
        ("SHUTDOWN", "abort", "abort"),
        ("SHUTDOWN", "foo"),
        ("SHUTDOWN", "SAVE", "NOSAVE"),
        ("SHUTDOWN", "NOSAVE", "ABORT"),
        ("SHUTDOWN", "NOW", "ABORT"),
        ("SHUTDOWN", "FORCE", "ABORT"),
        ("SHUTDOWN", "NOW", "bad"),
    ])
    assert keywarden.raw().execute("PING") == b"PONG"


def test_shutdown_save_fails_when_the_save_fails_unless_forced(server_factory, tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    server = server_factory(("dir", str(gone)))
    gone.rmdir()  # the save cannot create its temp file any more
    conn = server.raw()
    assert conn.execute("SHUTDOWN", "SAVE") == ReplyError(
        b"ERR Errors trying to SHUTDOWN. Check logs.")
    assert conn.execute("PING") == b"PONG"
    assert server.alive()
    assert "Error trying to save the DB, can't exit" in server.log()
    conn.send_command("SHUTDOWN", "SAVE", "FORCE")
    assert conn.read_until_close(timeout=5) == b""
    assert wait_for_exit(server) == 0


def test_shutdown_save_writes_the_rdb(server_factory, tmp_path):
    server = server_factory(("dir", str(tmp_path)))
    conn = server.raw()
    assert conn.execute("SET", "k", "v") == b"OK"
    conn.send_command("SHUTDOWN", "SAVE")
    assert conn.read_until_close(timeout=5) == b""
    assert wait_for_exit(server) == 0
    assert (tmp_path / "dump.rdb").exists()


def test_other_clients_are_disconnected_by_shutdown(server_factory):
    server = server_factory()
    bystander = server.raw()
    assert bystander.execute("PING") == b"PONG"
    server.raw().send_command("SHUTDOWN", "NOSAVE")
    assert wait_for_exit(server) == 0
    assert bystander.read_until_close(timeout=5) == b""


# --------------------------------------------------------------------------------------------
# DEBUG
# --------------------------------------------------------------------------------------------

def test_debug_is_refused_when_disabled(make_server):
    server = make_server(("enable-debug-command", "no"))
    conn = server.raw()
    for command in [("DEBUG", "SLEEP", "0"), ("DEBUG", "HELP"), ("debug", "nosuch")]:
        reply = conn.execute(*command)
        assert reply == ReplyError(
            b'ERR DEBUG command not allowed. If the enable-debug-command option is set to '
            b'"local", you can run it from a local connection, otherwise you need to set this '
            b'option in the configuration file, and then restart the server.'), command
    # The arity check comes first, as in Redis.
    assert conn.execute("DEBUG") == ReplyError(
        b"ERR wrong number of arguments for 'debug' command")


@pytest.mark.parametrize("setting", ["yes", "local"])
def test_debug_is_allowed_when_enabled(make_server, setting):
    server = make_server(("enable-debug-command", setting))
    assert server.raw().execute("DEBUG", "SLEEP", "0") == b"OK"


def test_debug_errors_match_redis(keywarden, reference_redis):
    same_replies(keywarden, reference_redis, [
        ("DEBUG", "nosuch"),
        ("DEBUG", "NoSuch", "a", "b"),
        ("DEBUG", "OBJECT"),
        ("DEBUG", "OBJECT", "a", "b"),
        ("DEBUG", "OBJECT", "missing"),
        ("DEBUG", "SLEEP"),
        ("DEBUG", "SLEEP", "1", "2"),
        ("DEBUG", "SLEEP", "0"),
        ("DEBUG", "SLEEP", "abc"),
        ("DEBUG", "SLEEP", "0.001"),
        ("DEBUG", "SET-ACTIVE-EXPIRE"),
        ("DEBUG", "SET-ACTIVE-EXPIRE", "1"),
        ("DEBUG", "LOG"),
        ("DEBUG", "LOG", "hello from the tests"),
        ("DEBUG", "HELP", "extra"),
        ("DEBUG", "JMAP"),
    ])


def test_debug_help_uses_redis_wording(keywarden):
    lines = keywarden.raw().execute("DEBUG", "HELP")
    assert lines[0] == b"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert b"SLEEP <seconds>" in lines and b"OBJECT <key>" in lines
    assert lines[-2:] == [b"HELP", b"    Prints this help."]


OBJECT_LINE = re.compile(
    rb"Value at:0x[0-9a-f]+ refcount:(\d+) encoding:(\w+) serializedlength:(\d+) "
    rb"lru:(\d+) lru_seconds_idle:(\d+)$")


@pytest.mark.parametrize("value, refcount, encoding, length", [
    (b"bar", b"1", b"embstr", b"4"),
    (b"123", b"2147483647", b"int", b"2"),
    (b"-5", b"1", b"int", b"2"),
    (b"40000", b"1", b"int", b"5"),
    (b"12345678901", b"1", b"int", b"12"),
    # 50 bytes with no repeated triple, so that Redis's LZF compression gives up.
    (bytes(33 + i * 7 % 90 for i in range(50)), b"1", b"raw", b"51"),
])
def test_debug_object_line(server, value, refcount, encoding, length):
    conn = server.raw()
    assert conn.execute("SET", "k", value) == b"OK"
    match = OBJECT_LINE.match(conn.execute("DEBUG", "OBJECT", "k"))
    assert match, "unexpected DEBUG OBJECT line"
    assert match.group(1, 2, 3) == (refcount, encoding, length)
    # A shared integer (refcount INT_MAX) is one object for the whole server: its idle time is
    # that of its last use anywhere, which on a long-lived server can be seconds.
    if refcount != b"2147483647":
        assert int(match.group(5)) <= 1


def test_debug_object_sees_an_expired_key_without_deleting_it(server):
    conn = server.raw()
    assert conn.execute("DEBUG", "SET-ACTIVE-EXPIRE", "0") == b"OK"
    try:
        conn.execute("SET", "gone", "v", "PX", "1")
        conn.execute("DEBUG", "SLEEP", "0.01")
        assert OBJECT_LINE.match(conn.execute("DEBUG", "OBJECT", "gone"))
        assert conn.execute("DBSIZE") == 1
    finally:
        conn.execute("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def test_set_active_expire_0_keeps_an_untouched_expired_key_counted(server):
    conn = server.raw()
    assert conn.execute("DEBUG", "SET-ACTIVE-EXPIRE", "0") == b"OK"
    try:
        conn.execute("SET", "volatile", "v", "PX", "1")
        conn.execute("SET", "stable", "v")
        conn.execute("DEBUG", "SLEEP", "0.01")
        # Several cron ticks pass (hz 10): with active expiry off none of them may reclaim it.
        time.sleep(0.35)
        assert conn.execute("DBSIZE") == 2
        # Touching it expires it lazily.
        assert conn.execute("GET", "volatile") is None
        assert conn.execute("DBSIZE") == 1
    finally:
        assert conn.execute("DEBUG", "SET-ACTIVE-EXPIRE", "1") == b"OK"


def test_set_active_expire_1_lets_the_cron_reclaim_again(server):
    conn = server.raw()
    conn.execute("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    conn.execute("SET", "volatile", "v", "PX", "1")
    conn.execute("DEBUG", "SLEEP", "0.01")
    assert conn.execute("DEBUG", "SET-ACTIVE-EXPIRE", "1") == b"OK"
    deadline = time.monotonic() + 10
    while conn.execute("DBSIZE") != 0:
        assert time.monotonic() < deadline, "active expiry did not resume"
        time.sleep(0.02)


# --------------------------------------------------------------------------------------------
# MONITOR
# --------------------------------------------------------------------------------------------

def normalise_monitor_line(line: bytes) -> bytes:
    line = re.sub(rb"^\d+\.\d{6} ", b"T ", line)
    return re.sub(rb"\[(\d+) 127\.0\.0\.1:\d+\]", rb"[\1 PEER]", line)


MONITORED = [
    ("SET", "k", "v"),
    ("nosuch", "x"),                      # refused: not shown
    ("GET",),                             # refused (arity): not shown
    ("SELECT", "3"),                      # shown with the database it selected
    ("GET", "k"),
    ("CONFIG", "GET", "maxmemory"),       # admin: not shown
    ("SLOWLOG", "LEN"),                   # admin: not shown
    ("DEBUG", "SLEEP", "0"),              # admin: not shown
    ("SET", "n", "123"),
    ("ECHO", 'q"b\\s\n\r\t\x07\x08\x01\xff'),
    ("AUTH", "secret"),                   # fails, but ran: shown redacted
    ("HELLO", "2", "AUTH", "default", "pw", "SETNAME", "app"),  # shown redacted
    ("SELECT", "0"),
    ("PING",),
]


def monitor_transcript(server):
    monitor = server.raw()
    assert monitor.execute("MONITOR") == b"OK"
    client = server.raw()
    for command in MONITORED:
        client.execute(*command)
    # A monitor's own commands are fed to it as well, after its own reply.
    monitor.send_command("PING")
    lines = [monitor.read_reply() for _ in range(11)]
    assert lines[-2:] == [b"PONG", lines[-1]]
    return [normalise_monitor_line(line) for line in lines[:-2]] + [
        normalise_monitor_line(lines[-1])]


def test_monitor_lines_match_redis(keywarden, reference_redis):
    ours = monitor_transcript(keywarden)
    assert ours == monitor_transcript(reference_redis)
    assert ours == [
        b'T [0 PEER] "SET" "k" "v"',
        b'T [3 PEER] "SELECT" "3"',
        b'T [3 PEER] "GET" "k"',
        b'T [3 PEER] "SET" "n" "123"',
        b'T [3 PEER] "ECHO" "q\\"b\\\\s\\n\\r\\t\\a\\b\\x01\\xc3\\xbf"',
        b'T [3 PEER] "AUTH" "(redacted)"',
        b'T [3 PEER] "HELLO" "2" "AUTH" "(redacted)" "(redacted)" "SETNAME" "app"',
        b'T [0 PEER] "SELECT" "0"',
        b'T [0 PEER] "PING"',
        b'T [0 PEER] "PING"',
    ]


def test_monitor_twice_is_ignored_without_reply(server):
    monitor = server.raw()
    assert monitor.execute("MONITOR") == b"OK"
    monitor.send_command("MONITOR")
    monitor.send_command("PING")
    assert monitor.read_reply() == b"PONG"


def test_monitor_shows_unix_socket_clients_by_path(make_server, tmp_path):
    path = str(tmp_path / "kw.sock")
    server = make_server(("unixsocket", path))
    monitor = server.raw()
    assert monitor.execute("MONITOR") == b"OK"
    with RawConnection(unix_path=path) as client:
        assert client.execute("SET", "k", "v") == b"OK"
    line = monitor.read_reply()
    assert re.fullmatch(rb"\d+\.\d{6} \[0 unix:" + re.escape(path.encode()) +
                        rb'\] "SET" "k" "v"', line), line


# Transactions: Redis 7.0 feeds MONITOR from call(), once a command has run, so a transaction
# shows as MULTI, each queued command as EXEC runs it (with the database it left selected, the
# admin ones left out), then EXEC; a script inside it as EVAL, then its commands as "lua".
TRANSACTION = [
    ("MULTI",), ("SET", "k", "v"), ("SELECT", "2"), ("GET", "k"),
    ("CONFIG", "GET", "maxmemory"),       # admin: run, not shown
    ("AUTH", "pw"),                       # fails, shown redacted
    ("EVAL", "return redis.call('set', KEYS[1], 'x')", "1", "k"),
    ("SELECT", "0"), ("EXEC",),
    ("MULTI",), ("GET",), ("EXEC",),      # aborted by a queueing error: nothing ran
    ("MULTI",), ("SET", "a", "1"), ("DISCARD",),
    ("WATCH", "w"), ("SET", "w", "1"), ("MULTI",), ("GET", "w"), ("EXEC",),  # watch failed
    ("MULTI",), ("INCR", "n"), ("LPUSH", "n", "x"), ("EXEC",),  # a command failing inside
    ("ECHO", "end"),
]


def transaction_monitor_transcript(server):
    monitor, client = server.raw(), server.raw()
    assert monitor.execute("MONITOR") == b"OK"
    replies = [client.execute(*command) for command in TRANSACTION]
    lines = []
    while not lines or b'"ECHO" "end"' not in lines[-1]:
        lines.append(normalise_monitor_line(monitor.read_reply()))
    return replies, [line.replace(b"[0 lua]", b"[0 PEER-lua]") for line in lines]


def test_monitor_shows_transactions_as_redis(keywarden, reference_redis):
    ours = transaction_monitor_transcript(keywarden)
    assert ours == transaction_monitor_transcript(reference_redis)
    assert ours[1][:9] == [
        b'T [0 PEER] "MULTI"',
        b'T [0 PEER] "SET" "k" "v"',
        b'T [2 PEER] "SELECT" "2"',
        b'T [2 PEER] "GET" "k"',
        b'T [2 PEER] "AUTH" "(redacted)"',
        b'T [2 PEER] "EVAL" "return redis.call(\'set\', KEYS[1], \'x\')" "1" "k"',
        b'T [2 lua] "set" "k" "x"',
        b'T [0 PEER] "SELECT" "0"',
        b'T [0 PEER] "EXEC"',
    ]
    assert ours[1][9:] == [
        b'T [0 PEER] "MULTI"', b'T [0 PEER] "EXEC"',
        b'T [0 PEER] "MULTI"', b'T [0 PEER] "DISCARD"',
        b'T [0 PEER] "WATCH" "w"', b'T [0 PEER] "SET" "w" "1"', b'T [0 PEER] "MULTI"',
        b'T [0 PEER] "EXEC"',
        b'T [0 PEER] "MULTI"', b'T [0 PEER] "INCR" "n"', b'T [0 PEER] "LPUSH" "n" "x"',
        b'T [0 PEER] "EXEC"',
        b'T [0 PEER] "ECHO" "end"',
    ]


# --------------------------------------------------------------------------------------------
# SLOWLOG
# --------------------------------------------------------------------------------------------

def normalise_slowlog(entries):
    """Replace ids by their offsets, timestamps, durations and ports by placeholders."""
    base = entries[-1][0] if entries else 0
    out = []
    for entry_id, stamp, duration, args, peer, name in entries:
        assert isinstance(stamp, int) and abs(stamp - time.time()) < 60
        assert isinstance(duration, int) and duration >= 0
        out.append((entry_id - base, args, re.sub(rb":\d+$", b":P", peer), name))
    return out


def slowlog_transcript(server):
    conn = server.raw()
    assert conn.execute("SLOWLOG", "RESET") == b"OK"
    assert conn.execute("CONFIG", "SET", "slowlog-log-slower-than", "0") == b"OK"
    try:
        conn.execute("CLIENT", "SETNAME", "slowpoke")
        conn.execute("SET", "k", "v")
        conn.execute("nosuch")                      # refused: never logged
        conn.execute("GET")                         # refused: never logged
        conn.execute("AUTH", "secret")              # ran (and failed): logged, redacted
        conn.execute("SET", "big", "x" * 200)       # long argument trimmed
        conn.execute("DEL", *[f"k{i}" for i in range(40)])  # many arguments trimmed
        length = conn.execute("SLOWLOG", "LEN")
        entries = conn.execute("SLOWLOG", "GET", "-1")
        two = conn.execute("SLOWLOG", "GET", "2")
        default = conn.execute("SLOWLOG", "GET")
    finally:
        conn.execute("CONFIG", "SET", "slowlog-log-slower-than", "10000")
    return length, normalise_slowlog(entries), len(default), [entry[3] for entry in two]


def test_slowlog_entries_match_redis(keywarden, reference_redis):
    ours = slowlog_transcript(keywarden)
    assert ours == slowlog_transcript(reference_redis)
    length, entries, default_count, newest_two = ours
    # Each command is logged once it has run, so a SLOWLOG command sees the log without itself.
    assert length == 6
    assert len(entries) == 7 and default_count == 9
    assert newest_two == [[b"SLOWLOG", b"GET", b"-1"], [b"SLOWLOG", b"LEN"]]
    args = [entry[1] for entry in entries]
    assert args[0] == [b"SLOWLOG", b"LEN"]
    assert args[1][:2] == [b"DEL", b"k0"] and len(args[1]) == 32
    assert args[1][-1] == b"... (10 more arguments)"
    assert args[2] == [b"SET", b"big", b"x" * 128 + b"... (72 more bytes)"]
    assert args[3] == [b"AUTH", b"(redacted)"]
    assert args[4] == [b"SET", b"k", b"v"]
    assert args[5:] == [[b"CLIENT", b"SETNAME", b"slowpoke"],
                        [b"CONFIG", b"SET", b"slowlog-log-slower-than", b"0"]]
    assert [entry[0] for entry in entries] == [6, 5, 4, 3, 2, 1, 0]
    assert entries[0][3] == b"slowpoke" and entries[0][2] == b"127.0.0.1:P"


def transaction_slowlog_transcript(server):
    conn = server.raw()
    assert conn.execute("CONFIG", "SET", "slowlog-log-slower-than", "0") == b"OK"
    try:
        conn.execute("CLIENT", "SETNAME", "tx")
        assert conn.execute("SLOWLOG", "RESET") == b"OK"
        for command in TRANSACTION:
            conn.execute(*command)
        entries = conn.execute("SLOWLOG", "GET", "-1")
    finally:
        conn.execute("CONFIG", "SET", "slowlog-log-slower-than", "10000")
    return normalise_slowlog(entries)


def test_slowlog_logs_commands_inside_exec_and_scripts_as_redis(keywarden, reference_redis):
    """Each command EXEC runs is logged as it runs (EXEC itself never is: skip-slowlog), and a
    script's commands for the Lua client, which has no name and the address ?:0."""
    ours = transaction_slowlog_transcript(keywarden)
    assert ours == transaction_slowlog_transcript(reference_redis)
    logged = [(entry[1], entry[2], entry[3]) for entry in reversed(ours)]
    peer = b"127.0.0.1:P"
    assert logged[:10] == [
        ([b"SLOWLOG", b"RESET"], peer, b"tx"),
        ([b"MULTI"], peer, b"tx"),
        ([b"SET", b"k", b"v"], peer, b"tx"),
        ([b"SELECT", b"2"], peer, b"tx"),
        ([b"GET", b"k"], peer, b"tx"),
        ([b"CONFIG", b"GET", b"maxmemory"], peer, b"tx"),
        ([b"AUTH", b"(redacted)"], peer, b"tx"),
        ([b"set", b"k", b"x"], b"?:P", b""),
        ([b"EVAL", b"return redis.call('set', KEYS[1], 'x')", b"1", b"k"], peer, b"tx"),
        ([b"SELECT", b"0"], peer, b"tx"),
    ]
    # An aborted transaction, a discarded one and one whose watch failed ran nothing.
    assert [entry[0] for entry in logged[10:]] == [
        [b"MULTI"], [b"MULTI"], [b"DISCARD"], [b"WATCH", b"w"], [b"SET", b"w", b"1"],
        [b"MULTI"], [b"MULTI"], [b"INCR", b"n"], [b"LPUSH", b"n", b"x"], [b"ECHO", b"end"]]


def test_slowlog_errors_match_redis(keywarden, reference_redis):
    same_replies(keywarden, reference_redis, [
        ("SLOWLOG",),
        ("SLOWLOG", "GET", "x"),
        ("SLOWLOG", "GET", "-2"),
        ("SLOWLOG", "GET", "99999999999999999999"),
        ("SLOWLOG", "GET", "1", "2"),
        ("SLOWLOG", "LEN", "x"),
        ("SLOWLOG", "RESET", "x"),
        ("SLOWLOG", "nosuch"),
        ("SLOWLOG", "HELP"),
        ("SLOWLOG", "RESET"),
        ("SLOWLOG", "GET", "0"),
        ("SLOWLOG", "LEN"),
    ])


# --------------------------------------------------------------------------------------------
# LATENCY
# --------------------------------------------------------------------------------------------

def latency_transcript(server):
    conn = server.raw()
    conn.execute("LATENCY", "RESET")
    assert conn.execute("CONFIG", "SET", "latency-monitor-threshold", "10") == b"OK"
    try:
        assert conn.execute("DEBUG", "SLEEP", "0.05") == b"OK"
        latest = conn.execute("LATENCY", "LATEST")
        history = conn.execute("LATENCY", "HISTORY", "command")
        wrong_case = conn.execute("LATENCY", "HISTORY", "COMMAND")
        graph = conn.execute("LATENCY", "GRAPH", "command")
        doctor = conn.execute("LATENCY", "DOCTOR")
        reset = conn.execute("LATENCY", "RESET", "COMMAND", "nosuch")
        after = conn.execute("LATENCY", "LATEST")
    finally:
        conn.execute("CONFIG", "SET", "latency-monitor-threshold", "0")
    [[name, stamp, latency, worst]] = latest
    assert name == b"command" and 50 <= latency <= worst < 1000
    assert abs(stamp - time.time()) < 60
    assert history == [[stamp, latency]]
    # Latencies differ from run to run, and the sample's age label may read 0s or 1s.
    graph = re.sub(rb"\d+", b"N", graph)
    doctor = re.sub(rb"\d+ms", b"Nms", doctor)
    return wrong_case, graph, doctor, reset, after


def test_latency_with_debug_sleep_matches_redis(keywarden, reference_redis):
    ours = latency_transcript(keywarden)
    assert ours == latency_transcript(reference_redis)
    wrong_case, graph, doctor, reset, after = ours
    assert wrong_case == [] and reset == 1 and after == []
    assert graph.startswith(b"command - high N ms, low N ms (all time high N ms)\n" + b"-" * 80)
    assert b"1. command: 1 latency spikes" in doctor


def test_latency_replies_without_samples_match_redis(keywarden, reference_redis):
    same_replies(keywarden, reference_redis, [
        ("LATENCY", "RESET"),
        ("LATENCY", "LATEST"),
        ("LATENCY", "HISTORY", "command"),
        ("LATENCY", "GRAPH", "command"),
        ("LATENCY", "DOCTOR"),
        ("LATENCY",),
        ("LATENCY", "LATEST", "x"),
        ("LATENCY", "HISTORY"),
        ("LATENCY", "GRAPH"),
        ("LATENCY", "RESET", "a", "b"),
        ("LATENCY", "nosuch"),
    ])


def test_latency_doctor_is_verbatim_in_resp3(server):
    conn = server.raw()
    conn.execute("HELLO", "3")
    doctor = conn.execute("LATENCY", "DOCTOR")
    assert doctor.format == b"txt"
    assert doctor.startswith(b"I'm sorry, Dave")


# --------------------------------------------------------------------------------------------
# TIME, LASTSAVE, FUNCTION FLUSH
# --------------------------------------------------------------------------------------------

def test_time_and_lastsave(server):
    conn = server.raw()
    seconds, micros = conn.execute("TIME")
    assert isinstance(seconds, bytes) and abs(int(seconds) - time.time()) < 5
    assert 0 <= int(micros) < 1_000_000
    lastsave = conn.execute("LASTSAVE")
    assert isinstance(lastsave, int) and lastsave <= int(seconds)


def test_time_lastsave_and_function_flush_replies_match_redis(keywarden, reference_redis):
    same_replies(keywarden, reference_redis, [
        ("TIME", "x"),
        ("LASTSAVE", "x"),
        ("FUNCTION",),
        ("FUNCTION", "FLUSH"),
        ("FUNCTION", "FLUSH", "ASYNC"),
        ("function", "flush", "sync"),
        ("FUNCTION", "FLUSH", "x"),
        ("FUNCTION", "FLUSH", "a", "b"),
        ("FUNCTION", "nosuch"),
    ])


# --------------------------------------------------------------------------------------------
# COMMAND
# --------------------------------------------------------------------------------------------

ADMIN_COMMANDS = [
    "shutdown", "debug", "monitor", "slowlog", "slowlog|get", "slowlog|len", "slowlog|reset",
    "slowlog|help", "latency", "latency|latest", "latency|history", "latency|reset",
    "latency|doctor", "latency|graph", "latency|help", "time", "lastsave", "function|flush",
    "function|help", "command", "command|count", "command|info", "command|docs",
    "command|list", "command|getkeys", "command|getkeysandflags", "command|help",
]


@pytest.mark.parametrize("name", ADMIN_COMMANDS)
def test_command_info_matches_redis_for_admin_commands(keywarden, reference_redis, name):
    [ours] = keywarden.raw().execute("COMMAND", "INFO", name)
    [theirs] = reference_redis.raw().execute("COMMAND", "INFO", name)
    # Name, arity, flags, key positions and ACL categories; tips are not in our table.
    assert ours[:7] == theirs[:7]
    docs_ours = keywarden.raw().execute("COMMAND", "DOCS", name)
    docs_theirs = reference_redis.raw().execute("COMMAND", "DOCS", name)
    fields = lambda docs: {k: v for k, v in zip(docs[1][::2], docs[1][1::2])
                           if k in (b"summary", b"since", b"group", b"complexity")}
    assert fields(docs_ours) == fields(docs_theirs)


def test_command_getkeys_errors_match_redis(keywarden, reference_redis):
    same_replies(keywarden, reference_redis, [
        ("COMMAND", "GETKEYS"),
        ("COMMAND", "GETKEYS", "nosuch", "a"),
        ("COMMAND", "GETKEYS", "ping", "x"),
        ("COMMAND", "GETKEYS", "get", "a", "b"),
        ("COMMAND", "GETKEYS", "get", "a"),
        ("COMMAND", "GETKEYS", "mset", "a", "1", "b", "2"),
        ("COMMAND", "GETKEYS", "config", "get", "x"),
        ("COMMAND", "GETKEYS", "config", "nosuch"),
        ("COMMAND", "GETKEYSANDFLAGS", "get", "a"),
        # MOVABLEKEYS commands: keys counted by numkeys, SORT's STORE.
        ("COMMAND", "GETKEYS", "sintercard", "2", "a", "b", "LIMIT", "3"),
        ("COMMAND", "GETKEYS", "sintercard", "3", "a", "b"),
        ("COMMAND", "GETKEYS", "lmpop", "2", "a", "b", "left"),
        ("COMMAND", "GETKEYS", "lmpop", "-1", "a", "left"),
        ("COMMAND", "GETKEYS", "blmpop", "0", "2", "a", "b", "left"),
        ("COMMAND", "GETKEYS", "zunion", "2", "a", "b"),
        ("COMMAND", "GETKEYS", "zunion", "x", "a", "b"),
        ("COMMAND", "GETKEYS", "zunionstore", "d", "2", "a", "b", "WEIGHTS", "1", "2"),
        ("COMMAND", "GETKEYS", "zinterstore", "d", "0", "a"),
        ("COMMAND", "GETKEYS", "zdiffstore", "d", "1", "a"),
        ("COMMAND", "GETKEYS", "zintercard", "2", "a", "b"),
        ("COMMAND", "GETKEYS", "zmpop", "1", "a", "min"),
        ("COMMAND", "GETKEYS", "bzmpop", "0", "1", "a", "min"),
        ("COMMAND", "GETKEYS", "sort", "k", "STORE", "d", "BY", "w_*", "GET", "x"),
        ("COMMAND", "GETKEYS", "sort", "k", "STORE", "d", "STORE", "e"),
        ("COMMAND", "GETKEYS", "sort_ro", "k", "STORE", "d"),
        ("COMMAND", "COUNT", "x"),
        ("COMMAND", "LIST", "FILTERBY", "x", "y"),
        ("COMMAND", "LIST", "FILTERBY", "MODULE", "x"),
        ("COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuch"),
        ("COMMAND", "LIST", "FILTERBY", "PATTERN", "getd*"),
        ("COMMAND", "INFO", "nosuch", "get|x"),
        ("COMMAND", "DOCS", "nosuch"),
        ("COMMAND", "HELP"),
        ("COMMAND", "nosuch"),
    ])


def test_command_count_matches_the_table(keywarden):
    conn = keywarden.raw()
    count = conn.execute("COMMAND", "COUNT")
    assert len(conn.execute("COMMAND")) == count
    assert len(conn.execute("COMMAND", "INFO")) == count
    listed = conn.execute("COMMAND", "LIST")
    assert b"slowlog|get" in listed and b"command" in listed
    assert len([name for name in listed if b"|" not in name]) == count


# Commands whose secrets Redis 7.0 redacts in the slow log (each command as it ran).
SECRETS = [
    ("ACL", "SETUSER", "alice", "on", ">secret", "~k*"),
    ("ACL", "SETUSER", "bob"),
    ("ACL", "GETUSER", "alice"),
    ("CONFIG", "SET", "masterauth", "pw", "maxclients", "100"),
    ("CONFIG", "SET", "maxclients", "100", "requirepass", ""),
    ("CONFIG", "SET", "nosuch", "1", "masterauth", "pw"),
    ("MIGRATE", "127.0.0.1", "1", "", "0", "10", "COPY", "AUTH2", "u", "p", "KEYS", "a"),
    ("MIGRATE", "127.0.0.1", "1", "k", "0", "10", "AUTH", "p", "REPLACE"),
    ("MIGRATE", "127.0.0.1", "1", "k", "0", "10", "BOGUS", "AUTH", "p"),
    ("CONFIG", "SET", "masterauth", ""),
]


def test_slowlog_redacts_secrets_as_redis(keywarden, reference_redis):
    logged = {}
    for name, server in (("keywarden", keywarden), ("redis", reference_redis)):
        conn = server.raw()
        assert conn.execute("CONFIG", "SET", "slowlog-log-slower-than", "0") == b"OK"
        try:
            assert conn.execute("SLOWLOG", "RESET") == b"OK"
            for command in SECRETS:
                conn.execute(*command)
            entries = conn.execute("SLOWLOG", "GET", "-1")
            conn.execute("ACL", "DELUSER", "alice", "bob")
        finally:
            conn.execute("CONFIG", "SET", "slowlog-log-slower-than", "10000")
        logged[name] = [entry[3] for entry in reversed(entries)][1:]  # after SLOWLOG RESET
    assert logged["keywarden"] == logged["redis"]
    assert logged["redis"][0] == [b"ACL", b"SETUSER"] + [b"(redacted)"] * 4
    assert b"secret" not in repr(logged["keywarden"]).encode()
