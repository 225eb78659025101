"""Smoke test of bench/lock_kill_benchmark.py: its --quick mode against the server under test
(KEYWARDEN_SERVER or the default build) and the stock redis-server.

It checks that the three modes print a row with figures and that each trial's waiter, and
nobody else, got the lock. The one loose bound on figures: a bound grant is handed over well
before a lease-only one (the lease is 300 ms; the bound one needs only the socket's close). A
run that does not finish within TIME_LIMIT seconds on a loaded machine is stopped and the test
skipped.
"""

from __future__ import annotations

import re

from conftest import REPO_ROOT, keywarden_binary, redis_binary, run_quick_benchmark

BENCH = REPO_ROOT / "bench" / "lock_kill_benchmark.py"
TIME_LIMIT = 90.0


def test_quick_lock_kill_benchmark_prints_every_mode():
    out = run_quick_benchmark([BENCH, "--quick", "--keywarden", keywarden_binary(),
                               "--redis", redis_binary()], TIME_LIMIT)
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0] not in ("mode", "---:", "---"):
            rows[cells[0]] = cells
    assert set(rows) == {"keywarden native BIND", "keywarden native lease-only",
                         "redis scripts lease-only"}, out
    for cells in rows.values():
        assert re.fullmatch(r"\d+\.\d", cells[2]) and re.fullmatch(r"\d+\.\d", cells[3]), cells
        assert cells[4] == "2 trials, waiter granted", cells
    # Lease-only waits for the lease; the bound grant does not.
    assert float(rows["keywarden native lease-only"][2]) > 100.0, out
    assert float(rows["keywarden native BIND"][2]) < float(
        rows["keywarden native lease-only"][2]), out
