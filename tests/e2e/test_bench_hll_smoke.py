"""Smoke test of bench/hll_benchmark.py: its --quick mode (one round of small runs) against the
server under test (KEYWARDEN_SERVER or the default build) and the stock redis-server.

It checks that the servers held the same HLLs before the runs (the driver's own check, which
also makes it exit non-zero) and that every test has a figure in each column. No assertion on
any figure's value. A run that does not finish within TIME_LIMIT seconds (a loaded machine) is
stopped and the test skipped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import REPO_ROOT, keywarden_binary, redis_binary, run_quick_benchmark

BENCH = REPO_ROOT / "bench" / "hll_benchmark.py"
TIME_LIMIT = 120.0  # a normal --quick run takes 10-20 s
NUMBER = r"[\d,]+(?:\.\d+)?"
TESTS = ["pfadd-sparse", "pfadd-dense", "pfcount-1", "pfcount-3", "pfmerge"]


def test_quick_run(tmp_path):
    for path in (keywarden_binary(), redis_binary()):
        if not Path(path).exists():
            pytest.skip(f"{path} is not there")
    json_path = tmp_path / "out.json"
    out = run_quick_benchmark([BENCH, "--quick", "--keywarden", keywarden_binary(),
                               "--redis", redis_binary(), "--json", json_path], TIME_LIMIT)
    assert "checks: same HLLs before the runs: yes" in out, out
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in out.splitlines()
            if line.startswith("| ") and not line.startswith(("| test", "| ---"))]
    assert sorted({r[0] for r in rows}) == sorted(TESTS), out
    for cells in rows:
        assert all(re.fullmatch(NUMBER, c) for c in cells[1:]), cells
    data = json.loads(json_path.read_text())
    assert data["same"] is True
    assert {r["server"] for r in data["runs"]} == {"redis", "keywarden"}
