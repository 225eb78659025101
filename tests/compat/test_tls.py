"""TLS (tls-port and the tls-* directives) against redis-cli, redis-benchmark and redis-py, with
Redis 7.0's replies as the reference.

Certificates come from scripts/gen-test-certs.sh, made once per module in a temporary directory.
Every server listens on a plain port (for the fixtures' readiness check) and a TLS port, except
where the test is about ``port 0``. Nothing asserts on timing: waits poll with deadlines.
"""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import time

import pytest
import redis

from conftest import (HOST, REPO_ROOT, free_port, keywarden_binary, redis_binary,
                      wait_until)

GEN_CERTS = REPO_ROOT / "scripts" / "gen-test-certs.sh"
TLS_DIRECTIVE_NAMES = [
    "tls-port", "tls-cert-file", "tls-key-file", "tls-key-file-pass", "tls-client-cert-file",
    "tls-client-key-file", "tls-client-key-file-pass", "tls-dh-params-file", "tls-ca-cert-file",
    "tls-ca-cert-dir", "tls-protocols", "tls-ciphers", "tls-ciphersuites", "tls-auth-clients",
    "tls-prefer-server-ciphers", "tls-session-caching", "tls-session-cache-size",
    "tls-session-cache-timeout", "tls-replication", "tls-cluster",
]


def make_certs(directory: str) -> str:
    subprocess.run([str(GEN_CERTS), directory], check=True, capture_output=True, timeout=120)
    return directory


@pytest.fixture(scope="module")
def certs():
    directory = tempfile.mkdtemp(prefix="kw-tls-")
    yield make_certs(directory)
    shutil.rmtree(directory, ignore_errors=True)


def tls_directives(certs: str, port: int, auth: str = "yes", extra=()):
    return [("tls-port", port), ("tls-cert-file", f"{certs}/server.crt"),
            ("tls-key-file", f"{certs}/server.key"), ("tls-ca-cert-file", f"{certs}/ca.crt"),
            ("tls-auth-clients", auth), *extra]


def start_tls(server_factory, certs, auth="yes", binary=None, extra=()):
    port = free_port()
    server = server_factory(*tls_directives(certs, port, auth, extra), binary=binary)
    server.tls_port = port
    return server


def tls_client(server, certs, with_cert=True, ca=None, **kwargs) -> redis.Redis:
    options = dict(host=HOST, port=server.tls_port, ssl=True,
                   ssl_ca_certs=ca or f"{certs}/ca.crt", ssl_cert_reqs="required",
                   socket_timeout=10, socket_connect_timeout=10)
    if with_cert:
        options.update(ssl_certfile=f"{certs}/client.crt", ssl_keyfile=f"{certs}/client.key")
    options.update(kwargs)
    client = redis.Redis(**options)
    server._clients.append(client)
    return client


def cli(server, certs, *args, with_cert=True, port=None):
    argv = ["redis-cli", "-h", HOST, "-p", str(port or server.tls_port), "--tls",
            "--cacert", f"{certs}/ca.crt"]
    if with_cert:
        argv += ["--cert", f"{certs}/client.crt", "--key", f"{certs}/client.key"]
    return subprocess.run(argv + list(args), capture_output=True, timeout=30)


def plain(server) -> redis.Redis:
    return server.client()


# ---- clients over TLS -----------------------------------------------------------------------

def test_redis_cli_over_tls(server_factory, certs):
    server = start_tls(server_factory, certs)
    assert cli(server, certs, "SET", "k", "v over tls").stdout == b"OK\n"
    assert cli(server, certs, "GET", "k").stdout == b"v over tls\n"
    # The same data over the plain port: one keyspace, two listeners.
    assert plain(server).get("k") == b"v over tls"


def test_client_certificate_required(server_factory, certs):
    for binary in (None, redis_binary()):
        server = start_tls(server_factory, certs, "yes", binary=binary)
        with pytest.raises(redis.ConnectionError):
            tls_client(server, certs, with_cert=False).ping()
        assert tls_client(server, certs).ping() is True
        result = cli(server, certs, "PING", with_cert=False)
        assert b"PONG" not in result.stdout


def test_client_certificate_optional(server_factory, certs):
    server = start_tls(server_factory, certs, "optional")
    assert tls_client(server, certs, with_cert=False).ping() is True
    assert tls_client(server, certs, with_cert=True).ping() is True
    # tls-auth-clients is read for each new connection.
    assert plain(server).config_set("tls-auth-clients", "yes") is True
    with pytest.raises(redis.ConnectionError):
        tls_client(server, certs, with_cert=False).ping()
    server2 = start_tls(server_factory, certs, "no")
    assert tls_client(server2, certs, with_cert=False).ping() is True


