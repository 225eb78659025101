"""Smoke test of bench/tracking_benchmark.py: its --quick mode against the server under test
(KEYWARDEN_SERVER or the default build) and the stock redis-server.

The driver itself checks that every reader received exactly one push per key it read (it
counts bytes and fails on a surplus or a time-out); here every measure must have a figure in
each column. No assertion on any figure's value. A run that does not finish within TIME_LIMIT
seconds (a loaded machine) is stopped and the test skipped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import REPO_ROOT, keywarden_binary, redis_binary, run_quick_benchmark

BENCH = REPO_ROOT / "bench" / "tracking_benchmark.py"
TIME_LIMIT = 120.0  # a normal --quick run takes a few seconds
NUMBER = r"[\d,]+(?:\.\d+)?"


def test_quick_run(tmp_path):
    for path in (keywarden_binary(), redis_binary()):
        if not Path(path).exists():
            pytest.skip(f"{path} is not there")
    json_path = tmp_path / "out.json"
    out = run_quick_benchmark([BENCH, "--quick", "--keywarden", keywarden_binary(),
                               "--redis", redis_binary(), "--json", json_path], TIME_LIMIT)
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in out.splitlines()
            if line.startswith("| ") and not line.startswith(("| measure", "| ---"))]
    assert len(rows) == 4, out
    for cells in rows:
        assert all(re.fullmatch(NUMBER, c) for c in cells[1:]), cells
    data = json.loads(json_path.read_text())
    assert {r["server"] for r in data["runs"]} == {"redis", "keywarden"}
