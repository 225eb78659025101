"""Smoke test of bench/tls_benchmark.py: its --quick mode (one round of small runs of
redis-benchmark --tls) against the server under test (KEYWARDEN_SERVER or the default build)
and the stock redis-server.

It checks that every test x pipeline row has a figure in each column and that the JSON holds
runs of both servers. No assertion on any figure's value. A run that does not finish within
TIME_LIMIT seconds (a loaded machine) is stopped and the test skipped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import REPO_ROOT, keywarden_binary, redis_binary, run_quick_benchmark

BENCH = REPO_ROOT / "bench" / "tls_benchmark.py"
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
            if line.startswith("| ") and not line.startswith(("| test", "| ---"))]
    assert sorted((r[0], r[1]) for r in rows) == [("get", "1"), ("get", "16"), ("set", "1"),
                                                  ("set", "16")], out
    for cells in rows:
        assert all(re.fullmatch(NUMBER, c) for c in cells[2:]), cells
    data = json.loads(json_path.read_text())
    assert {r["server"] for r in data["runs"]} == {"redis", "keywarden"}
    assert len(data["summary"]) == 4
