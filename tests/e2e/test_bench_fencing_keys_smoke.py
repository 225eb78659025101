"""Smoke test of bench/fencing_keys_benchmark.py with a few thousand names, against the server
under test (KEYWARDEN_SERVER or the default build) and the stock redis-server.

It checks that both counter layouts ran on both servers, that every token was positive, and
the figure the benchmark exists for: Redisson's layout leaves exactly one counter per name,
keywarden's shared layout never more than one per name and never more than 16384. No assertion
on timings. Skipped when lock_bench was not built (LOCK_BENCH, else build/bench/lock_bench),
and when the run does not finish within TIME_LIMIT seconds (a loaded machine).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from conftest import REPO_ROOT, keywarden_binary, redis_binary, run_quick_benchmark

BENCH = REPO_ROOT / "bench" / "fencing_keys_benchmark.py"
LOCK_BENCH = (os.environ.get("LOCK_BENCH")
              or str(REPO_ROOT / "build" / "bench" / "lock_bench"))
TIME_LIMIT = 60.0
NAMES = 3000


def test_fencing_keys_benchmark_counts_both_layouts():
    server = keywarden_binary()
    if not Path(LOCK_BENCH).exists():
        pytest.skip(f"{LOCK_BENCH} is not built (ninja -C build lock_bench)")
    for path in (server, redis_binary()):
        if not Path(path).exists():
            pytest.skip(f"{path} is not there")
    out = run_quick_benchmark([BENCH, "--names", str(NAMES), "--keywarden", server,
                               "--redis", redis_binary(), "--lock-bench", LOCK_BENCH], TIME_LIMIT)
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 8 and cells[0] in ("keywarden", "redis"):
            rows[(cells[0], cells[1])] = cells
    assert set(rows) == {(s, layout) for s in ("keywarden", "redis")
                         for layout in ("per slot (keywarden)", "per name (Redisson)")}, out
    for (server_name, layout), cells in rows.items():
        assert cells[2] == f"{NAMES:,}", cells
        keys_left = int(cells[3].replace(",", ""))
        if layout.startswith("per name"):
            assert keys_left == NAMES, cells
        else:
            assert 0 < keys_left <= min(NAMES, 16384), cells
        assert re.fullmatch(r"[\d,]+", cells[5]) and cells[5] != "0", cells
        assert cells[7] == "ok", cells
