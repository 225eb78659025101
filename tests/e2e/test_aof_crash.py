"""Crash safety under appendfsync always: several clients write (SET, INCR, HSET, RPUSH,
EXPIRE, a MULTI/EXEC block) and record every acknowledged write; the server is killed with
SIGKILL at a random moment, restarted from its AOF, and checked: every acknowledged write is
there, and nothing that was never sent is (a write in flight at the kill may or may not be).
In about half the rounds a BGREWRITEAOF starts shortly before the kill, so the manifest
switch and the base install are killed at random points too. Repeated for several rounds; the
counts (writes acknowledged, kills, writes lost, rewrites) are printed.

CI runs a few rounds. For many: KW_AOF_CRASH_ROUNDS=200 pytest -s tests/e2e/test_aof_crash.py,
or /usr/bin/python3 tests/e2e/test_aof_crash.py --rounds 200.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from conftest import RawConnection, start_server  # noqa: E402

CLIENTS = 4


class Writer:
    """One client's operation stream; op n is one of six kinds, in a fixed cycle, on keys of
    its own, so the expected state follows from which ops were acknowledged."""

    def __init__(self, index: int):
        self.prefix = f"c{index}:"
        self.next_op = 0
        self.acked: list[int] = []      # op numbers acknowledged
        self.in_flight: int | None = None
        self.counter = 0                # INCR value last acknowledged
        self.list_elements: list[str] = []  # what the list holds: acknowledged pushes
        self.error: Exception | None = None

    def command(self, n: int) -> list[list[str]]:
        p = self.prefix
        kind = n % 6
        if kind == 0:
            return [["SET", f"{p}s:{n}", f"value-{n}"]]
        if kind == 1:
            return [["INCR", f"{p}counter"]]
        if kind == 2:
            return [["HSET", f"{p}hash", f"f{n}", str(n)]]
        if kind == 3:
            return [["RPUSH", f"{p}list", str(n)]]
        if kind == 4:  # EXPIRE on the SET of this cycle
            return [["EXPIRE", f"{p}s:{n - 4}", "100000"]]
        return [["MULTI"], ["SET", f"{p}m:{n}", "x"], ["INCR", f"{p}mcount"], ["EXEC"]]

    def run(self, port: int, stop: threading.Event) -> None:
        try:
            conn = RawConnection("127.0.0.1", port, timeout=10)
        except OSError:
            return
        try:
            while not stop.is_set():
                n = self.next_op
                self.in_flight = n
                replies = [conn.execute(*args) for args in self.command(n)]
                last = replies[-1]
                if isinstance(last, Exception) or (isinstance(last, bytes) and
                                                   last.startswith(b"ERR")):
                    raise AssertionError(f"op {n}: {replies}")
                if n % 6 == 1:
                    self.counter = last
                if n % 6 == 3:
                    self.list_elements.append(str(n))
                self.acked.append(n)
                self.in_flight = None
                self.next_op += 1
        except AssertionError as e:
            self.error = e
        except Exception:
            pass  # the kill
        finally:
            try:
                conn.close()
            except Exception:
                pass

    def verify(self, conn) -> int:
        """Returns how many acknowledged writes are missing; asserts nothing unsent exists."""
        lost = 0
        p = self.prefix
        acked = set(self.acked)
        attempted = self.next_op + (1 if self.in_flight is not None else 0)
        for n in self.acked:
            kind = n % 6
            if kind == 0:
                if conn.execute("GET", f"{p}s:{n}") != f"value-{n}".encode():
                    lost += 1
            elif kind == 2:
                if conn.execute("HGET", f"{p}hash", f"f{n}") != str(n).encode():
                    lost += 1
            elif kind == 4 and (n - 4) in acked:
                if conn.execute("TTL", f"{p}s:{n - 4}") <= 0:
                    lost += 1
            elif kind == 5:
                if conn.execute("GET", f"{p}m:{n}") != b"x":
                    lost += 1
        in_flight_kind = self.in_flight % 6 if self.in_flight is not None else None
        counter = int(conn.execute("GET", f"{p}counter") or 0)
        if counter < self.counter:
            lost += 1
        assert counter <= self.counter + (1 if in_flight_kind == 1 else 0), \
            f"{p}counter {counter} counts an INCR never sent"
        pushed = [e.decode() for e in conn.execute("LRANGE", f"{p}list", "0", "-1")]
        if pushed[:len(self.list_elements)] != self.list_elements:
            lost += 1
        extra = pushed[len(self.list_elements):]
        assert extra in ([], [str(self.in_flight)] if in_flight_kind == 3 else []), \
            f"{p}list has elements never pushed: {extra}"
        # Nothing never written: every key of this client was the target of a sent op.
        cursor = b"0"
        while True:
            cursor, keys = conn.execute("SCAN", cursor, "MATCH", f"{p}*", "COUNT", "1000")
            for key in keys:
                name = key.decode()[len(p):]
                if name.startswith("s:") or name.startswith("m:"):
                    n = int(name[2:])
                    assert n < attempted, f"key {key!r} was never written"
            if cursor == b"0":
                break
        if len(acked) != len(self.acked):
            raise AssertionError("duplicate op numbers")
        return lost


def run_rounds(binary: str | None, rounds: int, seed: int | None = None) -> dict[str, int]:
    rng = random.Random(seed)
    server = start_server(binary, [("appendonly", "yes"), ("appendfsync", "always")])
    writers = [Writer(i) for i in range(CLIENTS)]
    kills = 0
    lost = 0
    rewrites = 0
    try:
        for _ in range(rounds):
            stop = threading.Event()
            threads = [threading.Thread(target=w.run, args=(server.port, stop)) for w in writers]
            for t in threads:
                t.start()
            pause = rng.uniform(0.05, 0.6)
            if rng.random() < 0.5:
                # A rewrite in flight at the kill, or just finished: the manifest switch and
                # the base install must be crash-safe too.
                time.sleep(pause * rng.random())
                try:
                    with RawConnection("127.0.0.1", server.port, timeout=10) as admin:
                        if admin.execute("BGREWRITEAOF").startswith(b"Background"):
                            rewrites += 1
                except Exception:
                    pass
            time.sleep(pause)
            os.kill(server.pid, signal.SIGKILL)
            kills += 1
            stop.set()
            for t in threads:
                t.join(30)
            server.proc.wait(30)
            server.start()
            with RawConnection("127.0.0.1", server.port, timeout=30) as conn:
                # start() returns at the first reply, which may be -LOADING.
                deadline = time.monotonic() + 120
                while (b"loading:1" in conn.execute("INFO", "persistence") and
                       time.monotonic() < deadline):
                    time.sleep(0.02)
                for w in writers:
                    assert w.error is None, w.error
                    lost += w.verify(conn)
                    # A write in flight at the kill is settled now: it is there or not, and
                    # the next round starts from what the server holds.
                    if w.in_flight is not None:
                        w.next_op += 1
                        w.in_flight = None
                        n = w.next_op - 1
                        if n % 6 == 1:
                            w.counter = int(conn.execute("GET", f"{w.prefix}counter") or 0)
                        if n % 6 == 3:
                            w.list_elements = [e.decode() for e in conn.execute(
                                "LRANGE", f"{w.prefix}list", "0", "-1")]
                        if n % 6 in (0, 2, 5):
                            pass  # may or may not be present; never asserted either way
    finally:
        server.cleanup()
    acked = sum(len(w.acked) for w in writers)
    return {"acknowledged": acked, "kills": kills, "lost": lost, "rewrites": rewrites}


def test_no_acknowledged_write_lost():
    rounds = int(os.environ.get("KW_AOF_CRASH_ROUNDS", "4"))
    counts = run_rounds(None, rounds)
    print(f"\nAOF crash test: writes acknowledged {counts['acknowledged']}, "
          f"kills {counts['kills']}, writes lost {counts['lost']}, "
          f"rewrites started {counts['rewrites']}")
    assert counts["kills"] == rounds
    assert counts["acknowledged"] > 0
    assert counts["lost"] == 0


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--long", action="store_true", help="200 rounds")
    parser.add_argument("--binary", default=None, help="server binary (default: this build's)")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    result = run_rounds(args.binary, 200 if args.long else args.rounds, args.seed)
    print(f"writes acknowledged {result['acknowledged']}, kills {result['kills']}, "
          f"writes lost {result['lost']}, rewrites started {result['rewrites']}")
    sys.exit(1 if result["lost"] else 0)
