"""INFO and CLIENT, compared with a stock redis-server 7.0.15.

INFO is compared by structure (sections, their order, the field names in each, the framing
bytes) because its values are the servers' own; the counters that do follow from the commands
sent (commandstats, errorstats, keyspace) are compared by value. CLIENT is compared reply for
reply wherever the reply does not carry addresses, ids or buffer sizes.

Tests that take the ``server`` fixture run against keywarden and against the reference, so
that every expectation written here is checked on Redis itself; keywarden-only figures (the
exact avg_ttl, keywarden_version) are skipped on Redis.
"""

from __future__ import annotations

import re
import shutil
import socket
import tempfile
import time

import pytest

from conftest import (Map, RawConnection, ReplyError, RespSet, Verbatim, encode_command,
                      redis_binary)

# Field names keywarden adds to a section, with the reason.
DELIBERATE_ADDITIONS = {
    "Server": {"keywarden_version": "which keywarden release answers beside redis_version"},
    "Stats": {"expired_subkeys": "Redis 7.4+'s count of expired hash fields (hash-field "
                                 "expiration), before expired_keys as 7.4 prints it",
              "io_uring_reads_processed": "reads made in io_uring batches (io-uring yes), "
                                          "after the io_threaded_* counters",
              "io_uring_writes_processed": "sends made in io_uring batches (io-uring yes)"},
}
# Field names Redis prints that keywarden leaves out, with the reason. Empty: every field of
# every section is printed, with Redis's idle value where the machinery does not exist yet.
DELIBERATE_OMISSIONS: dict[str, dict[str, str]] = {}

# Sections whose field names depend on what ran (commands, errors, databases): compared by
# value in their own tests.
ACTIVITY_SECTIONS = {"Commandstats", "Errorstats", "Latencystats", "Keyspace"}


@pytest.fixture(params=["keywarden", "redis"])
def server(request):
    """The test runs once against keywarden and once against the reference redis-server."""
    return request.getfixturevalue("keywarden" if request.param == "keywarden"
                                   else "reference_redis")


def is_keywarden(server) -> bool:
    with server.raw() as conn:
        return b"keywarden_version:" in conn.execute("INFO", "server")


