"""Smoke test of bench/memory_expiry_benchmark.py: its --quick mode against the server under
test (KEYWARDEN_SERVER or the default build) and the stock redis-server.

It checks that the harness runs end to end, prints one table per measurement (memory per key,
mass expiry, latency during mass expiry with the driver idle, sparse expiry, `expired` event
lag, allkeys-lru eviction, DEL vs UNLINK) with a figure for both servers in the rows that must
have one, writes its JSON, and (when matplotlib is installed) the mass-expiry plot. No
assertion on any figure's value: speed and memory are for the benchmark to report, not for
tests to judge. A run that does not finish within TIME_LIMIT
seconds (a loaded machine) is stopped and the test skipped rather than failed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from pathlib import Path

import pytest

from conftest import REPO_ROOT, keywarden_binary, redis_binary, run_quick_benchmark

BENCH = REPO_ROOT / "bench" / "memory_expiry_benchmark.py"
TIME_LIMIT = 120.0
NUMBER = r"[\d,]+(?:\.\d+)?"
SECTIONS = {
    "### Memory per key": ["RSS growth per key, no TTL", "RSS growth per key, EX 3600",
                           "used_memory growth per key, no TTL"],
    "### Mass expiry": ["GET p50 while expiring", "GET p99 while expiring",
                        "GET max while expiring"],
    "### Latency while": ["GET p99 while expiring", "GET max while expiring",
                          "keys held 0.3 s after the last deadline"],
    "### Sparse expiry": ["due keys held 0.1 s after the last deadline"],
    "### `expired` event lag": ["mass: events received", "sparse: events received"],
    "### Eviction, allkeys-lru": ["hit ratio", "keys held (DBSIZE)", "evicted_keys"],
    "### DEL vs UNLINK": ["DEL: command latency", "UNLINK: command latency",
                          "DEL: longest PING during it", "UNLINK: longest PING during it"],
}


def _figure(cell: str) -> bool:
    """A number with an optional unit (B, MB, ms, s, %) or an events count a/b."""
    return bool(re.fullmatch(rf"{NUMBER}(?: (?:B|MB|ms|s|%))?|{NUMBER}/{NUMBER}", cell))


def test_quick_benchmark_prints_both_servers(tmp_path):
    server = keywarden_binary()
    for path in (server, redis_binary()):
        if not Path(path).exists():
            pytest.skip(f"{path} is not there")
    json_path, plot_path = tmp_path / "out.json", tmp_path / "mass.png"
    argv = [BENCH, "--quick", "--keywarden", server, "--redis", redis_binary(), "--json",
            json_path, "--plot", plot_path]
    out = run_quick_benchmark(argv, TIME_LIMIT, env=dict(os.environ, KEYWARDEN_SERVER=server))
    rows = {}
    section = None
    for line in out.splitlines():
        if line.startswith("### "):
            section = next((s for s in SECTIONS if line.startswith(s)), line)
            rows[section] = {}
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if section and line.startswith("|") and len(cells) == 4 and cells[0] != "what":
            rows[section][cells[0]] = cells
    assert set(SECTIONS) <= set(rows), out
    for section, labels in SECTIONS.items():
        for label in labels:
            match = [c for name, c in rows[section].items() if name.startswith(label)]
            assert match, (section, label, out)
            _, redis_cell, keywarden_cell, _ = match[0]
            assert _figure(redis_cell) and _figure(keywarden_cell), (section, match[0])
    # reclaim and "all gone" cells are a time or an honest "not within N s"
    for cells in rows["### Mass expiry"].values():
        if cells[0].startswith("reclaim"):
            for cell in cells[1:3]:
                assert re.fullmatch(rf"{NUMBER} s|not within .*", cell), cells

    data = json.loads(json_path.read_text())
    for section in ("memory", "mass", "sparse", "lru", "lazyfree"):
        assert set(data["results"][section]) >= {"redis", "keywarden"}, section
    assert set(data["results"]["events"]) == {"mass", "sparse"}
    if importlib.util.find_spec("matplotlib") is not None:
        assert plot_path.exists() and plot_path.stat().st_size > 0