def test_server_certificate_checked_by_clients(server_factory, certs, tmp_path):
    server = start_tls(server_factory, certs)
    other = make_certs(str(tmp_path / "other"))
    with pytest.raises(redis.ConnectionError):
        tls_client(server, certs, ca=f"{other}/ca.crt").ping()


def test_redis_py_commands_and_pipelines(server_factory, certs):
    server = start_tls(server_factory, certs)
    client = tls_client(server, certs)
    big = os.urandom(300_000)  # several TLS records in one reply
    client.set("big", big)
    assert client.get("big") == big
    pipe = client.pipeline(transaction=False)
    for i in range(2000):
        pipe.set(f"key:{i}", i)
    for i in range(2000):
        pipe.get(f"key:{i}")
    replies = pipe.execute()
    assert replies[2000:] == [str(i).encode() for i in range(2000)]
    pubsub_client = tls_client(server, certs)
    pubsub = pubsub_client.pubsub()
    pubsub.subscribe("news")
    assert wait_until(lambda: pubsub.get_message(timeout=0.1) is not None)
    client.publish("news", "hello")
    message = None

    def got():
        nonlocal message
        message = pubsub.get_message(timeout=0.1)
        return message is not None
    assert wait_until(got)
    assert message["data"] == b"hello"
    pubsub.close()


def test_connected_clients_counts_tls_ones(server_factory, certs):
    server = start_tls(server_factory, certs)
    admin = plain(server)
    before = admin.info("clients")["connected_clients"]
    held = [tls_client(server, certs) for _ in range(3)]
    for client in held:
        client.ping()
    assert admin.info("clients")["connected_clients"] == before + 3
    lines = admin.client_list()
    laddrs = {entry["laddr"] for entry in lines}
    assert f"{HOST}:{server.tls_port}" in laddrs and f"{HOST}:{server.port}" in laddrs
    for client in held:
        client.connection_pool.disconnect()
    assert wait_until(lambda: admin.info("clients")["connected_clients"] == before)


def test_redis_benchmark_over_tls(server_factory, certs):
    server = start_tls(server_factory, certs)
    argv = ["redis-benchmark", "-h", HOST, "-p", str(server.tls_port), "--tls",
            "--cacert", f"{certs}/ca.crt", "--cert", f"{certs}/client.crt",
            "--key", f"{certs}/client.key", "-n", "2000", "-c", "4", "-P", "8", "-q",
            "-t", "set,get,lpush"]
    result = subprocess.run(argv, capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode()
    for test in ("SET", "GET", "LPUSH"):
        assert f"{test}: " in out and "requests per second" in out
    assert plain(server).dbsize() >= 1


@pytest.mark.parametrize("batching", [[("io-threads", 4), ("io-threads-do-reads", "yes")],
                                      [("io-uring", "yes")]], ids=["io-threads", "io-uring"])
def test_tls_clients_beside_plain_ones_with_io_threads(server_factory, certs, batching):
    """TLS connections stay on the command thread while plain ones beside them go through the
    I/O threads or io_uring: both kinds get every reply (redis-benchmark checks them)."""
    server = start_tls(server_factory, certs, extra=batching)
    tls_argv = ["redis-benchmark", "-h", HOST, "-p", str(server.tls_port), "--tls",
                "--cacert", f"{certs}/ca.crt", "--cert", f"{certs}/client.crt",
                "--key", f"{certs}/client.key", "-n", "4000", "-c", "12", "-P", "4", "-q",
                "-t", "set,get"]
    plain_argv = ["redis-benchmark", "-h", HOST, "-p", str(server.port), "-n", "20000",
                  "-c", "24", "-P", "4", "-q", "-t", "set,get"]
    runs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for argv in (tls_argv, plain_argv)]
    for run in runs:
        out, err = run.communicate(timeout=180)
        assert run.returncode == 0, err
        assert b"GET: " in out and b"requests per second" in out
    tls = tls_client(server, certs)
    assert tls.set("over-tls", "yes") and tls.get("over-tls") == b"yes"
    assert plain(server).get("over-tls") == b"yes"


# ---- misbehaving peers cost only their own connection ------------------------------------

