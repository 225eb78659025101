#!/usr/bin/python3
"""keywarden-server beside a stock redis-server: memory per key, expiry, eviction, lazy free.

The benchmarks of issue 5, one section each (select with --only, comma separated):

* ``memory``: RSS growth (VmRSS of /proc/<pid>/status) and INFO ``used_memory`` growth per key
  after loading N keys ``key:NNNNNNN`` -> 10-byte value, then N more with ``EX 3600``.
* ``mass``: N keys with deadlines (PXAT) spread evenly over 3 s, never touched. Time from the
  last deadline until DBSIZE shows none left (DBSIZE polled every 10 ms: on both servers it
  counts keys not yet reclaimed), while a separate probe process GETs a non-expiring key in a
  loop (p50 / p99 / max latency from the first deadline until none is left). RSS and DBSIZE
  are sampled for the plot (``--plot``).
* ``sparse``: M keys with deadlines 2-3 s ahead among N keys with a 1 h TTL: due keys still
  held W s after the last deadline (W = 20, 2 with --quick), and when they were all gone.
* ``events``: the ``mass`` and ``sparse`` runs again (fresh servers) with a subscriber process
  on ``__keyevent@0__:expired`` (``CONFIG SET notify-keyspace-events Ex``). Key names carry their
  deadline in ms since the epoch; lag = arrival (wall clock of the subscriber) - deadline.
  A key whose event never came within the wait counts as a lag longer than the wait.
* ``lru``: ``maxmemory`` fixed, ``allkeys-lru``, a cache-aside workload: keys drawn with
  redis-cli --lru-test's power law (``powerLawRand(1, K, 6.2)``), GET in pipelines of 250, each
  miss followed by a SET of that key. Hit ratio over the measured operations (after a warm-up),
  beside the ideal hit ratio of a cache holding the same number of keys (the most popular ones).
  A server that does not enforce maxmemory is reported as it is (memory reached, no eviction).
* ``lazyfree``: DEL vs UNLINK of a hash with F fields (1M): the command's own latency and the
  longest PING of a probe process pinging in a loop meanwhile (how long the command thread was
  blocked).

Every section starts both servers fresh (``--save '' --appendonly no``, 127.0.0.1, free ports)
and runs keywarden then redis. Markdown tables on stdout (keywarden ÷ redis ratios), progress
on stderr, ``--json FILE`` for every figure.

    /usr/bin/python3 bench/memory_expiry_benchmark.py                    # full run, 5-6 minutes
    /usr/bin/python3 bench/memory_expiry_benchmark.py --quick            # smoke run, 30-45 s
    /usr/bin/python3 bench/memory_expiry_benchmark.py --only mass,sparse --json out.json

The server under test is --keywarden, else $KEYWARDEN_SERVER, else
<repo>/build/src/server/keywarden-server. It builds nothing. Self-contained (no shared module).
"""

from __future__ import annotations

import argparse
import array
import bisect
import ctypes
import datetime
import json
import os
import platform
import random
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from redis_benchmark import executable  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_KEYWARDEN = REPO_ROOT / "build" / "src" / "server" / "keywarden-server"
# The C++ probe (bench/latency_probe.cc); without it the probe is a Python process, whose own
# round trip (p99 about 1 ms on a loaded 2-core machine) hides the server's.
DEFAULT_PROBE = REPO_ROOT / "build" / "bench" / "latency_probe"
DEFAULT_PLOT = REPO_ROOT / "docs" / "benchmarks" / "mass_expiry.png"
HOST = "127.0.0.1"
SECTIONS = ("memory", "mass", "latency", "sparse", "events", "lru", "lazyfree")
SERVERS = ("keywarden", "redis")


def log(*a) -> None:
    print("#", *a, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# servers
# --------------------------------------------------------------------------------------------

def _die_with_parent() -> None:
    try:
        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, name: str, binary: str):
        self.name, self.binary = name, executable(binary)
        self.workdir = tempfile.mkdtemp(prefix=f"kw-membench-{name}-")
        self.proc = None
        self.port = None

    def start(self, timeout: float = 10.0) -> "Server":
        if not os.path.exists(self.binary):
            sys.exit(f"{self.name}: {self.binary} does not exist (build it, or set "
                     f"KEYWARDEN_SERVER / --keywarden)")
        output = ""
        for _ in range(5):
            self.port = free_port()
            argv = [self.binary, "--port", str(self.port), "--bind", HOST, "--save", "",
                    "--appendonly", "no"]
            log_path = os.path.join(self.workdir, "server.log")
            with open(log_path, "wb") as out:
                self.proc = subprocess.Popen(argv, cwd=self.workdir, stdin=subprocess.DEVNULL,
                                             stdout=out, stderr=subprocess.STDOUT,
                                             preexec_fn=_die_with_parent)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    if Conn(self.port, timeout=1).call("PING") == b"PONG":
                        return self
                except OSError:
                    pass
                time.sleep(0.01)
            output = Path(log_path).read_text(errors="replace")
            self.stop()
            if "in use" not in output.lower():
                break
        sys.exit(f"{self.name} did not start:\n{output}")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def rss(self) -> int:
        """VmRSS in bytes."""
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


def write_json(args, load_at_start, results) -> None:
    """Writes `results` to args.json beside what identifies the run (date, machine, binaries,
    arguments, load average at the start and now)."""
    meta = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
            "command": " ".join(sys.argv), "cpus": os.cpu_count(),
            "machine": platform.platform(), "keywarden": args.keywarden,
            "keywarden_version": server_version(args.keywarden), "redis": args.redis,
            "redis_version": server_version(args.redis), "quick": args.quick,
            "loadavg_start": load_at_start, "loadavg_end": os.getloadavg(),
            "args": vars(args)}
    with open(args.json, "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1, default=str)
    log(f"wrote {args.json}")


def server_version(binary: str) -> str:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10)
        return (out.stdout or out.stderr).strip().splitlines()[0]
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "unknown"


# --------------------------------------------------------------------------------------------
# RESP over a raw socket
# --------------------------------------------------------------------------------------------

