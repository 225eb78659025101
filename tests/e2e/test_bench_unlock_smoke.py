"""Smoke test of bench/unlock_benchmark.py: its --quick mode against the server under test and
the stock redis-server. Checks that every row has figures and that every release deleted its
key (the benchmark's own check). No assertion on timings; a run that does not finish within
TIME_LIMIT seconds (a loaded machine) is stopped and the test skipped rather than failed."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from conftest import REPO_ROOT, keywarden_binary, redis_binary, run_quick_benchmark

BENCH = REPO_ROOT / "bench" / "unlock_benchmark.py"
TIME_LIMIT = 30.0
NUMBER = r"[\d,]+(?:\.\d+)?"


def test_quick_benchmark_prints_every_unlock_path():
    server = keywarden_binary()
    for path in (server, redis_binary()):
        if not Path(path).exists():
            pytest.skip(f"{path} is not there")
    out = run_quick_benchmark([BENCH, "--quick", "--keywarden", server], TIME_LIMIT,
                              env=dict(os.environ, KEYWARDEN_SERVER=server))
    rows = []
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[0] in ("keywarden", "redis"):
            rows.append(cells)
    assert [(r[0], r[1].split()[0]) for r in rows] == [
        ("keywarden", "DELEX"), ("keywarden", "EVALSHA"), ("redis", "EVALSHA")], out
    for cells in rows:
        for cell in cells[2:6]:
            assert re.fullmatch(NUMBER, cell), (cell, cells)
        assert cells[6] == "all released", cells
