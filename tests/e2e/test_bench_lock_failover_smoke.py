"""Smoke test of bench/lock_failover_benchmark.py: its --quick mode against the server under test
(KEYWARDEN_SERVER or the default build) and the stock redis-server and redis-sentinel.

It checks that both tables have a row per server with figures, that the failover run granted
durable locks on both through two failovers (one kill -9, one SENTINEL FAILOVER) and counted no
violation of mutual exclusion among them. No assertion on timings. Skipped when lock_bench was
not built (LOCK_BENCH, else build/bench/lock_bench), when the run does not finish within
TIME_LIMIT seconds (a loaded machine: then it is stopped), and when the driver gave up waiting
for Sentinel or a restarted node to converge (also a loaded machine; never a violation).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from conftest import REPO_ROOT, keywarden_binary, redis_binary, run_quick_benchmark

BENCH = REPO_ROOT / "bench" / "lock_failover_benchmark.py"
LOCK_BENCH = (os.environ.get("LOCK_BENCH")
              or str(REPO_ROOT / "build" / "bench" / "lock_bench"))
TIME_LIMIT = 240.0


def rows_of(out: str) -> dict[str, list[list[str]]]:
    """Table rows by their first cell (the latency table's and the failover table's)."""
    rows: dict[str, list[list[str]]] = {}
    for line in out.splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] in ("server", "---"):
            continue
        rows.setdefault(cells[0], []).append(cells)
    return rows


def test_quick_lock_failover_benchmark_counts_no_violation():
    if not Path(LOCK_BENCH).exists():
        pytest.skip(f"{LOCK_BENCH} is not built (ninja -C build lock_bench)")
    out = run_quick_benchmark([BENCH, "--quick", "--keywarden", keywarden_binary(),
                               "--redis", redis_binary(), "--lock-bench", LOCK_BENCH],
                              TIME_LIMIT,
                              # Sentinel or a restarted node too slow to converge (the harness's
                              # wait_until); a violation exits 2 with the table, never this.
                              skip_if_stderr_has="RuntimeError: timed out waiting for")
    rows = rows_of(out)
    for server in ("keywarden", "redis"):
        latency, failover = rows[server]
        assert len(latency) == 7 and all(re.fullmatch(r"\d+", c) for c in latency[1:5]), latency
        assert len(failover) == 8, failover
        assert failover[1] == "1 + 1", failover
        assert int(failover[2]) > 0, failover  # durable grants
        assert failover[3] == "0", failover  # violations
        assert failover[7] == "ok", failover
    assert "keywarden / redis" in rows, out
