#!/usr/bin/python3
"""keywarden-server beside a stock redis-server: EVALSHA of a lock script, and PUBLISH.

The benchmark of issue 4, in one run:

* ``evalsha``: EVALSHA of Redisson's reentrant-lock acquire script (the text of
  tests/e2e/test_scripting.py's LOCK_ACQUIRE), SCRIPT LOADed first, through redis-benchmark
  ``EVALSHA <sha> 1 lock:<run>:__rand_int__ 30000 <owner>`` with -r: the first call on a key
  acquires the lock (HINCRBY on a fresh hash + PEXPIRE), every later one re-enters it. Each run
  uses its own key prefix, so every run sees the same mix; afterwards the hold counts of all
  its locks must add up to the number of requests (every call really ran the script), then the
  database is flushed.
* ``publish-1`` and ``publish-100``: redis-benchmark ``PUBLISH <channel> <payload>`` with 1 and
  with 100 subscribers on the channel. The subscribers are raw sockets in a separate reader
  process (this file run with --subscriber-worker) that drains them all the time and counts the
  bytes it receives; every message frame has the same length, so bytes / frame length is the
  number of deliveries, and the first and the last frame of each socket are compared with the
  expected bytes. After redis-benchmark ends, the run waits (bounded) until every subscriber
  has every message, and the server's CPU time is read only then, so it includes writing the
  messages out. The client output buffer limit for pub/sub clients is lifted on both servers
  (CONFIG SET) so that a reader that falls behind is not cut off.

Both servers run side by side (``--save '' --appendonly no``, 127.0.0.1, free ports), each
test x pipeline depth alternates which server goes first, for several rounds, and the table
shows medians. CPU time is utime + stime of the server process from /proc/<pid>/stat.

    /usr/bin/python3 bench/scripting_pubsub_benchmark.py            # 3 rounds, ~3 s a run
    /usr/bin/python3 bench/scripting_pubsub_benchmark.py --quick    # smoke run, a few seconds
    /usr/bin/python3 bench/scripting_pubsub_benchmark.py --tests publish-100 --pipelines 16

The server under test is --keywarden, else $KEYWARDEN_SERVER, else
<repo>/build/src/server/keywarden-server. It builds nothing.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import io
import json
import os
import platform
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from redis_benchmark import (DEFAULT_KEYWARDEN, HOST, Server, _die_with_parent,  # noqa: E402
                             median, server_version)

# Redisson's RLock acquire (tryLockInnerAsync): KEYS[1] the lock, ARGV[1] the lease in ms,
# ARGV[2] the owner id. nil when acquired or re-entered, else the lock's remaining TTL.
LOCK_ACQUIRE = """
if ((redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
return redis.call('pttl', KEYS[1])
"""
LOCK_OWNER = "8743c9c0-0795-4907-87fd-6c719a6b4586:1"  # Redisson's "<client uuid>:<thread id>"
LEASE_MS = "30000"

TESTS = {"evalsha": None, "publish-1": 1, "publish-100": 100}  # name -> subscribers
RPS_GOAL = 1.0


# --------------------------------------------------------------------------------------------
# small RESP helpers (raw sockets, no client library on the hot path)
# --------------------------------------------------------------------------------------------

def encode(*args) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def message_frame(channel: bytes, payload: bytes) -> bytes:
    """The RESP2 bytes a subscriber receives for one PUBLISH."""
    return (b"*3\r\n$7\r\nmessage\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n"
            % (len(channel), channel, len(payload), payload))


def subscribe_confirmation(channel: bytes) -> bytes:
    return b"*3\r\n$9\r\nsubscribe\r\n$%d\r\n%s\r\n:1\r\n" % (len(channel), channel)


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is field 3 (state); utime and stime are fields 14 and 15
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def command(port: int, *args, timeout: float = 10.0) -> bytes:
    """Sends one command on a fresh connection and returns the raw reply (one read is enough
    for the short replies used here)."""
    with socket.create_connection((HOST, port), timeout=timeout) as s:
        s.sendall(encode(*args))
        data = b""
        while not data.endswith(b"\r\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        return data


# --------------------------------------------------------------------------------------------
# subscriber worker (a separate process: python3 this_file --subscriber-worker SPEC)
# --------------------------------------------------------------------------------------------

def subscriber_worker(spec: str) -> int:
    """Opens `count` subscriptions to `channel`, prints "ready", then drains every socket
    until told "quit" on stdin (or stdin closes, or the deadline passes). On "count" it prints
    one JSON line: per socket the message bytes received so far, and how many sockets failed
    a check (closed, or a first/last frame that is not the expected one)."""
    _die_with_parent()
    cfg = json.loads(spec)
    channel, frame = cfg["channel"].encode(), cfg["frame"].encode()
    deadline = time.monotonic() + cfg["max_seconds"]
    confirmation = subscribe_confirmation(channel)
    socks = []
    for _ in range(cfg["count"]):
        s = socket.create_connection((HOST, cfg["port"]), timeout=10)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        s.sendall(encode("SUBSCRIBE", channel))
        socks.append(s)
    for s in socks:
        got = b""
        while len(got) < len(confirmation):
            chunk = s.recv(len(confirmation) - len(got))
            if not chunk:
                raise SystemExit("subscriber: connection closed while subscribing")
            got += chunk
        if got != confirmation:
            raise SystemExit(f"subscriber: unexpected SUBSCRIBE reply {got!r}")
        s.setblocking(False)

    n = len(socks)
    received = [0] * n
    head = [bytearray() for _ in range(n)]   # the first frame of each socket
    tail = [bytearray() for _ in range(n)]   # the last len(frame) bytes of each socket
    failed = [False] * n
    flen = len(frame)
    sel = selectors.DefaultSelector()
    for i, s in enumerate(socks):
        sel.register(s, selectors.EVENT_READ, i)
    stdin_fd = sys.stdin.fileno()
    sel.register(stdin_fd, selectors.EVENT_READ, -1)
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    pending = b""
    print("ready", flush=True)
    while time.monotonic() < deadline:
        for key, _ in sel.select(timeout=0.5):
            i = key.data
            if i == -1:
                data = os.read(stdin_fd, 4096)
                if not data:
                    return 0
                pending += data
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    if line.strip() == b"quit":
                        return 0
                    if line.strip() == b"count":
                        bad = 0
                        for j in range(n):
                            r = received[j]
                            if failed[j] or (r and r % flen == 0 and bytes(tail[j]) != frame) \
                                    or (len(head[j]) == flen and bytes(head[j]) != frame):
                                bad += 1
                        print(json.dumps({"received": received, "bad": bad}), flush=True)
                continue
            try:
                got = key.fileobj.recv_into(buf)
            except BlockingIOError:
                continue
            except OSError:
                got = 0
            if got == 0:
                failed[i] = True
                sel.unregister(key.fileobj)
                continue
            received[i] += got
            if len(head[i]) < flen:
                head[i] += view[:min(got, flen - len(head[i]))]
            if got >= flen:
                tail[i][:] = view[got - flen:got]
            else:
                tail[i] += view[:got]
                del tail[i][:-flen]
    return 0


class Subscribers:
    """A subscriber worker process for one server and channel."""

    def __init__(self, port: int, channel: str, count: int, frame: bytes, max_seconds: float):
        self.count = count
        self.frame_len = len(frame)
        spec = json.dumps({"port": port, "channel": channel, "count": count,
                           "frame": frame.decode(), "max_seconds": max_seconds})
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__),
                                      "--subscriber-worker", spec],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, preexec_fn=_die_with_parent)
        line = self._readline(30)
        if line != "ready":
            self.stop()
            raise RuntimeError(f"subscriber worker did not start (said {line!r})")

    def _readline(self, timeout: float) -> str:
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            raise RuntimeError("subscriber worker does not answer")
        return self.proc.stdout.readline().strip()

    def received(self) -> tuple[list[int], int]:
        """Per subscriber: message frames received so far; and the number of failed sockets."""
        self.proc.stdin.write("count\n")
        self.proc.stdin.flush()
        reply = json.loads(self._readline(10))
        return [r // self.frame_len for r in reply["received"]], reply["bad"]

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.proc.pid)

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait(5)


# --------------------------------------------------------------------------------------------
# runs
# --------------------------------------------------------------------------------------------

class Bench:
    def __init__(self, args, servers: dict[str, Server]):
        self.args = args
        self.servers = servers
        self.sha = {}
        self.subscribers: dict[tuple[str, int], Subscribers] = {}
        self.payload = (b"unlock:" + b"x" * args.payload)[:args.payload]
        self.run_no = 0

    def setup(self, tests) -> None:
        for name, server in self.servers.items():
            reply = command(server.port, "SCRIPT", "LOAD", LOCK_ACQUIRE)
            if not reply.startswith(b"$40\r\n"):
                raise RuntimeError(f"SCRIPT LOAD on {name}: {reply!r}")
            self.sha[name] = reply.split(b"\r\n")[1].decode()
            reply = command(server.port, "CONFIG", "SET", "client-output-buffer-limit",
                            "pubsub 0 0 0")
            if reply != b"+OK\r\n":
                raise RuntimeError(f"CONFIG SET client-output-buffer-limit on {name}: {reply!r}")
        if len(set(self.sha.values())) != 1:
            raise RuntimeError(f"the servers disagree on the script's SHA1: {self.sha}")
        for test in tests:
            count = TESTS[test]
            if count is None:
                continue
            for name, server in self.servers.items():
                channel = f"bench:{count}"
                self.subscribers[(name, count)] = Subscribers(
                    server.port, channel, count, message_frame(channel.encode(), self.payload),
                    max_seconds=self.args.max_seconds)

    def stop(self) -> None:
        for s in self.subscribers.values():
            s.stop()

    def run(self, name: str, test: str, pipeline: int, requests: int) -> dict:
        args, server = self.args, self.servers[name]
        self.run_no += 1
        argv = [args.redis_benchmark, "-h", HOST, "-p", str(server.port), "-c", str(args.clients),
                "-n", str(requests), "-P", str(pipeline), "--csv"]
        subs = None
        if test == "evalsha":
            prefix = f"lock:{self.run_no}:"
            argv += ["-r", str(args.keyspace), "EVALSHA", self.sha[name], "1",
                     prefix + "__rand_int__", LEASE_MS, LOCK_OWNER]
        else:
            subs = self.subscribers[(name, TESTS[test])]
            before, _ = subs.received()
            argv += ["PUBLISH", f"bench:{TESTS[test]}", self.payload.decode()]
        cpu_before = cpu_seconds(server.pid)
        start = time.monotonic()
        out = subprocess.run(argv, capture_output=True, text=True, timeout=args.run_timeout)
        wall = time.monotonic() - start
        rows = [r for r in csv.reader(io.StringIO(out.stdout)) if r and r[0] != "test"]
        if out.returncode != 0 or len(rows) != 1 or not server.alive():
            raise RuntimeError(f"redis-benchmark against {name} failed "
                               f"(exit {out.returncode}, server alive: {server.alive()}):\n"
                               f"{' '.join(argv)}\n{out.stdout}\n{out.stderr}")
        result = {"server": name, "test": test, "pipeline": pipeline, "requests": requests,
                  "rps": float(rows[0][1]), "p50_ms": float(rows[0][4]),
                  "bench_wall_s": round(wall, 3)}
        if subs is not None:
            # wait until every subscriber has every message (or progress stops)
            expected = requests * subs.count
            delivered, last_progress, bad = 0, time.monotonic(), 0
            drain_deadline = time.monotonic() + args.drain_timeout
            while time.monotonic() < drain_deadline:
                now, bad = subs.received()
                got = [a - b for a, b in zip(now, before)]
                if sum(got) != delivered:
                    delivered, last_progress = sum(got), time.monotonic()
                if delivered >= expected or time.monotonic() - last_progress > 2.0:
                    break
                time.sleep(0.01)
            result.update(published=requests, subscribers=subs.count, delivered=delivered,
                          expected=expected, min_per_subscriber=min(got), bad_subscribers=bad,
                          drain_s=round(time.monotonic() - start - wall, 3))
            result["delivered_ok"] = delivered == expected and min(got) == requests and bad == 0
        result["cpu_s"] = cpu_seconds(server.pid) - cpu_before
        result["cpu_us_per_request"] = result["cpu_s"] * 1e6 / requests
        result["wall_s"] = round(time.monotonic() - start, 3)
        if test == "evalsha":
            result.update(self.check_locks(name, prefix, requests))
        return result

    def check_locks(self, name: str, prefix: str, requests: int) -> dict:
        """Every call acquired or re-entered a lock: the hold counts add up to the requests."""
        import redis  # python3-redis; only for this check, off the timed path
        client = redis.Redis(host=HOST, port=self.servers[name].port, socket_timeout=30)
        try:
            keys = list(client.scan_iter(match=prefix + "*", count=1000))
            holds = 0
            for i in range(0, len(keys), 1000):
                pipe = client.pipeline(transaction=False)
                for k in keys[i:i + 1000]:
                    pipe.hget(k, LOCK_OWNER)
                holds += sum(int(v or 0) for v in pipe.execute())
            client.flushall()
        finally:
            client.close()
        return {"locks_acquired": len(keys), "reentries": holds - len(keys),
                "holds_ok": holds == requests}


def calibrate(bench: Bench, test: str, pipeline: int) -> int:
    """-n so that one run on redis-server takes about --seconds (publish: including delivery)."""
    args = bench.args
    probe = int(min(args.seconds, 1.0) * (10_000 if pipeline == 1 else 50_000))
    if TESTS[test] and TESTS[test] > 1:
        probe //= 4
    probe = probe // pipeline * pipeline
    r = bench.run("redis", test, pipeline, probe)
    n = int(probe / max(r["wall_s"], 1e-3) * args.seconds)
    if args.max_requests:
        n = min(n, args.max_requests)
    step = 10_000 if n > 100_000 else 1_000
    return max(step, round(n / step) * step)


def summarize(results: list[dict], tests, pipelines) -> list[dict]:
    summary = []
    for test in tests:
        for p in pipelines:
            row = {"test": test, "pipeline": p}
            for name in ("redis", "keywarden"):
                runs = [r for r in results if r["test"] == test and r["pipeline"] == p
                        and r["server"] == name]
                row[f"{name}_rps"] = median([r["rps"] for r in runs])
                row[f"{name}_cpu_s"] = median([r["cpu_s"] for r in runs])
                row[f"{name}_cpu_us"] = median([r["cpu_us_per_request"] for r in runs])
                row[f"{name}_runs"] = len(runs)
                if test == "evalsha":
                    row[f"{name}_ok"] = all(r["holds_ok"] for r in runs)
                    row[f"{name}_check"] = (f"{sum(r['requests'] for r in runs):,} calls"
                                            + (" held" if row[f"{name}_ok"] else " NOT all held"))
                else:
                    row[f"{name}_ok"] = all(r["delivered_ok"] for r in runs)
                    delivered = sum(r["delivered"] for r in runs)
                    expected = sum(r["expected"] for r in runs)
                    row[f"{name}_check"] = f"{delivered:,}/{expected:,} delivered"
            row["rps_ratio"] = row["keywarden_rps"] / row["redis_rps"]
            row["cpu_ratio"] = (row["keywarden_cpu_s"] / row["redis_cpu_s"]
                                if row["redis_cpu_s"] else float("nan"))
            row["requests"] = next((r["requests"] for r in results
                                    if r["test"] == test and r["pipeline"] == p), 0)
            summary.append(row)
    return summary


def markdown_table(summary: list[dict]) -> str:
    lines = ["| test | pipeline | -n | redis req/s | keywarden req/s | req/s ratio | "
             "redis CPU s | keywarden CPU s | CPU ratio | redis check | keywarden check |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for r in summary:
        lines.append(
            f"| {r['test'].upper()} | {r['pipeline']} | {r['requests']:,} | {r['redis_rps']:,.0f}"
            f" | {r['keywarden_rps']:,.0f} | {r['rps_ratio']:.2f} | {r['redis_cpu_s']:.2f}"
            f" | {r['keywarden_cpu_s']:.2f} | {r['cpu_ratio']:.2f} | {r['redis_check']}"
            f" | {r['keywarden_check']} |")
    return "\n".join(lines)


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--subscriber-worker":
        return subscriber_worker(sys.argv[2])
    parser = argparse.ArgumentParser(
        description="EVALSHA of a lock script and PUBLISH to 1/100 subscribers, keywarden-server "
                    "beside redis-server",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("keywarden_pos", nargs="?", metavar="KEYWARDEN",
                        help="keywarden-server binary (same as --keywarden)")
    parser.add_argument("--keywarden", default=os.environ.get("KEYWARDEN_SERVER")
                        or str(DEFAULT_KEYWARDEN), help="keywarden-server binary")
    parser.add_argument("--redis", default=shutil.which("redis-server") or "/usr/bin/redis-server",
                        help="reference redis-server binary")
    parser.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark")
                        or "/usr/bin/redis-benchmark")
    parser.add_argument("--tests", default=",".join(TESTS),
                        help="comma separated, out of " + ", ".join(TESTS))
    parser.add_argument("--pipelines", default="1,16", help="pipeline depths (-P)")
    parser.add_argument("--clients", type=int, default=50, help="parallel connections (-c)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds; each runs every test on both servers, order alternating")
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="target length of one run; -n is calibrated on redis-server")
    parser.add_argument("--requests", type=int, default=None,
                        help="fixed -n for every run (skips the calibration)")
    parser.add_argument("--max-requests", type=int, default=2_000_000,
                        help="upper bound on a calibrated -n")
    parser.add_argument("--keyspace", type=int, default=100_000,
                        help="EVALSHA: lock keys drawn at random out of this many (-r)")
    parser.add_argument("--payload", type=int, default=16, help="PUBLISH payload bytes")
    parser.add_argument("--run-timeout", type=float, default=120, help="seconds per run")
    parser.add_argument("--drain-timeout", type=float, default=30,
                        help="seconds to wait for subscribers to get every message")
    parser.add_argument("--max-seconds", type=float, default=1800,
                        help="subscriber workers exit after this long whatever happens")
    parser.add_argument("--json", metavar="FILE", help="also write every run and the summary")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 1 round, a fixed small -n, a few seconds in all")
    args = parser.parse_args()
    if args.keywarden_pos:
        args.keywarden = args.keywarden_pos
    if args.quick:
        args.rounds, args.seconds, args.keyspace = 1, 0.3, 1000
        args.requests = args.requests or 3000
        args.drain_timeout, args.max_seconds = 10, 120
    tests = [t.strip().lower() for t in args.tests.split(",") if t.strip()]
    unknown = [t for t in tests if t not in TESTS]
    if unknown:
        parser.error(f"unknown tests {unknown}; known: {', '.join(TESTS)}")
    pipelines = [int(p) for p in args.pipelines.split(",")]

    servers = {"keywarden": Server("keywarden", args.keywarden),
               "redis": Server("redis", args.redis)}
    bench = Bench(args, servers)
    results: list[dict] = []
    requests = {}
    # SIGTERM (a test runner's timeout) unwinds through the finally below like Ctrl-C does
    def on_sigterm(*_):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        for s in servers.values():
            s.start()
        print(f"# keywarden {args.keywarden} (pid {servers['keywarden'].pid}) vs "
              f"redis {args.redis} (pid {servers['redis'].pid}); {args.clients} clients, "
              f"{args.rounds} rounds", file=sys.stderr)
        bench.setup(tests)
        for test in tests:
            for p in pipelines:
                if args.requests:
                    requests[(test, p)] = args.requests
                else:
                    requests[(test, p)] = calibrate(bench, test, p)
                    bench.run("keywarden", test, p, requests[(test, p)] // 10 // p * p)  # warm-up
                # redis-benchmark sends whole pipelines: -n a multiple of the depth is exact
                requests[(test, p)] = -(-requests[(test, p)] // p) * p
                print(f"#   {test} -P {p}: -n {requests[(test, p)]}", file=sys.stderr)
        for round_no in range(args.rounds):
            order = ["keywarden", "redis"] if round_no % 2 == 0 else ["redis", "keywarden"]
            for test in tests:
                for p in pipelines:
                    for name in order:
                        r = bench.run(name, test, p, requests[(test, p)])
                        r["round"] = round_no
                        results.append(r)
                        extra = (f"{r['locks_acquired']:,} acquired, {r['reentries']:,} re-entered"
                                 + ("" if r["holds_ok"] else ", HOLD COUNTS WRONG")
                                 if test == "evalsha" else
                                 f"{r['delivered']:,}/{r['expected']:,} delivered "
                                 f"(min {r['min_per_subscriber']:,}/subscriber, "
                                 f"drain {r['drain_s']:.2f} s)")
                        print(f"#   round {round_no + 1}/{args.rounds} {name:9s} {test:11s} "
                              f"-P {p:<2d} {r['rps']:>10,.0f} req/s  CPU {r['cpu_s']:6.2f} s "
                              f"({r['cpu_us_per_request']:5.2f} µs/req)  {extra}", file=sys.stderr)
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
        print(f"\nbenchmark aborted: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nbenchmark interrupted", file=sys.stderr)
        return 130
    finally:
        bench.stop()
        for s in servers.values():
            s.cleanup()

    summary = summarize(results, tests, pipelines)
    print()
    redis_v = next((t[2:] for t in server_version(args.redis).split() if t.startswith("v=")), "?")
    print(f"keywarden vs redis-server {redis_v}: redis-benchmark -c {args.clients}, "
          f"EVALSHA -r {args.keyspace}, PUBLISH payload {args.payload} B, median of "
          f"{args.rounds} rounds, {os.cpu_count()} CPUs, {datetime.date.today()}")
    print()
    print(markdown_table(summary))
    failed = [f"{r['test']} -P {r['pipeline']} on {name}" for r in summary
              for name in ("redis", "keywarden") if not r[f"{name}_ok"]]
    if failed:
        print("\nchecks failed: " + "; ".join(failed))
    if args.json:
        meta = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
                "command": " ".join(sys.argv), "cpus": os.cpu_count(),
                "machine": platform.platform(), "keywarden": args.keywarden,
                "keywarden_version": server_version(args.keywarden), "redis": args.redis,
                "redis_version": server_version(args.redis), "clients": args.clients,
                "keyspace": args.keyspace, "payload": args.payload, "rounds": args.rounds,
                "requests": {f"{t}/P{p}": n for (t, p), n in requests.items()}}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "summary": summary, "runs": results}, f, indent=2)
        print(f"\nwrote {args.json}", file=sys.stderr)
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
