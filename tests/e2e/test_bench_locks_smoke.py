"""Smoke test of bench/lock_benchmark.py: its --quick mode against the server under test
(KEYWARDEN_SERVER or the default build) and the stock redis-server.

It checks that the harness runs end to end, that every row of the table (uncontended
keywarden::Lock; hand-offs with keywarden::Lock and with redis-py's Lock at both polling sleeps)
has a figure for both servers, and that the benchmark's own correctness counters passed on both:
the counter incremented under the lock ends exact, no two holders overlapped, the lock was
released at the end. No assertion on timings. Skipped when lock_bench was not built
(LOCK_BENCH, else build/bench/lock_bench), and when the run does not finish within TIME_LIMIT
seconds (a loaded machine): then it is stopped and the test skipped rather than failed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from conftest import REPO_ROOT, keywarden_binary, redis_binary, run_quick_benchmark

BENCH = REPO_ROOT / "bench" / "lock_benchmark.py"
LOCK_BENCH = (os.environ.get("LOCK_BENCH")
              or str(REPO_ROOT / "build" / "bench" / "lock_bench"))
TIME_LIMIT = 60.0
NUMBER = r"[\d,]+(?:\.\d+)?"
CONTENDED_LOCKS = ("keywarden::Lock, 8 threads", "redis-py Lock, sleep 0.1 s, 8 processes",
                   "redis-py Lock, sleep 0.001 s, 8 processes")
CONTENDED_ROWS = ("hand-off p50 µs", "hand-off p99 µs", "hand-off max µs", "hand-offs/s",
                  "acquisitions/s", "lock() wait p99 µs")
CHECK = r"([\d,]+) cycles, counter exact, no overlap"


def test_quick_lock_benchmark_prints_both_servers():
    server = keywarden_binary()
    if not Path(LOCK_BENCH).exists():
        pytest.skip(f"{LOCK_BENCH} is not built (ninja -C build lock_bench)")
    for path in (server, redis_binary()):
        if not Path(path).exists():
            pytest.skip(f"{path} is not there")
    out = run_quick_benchmark([BENCH, "--quick", "--keywarden", server, "--redis", redis_binary(),
                               "--lock-bench", LOCK_BENCH], TIME_LIMIT)
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[0] not in ("lock", "---"):
            rows[(cells[0], cells[1])] = cells
    expected = {("keywarden::Lock, 1 thread", "uncontended lock+unlock /s")}
    expected |= {(lock, row) for lock in CONTENDED_LOCKS for row in CONTENDED_ROWS}
    assert set(rows) == expected, out

    for (lock, row), cells in rows.items():
        redis_figure, keywarden_figure, ratio = cells[2:5]
        assert re.fullmatch(NUMBER, redis_figure), cells
        assert re.fullmatch(NUMBER, keywarden_figure), cells
        assert re.fullmatch(r"\d+\.\d\d", ratio), cells
        if row.endswith("/s"):
            assert float(redis_figure.replace(",", "")) > 0, cells
            assert float(keywarden_figure.replace(",", "")) > 0, cells

    for (lock, row), cells in rows.items():
        for check in cells[5:7]:
            if row.startswith("uncontended"):
                assert re.fullmatch(r"[\d,]+ cycles, released", check), cells
            else:
                match = re.fullmatch(CHECK, check)
                assert match and int(match.group(1).replace(",", "")) > 0, cells
    assert "checks failed" not in out
