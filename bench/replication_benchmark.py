#!/usr/bin/python3
"""Replication, keywarden-server beside a stock redis-server in one run (issue 17).

Each system replicates to its own kind: a keywarden primary to keywarden replicas, a redis
primary to redis replicas, every server fresh (``--save '' --appendonly no``, 127.0.0.1, a free
port, its own temp dir as ``dir``), ``repl-diskless-sync-delay 0``, a ``repl-backlog-size``
large enough for the break of part 2. Four parts (select with --only, comma separated):

* ``fullsync``: the primary holds N keys (``DEBUG POPULATE N key 100``: strings of 100 bytes;
  ``--mix`` adds N/10 small hashes, lists, sets and sorted sets). A fresh replica is told
  ``REPLICAOF``; the sync time runs from sending it until the replica's INFO says
  ``master_link_status:up`` and its ``db0:keys`` equals the primary's (INFO polled every 10 ms).
  Disk-based and diskless (``repl-diskless-sync no|yes``, set on the primary with CONFIG SET).
  Meanwhile a probe (bench/latency_probe, else a Python process) sends ``GET key:1`` to the
  primary in a loop, one at a time: p50/p99/max of its round trips during the sync and in the
  second before. Also the primary's CPU time during the sync (its threads plus reaped fork
  children, so Redis's RDB child counts; serving the probe counts too, hence the GETs row), and
  a check that ``DEBUG DIGEST`` is the same on both.
* ``psync``: a replica connected through a TCP proxy of this script. The proxy cuts the link
  (closes both sides and refuses the replica for the break), the driver writes to the primary
  for ``--break`` seconds (SETs of 100 bytes at ``--break-rate`` a second), then the proxy lets
  the replica in again. Measured: restore → the replica's new connection reaches the proxy
  (Redis retries once a second), and that connection → the replica's offset equals the
  primary's. The primary's ``sync_partial_ok`` must have gone up by one and ``sync_full`` not
  moved ("partial: yes"); the digests must match.
* ``throughput``: redis-benchmark ``-t set`` and ``-t incr`` (``-c 50 -r 100000``, ``-P 1``
  and ``-P 16``) against the primary with 0, 1 and 2 replicas attached; ``-n`` is calibrated on
  redis-server without replicas to last about ``--seconds``. Requests a second, and CPU µs per
  request of the primary and of the replicas together (/proc schedstat, like
  bench/redis_benchmark.py).
* ``lag``: one replica; redis-benchmark writes (``-t set -P 16 -c 50 -d 100``) for
  ``--seconds`` while the driver samples every 10 ms the primary's ``master_repl_offset``
  minus (a) the acknowledged offset of ``slave0`` in the primary's INFO (what WAIT sees: Redis
  replicas acknowledge once a second) and (b) the replica's own ``master_repl_offset`` (read
  just after; a lower bound of the bytes not yet applied). A second process measures the time
  lag: it SETs a marker on the primary every 10 ms and reads the replica until it shows the
  marker; lag = first sighting − the SET's reply.

The systems alternate which goes first in each of ``--rounds`` rounds; tables show medians,
with keywarden ÷ redis ratios. Markdown on stdout, progress on stderr, ``--json FILE`` for
every figure. While keywarden has no replication (REPLICAOF refused), its column reads "n/a"
and only redis-server is measured; a part that fails for one system (a sync that never ends
within --timeout, a refused command) prints a FAILED line and keeps the other's figures.

    /usr/bin/python3 bench/replication_benchmark.py                    # 1M and 5M keys, ~15 min
    /usr/bin/python3 bench/replication_benchmark.py --keys 200000 --rounds 3
    /usr/bin/python3 bench/replication_benchmark.py --only psync,lag --break 10
    /usr/bin/python3 bench/replication_benchmark.py --quick            # smoke run, ~30 s

The server under test is KEYWARDEN (positional) or --keywarden, else $KEYWARDEN_SERVER, else
<repo>/build/src/server/keywarden-server. It builds nothing.
"""

from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing
import os
import platform
import queue
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (HOST, Server, add_server_arguments, median,  # noqa: E402
                     redis_version, resolve_server_arguments)
from memory_expiry_benchmark import (DEFAULT_PROBE, Conn, Probe, encode,  # noqa: E402
                                     latency_stats, percentile)
from redis_benchmark import REPO_ROOT, calibrate, run_benchmark  # noqa: E402

SYSTEMS = ("keywarden", "redis")
PARTS = ("fullsync", "psync", "throughput", "lag")
POLL = 0.01
VALUE = b"v" * 100


