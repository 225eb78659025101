"""Smoke test of bench/digest_compare.py with a small dataset: both servers load the same mixed
keys and report the same DEBUG DIGEST (the benchmark's own run uses a million keys)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from conftest import REPO_ROOT, keywarden_binary, redis_binary, run_quick_benchmark

BENCH = REPO_ROOT / "bench" / "digest_compare.py"
TIME_LIMIT = 120.0


def test_small_mixed_dataset_gives_equal_digests():
    server = keywarden_binary()
    for path in (server, redis_binary()):
        if not Path(path).exists():
            pytest.skip(f"{path} is not there")
    out = run_quick_benchmark([BENCH, "--keys", "30000", "--keywarden", server, "--redis",
                               redis_binary()], TIME_LIMIT,
                              env=dict(os.environ, KEYWARDEN_SERVER=server))
    digests = re.findall(r"DEBUG DIGEST ([0-9a-f]{40})", out)
    assert len(digests) == 2 and digests[0] == digests[1], out
    assert "digests EQUAL" in out, out