def test_garbage_and_stalled_handshakes(server_factory, certs):
    server = start_tls(server_factory, certs, extra=[("timeout", 2)])
    good = tls_client(server, certs)
    assert good.ping() is True
    # A client that opens the TLS port and says nothing: the others are served meanwhile.
    silent = socket.create_connection((HOST, server.tls_port))
    # Half a ClientHello, then nothing.
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls_object = context.wrap_bio(incoming, outgoing)
    with pytest.raises(ssl.SSLWantReadError):
        tls_object.do_handshake()
    hello = outgoing.read()
    half = socket.create_connection((HOST, server.tls_port))
    half.sendall(hello[: len(hello) // 2])
    # Garbage (plain RESP on the TLS port is garbage too): closed by the server.
    garbage = socket.create_connection((HOST, server.tls_port))
    garbage.settimeout(10)
    garbage.sendall(b"*1\r\n$4\r\nPING\r\n" + os.urandom(4096))
    data = b""
    try:
        while chunk := garbage.recv(4096):
            data += chunk
    except ConnectionResetError:
        pass
    assert b"PONG" not in data
    for i in range(50):
        assert good.set(f"k{i}", i) is True
    assert cli(server, certs, "PING").stdout == b"PONG\n"
    # The stalled ones are idle clients: the normal timeout closes them.
    for sock in (silent, half):
        sock.settimeout(15)
        assert sock.recv(100) == b""
        sock.close()
    garbage.close()
    assert server.alive()
    assert good.ping() is True


def test_many_failed_handshakes_leave_no_clients(server_factory, certs):
    server = start_tls(server_factory, certs)
    admin = plain(server)
    for _ in range(20):
        with pytest.raises(redis.ConnectionError):
            tls_client(server, certs, with_cert=False).ping()
    assert wait_until(lambda: admin.info("clients")["connected_clients"] == 1)
    assert admin.info("stats")["total_connections_received"] >= 21


# ---- configuration --------------------------------------------------------------------------

def test_config_get_tls_matches_redis(server_factory, certs):
    replies = []
    for binary in (None, redis_binary()):
        server = start_tls(server_factory, certs, extra=[
            ("tls-protocols", "TLSv1.2 TLSv1.3"), ("tls-session-cache-size", 1000),
            ("tls-key-file-pass", "secret"), ("tls-dh-params-file", f"{certs}/redis.dh")])
        config = plain(server).config_get("tls-*")
        config.pop("tls-port")  # each server has its own
        replies.append(config)
    assert replies[0] == replies[1]
    assert set(replies[0]) == set(TLS_DIRECTIVE_NAMES) - {"tls-port"}


def test_config_set_errors_match_redis(server_factory, certs, tmp_path):
    sets = [
        ("tls-cert-file", str(tmp_path / "missing.crt")),
        ("tls-key-file", str(tmp_path / "missing.key")),
        ("tls-ca-cert-file", str(tmp_path / "missing-ca.crt")),
        ("tls-protocols", "TLSv9"),
        ("tls-ciphers", "NOT-A-CIPHER"),
        ("tls-auth-clients", "maybe"),
        ("tls-session-cache-size", "-1"),
        ("tls-port", "70000"),
    ]
    results = []
    for binary in (None, redis_binary()):
        server = start_tls(server_factory, certs)
        admin = server.raw()
        per_server = [admin.execute("CONFIG", "SET", name, value) for name, value in sets]
        # After each refusal the server still serves TLS with the old configuration.
        assert tls_client(server, certs).ping() is True
        per_server.append(admin.execute("CONFIG", "GET", "tls-cert-file")[1] ==
                          f"{certs}/server.crt".encode())
        results.append(per_server)
    assert results[0] == results[1]
    assert b"Unable to update TLS configuration" in bytes(str(results[0][0]), "utf-8")


def test_config_set_reloads_certificates(server_factory, certs, tmp_path):
    server = start_tls(server_factory, certs)
    other = make_certs(str(tmp_path / "rotated"))
    first = tls_client(server, certs)
    assert first.set("before", 1) is True
    admin = plain(server)
    assert admin.execute_command(
        "CONFIG", "SET", "tls-cert-file", f"{other}/server.crt", "tls-key-file",
        f"{other}/server.key", "tls-ca-cert-file", f"{other}/ca.crt") == b"OK"
    # New connections see the new certificate (and must present one of the new CA)...
    with pytest.raises(redis.ConnectionError):
        tls_client(server, certs).ping()
    assert tls_client(server, other).get("before") == b"1"
    # ...while the connection opened before keeps working.
    assert first.get("before") == b"1"
    # Setting the same file again reloads it (a renewed certificate at the same path).
    assert admin.config_set("tls-cert-file", f"{other}/server.crt") is True
    # An encrypted key needs its passphrase, set in the same command.
    assert admin.execute_command(
        "CONFIG", "SET", "tls-cert-file", f"{certs}/server.crt", "tls-key-file",
        f"{certs}/server-pass.key", "tls-key-file-pass", "keywarden", "tls-ca-cert-file",
        f"{certs}/ca.crt") == b"OK"
    assert tls_client(server, certs).get("before") == b"1"


def test_config_set_tls_port(server_factory, certs):
    server = server_factory()
    admin = plain(server)
    port = free_port()
    with pytest.raises(redis.ResponseError) as refused:
        admin.config_set("tls-port", port)
    assert str(refused.value) == ("CONFIG SET failed (possibly related to argument 'tls-port') "
                                  "- Unable to update TLS configuration. Check server logs.")
    admin.execute_command("CONFIG", "SET", "tls-cert-file", f"{certs}/server.crt",
                          "tls-key-file", f"{certs}/server.key", "tls-ca-cert-file",
                          f"{certs}/ca.crt")
    assert admin.config_set("tls-port", port) is True
    server.tls_port = port
    assert tls_client(server, certs).ping() is True
    assert admin.config_set("tls-port", 0) is True
    with pytest.raises(redis.ConnectionError):
        tls_client(server, certs).ping()


def test_config_set_bind_moves_tls_listener_too(server_factory, certs):
    server = start_tls(server_factory, certs)
    admin = plain(server)
    assert admin.config_set("bind", "127.0.0.1") is True
    assert tls_client(server, certs).ping() is True
    assert admin.config_set("port", free_port()) is True  # the plain port alone moves
    assert tls_client(server, certs).ping() is True


@pytest.mark.parametrize("binary", ["keywarden", "redis"])
def test_startup_with_bad_tls_files(certs, tmp_path, binary):
    path = keywarden_binary() if binary == "keywarden" else redis_binary()
    argv = [path, "--port", "0", "--tls-port", str(free_port()), "--tls-cert-file",
            str(tmp_path / "none.crt"), "--tls-key-file", f"{certs}/server.key",
            "--tls-ca-cert-file", f"{certs}/ca.crt", "--save", "", "--dir", str(tmp_path)]
    result = subprocess.run(argv, capture_output=True, timeout=30)
    assert result.returncode == 1
    assert b"Failed to configure TLS. Check logs for more info." in result.stdout


def test_tls_port_only(certs, tmp_path):
    port = free_port()
    argv = [keywarden_binary(), "--port", "0", "--tls-port", str(port), "--save", "",
            "--dir", str(tmp_path), *sum(([f"--{k}", str(v)] for k, v in
                                          tls_directives(certs, port)[1:]), [])]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        class Holder:
            tls_port = port
            _clients = []
        holder = Holder()

        def up():
            try:
                return tls_client(holder, certs).ping()
            except redis.ConnectionError:
                return False
        assert wait_until(up)
        assert tls_client(holder, certs).config_get("port") == {"port": "0"}
        for client in holder._clients:
            client.close()
    finally:
        process.terminate()
        process.wait(10)


# ---- replication over TLS ---------------------------------------------------------------------

def replication_info(client) -> dict:
    return client.info("replication")


@pytest.mark.parametrize("primary_kind", ["keywarden", "redis"])
def test_tls_replication(server_factory, certs, primary_kind):
    primary = start_tls(server_factory, certs,
                        binary=None if primary_kind == "keywarden" else redis_binary())
    writer = tls_client(primary, certs)
    for i in range(200):
        writer.set(f"before:{i}", i)
    replica = start_tls(server_factory, certs, extra=[("tls-replication", "yes")])
    admin = plain(replica)
    admin.replicaof(HOST, primary.tls_port)
    assert wait_until(lambda: replication_info(admin).get("master_link_status") == "up",
                      timeout=30)
    for i in range(200):
        writer.set(f"after:{i}", i)
    assert wait_until(lambda: admin.dbsize() == 400, timeout=30)
    assert admin.get("after:199") == b"199"
    # The primary lists the replica by the port it announced: its tls-port.
    slave = replication_info(plain(primary))["slave0"]
    assert slave["port"] == replica.tls_port


def test_redis_replica_of_keywarden_over_tls(server_factory, certs):
    primary = start_tls(server_factory, certs)
    writer = plain(primary)
    writer.set("k", "v")
    replica = start_tls(server_factory, certs, binary=redis_binary(),
                        extra=[("tls-replication", "yes")])
    admin = plain(replica)
    admin.replicaof(HOST, primary.tls_port)
    assert wait_until(lambda: replication_info(admin).get("master_link_status") == "up",
                      timeout=30)
    writer.set("k2", "v2")
    assert wait_until(lambda: admin.get("k2") == b"v2", timeout=30)


def test_plain_replica_refused_by_tls_port(server_factory, certs):
    primary = start_tls(server_factory, certs)
    replica = server_factory()
    admin = plain(replica)
    admin.replicaof(HOST, primary.tls_port)
    time.sleep(1.5)
    assert replication_info(admin).get("master_link_status") == "down"
    assert primary.alive()
