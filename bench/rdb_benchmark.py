#!/usr/bin/python3
"""keywarden-server beside a stock redis-server: RDB snapshots (issue 7).

Each server in turn (keywarden first, then redis; never both at once, so that neither competes
with the other for the 2 cores) is started fresh (``--save '' --appendonly no``, 127.0.0.1, a
free port, a temp dir: _common's Server), loaded with the same N keys, and measured:

* the data set: N keys (default 1M) built the same way for both servers from a fixed seed:
  75 % small strings (8-100 bytes), 5 % integers, 15 % strings with ``EX`` 1-2 h, and 5 %
  small collections (hashes, lists, sets of integers or strings, sorted sets; 4-32 elements,
  so listpack and intset encodings), plus one big hash, list, set and sorted set (20,000
  elements each: hash table, quicklist and skip list encodings).
* ``BGSAVE``: time from sending it to ``rdb_bgsave_in_progress:0`` in INFO persistence (polled
  every 10 ms; LASTSAVE is checked to have moved too, to the second). Meanwhile a thread samples
  /proc every ``--sample-ms``: the parent's and the fork child's VmRSS, their Pss (the RSS with
  each shared page divided among the processes that map it) and the child's Private_Dirty (pages
  the child owns alone: copies made on write, plus its own allocations). Peak extra memory is
  reported two ways: parent+child RSS minus the parent's RSS before the fork (the brief's
  figure; it counts every page the two still share twice, so it is an upper bound) and
  parent+child Pss minus the parent's Pss before (what the machine really had to find). Also
  INFO ``rdb_last_cow_size`` as each server reports it, and the file's size.
* ``SAVE``: the command's round trip (the server is blocked meanwhile).
* restart: SIGTERM, then the same binary started on the same dir (new port), timed from the
  spawn until a connection gets any reply (Redis accepts connections and answers ``-LOADING``
  while it loads; keywarden loads before it listens) and until ``PING`` answers ``+PONG`` and
  ``DBSIZE`` equals N. RSS after the load and INFO ``rdb_last_load_keys_loaded``.
* checks: both servers hold N keys after the last restart, and a sample of keys (type, value,
  a TTL still set or not) reads the same on both.

BGSAVE, SAVE and the restart are repeated ``--rounds`` times (default 3) on the same data; the
table shows medians. Markdown on stdout (keywarden ÷ redis ratios), progress on stderr,
``--json FILE`` for every figure and round.

    /usr/bin/python3 bench/rdb_benchmark.py                        # 1M keys, 3-5 minutes
    /usr/bin/python3 bench/rdb_benchmark.py --quick                # smoke run, ~15 s
    /usr/bin/python3 bench/rdb_benchmark.py --keys 200000 --rounds 5 --json out.json

The server under test is KEYWARDEN (positional) or --keywarden, else $KEYWARDEN_SERVER, else
<repo>/build/src/server/keywarden-server. It builds nothing.
"""

from __future__ import annotations

import argparse
import datetime
import os
import random
import signal
import string
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (HOST, Server, add_server_arguments, median,  # noqa: E402
                     redis_version, resolve_server_arguments)
from memory_expiry_benchmark import HEAD, Conn, encode, row, table, write_json  # noqa: E402
from redis_benchmark import _die_with_parent, free_port  # noqa: E402

SERVERS = ("keywarden", "redis")
BIG_ELEMENTS = 20_000
SAMPLE_KEYS = 200
MB = 2**20


