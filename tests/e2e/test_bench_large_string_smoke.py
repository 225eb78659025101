"""Smoke test of bench/large_string_benchmark.py: its --quick mode (a 1 MB string, one round)
against the server under test (KEYWARDEN_SERVER or the default build) and the stock
redis-server.

It checks that the harness runs end to end, that its own check held (the replies, the final
length and the digest of the value equal on both servers: the script prints FAILED otherwise)
and that every row has wall and CPU figures for both servers. No assertion on any figure's
value (a CPU ratio may read n/a when a call was too short to register). A run that does not
finish within TIME_LIMIT seconds (a loaded machine) is stopped and the test skipped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import REPO_ROOT, keywarden_binary, redis_binary, run_quick_benchmark

BENCH = REPO_ROOT / "bench" / "large_string_benchmark.py"
TIME_LIMIT = 120.0  # a normal run takes a few seconds
NUMBER = r"\d+\.\d\d"
ROWS = ["GET", "SETRANGE 16 B at a random offset", "SETRANGE 16 B at the end, growing",
        "SETRANGE 16 B past the end of an exact-size copy", "SET", "MULTI, SET"]


def test_quick_benchmark_prints_both_servers(tmp_path):
    for path in (keywarden_binary(), redis_binary()):
        if not Path(path).exists():
            pytest.skip(f"{path} is not there")
    json_path = tmp_path / "out.json"
    out = run_quick_benchmark([BENCH, "--quick", "--keywarden", keywarden_binary(),
                               "--redis", redis_binary(), "--json", json_path], TIME_LIMIT)
    assert "FAILED" not in out, out
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[0].startswith(("GET", "SET", "MULTI")):
            rows[cells[0].split(" (")[0]] = cells
    assert sorted(rows) == sorted(ROWS), out
    for cells in rows.values():
        for cell in (cells[1], cells[2], cells[4], cells[5]):
            assert re.fullmatch(NUMBER, cell), (cell, cells)
    results = json.loads(json_path.read_text())["results"]
    assert len(results) == len(ROWS)
    assert all(r["keywarden_ms"] > 0 and r["redis_ms"] > 0 for r in results.values())
