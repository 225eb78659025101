"""I/O threads (io-threads 4, io-threads-do-reads yes): many clients at once, every reply checked.

The threads only move bytes; what must hold is that every client still gets exactly its own
replies, in order, whatever mix of pipelining, transactions, pub/sub fan-out, blocking
commands, kills and abrupt disconnects runs beside it. The tests drive many connections from
one thread (send on all, then read all) so that the server sees batches of many ready
connections, which is when it hands them to the threads; whether a round was threaded is a
matter of timing, so the rounds repeat until the INFO counters show both threaded reads and
threaded writes (no assertion on time).
"""

from __future__ import annotations

import os
import socket

import pytest

from conftest import RawConnection, encode_command, start_server, wait_until

THREADS = 4
CLIENTS = 32


@pytest.fixture(scope="module")
def threaded():
    server = start_server(directives=[("io-threads", THREADS), ("io-threads-do-reads", "yes")])
    yield server
    server.cleanup()


def info_fields(server) -> dict[str, str]:
    with RawConnection(server.host, server.port) as conn:
        text = conn.execute("INFO", "everything").decode()
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def threaded_counts(server) -> tuple[int, int]:
    """Reads and writes made in batches, by the I/O threads or by io_uring (test_io_uring.py
    runs the scenarios of this file with io-uring yes)."""
    fields = info_fields(server)
    return (int(fields["io_threaded_reads_processed"]) + int(fields["io_uring_reads_processed"]),
            int(fields["io_threaded_writes_processed"]) + int(fields["io_uring_writes_processed"]))


def open_clients(server, count: int = CLIENTS) -> list[RawConnection]:
    return [server.raw() for _ in range(count)]


def pipelined_round(conns: list[RawConnection], tag: str, depth: int) -> None:
    """Every connection sends `depth` SET/INCR/GET triples at once; then all replies are read
    and checked, connection by connection."""
    for index, conn in enumerate(conns):
        payload = b"".join(
            encode_command("SET", f"{tag}:{index}:{i}", f"v{index}-{i}" * (1 + i % 7)) +
            encode_command("INCR", f"{tag}:count:{index}") +
            encode_command("GET", f"{tag}:{index}:{i}")
            for i in range(depth))
        conn.send(payload)
    for index, conn in enumerate(conns):
        for i in range(depth):
            assert conn.read_reply() == b"OK"
            assert conn.read_reply() == i + 1
            assert conn.read_reply() == f"v{index}-{i}".encode() * (1 + i % 7)


def unpipelined_round(conns: list[RawConnection], tag: str, step: int) -> None:
    for index, conn in enumerate(conns):
        conn.send_command("RPUSH", f"{tag}:list:{index}", f"{step}")
    for index, conn in enumerate(conns):
        assert conn.read_reply() == step + 1


def test_configuration_is_immutable_and_reported(threaded):
    with RawConnection(threaded.host, threaded.port) as conn:
        assert conn.execute("CONFIG", "GET", "io-threads") == [b"io-threads", b"4"]
        assert conn.execute("CONFIG", "GET", "io-threads-do-reads") == [
            b"io-threads-do-reads", b"yes"]
        reply = conn.execute("CONFIG", "SET", "io-threads-do-reads", "no")
        assert reply.startswith(b"ERR CONFIG SET failed")
        assert b"immutable" in reply


def test_many_clients_pipelined_and_unpipelined_replies_are_their_own(threaded):
    conns = open_clients(threaded)
    rounds = 0
    # At least a few rounds of each shape, then on until both kinds of threaded I/O happened.
    while True:
        pipelined_round(conns, f"p{rounds}", depth=1 + rounds % 20)
        unpipelined_round(conns, "u", rounds)
        rounds += 1
        reads, writes = threaded_counts(threaded)
        if rounds >= 10 and reads > 0 and writes > 0:
            break
        assert rounds < 2000, f"no threaded round after {rounds} rounds ({reads}, {writes})"
    with RawConnection(threaded.host, threaded.port) as conn:
        assert conn.execute("LLEN", "u:list:0") == rounds


def test_big_replies_written_in_pieces(threaded):
    """Replies larger than a socket buffer: the threads write part, the command thread watches
    for writability, and every byte arrives in order."""
    conns = open_clients(threaded, 12)
    big = bytes(range(256)) * 4096  # 1 MiB
    with RawConnection(threaded.host, threaded.port) as setter:
        assert setter.execute("SET", "big", big) == b"OK"
    for _ in range(3):
        for conn in conns:
            conn.send(encode_command("GET", "big") + encode_command("PING") +
                      encode_command("GET", "big"))
        for conn in conns:
            assert conn.read_reply() == big
            assert conn.read_reply() == b"PONG"
            assert conn.read_reply() == big


def test_transactions_interleaved_across_clients(threaded):
    conns = open_clients(threaded, 16)
    for round_number in range(20):
        for index, conn in enumerate(conns):
            conn.send(encode_command("MULTI") +
                      encode_command("INCRBY", "tx:total", index + 1) +
                      encode_command("RPUSH", f"tx:list:{index}", round_number) +
                      encode_command("EXEC"))
        for index, conn in enumerate(conns):
            assert conn.read_reply() == b"OK"
            assert conn.read_reply() == b"QUEUED"
            assert conn.read_reply() == b"QUEUED"
            result = conn.read_reply()
            assert isinstance(result, list) and len(result) == 2
            assert result[1] == round_number + 1
    with RawConnection(threaded.host, threaded.port) as conn:
        assert int(conn.execute("GET", "tx:total")) == 20 * sum(range(1, 17))


