"""Smoke test of bench/replication_benchmark.py: its --quick mode (10k keys, one round, 1 s
windows) against the server under test (KEYWARDEN_SERVER or the default build) and the stock
redis-server, run once for the module.

It checks that every table has a figure in each system's column, that the checks line of each
part holds (one full sync per REPLICAOF, a partial resync after the break, equal digests) and
that no part failed. No assertion on any figure's value. The redis side and the keywarden side
are separate tests: while keywarden has no replication the benchmark says so in its header and
prints n/a in keywarden's column, and the keywarden test is skipped. A run that does not finish
within TIME_LIMIT seconds (a loaded machine) is stopped and both tests skipped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import REPO_ROOT, keywarden_binary, redis_binary, run_quick_benchmark

BENCH = REPO_ROOT / "bench" / "replication_benchmark.py"
TIME_LIMIT = 120.0  # a normal run takes 5-15 s; a keywarden whose syncs hang, up to ~75 s
NUMBER = r"[\d,]+(?:\.\d+)?"
TABLES = ["### Full sync, 10,000 keys, disk", "### Full sync, 10,000 keys, diskless",
          "### Partial resync after a 1 s break", "### Write throughput with 0, 1 and 2 replicas",
          "### Replication lag under load"]
NOT_AVAILABLE = "replication not available"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    for path in (keywarden_binary(), redis_binary()):
        if not Path(path).exists():
            pytest.skip(f"{path} is not there")
    json_path = tmp_path_factory.mktemp("replication-bench") / "out.json"
    out = run_quick_benchmark([BENCH, "--quick", "--keywarden", keywarden_binary(),
                               "--redis", redis_binary(), "--json", json_path], TIME_LIMIT)
    return out, json.loads(json_path.read_text())


def tables(out: str) -> dict[str, list[list[str]]]:
    """Each '### ' title with its table's body rows (cells stripped)."""
    found, title = {}, None
    for line in out.splitlines():
        if line.startswith("### "):
            title = line
            found[title] = []
        elif title and line.startswith("| ") and not line.startswith(("| measure", "| ---")):
            found[title].append([c.strip() for c in line.strip().strip("|").split("|")])
    return found


def check_side(out: str, data: dict, name: str, column: int) -> None:
    assert f"FAILED: {name}" not in out, out
    found = tables(out)
    for prefix in TABLES:
        rows = [rows for title, rows in found.items() if title.startswith(prefix)]
        assert rows and rows[0], (prefix, out)
        for cells in rows[0]:
            assert re.fullmatch(NUMBER, cells[column]), (name, cells)
    checks = [line for line in out.splitlines() if line.startswith("checks:")]
    assert len(checks) == 3, out
    for line in checks:
        for verdict in re.findall(rf"{name} (\d+)/(\d+)", line):
            assert verdict[0] == verdict[1] != "0", (name, line)
        assert re.search(rf"{name} \d+/\d+", line), (name, line)
    psync = data["results"]["psync"]["runs"][name]
    assert psync and all(r["partial"] and r["digest_same"] for r in psync), psync


def test_redis_side(run):
    out, data = run
    assert re.search(r"^machine: \d+ CPUs", out, re.M), out
    check_side(out, data, "redis", 2)


def test_keywarden_side(run):
    out, data = run
    assert NOT_AVAILABLE not in out, out
    check_side(out, data, "keywarden", 1)