def parse_info(text: bytes) -> dict[str, list[tuple[str, str]]]:
    """{section title: [(name, value), ...]} in the order the server printed them."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current = None
    for line in text.decode().split("\r\n"):
        if line.startswith("# "):
            current = line[2:]
            sections[current] = []
        elif line:
            name, _, value = line.partition(":")
            sections[current].append((name, value))
    return sections


def info_fields(conn, *sections) -> dict[str, str]:
    return {name: value for fields in parse_info(conn.execute("INFO", *sections)).values()
            for name, value in fields}


def client_fields(line: bytes) -> list[tuple[str, str]]:
    return [tuple(item.split("=", 1)) for item in line.decode().rstrip("\n").split(" ")]


def client_line(conn) -> dict[str, str]:
    return dict(client_fields(conn.execute("CLIENT", "INFO")))


def require(reply):
    """Skips the test when a command of a family keywarden does not have yet is refused."""
    if isinstance(reply, ReplyError) and reply.startswith(b"ERR unknown command"):
        pytest.skip(f"not implemented yet: {bytes(reply)[:60]!r}")
    return reply


def wait_until(predicate, what, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


# --------------------------------------------------------------------------------------------
# INFO: structure against the reference
# --------------------------------------------------------------------------------------------

def test_info_everything_has_every_section_and_field_of_redis(keywarden, reference_redis):
    ours = parse_info(keywarden.raw().execute("INFO", "everything"))
    theirs = parse_info(reference_redis.raw().execute("INFO", "everything"))
    assert list(ours) == list(theirs)
    for title, fields in theirs.items():
        if title in ACTIVITY_SECTIONS:
            continue
        their_names = [name for name, _ in fields
                       if name not in DELIBERATE_OMISSIONS.get(title, {})]
        our_names = [name for name, _ in ours[title]
                     if name not in DELIBERATE_ADDITIONS.get(title, {})]
        missing = set(their_names) - set(our_names)
        assert not missing, f"# {title}: keywarden lacks {sorted(missing)}"
        extra = set(our_names) - set(their_names)
        assert not extra, f"# {title}: undeclared extra fields {sorted(extra)}"
        assert our_names == their_names, f"# {title}: fields in another order"


@pytest.mark.parametrize("args", [
    (), ("default",), ("all",), ("everything",), ("server",), ("SERVER",), ("cpu", "CPU"),
    ("cpu", "modules"), ("module_list",), ("foo",), ("foo", "cpu"), ("commandstats", "foo"),
    ("default", "commandstats"), ("latencystats",), ("keyspace", "server"),
    ("errorstats", "cluster", "memory"),
])
def test_info_section_selection_matches_redis(keywarden, reference_redis, args):
    def titles(server):
        with server.raw() as conn:
            conn.execute("SET", "k", "v")  # so that the keyspace section has a line
            return [line for line in conn.execute("INFO", *args).decode().split("\r\n")
                    if line.startswith("# ")]
    assert titles(keywarden) == titles(reference_redis)


def test_info_unknown_section_is_an_empty_bulk(server):
    conn = server.raw()
    assert conn.execute_raw("INFO", "nosuchsection") == b"$0\r\n\r\n"
    conn.execute("HELLO", "3")
    assert conn.execute_raw("INFO", "nosuchsection") == b"=4\r\ntxt:\r\n"


def test_info_framing_bytes_match_redis(keywarden, reference_redis):
    for server in (keywarden, reference_redis):
        conn = server.raw()
        expected = b"# Cluster\r\ncluster_enabled:0\r\n"
        assert conn.execute_raw("INFO", "cluster") == b"$%d\r\n%s\r\n" % (len(expected), expected)
        # sections are separated by one blank line, and the text does not end with one
        both = conn.execute("INFO", "cluster", "modules")
        assert both == b"# Modules\r\n\r\n# Cluster\r\ncluster_enabled:0\r\n"
        conn.execute("HELLO", "3")
        reply = conn.execute_raw("INFO", "cluster")
        assert reply == b"=%d\r\ntxt:%s\r\n" % (len(expected) + 4, expected)
        assert isinstance(conn.execute("INFO"), Verbatim)


def test_info_every_line_is_a_field_or_a_header(server):
    text = server.raw().execute("INFO", "everything")
    assert not text.endswith(b"\r\n\r\n") and text.endswith(b"\r\n")
    for line in text.split(b"\r\n")[:-1]:
        assert line == b"" or line.startswith(b"# ") or re.fullmatch(rb"[a-z0-9_|.\-]+:.*", line, re.I), line
        assert b"\n" not in line and b"\r" not in line


# --------------------------------------------------------------------------------------------
# INFO: values
# --------------------------------------------------------------------------------------------

def test_info_server_values(server):
    fields = info_fields(server.raw(), "server")
    assert fields["redis_version"] == "7.0.15"
    assert fields["redis_mode"] == "standalone"
    assert fields["multiplexing_api"] == "epoll"
    assert fields["arch_bits"] == "64"
    assert int(fields["process_id"]) == server.pid
    assert int(fields["tcp_port"]) == server.port
    assert re.fullmatch(r"[0-9a-f]{40}", fields["run_id"])
    assert int(fields["hz"]) == int(fields["configured_hz"]) == 10
    assert abs(int(fields["server_time_usec"]) / 1e6 - time.time()) < 60
    assert int(fields["uptime_in_days"]) == int(fields["uptime_in_seconds"]) // 86400
    assert 0 <= int(fields["lru_clock"]) < 1 << 24
    assert fields["config_file"] == ""
    assert fields["io_threads_active"] == "0"
    if is_keywarden(server):
        assert fields["keywarden_version"]
        assert fields["executable"].endswith("keywarden-server")


def test_info_run_id_and_replid_are_random_per_start(server_factory):
    first = info_fields(server_factory().raw(), "server", "replication")
    second = info_fields(server_factory().raw(), "server", "replication")
    assert first["run_id"] != second["run_id"]
    assert first["master_replid"] != second["master_replid"]
    assert re.fullmatch(r"[0-9a-f]{40}", first["master_replid"])
    assert first["run_id"] != first["master_replid"]


def test_info_replication_persistence_cluster_idle_values(server):
    fields = info_fields(server.raw(), "replication", "persistence", "cluster")
    assert fields["role"] == "master" and fields["connected_slaves"] == "0"
    assert fields["master_replid2"] == "0" * 40
    assert fields["master_repl_offset"] == "0" and fields["second_repl_offset"] == "-1"
    assert fields["loading"] == "0" and fields["rdb_bgsave_in_progress"] == "0"
    assert fields["aof_enabled"] == "0" and fields["cluster_enabled"] == "0"
    assert abs(int(fields["rdb_last_save_time"]) - time.time()) < 3600


def test_info_rdb_changes_since_last_save_counts_writes(server_factory):
    conn = server_factory().raw()
    before = int(info_fields(conn, "persistence")["rdb_changes_since_last_save"])
    conn.execute("SET", "a", "1")
    conn.execute("SET", "b", "2")
    conn.execute("GET", "a")
    after = int(info_fields(conn, "persistence")["rdb_changes_since_last_save"])
    assert after - before == 2


@pytest.mark.parametrize("binary", ["keywarden", "redis"])
def test_info_stats_counts_forks_and_times_the_last(server_factory, binary):
    server = server_factory(binary=None if binary == "keywarden" else redis_binary())
    conn = server.raw()
    conn.execute("SET", "a", "1")
    before = info_fields(conn, "stats")
    assert conn.execute("BGSAVE") == b"Background saving started"
    wait_until(lambda: info_fields(conn, "persistence")["rdb_bgsave_in_progress"] == "0",
               "the BGSAVE child to end")
    after = info_fields(conn, "stats")
    assert int(after["total_forks"]) == int(before["total_forks"]) + 1
    assert int(after["latest_fork_usec"]) > 0


def connected_clients(conn) -> int:
    return int(info_fields(conn, "clients")["connected_clients"])


def alone_on(server):
    """A connection to `server` once every other one (the start-up probe) has gone."""
    conn = server.raw()
    wait_until(lambda: connected_clients(conn) == 1, "the start-up probe to disconnect")
    return conn


@pytest.mark.parametrize("binary", ["keywarden", "redis"])
def test_info_clients_counts_connections(server_factory, binary):
    server = server_factory(binary=None if binary == "keywarden" else redis_binary())
    conn = alone_on(server)
    others = [server.raw() for _ in range(3)]
    for other in others:
        other.execute("PING")
    assert connected_clients(conn) == 4
    for other in others:
        other.close()
    wait_until(lambda: connected_clients(conn) == 1, "closed clients to leave connected_clients")
    fields = info_fields(conn, "clients")
    assert fields["maxclients"] == "10000" and fields["blocked_clients"] == "0"


def test_info_stats_counts_connections_commands_and_bytes(server_factory):
    server = server_factory()
    conn = server.raw()
    before = info_fields(conn, "stats")
    conn.execute("SET", "k", "v")
    server.raw().execute("PING")
    after = info_fields(conn, "stats")
    assert int(after["total_commands_processed"]) - int(before["total_commands_processed"]) == 3
    assert int(after["total_connections_received"]) == int(before["total_connections_received"]) + 1
    assert int(after["total_net_input_bytes"]) > int(before["total_net_input_bytes"])
    assert int(after["total_net_output_bytes"]) > int(before["total_net_output_bytes"])
    assert int(after["total_reads_processed"]) > int(before["total_reads_processed"])
    assert int(after["total_writes_processed"]) > int(before["total_writes_processed"])
    conn.execute("GET", "k")
    conn.execute("GET", "missing")
    hits = info_fields(conn, "stats")
    assert int(hits["keyspace_hits"]) == int(after["keyspace_hits"]) + 1
    assert int(hits["keyspace_misses"]) == int(after["keyspace_misses"]) + 1
    assert re.fullmatch(r"\d+\.\d\d", hits["instantaneous_input_kbps"])


def test_info_memory_figures_are_consistent(server):
    fields = info_fields(server.raw(), "memory")
    used = int(fields["used_memory"])
    assert used > 0 and int(fields["used_memory_rss"]) > 0
    assert int(fields["used_memory_peak"]) >= used
    assert re.fullmatch(r"\d+(\.\d\d[KMGTP])?B?", fields["used_memory_human"])
    assert fields["used_memory_peak_perc"].endswith("%")
    assert fields["maxmemory"] == "0" and fields["maxmemory_human"] == "0B"
    assert fields["maxmemory_policy"] == "noeviction"
    assert int(fields["total_system_memory"]) > used
    assert re.fullmatch(r"\d+\.\d\d", fields["mem_fragmentation_ratio"])


def test_info_memory_follows_maxmemory_config(server_factory):
    conn = server_factory(("maxmemory", "100mb"), ("maxmemory-policy", "allkeys-lru")).raw()
    fields = info_fields(conn, "memory")
    assert fields["maxmemory"] == str(100 * 1024 * 1024)
    assert fields["maxmemory_human"] == "100.00M"
    assert fields["maxmemory_policy"] == "allkeys-lru"


def test_info_keyspace_lists_only_non_empty_databases(server):
    conn = server.raw()
    assert parse_info(conn.execute("INFO", "keyspace")) == {"Keyspace": []}
    conn.execute("SET", "a", "1")
    conn.execute("SET", "b", "2", "EX", "1000")
    conn.execute("SELECT", "5")
    conn.execute("SET", "c", "3")
    lines = dict(parse_info(conn.execute("INFO", "keyspace"))["Keyspace"])
    assert list(lines) == ["db0", "db5"]
    assert re.fullmatch(r"keys=2,expires=1,avg_ttl=\d+", lines["db0"])
    assert lines["db5"] == "keys=1,expires=0,avg_ttl=0"
    conn.execute("FLUSHALL")


def test_info_keyspace_avg_ttl_is_exact(keywarden):
    if not is_keywarden(keywarden):
        pytest.skip("Redis estimates avg_ttl by sampling in its expiry cycle")
    conn = keywarden.raw()
    now_ms = int(time.time() * 1000)
    conn.execute("SET", "a", "1", "PXAT", now_ms + 100_000)
    conn.execute("SET", "b", "1", "PXAT", now_ms + 300_000)
    conn.execute("SET", "c", "1")
    avg = int(dict(parse_info(conn.execute("INFO", "keyspace"))["Keyspace"])["db0"]
              .split("avg_ttl=")[1])
    elapsed_ms = int(time.time() * 1000) - now_ms
    assert 200_000 - elapsed_ms - 5 <= avg <= 200_000 + 5  # the mean of 100 s and 300 s


def test_info_commandstats_and_errorstats_match_redis(keywarden, reference_redis):
    """The same commands give the same calls, rejected and failed counts and error counts."""
    sequence = [
        ("SET", "n", "1"), ("INCR", "n"), ("SET", "s", "text"), ("INCR", "s"), ("GET",),
        ("GET", "n"), ("CONFIG", "GET", "hz"), ("CONFIG", "NOSUCH"), ("NOSUCH", "x"),
        ("CONFIG",), ("CLIENT", "ID"), ("CLIENT", "SETNAME", "a b"), ("AUTH", "x"),
    ]

    def stats(server):
        conn = server.raw()
        conn.execute("CONFIG", "RESETSTAT")
        for command in sequence:
            conn.execute(*command)
        sections = parse_info(conn.execute("INFO", "commandstats", "errorstats"))
        commands = {}
        for name, value in sections["Commandstats"]:
            figures = dict(item.split("=") for item in value.split(","))
            assert re.fullmatch(r"\d+\.\d\d", figures["usec_per_call"])
            commands[name] = (figures["calls"], figures["rejected_calls"], figures["failed_calls"])
        return commands, sections["Errorstats"]

    ours, theirs = stats(keywarden), stats(reference_redis)
    assert ours == theirs
    assert ours[0]["cmdstat_config|get"] == ("1", "0", "0")
    assert ours[0]["cmdstat_config"] == ("0", "1", "0")  # a container alone is rejected
    assert ours[0]["cmdstat_incr"] == ("2", "0", "1")


def test_config_resetstat_clears_command_error_and_latency_stats(server):
    conn = server.raw()
    conn.execute("SET", "k", "v")
    conn.execute("NOSUCH")
    conn.execute("CONFIG", "RESETSTAT")
    sections = parse_info(conn.execute("INFO", "commandstats", "errorstats", "latencystats"))
    assert [name for name, _ in sections["Commandstats"]] == ["cmdstat_config|resetstat"]
    assert sections["Errorstats"] == []
    assert [name for name, _ in sections["Latencystats"]] == [
        "latency_percentiles_usec_config|resetstat"]
    stats = info_fields(conn, "stats")
    assert stats["total_error_replies"] == "0"


def test_info_latencystats_format_and_percentile_config(server):
    conn = server.raw()
    conn.execute("CONFIG", "RESETSTAT")
    for _ in range(5):
        conn.execute("SET", "k", "v")
    fields = dict(parse_info(conn.execute("INFO", "latencystats"))["Latencystats"])
    assert re.fullmatch(r"p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}",
                        fields["latency_percentiles_usec_set"])
    try:
        assert conn.execute("CONFIG", "SET", "latency-tracking-info-percentiles",
                            "0.5 100 99.99 50.0") == b"OK"
        assert conn.execute("CONFIG", "GET", "latency-tracking-info-percentiles") == [
            b"latency-tracking-info-percentiles", b"0.5 100 99.99 50"]
        fields = dict(parse_info(conn.execute("INFO", "latencystats"))["Latencystats"])
        assert re.fullmatch(r"p0\.5=[\d.]+,p100=[\d.]+,p99\.99=[\d.]+,p50=[\d.]+",
                            fields["latency_percentiles_usec_set"])
        assert conn.execute("CONFIG", "SET", "latency-tracking-info-percentiles", "") == b"OK"
        fields = dict(parse_info(conn.execute("INFO", "latencystats"))["Latencystats"])
        assert fields["latency_percentiles_usec_set"] == ""
        assert conn.execute("CONFIG", "SET", "latency-tracking", "no") == b"OK"
        assert parse_info(conn.execute("INFO", "latencystats")) == {"Latencystats": []}
    finally:
        conn.execute("CONFIG", "SET", "latency-tracking", "yes")
        conn.execute("CONFIG", "SET", "latency-tracking-info-percentiles", "50 99 99.9")


@pytest.mark.parametrize("value", ["abc", "101", "-1", "50 x"])
def test_latency_percentiles_config_errors_match_redis(keywarden, reference_redis, value):
    replies = [server.raw().execute_raw("CONFIG", "SET", "latency-tracking-info-percentiles",
                                        value) for server in (keywarden, reference_redis)]
    assert replies[0] == replies[1]


def test_info_latency_of_a_slow_command_lands_in_its_bucket(server):
    """DEBUG SLEEP 0.05 takes at least 50 ms: the reported percentile is a bucket above it
    (the upper bound only guards against a unit error: a loaded machine may sleep longer)."""
    conn = server.raw()
    conn.execute("CONFIG", "RESETSTAT")
    require(conn.execute("DEBUG", "SLEEP", "0.05"))
    fields = dict(parse_info(conn.execute("INFO", "latencystats"))["Latencystats"])
    p50 = float(fields["latency_percentiles_usec_debug"].split(",")[0].split("=")[1])
    assert 50_000 <= p50 < 1_000_000


# --------------------------------------------------------------------------------------------
# CLIENT: replies and errors against the reference
# --------------------------------------------------------------------------------------------

CLIENT_REPLIES = [
    ("CLIENT", "GETNAME"), ("CLIENT", "SETNAME", "worker-1"), ("CLIENT", "GETNAME"),
    ("CLIENT", "SETNAME", "a b"), ("CLIENT", "SETNAME", "a\nb"), ("CLIENT", "SETNAME", "é"),
    ("CLIENT", "SETNAME", ""), ("CLIENT", "GETNAME"), ("CLIENT", "SETNAME"),
    ("CLIENT", "SETNAME", "a", "b"), ("CLIENT", "HELP"), ("CLIENT", "help"),
    ("CLIENT", "LIST", "TYPE", "master"), ("CLIENT", "LIST", "TYPE", "replica"),
    ("CLIENT", "LIST", "TYPE", "slave"), ("CLIENT", "LIST", "TYPE", "pubsub"),
    ("CLIENT", "LIST", "TYPE", "foo"), ("CLIENT", "LIST", "ID", "abc"),
    ("CLIENT", "LIST", "ID", "0"), ("CLIENT", "LIST", "ID", "-1", "999999"),
    ("CLIENT", "LIST", "ID", "1", "abc"), ("CLIENT", "LIST", "ID"), ("CLIENT", "LIST", "foo"),
    ("CLIENT", "LIST", "TYPE"), ("CLIENT", "LIST", "TYPE", "normal", "ID", "1"),
    # CLIENT SETINFO and NO-TOUCH are answered as Redis 7.2 does: test_client_72.py.
    ("CLIENT", "GETREDIR"),
    ("CLIENT", "TRACKINGINFO"),
    ("CLIENT", "NO-EVICT", "on"), ("CLIENT", "NO-EVICT", "OFF"), ("CLIENT", "NO-EVICT", "x"),
    ("CLIENT", "NO-EVICT"), ("CLIENT", "REPLY", "foo"), ("CLIENT", "REPLY"),
    ("CLIENT", "REPLY", "on", "x"), ("CLIENT", "PAUSE"), ("CLIENT", "PAUSE", "abc"),
    ("CLIENT", "PAUSE", "1.5"), ("CLIENT", "PAUSE", "01"), ("CLIENT", "PAUSE", "-1"),
    ("CLIENT", "PAUSE", "10", "foo"), ("CLIENT", "PAUSE", "abc", "foo"),
    ("CLIENT", "PAUSE", "10", "WRITE", "extra"), ("CLIENT", "pause", "10", "x", "y"),
    ("CLIENT", "PAUSE", "0"), ("CLIENT", "PAUSE", "0", "write"), ("CLIENT", "UNPAUSE"),
    ("CLIENT", "UNPAUSE", "x"), ("CLIENT", "KILL"), ("CLIENT", "KILL", "1.2.3.4:5"),
    ("CLIENT", "KILL", "ID"), ("CLIENT", "KILL", "ID", "999999"), ("CLIENT", "KILL", "ID", "abc"),
    ("CLIENT", "KILL", "ID", "0"), ("CLIENT", "KILL", "ID", "-5"),
    ("CLIENT", "KILL", "ADDR", "1.2.3.4:5"), ("CLIENT", "KILL", "LADDR", "1.2.3.4:5"),
    ("CLIENT", "KILL", "USER", "nobody"), ("CLIENT", "KILL", "TYPE", "foo"),
    ("CLIENT", "KILL", "TYPE", "master"), ("CLIENT", "KILL", "TYPE", "pubsub"),
    ("CLIENT", "KILL", "SKIPME", "maybe"),
    ("CLIENT", "KILL", "MAXAGE", "5"), ("CLIENT", "KILL", "foo", "bar"),
    ("CLIENT", "KILL", "ADDR", "x", "SKIPME"), ("CLIENT", "KILL", "ID", "1", "ID", "999999"),
    ("CLIENT", "KILL", "TYPE", "normal", "USER", "nobody"),
    ("CLIENT", "KILL", "USER", "nobody", "TYPE", "foo"),
    ("CLIENT", "KILL", "SKIPME", "YES", "TYPE", "MASTER"),
    ("CLIENT", "UNBLOCK", "999999"), ("CLIENT", "UNBLOCK", "999999", "error"),
    ("CLIENT", "UNBLOCK", "999999", "foo"), ("CLIENT", "UNBLOCK", "abc"),
    ("CLIENT", "UNBLOCK", "abc", "foo"), ("CLIENT", "UNBLOCK", "1", "TIMEOUT", "x"),
    ("CLIENT", "UNBLOCK"), ("CLIENT", "ID", "x"), ("CLIENT", "GETNAME", "x"),
    ("CLIENT", "INFO", "x"), ("CLIENT", "TRACKINGINFO", "x"), ("CLIENT", "FOO"), ("CLIENT",),
    ("client", "nosuch", "a", "b"),
]


@pytest.mark.parametrize("command", CLIENT_REPLIES, ids=lambda c: " ".join(c))
def test_client_reply_bytes_match_redis(keywarden, reference_redis, command):
    replies = []
    for server in (keywarden, reference_redis):
        with server.raw() as conn:
            replies.append(conn.execute_raw(*command))
    assert replies[0] == replies[1]


@pytest.mark.parametrize("resp", [2, 3])
def test_client_trackinginfo_and_getredir_without_tracking(server, resp):
    conn = server.raw()
    conn.execute("HELLO", resp)
    assert conn.execute("CLIENT", "GETREDIR") == -1
    info = conn.execute("CLIENT", "TRACKINGINFO")
    if resp == 3:
        assert info == Map({b"flags": [b"off"], b"redirect": -1, b"prefixes": []})
        assert isinstance(info[b"flags"], RespSet)
    else:
        assert info == [b"flags", [b"off"], b"redirect", -1, b"prefixes", []]


def test_client_id_is_unique_and_increasing(server):
    first, second = server.raw(), server.raw()
    a, b = first.execute("CLIENT", "ID"), second.execute("CLIENT", "ID")
    assert isinstance(a, int) and b > a
    assert first.execute("CLIENT", "ID") == a
    assert int(client_line(first)["id"]) == a


# --------------------------------------------------------------------------------------------
# CLIENT LIST / INFO
# --------------------------------------------------------------------------------------------

def test_client_list_fields_match_redis(keywarden, reference_redis):
    lines = [client_fields(server.raw().execute("CLIENT", "INFO"))
             for server in (keywarden, reference_redis)]
    assert [name for name, _ in lines[0]] == [name for name, _ in lines[1]]


def test_client_info_line_values(server):
    conn = server.raw()
    conn.execute("CLIENT", "SETNAME", "me")
    conn.execute("SELECT", "3")
    raw = conn.execute("CLIENT", "INFO")
    assert raw.endswith(b"\n") and raw.count(b"\n") == 1
    fields = dict(client_fields(raw))
    local = conn.sock.getsockname()
    assert fields["addr"] == f"{local[0]}:{local[1]}"
    assert fields["laddr"] == f"{server.host}:{server.port}"
    assert fields["name"] == "me" and fields["db"] == "3" and fields["flags"] == "N"
    assert fields["cmd"] == "client|info" and fields["user"] == "default"
    assert fields["resp"] == "2" and fields["redir"] == "-1" and fields["multi"] == "-1"
    assert fields["argv-mem"] == str(len("client") + len("info"))
    assert fields["qbuf"] == str(len(encode_command("CLIENT", "INFO")))
    assert fields["age"] == "0" and fields["idle"] == "0"
    assert fields["events"] == "r"
    for name in ("fd", "qbuf-free", "rbs", "rbp", "obl", "oll", "omem", "tot-mem"):
        assert fields[name].isdigit(), name


def test_client_list_shows_every_client_once_with_its_last_command(server):
    conn, other = server.raw(), server.raw()
    other.execute("CLIENT", "SETNAME", "other")
    other.execute("GET", "k")
    other_id = other.execute("CLIENT", "ID")
    other.execute("ECHO", "x")
    lines = [dict(client_fields(line.encode()))
             for line in conn.execute("CLIENT", "LIST").decode().splitlines()]
    assert len({line["id"] for line in lines}) == len(lines)
    mine = [line for line in lines if line["id"] == str(conn.execute("CLIENT", "ID"))]
    theirs = [line for line in lines if line["id"] == str(other_id)]
    assert mine[0]["cmd"] == "client|list"
    assert theirs[0]["name"] == "other" and theirs[0]["cmd"] == "echo"
    assert theirs[0]["argv-mem"] == "0"
    assert conn.execute("CLIENT", "LIST").endswith(b"\n")


def test_client_list_by_type_and_id(server):
    conn, other = server.raw(), server.raw()
    mine, theirs = conn.execute("CLIENT", "ID"), other.execute("CLIENT", "ID")
    listed = conn.execute("CLIENT", "LIST", "ID", theirs, mine, "999999", theirs).decode()
    assert [dict(client_fields(l.encode()))["id"] for l in listed.splitlines()] == [
        str(theirs), str(mine), str(theirs)]
    normal = conn.execute("CLIENT", "LIST", "TYPE", "NORMAL").decode().splitlines()
    assert {str(mine), str(theirs)} <= {dict(client_fields(l.encode()))["id"] for l in normal}
    assert conn.execute("CLIENT", "LIST", "TYPE", "master") == b""


def test_client_list_is_verbatim_in_resp3(server):
    conn = server.raw()
    conn.execute("HELLO", "3")
    for args in (("CLIENT", "LIST"), ("CLIENT", "INFO"), ("CLIENT", "LIST", "ID", "0")):
        reply = conn.execute(*args)
        assert isinstance(reply, Verbatim) and reply.format == b"txt"
    assert client_line(conn)["resp"] == "3"


def test_client_list_flags(server, tmp_path):
    conn = server.raw()
    conn.execute("CLIENT", "NO-EVICT", "on")
    assert client_line(conn)["flags"] == "e"
    conn.execute("CLIENT", "NO-EVICT", "off")
    assert client_line(conn)["flags"] == "N"
    monitor = server.raw()
    assert require(monitor.execute("MONITOR")) == b"OK"
    monitor_id = None
    for line in conn.execute("CLIENT", "LIST").decode().splitlines():
        fields = dict(client_fields(line.encode()))
        if fields["cmd"] == "monitor":
            monitor_id = fields["id"]
            assert fields["flags"] == "O"
    assert monitor_id is not None
    # a MONITOR client is a normal client for TYPE filters
    normal = conn.execute("CLIENT", "LIST", "TYPE", "normal").decode()
    assert f"id={monitor_id} " in normal


def test_client_list_unix_socket_flag(server_factory):
    # A short directory of its own: Redis cuts an addr longer than 77 bytes, and pytest's
    # tmp_path is longer under pytest-xdist.
    directory = tempfile.mkdtemp(prefix="kw-sock-")
    try:
        for binary in (None, redis_binary()):
            path = f"{directory}/s{0 if binary is None else 1}.sock"
            server_factory(("unixsocket", path), binary=binary)
            with RawConnection(unix_path=path) as conn:
                fields = client_line(conn)
                assert fields["flags"] == "U"
                assert fields["addr"] == f"{path}:0" and fields["laddr"] == f"{path}:0"
    finally:
        shutil.rmtree(directory, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# CLIENT KILL
# --------------------------------------------------------------------------------------------

def test_client_kill_by_address_old_form(server):
    conn, victim = server.raw(), server.raw()
    victim.execute("PING")
    address = client_line(victim)["addr"]
    assert conn.execute_raw("CLIENT", "KILL", address) == b"+OK\r\n"
    assert victim.read_until_close() == b""
    assert conn.execute_raw("CLIENT", "KILL", address) == b"-ERR No such client\r\n"
    assert conn.execute("PING") == b"PONG"


def test_client_kill_by_id_and_filters(server):
    conn, victim = server.raw(), server.raw()
    victim_id = victim.execute("CLIENT", "ID")
    victim_fields = client_line(victim)
    # every filter must match
    assert conn.execute("CLIENT", "KILL", "ID", victim_id, "ADDR", "1.2.3.4:5") == 0
    assert conn.execute("CLIENT", "KILL", "ID", victim_id, "TYPE", "master") == 0
    assert conn.execute("CLIENT", "KILL", "ID", victim_id, "ADDR", victim_fields["addr"],
                        "LADDR", victim_fields["laddr"], "USER", "default",
                        "TYPE", "normal") == 1
    assert victim.read_until_close() == b""
    assert conn.execute("CLIENT", "KILL", "ID", victim_id) == 0
    assert conn.execute("CLIENT", "LIST", "ID", victim_id) == b""


def test_client_kill_skipme(server):
    conn, victim = server.raw(), server.raw()
    my_id = conn.execute("CLIENT", "ID")
    victim.execute("PING")
    # the new form spares the caller unless SKIPME no
    assert conn.execute("CLIENT", "KILL", "ID", my_id) == 0
    assert conn.execute("CLIENT", "KILL", "ID", my_id, "SKIPME", "yes") == 0
    assert conn.execute_raw("CLIENT", "KILL", "ID", my_id, "SKIPME", "no") == b":1\r\n"
    assert conn.read_until_close() == b""
    assert victim.execute("PING") == b"PONG"


def test_client_kill_old_form_kills_the_caller_after_replying(server):
    conn = server.raw()
    address = client_line(conn)["addr"]
    conn.send(encode_command("CLIENT", "KILL", address) + encode_command("PING"))
    assert conn.read_until_close() == b"+OK\r\n"


@pytest.mark.parametrize("binary", ["keywarden", "redis"])
def test_client_kill_laddr_kills_everyone_else_on_the_port(server_factory, binary):
    server = server_factory(binary=None if binary == "keywarden" else redis_binary())
    conn = alone_on(server)
    others = [server.raw() for _ in range(3)]
    for other in others:
        other.execute("PING")
    laddr = client_line(conn)["laddr"]
    assert conn.execute("CLIENT", "KILL", "LADDR", laddr) == 3
    for other in others:
        assert other.read_until_close() == b""
    wait_until(lambda: connected_clients(conn) == 1, "killed clients to be gone")


def test_client_kill_of_a_monitor(server):
    conn, monitor = server.raw(), server.raw()
    assert require(monitor.execute("MONITOR")) == b"OK"
    monitor_id = next(dict(client_fields(l.encode()))["id"]
                      for l in conn.execute("CLIENT", "LIST").decode().splitlines()
                      if "cmd=monitor" in l)
    assert conn.execute("CLIENT", "KILL", "ID", monitor_id) == 1
    monitor.read_until_close()
    assert conn.execute("SET", "after", "kill") == b"OK"  # no feed goes to a killed monitor


# --------------------------------------------------------------------------------------------
# CLIENT REPLY over a raw socket
# --------------------------------------------------------------------------------------------

REPLY_SCENARIOS = [
    ("CLIENT REPLY OFF", "SET a 1", "GET a"),
    ("CLIENT REPLY SKIP", "GET a", "PING x"),
    ("CLIENT REPLY SKIP", "CLIENT REPLY SKIP", "PING y", "PING z"),
    ("CLIENT REPLY SKIP", "CLIENT REPLY ON", "PING w"),
    ("CLIENT REPLY OFF", "CLIENT REPLY SKIP", "PING v"),
    ("CLIENT REPLY OFF", "CLIENT REPLY foo", "PING u"),
    ("CLIENT REPLY SKIP", "CLIENT REPLY foo", "PING t"),
    ("CLIENT REPLY SKIP", "CLIENT REPLY OFF", "PING s"),
    ("CLIENT REPLY SKIP", "NOSUCH", "PING r"),
    ("CLIENT REPLY OFF", "NOSUCH", "GET", "PING q"),
    ("CLIENT REPLY SKIP",),
    ("CLIENT REPLY ON", "PING p"),
    ("CLIENT REPLY OFF", "CLIENT REPLY OFF", "CLIENT REPLY ON", "PING o"),
]


def run_reply_scenario(server, commands) -> bytes:
    """Sends the commands in one write, then REPLY ON and a marker; returns every reply byte."""
    with server.raw() as conn:
        conn.send(b"".join(encode_command(*c.split(" ")) for c in commands)
                  + encode_command("CLIENT", "REPLY", "ON") + encode_command("PING", "END"))
        data = b""
        while True:
            raw = conn.read_reply_bytes()
            data += raw
            if raw == b"$3\r\nEND\r\n":
                return data


@pytest.mark.parametrize("commands", REPLY_SCENARIOS, ids=lambda c: " / ".join(c))
def test_client_reply_modes_match_redis(keywarden, reference_redis, commands):
    assert run_reply_scenario(keywarden, commands) == run_reply_scenario(reference_redis,
                                                                         commands)


def test_client_reply_off_still_executes_commands(server):
    conn = server.raw()
    conn.send(encode_command("CLIENT", "REPLY", "OFF") + encode_command("SET", "quiet", "1")
              + encode_command("INCR", "quiet") + encode_command("CLIENT", "REPLY", "ON"))
    assert conn.read_reply() == b"OK"
    assert conn.execute("GET", "quiet") == b"2"
    conn.send(encode_command("CLIENT", "REPLY", "OFF"))
    assert not conn.is_closed(0.2)  # nothing is sent, the connection stays open
    assert conn.reader.buffered() == b""


# --------------------------------------------------------------------------------------------
# CLIENT PAUSE / UNPAUSE (ordering, not timing)
# --------------------------------------------------------------------------------------------

def test_client_pause_write_holds_writes_but_serves_reads(server):
    admin, writer, reader = server.raw(), server.raw(), server.raw()
    reader.execute("SET", "k", "before")
    assert admin.execute("CLIENT", "PAUSE", "60000", "WRITE") == b"OK"
    try:
        writer.send_command("SET", "k", "after")
        # reads and non-writes go on while the write waits
        assert reader.execute("GET", "k") == b"before"
        assert reader.execute("PING") == b"PONG"
        assert reader.execute("GET", "k") == b"before"
    finally:
        assert admin.execute("CLIENT", "UNPAUSE") == b"OK"
    assert writer.read_reply() == b"OK"
    assert reader.execute("GET", "k") == b"after"


def test_client_pause_holds_a_pipeline_in_order(server):
    admin, client = server.raw(), server.raw()
    assert admin.execute("CLIENT", "PAUSE", "60000", "WRITE") == b"OK"
    try:
        # the read behind the held write waits too: one client's commands stay in order
        client.send(encode_command("INCR", "n") + encode_command("GET", "n")
                    + encode_command("INCR", "n"))
        assert admin.execute("GET", "n") is None
    finally:
        admin.execute("CLIENT", "UNPAUSE")
    assert client.read_replies(3) == [1, b"1", 2]


def test_client_pause_all_ends_by_itself(server):
    admin, client = server.raw(), server.raw()
    assert admin.execute("CLIENT", "PAUSE", "200", "ALL") == b"OK"
    client.send_command("SET", "p", "1")
    assert client.read_reply() == b"OK"  # released once the pause runs out
    assert admin.execute("GET", "p") == b"1"


def test_client_pause_all_holds_even_unpause(server):
    admin, other = server.raw(), server.raw()
    assert admin.execute("CLIENT", "PAUSE", "300") == b"OK"
    other.send_command("CLIENT", "UNPAUSE")
    admin.send_command("PING")
    # both are answered once the pause has run out
    assert other.read_reply() == b"OK"
    assert admin.read_reply() == b"PONG"


def test_client_pause_is_never_shortened_or_weakened(server):
    admin, reader = server.raw(), server.raw()
    assert admin.execute("CLIENT", "PAUSE", "60000", "WRITE") == b"OK"
    try:
        # a shorter pause does not end the longer one...
        assert admin.execute("CLIENT", "PAUSE", "0", "WRITE") == b"OK"
        writer = server.raw()
        writer.send_command("SET", "w", "1")
        assert reader.execute("EXISTS", "w") == 0
        # ...and a huge one wraps to the past in Redis (no overflow check): nothing changes
        assert admin.execute("CLIENT", "PAUSE", "9223372036854775807", "WRITE") == b"OK"
        assert reader.execute("EXISTS", "w") == 0
    finally:
        admin.execute("CLIENT", "UNPAUSE")
    assert writer.read_reply() == b"OK"


def test_client_pause_all_after_write_pause_holds_reads(server):
    admin, reader = server.raw(), server.raw()
    assert admin.execute("CLIENT", "PAUSE", "1000", "WRITE") == b"OK"
    assert admin.execute("CLIENT", "PAUSE", "10", "ALL") == b"OK"  # stricter mode is kept
    reader.sock.settimeout(0.1)
    reader.send_command("GET", "x")
    with pytest.raises(socket.timeout):
        reader.read_reply()
    reader.sock.settimeout(10)
    assert reader.read_reply() is None


def test_client_unpause_without_pause(server):
    assert server.raw().execute("CLIENT", "UNPAUSE") == b"OK"


# --------------------------------------------------------------------------------------------
# CLIENT SETNAME / GETNAME / NO-EVICT and redis-py
# --------------------------------------------------------------------------------------------

def test_client_names_show_in_list(server):
    conn = server.raw()
    assert conn.execute("CLIENT", "SETNAME", "job:42") == b"OK"
    assert conn.execute("CLIENT", "GETNAME") == b"job:42"
    assert client_line(conn)["name"] == "job:42"
    assert conn.execute("CLIENT", "SETNAME", "") == b"OK"
    assert conn.execute("CLIENT", "GETNAME") is None
    assert client_line(conn)["name"] == ""
    conn.execute("HELLO", "3")
    assert conn.execute_raw("CLIENT", "GETNAME") == b"_\r\n"


def test_redis_py_client_helpers(server):
    r = server.client()
    assert r.client_setname("py") is True
    assert r.client_getname() == "py"
    info = r.client_info()
    assert info["name"] == "py" and int(info["id"]) == r.client_id()
    assert any(c["name"] == "py" for c in r.client_list())
    assert r.client_list(_type="pubsub") == []
    other = server.client()
    other.ping()
    other_id = other.client_id()
    assert r.client_kill_filter(_id=other_id) == 1
    assert r.client_no_evict("on") == b"OK"
    assert r.client_pause(1) is True and r.client_unpause() == b"OK"
    assert r.info("server")["redis_version"] == "7.0.15"
    everything = r.info("everything")
    assert {"redis_version", "connected_clients", "used_memory", "cluster_enabled",
            "cmdstat_client|kill"} <= set(everything)
    assert everything["cmdstat_client|kill"]["calls"] >= 1
