"""Smoke test of bench/aof_benchmark.py: its --quick mode against the server under test
(KEYWARDEN_SERVER or the default build) and the stock redis-server. Checks that every row has a
figure for both servers (the harness ran end to end, and both loaded the generated AOF with all
its keys); no assertion on timings. Skipped when the run does not finish within TIME_LIMIT
seconds on a loaded machine.
"""

from __future__ import annotations

import re

from conftest import REPO_ROOT, keywarden_binary, redis_binary, run_quick_benchmark

BENCH = REPO_ROOT / "bench" / "aof_benchmark.py"
TIME_LIMIT = 120.0
NUMBER = r"[\d,]+(?:\.\d+)?"


def test_aof_benchmark_quick():
    out = run_quick_benchmark([BENCH, "--quick", "--keywarden", keywarden_binary(),
                               "--redis", redis_binary()], TIME_LIMIT)
    for label in ("SET, appendfsync everysec, -P 1", "SET, appendfsync everysec, -P 16",
                  "SET, appendfsync always, -P 1", "SET, appendfsync always, -P 16",
                  "restart from AOF, 20,000 keys"):
        assert re.search(re.escape(label) + rf".*\| {NUMBER} \| {NUMBER} \| {NUMBER} \|", out), \
            f"row {label!r} missing or incomplete:\n{out}"
