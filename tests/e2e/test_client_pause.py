"""CLIENT PAUSE against a stock redis-server 7.0 (issue 25): what a pause holds back, how the
held clients are reported, and that the dataset stays still while it lasts.

* Held clients count in INFO blocked_clients and show flags=b with the held command in
  CLIENT LIST (tooling waits on blocked_clients).
* A pause (WRITE or ALL) holds deletions: an expired key reads as missing but is not deleted
  (DBSIZE keeps it, expired_keys does not move) until the pause ends; no eviction either.
* Under WRITE, commands that may replicate are held too: PUBLISH, and EVAL/EVALSHA/FCALL unless
  their script declares no-writes. Read-only scripts run, and may not call PUBLISH.

Each scenario runs on both servers; the observations are compared whole. A pause is ended by
CLIENT UNPAUSE, never waited out, and sleeps only let key deadlines pass or let a server read
what a held client sent.
"""

from __future__ import annotations

import time

import pytest

from conftest import encode_command as encode, keywarden_binary, redis_binary

SERVERS = {"keywarden": keywarden_binary, "redis": redis_binary}

LIBRARY = ("#!lua name=pauselib\n"
           "redis.register_function{function_name='ro_publish', flags={'no-writes'},\n"
           "  callback=function(keys, args) return redis.call('publish', 'ch', 'm') end}\n"
           "redis.register_function{function_name='ro_get', flags={'no-writes'},\n"
           "  callback=function(keys, args) return redis.call('get', keys[1]) end}\n"
           "redis.register_function{function_name='writer',\n"
           "  callback=function(keys, args) return redis.call('set', keys[1], 'f') end}\n")


def info_fields(conn, section: str, *names: str) -> dict[str, str]:
    rows = dict(line.split(":", 1) for line in conn.execute("INFO", section).decode().split("\r\n")
                if ":" in line)
    return {name: rows[name] for name in names}


def held_rows(conn) -> list[tuple[str, str]]:
    """(flags, cmd) of every client but the one asking, sorted."""
    rows = []
    for line in conn.execute("CLIENT", "LIST").decode().splitlines():
        fields = dict(part.split("=", 1) for part in line.split(" ") if "=" in part)
        if fields["cmd"] != "client|list":
            rows.append((fields["flags"], fields["cmd"]))
    return sorted(rows)


def write_pause_scenario(server) -> list:
    admin, reader = server.raw(), server.raw()
    held = {name: server.raw() for name in ("set", "eval", "publish", "fcall", "exec")}
    seen = [admin.execute_raw("FUNCTION", "LOAD", LIBRARY)]
    assert held["exec"].execute("MULTI") == b"OK"
    assert held["exec"].execute("INCR", "counter") == b"QUEUED"
    # One write: the keys cannot expire before the pause starts.
    admin.send(b"".join(encode(*cmd) for cmd in (
        ("SET", "e1", "v", "PX", "150"), ("SET", "e2", "v", "PX", "150"), ("SET", "live", "v"),
        ("CLIENT", "PAUSE", "60000", "WRITE"))))
    seen.append(admin.read_bytes_of_replies(4))
    held["set"].send_command("SET", "x", "1")
    held["eval"].send_command("EVAL", "return redis.call('incr', 'counter')", "0")
    held["publish"].send_command("PUBLISH", "ch", "m")
    held["fcall"].send_command("FCALL", "writer", "1", "w")
    held["exec"].send_command("EXEC")
    time.sleep(0.4)  # past the deadlines of e1 and e2; the held commands have been read
    seen.append(info_fields(reader, "clients", "blocked_clients", "clients_in_timeout_table"))
    seen.append(held_rows(reader))
    # The dataset stays still: expired keys read as missing but are not deleted.
    seen += [reader.execute_raw("DBSIZE"), info_fields(reader, "stats", "expired_keys"),
             reader.execute_raw("GET", "e1"), reader.execute_raw("EXISTS", "e1", "e2"),
             reader.execute_raw("TTL", "e1"), reader.execute_raw("PTTL", "e2"),
             reader.execute_raw("TYPE", "e2"), reader.execute_raw("KEYS", "*"),
             reader.execute_raw("SCAN", "0"), reader.execute_raw("DBSIZE"),
             info_fields(reader, "stats", "expired_keys")]
    # Reads, read-only scripts and commands that neither write nor replicate run.
    seen += [reader.execute_raw("GET", "live"),
             reader.execute_raw("EVAL_RO", "return redis.call('get', 'live')", "0"),
             reader.execute_raw("EVAL", "#!lua flags=no-writes\nreturn redis.call('get', 'e1')",
                                "0"),
             reader.execute_raw("FCALL_RO", "ro_get", "1", "live"),
             reader.execute_raw("FCALL", "ro_get", "1", "live"),
             reader.execute_raw("CONFIG", "SET", "maxmemory-samples", "5"),
             # ...but a read-only script may not call a command that may replicate.
             reader.execute_raw("EVAL_RO", "return redis.call('publish', 'ch', 'm')", "0"),
             reader.execute_raw("EVAL_RO", "return redis.pcall('publish', 'ch', 'm')", "0"),
             reader.execute_raw("EVAL", "#!lua flags=no-writes\n"
                                "return redis.call('spublish', 'ch', 'm')", "0"),
             reader.execute_raw("FCALL_RO", "ro_publish", "0"),
             reader.execute_raw("FCALL", "ro_publish", "0")]
    seen.append(admin.execute_raw("CLIENT", "UNPAUSE"))
    seen += [held[name].read_reply_bytes() for name in ("set", "eval", "publish", "fcall", "exec")]
    # Deletions resume: looking the keys up deletes them now.
    seen += [reader.execute_raw("EXISTS", "e1", "e2"), reader.execute_raw("DBSIZE"),
             info_fields(reader, "stats", "expired_keys"),
             info_fields(reader, "clients", "blocked_clients"), held_rows(reader)]
    return seen


