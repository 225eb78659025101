"""LATENCY HISTOGRAM against a stock redis-server 7.0: the same commands on both servers give
maps with the same commands, the same call counts and well-formed cumulative histograms (the
bucket counts themselves depend on timing, so only their shape is compared)."""

from __future__ import annotations

import pytest

from conftest import Map

# Upper bounds Redis 7.0 names its power-of-two steps by (1024 ns, 2048 ns, …, in µs).
STEP_BOUNDS = {(step + step // 128 - 1) // 1000 for step in (1024 << k for k in range(24))}


def histogram(conn, *names):
    reply = conn.execute("LATENCY", "HISTOGRAM", *names)
    assert isinstance(reply, Map)
    return reply


def check_shape(entry):
    assert list(entry) == [b"calls", b"histogram_usec"]
    steps = entry[b"histogram_usec"]
    assert isinstance(steps, Map) and steps
    counts = [steps[bound] for bound in sorted(steps)]
    assert all(bound in STEP_BOUNDS for bound in steps), steps
    assert counts == sorted(counts) and len(set(counts)) == len(counts)
    assert counts[-1] == entry[b"calls"]


@pytest.mark.parametrize("protocol", [2, 3])
def test_same_commands_and_calls(keywarden, reference_redis, protocol):
    summaries = []
    for server in (keywarden, reference_redis):
        conn = server.raw()
        if protocol == 3:
            conn.execute("HELLO", "3")
        assert conn.execute("CONFIG", "RESETSTAT") == b"OK"
        for i in range(20):
            conn.execute("SET", f"k{i}", "v")
        for i in range(7):
            conn.execute("GET", f"k{i}")
        conn.execute("CONFIG", "GET", "maxmemory")
        conn.execute("CLIENT", "ID")
        if protocol == 2:
            # RESP2 has no map type: the reply is a flat array of name, entry pairs.
            flat = conn.execute("LATENCY", "HISTOGRAM", "set", "get")
            assert isinstance(flat, list) and len(flat) == 4
            summaries.append((flat[0], flat[2], flat[1][1], flat[3][1]))
            continue
        everything = histogram(conn)
        for entry in everything.values():
            check_shape(entry)
        named = histogram(conn, "set", "GET", "config", "client|id", "nosuchcommand", "get")
        for entry in named.values():
            check_shape(entry)
        summaries.append((sorted(n for n in everything if n != b"latency|histogram"
                                 and n != b"hello" and n != b"config|resetstat"),
                          # a container's subcommands come in Redis's hash order: sorted here
                          sorted((name, entry[b"calls"]) for name, entry in named.items()),
                          histogram(conn, "nosuchcommand"), histogram(conn, "client|nosuch")))
    assert summaries[0] == summaries[1]


def test_help_lists_histogram(keywarden, reference_redis):
    assert keywarden.raw().execute("LATENCY", "HELP") == \
        reference_redis.raw().execute("LATENCY", "HELP")
