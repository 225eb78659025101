#!/usr/bin/python3
"""keywarden::Lock and redis-py's Lock on keywarden-server beside a stock redis-server.

The benchmark of issue 6, in one run, every figure for both servers with the ratio:

* ``uncontended``: lock_bench's lock()+unlock() cycles per second with keywarden::Lock (one
  thread, one Client, one handle, watchdog lease), after a warm-up.
* ``kw-lock``: 8 contenders, threads of lock_bench each with its own Client and handle, loop
  lock() -> critical section -> unlock() for --seconds.
* ``redis-py-0.1`` / ``redis-py-0.001``: the same loop with redis-py's ``Lock``
  (``redis.Redis(...).lock(name, sleep=...)``: it polls, 0.1 s being its default sleep), 8
  contender *processes* (this file run with --redis-py-worker; threads would share one GIL).

The critical section is the same everywhere: GET a counter key, SET it to the value + 1, on the
contender's own connection; the counter must end equal to the number of cycles (a lost update
means two holders at once). Every cycle is recorded as (contender, lock() called, lock()
returned, just before the release is sent), in CLOCK_MONOTONIC nanoseconds for both the C++
threads (std::steady_clock) and the Python processes (time.monotonic_ns), and analysed here
the same way for all three:

* cycles sorted by the time lock() returned must not overlap: each one returns after the one
  before it started its release (a second check of mutual exclusion);
* a hand-off is a cycle whose contender is not the previous holder; its latency is the time from
  just before the previous holder sent its release to the moment the new holder's lock()
  returned. When the releaser takes the lock again at once (neither lock is fair), that cycle
  is a re-acquisition, not a hand-off, and counts in acquisitions/s only;
* cycles whose lock() returned in the first --warmup-seconds are left out of the figures.

    /usr/bin/python3 bench/lock_benchmark.py                 # 3 rounds, 5 s a run, ~2 minutes
    /usr/bin/python3 bench/lock_benchmark.py --quick         # smoke run, a few seconds
    /usr/bin/python3 bench/lock_benchmark.py --json out.json --lock-bench build/bench/lock_bench

It builds nothing: lock_bench is --lock-bench (default build/bench/lock_bench), the server under
test KEYWARDEN / --keywarden / $KEYWARDEN_SERVER / build/src/server/keywarden-server.
Progress goes to stderr, the table to stdout. Exit 0, 2 if a correctness check failed, 1 if a
run failed.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import selectors
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (HOST, add_server_arguments, markdown_table, median,  # noqa: E402
                     redis_version, resolve_server_arguments, running_servers, server_version)
from redis_benchmark import _die_with_parent  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_LOCK_BENCH = REPO_ROOT / "build" / "bench" / "lock_bench"
CONTENDED = {  # name -> (label, redis-py sleep or None for keywarden::Lock)
    "kw-lock": ("keywarden::Lock", None),
    "redis-py-0.1": ("redis-py Lock, sleep 0.1 s", 0.1),
    "redis-py-0.001": ("redis-py Lock, sleep 0.001 s", 0.001),
}
SERVERS = ("redis", "keywarden")
HANDOFF_P99_AIM_US = 1000.0


# --------------------------------------------------------------------------------------------
# redis-py contender (a separate process: python3 this_file --redis-py-worker SPEC)
# --------------------------------------------------------------------------------------------

def redis_py_worker(spec: str) -> int:
    """Connects, says "ready", waits for "go <start_ns> <deadline_ns>" on stdin, sleeps until
    start_ns, loops acquire -> GET/SET counter -> release until deadline_ns, then prints its
    cycles as one JSON line."""
    _die_with_parent()
    import redis  # Debian's python3-redis
    cfg = json.loads(spec)
    client = redis.Redis(host=HOST, port=cfg["port"], socket_timeout=30)
    lock = client.lock(cfg["name"], sleep=cfg["sleep"])
    counter_key = cfg["name"] + ":counter"
    client.ping()
    print("ready", flush=True)
    words = sys.stdin.readline().split()
    if len(words) != 3 or words[0] != "go":
        return 1
    start_ns, deadline_ns = int(words[1]), int(words[2])
    delay = (start_ns - time.monotonic_ns()) / 1e9
    if delay > 0:
        time.sleep(delay)
    cycles = []
    clock = time.monotonic_ns
    while clock() < deadline_ns:
        called = clock()
        lock.acquire()
        acquired = clock()
        value = client.get(counter_key)
        client.set(counter_key, int(value or 0) + 1)
        release = clock()
        lock.release()
        cycles.append((cfg["id"], called, acquired, release))
        if cfg["outside_us"]:
            time.sleep(cfg["outside_us"] / 1e6)
    print(json.dumps(cycles), flush=True)
    return 0


def readline(proc: subprocess.Popen, timeout: float) -> str:
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    if not sel.select(timeout):
        raise RuntimeError("a redis-py contender does not answer")
    return proc.stdout.readline().strip()


def run_redis_py(args, port: int, name: str, sleep: float) -> dict:
    counter_key = name + ":counter"
    procs = []
    try:
        subprocess.run(["redis-cli", "-h", HOST, "-p", str(port), "DEL", name, counter_key],
                       capture_output=True, timeout=10, check=True)
        for i in range(args.contenders):
            spec = json.dumps({"port": port, "name": name, "sleep": sleep, "id": i,
                               "outside_us": args.outside_us})
            procs.append(subprocess.Popen([sys.executable, os.path.abspath(__file__),
                                           "--redis-py-worker", spec],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          text=True, preexec_fn=_die_with_parent))
        for p in procs:
            line = readline(p, 30)
            if line != "ready":
                raise RuntimeError(f"a redis-py contender did not start (said {line!r})")
        # all of them start at one instant, a little after the last one is told
        start_ns = time.monotonic_ns() + 50_000_000
        deadline_ns = start_ns + int(args.seconds * 1e9)
        for p in procs:
            p.stdin.write(f"go {start_ns} {deadline_ns}\n")
            p.stdin.flush()
        cycles = []
        for p in procs:
            line = readline(p, args.seconds + args.run_timeout)
            cycles += [tuple(c) for c in json.loads(line)]
            p.wait(10)
        end_ns = time.monotonic_ns()
        out = subprocess.run(["redis-cli", "-h", HOST, "-p", str(port), "--no-raw", "MGET",
                              counter_key, name], capture_output=True, text=True, timeout=10,
                             check=True).stdout.splitlines()
        counter = int(out[0].split('"')[1]) if '"' in out[0] else 0
        released = "(nil)" in out[1]
        subprocess.run(["redis-cli", "-h", HOST, "-p", str(port), "DEL", counter_key],
                       capture_output=True, timeout=10)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(5)
    cycles.sort(key=lambda c: c[2])
    return {"cycles": len(cycles), "counter": counter, "overlaps": 0, "released": released,
            "failures": 0, "start_ns": start_ns, "end_ns": end_ns, "events": cycles}


def run_kw_lock(args, port: int, name: str) -> dict:
    with tempfile.NamedTemporaryFile(prefix="lock-bench-events-", suffix=".txt") as events:
        argv = [args.lock_bench, "handoff", "--port", str(port), "--name", name,
                "--contenders", str(args.contenders), "--seconds", str(args.seconds),
                "--outside-us", str(args.outside_us), "--events", events.name]
        out = subprocess.run(argv, capture_output=True, text=True,
                             timeout=args.seconds + args.run_timeout)
        if out.returncode not in (0, 2) or not out.stdout.strip():
            raise RuntimeError(f"{' '.join(argv)} failed (exit {out.returncode}):\n"
                               f"{out.stdout}\n{out.stderr}")
        result = json.loads(out.stdout.strip().splitlines()[-1])
        with open(events.name) as f:
            result["events"] = [tuple(int(x) for x in line.split()) for line in f if line.strip()]
    return result


def run_uncontended(args, port: int, name: str) -> dict:
    argv = [args.lock_bench, "uncontended", "--port", str(port), "--name", name,
            "--cycles", str(args.cycles), "--warmup", str(args.warmup_cycles)]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=args.run_timeout)
    if out.returncode not in (0, 2) or not out.stdout.strip():
        raise RuntimeError(f"{' '.join(argv)} failed (exit {out.returncode}):\n"
                           f"{out.stdout}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------------------------
# analysis
# --------------------------------------------------------------------------------------------

def percentile(sorted_values: list, q: float) -> float:
    """Nearest rank."""
    if not sorted_values:
        return float("nan")
    rank = max(1, -(-len(sorted_values) * q // 100))
    return sorted_values[int(rank) - 1]


def analyse(run: dict, warmup_s: float) -> dict:
    """Hand-offs, waits and the timeline check of one contended run (events sorted by the
    time lock() returned)."""
    events = run["events"]
    from_ns = run["start_ns"] + int(warmup_s * 1e9)
    handoffs, waits, timeline_overlaps, acquisitions = [], [], 0, 0
    for i, (who, called, acquired, release) in enumerate(events):
        if i and acquired < events[i - 1][3]:
            timeline_overlaps += 1
        if acquired < from_ns:
            continue
        acquisitions += 1
        waits.append(acquired - called)
        if i and who != events[i - 1][0]:
            handoffs.append(acquired - events[i - 1][3])
    last = max((e[3] for e in events), default=from_ns)
    window_s = max(last - from_ns, 1) / 1e9
    return {"cycles": run["cycles"], "counter": run["counter"],
            "overlaps": run["overlaps"] + timeline_overlaps, "released": run["released"],
            "failures": run["failures"], "acquisitions": acquisitions,
            "handoffs_ns": handoffs, "waits_ns": waits, "window_s": window_s}


def merge(analyses: list[dict]) -> dict:
    handoffs = sorted(h for a in analyses for h in a["handoffs_ns"])
    waits = sorted(w for a in analyses for w in a["waits_ns"])
    window = sum(a["window_s"] for a in analyses)
    cycles = sum(a["cycles"] for a in analyses)
    ok = all(a["counter"] == a["cycles"] and a["overlaps"] == 0 and a["released"]
             and a["failures"] == 0 for a in analyses)
    return {"handoff_p50_us": percentile(handoffs, 50) / 1e3,
            "handoff_p99_us": percentile(handoffs, 99) / 1e3,
            "handoff_max_us": (handoffs[-1] / 1e3) if handoffs else float("nan"),
            "handoffs": len(handoffs),
            "handoffs_per_s": len(handoffs) / window,
            "acquisitions_per_s": sum(a["acquisitions"] for a in analyses) / window,
            "wait_p99_us": percentile(waits, 99) / 1e3,
            "cycles": cycles, "counter_exact": all(a["counter"] == a["cycles"] for a in analyses),
            "overlaps": sum(a["overlaps"] for a in analyses), "ok": ok}


# --------------------------------------------------------------------------------------------
# table
# --------------------------------------------------------------------------------------------

CONTENDED_ROWS = [  # key, label, format
    ("handoff_p50_us", "hand-off p50 µs", "{:,.0f}"),
    ("handoff_p99_us", "hand-off p99 µs", "{:,.0f}"),
    ("handoff_max_us", "hand-off max µs", "{:,.0f}"),
    ("handoffs_per_s", "hand-offs/s", "{:,.0f}"),
    ("acquisitions_per_s", "acquisitions/s", "{:,.0f}"),
    ("wait_p99_us", "lock() wait p99 µs", "{:,.0f}"),
]


def fmt(template: str, value: float) -> str:
    return "n/a" if value != value else template.format(value)  # NaN: no sample


def ratio(kw: float, redis: float) -> str:
    if kw != kw or redis != redis or redis == 0:
        return "n/a"
    return f"{kw / redis:.2f}"


def check_text(m: dict) -> str:
    return (f"{m['cycles']:,} cycles, counter "
            + ("exact" if m["counter_exact"] else "WRONG")
            + (", no overlap" if m["overlaps"] == 0 else f", {m['overlaps']} OVERLAPS")
            + ("" if m["ok"] else ", FAILED"))


def table(summary: dict, args) -> str:
    rows = []
    if "uncontended" in summary:
        u = summary["uncontended"]
        checks = {s: (f"{u[s]['cycles']:,} cycles, released" if u[s]["ok"] else "NOT released")
                  for s in SERVERS}
        rows.append(["keywarden::Lock, 1 thread", "uncontended lock+unlock /s",
                     fmt("{:,.0f}", u["redis"]["cycles_per_second"]),
                     fmt("{:,.0f}", u["keywarden"]["cycles_per_second"]),
                     ratio(u["keywarden"]["cycles_per_second"], u["redis"]["cycles_per_second"]),
                     checks["redis"], checks["keywarden"]])
    for test, (label, _) in CONTENDED.items():
        if test not in summary:
            continue
        m = summary[test]
        who = f"{label}, {args.contenders} " + ("threads" if test == "kw-lock" else "processes")
        for key, row_label, template in CONTENDED_ROWS:
            rows.append([who, row_label, fmt(template, m["redis"][key]),
                         fmt(template, m["keywarden"][key]),
                         ratio(m["keywarden"][key], m["redis"][key]),
                         check_text(m["redis"]), check_text(m["keywarden"])])
    return markdown_table(["lock", "measurement", "redis-server", "keywarden", "ratio",
                           "redis check", "keywarden check"], rows, right={2, 3, 4})


# --------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------

def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--redis-py-worker":
        return redis_py_worker(sys.argv[2])
    tests_known = ["uncontended", *CONTENDED]
    parser = argparse.ArgumentParser(
        description="keywarden::Lock and redis-py's Lock, keywarden-server beside redis-server",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    add_server_arguments(parser)
    parser.add_argument("--lock-bench", default=str(DEFAULT_LOCK_BENCH),
                        help="the lock_bench binary (built by `ninja lock_bench`)")
    parser.add_argument("--tests", default=",".join(tests_known),
                        help="comma separated, out of " + ", ".join(tests_known))
    parser.add_argument("--contenders", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=5.0, help="length of a contended run")
    parser.add_argument("--outside-us", type=int, default=0,
                        help="contended runs: each contender sleeps this long after its unlock "
                             "(0: it asks for the lock again at once, as the loop of issue 6)")
    parser.add_argument("--warmup-seconds", type=float, default=0.5,
                        help="cycles starting this early in a contended run are left out")
    parser.add_argument("--cycles", type=int, default=20000, help="uncontended cycles per run")
    parser.add_argument("--warmup-cycles", type=int, default=2000,
                        help="uncontended cycles before the timed ones")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds, each running every test on both servers, order alternating;"
                             " hand-offs are pooled over the rounds, cycles/s is the median")
    parser.add_argument("--run-timeout", type=float, default=60, help="seconds of slack per run")
    parser.add_argument("--json", metavar="FILE", help="also write every run and the summary")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 1 round, short runs, a few seconds in all")
    args = parser.parse_args()
    resolve_server_arguments(args)
    if args.quick:
        args.rounds, args.seconds, args.warmup_seconds = 1, 0.3, 0.05
        args.cycles, args.warmup_cycles = 500, 50
    tests = [t.strip().lower() for t in args.tests.split(",") if t.strip()]
    unknown = [t for t in tests if t not in tests_known]
    if unknown:
        parser.error(f"unknown tests {unknown}; known: {', '.join(tests_known)}")
    if not os.path.exists(args.lock_bench):
        sys.exit(f"{args.lock_bench} does not exist: build it (ninja -C build lock_bench) or "
                 f"pass --lock-bench")

    runs: list[dict] = []
    try:
        with running_servers(args) as servers:
            print(f"# keywarden {args.keywarden} (pid {servers['keywarden'].pid}) vs redis "
                  f"{args.redis} (pid {servers['redis'].pid}); {args.contenders} contenders, "
                  f"{args.rounds} rounds", file=sys.stderr)
            for round_no in range(args.rounds):
                order = SERVERS[::-1] if round_no % 2 == 0 else SERVERS
                for test in tests:
                    for server in order:
                        port = servers[server].port
                        name = f"bench:lock:{test}:{round_no}"
                        start = time.monotonic()
                        if test == "uncontended":
                            r = run_uncontended(args, port, name)
                            r["ok"] = r["released"]
                            detail = f"{r['cycles_per_second']:,.0f} cycles/s"
                        else:
                            sleep = CONTENDED[test][1]
                            r = (run_kw_lock(args, port, name) if sleep is None
                                 else run_redis_py(args, port, name, sleep))
                            a = analyse(r, args.warmup_seconds)
                            r.update(analysis={k: v for k, v in merge([a]).items()})
                            r["_analysis"] = a
                            m = r["analysis"]
                            detail = (f"{m['handoffs']:,} hand-offs, p50 "
                                      f"{fmt('{:,.0f}', m['handoff_p50_us'])} µs, p99 "
                                      f"{fmt('{:,.0f}', m['handoff_p99_us'])} µs, "
                                      f"{m['acquisitions_per_s']:,.0f} acquisitions/s, "
                                      f"{check_text(m)}")
                        if not servers[server].alive():
                            raise RuntimeError(f"{server} died during {test}")
                        r.update(server=server, test=test, round=round_no,
                                 wall_s=round(time.monotonic() - start, 3))
                        runs.append(r)
                        print(f"#   round {round_no + 1}/{args.rounds} {server:9s} {test:15s} "
                              f"{detail}", file=sys.stderr)
    except (RuntimeError, subprocess.SubprocessError, OSError, ValueError) as e:
        print(f"\nbenchmark aborted: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nbenchmark interrupted", file=sys.stderr)
        return 130

    summary: dict = {}
    for test in tests:
        summary[test] = {}
        for server in SERVERS:
            mine = [r for r in runs if r["test"] == test and r["server"] == server]
            if test == "uncontended":
                summary[test][server] = {
                    "cycles_per_second": median([r["cycles_per_second"] for r in mine]),
                    "cycles": sum(r["cycles"] for r in mine),
                    "ok": all(r["ok"] for r in mine)}
            else:
                summary[test][server] = merge([r["_analysis"] for r in mine])
    print()
    print(f"keywarden vs redis-server {redis_version(args.redis)}: locks, {args.contenders} "
          f"contenders, {args.outside_us} µs outside the lock, {args.seconds:g} s runs, "
          f"{args.rounds} rounds, {os.cpu_count()} CPUs, "
          f"{datetime.date.today()}")
    print()
    print(table(summary, args))
    if "kw-lock" in summary:
        p99 = {s: summary["kw-lock"][s]["handoff_p99_us"] for s in SERVERS}
        verdict = ", ".join(f"{s} {fmt('{:,.0f}', p99[s])} µs "
                            + ("(met)" if p99[s] < HANDOFF_P99_AIM_US else "(NOT met)")
                            for s in SERVERS)
        print(f"\naim: keywarden::Lock hand-off p99 under {HANDOFF_P99_AIM_US:,.0f} µs: {verdict}")
    failed = [f"{t} on {s}" for t in summary for s in SERVERS if not summary[t][s]["ok"]]
    if failed:
        print("\nchecks failed: " + "; ".join(failed))
    if args.json:
        meta = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
                "command": " ".join(sys.argv), "cpus": os.cpu_count(),
                "machine": platform.platform(), "keywarden": args.keywarden,
                "keywarden_version": server_version(args.keywarden), "redis": args.redis,
                "redis_version": server_version(args.redis), "lock_bench": args.lock_bench,
                "contenders": args.contenders, "seconds": args.seconds, "rounds": args.rounds,
                "warmup_seconds": args.warmup_seconds, "outside_us": args.outside_us,
                "cycles": args.cycles}
        slim = [{k: v for k, v in r.items() if k not in ("events", "_analysis")} for r in runs]
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "summary": summary, "runs": slim}, f, indent=2)
        print(f"\nwrote {args.json}", file=sys.stderr)
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
