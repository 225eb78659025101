"""A drop-in for redis-server's configuration: every directive Redis 7.0 knows is known here.

- CONFIG GET * names the same directives (aliases included) with the same default values as a
  stock redis-server 7.0;
- Debian's stock /etc/redis/redis.conf starts keywarden (pointed at a free port and a temporary
  directory, as the test starts Redis itself);
- a directive of a feature keywarden lacks takes only its default value (file and CONFIG SET),
  one without effect here is accepted and named once in the log.
"""

from __future__ import annotations

import os

import pytest

from conftest import ServerStartError, start_server

STOCK_CONF = "/etc/redis/redis.conf"

# Directives keywarden shows that Redis 7.0 hides from CONFIG GET * (its DEBUG/HIDDEN configs,
# still readable by name there), that come from Redis 7.2 (set-max-listpack-*), or that are
# keywarden's own (io-uring).
KEYWARDEN_ONLY = {"key-load-delay", "rdb-key-save-delay", "set-max-listpack-entries",
                  "set-max-listpack-value", "loading-process-events-interval-bytes", "io-uring"}
# Values that legitimately differ between two servers started by the tests.
RUNTIME_VALUES = {"port", "dir", "pidfile", "logfile", "enable-debug-command", "save",
                  "appendonly", "bind", "unixsocket", "io-threads", "maxmemory",
                  "oom-score-adj-values"}


def config_map(server) -> dict[bytes, bytes]:
    flat = server.client().execute_command("CONFIG", "GET", "*")
    if isinstance(flat, dict):
        return flat
    return dict(zip(flat[::2], flat[1::2]))


def test_config_get_star_names_every_redis_directive(keywarden, reference_redis):
    ours = config_map(keywarden)
    theirs = config_map(reference_redis)
    missing = sorted(name.decode() for name in theirs if name not in ours)
    assert missing == [], f"directives of Redis 7.0 unknown to keywarden: {missing}"
    extra = sorted(name.decode() for name in ours if name not in theirs)
    assert set(extra) <= KEYWARDEN_ONLY, extra
    different = {
        name.decode(): (ours[name], value) for name, value in theirs.items()
        if name.decode() not in RUNTIME_VALUES and ours.get(name) != value
    }
    assert different == {}, f"defaults that differ (keywarden, redis): {different}"


@pytest.mark.skipif(not os.path.exists(STOCK_CONF), reason="Debian's redis.conf is not installed")
def test_debian_stock_redis_conf_starts(tmp_path):
    directives = [("daemonize", "no"), ("logfile", ""), ("dir", str(tmp_path)),
                  ("pidfile", str(tmp_path / "keywarden.pid"))]
    server = start_server(directives=directives, config_file=STOCK_CONF)
    try:
        client = server.client()
        assert client.ping()
        assert client.config_get("databases") == {"databases": "16"}
        assert client.config_get("logfile") == {"logfile": ""}  # the argument overrode it
        assert client.set("k", "v") and client.get("k") == b"v"
    finally:
        server.cleanup()


@pytest.mark.parametrize("name, value, feature", [
    ("tls-cluster", "yes", "Redis Cluster"),
    ("cluster-enabled", "yes", "Redis Cluster"),
    ("activedefrag", "yes", "active defragmentation"),
])
def test_missing_feature_takes_only_its_default(keywarden, name, value, feature):
    client = keywarden.client()
    default = client.config_get(name)[name]
    if name != "cluster-enabled":  # immutable in Redis: CONFIG SET refuses it for that reason
        with pytest.raises(Exception) as refused:
            client.config_set(name, value)
        assert f"{feature} is not supported by keywarden yet" in str(refused.value)
        assert client.config_set(name, default)
    with pytest.raises(ServerStartError) as failed:
        start_server(directives=[(name, value)])
    assert "FATAL CONFIG FILE ERROR" in str(failed.value)
    assert f"{feature} is not supported by keywarden yet" in str(failed.value)


def test_replicaof_in_a_file_makes_a_replica():
    server = start_server(directives=[("replicaof", "127.0.0.1 1"), ("repl-timeout", "30")])
    try:
        client = server.client()
        assert client.config_get("replicaof") == {"replicaof": "127.0.0.1 1"}
        assert client.config_get("slaveof") == {"slaveof": "127.0.0.1 1"}
        assert client.info("replication")["role"] == "slave"
    finally:
        server.cleanup()
    with pytest.raises(ServerStartError) as failed:
        start_server(directives=[("replicaof", "127.0.0.1 65536")])
    assert "Invalid master port" in str(failed.value)
    server = start_server(directives=[("replicaof", "no one")])
    server.cleanup()


def test_no_effect_directives_are_accepted_and_logged_once():
    server = start_server(directives=[("activerehashing", "no"), ("set-proc-title", "no"),
                                      ("active-defrag-cycle-max", "50")])
    try:
        client = server.client()
        assert client.config_get("activerehashing") == {"activerehashing": "no"}
        log = server.log()
        lines = [line for line in log.splitlines() if "without effect in keywarden" in line]
        assert len(lines) == 1, log
        for name in ("activerehashing", "set-proc-title", "active-defrag-cycle-max"):
            assert name in lines[0]
    finally:
        server.cleanup()


# The same CONFIG SET on both servers: validation errors byte for byte.
VALIDATION_CASES = [
    ("active-defrag-cycle-min", "0"),
    ("active-defrag-cycle-min", "x"),
    ("active-defrag-ignore-bytes", "12q"),
    ("syslog-facility", "local9"),
    ("propagation-error-behavior", "sometimes"),
    ("shutdown-on-sigterm", "later"),
    ("repl-diskless-load", "never"),
    ("repl-backlog-size", "0"),
    ("replica-priority", "-1"),
    ("tls-auth-clients", "maybe"),
    ("proc-title-template", "{title}"),
    ("always-show-logo", "yes"),
    ("replicaof", "127.0.0.1 6379"),
    ("shutdown-timeout", "-1"),
    ("activerehashing", "maybe"),
]


def test_validation_errors_match_redis(keywarden, reference_redis):
    def attempt(server):
        conn = server.raw()
        out = []
        for name, value in VALIDATION_CASES:
            conn.send_command("CONFIG", "SET", name, value)
            out.append(conn.read_reply_bytes())
        return out

    for case, mine, theirs in zip(VALIDATION_CASES, attempt(keywarden), attempt(reference_redis)):
        assert mine == theirs, f"{case}: keywarden {mine!r}, redis {theirs!r}"
