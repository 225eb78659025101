"""Smoke test of bench/lock_handoff_benchmark.py: its --quick mode against the server under test
(KEYWARDEN_SERVER or the default build) and the stock redis-server.

It checks that the three modes (keywarden native, keywarden scripts, redis scripts) each print
a row with figures and that the benchmark's own correctness checks passed (counter exact, no two
holders overlapping). No assertion on timings; a run that does not finish within TIME_LIMIT
seconds on a loaded machine is stopped and the test skipped.
"""

from __future__ import annotations

import re

from conftest import REPO_ROOT, keywarden_binary, redis_binary, run_quick_benchmark

BENCH = REPO_ROOT / "bench" / "lock_handoff_benchmark.py"
TIME_LIMIT = 90.0


def test_quick_lock_handoff_benchmark_prints_every_mode():
    out = run_quick_benchmark([BENCH, "--quick", "--keywarden", keywarden_binary(),
                               "--redis", redis_binary()], TIME_LIMIT)
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0] not in ("mode", "---"):
            rows[cells[0]] = cells
    assert set(rows) == {"keywarden native", "keywarden scripts", "redis scripts"}, out
    for mode, cells in rows.items():
        assert re.fullmatch(r"\d+", cells[1]) and re.fullmatch(r"\d+", cells[2]), cells
        match = re.fullmatch(r"(\d+) cycles, counter exact, no overlap", cells[5])
        assert match and int(match.group(1)) > 0, cells
    assert all(re.fullmatch(r"\d+ %", cells[3]) for cells in rows.values()), out
