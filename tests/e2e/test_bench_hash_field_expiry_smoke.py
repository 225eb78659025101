"""Smoke test of bench/hash_field_expiry_benchmark.py: its --quick mode against the server under
test (KEYWARDEN_SERVER or the default build) and the stock redis-server.

It checks that both tables come out with a figure in every cell that must have one (the
redis-server column of the volatile-field rows is "n/a": 7.0 has no field TTLs), that every
field and key was reclaimed, and the JSON. No assertion on any figure's value. A run that does
not finish within TIME_LIMIT seconds (a loaded machine) is stopped and the test skipped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import REPO_ROOT, keywarden_binary, redis_binary, run_quick_benchmark

BENCH = REPO_ROOT / "bench" / "hash_field_expiry_benchmark.py"
TIME_LIMIT = 120.0  # a normal --quick run takes 10-20 s
NUMBER = r"-?[\d,]+(?:\.\d+)?"


def test_quick_run(tmp_path):
    for path in (keywarden_binary(), redis_binary()):
        if not Path(path).exists():
            pytest.skip(f"{path} is not there")
    json_path = tmp_path / "out.json"
    out = run_quick_benchmark([BENCH, "--quick", "--keywarden", keywarden_binary(),
                               "--redis", redis_binary(), "--json", json_path], TIME_LIMIT)
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in out.splitlines()
            if line.startswith("| ") and not line.startswith(("| what", "| ---"))]
    memory = [r for r in rows if len(r) == 3]
    reclaim = [r for r in rows if len(r) == 5]
    assert len(memory) == 6 and len(reclaim) == 3, out
    for label, theirs, ours in memory:
        assert re.fullmatch(rf"{NUMBER} B", ours), (label, ours)
        if "volatile" in label:
            assert theirs.startswith("n/a"), (label, theirs)
        else:
            assert re.fullmatch(rf"{NUMBER} B", theirs), (label, theirs)
    for cells in reclaim:
        assert re.fullmatch(rf"{NUMBER} s", cells[1]), cells  # reclaimed, not timed out
        assert all(re.fullmatch(rf"{NUMBER} ms", c) for c in cells[2:]), cells
    data = json.loads(json_path.read_text())
    results = data["results"]
    assert set(results["memory"]) == {"keywarden", "redis"}
    assert results["memory"]["keywarden"]["listpack"]["volatile_encoding"] == "listpackex"
    assert results["memory"]["keywarden"]["hashtable"]["volatile_encoding"] == "hashtable"
    for run in results["reclaim"].values():
        assert run["errors"] == 0 and run["reclaim_s"] is not None, run