def log(*a) -> None:
    print("#", *a, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# servers and INFO
# --------------------------------------------------------------------------------------------

def db0_keys(conn: Conn) -> int:
    field = conn.info("keyspace").get("db0", "")
    for part in field.split(","):
        if part.startswith("keys="):
            return int(part[5:])
    return 0


def slave_offsets(repl: dict) -> list[int]:
    """The acknowledged offsets of slave0, slave1… in a primary's INFO replication."""
    out = []
    for i in range(16):
        field = repl.get(f"slave{i}")
        if field is None:
            break
        fields = dict(p.split("=", 1) for p in field.split(",") if "=" in p)
        out.append(int(fields.get("offset", -1)))
    return out


def cpu_seconds(server: Server) -> float:
    """The server's CPU time: its threads (schedstat) plus the children it has reaped (utime and
    stime of /proc/<pid>/stat fields 16-17), which is where Redis's fork child ends up."""
    threads = server.cpu_ns() / 1e9
    try:
        with open(f"/proc/{server.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        children = (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        children = 0.0
    return threads + children


def wait_for(predicate, timeout: float, what: str, interval: float = POLL):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def guarded(failed: dict, name: str, what: str, fn, *a):
    """fn(*a), unless `name` already failed in this part; a failure (a timeout, a refused
    command, a server gone) is recorded in `failed` and ends this part for `name` only, so that
    a keywarden problem still leaves the redis figures of the run."""
    if name in failed:
        return None
    try:
        return fn(*a)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        failed[name] = f"{what}: {e}"
        log(f"{name} failed ({what}): {e}")
        return None


class System:
    """One system's primary and its replicas, all started from the same binary."""

    def __init__(self, name: str, binary: str, args):
        self.name, self.binary, self.args = name, binary, args
        self.primary = self._server("primary")
        self.primary.start()
        self.pconn = Conn(self.primary.port, timeout=args.timeout)
        self.replicas: list[Server] = []

    def _server(self, role: str) -> Server:
        return Server(f"{self.name}-{role}", self.binary,
                      ("--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0",
                       "--repl-backlog-size", self.args.backlog, "--repl-timeout", "60"))

    def start_replica(self) -> tuple[Server, Conn]:
        replica = self._server(f"replica{len(self.replicas)}")
        replica.start()
        self.replicas.append(replica)
        return replica, Conn(replica.port, timeout=self.args.timeout)

    def stop_replica(self, replica: Server) -> None:
        replica.cleanup()
        self.replicas.remove(replica)

    def populate(self, keys: int, mix: bool) -> int:
        """Fills the primary; returns its key count."""
        self.pconn.call("FLUSHALL")
        self.pconn.call("DEBUG", "POPULATE", keys, "key", 100)
        if mix:
            commands = []
            for i in range(keys // 10):
                members = [b"m%d" % j for j in range(8)]
                kind = i % 4
                if kind == 0:
                    commands.append(encode("HSET", b"mix:h:%d" % i,
                                           *[x for m in members for x in (m, b"val-" + m)]))
                elif kind == 1:
                    commands.append(encode("RPUSH", b"mix:l:%d" % i, *members))
                elif kind == 2:
                    commands.append(encode("SADD", b"mix:s:%d" % i, *members))
                else:
                    commands.append(encode("ZADD", b"mix:z:%d" % i,
                                           *[x for j, m in enumerate(members) for x in (j, m)]))
                if len(commands) == 5000:
                    self.pconn.pipeline_simple(b"".join(commands), len(commands))
                    commands = []
            if commands:
                self.pconn.pipeline_simple(b"".join(commands), len(commands))
        return self.pconn.call("DBSIZE")

    def wait_bgsave_done(self) -> None:
        wait_for(lambda: self.pconn.info("persistence").get("rdb_bgsave_in_progress") == "0",
                 self.args.timeout, f"{self.name}: the primary's snapshot to end")

    def cleanup(self) -> None:
        try:
            self.pconn.close()
        except OSError:
            pass
        for s in [*self.replicas, self.primary]:
            s.cleanup()


def synced(rconn: Conn, keys: int) -> bool:
    repl = rconn.info("replication")
    return repl.get("master_link_status") == "up" and db0_keys(rconn) == keys


def caught_up(pconn: Conn, rconns: list[Conn]) -> bool:
    """Every replica's link is up and its offset has reached the primary's."""
    target = int(pconn.info("replication")["master_repl_offset"])
    for rconn in rconns:
        repl = rconn.info("replication")
        if (repl.get("master_link_status") != "up"
                or int(repl.get("master_repl_offset", -1)) < target):
            return False
    return True


def digest(conn: Conn) -> bytes:
    return conn.call("DEBUG", "DIGEST")


def replication_missing(binary: str, args) -> str | None:
    """Why `binary` has no replication (REPLICAOF refused), or None. A server that accepts
    REPLICAOF is measured: if its syncs then fail, the parts say so (FAILED lines) rather than
    hiding it behind n/a."""
    system = System("probe", binary, args)
    try:
        _, rconn = system.start_replica()
        try:
            rconn.call("REPLICAOF", HOST, system.primary.port)
        except RuntimeError as e:
            return f"REPLICAOF replied -{e}"
        return None
    finally:
        system.cleanup()


# --------------------------------------------------------------------------------------------
# a TCP proxy that can cut the link
# --------------------------------------------------------------------------------------------

class Proxy:
    """Forwards connections from its own port to the target's. cut() closes every forwarded
    connection and makes new ones close at once (the replica sees its primary go away and
    retries); restore() forwards again. One thread, a selector, 256 KiB reads."""

    def __init__(self, target_port: int):
        self.target_port = target_port
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((HOST, 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.listener, selectors.EVENT_READ, None)
        self.lock = threading.Lock()
        self.pairs: dict[socket.socket, socket.socket] = {}
        self.broken = False
        self.connected_at: float | None = None  # when the last forwarded connection began
        self.running = True
        self.wake_r, self.wake_w = socket.socketpair()
        self.sel.register(self.wake_r, selectors.EVENT_READ, "wake")
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _close_pair(self, a: socket.socket) -> None:
        b = self.pairs.pop(a, None)
        for s in (a, b):
            if s is None:
                continue
            self.pairs.pop(s, None)
            try:
                self.sel.unregister(s)
            except (KeyError, ValueError):
                pass
            s.close()

    def _loop(self) -> None:
        while self.running:
            for key, _ in self.sel.select(0.1):
                with self.lock:
                    if key.data == "wake":
                        self.wake_r.recv(64)
                        if self.broken:
                            for s in list(self.pairs):
                                self._close_pair(s)
                        continue
                    if key.fileobj is self.listener:
                        client, _ = self.listener.accept()
                        if self.broken:
                            client.close()
                            continue
                        try:
                            upstream = socket.create_connection((HOST, self.target_port), 5)
                        except OSError:
                            client.close()
                            continue
                        for s in (client, upstream):
                            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                            s.setblocking(True)
                        self.pairs[client], self.pairs[upstream] = upstream, client
                        self.sel.register(client, selectors.EVENT_READ, "fwd")
                        self.sel.register(upstream, selectors.EVENT_READ, "fwd")
                        self.connected_at = time.monotonic()
                        continue
                    src = key.fileobj
                    dst = self.pairs.get(src)
                    if dst is None:
                        continue
                    try:
                        data = src.recv(1 << 18)
                        if data:
                            dst.sendall(data)
                            continue
                    except OSError:
                        pass
                    self._close_pair(src)

    def cut(self) -> None:
        with self.lock:
            self.broken = True
        self.wake_w.send(b"x")

    def restore(self) -> None:
        with self.lock:
            self.broken = False
            self.connected_at = None

    def close(self) -> None:
        self.running = False
        self.wake_w.send(b"x")
        self.thread.join(5)
        for s in list(self.pairs):
            s.close()
        self.listener.close()


# --------------------------------------------------------------------------------------------
# part 1: full sync
# --------------------------------------------------------------------------------------------

def fullsync_once(args, system: System, keys: int, mode: str) -> dict:
    system.pconn.call("CONFIG", "SET", "repl-diskless-sync", "yes" if mode == "diskless" else "no")
    stats_before = system.pconn.info("stats")
    replica, rconn = system.start_replica()
    probe = Probe(system.primary.port, *args.probe_command.split())
    try:
        time.sleep(args.before)
        cpu_before = cpu_seconds(system.primary)
        t0 = time.monotonic()
        rconn.call("REPLICAOF", HOST, system.primary.port)
        wait_for(lambda: synced(rconn, keys), args.timeout, f"{system.name}: the full sync")
        t1 = time.monotonic()
        starts, lats = probe.stop()
    finally:
        probe.kill()
    system.wait_bgsave_done()
    cpu = cpu_seconds(system.primary) - cpu_before
    stats_after = system.pconn.info("stats")
    same = digest(system.pconn) == digest(rconn) if args.verify else None
    rconn.close()
    system.stop_replica(replica)
    during = latency_stats(starts, lats, t0, t1)
    before = latency_stats(starts, lats, t0 - args.before, t0)
    return {"seconds": t1 - t0, "primary_cpu_s": cpu,
            "p50_ms": during["p50_ms"], "p99_ms": during["p99_ms"], "max_ms": during["max_ms"],
            "probes": during["probes"], "before_p99_ms": before["p99_ms"],
            "before_max_ms": before["max_ms"],
            "full_syncs": int(stats_after["sync_full"]) - int(stats_before["sync_full"]),
            # INFO stats latest_fork_usec, where the server reports one (Redis does)
            "fork_ms": (int(stats_after["latest_fork_usec"]) / 1000
                        if "latest_fork_usec" in stats_after else None),
            "digest_same": same}


def part_fullsync(args, systems: dict[str, System], failed: dict) -> dict:
    out = {}
    for keys in args.key_sizes:
        counts = {}
        for name, system in systems.items():
            t = time.monotonic()
            counts[name] = guarded(failed, name, "populate", system.populate, keys, args.mix)
            log(f"fullsync: {name} primary holds {counts[name] or 0:,} keys "
                f"({time.monotonic() - t:.1f} s to fill)")
        for mode in args.modes:
            runs = {name: [] for name in systems}
            for round_no in range(args.rounds):
                for name in order(systems, round_no):
                    r = guarded(failed, name, f"full sync, {keys:,} keys, {mode}", fullsync_once,
                                args, systems[name], counts[name], mode)
                    if r is None:
                        continue
                    runs[name].append(r)
                    log(f"fullsync {keys:,} keys {mode} round {round_no + 1}/{args.rounds} "
                        f"{name:9s} {r['seconds']:.2f} s, primary GET p99 {r['p99_ms']:.2f} ms "
                        f"max {r['max_ms']:.2f} ms, digest same: {r['digest_same']}")
            out[f"{keys}/{mode}"] = {"keys": keys, "mode": mode, "dbsize": counts, "runs": runs}
    return out


# --------------------------------------------------------------------------------------------
# part 2: partial resync after a break
# --------------------------------------------------------------------------------------------

class PsyncSetup:
    def __init__(self, args, system: System):
        self.system = system
        self.keys = system.populate(args.psync_keys, False)
        self.proxy = Proxy(system.primary.port)
        self.replica, self.rconn = system.start_replica()
        self.rconn.call("REPLICAOF", HOST, self.proxy.port)
        wait_for(lambda: synced(self.rconn, self.keys), args.timeout,
                 f"{system.name}: the first sync through the proxy")

    def close(self) -> None:
        self.proxy.close()
        self.rconn.close()


def psync_once(args, setup: PsyncSetup) -> dict:
    system, pconn, rconn = setup.system, setup.system.pconn, setup.rconn
    wait_for(lambda: caught_up(pconn, [rconn]), args.timeout, f"{system.name}: catching up")
    stats_before = pconn.info("stats")
    offset_at_cut = int(pconn.info("replication")["master_repl_offset"])
    setup.proxy.cut()
    wait_for(lambda: rconn.info("replication").get("master_link_status") == "down",
             args.timeout, f"{system.name}: the replica to see the cut")
    # Writes during the break, spread evenly: batches of 100 SETs.
    t_cut = time.monotonic()
    batch, written = 100, 0
    while time.monotonic() - t_cut < args.break_seconds:
        due = int((time.monotonic() - t_cut) * args.break_rate)
        if written < due:
            n = min(batch, due - written)
            pconn.pipeline_simple(b"".join(encode("SET", b"break:%d" % (written + i), VALUE)
                                           for i in range(n)), n)
            written += n
        else:
            time.sleep(0.005)
    target = int(pconn.info("replication")["master_repl_offset"])
    t_restore = time.monotonic()
    setup.proxy.restore()

    def reached() -> bool:
        repl = rconn.info("replication")
        return (repl.get("master_link_status") == "up"
                and int(repl.get("master_repl_offset", -1)) >= target)
    wait_for(reached, args.timeout, f"{system.name}: the replica to catch up after the break")
    t_done = time.monotonic()
    connected = setup.proxy.connected_at or t_restore
    stats_after = pconn.info("stats")
    partial = int(stats_after["sync_partial_ok"]) - int(stats_before["sync_partial_ok"])
    full = int(stats_after["sync_full"]) - int(stats_before["sync_full"])
    same = digest(pconn) == digest(rconn) if args.verify else None
    return {"writes": written, "bytes": target - offset_at_cut,
            "reconnect_s": connected - t_restore, "resync_s": t_done - connected,
            "total_s": t_done - t_restore, "partial_ok": partial, "full": full,
            "partial": partial == 1 and full == 0, "digest_same": same}


def part_psync(args, systems: dict[str, System], failed: dict) -> dict:
    setups = {}
    for name, system in systems.items():
        setup = guarded(failed, name, "the first sync through the proxy", PsyncSetup, args, system)
        if setup is not None:
            setups[name] = setup
    runs = {name: [] for name in systems}
    try:
        for round_no in range(args.rounds):
            for name in order(systems, round_no):
                r = guarded(failed, name, "the break", psync_once, args, setups.get(name))
                if r is None:
                    continue
                runs[name].append(r)
                log(f"psync round {round_no + 1}/{args.rounds} {name:9s} {r['writes']:,} writes "
                    f"({r['bytes']:,} B) in the break; reconnect {r['reconnect_s']:.2f} s, "
                    f"resync {r['resync_s'] * 1e3:.1f} ms, partial: {r['partial']}, "
                    f"digest same: {r['digest_same']}")
    finally:
        for setup in setups.values():
            setup.close()
    return {"runs": runs}


# --------------------------------------------------------------------------------------------
# part 3: write throughput with 0, 1, 2 replicas
# --------------------------------------------------------------------------------------------

def attach_replicas(args, system: System, rconns: list[Conn], count: int) -> None:
    while len(rconns) < count:
        _, rconn = system.start_replica()
        rconn.call("REPLICAOF", HOST, system.primary.port)
        rconns.append(rconn)
    wait_for(lambda: caught_up(system.pconn, rconns), args.timeout,
             f"{system.name}: {count} replicas to sync")


def throughput_once(args, system: System, rconns: list[Conn], test: str, pipeline: int,
                    requests: int) -> dict:
    replica_cpu = sum(r.cpu_ns() for r in system.replicas)
    r = run_benchmark(args, system.primary, test, pipeline, requests)
    # The replicas' share: what they spent applying this run's stream (until caught up).
    wait_for(lambda: caught_up(system.pconn, rconns), args.timeout,
             f"{system.name}: replicas to catch up")
    r["replica_cpu_us_per_request"] = (
        (sum(x.cpu_ns() for x in system.replicas) - replica_cpu) / 1000 / requests)
    return r


def part_throughput(args, systems: dict[str, System], failed: dict) -> dict:
    tests, pipelines = ["set", "incr"], [1, 16]
    replica_conns = {name: [] for name in systems}
    requests, out = {}, {}
    reference = systems.get("redis") or next(iter(systems.values()))
    for test in tests:
        for p in pipelines:
            requests[(test, p)] = (args.requests or
                                   calibrate(args, reference.primary, test, p))
            log(f"throughput {test} -P {p}: -n {requests[(test, p)]}")
    try:
        for count in (0, 1, 2):
            for name, system in systems.items():
                guarded(failed, name, f"attaching replica {count}", attach_replicas, args,
                        system, replica_conns[name], count)
            for test in tests:
                for p in pipelines:
                    runs = {name: [] for name in systems}
                    for round_no in range(args.rounds):
                        for name in order(systems, round_no):
                            r = guarded(failed, name, f"{test} -P {p}, {count} replicas",
                                        throughput_once, args, systems[name], replica_conns[name],
                                        test, p, requests[(test, p)])
                            if r is None:
                                continue
                            runs[name].append(r)
                            log(f"throughput {count} replicas {test} -P {p} round "
                                f"{round_no + 1}/{args.rounds} {name:9s} {r['rps']:>11,.0f} req/s "
                                f"primary {r['cpu_us_per_request']:.2f} µs CPU/req, replicas "
                                f"{r['replica_cpu_us_per_request']:.2f}")
                    out[f"{count}/{test}/{p}"] = {"replicas": count, "test": test,
                                                  "pipeline": p, "runs": runs}
    finally:
        for name, system in systems.items():
            for rconn in replica_conns[name]:
                rconn.close()
    return out


# --------------------------------------------------------------------------------------------
# part 4: replication lag under load
# --------------------------------------------------------------------------------------------

def marker_worker(primary_port: int, replica_port: int, stop, results) -> None:
    """Every 10 ms: SET the marker on the primary, then GET it from the replica until it shows
    the new value; lag = that first sighting − the SET's reply (seconds, into `results`)."""
    pconn, rconn = Conn(primary_port), Conn(replica_port)
    lags, i = [], 0
    while not stop.is_set():
        i += 1
        value = b"%d" % i
        pconn.call("SET", "lag:marker", value)
        acked = time.monotonic()
        while rconn.call("GET", "lag:marker") != value:
            if stop.is_set():
                break
        else:
            lags.append(time.monotonic() - acked)
        time.sleep(0.01)
    results.put(lags)


def lag_once(args, system: System, rconn: Conn, replica: Server) -> dict:
    pconn = system.pconn
    wait_for(lambda: caught_up(pconn, [rconn]), args.timeout, f"{system.name}: catching up")
    ctx = multiprocessing.get_context("fork")
    stop, results = ctx.Event(), ctx.Queue()
    marker = ctx.Process(target=marker_worker, args=(system.primary.port, replica.port, stop,
                                                     results), daemon=True)
    bench = subprocess.Popen(
        [args.redis_benchmark, "-h", HOST, "-p", str(system.primary.port), "-c", "50",
         "-n", "1000000000", "-P", str(args.lag_pipeline), "-r", "100000", "-d", "100",
         "-t", "set", "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    acked, applied = [], []
    try:
        marker.start()
        time.sleep(0.2)  # let redis-benchmark's clients connect
        p0 = pconn.info("replication")
        c0 = int(pconn.info("stats")["total_commands_processed"])
        t0 = time.monotonic()
        while time.monotonic() - t0 < args.seconds:
            repl = pconn.info("replication")
            primary = int(repl["master_repl_offset"])
            replica_applied = int(rconn.info("replication")["master_repl_offset"])
            offsets = slave_offsets(repl)
            if offsets:
                acked.append(primary - offsets[0])
            applied.append(max(0, primary - replica_applied))
            time.sleep(POLL)
        t1 = time.monotonic()
        p1 = pconn.info("replication")
        c1 = int(pconn.info("stats")["total_commands_processed"])
    finally:
        bench.send_signal(signal.SIGINT)
        try:
            bench.wait(10)
        except subprocess.TimeoutExpired:
            bench.kill()
            bench.wait()
        stop.set()
    try:
        lags = results.get(timeout=30)
    except queue.Empty:
        raise RuntimeError(f"{system.name}: the marker process gave no result")
    marker.join(10)
    wait_for(lambda: caught_up(pconn, [rconn]), args.timeout, f"{system.name}: catching up")
    acked.sort()
    applied.sort()
    lags = sorted(x * 1e3 for x in lags)
    seconds = t1 - t0
    return {
        "commands_per_s": (c1 - c0) / seconds,
        "stream_mb_per_s": (int(p1["master_repl_offset"]) - int(p0["master_repl_offset"]))
        / seconds / 1e6,
        "samples": len(applied), "markers": len(lags),
        "acked_p50": percentile(acked, 50), "acked_p99": percentile(acked, 99),
        "acked_max": acked[-1] if acked else float("nan"),
        "applied_p50": percentile(applied, 50), "applied_p99": percentile(applied, 99),
        "applied_max": applied[-1] if applied else float("nan"),
        "time_p50_ms": percentile(lags, 50), "time_p99_ms": percentile(lags, 99),
        "time_max_ms": lags[-1] if lags else float("nan")}


def lag_setup(args, system: System) -> tuple[Server, Conn]:
    replica, rconn = system.start_replica()
    rconn.call("REPLICAOF", HOST, system.primary.port)
    wait_for(lambda: synced(rconn, 0), args.timeout, f"{system.name}: the replica to sync")
    return replica, rconn


def part_lag(args, systems: dict[str, System], failed: dict) -> dict:
    replicas = {}
    for name, system in systems.items():
        setup = guarded(failed, name, "attaching the replica", lag_setup, args, system)
        if setup is not None:
            replicas[name] = setup
    runs = {name: [] for name in systems}
    try:
        for round_no in range(args.rounds):
            for name in order(systems, round_no):
                replica, rconn = replicas.get(name, (None, None))
                r = guarded(failed, name, "lag under load", lag_once, args, systems[name], rconn,
                            replica)
                if r is None:
                    continue
                runs[name].append(r)
                log(f"lag round {round_no + 1}/{args.rounds} {name:9s} "
                    f"{r['commands_per_s']:,.0f} cmd/s, {r['stream_mb_per_s']:.1f} MB/s; "
                    f"applied lag p99 {r['applied_p99']:,.0f} B, acked lag p99 "
                    f"{r['acked_p99']:,.0f} B, time lag p99 {r['time_p99_ms']:.2f} ms "
                    f"({r['markers']} markers)")
    finally:
        for name, (replica, rconn) in replicas.items():
            rconn.close()
    return {"runs": runs}


# --------------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------------

def order(systems: dict, round_no: int) -> list[str]:
    names = list(systems)
    return names if round_no % 2 == 0 else names[::-1]


def med(runs: dict, name: str, field: str):
    values = [r[field] for r in runs.get(name, []) if r[field] is not None]
    return median(values) if values else None


def cell(v, spec: str) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float) and v != v:
        return "—"
    return format(v, spec)


def ratio(k, r) -> str:
    if k is None or r is None or not r or k != k or r != r:
        return "—"
    return f"{k / r:.2f}"


def table(rows: list[tuple[str, object, object, str]]) -> str:
    lines = ["| measure | keywarden | redis | k/r |", "| --- | ---: | ---: | ---: |"]
    for label, k, r, spec in rows:
        lines.append(f"| {label} | {cell(k, spec)} | {cell(r, spec)} | {ratio(k, r)} |")
    return "\n".join(lines)


def both(runs, field, spec, label) -> tuple:
    return (label, med(runs, "keywarden", field), med(runs, "redis", field), spec)


def checks(runs: dict, field: str) -> str:
    parts = []
    for name in SYSTEMS:
        values = [r[field] for r in runs.get(name, [])]
        if values:
            parts.append(f"{name} {sum(1 for v in values if v)}/{len(values)}")
    return ", ".join(parts)


def report(args, results: dict) -> str:
    out = []
    if "fullsync" in results:
        for entry in results["fullsync"].values():
            runs = entry["runs"]
            out.append(f"\n### Full sync, {entry['keys']:,} keys"
                       f"{' + mix' if args.mix else ''}, {entry['mode']} "
                       f"(repl-diskless-sync {'yes' if entry['mode'] == 'diskless' else 'no'})\n")
            out.append(table([
                both(runs, "seconds", ",.2f", "REPLICAOF → link up and all keys, s"),
                both(runs, "primary_cpu_s", ",.2f",
                     "primary CPU during the sync (with fork child), s"),
                both(runs, "p50_ms", ",.3f", "primary GET p50 during the sync, ms"),
                both(runs, "p99_ms", ",.3f", "primary GET p99 during the sync, ms"),
                both(runs, "max_ms", ",.2f", "primary GET max during the sync, ms"),
                both(runs, "before_p99_ms", ",.3f", "primary GET p99 in the second before, ms"),
                both(runs, "before_max_ms", ",.2f", "primary GET max in the second before, ms"),
                both(runs, "probes", ",.0f", "GETs answered during the sync"),
                both(runs, "fork_ms", ",.2f", "INFO latest_fork_usec after the sync, ms"),
            ]))
            out.append(f"\nchecks: DBSIZE {entry['dbsize']}; one full sync per round: "
                       f"{checks(runs, 'full_syncs')}; digest equal: {checks(runs, 'digest_same')}")
    if "psync" in results:
        runs = results["psync"]["runs"]
        out.append(f"\n### Partial resync after a {args.break_seconds:g} s break "
                   f"({args.psync_keys:,} keys, {args.break_rate:,} SET/s during the break)\n")
        out.append(table([
            both(runs, "bytes", ",.0f", "stream written during the break, bytes"),
            both(runs, "reconnect_s", ",.2f", "restore → the replica reconnects, s"),
            both(runs, "resync_s", ",.4f", "reconnect → offsets equal, s"),
            both(runs, "total_s", ",.2f", "restore → offsets equal, s"),
        ]))
        out.append(f"\nchecks: partial (sync_partial_ok +1, sync_full +0): "
                   f"{checks(runs, 'partial')}; digest equal: {checks(runs, 'digest_same')}")
    if "throughput" in results:
        out.append("\n### Write throughput with 0, 1 and 2 replicas "
                   "(redis-benchmark -c 50 -r 100000)\n")
        rows = []
        for entry in results["throughput"].values():
            count = entry["replicas"]
            runs = entry["runs"]
            tag = (f"{entry['test'].upper()} -P {entry['pipeline']}, "
                   f"{count} replica{'' if count == 1 else 's'}")
            rows.append(both(runs, "rps", ",.0f", f"{tag}: req/s"))
            rows.append(both(runs, "cpu_us_per_request", ",.2f", f"{tag}: primary CPU µs/req"))
            if count:
                rows.append(both(runs, "replica_cpu_us_per_request", ",.2f",
                                 f"{tag}: replicas' CPU µs/req"))
        out.append(table(rows))
    if "lag" in results:
        runs = results["lag"]["runs"]
        out.append(f"\n### Replication lag under load (redis-benchmark -t set -P "
                   f"{args.lag_pipeline} -c 50 -d 100, {args.seconds:g} s, one replica)\n")
        out.append(table([
            both(runs, "commands_per_s", ",.0f", "primary commands/s"),
            both(runs, "stream_mb_per_s", ",.1f", "replication stream, MB/s"),
            both(runs, "applied_p50", ",.0f", "lag to the replica's offset p50, bytes"),
            both(runs, "applied_p99", ",.0f", "lag to the replica's offset p99, bytes"),
            both(runs, "applied_max", ",.0f", "lag to the replica's offset max, bytes"),
            both(runs, "acked_p50", ",.0f", "lag to slave0's acked offset p50, bytes"),
            both(runs, "acked_p99", ",.0f", "lag to slave0's acked offset p99, bytes"),
            both(runs, "acked_max", ",.0f", "lag to slave0's acked offset max, bytes"),
            both(runs, "time_p50_ms", ",.2f", "marker lag p50, ms"),
            both(runs, "time_p99_ms", ",.2f", "marker lag p99, ms"),
            both(runs, "time_max_ms", ",.2f", "marker lag max, ms"),
            both(runs, "markers", ",.0f", "markers seen"),
        ]))
    return "\n".join(out)


def machine() -> str:
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f
                         if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        commit = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        commit = "?"
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{os.cpu_count()} CPUs ({model}), {mem:.0f} GiB, {platform.release()}, "
            f"repository at {commit or '?'}")


# --------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(
        description="replication: keywarden primary → keywarden replicas beside redis → redis",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    add_server_arguments(parser)
    parser.add_argument("--only", default=",".join(PARTS),
                        help="comma separated parts out of " + ", ".join(PARTS))
    parser.add_argument("--keys", default="1000000,5000000",
                        help="fullsync: data set sizes, comma separated")
    parser.add_argument("--mix", action="store_true",
                        help="fullsync: add keys/10 small hashes, lists, sets, sorted sets")
    parser.add_argument("--modes", default="disk,diskless", help="fullsync: disk, diskless")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, systems alternating")
    parser.add_argument("--seconds", type=float, default=5.0,
                        help="throughput: length of one run; lag: the measured window")
    parser.add_argument("--requests", type=int, default=None,
                        help="throughput: fixed -n (skips the calibration)")
    parser.add_argument("--before", type=float, default=1.0,
                        help="fullsync: seconds of probing before REPLICAOF (the baseline)")
    parser.add_argument("--probe-command", default="GET key:1",
                        help="fullsync: what the latency probe sends to the primary")
    parser.add_argument("--probe", default=str(DEFAULT_PROBE) if DEFAULT_PROBE.exists() else "",
                        help="latency_probe binary (ninja latency_probe); empty: a Python probe")
    parser.add_argument("--psync-keys", type=int, default=100_000, help="psync: keys")
    parser.add_argument("--break", dest="break_seconds", type=float, default=10.0,
                        help="psync: seconds the link is cut")
    parser.add_argument("--break-rate", type=int, default=10_000,
                        help="psync: SETs a second written during the break")
    parser.add_argument("--backlog", default="256mb", help="repl-backlog-size of the primaries")
    parser.add_argument("--lag-pipeline", type=int, default=16, help="lag: redis-benchmark -P")
    parser.add_argument("--no-verify", dest="verify", action="store_false",
                        help="skip the DEBUG DIGEST comparison after each sync")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="give up waiting for a sync after this many seconds "
                             "(--quick: at most 15)")
    parser.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark")
                        or "/usr/bin/redis-benchmark")
    parser.add_argument("--json", metavar="FILE", help="also write every figure and round")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 10k keys, 1 round, 1 s windows")
    args = parser.parse_args()
    resolve_server_arguments(args)
    if args.quick:
        args.keys, args.rounds, args.seconds, args.before = "10000", 1, 1.0, 0.3
        args.psync_keys, args.break_seconds, args.break_rate = 10_000, 1.0, 5_000
        args.requests = args.requests or 5_000
        args.timeout = min(args.timeout, 15.0)
    args.key_sizes = [int(k) for k in args.keys.split(",") if k.strip()]
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    parts = [p.strip() for p in args.only.split(",") if p.strip()]
    bad = [p for p in parts if p not in PARTS] + [m for m in args.modes
                                                  if m not in ("disk", "diskless")]
    if bad:
        parser.error(f"unknown parts or modes {bad}")
    # what redis_benchmark.run_benchmark / calibrate read
    args.clients, args.keyspace, args.run_timeout = 50, 100_000, 600
    Probe.binary = args.probe or None
    binaries = {"keywarden": os.path.abspath(args.keywarden), "redis": os.path.abspath(args.redis)}
    for path in binaries.values():
        if not os.path.exists(path):
            sys.exit(f"{path} does not exist (build it, or pass --keywarden / --redis)")

    def on_sigterm(*_):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, on_sigterm)

    started, load_at_start = time.monotonic(), os.getloadavg()
    results: dict = {}
    failures: dict = {}
    systems: dict[str, System] = {}
    missing = None
    try:
        missing = replication_missing(binaries["keywarden"], args)
        if missing:
            log(f"keywarden: replication not available ({missing}); measuring redis only")
        for part in PARTS:
            if part not in parts:
                continue
            log(f"part {part}")
            # Fresh servers for every part: a failure or a leftover replica stays in its part.
            failed = failures.setdefault(part, {})
            for name in SYSTEMS:
                if not (name == "keywarden" and missing):
                    systems[name] = System(name, binaries[name], args)
            results[part] = {"fullsync": part_fullsync, "psync": part_psync,
                             "throughput": part_throughput,
                             "lag": part_lag}[part](args, systems, failed)
            for system in systems.values():
                system.cleanup()
            systems.clear()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        print(f"\nbenchmark aborted: {e!r}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nbenchmark interrupted", file=sys.stderr)
        return 130
    finally:
        for system in systems.values():
            system.cleanup()

    print(f"keywarden vs redis-server {redis_version(args.redis)}: replication (issue 17), "
          f"each primary to replicas of its own kind; {'--quick, ' if args.quick else ''}"
          f"median of {args.rounds} rounds, {datetime.datetime.now().isoformat(timespec='minutes')}"
          f", {time.monotonic() - started:.0f} s")
    print(f"machine: {machine()}; load average at the start {load_at_start[0]:.1f} / at the "
          f"end {os.getloadavg()[0]:.1f}; latency probe: "
          f"{'C++ (latency_probe)' if Probe.binary else 'Python'}")
    print(f"keywarden: {binaries['keywarden']}" +
          (f" — replication not available ({missing}): its column shows n/a" if missing else ""))
    print("k/r: keywarden ÷ redis (times, CPU and lag: below 1 is keywarden better; "
          "req/s: above 1)")
    print(report(args, results))
    for part, failed in failures.items():
        for name, why in failed.items():
            print(f"\nFAILED: {name}, {part}: {why}")
    if args.json:
        meta = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
                "command": " ".join(sys.argv), "machine": machine(),
                "load_at_start": load_at_start, "load_at_end": os.getloadavg(),
                "binaries": binaries, "keywarden_missing_replication": missing}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "results": results, "failures": failures}, f, indent=2,
                      default=str)
        log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