def test_pubsub_fan_out_reaches_every_subscriber_in_order(threaded):
    subscribers = open_clients(threaded, 24)
    for conn in subscribers:
        conn.send_command("SUBSCRIBE", "news")
    for conn in subscribers:
        assert conn.read_reply() == [b"subscribe", b"news", 1]
    with RawConnection(threaded.host, threaded.port) as publisher:
        for number in range(200):
            assert publisher.execute("PUBLISH", "news", f"message {number}") == len(subscribers)
    for conn in subscribers:
        for number in range(200):
            assert conn.read_reply() == [b"message", b"news", f"message {number}".encode()]


def test_blocked_client_is_woken_by_another_while_others_pipeline(threaded):
    waiter = threaded.raw()
    waiter.send_command("BLPOP", "wake:list", 0)
    conns = open_clients(threaded, 16)
    with RawConnection(threaded.host, threaded.port) as conn:
        assert wait_until(lambda: int(info_fields(threaded)["blocked_clients"]) >= 1)
        pipelined_round(conns, "blk", depth=8)
        assert conn.execute("LPUSH", "wake:list", "hello") == 1
    assert waiter.read_reply() == [b"wake:list", b"hello"]
    pipelined_round(conns, "blk2", depth=8)
    assert waiter.execute("PING") == b"PONG"


def test_client_kill_among_busy_clients(threaded):
    conns = open_clients(threaded, 16)
    victim = threaded.raw()
    victim_id = victim.execute("CLIENT", "ID")
    # The victim has a pipeline in flight when it is killed.
    victim.send(b"".join(encode_command("INCR", "victim:count") for _ in range(500)))
    with RawConnection(threaded.host, threaded.port) as admin:
        pipelined_round(conns, "kill", depth=10)
        assert admin.execute("CLIENT", "KILL", "ID", victim_id) in (1, 0)
        pipelined_round(conns, "kill2", depth=10)
        assert victim.read_until_close() is not None
        assert victim.is_closed()
        assert admin.execute("PING") == b"PONG"
        assert int(admin.execute("GET", "victim:count")) <= 500


def test_clients_that_disconnect_mid_pipeline(threaded):
    before = int(info_fields(threaded)["connected_clients"])
    survivors = open_clients(threaded, 12)
    for round_number in range(10):
        leavers = []
        for index in range(12):
            sock = socket.create_connection((threaded.host, threaded.port), timeout=10)
            # Complete commands with large replies, then half a command, then gone (some
            # reset the connection instead of closing it).
            sock.sendall(b"".join(encode_command("SET", f"gone:{index}", "x" * 2000) +
                                  encode_command("GET", f"gone:{index}")
                                  for _ in range(50)) + b"*3\r\n$3\r\nSET\r\n$1\r\n")
            leavers.append(sock)
        pipelined_round(survivors, f"mid{round_number}", depth=5)
        for index, sock in enumerate(leavers):
            if index % 2:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                b"\x01\x00\x00\x00\x00\x00\x00\x00")
            sock.close()
        pipelined_round(survivors, f"after{round_number}", depth=5)
    with RawConnection(threaded.host, threaded.port) as conn:
        # Every leaver is gone: what is left is what was there, the survivors, this
        # connection and the INFO one.
        assert wait_until(
            lambda: int(info_fields(threaded)["connected_clients"]) <= before + 12 + 1)
        assert conn.execute("PING") == b"PONG"


def io_thread_names(server) -> list[str]:
    names = []
    for task in os.listdir(f"/proc/{server.proc.pid}/task"):
        with open(f"/proc/{server.proc.pid}/task/{task}/comm") as comm:
            name = comm.read().strip()
        if name.startswith("io_thd_"):
            names.append(name)
    return sorted(names)


def test_workers_are_named_as_redis_names_them(threaded):
    assert io_thread_names(threaded) == ["io_thd_1", "io_thd_2", "io_thd_3"]


def test_io_threads_one_starts_no_thread(server_factory):
    server = server_factory(("io-threads", 1), ("io-threads-do-reads", "yes"))
    conns = open_clients(server, 16)
    pipelined_round(conns, "single", depth=10)
    fields = info_fields(server)
    assert fields["io_threads_active"] == "0"
    assert fields["io_threaded_reads_processed"] == "0"
    assert fields["io_threaded_writes_processed"] == "0"
    assert io_thread_names(server) == []


def test_big_arguments_arrive_in_pieces_through_threaded_reads(threaded):
    """Bulk arguments of 32 KiB and more that arrive in pieces are read into blocks of their own
    (see test_big_arguments.py); with do-reads the pieces are read on the workers, into those
    blocks. Every client's value must come back whole, and its next command after it."""
    conns = open_clients(threaded, 16)
    size = 200_000
    values = [bytes([ord("a") + index % 26]) * (size - index) + f"|{index}".encode()
              for index in range(len(conns))]
    requests = [encode_command("SET", f"big:{index}", values[index]) +
                encode_command("STRLEN", f"big:{index}")
                for index in range(len(conns))]
    piece = 16_384
    for start in range(0, max(len(r) for r in requests), piece):
        for index, conn in enumerate(conns):
            chunk = requests[index][start:start + piece]
            if chunk:
                conn.send(chunk)
    for index, conn in enumerate(conns):
        assert conn.read_reply() == b"OK"
        assert conn.read_reply() == len(values[index])
    for index, conn in enumerate(conns):
        assert conn.execute("GET", f"big:{index}") == values[index]
    for conn in conns:
        conn.close()
