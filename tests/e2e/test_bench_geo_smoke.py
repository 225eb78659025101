"""Smoke test of bench/geo_benchmark.py: its --quick mode against the server under test
(KEYWARDEN_SERVER or the default build) and the stock redis-server. Checks that every row has its
figures for both servers (the harness ran end to end: both loaded every member, and
redis-benchmark ran each query); no assertion on timings. Skipped when the run does not finish
within TIME_LIMIT seconds on a loaded machine.
"""

from __future__ import annotations

import re

from conftest import REPO_ROOT, keywarden_binary, redis_binary, run_quick_benchmark

BENCH = REPO_ROOT / "bench" / "geo_benchmark.py"
TIME_LIMIT = 120.0
NUMBER = r"[\d,]+(?:\.\d+)?"


def test_geo_benchmark_quick():
    out = run_quick_benchmark([BENCH, "--quick", "--keywarden", keywarden_binary(),
                               "--redis", redis_binary()], TIME_LIMIT)
    for label in ("radius 1 km", "radius 1 km, COUNT 10", "radius 10 km, COUNT 10 ANY",
                  "radius 50 km", "radius 50 km WITHDIST WITHCOORD, ASC", "box 20 × 20 km"):
        figures = rf" {NUMBER} \|" * 6
        assert re.search(re.escape(f"| GEOSEARCH {label} |") + figures, out), \
            f"row {label!r} missing or incomplete:\n{out}"
