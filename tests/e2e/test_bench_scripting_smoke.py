"""Smoke test of bench/scripting_pubsub_benchmark.py: its --quick mode against the server under
test (KEYWARDEN_SERVER or the default build) and the stock redis-server.

It checks that the harness runs end to end and prints a figure for both servers in every row
(EVALSHA of the lock script, PUBLISH to 1 and to 100 subscribers, pipelines 1 and 16), and that
its own correctness checks passed (every lock call held, every message delivered to every
subscriber). No assertion on timings. A run that does not finish within TIME_LIMIT seconds (a
loaded machine) is stopped and the test skipped rather than failed.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from conftest import REPO_ROOT, keywarden_binary, redis_binary, run_quick_benchmark

BENCH = REPO_ROOT / "bench" / "scripting_pubsub_benchmark.py"
TIME_LIMIT = 20.0
NUMBER = r"[\d,]+(?:\.\d+)?"


def test_quick_benchmark_prints_both_servers():
    server = keywarden_binary()
    for path in (server, redis_binary()):
        if not Path(path).exists():
            pytest.skip(f"{path} is not there")
    if not shutil.which("redis-benchmark"):
        pytest.skip("redis-benchmark (redis-tools) is not installed")
    out = run_quick_benchmark([BENCH, "--quick", "--keywarden", server], TIME_LIMIT,
                              env=dict(os.environ, KEYWARDEN_SERVER=server))
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 11 and cells[0] in ("EVALSHA", "PUBLISH-1", "PUBLISH-100"):
            rows[(cells[0], cells[1])] = cells
    assert set(rows) == {(t, p) for t in ("EVALSHA", "PUBLISH-1", "PUBLISH-100")
                         for p in ("1", "16")}, out
    for (test, _), cells in rows.items():
        # redis req/s, keywarden req/s, ratio, redis CPU s, keywarden CPU s: numbers
        for cell in cells[3:8]:
            assert re.fullmatch(NUMBER, cell), (cell, cells)
        assert float(cells[3].replace(",", "")) > 0 and float(cells[4].replace(",", "")) > 0
        if test == "EVALSHA":
            assert cells[9].endswith("calls held") and cells[10].endswith("calls held"), cells
            assert "NOT" not in cells[9] + cells[10], cells
        else:
            for check in cells[9:11]:
                delivered, expected = re.fullmatch(r"([\d,]+)/([\d,]+) delivered", check).groups()
                assert delivered == expected, cells