def encode(*args) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    """A blocking RESP2 connection with a small reply parser (enough for the replies used)."""

    def __init__(self, port: int, timeout: float = 60.0):
        self.sock = socket.create_connection((HOST, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.pos = 0

    def close(self) -> None:
        self.sock.close()

    def _fill(self) -> None:
        if self.pos > 1 << 20:
            del self.buf[:self.pos]
            self.pos = 0
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("connection closed by the server")
        self.buf += chunk

    def _line(self) -> bytes:
        while True:
            end = self.buf.find(b"\r\n", self.pos)
            if end >= 0:
                line = bytes(self.buf[self.pos:end])
                self.pos = end + 2
                return line
            self._fill()

    def reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest
        if kind == b"-":
            return RuntimeError(rest.decode(errors="replace"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) - self.pos < n + 2:
                self._fill()
            data = bytes(self.buf[self.pos:self.pos + n])
            self.pos += n + 2
            return data
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        raise RuntimeError(f"unexpected reply line {line!r}")

    def call(self, *args):
        self.sock.sendall(encode(*args))
        r = self.reply()
        if isinstance(r, RuntimeError):
            raise r
        return r

    def pipeline(self, payload: bytes, count: int) -> list:
        self.sock.sendall(payload)
        return [self.reply() for _ in range(count)]

    def pipeline_simple(self, payload: bytes, count: int) -> int:
        """Sends `count` commands whose replies are one line each (+OK, :n, -ERR) and waits for
        them; returns how many were errors."""
        self.sock.sendall(payload)
        seen, errors = 0, 0
        while seen < count:
            end = self.buf.find(b"\r\n", self.pos)
            if end < 0:
                self._fill()
                continue
            if self.buf[self.pos] == 0x2D:  # '-'
                errors += 1
            self.pos = end + 2
            seen += 1
        return errors

    def info(self, section: str = "") -> dict:
        text = (self.call("INFO", section) if section else self.call("INFO")).decode()
        out = {}
        for line in text.splitlines():
            if ":" in line and not line.startswith("#"):
                k, v = line.split(":", 1)
                out[k] = v
        return out


def load(conn: Conn, commands, batch: int = 5000) -> int:
    """Sends an iterable of pre-encoded one-line-reply commands in pipelines; returns errors."""
    errors, chunk = 0, []
    for c in commands:
        chunk.append(c)
        if len(chunk) == batch:
            errors += conn.pipeline_simple(b"".join(chunk), len(chunk))
            chunk = []
    if chunk:
        errors += conn.pipeline_simple(b"".join(chunk), len(chunk))
    return errors


def set_cmd(key: bytes, value: bytes, *extra: bytes) -> bytes:
    parts = [b"*%d\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" %
             (3 + len(extra), len(key), key, len(value), value)]
    for e in extra:
        parts.append(b"$%d\r\n%s\r\n" % (len(e), e))
    return b"".join(parts)


def now_ms() -> int:
    return int(time.time() * 1000)


def percentile(sorted_values, q: float):
    if not sorted_values:
        return float("nan")
    i = min(len(sorted_values) - 1, max(0, int(round(q / 100 * (len(sorted_values) - 1)))))
    return sorted_values[i]


# --------------------------------------------------------------------------------------------
# probe worker (a separate process, so that its timing does not share the GIL with the driver)
# --------------------------------------------------------------------------------------------

def probe_worker(port: int, out_path: str, max_seconds: float, *command: str) -> int:
    """Sends `command` in a loop (one at a time) until a line arrives on stdin (or it closes, or
    max_seconds pass); then writes start times (time.monotonic) and latencies (s) as two
    arrays of doubles to out_path."""
    _die_with_parent()
    conn = Conn(port)
    payload = encode(*command)
    starts, lats = array.array("d"), array.array("d")
    print("ready", flush=True)
    stdin_fd = sys.stdin.fileno()
    deadline = time.monotonic() + max_seconds
    sock, clock = conn.sock, time.monotonic
    i = 0
    while True:
        t0 = clock()
        sock.sendall(payload)
        conn.reply()
        t1 = clock()
        starts.append(t0)
        lats.append(t1 - t0)
        i += 1
        if i % 64 == 0:
            if t1 > deadline or select.select([stdin_fd], [], [], 0)[0]:
                break
    with open(out_path, "wb") as f:
        array.array("q", [len(starts)]).tofile(f)
        starts.tofile(f)
        lats.tofile(f)
    return 0


class Probe:
    # The latency_probe binary to use (same protocol as probe_worker), or None for Python.
    binary: str | None = None

    def __init__(self, port: int, *command: str, max_seconds: float = 600):
        fd, self.path = tempfile.mkstemp(prefix="kw-membench-probe-")
        os.close(fd)
        worker = ([Probe.binary] if Probe.binary else
                  [sys.executable, os.path.abspath(__file__), "--probe-worker"])
        self.proc = subprocess.Popen(
            [*worker, str(port), self.path, str(max_seconds), *command],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError("probe worker did not start")

    def stop(self) -> tuple[list, list]:
        """Stops the worker and returns (start times, latencies)."""
        try:
            self.proc.stdin.write("stop\n")
            self.proc.stdin.close()
        except OSError:
            pass
        self.proc.wait(30)
        with open(self.path, "rb") as f:
            n = array.array("q")
            n.fromfile(f, 1)
            starts, lats = array.array("d"), array.array("d")
            starts.fromfile(f, n[0])
            lats.fromfile(f, n[0])
        os.unlink(self.path)
        return list(starts), list(lats)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if os.path.exists(self.path):
            os.unlink(self.path)


def latency_stats(starts, lats, t_from: float, t_to: float) -> dict:
    """p50 / p99 / max (ms) of the probes that were in flight at any time in [t_from, t_to]."""
    window = sorted(l for s, l in zip(starts, lats) if s + l >= t_from and s <= t_to)
    return {"probes": len(window), "rate": len(window) / max(1e-9, t_to - t_from),
            "p50_ms": percentile(window, 50) * 1e3,
            "p99_ms": percentile(window, 99) * 1e3,
            "max_ms": (window[-1] * 1e3) if window else float("nan")}


# --------------------------------------------------------------------------------------------
# expired-event subscriber (a thread reading raw bytes; parsed afterwards)
# --------------------------------------------------------------------------------------------

CHANNEL = b"__keyevent@0__:expired"


def subscriber_worker(port: int, out_path: str, max_seconds: float) -> int:
    """Subscribes to CHANNEL, prints "ready", then reads raw bytes (stamping each read with the
    wall clock) until a line arrives on stdin and nothing more came for 0.3 s, or max_seconds
    pass. Writes the read count, the end offset and time of each read, then the bytes."""
    _die_with_parent()
    conn = Conn(port)
    conn.call("CONFIG", "SET", "notify-keyspace-events", "Ex")
    # a reader that falls behind for a moment must not be cut off (1M events ~ 70 MB)
    conn.call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 0 0")
    conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    conn.sock.sendall(encode("SUBSCRIBE", CHANNEL))
    r = conn.reply()
    if not (isinstance(r, list) and r[0] == b"subscribe"):
        raise SystemExit(f"SUBSCRIBE failed: {r!r}")
    data = bytearray(conn.buf[conn.pos:])
    ends, times = array.array("q", [len(data)]), array.array("d", [time.time()])
    sock, stdin_fd = conn.sock, sys.stdin.fileno()
    print("ready", flush=True)
    deadline = time.monotonic() + max_seconds
    stopping = False
    while time.monotonic() < deadline:
        ready = select.select([sock] if stopping else [sock, stdin_fd], [], [],
                              0.3 if stopping else 0.5)[0]
        if sock in ready:
            chunk = sock.recv(1 << 20)
            t = time.time()
            if not chunk:
                break
            data += chunk
            ends.append(len(data))
            times.append(t)
        elif stopping:
            break  # asked to stop, and 0.3 s without a byte
        if stdin_fd in ready:
            os.read(stdin_fd, 4096)
            stopping = True
    with open(out_path, "wb") as f:
        array.array("q", [len(ends)]).tofile(f)
        ends.tofile(f)
        times.tofile(f)
        f.write(data)
    return 0


class ExpiredSubscriber:
    """A subscriber to CHANNEL in a separate process (its reads are timed without sharing the
    GIL or the loop with the driver); the messages are parsed after it stops."""

    def __init__(self, port: int, max_seconds: float = 600):
        fd, self.path = tempfile.mkstemp(prefix="kw-membench-sub-")
        os.close(fd)
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--subscriber-worker", str(port),
             self.path, str(max_seconds)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True)
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError("subscriber worker did not start")

    def stop(self) -> dict[bytes, float]:
        """Stops reading (after a pause in the traffic); returns key -> arrival (epoch s)."""
        try:
            self.proc.stdin.write("stop\n")
            self.proc.stdin.close()
        except OSError:
            pass
        self.proc.wait(120)
        with open(self.path, "rb") as f:
            count = array.array("q")
            count.fromfile(f, 1)
            ends, times = array.array("q"), array.array("d")
            ends.fromfile(f, count[0])
            times.fromfile(f, count[0])
            data = f.read()
        os.unlink(self.path)
        arrivals = {}
        pattern = re.compile(rb"\*3\r\n\$7\r\nmessage\r\n\$%d\r\n%s\r\n\$(\d+)\r\n"
                             % (len(CHANNEL), re.escape(CHANNEL)))
        last = len(ends) - 1
        for m in pattern.finditer(data):
            n = int(m.group(1))
            key = data[m.end():m.end() + n]
            arrivals[key] = times[min(last, bisect.bisect_left(ends, m.end() + n + 2))]
        return arrivals


def event_lags(arrivals: dict[bytes, float], deadlines: dict[bytes, int], wait_s: float) -> dict:
    """Lag statistics over all expected keys; a key with no event counts as > wait_s."""
    lags = []
    missing = 0
    for key, deadline_ms in deadlines.items():
        t = arrivals.get(key)
        if t is None:
            missing += 1
            lags.append(float("inf"))
        else:
            lags.append(t - deadline_ms / 1000)
    lags.sort()
    return {"expected": len(deadlines), "received": len(deadlines) - missing,
            "missing": missing, "wait_s": wait_s,
            "p50_s": percentile(lags, 50), "p99_s": percentile(lags, 99),
            "max_s": lags[-1] if lags else float("nan"),
            "min_s": lags[0] if lags else float("nan")}


# --------------------------------------------------------------------------------------------
# sections
# --------------------------------------------------------------------------------------------

def section_memory(args, server: Server) -> dict:
    n = args.keys
    conn = Conn(server.port)
    value = b"v" * 10
    time.sleep(0.2)
    rss0, used0 = server.rss(), int(conn.info("memory")["used_memory"])
    t = time.monotonic()
    errors = load(conn, (set_cmd(b"key:%07d" % i, value) for i in range(n)))
    log(f"{server.name}: loaded {n:,} keys in {time.monotonic() - t:.1f} s")
    time.sleep(0.2)
    rss1, used1 = server.rss(), int(conn.info("memory")["used_memory"])
    t = time.monotonic()
    errors += load(conn, (set_cmd(b"key:%07d" % i, value, b"EX", b"3600")
                          for i in range(n, 2 * n)))
    log(f"{server.name}: loaded {n:,} keys with EX 3600 in {time.monotonic() - t:.1f} s")
    time.sleep(0.2)
    rss2, used2 = server.rss(), int(conn.info("memory")["used_memory"])
    dbsize = conn.call("DBSIZE")
    conn.close()
    return {"keys": n, "errors": errors, "dbsize": dbsize,
            "rss_start": rss0, "rss_plain": rss1, "rss_ttl": rss2,
            "used_start": used0, "used_plain": used1, "used_ttl": used2,
            "rss_per_key": (rss1 - rss0) / n, "rss_per_key_ttl": (rss2 - rss1) / n,
            "used_per_key": (used1 - used0) / n, "used_per_key_ttl": (used2 - used1) / n}


def load_rate(conn: Conn, make, probe_n: int = 20000) -> float:
    """Commands per second this driver gets through on this server (to place deadlines after
    the load ends); the probe keys are deleted afterwards."""
    t = time.monotonic()
    load(conn, (make(b"calib:%d" % i) for i in range(probe_n)))
    rate = probe_n / max(1e-6, time.monotonic() - t)
    load(conn, (encode("DEL", b"calib:%d" % i) for i in range(probe_n)))
    return rate


def section_mass(args, server: Server, subscribe: bool = False, quiet: bool = False) -> dict:
    """N keys with deadlines evenly over 3 s; reclaim time, probe latency, samples.

    quiet: the driver does not poll during the window. It sleeps from the end of the load
    until QUIET_TAIL_S after the last deadline and then reads DBSIZE once, so that on a 2-core
    machine the server and the latency probe are the only busy processes; this measures the
    latency target, and `mass` (which polls DBSIZE and RSS every poll interval) the reclaim."""
    n, spread = args.keys, args.spread
    conn = Conn(server.port)
    conn.call("SET", "probe:key", "x" * 10)
    sub = ExpiredSubscriber(server.port) if subscribe else None
    value = b"v" * 10
    rate = load_rate(conn, lambda k: set_cmd(k, value, b"PX", b"3600000"))
    # Twice the measured load time, plus what --load-margin adds for a machine whose load
    # changes while the keys go in (a deadline passed before the load ends spoils the window).
    margin = 1.5 + 2.0 * n / rate + args.load_margin
    first = now_ms() + int(margin * 1000)
    step = spread * 1000 / max(1, n - 1)
    deadlines = [first + int(i * step) for i in range(n)]
    last = deadlines[-1]
    keys = [b"exp:%d:%d" % (d, i) for i, d in enumerate(deadlines)]
    probe = None if subscribe else Probe(server.port, "GET", "probe:key")
    try:
        t = time.monotonic()
        errors = load(conn, (set_cmd(k, value, b"PXAT", b"%d" % d)
                             for k, d in zip(keys, deadlines)))
        loaded_at = now_ms()
        log(f"{server.name}: loaded {n:,} keys in {time.monotonic() - t:.1f} s, "
            f"{(first - loaded_at) / 1000:.2f} s before the first deadline")
        samples = []  # (seconds relative to the last deadline, rss, dbsize)
        gone_ms = None
        timeout_ms = last + int(args.mass_wait * 1000)
        poll = args.poll_interval
        if quiet:
            time.sleep(max(0.0, (last - now_ms()) / 1000 + QUIET_TAIL_S))
            end_mono, end_ms = time.monotonic(), now_ms()
            held = conn.call("DBSIZE") - 1
            starts, lats = probe.stop()
            probe = None
            first_mono = end_mono - (end_ms - first) / 1000
            return {"keys": n, "errors": errors, "held_after_tail": held,
                    "latency": latency_stats(starts, lats, first_mono, end_mono),
                    "latency_before": latency_stats(starts, lats, first_mono - 1.0,
                                                    first_mono - 0.2)}
        while True:
            tick = time.monotonic()
            d = conn.call("DBSIZE")
            now = now_ms()
            samples.append(((now - last) / 1000, server.rss(), d - 1))
            if d <= 1 and now >= first:
                gone_ms = now
                break
            if now > timeout_ms:
                break
            time.sleep(max(0.0, poll - (time.monotonic() - tick)))
        end_mono, end_ms = time.monotonic(), now_ms()
        # a second of tail so the plot shows where memory settles
        tail_end = time.monotonic() + (0.2 if args.quick else 1.0)
        while time.monotonic() < tail_end:
            samples.append(((now_ms() - last) / 1000, server.rss(), conn.call("DBSIZE") - 1))
            time.sleep(poll)
        result = {"keys": n, "errors": errors, "spread": spread,
                  "load_margin_s": (first - loaded_at) / 1000,
                  "reclaim_s": None if gone_ms is None else (gone_ms - last) / 1000,
                  "held_at_timeout": None if gone_ms is not None else samples[-1][2],
                  "wait_s": args.mass_wait, "samples": samples,
                  "rss_at_first_deadline": next((s[1] for s in samples if s[0] >= -spread),
                                                samples[0][1]),
                  "rss_after": samples[-1][1]}
        if probe is not None:
            starts, lats = probe.stop()
            probe = None
            # the window in monotonic time: from the first deadline until none was left
            first_mono = end_mono - (end_ms - first) / 1000
            result["latency"] = latency_stats(starts, lats, first_mono, end_mono)
            result["latency_before"] = latency_stats(starts, lats, first_mono - 1.0,
                                                     first_mono - 0.2)
        if sub is not None:
            wait_until = time.time() + 0.5
            while time.time() < wait_until:
                time.sleep(0.05)
            result["events"] = event_lags(sub.stop(), dict(zip(keys, deadlines)),
                                          args.mass_wait)
            sub = None
        return result
    finally:
        if probe is not None:
            probe.kill()
        if sub is not None:
            sub.stop()
        conn.close()


QUIET_TAIL_S = 0.3


def section_latency(args, server: Server) -> dict:
    return section_mass(args, server, quiet=True)


def section_sparse(args, server: Server, subscribe: bool = False) -> dict:
    n, m, wait = args.keys, args.sparse_keys, args.sparse_wait
    conn = Conn(server.port)
    value = b"v" * 10
    sub = ExpiredSubscriber(server.port) if subscribe else None
    try:
        t = time.monotonic()
        errors = load(conn, (set_cmd(b"vol:%07d" % i, value, b"EX", b"3600") for i in range(n)))
        log(f"{server.name}: loaded {n:,} keys with EX 3600 in {time.monotonic() - t:.1f} s")
        rate = load_rate(conn, lambda k: set_cmd(k, value, b"PX", b"3600000"))
        start = now_ms()
        first = start + int(max(args.sparse_delay, 1.0 + 2.0 * m / rate) * 1000)
        rng = random.Random(5)
        deadlines = sorted(first + rng.randrange(1000) for _ in range(m))
        last = deadlines[-1]
        keys = [b"due:%d:%d" % (d, i) for i, d in enumerate(deadlines)]
        order = list(range(m))
        rng.shuffle(order)
        errors += load(conn, (set_cmd(keys[i], value, b"PXAT", b"%d" % deadlines[i])
                              for i in order))
        loaded_at = now_ms()
        log(f"{server.name}: loaded {m:,} due keys, {(first - loaded_at) / 1000:.2f} s before "
            f"the first deadline")
        marks = sorted({mark for mark in (0.1, 1.0, 5.0) if mark < wait} | {wait})
        held_at = {}
        gone_ms = None
        samples = []
        while True:
            tick = time.monotonic()
            held = conn.call("DBSIZE") - n
            now = now_ms()
            samples.append(((now - last) / 1000, held))
            for mark in marks:
                if mark not in held_at and now >= last + mark * 1000:
                    held_at[mark] = held
            if held <= 0 and now >= first:
                gone_ms = now
                break
            if now >= last + wait * 1000:
                break
            time.sleep(max(0.0, args.poll_interval - (time.monotonic() - tick)))
        for mark in marks:
            held_at.setdefault(mark, 0 if gone_ms is not None else held)
        result = {"keys": n, "due_keys": m, "errors": errors, "wait_s": wait,
                  "load_margin_s": (first - loaded_at) / 1000,
                  "held_at": {str(k): v for k, v in held_at.items()},
                  "held_at_wait": held_at[wait],
                  "all_gone_s": None if gone_ms is None else (gone_ms - last) / 1000,
                  "samples": samples[::10]}
        if sub is not None:
            time.sleep(0.5)
            result["events"] = event_lags(sub.stop(), dict(zip(keys, deadlines)), wait)
            sub = None
        return result
    finally:
        if sub is not None:
            sub.stop()
        conn.close()


def section_events(args, servers: dict[str, Server]) -> dict:
    out = {}
    for case, fn in (("mass", section_mass), ("sparse", section_sparse)):
        for name in SERVERS:
            with fresh(args, name) as server:
                r = fn(args, server, subscribe=True)
                out.setdefault(case, {})[name] = r["events"]
                e = r["events"]
                log(f"{name} {case}: {e['received']:,}/{e['expected']:,} events, "
                    f"lag p50 {e['p50_s']:.3f} s p99 {e['p99_s']:.3f} s max {e['max_s']:.3f} s")
    return out


def power_law_rand(rng: random.Random, lo: int, hi: int, alpha: float) -> int:
    """redis-cli's powerLawRand (used by --lru-test): low numbers are the popular ones."""
    hi += 1
    r = rng.random()
    pl = ((hi ** (alpha + 1) - lo ** (alpha + 1)) * r + lo ** (alpha + 1)) ** (1.0 / (alpha + 1))
    return (hi - 1 - int(pl)) + lo


def section_lru(args, server: Server) -> dict:
    space, maxmemory = args.lru_keys, args.lru_maxmemory_mb << 20
    conn = Conn(server.port)
    conn.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
    conn.call("CONFIG", "SET", "maxmemory", str(maxmemory))
    rng = random.Random(62)
    value = b"xxxxx"
    batch = 250
    counts = {"hits": 0, "misses": 0, "set_errors": 0}
    rss_peak = 0

    def run(ops: int, measure: bool):
        nonlocal rss_peak
        done = 0
        while done < ops:
            keys = [b"lru:%d" % power_law_rand(rng, 1, space, 6.2) for _ in range(batch)]
            replies = conn.pipeline(b"".join(encode(b"GET", k) for k in keys), batch)
            missed = [k for k, r in zip(keys, replies) if r is None]
            if missed:
                errs = conn.pipeline_simple(b"".join(set_cmd(k, value) for k in missed),
                                            len(missed))
                counts["set_errors"] += errs
            if measure:
                counts["hits"] += batch - len(missed)
                counts["misses"] += len(missed)
            done += batch
            if done % 50000 < batch:
                rss_peak = max(rss_peak, server.rss())

    t = time.monotonic()
    run(args.lru_warmup, False)
    run(args.lru_ops, True)
    elapsed = time.monotonic() - t
    mem = conn.info("memory")
    stats = conn.info("stats")
    dbsize = conn.call("DBSIZE")
    total = counts["hits"] + counts["misses"]
    # the hit ratio of an ideal cache holding the same number of keys: the dbsize most popular
    ideal = 1 - (1 - min(dbsize, space) / space) ** 7.2
    result = {"keyspace": space, "maxmemory": maxmemory, "ops": total, "elapsed_s": elapsed,
              "hit_ratio": counts["hits"] / total if total else float("nan"),
              "ideal_hit_ratio": ideal, "dbsize": dbsize,
              "evicted_keys": int(stats.get("evicted_keys", 0)),
              "used_memory": int(mem.get("used_memory", 0)), "rss": server.rss(),
              "rss_peak": max(rss_peak, server.rss()), "set_errors": counts["set_errors"]}
    if args.lru_cli_seconds > 0 and shutil.which(args.redis_cli):
        conn.call("FLUSHALL")
        conn.call("CONFIG", "RESETSTAT")
        result["cli"] = lru_cli_test(args, server)
        result["cli"]["dbsize"] = conn.call("DBSIZE")
        result["cli"]["evicted_keys"] = int(conn.info("stats").get("evicted_keys", 0))
        result["cli"]["rss"] = server.rss()
    conn.close()
    return result


def lru_cli_test(args, server: Server) -> dict:
    """`redis-cli --lru-test K` itself (cycles of 1 s: 250 SETs then 250 GETs, pipelined, keys
    from the same power law) for a few seconds; the hit ratio of the second half of its
    cycles (the first ones fill the cache)."""
    # redis-cli printf()s into a pipe: line-buffer it, or a terminated run loses its output
    stdbuf = ["stdbuf", "-oL"] if shutil.which("stdbuf") else []
    proc = subprocess.Popen(stdbuf + [args.redis_cli, "-h", HOST, "-p", str(server.port), "--lru-test",
                             str(args.lru_keys)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    time.sleep(args.lru_cli_seconds)
    proc.terminate()
    proc.wait(10)
    reader.join(5)
    cycles = []
    for line in lines:
        m = re.search(r"Hits: (\d+) .*Misses: (\d+)", line)
        if m:
            cycles.append((int(m.group(1)), int(m.group(2))))
    kept = cycles[len(cycles) // 2:]
    hits, misses = sum(h for h, _ in kept), sum(m for _, m in kept)
    return {"cycles": len(cycles), "cycles_counted": len(kept), "gets": hits + misses,
            "hit_ratio": hits / (hits + misses) if hits + misses else float("nan")}


def section_lazyfree(args, server: Server) -> dict:
    fields = args.hash_fields
    conn = Conn(server.port, timeout=300)
    out = {}
    for cmd in ("DEL", "UNLINK"):
        per = 1000
        t = time.monotonic()
        load(conn, (encode("HSET", "big", *[x for j in range(i, min(i + per, fields))
                                            for x in (b"f%d" % j, b"v%d" % j)])
                    for i in range(0, fields, per)), batch=50)
        if conn.call("HLEN", "big") != fields:
            raise RuntimeError(f"{server.name}: HLEN big is not {fields}")
        log(f"{server.name}: built a {fields:,}-field hash in {time.monotonic() - t:.1f} s")
        time.sleep(0.3)
        probe = Probe(server.port, "PING")
        try:
            time.sleep(args.settle)
            t0 = time.monotonic()
            r = conn.call(cmd, "big")
            t1 = time.monotonic()
            time.sleep(args.settle)
        finally:
            starts, lats = probe.stop()
        if r != 1:
            raise RuntimeError(f"{server.name}: {cmd} big replied {r!r}")
        during = latency_stats(starts, lats, t0, t1)
        before = latency_stats(starts, lats, t0 - 0.4, t0 - 0.05)
        after = latency_stats([s for s in starts if s >= t1], [l for s, l in zip(starts, lats)
                                                          if s >= t1], t1, t1 + 0.4)
        out[cmd] = {"command_ms": (t1 - t0) * 1e3, "ping_max_ms": during["max_ms"],
                    "ping_max_after_ms": after["max_ms"], "ping_p50_before_ms": before["p50_ms"],
                    "ping_max_before_ms": before["max_ms"], "probes_during": during["probes"]}
        time.sleep(args.settle)  # let a background free finish before building the next hash
    conn.close()
    out["fields"] = fields
    return out


# --------------------------------------------------------------------------------------------
# tables
# --------------------------------------------------------------------------------------------

def fmt(v, spec: str = ",.0f", none: str = "—") -> str:
    if v is None:
        return none
    if isinstance(v, float) and (v != v):
        return "n/a"
    if isinstance(v, float) and v == float("inf"):
        return "never"
    return format(v, spec)


def ratio(k, r) -> str:
    try:
        if k is None or r is None or r == 0 or k != k or r != r:
            return "—"
        if k == float("inf") or r == float("inf"):
            return "—"
        return f"{k / r:.2f}"
    except TypeError:
        return "—"


def table(headers, rows) -> str:
    lines = ["| " + " | ".join(headers) + " |",
             "| " + " | ".join(["---"] + ["---:"] * (len(headers) - 1)) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


HEAD = ["what", "redis", "keywarden", "ratio k/r"]


def row(label, r, k, spec=",.1f", suffix=""):
    return [label, fmt(r, spec) + suffix, fmt(k, spec) + suffix, ratio(k, r)]


def report_memory(res, args) -> str:
    r, k = res["redis"], res["keywarden"]
    n = r["keys"]
    rows = [row(f"RSS growth per key, no TTL ({n:,} keys)", r["rss_per_key"], k["rss_per_key"],
                suffix=" B"),
            row(f"RSS growth per key, EX 3600 ({n:,} more)", r["rss_per_key_ttl"],
                k["rss_per_key_ttl"], suffix=" B"),
            row("used_memory growth per key, no TTL", r["used_per_key"], k["used_per_key"],
                suffix=" B"),
            row("used_memory growth per key, EX 3600", r["used_per_key_ttl"],
                k["used_per_key_ttl"], suffix=" B"),
            row(f"RSS with {2 * n:,} keys", r["rss_ttl"] / 2**20, k["rss_ttl"] / 2**20,
                suffix=" MB"),
            row("DBSIZE", r["dbsize"], k["dbsize"], ",.0f")]
    return "### Memory per key\n\n" + table(HEAD, rows)


def report_mass(res, args) -> str:
    r, k = res["redis"], res["keywarden"]

    def reclaim(x):
        if x["reclaim_s"] is not None:
            return x["reclaim_s"]
        return None

    def reclaim_text(x):
        if x["reclaim_s"] is not None:
            return f"{x['reclaim_s']:.2f} s"
        return f"not within {x['wait_s']:.0f} s ({x['held_at_timeout']:,} held)"

    rows = [[f"reclaim: last deadline → DBSIZE 0 ({r['keys']:,} keys over {args.spread:g} s)",
             reclaim_text(r), reclaim_text(k), ratio(reclaim(k), reclaim(r))]]
    for label, key in (("GET p50 while expiring", "p50_ms"), ("GET p99 while expiring", "p99_ms"),
                       ("GET max while expiring", "max_ms")):
        rows.append(row(label, r["latency"][key], k["latency"][key], ",.2f", " ms"))
    rows.append(row("GET p99 in the second before (baseline)", r["latency_before"]["p99_ms"],
                    k["latency_before"]["p99_ms"], ",.2f", " ms"))
    rows.append(row("GET max in the second before (baseline)", r["latency_before"]["max_ms"],
                    k["latency_before"]["max_ms"], ",.2f", " ms"))
    rows.append(row("GETs per second in that window", r["latency"]["rate"], k["latency"]["rate"],
                    ",.0f"))
    rows.append(row("GETs per second in the second before", r["latency_before"]["rate"],
                    k["latency_before"]["rate"], ",.0f"))
    rows.append(row("RSS at the first deadline", r["rss_at_first_deadline"] / 2**20,
                    k["rss_at_first_deadline"] / 2**20, ",.1f", " MB"))
    rows.append(row("RSS after reclaim", r["rss_after"] / 2**20, k["rss_after"] / 2**20, ",.1f",
                    " MB"))
    return "### Mass expiry\n\n" + table(HEAD, rows)


def report_latency(res, args) -> str:
    r, k = res["redis"], res["keywarden"]
    rows = []
    for label, key in (("p50", "p50_ms"), ("p99", "p99_ms"), ("max", "max_ms")):
        rows.append(row(f"GET {label} while expiring", r["latency"][key], k["latency"][key],
                        ",.2f", " ms"))
    for label, key in (("p99", "p99_ms"), ("max", "max_ms")):
        rows.append(row(f"GET {label} in the second before (baseline)",
                        r["latency_before"][key], k["latency_before"][key], ",.2f", " ms"))
    rows.append(row("GETs per second while expiring", r["latency"]["rate"],
                    k["latency"]["rate"], ",.0f"))
    rows.append(row(f"keys held {QUIET_TAIL_S:g} s after the last deadline",
                    r["held_after_tail"], k["held_after_tail"], ",.0f"))
    return (f"### Latency while {r['keys']:,} keys expire over {args.spread:g} s "
            "(driver idle: only the server and the probe run)\n\n"
            "The window runs from the first deadline to "
            f"{QUIET_TAIL_S:g} s after the last.\n\n" + table(HEAD, rows))


def report_sparse(res, args) -> str:
    r, k = res["redis"], res["keywarden"]
    m = r["due_keys"]

    def gone(x):
        return f"{x['all_gone_s']:.2f} s" if x["all_gone_s"] is not None else \
            f"not within {x['wait_s']:.0f} s"

    rows = []
    for mark in sorted({m for m in (0.1, 1.0, 5.0) if m < args.sparse_wait}
                       | {float(args.sparse_wait)}):
        label = f"due keys held {mark:g} s after the last deadline (of {m:,})"
        rows.append(row(label, r["held_at"][str(mark)], k["held_at"][str(mark)], ",.0f"))
    rows.append(["all due keys gone (after the last deadline)", gone(r), gone(k),
                 ratio(k["all_gone_s"], r["all_gone_s"])])
    return (f"### Sparse expiry ({m:,} keys due in 2–3 s among {r['keys']:,} with a 1 h TTL)\n\n"
            + table(HEAD, rows))


def report_events(res, args) -> str:
    rows = []
    for case in ("mass", "sparse"):
        if case not in res:
            continue
        r, k = res[case]["redis"], res[case]["keywarden"]
        rows.append([f"{case}: events received", f"{r['received']:,}/{r['expected']:,}",
                     f"{k['received']:,}/{k['expected']:,}", "—"])
        for label, key in (("p50", "p50_s"), ("p99", "p99_s"), ("max", "max_s")):
            def cell(x):
                v = x[key]
                if v == float("inf"):
                    return f"> {x['wait_s']:g} s (never)"
                return f"{v:.3f} s"
            rows.append([f"{case}: lag {label}", cell(r), cell(k), ratio(k[key], r[key])])
    return "### `expired` event lag (arrival − deadline)\n\n" + table(HEAD, rows)


def report_lru(res, args) -> str:
    r, k = res["redis"], res["keywarden"]
    rows = [row("hit ratio", r["hit_ratio"] * 100, k["hit_ratio"] * 100, ".1f", " %"),
            row("ideal hit ratio for the keys held", r["ideal_hit_ratio"] * 100,
                k["ideal_hit_ratio"] * 100, ".1f", " %"),
            row("keys held (DBSIZE)", r["dbsize"], k["dbsize"], ",.0f"),
            row("evicted_keys", r["evicted_keys"], k["evicted_keys"], ",.0f"),
            row("used_memory at the end", r["used_memory"] / 2**20, k["used_memory"] / 2**20,
                ",.1f", " MB"),
            row("RSS at the end", r["rss"] / 2**20, k["rss"] / 2**20, ",.1f", " MB"),
            row("SET errors (OOM)", r["set_errors"], k["set_errors"], ",.0f")]
    if "cli" in r and "cli" in k:
        rc, kc = r["cli"], k["cli"]
        rows += [row(f"redis-cli --lru-test: hit ratio (last {rc['cycles_counted']} of "
                     f"{rc['cycles']} 1-s cycles)", rc["hit_ratio"] * 100, kc["hit_ratio"] * 100,
                     ".1f", " %"),
                 row("redis-cli --lru-test: keys held", rc["dbsize"], kc["dbsize"], ",.0f"),
                 row("redis-cli --lru-test: evicted_keys", rc["evicted_keys"],
                     kc["evicted_keys"], ",.0f"),
                 row("redis-cli --lru-test: RSS at the end", rc["rss"] / 2**20, kc["rss"] / 2**20,
                     ",.1f", " MB")]
    return (f"### Eviction, allkeys-lru, maxmemory {r['maxmemory'] >> 20} MB "
            f"({r['ops']:,} measured GETs over {r['keyspace']:,} keys)\n\n" + table(HEAD, rows))


def report_lazyfree(res, args) -> str:
    r, k = res["redis"], res["keywarden"]
    rows = []
    for cmd in ("DEL", "UNLINK"):
        rows.append(row(f"{cmd}: command latency", r[cmd]["command_ms"], k[cmd]["command_ms"],
                        ",.2f", " ms"))
        rows.append(row(f"{cmd}: longest PING during it", r[cmd]["ping_max_ms"],
                        k[cmd]["ping_max_ms"], ",.2f", " ms"))
        rows.append(row(f"{cmd}: longest PING in the 0.4 s after", r[cmd]["ping_max_after_ms"],
                        k[cmd]["ping_max_after_ms"], ",.2f", " ms"))
    rows.append(row("PING p50 before", r["DEL"]["ping_p50_before_ms"],
                    k["DEL"]["ping_p50_before_ms"], ",.3f", " ms"))
    return f"### DEL vs UNLINK of a {r['fields']:,}-field hash\n\n" + table(HEAD, rows)


REPORTS = {"memory": report_memory, "mass": report_mass, "latency": report_latency,
           "sparse": report_sparse,
           "events": report_events, "lru": report_lru, "lazyfree": report_lazyfree}


# --------------------------------------------------------------------------------------------
# plot
# --------------------------------------------------------------------------------------------

def plot_mass(res, path: str) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib is not installed (python3-matplotlib): no plot")
        return False
    fig, (ax_mem, ax_keys) = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
    colors = {"redis": "tab:red", "keywarden": "tab:blue"}
    for name in SERVERS:
        s = res[name]["samples"]
        xs = [x[0] for x in s]
        ax_mem.plot(xs, [x[1] / 2**20 for x in s], label=name, color=colors[name])
        ax_keys.plot(xs, [x[2] for x in s], label=name, color=colors[name])
    spread = res["redis"].get("spread", 3.0)
    for ax in (ax_mem, ax_keys):
        ax.set_xlim(left=-spread - 1.5)
        ax.axvline(-spread, color="gray", linestyle=":", linewidth=0.8)
        ax.axvline(0, color="gray", linestyle="--", linewidth=0.8)
        ax.grid(True, alpha=0.3)
        ax.legend()
    n = res["redis"]["keys"]
    ax_mem.set_ylabel("RSS (MB)")
    ax_keys.set_ylabel("keys held (DBSIZE)")
    ax_keys.set_xlabel(f"seconds from the last deadline (deadlines spread over −{spread:g} … 0)")
    ax_mem.set_title(f"Mass expiry: {n:,} keys, TTLs spread over {spread:g} s, never touched")
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    log(f"wrote {path}")
    return True


# --------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------

class fresh:
    """A freshly started server for one section run, stopped and removed afterwards."""

    binaries: dict[str, str] = {}

    def __init__(self, args, name: str):
        self.server = Server(name, fresh.binaries[name])

    def __enter__(self) -> Server:
        return self.server.start()

    def __exit__(self, *exc):
        alive = self.server.alive()
        self.server.cleanup()
        if not alive and exc[0] is None:
            raise RuntimeError(f"{self.server.name} died during the run")
        return False


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--subscriber-worker":
        return subscriber_worker(int(sys.argv[2]), sys.argv[3], float(sys.argv[4]))
    if len(sys.argv) >= 5 and sys.argv[1] == "--probe-worker":
        return probe_worker(int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), *sys.argv[5:])
    parser = argparse.ArgumentParser(
        description="memory per key, expiry, eviction and lazy free: keywarden-server beside "
                    "redis-server (issue 5)",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--keywarden", default=os.environ.get("KEYWARDEN_SERVER")
                        or str(DEFAULT_KEYWARDEN), help="keywarden-server binary")
    parser.add_argument("--redis", default=shutil.which("redis-server") or "/usr/bin/redis-server",
                        help="reference redis-server binary")
    parser.add_argument("--only", default=",".join(SECTIONS),
                        help="comma separated sections out of " + ", ".join(SECTIONS))
    parser.add_argument("--keys", type=int, default=1_000_000,
                        help="memory: keys per phase; mass: expiring keys; sparse: 1 h keys")
    parser.add_argument("--spread", type=float, default=3.0,
                        help="mass: the deadlines are spread evenly over this many seconds")
    parser.add_argument("--sparse-delay", type=float, default=2.0,
                        help="sparse: the due keys' deadlines are 0-1 s after this many seconds")
    parser.add_argument("--settle", type=float, default=0.5,
                        help="lazyfree: seconds of probing before and after the command")
    parser.add_argument("--sparse-keys", type=int, default=100_000, help="sparse: due keys")
    parser.add_argument("--sparse-wait", type=float, default=20.0,
                        help="sparse: seconds watched after the last deadline")
    parser.add_argument("--load-margin", type=float, default=0.0,
                        help="mass, latency: seconds added between the end of the expected "
                             "load time and the first deadline (on a busy machine)")
    parser.add_argument("--mass-wait", type=float, default=30.0,
                        help="mass: give up this long after the last deadline")
    parser.add_argument("--poll-interval", type=float, default=0.01, help="DBSIZE poll (s)")
    parser.add_argument("--lru-keys", type=int, default=1_000_000, help="lru: key space")
    parser.add_argument("--lru-maxmemory-mb", type=int, default=16, help="lru: maxmemory")
    parser.add_argument("--lru-warmup", type=int, default=1_000_000, help="lru: warm-up GETs")
    parser.add_argument("--lru-ops", type=int, default=1_000_000, help="lru: measured GETs")
    parser.add_argument("--lru-cli-seconds", type=float, default=10.0,
                        help="lru: seconds of redis-cli --lru-test too (0: skip it)")
    parser.add_argument("--redis-cli", default=shutil.which("redis-cli") or "/usr/bin/redis-cli")
    parser.add_argument("--hash-fields", type=int, default=1_000_000, help="lazyfree: fields")
    parser.add_argument("--plot", default=None,
                        help=f"mass: PNG of RSS and keys held over time (default {DEFAULT_PLOT} "
                             f"on a full run, none with --quick)")
    parser.add_argument("--json", metavar="FILE", help="also write every figure (and samples)")
    parser.add_argument("--probe", default=str(DEFAULT_PROBE) if DEFAULT_PROBE.exists() else "",
                        help="latency_probe binary (built by `ninja latency_probe`); empty: "
                             "the probe is a Python process")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: fewer keys, shorter waits; well under a minute")
    args = parser.parse_args()
    if args.quick:
        args.keys, args.sparse_keys, args.sparse_wait, args.mass_wait = 30_000, 3_000, 2.0, 5.0
        args.spread, args.sparse_delay, args.settle = 1.0, 1.0, 0.2
        args.lru_keys, args.lru_maxmemory_mb, args.lru_warmup, args.lru_ops = \
            30_000, 2, 30_000, 30_000
        args.lru_cli_seconds = 2.5
        args.hash_fields = 30_000
    elif args.plot is None:
        args.plot = str(DEFAULT_PLOT)
    sections = [s.strip().lower() for s in args.only.split(",") if s.strip()]
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        parser.error(f"unknown sections {unknown}; known: {', '.join(SECTIONS)}")
    fresh.binaries = {"keywarden": args.keywarden, "redis": args.redis}
    Probe.binary = args.probe or None

    def on_sigterm(*_):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, on_sigterm)

    results: dict = {}
    started = time.monotonic()
    load_at_start = os.getloadavg()
    try:
        for section in SECTIONS:
            if section not in sections:
                continue
            log(f"section {section}")
            if section == "events":
                results[section] = section_events(args, fresh.binaries)
                continue
            fn = {"memory": section_memory, "mass": section_mass, "latency": section_latency,
                  "sparse": section_sparse,
                  "lru": section_lru, "lazyfree": section_lazyfree}[section]
            results[section] = {}
            for name in SERVERS:
                with fresh(args, name) as server:
                    results[section][name] = fn(args, server)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        print(f"\nbenchmark aborted: {e!r}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nbenchmark interrupted", file=sys.stderr)
        return 130

    redis_v = next((t[2:] for t in server_version(args.redis).split() if t.startswith("v=")), "?")
    print(f"keywarden vs redis-server {redis_v}: memory and expiry (issue 5), "
          f"{'--quick, ' if args.quick else ''}{os.cpu_count()} CPUs, "
          f"{datetime.datetime.now().isoformat(timespec='minutes')}, "
          f"{time.monotonic() - started:.0f} s, load average at the start "
          f"{load_at_start[0]:.1f} / at the end {os.getloadavg()[0]:.1f}, "
          f"latency probe: {'C++ (latency_probe)' if Probe.binary else 'Python'}")
    for section in SECTIONS:
        if section in results:
            print()
            print(REPORTS[section](results[section], args))
    if "mass" in results and args.plot:
        plot_mass(results["mass"], args.plot)
    if args.json:
        write_json(args, load_at_start, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
