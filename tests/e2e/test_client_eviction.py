"""Client eviction (maxmemory-clients) and CLIENT NO-EVICT, side by side with a stock redis-server.

Every scenario runs on both servers and must end the same way: which connections are closed,
whether the command that pushed a client over the limit ran, and INFO's evicted_clients. The
sizes are far from the limits (megabytes against a few hundred bytes of per-client overhead),
so the two servers' slightly different per-client accounting cannot change an outcome.
"""

from __future__ import annotations

import socket
import time

import pytest

from conftest import encode_command, redis_binary

MB = 1024 * 1024


@pytest.fixture(params=["keywarden", "redis"])
def server(request, server_factory):
    return server_factory() if request.param == "keywarden" else server_factory(
        binary=redis_binary())


def info_int(conn, name: str) -> int:
    for line in conn.execute("INFO", "stats").decode().split("\r\n"):
        if line.startswith(name + ":"):
            return int(line.split(":", 1)[1])
    raise AssertionError(f"{name} not in INFO stats")


def client_names(conn) -> set[str]:
    names = set()
    for line in conn.execute("CLIENT", "LIST").decode().splitlines():
        for field in line.split():
            if field.startswith("name=") and field != "name=":
                names.add(field[5:])
    return names


def send_big(conn, data: bytes) -> None:
    """Sends a request that may get its client evicted half-way: a closed socket is expected."""
    try:
        conn.send(data)
    except (BrokenPipeError, ConnectionResetError):
        pass


def closed_by_server(conn, timeout: float = 10.0) -> bool:
    """True when the server closes the connection without answering (reads EOF or a reset)."""
    conn.sock.settimeout(timeout)
    try:
        while True:
            data = conn.sock.recv(65536)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def wait_until(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


CONFIG_VALUES = ["10%", "100%", "101%", "0%", "-5%", "-1", "1mb", "1048576", "abc", "1.5%", "",
                 "10%%", "3000000"]


def test_config_set_and_get_match_redis(server_factory):
    replies = []
    for srv in (server_factory(), server_factory(binary=redis_binary())):
        with srv.raw() as conn:
            seen = []
            for value in CONFIG_VALUES:
                seen.append((value, conn.execute_raw("CONFIG", "SET", "maxmemory-clients", value),
                             conn.execute_raw("CONFIG", "GET", "maxmemory-clients")))
            replies.append(seen)
    assert replies[0] == replies[1]


def test_query_buffer_over_the_limit_evicts_before_the_command_runs(server):
    with server.raw() as admin:
        admin.execute("CONFIG", "SET", "maxmemory-clients", "3000000")
        with server.raw() as client:
            client.execute("CLIENT", "SETNAME", "big")
            assert client.execute_raw("MSET", "k", "v", "k2", "a" * MB) == b"+OK\r\n"
            # A command three times the limit: the client goes while its query is read.
            send_big(client, encode_command("MSET", "k", "x", "k2", "b" * (3 * MB)))
            assert closed_by_server(client)
        assert admin.execute("GET", "k") == b"v"
        assert admin.execute("STRLEN", "k2") == MB
        assert info_int(admin, "evicted_clients") == 1
        assert "big" not in client_names(admin)


def test_no_evict_client_is_spared(server):
    with server.raw() as client:
        client.execute("CONFIG", "SET", "maxmemory-clients", "3000000")
        client.execute("CLIENT", "NO-EVICT", "on")
        assert client.execute_raw("SET", "k2", "b" * (3 * MB)) == b"+OK\r\n"
        assert "e" in client.execute("CLIENT", "INFO").decode().split("flags=")[1].split()[0]
        assert info_int(client, "evicted_clients") == 0
        client.execute("CLIENT", "NO-EVICT", "off")
        send_big(client, encode_command("SET", "k3", "c" * (3 * MB)))
        assert closed_by_server(client)
    with server.raw() as admin:
        assert admin.execute("EXISTS", "k3") == 0
        assert admin.execute("STRLEN", "k2") == 3 * MB
        assert info_int(admin, "evicted_clients") == 1


def test_no_evict_client_memory_still_counts(server):
    """A NO-EVICT client over the limit by itself gets the other clients evicted, as in Redis."""
    with server.raw() as other, server.raw() as holder:
        other.execute("CLIENT", "SETNAME", "other")
        holder.execute("CONFIG", "SET", "maxmemory-clients", str(MB))
        holder.execute("CLIENT", "NO-EVICT", "on")
        holder.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % (2 * MB) + b"x" * MB)
        assert closed_by_server(other)
        holder.send(b"x" * MB + b"\r\n")
        assert holder.read_reply() == b"OK"
        assert info_int(holder, "evicted_clients") == 1


def test_percentage_of_maxmemory(server):
    with server.raw() as admin:
        # 3% of 100 MB: 3 MB, as the test above; far below maxmemory, so no key is evicted.
        admin.execute("CONFIG", "SET", "maxmemory", str(100 * MB))
        admin.execute("CONFIG", "SET", "maxmemory-clients", "3%")
        with server.raw() as client:
            assert client.execute_raw("SET", "k", "a" * MB) == b"+OK\r\n"
            send_big(client, encode_command("SET", "k", "b" * (4 * MB)))
            assert closed_by_server(client)
        assert admin.execute("STRLEN", "k") == MB
        assert info_int(admin, "evicted_clients") == 1


def test_lowering_the_limit_evicts_the_biggest_client_only(server):
    with server.raw() as admin, server.raw() as big, server.raw() as small:
        big.execute("CLIENT", "SETNAME", "big")
        small.execute("CLIENT", "SETNAME", "small")
        # Half of a 2 MB argument: the server holds it in the big client's query buffer.
        big.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % (2 * MB) + b"x" * MB)
        assert wait_until(lambda: "qbuf=0 " not in next(
            line for line in admin.execute("CLIENT", "LIST").decode().splitlines()
            if " name=big " in line))
        admin.execute("CONFIG", "SET", "maxmemory-clients", str(MB))
        assert closed_by_server(big)
        assert small.execute("PING") == b"PONG"
        assert admin.execute("EXISTS", "k") == 0
        assert client_names(admin) == {"small"}
        assert info_int(admin, "evicted_clients") == 1
        # Back to no limit: nobody else goes.
        admin.execute("CONFIG", "SET", "maxmemory-clients", "0")
        assert small.execute("PING") == b"PONG"


def test_output_buffer_over_the_limit_evicts(server):
    with server.raw() as admin:
        admin.execute("SET", "big", "v" * MB)
        admin.execute("CONFIG", "SET", "maxmemory-clients", "3000000")
        with server.raw() as reader:
            reader.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            reader.execute("CLIENT", "SETNAME", "reader")
            # Twenty 1 MB replies that nobody reads: far more than the socket buffers hold.
            reader.send(encode_command("GET", "big") * 20)
            assert wait_until(lambda: info_int(admin, "evicted_clients") == 1)
            assert wait_until(lambda: "reader" not in client_names(admin))
        assert admin.execute("PING") == b"PONG"
