"""io_uring batches (io-uring yes): the reads of an epoll batch and the sends of the flush
before sleeping, each list in one io_uring system call.

The engine only moves bytes, like the I/O threads, so the scenarios of test_io_threads.py
(many clients pipelining, MULTI, pub/sub fan-out, a blocked client woken among busy ones,
CLIENT KILL of a client with a pipeline in flight, clients vanishing mid-pipeline, replies and
big arguments in pieces) run here again, imported, against a server with io-uring yes; their
`threaded` fixture is this module's. What is particular to io_uring is tested below it.
"""

from __future__ import annotations

import socket

import pytest

from conftest import RawConnection, encode_command, start_server
from test_io_threads import (  # noqa: F401  (collected here, with this module's fixture)
    info_fields, io_thread_names, open_clients, pipelined_round,
    test_big_arguments_arrive_in_pieces_through_threaded_reads, test_big_replies_written_in_pieces,
    test_blocked_client_is_woken_by_another_while_others_pipeline,
    test_client_kill_among_busy_clients, test_clients_that_disconnect_mid_pipeline,
    test_many_clients_pipelined_and_unpipelined_replies_are_their_own,
    test_pubsub_fan_out_reaches_every_subscriber_in_order,
    test_transactions_interleaved_across_clients)


@pytest.fixture(scope="module")
def threaded():
    server = start_server(directives=[("io-uring", "yes")])
    if "io_uring batches enabled" not in server.log():
        server.cleanup()
        pytest.skip("this kernel gives no io_uring ring (the server fell back to plain calls)")
    yield server
    server.cleanup()


def uring_counts(server) -> tuple[int, int]:
    fields = info_fields(server)
    return int(fields["io_uring_reads_processed"]), int(fields["io_uring_writes_processed"])


def test_configuration_is_immutable_and_reported(threaded, server_factory):
    with RawConnection(threaded.host, threaded.port) as conn:
        assert conn.execute("CONFIG", "GET", "io-uring") == [b"io-uring", b"yes"]
        reply = conn.execute("CONFIG", "SET", "io-uring", "no")
        assert reply.startswith(b"ERR CONFIG SET failed")
        assert b"immutable" in reply
    plain = server_factory()
    with RawConnection(plain.host, plain.port) as conn:
        assert conn.execute("CONFIG", "GET", "io-uring") == [b"io-uring", b"no"]


def test_it_replaces_the_io_threads_and_starts_no_thread(server_factory):
    server = server_factory(("io-uring", "yes"), ("io-threads", 4), ("io-threads-do-reads", "yes"))
    if "io_uring batches enabled" not in server.log():
        pytest.skip("no io_uring ring on this kernel")
    conns = open_clients(server, 16)
    for round_number in range(200):
        pipelined_round(conns, f"r{round_number}", depth=4)
        if all(count > 0 for count in uring_counts(server)):
            break
    assert all(count > 0 for count in uring_counts(server))
    fields = info_fields(server)
    assert fields["io_threaded_reads_processed"] == "0"
    assert fields["io_threaded_writes_processed"] == "0"
    assert io_thread_names(server) == []


def test_a_reset_among_batched_reads_closes_only_that_client(threaded):
    """A connection reset by its peer between epoll's report and the batch's recv: that recv
    fails with ECONNRESET (a -errno result) and only that client goes."""
    survivors = open_clients(threaded, 8)
    for round_number in range(30):
        leaver = socket.create_connection((threaded.host, threaded.port), timeout=10)
        leaver.sendall(encode_command("PING"))
        leaver.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        leaver.close()
        pipelined_round(survivors, f"reset{round_number}", depth=3)
    with RawConnection(threaded.host, threaded.port) as conn:
        assert conn.execute("PING") == b"PONG"


def test_clients_that_stop_reading_do_not_hold_up_the_others(threaded):
    """Sends to sockets with no room left complete at once with EAGAIN (the ring never waits):
    while three clients leave megabytes of replies unread, the others are served, and the
    three get every byte once they read."""
    big = b"y" * 100_000
    with RawConnection(threaded.host, threaded.port) as setter:
        assert setter.execute("SET", "stall:big", big) == b"OK"
    hogs = open_clients(threaded, 3)
    for hog in hogs:
        hog.send(encode_command("GET", "stall:big") * 100)  # 10 MB of replies each
    others = open_clients(threaded, 12)
    for round_number in range(20):
        pipelined_round(others, f"stall{round_number}", depth=4)
    for hog in hogs:
        for _ in range(100):
            assert hog.read_reply() == big
        assert hog.execute("PING") == b"PONG"
