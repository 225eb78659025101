"""Client buffers over time, keywarden and a stock redis-server side by side: the query buffer
grows to hold a big argument at once and is given back once the client goes idle (Redis 7.0's
clientsCronResizeQueryBuffer), as CLIENT LIST (qbuf, qbuf-free, tot-mem) and INFO memory
(mem_clients_normal, used_memory) show. Sizes differ between the two servers; the behaviour
asserted is the same for both, with generous bounds, polled with a deadline.

The pub/sub, CLIENT REPLY and MONITOR cases of the same issue are scenarios in test_pubsub.py
and test_admin.py.
"""

from __future__ import annotations

import pytest

from conftest import encode_command, redis_binary, wait_until

MB = 1024 * 1024
KB = 1024


@pytest.fixture(params=["keywarden", "redis"])
def server(request, server_factory):
    """A dedicated server of each kind (these tests hold hundreds of connections)."""
    return server_factory(binary=None if request.param == "keywarden" else redis_binary())


def client_fields(admin, name: str) -> dict[str, str] | None:
    for line in admin.execute("CLIENT", "LIST").decode().splitlines():
        fields = dict(item.split("=", 1) for item in line.split(" "))
        if fields["name"] == name:
            return fields
    return None


def memory_fields(admin) -> dict[str, int]:
    rows = admin.execute("INFO", "memory").decode().splitlines()
    fields = dict(row.split(":", 1) for row in rows if ":" in row)
    return {name: int(fields[name]) for name in ("used_memory", "mem_clients_normal")}


def idle_clients_hold_little(admin, names: set[str]) -> bool:
    """Every named client has given back its spare query-buffer room."""
    seen = 0
    for line in admin.execute("CLIENT", "LIST").decode().splitlines():
        fields = dict(item.split("=", 1) for item in line.split(" "))
        if fields["name"] not in names:
            continue
        seen += 1
        if int(fields["qbuf-free"]) > KB or int(fields["tot-mem"]) > 64 * KB:
            return False
    return seen == len(names)


def test_idle_clients_that_sent_a_big_argument_give_their_buffers_back(server):
    """Two hundred clients each send a 1 MB SET (half of them with the start of another
    command after it) and go idle: within a few cron runs none holds query-buffer room, and
    the clients' memory and used_memory are back near where they started, not 200 MB up."""
    admin = server.raw()
    start = memory_fields(admin)
    value = b"v" * MB
    partial = b"*3\r\n$3\r\nSET\r\n"
    clients = []
    for i in range(200):
        conn = server.raw()
        conn.execute("CLIENT", "SETNAME", f"big{i}")
        conn.send(encode_command("SET", "shared", value) + (partial if i % 2 else b""))
        clients.append(conn)
    for conn in clients:
        assert conn.read_reply() == b"OK"
    names = {f"big{i}" for i in range(200)}
    assert wait_until(lambda: idle_clients_hold_little(admin, names), timeout=20), \
        [client_fields(admin, name) for name in ("big0", "big1")]
    for i in (0, 1, 199):
        fields = client_fields(admin, f"big{i}")
        # What is left of the query is the start of the next command, at most.
        assert int(fields["qbuf"]) <= len(partial), fields
    now = memory_fields(admin)
    assert now["mem_clients_normal"] < 200 * 32 * KB, (start, now)
    # One 1 MB value is stored; the 200 MB that went through the query buffers are gone.
    assert now["used_memory"] < start["used_memory"] + 24 * MB, (start, now)
    assert clients[0].execute("PING") == b"PONG"
    assert admin.execute("STRLEN", "shared") == MB


def test_a_big_argument_is_received_into_room_made_for_it(server):
    """A client stalled half-way through a 1 MB argument: the server holds what it sent in a
    buffer sized for the whole argument; once the client is idle the spare room is given back
    but the bytes are kept, and the command completes when the rest arrives."""
    admin = server.raw()
    conn = server.raw()
    conn.execute("CLIENT", "SETNAME", "slow")
    head = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % MB
    conn.send(head + b"x" * (MB // 2))

    def received_half():
        fields = client_fields(admin, "slow")
        return fields if int(fields["qbuf"]) >= MB // 2 else None

    fields = wait_until(received_half)
    assert fields, client_fields(admin, "slow")
    assert int(fields["qbuf"]) + int(fields["qbuf-free"]) >= MB, fields

    def spare_room_given_back():
        fields = client_fields(admin, "slow")
        return fields if int(fields["qbuf-free"]) <= KB else None

    fields = wait_until(spare_room_given_back, timeout=20)
    assert fields, client_fields(admin, "slow")
    assert int(fields["qbuf"]) >= MB // 2, fields
    conn.send(b"x" * (MB - MB // 2) + b"\r\n")
    assert conn.read_reply() == b"OK"
    assert admin.execute("STRLEN", "k") == MB


def test_an_idle_client_holds_no_read_buffer(server):
    """A client that sent one small command and went idle gives back the buffer its read used
    (16 KiB in both servers), so ten thousand idle connections cost little."""
    admin = server.raw()
    conn = server.raw()
    conn.execute("CLIENT", "SETNAME", "quiet")
    assert conn.execute("PING") == b"PONG"

    def buffer_given_back():
        fields = client_fields(admin, "quiet")
        return fields if int(fields["qbuf-free"]) == 0 else None

    fields = wait_until(buffer_given_back, timeout=20)
    assert fields, client_fields(admin, "quiet")
    assert int(fields["qbuf"]) == 0 and int(fields["tot-mem"]) < 16 * KB, fields
    assert conn.execute("PING") == b"PONG"
