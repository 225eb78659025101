"""Smoke test of bench/bitmap_benchmark.py: its --quick mode (a 1 MB bitmap, four 256 KB keys,
one round) against the server under test (KEYWARDEN_SERVER or the default build) and the stock
redis-server.

It checks that the harness runs end to end, that its own check held (every reply, and BITOP's
destination, equal on both servers: the script prints FAILED otherwise) and that every row has
a figure for both servers and a ratio. No assertion on any figure's value. A run that does not
finish within TIME_LIMIT seconds (a loaded machine) is stopped and the test skipped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import REPO_ROOT, keywarden_binary, redis_binary, run_quick_benchmark

BENCH = REPO_ROOT / "bench" / "bitmap_benchmark.py"
TIME_LIMIT = 60.0  # a normal run takes under 2 s
NUMBER = r"\d+\.\d\d"
COMMANDS = ["BITCOUNT", "BITCOUNT BIT range", "BITPOS 1", "BITPOS 1 BIT range", "BITOP AND",
            "BITOP OR", "BITOP XOR", "BITOP NOT"]


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
        if len(cells) == 4 and cells[0].startswith(("BIT",)):
            rows[cells[0].split(" (")[0]] = cells
    assert sorted(rows) == sorted(COMMANDS), out
    for cells in rows.values():
        for cell in cells[1:]:
            assert re.fullmatch(NUMBER, cell), (cell, cells)
    results = json.loads(json_path.read_text())["results"]
    assert len(results) == len(COMMANDS)
    assert all(r["keywarden_ms"] > 0 and r["redis_ms"] > 0 for r in results.values())
