"""Smoke test of bench/stream_benchmark.py: its --quick mode against the server under test
(KEYWARDEN_SERVER or the default build) and the stock redis-server.

It checks that the servers held the same stream before the runs (the driver's own check, which
also makes it exit non-zero) and that every test and memory row has a figure in each column.
No assertion on any figure's value. A run that does not finish within TIME_LIMIT seconds (a
loaded machine) is stopped and the test skipped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import REPO_ROOT, keywarden_binary, redis_binary, run_quick_benchmark

BENCH = REPO_ROOT / "bench" / "stream_benchmark.py"
TIME_LIMIT = 180.0  # a normal --quick run takes 5-15 s
NUMBER = r"[\d,]+(?:\.\d+)?"
TESTS = ["xadd P1", "xadd P16", "xreadgroup+xack"]


def test_quick_run(tmp_path):
    for path in (keywarden_binary(), redis_binary()):
        if not Path(path).exists():
            pytest.skip(f"{path} is not there")
    json_path = tmp_path / "out.json"
    out = run_quick_benchmark([BENCH, "--quick", "--keywarden", keywarden_binary(),
                               "--redis", redis_binary(), "--json", json_path], TIME_LIMIT)
    assert "checks: same stream on both servers before the runs: yes" in out, out
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in out.splitlines()
            if line.startswith("| ") and not line.startswith(("| test", "| ---", "| memory"))]
    assert {r[0] for r in rows} >= set(TESTS), out
    for cells in rows:
        assert all(re.fullmatch(NUMBER, c) for c in cells[1:]), cells
    data = json.loads(json_path.read_text())
    assert data["same"] is True
    assert {r["server"] for r in data["runs"]} == {"redis", "keywarden"}
    assert set(data["memory"]) == {"redis", "keywarden"}
