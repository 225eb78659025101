"""Smoke test of bench/rdb_benchmark.py: its --quick mode against the server under test
(KEYWARDEN_SERVER or the default build) and the stock redis-server.

It checks that the harness runs end to end (load, BGSAVE, SAVE, restart from the RDB on both
servers), prints its table with a figure for both servers in the rows that must have one, that
its own check line reports the same DBSIZE on both, and that it writes its JSON. No assertion
on any figure's value: speed and memory are for the benchmark to report, not for tests to
judge. A run that does not finish within TIME_LIMIT seconds (a loaded machine) is stopped and
the test skipped rather than failed.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from conftest import REPO_ROOT, keywarden_binary, redis_binary, run_quick_benchmark

BENCH = REPO_ROOT / "bench" / "rdb_benchmark.py"
TIME_LIMIT = 60.0
NUMBER = r"[\d,]+(?:\.\d+)?"
ROWS = ["keys (DBSIZE after the load)", "BGSAVE time", "BGSAVE peak extra memory: parent+child RSS",
        "BGSAVE peak extra memory: parent+child Pss", "RDB file size", "SAVE time",
        "restart: PING answered and DBSIZE", "INFO rdb_last_load_keys_loaded"]


def test_quick_benchmark_prints_both_servers(tmp_path):
    server = keywarden_binary()
    for path in (server, redis_binary()):
        if not Path(path).exists():
            pytest.skip(f"{path} is not there")
    json_path = tmp_path / "out.json"
    out = run_quick_benchmark([BENCH, "--quick", "--keywarden", server, "--redis",
                               redis_binary(), "--json", json_path], TIME_LIMIT,
                              env=dict(os.environ, KEYWARDEN_SERVER=server))
    assert "### RDB:" in out, out
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 4 and cells[0] != "what":
            rows[cells[0]] = cells
    for label in ROWS:
        match = [c for name, c in rows.items() if name.startswith(label)]
        assert match, (label, out)
        for cell in match[0][1:3]:
            assert re.fullmatch(rf"{NUMBER}(?: (?:MB|s))?", cell), (label, match[0])
    assert re.search(r"check: DBSIZE after the last restart: .*: same;", out), out

    data = json.loads(json_path.read_text())
    assert set(data["results"]) == {"redis", "keywarden"}
    for res in data["results"].values():
        assert len(res["bgsave"]) == len(res["save"]) == len(res["restart"]) == 1
