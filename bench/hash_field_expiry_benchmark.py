#!/usr/bin/python3
"""keywarden-server beside a stock redis-server: what hash-field expiration costs.

Redis 7.0 (the reference here) has no field TTLs, so the comparison is made where it can be:

* ``memory``: INFO ``used_memory`` growth per field after loading H hashes of F fields
  (``field:NNN`` -> 10-byte value) on both servers, in the listpack shape (50 fields a hash)
  and the hashtable shape (5,000 fields a hash), then, on keywarden, the growth once every
  field has a deadline (HPEXPIREAT, a different deadline a field, days ahead): the bytes a
  volatile field costs beyond a plain one. Beside it, what a key TTL costs on each server
  (N string keys, then PEXPIRE on each).
* ``reclaim``: 1 M fields in 10 k hashes (100 fields each), every field with the same
  deadline D a few seconds ahead, never touched; 10 k other string keys stay. Time from D until
  INFO ``expired_subkeys`` counts every field and DBSIZE shows only the other keys (polled every
  10 ms), while a probe process GETs one of the other keys in a loop: GET p50/p99/max from D
  until then, beside the same probe on the idle server afterwards. For scale, the same run
  with 1 M string keys expiring at D instead of fields, on both servers.

Both servers start fresh (``--save '' --appendonly no``, 127.0.0.1, free ports). Markdown tables
on stdout, progress on stderr, ``--json FILE`` for every figure.

    /usr/bin/python3 bench/hash_field_expiry_benchmark.py            # full run, ~1 minute
    /usr/bin/python3 bench/hash_field_expiry_benchmark.py --quick    # smoke run, ~10 s

The server under test is --keywarden, else $KEYWARDEN_SERVER, else
<repo>/build/src/server/keywarden-server. It builds nothing. The probe is
build/bench/latency_probe when built (a Python process otherwise, whose own round trip is
most of what it measures).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (add_server_arguments, markdown_table,  # noqa: E402
                     redis_version, resolve_server_arguments, running_servers)
from memory_expiry_benchmark import (DEFAULT_PROBE, Conn, Probe, encode,  # noqa: E402
                                     latency_stats, load, now_ms)

VALUE = b"v" * 10


def log(*a) -> None:
    print(*a, file=sys.stderr, flush=True)


def used_memory(conn: Conn) -> int:
    time.sleep(0.1)
    return int(conn.info("memory")["used_memory"])


def field_names(count: int) -> list[bytes]:
    return [b"field:%d" % i for i in range(count)]


def hset_commands(prefix: bytes, hashes: int, fields: list[bytes]):
    """One HSET per hash, in chunks of 500 fields so that no command is huge."""
    for h in range(hashes):
        key = prefix + b"%d" % h
        for i in range(0, len(fields), 500):
            args = [b"HSET", key]
            for f in fields[i:i + 500]:
                args += [f, VALUE]
            yield encode(*args)


def hpexpireat_commands(prefix: bytes, hashes: int, fields: list[bytes], deadline_of):
    """One HPEXPIREAT per field and hash when deadlines differ, else one per 500 fields."""
    for h in range(hashes):
        key = prefix + b"%d" % h
        if deadline_of is None:
            continue
        if callable(deadline_of):
            for i, f in enumerate(fields):
                yield encode(b"HPEXPIREAT", key, deadline_of(h, i), b"FIELDS", 1, f), 1
        else:
            for i in range(0, len(fields), 500):
                chunk = fields[i:i + 500]
                yield (encode(b"HPEXPIREAT", key, deadline_of, b"FIELDS", len(chunk), *chunk),
                       len(chunk))


def drain(conn: Conn, commands, batch: int = 2000) -> int:
    """Sends (command, fields) pairs whose replies are arrays of one integer per field
    (HPEXPIREAT), `batch` at a time, reading them as lines (1 + fields a reply) rather than
    parsing them; returns how many lines were errors (an error reply would be one line, not
    1 + fields, and end the run on the socket's timeout: there are none in a normal run)."""
    errors, chunk, lines = 0, [], 0
    for command, fields in commands:
        chunk.append(command)
        lines += 1 + fields
        if len(chunk) == batch:
            errors += conn.pipeline_simple(b"".join(chunk), lines)
            chunk, lines = [], 0
    if chunk:
        errors += conn.pipeline_simple(b"".join(chunk), lines)
    return errors


def section_memory(args, server) -> dict:
    conn = Conn(server.port)
    out = {}
    far = now_ms() + 10 * 86_400_000
    for shape, hashes, per_hash in (("listpack", args.small_hashes, 50),
                                    ("hashtable", args.big_hashes, 5_000)):
        fields = field_names(per_hash)
        total = hashes * per_hash
        prefix = b"mem:%s:" % shape.encode()
        u0 = used_memory(conn)
        errors = load(conn, hset_commands(prefix, hashes, fields), batch=200)
        u1 = used_memory(conn)
        entry = {"hashes": hashes, "fields": total, "errors": errors,
                 "plain_per_field": (u1 - u0) / total,
                 "encoding": conn.call("OBJECT", "ENCODING", prefix + b"0").decode()}
        if server.name == "keywarden":
            # A different deadline a field, in no particular order, as real TTLs are.
            errors = drain(conn, hpexpireat_commands(
                prefix, hashes, fields, lambda h, i: far + (h * 7919 + i * 104729) % 3_600_000))
            u2 = used_memory(conn)
            entry.update(volatile_errors=errors, volatile_extra_per_field=(u2 - u1) / total,
                         volatile_encoding=conn.call("OBJECT", "ENCODING",
                                                     prefix + b"0").decode())
        conn.call("FLUSHALL")
        out[shape] = entry
        log(f"{server.name}: {shape} {total:,} fields: {entry}")
    # What a key TTL costs, for scale.
    n = args.keys
    u0 = used_memory(conn)
    load(conn, (encode(b"SET", b"key:%d" % i, VALUE) for i in range(n)))
    u1 = used_memory(conn)
    load(conn, (encode(b"PEXPIREAT", b"key:%d" % i, far + i % 3_600_000) for i in range(n)))
    u2 = used_memory(conn)
    out["key_ttl"] = {"keys": n, "plain_per_key": (u1 - u0) / n, "ttl_extra_per_key": (u2 - u1) / n}
    conn.call("FLUSHALL")
    conn.close()
    return out


def wait_reclaimed(conn: Conn, done, timeout: float) -> float | None:
    """Polls `done(conn)` every 10 ms; the time.monotonic() when it first held, None on timeout."""
    limit = time.monotonic() + timeout
    while time.monotonic() < limit:
        if done(conn):
            return time.monotonic()
        time.sleep(0.01)
    return None


def reclaim_run(args, server, fields_mode: bool) -> dict:
    """1 M fields (or, fields_mode False, 1 M keys) expiring at one deadline; reclaim time and
    GET latency of a probe meanwhile, then the same probe on the idle server."""
    conn = Conn(server.port)
    conn.call("FLUSHALL")
    others = args.other_keys
    load(conn, (encode(b"SET", b"other:%d" % i, VALUE) for i in range(others)))
    hashes, per_hash = args.reclaim_hashes, 100
    total = hashes * per_hash
    fields = field_names(per_hash)
    t = time.monotonic()
    if fields_mode:
        load(conn, hset_commands(b"rh:", hashes, fields), batch=200)
    else:
        load(conn, (encode(b"SET", b"rk:%d" % i, VALUE) for i in range(total)))
    load_s = time.monotonic() - t
    before = int(conn.info("stats").get("expired_subkeys", 0))
    # The deadline leaves room to file every deadline first (filing costs about what loading
    # did); a deadline that passed while filing would delete fields on the spot, not expire
    # them, and the run says so (deadline_late).
    deadline = now_ms() + int(max(1.0, 2 * load_s) * 1000) + 1000
    t = time.monotonic()
    if fields_mode:
        errors = drain(conn, hpexpireat_commands(b"rh:", hashes, fields, deadline))
    else:
        errors = load(conn, (encode(b"PEXPIREAT", b"rk:%d" % i, deadline) for i in range(total)))
    late = now_ms() >= deadline
    probe = Probe(server.port, "GET", "other:1")
    try:
        time.sleep(max(0.0, (deadline - now_ms()) / 1000))
        t_deadline = time.monotonic()

        def done(c: Conn) -> bool:
            if c.call("DBSIZE") != others:
                return False
            return not fields_mode or \
                int(c.info("stats")["expired_subkeys"]) - before >= total
        t_done = wait_reclaimed(conn, done, args.timeout)
        starts, lats = probe.stop()
    except BaseException:
        probe.kill()
        raise
    during = latency_stats(starts, lats, t_deadline, t_done or time.monotonic())
    idle_probe = Probe(server.port, "GET", "other:1")
    try:
        t0 = time.monotonic()
        time.sleep(args.idle_seconds)
        starts, lats = idle_probe.stop()
    except BaseException:
        idle_probe.kill()
        raise
    idle = latency_stats(starts, lats, t0 + 0.05, time.monotonic())
    result = {"items": total, "hashes": hashes if fields_mode else 0, "errors": errors,
              "deadline_late": late,
              "reclaim_s": None if t_done is None else t_done - t_deadline,
              "during": during, "idle": idle,
              "dbsize_after": conn.call("DBSIZE")}
    log(f"{server.name}: {'fields' if fields_mode else 'keys'}: {result}")
    conn.call("FLUSHALL")
    conn.close()
    return result


def fmt(value, spec: str = ",.1f") -> str:
    return "n/a" if value is None else format(value, spec)


def report(results: dict, args, version: str) -> str:
    lines = [f"### Hash-field expiration, keywarden vs redis-server {version}",
             f"machine: {os.cpu_count()} CPUs, {datetime.date.today()}", ""]
    if "memory" in results:
        mem = results["memory"]
        rows = []
        for shape in ("listpack", "hashtable"):
            r, k = mem["redis"][shape], mem["keywarden"][shape]
            label = f"{shape}: {k['hashes']:,} hashes x {k['fields'] // k['hashes']:,} fields"
            rows.append([f"{label}, plain field", fmt(r["plain_per_field"]) + " B",
                         fmt(k["plain_per_field"]) + " B"])
            rows.append([f"{label}, extra per volatile field ({k['volatile_encoding']})",
                         "n/a (7.0 has no field TTLs)",
                         fmt(k["volatile_extra_per_field"]) + " B"])
        r, k = mem["redis"]["key_ttl"], mem["keywarden"]["key_ttl"]
        rows.append([f"string key ({k['keys']:,} keys), plain", fmt(r["plain_per_key"]) + " B",
                     fmt(k["plain_per_key"]) + " B"])
        rows.append(["string key, extra for a key TTL", fmt(r["ttl_extra_per_key"]) + " B",
                     fmt(k["ttl_extra_per_key"]) + " B"])
        lines += ["#### Memory (INFO used_memory growth)", "",
                  markdown_table(["what", "redis-server", "keywarden"], rows, right={1, 2}), ""]
    if "reclaim" in results:
        rec = results["reclaim"]
        rows = []

        def add(label, run):
            reclaim = ("not within %.0f s" % args.timeout if run["reclaim_s"] is None
                       else f"{run['reclaim_s']:.2f} s")
            if run["deadline_late"]:
                reclaim += " (deadline passed while filing)"
            rows.append([label, reclaim, fmt(run["during"]["p99_ms"], ".3f") + " ms",
                         fmt(run["during"]["max_ms"], ".3f") + " ms",
                         fmt(run["idle"]["p99_ms"], ".3f") + " ms"])
        fields = rec["keywarden_fields"]
        add(f"keywarden: {fields['items']:,} fields in {fields['hashes']:,} hashes", fields)
        add(f"keywarden: {rec['keywarden_keys']['items']:,} keys", rec["keywarden_keys"])
        add(f"redis-server: {rec['redis_keys']['items']:,} keys", rec["redis_keys"])
        lines += [f"#### Active reclaim ({args.other_keys:,} other keys stay; GET of one of them "
                  f"in a loop)", "",
                  markdown_table(["what expires at one deadline", "reclaimed after",
                                  "GET p99 meanwhile", "GET max meanwhile", "GET p99 idle"],
                                 rows, right={1, 2, 3, 4}), ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_server_arguments(parser)
    parser.add_argument("--only", default="memory,reclaim")
    parser.add_argument("--small-hashes", type=int, default=10_000)
    parser.add_argument("--big-hashes", type=int, default=40)
    parser.add_argument("--keys", type=int, default=200_000)
    parser.add_argument("--reclaim-hashes", type=int, default=10_000)
    parser.add_argument("--other-keys", type=int, default=10_000)
    parser.add_argument("--idle-seconds", type=float, default=2.0)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--probe", default=str(DEFAULT_PROBE) if DEFAULT_PROBE.exists() else "",
                        help="latency_probe binary (else a Python probe)")
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke)")
    parser.add_argument("--json", help="also write every figure here")
    args = parser.parse_args()
    resolve_server_arguments(args)
    Probe.binary = args.probe or None
    if args.quick:
        args.small_hashes, args.big_hashes, args.keys = 400, 4, 20_000
        args.reclaim_hashes, args.other_keys, args.idle_seconds = 300, 1_000, 0.5
        args.timeout = 30.0
    only = set(args.only.split(","))
    results: dict = {}
    with running_servers(args) as servers:
        if "memory" in only:
            results["memory"] = {name: section_memory(args, s) for name, s in servers.items()}
        if "reclaim" in only:
            results["reclaim"] = {
                "keywarden_fields": reclaim_run(args, servers["keywarden"], True),
                "keywarden_keys": reclaim_run(args, servers["keywarden"], False),
                "redis_keys": reclaim_run(args, servers["redis"], False)}
        version = redis_version(args.redis)
    print(report(results, args, version))
    print(f"latency probe: {'C++ (latency_probe)' if Probe.binary else 'Python'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": " ".join(sys.argv), "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