def log(*a) -> None:
    print("#", *a, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# the data set
# --------------------------------------------------------------------------------------------

def build_dataset(keys: int, big_elements: int, seed: int = 7) -> tuple[list[tuple[bytes, int]],
                                                                        list[bytes]]:
    """The load as pipelines of pre-encoded commands, [(payload, commands)], one command per key
    (so DBSIZE ends at `keys`), and a sample of key names to compare afterwards.

    The kind of key i is chosen by i % 100, so every prefix of the data set has the same mix;
    contents come from a seeded generator and a pool of values, so both servers get the same
    bytes."""
    rng = random.Random(seed)
    alphabet = (string.ascii_letters + string.digits).encode()
    pool = [bytes(rng.choice(alphabet) for _ in range(rng.randint(8, 100))) for _ in range(4096)]
    members = [b"m%d" % i for i in range(64)]
    commands: list[bytes] = []
    sample: list[bytes] = []
    sample_every = max(1, keys // SAMPLE_KEYS)

    def add(command: bytes, key: bytes, i: int) -> None:
        commands.append(command)
        if i % sample_every == 0:
            sample.append(key)

    big = []
    if keys >= 1000:
        big = [("hash", lambda k: encode(b"HSET", k, *[x for j in range(big_elements)
                                                       for x in (b"f%d" % j, pool[j % 4096])])),
               ("list", lambda k: encode(b"RPUSH", k, *[pool[j % 4096]
                                                        for j in range(big_elements)])),
               ("set", lambda k: encode(b"SADD", k, *[b"s%d" % j for j in range(big_elements)])),
               ("zset", lambda k: encode(b"ZADD", k, *[x for j in range(big_elements)
                                                       for x in (b"%d.5" % j, b"z%d" % j)]))]
    for kind, make in big:
        key = b"big:" + kind.encode()
        commands.append(make(key))
        sample.append(key)
    for i in range(keys - len(big)):
        bucket = i % 100
        value = pool[(i * 7919) % 4096]
        if bucket < 5:
            key = b"int:%08d" % i
            add(encode(b"SET", key, b"%d" % rng.randint(-10**12, 10**12)), key, i)
        elif bucket < 20:
            key = b"ttl:%08d" % i
            add(encode(b"SET", key, value, b"EX", b"%d" % (3600 + i % 3600)), key, i)
        elif bucket < 22:
            key = b"hash:%08d" % i
            n = rng.randint(4, 32)
            add(encode(b"HSET", key, *[x for j in range(n)
                                       for x in (members[j], pool[(i + j) % 4096][:24])]), key, i)
        elif bucket == 22:
            key = b"list:%08d" % i
            n = rng.randint(4, 32)
            add(encode(b"RPUSH", key, *[pool[(i + j) % 4096][:32] for j in range(n)]), key, i)
        elif bucket == 23:
            key = b"set:%08d" % i
            n = rng.randint(4, 32)
            if i % 2:
                add(encode(b"SADD", key, *[b"%d" % (i + 3 * j) for j in range(n)]), key, i)
            else:
                add(encode(b"SADD", key, *rng.sample(members, n)), key, i)
        elif bucket == 24:
            key = b"zset:%08d" % i
            n = rng.randint(4, 32)
            add(encode(b"ZADD", key, *[x for j in range(n)
                                       for x in (b"%d" % rng.randint(0, 10**6), members[j])]),
                key, i)
        else:
            key = b"key:%08d" % i
            add(encode(b"SET", key, value), key, i)
    batches = []
    for start in range(0, len(commands), 2000):
        chunk = commands[start:start + 2000]
        batches.append((b"".join(chunk), len(chunk)))
    return batches, sample


def load_dataset(conn: Conn, batches) -> None:
    errors = 0
    for payload, count in batches:
        errors += conn.pipeline_simple(payload, count)
    if errors:
        raise RuntimeError(f"{errors} commands of the load failed")


def fingerprint(conn: Conn, key: bytes):
    """What a key holds, in a form both servers must agree on (element order where it is not
    defined is sorted away; a TTL only as present or not, since it ticks)."""
    kind = conn.call("TYPE", key)
    if kind == b"string":
        value = conn.call("GET", key)
    elif kind == b"hash":
        flat = conn.call("HGETALL", key)
        value = sorted(zip(flat[::2], flat[1::2]))
    elif kind == b"list":
        value = conn.call("LRANGE", key, 0, -1)
    elif kind == b"set":
        value = sorted(conn.call("SMEMBERS", key))
    elif kind == b"zset":
        value = conn.call("ZRANGE", key, 0, -1, "WITHSCORES")
    else:
        value = None
    return kind, value, conn.call("TTL", key) > 0


# --------------------------------------------------------------------------------------------
# /proc
# --------------------------------------------------------------------------------------------

def proc_status_kb(pid: int, field: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def smaps_rollup(pid: int) -> dict[str, int]:
    """Rss, Pss, Private_Dirty… in bytes; {} once the process is gone."""
    out = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[2] == "kB":
                    out[parts[0].rstrip(":")] = int(parts[1]) * 1024
    except (OSError, ValueError):
        return {}
    return out


def children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # the name (field 2) is in parentheses and may hold spaces: split after it
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == pid:
            found.append(int(entry))
    return found


class ForkSampler(threading.Thread):
    """Samples the parent and its fork child every `interval` s until stop(): peaks of
    parent+child RSS and Pss and of the child's Private_Dirty."""

    def __init__(self, parent: int, interval: float):
        super().__init__(daemon=True)
        self.parent, self.interval = parent, interval
        self.child = None
        self.samples = 0
        self.child_samples = 0
        self.peak_rss = self.peak_pss = self.peak_child_dirty = 0
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            if self.child is None:
                kids = children_of(self.parent)
                self.child = kids[0] if kids else None
            parent = smaps_rollup(self.parent)
            child = smaps_rollup(self.child) if self.child is not None else {}
            if parent:
                self.samples += 1
                if child:
                    self.child_samples += 1
                self.peak_rss = max(self.peak_rss, parent["Rss"] + child.get("Rss", 0))
                self.peak_pss = max(self.peak_pss, parent["Pss"] + child.get("Pss", 0))
                self.peak_child_dirty = max(self.peak_child_dirty, child.get("Private_Dirty", 0))
            self._done.wait(self.interval)

    def stop(self) -> None:
        self._done.set()
        self.join()


# --------------------------------------------------------------------------------------------
# measurements
# --------------------------------------------------------------------------------------------

def wait_for(predicate, timeout: float, what: str, interval: float = 0.01):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}")


def measure_bgsave(args, server: Server, conn: Conn) -> dict:
    before = smaps_rollup(server.pid)
    lastsave_before = conn.call("LASTSAVE")
    sampler = ForkSampler(server.pid, args.sample_ms / 1000)
    sampler.start()
    start = time.monotonic()
    try:
        reply = conn.call("BGSAVE")
        info = wait_for(lambda: (lambda i: i if i.get("rdb_bgsave_in_progress") == "0" else None)(
            conn.info("persistence")), args.timeout, "rdb_bgsave_in_progress:0")
        elapsed = time.monotonic() - start
    finally:
        sampler.stop()
    if info.get("rdb_last_bgsave_status") != "ok":
        raise RuntimeError(f"{server.name}: BGSAVE failed ({reply!r}, {info})")
    # LASTSAVE has a 1 s resolution: it may not move when two saves fall in the same second
    lastsave = wait_for(lambda: (lambda t: t if t >= lastsave_before else None)(
        conn.call("LASTSAVE")), 5, "LASTSAVE")
    return {"seconds": elapsed,
            "parent_rss_before": before["Rss"], "parent_pss_before": before["Pss"],
            "extra_rss_peak": max(0, sampler.peak_rss - before["Rss"]),
            "extra_pss_peak": max(0, sampler.peak_pss - before["Pss"]),
            "child_private_dirty_peak": sampler.peak_child_dirty,
            "samples": sampler.samples, "child_samples": sampler.child_samples,
            "child_pid": sampler.child,
            "rdb_last_cow_size": int(info.get("rdb_last_cow_size", 0)),
            "rdb_last_bgsave_time_sec": int(info.get("rdb_last_bgsave_time_sec", -1)),
            "lastsave_before": lastsave_before, "lastsave_after": lastsave,
            "file_bytes": os.path.getsize(os.path.join(server.workdir, "dump.rdb"))}


def measure_save(server: Server, conn: Conn) -> dict:
    start = time.monotonic()
    reply = conn.call("SAVE")
    elapsed = time.monotonic() - start
    if reply != b"OK":
        raise RuntimeError(f"{server.name}: SAVE replied {reply!r}")
    return {"seconds": elapsed,
            "file_bytes": os.path.getsize(os.path.join(server.workdir, "dump.rdb"))}


def restart_timed(args, server: Server, expected: int) -> tuple[dict, Conn]:
    """Stops the server, starts it again on its dir and times the load; returns the figures and
    a connection to the restarted server (server.proc/.port now name the new process)."""
    server.stop()
    server.port = free_port()
    argv = [server.binary, "--port", str(server.port), "--bind", HOST, "--save", "",
            "--appendonly", "no"]
    with open(server.log_path, "ab") as out:
        start = time.monotonic()
        server.proc = subprocess.Popen(argv, cwd=server.workdir, stdin=subprocess.DEVNULL,
                                       stdout=out, stderr=subprocess.STDOUT,
                                       preexec_fn=_die_with_parent)
    first_reply = pong = None
    conn = None
    deadline = start + args.timeout
    while True:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{server.name}: not ready {args.timeout:.0f} s after the restart")
        if server.proc.poll() is not None:
            raise RuntimeError(f"{server.name} exited ({server.proc.returncode}) while loading; "
                               f"see {server.log_path}")
        try:
            if conn is None:
                conn = Conn(server.port, timeout=args.timeout)
            conn.sock.sendall(encode("PING"))
            reply = conn.reply()
            now = time.monotonic()
            if first_reply is None:
                first_reply = now - start
            if reply == b"PONG":
                pong = pong or now - start
                size = conn.call("DBSIZE")
                if size == expected:
                    ready = time.monotonic() - start
                    break
                # Redis never answers PONG with a partial data set; anything else is a failure
                raise RuntimeError(f"{server.name}: DBSIZE {size} after the restart, "
                                   f"expected {expected}")
        except ConnectionRefusedError:
            conn = None
        except OSError:
            if conn is not None:
                conn.close()
            conn = None
        time.sleep(0.005)
    info = conn.info()
    return ({"first_reply_s": first_reply, "pong_s": pong, "ready_s": ready,
             "rss_after": proc_status_kb(server.pid, "VmRSS"),
             "used_memory_after": int(info.get("used_memory", 0)),
             "keys_loaded": int(info.get("rdb_last_load_keys_loaded", -1)),
             "dbsize": expected}, conn)


def run_server(args, name: str, binary: str, batches, sample: list[bytes]) -> dict:
    server = Server(name, binary)
    try:
        server.start()
        conn = Conn(server.port, timeout=args.timeout)
        log(f"{name}: loading {args.keys:,} keys")
        start = time.monotonic()
        load_dataset(conn, batches)
        load_s = time.monotonic() - start
        dbsize = conn.call("DBSIZE")
        if dbsize != args.keys:
            raise RuntimeError(f"{name}: DBSIZE {dbsize} after the load, expected {args.keys}")
        info = conn.info("memory")
        res = {"keys": dbsize, "load_s": load_s, "used_memory": int(info["used_memory"]),
               "rss": proc_status_kb(server.pid, "VmRSS"), "bgsave": [], "save": [],
               "restart": []}
        log(f"{name}: loaded in {load_s:.1f} s, RSS {res['rss'] / MB:,.0f} MB")
        for i in range(args.rounds):
            b = measure_bgsave(args, server, conn)
            res["bgsave"].append(b)
            log(f"{name}: BGSAVE {i + 1}/{args.rounds}: {b['seconds']:.2f} s, extra RSS "
                f"{b['extra_rss_peak'] / MB:,.0f} MB, extra Pss {b['extra_pss_peak'] / MB:,.0f} "
                f"MB, child dirty {b['child_private_dirty_peak'] / MB:,.1f} MB "
                f"({b['child_samples']}/{b['samples']} samples saw the child), cow "
                f"{b['rdb_last_cow_size'] / MB:,.1f} MB, file {b['file_bytes'] / MB:,.1f} MB")
            s = measure_save(server, conn)
            res["save"].append(s)
            log(f"{name}: SAVE {i + 1}/{args.rounds}: {s['seconds']:.2f} s")
        for i in range(args.rounds):
            conn.close()
            r, conn = restart_timed(args, server, args.keys)
            res["restart"].append(r)
            log(f"{name}: restart {i + 1}/{args.rounds}: first reply {r['first_reply_s']:.2f} s, "
                f"ready (PONG, DBSIZE {args.keys:,}) {r['ready_s']:.2f} s")
        res["dbsize_after_restart"] = conn.call("DBSIZE")
        res["sample"] = [fingerprint(conn, key) for key in sample]
        conn.close()
        if not server.alive():
            raise RuntimeError(f"{name} died during the run")
        return res
    finally:
        server.cleanup()


def summarize(res: dict) -> dict:
    def med(kind, key):
        return median([x[key] for x in res[kind]])
    return {"bgsave_s": med("bgsave", "seconds"),
            "extra_rss": med("bgsave", "extra_rss_peak"),
            "extra_pss": med("bgsave", "extra_pss_peak"),
            "child_dirty": med("bgsave", "child_private_dirty_peak"),
            "cow": med("bgsave", "rdb_last_cow_size"),
            "file": res["save"][-1]["file_bytes"],
            "save_s": med("save", "seconds"),
            "first_reply_s": med("restart", "first_reply_s"),
            "ready_s": med("restart", "ready_s"),
            "rss_after": med("restart", "rss_after"),
            "keys_loaded": res["restart"][-1]["keys_loaded"]}


def report(results: dict, args) -> str:
    r, k = summarize(results["redis"]), summarize(results["keywarden"])
    rr, kr = results["redis"], results["keywarden"]
    n = args.rounds
    rows = [row("keys (DBSIZE after the load)", rr["keys"], kr["keys"], ",.0f"),
            row("used_memory before the saves", rr["used_memory"] / MB,
                kr["used_memory"] / MB, ",.1f", " MB"),
            row("RSS before the saves", rr["rss"] / MB, kr["rss"] / MB, ",.1f", " MB"),
            row("BGSAVE time (BGSAVE → rdb_bgsave_in_progress:0)", r["bgsave_s"],
                k["bgsave_s"], ",.2f", " s"),
            row("BGSAVE peak extra memory: parent+child RSS − parent RSS before",
                r["extra_rss"] / MB, k["extra_rss"] / MB, ",.1f", " MB"),
            row("BGSAVE peak extra memory: parent+child Pss − parent Pss before",
                r["extra_pss"] / MB, k["extra_pss"] / MB, ",.1f", " MB"),
            row("BGSAVE child Private_Dirty peak (/proc)", r["child_dirty"] / MB,
                k["child_dirty"] / MB, ",.1f", " MB"),
            row("INFO rdb_last_cow_size", r["cow"] / MB, k["cow"] / MB, ",.1f", " MB"),
            row("RDB file size", r["file"] / MB, k["file"] / MB, ",.1f", " MB"),
            row("SAVE time (foreground)", r["save_s"], k["save_s"], ",.2f", " s"),
            row("restart: first reply (any, -LOADING included)", r["first_reply_s"],
                k["first_reply_s"], ",.2f", " s"),
            row(f"restart: PING answered and DBSIZE = {args.keys:,}", r["ready_s"], k["ready_s"],
                ",.2f", " s"),
            row("RSS after the restart", r["rss_after"] / MB, k["rss_after"] / MB, ",.1f",
                " MB"),
            row("INFO rdb_last_load_keys_loaded", r["keys_loaded"], k["keys_loaded"], ",.0f")]
    same_size = rr["dbsize_after_restart"] == kr["dbsize_after_restart"] == args.keys
    differ = sum(1 for a, b in zip(rr["sample"], kr["sample"]) if a != b)
    checks = (f"check: DBSIZE after the last restart: redis {rr['dbsize_after_restart']:,}, "
              f"keywarden {kr['dbsize_after_restart']:,} (expected {args.keys:,}): "
              f"{'same' if same_size else 'DIFFERENT'}; {len(rr['sample'])} sampled keys "
              f"(type, value, TTL set): {differ} differ")
    for name, figures in (("redis", r), ("keywarden", k)):
        if figures["cow"] == 0 and figures["child_dirty"] > 0:
            checks += (f"\n\nnote: {name} reports rdb_last_cow_size 0 while its fork child's "
                       f"Private_Dirty peaked at {figures['child_dirty'] / MB:,.1f} MB: "
                       "the field is not measured there")
    return (f"### RDB: {args.keys:,} keys, median of {n} round{'s' if n > 1 else ''}\n\n"
            + table(HEAD, rows) + "\n\n" + checks)


def main() -> int:
    parser = argparse.ArgumentParser(
        description="RDB snapshots: BGSAVE, SAVE and restart of keywarden-server beside "
                    "redis-server (issue 7)",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    add_server_arguments(parser)
    parser.add_argument("--keys", type=int, default=1_000_000, help="keys in the data set")
    parser.add_argument("--rounds", type=int, default=3,
                        help="BGSAVEs, SAVEs and restarts per server (medians reported)")
    parser.add_argument("--sample-ms", type=float, default=50.0,
                        help="BGSAVE: /proc sampling period of the parent and the child")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="give up on one save or restart after this many seconds")
    parser.add_argument("--json", metavar="FILE", help="also write every figure and round")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 20,000 keys, one round")
    args = parser.parse_args()
    resolve_server_arguments(args)
    big_elements = BIG_ELEMENTS
    if args.quick:
        args.keys, args.rounds, args.sample_ms, args.timeout = 20_000, 1, 10.0, 60.0
        big_elements = 2_000
    if args.keys < 1 or args.rounds < 1:
        parser.error("--keys and --rounds must be at least 1")

    def on_sigterm(*_):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, on_sigterm)

    started = time.monotonic()
    load_at_start = os.getloadavg()
    log(f"building the data set ({args.keys:,} keys)")
    batches, sample = build_dataset(args.keys, big_elements)
    results = {}
    try:
        for name, binary in (("keywarden", args.keywarden), ("redis", args.redis)):
            results[name] = run_server(args, name, binary, batches, sample)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        print(f"\nbenchmark aborted: {e!r}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nbenchmark interrupted", file=sys.stderr)
        return 130

    print(f"keywarden vs redis-server {redis_version(args.redis)}: RDB persistence (issue 7), "
          f"{'--quick, ' if args.quick else ''}{os.cpu_count()} CPUs, "
          f"{datetime.datetime.now().isoformat(timespec='minutes')}, "
          f"{time.monotonic() - started:.0f} s, load average at the start "
          f"{load_at_start[0]:.1f} / at the end {os.getloadavg()[0]:.1f}")
    print()
    print(report(results, args))
    if args.json:
        for res in results.values():
            res["sample"] = [[kind, repr(value), ttl] for kind, value, ttl in res["sample"]]
        write_json(args, load_at_start, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