def test_write_pause_holds_writers_and_keeps_the_dataset_still(server_factory):
    got = {name: write_pause_scenario(server_factory(binary=binary()))
           for name, binary in SERVERS.items()}
    assert got["keywarden"] == got["redis"]
    redis = got["redis"]
    assert redis[2] == {"blocked_clients": "5", "clients_in_timeout_table": "0"}
    assert redis[3] == [("N", "client|pause"), ("b", "eval"), ("b", "fcall"),
                        ("b", "publish"), ("b", "set"), ("xb", "exec")]
    assert redis[4] == b":3\r\n"  # e1 and e2 are still there...
    assert redis[6] == b"$-1\r\n"  # ...but read as missing


def test_all_pause_holds_expiry_too(server_factory):
    """Under ALL every command waits, CLIENT UNPAUSE included: this pause runs out by itself
    (1 s). The held DBSIZE then still counts the expired keys, which go at the first look."""
    got = {}
    for name, binary in SERVERS.items():
        server = server_factory(binary=binary())
        admin, reader, other = server.raw(), server.raw(), server.raw()
        admin.send(encode("SET", "e", "v", "PX", "100")
                   + encode("SET", "f", "v", "PX", "100")
                   + encode("CLIENT", "PAUSE", "1000", "ALL"))
        seen = [admin.read_bytes_of_replies(3)]
        reader.send_command("DBSIZE")
        time.sleep(0.3)  # e and f are past their deadline; DBSIZE is held
        other.send_command("GET", "e")
        # The pause ends by itself after a second; the held commands then run in order.
        seen += [reader.read_reply_bytes(), other.read_reply_bytes(),
                 admin.execute_raw("EXISTS", "f"), admin.execute_raw("DBSIZE"),
                 info_fields(admin, "stats", "expired_keys")]
        got[name] = seen
    assert got["keywarden"] == got["redis"]
    # Keys that fell due during the pause are deleted before the held clients run.
    assert got["redis"][1] == b":0\r\n"
    assert got["redis"][2] == b"$-1\r\n"


def eviction_scenario(server) -> list:
    admin, reader = server.raw(), server.raw()
    for i in range(200):
        assert admin.execute("SET", f"k{i}", "x" * 100) == b"OK"
    assert admin.execute("CONFIG", "SET", "maxmemory-policy", "allkeys-random") == b"OK"
    assert admin.execute("CLIENT", "PAUSE", "60000", "WRITE") == b"OK"
    seen = [reader.execute_raw("CONFIG", "SET", "maxmemory", "1"),
            reader.execute_raw("DBSIZE"), reader.execute_raw("GET", "k1")[:8],
            reader.execute_raw("DBSIZE"), info_fields(reader, "stats", "evicted_keys")]
    seen.append(admin.execute_raw("CLIENT", "UNPAUSE"))
    # Once the pause is over, the next command evicts.
    seen += [reader.execute_raw("GET", "k1")[:8] != b"", reader.execute_raw("DBSIZE")]
    assert reader.execute("CONFIG", "SET", "maxmemory", "0") == b"OK"
    return seen


def test_no_eviction_during_a_pause(server_factory):
    got = {name: eviction_scenario(server_factory(binary=binary()))
           for name, binary in SERVERS.items()}
    assert got["keywarden"] == got["redis"]
    assert got["redis"][1] == b":200\r\n"
    assert got["redis"][4] == {"evicted_keys": "0"}
    assert got["redis"][-1] == b":0\r\n"


@pytest.mark.parametrize("script", [
    "return redis.call('publish', 'ch', 'm')",
    "return redis.call('set', 'k', 'v')",
    "#!lua\nreturn redis.call('get', 'k')",
])
def test_read_only_variants_refuse_what_may_replicate(server_factory, script):
    """Without any pause: EVAL_RO refuses writes and may-replicate commands alike, and a
    shebang script without no-writes cannot run through EVAL_RO."""
    got = {}
    for name, binary in SERVERS.items():
        conn = server_factory(binary=binary()).raw()
        got[name] = [conn.execute_raw("EVAL_RO", script, "0"),
                     conn.execute_raw("EVAL", script, "0")]
    assert got["keywarden"] == got["redis"]
