"""`redis-cli --bigkeys` and `--memkeys` over a keywarden holding all four collection types and
strings: both must run clean and report every type with the sizes we put in."""

from __future__ import annotations

import shutil
import subprocess

import pytest

REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"


def fill(conn) -> None:
    for i in range(40):
        conn.execute("SET", f"s:{i}", "v" * (i + 1))
        conn.execute("RPUSH", f"l:{i % 4}", f"a{i}", f"b{i}")
        conn.execute("SADD", f"set:{i % 5}", f"m{i}")
        conn.execute("ZADD", f"z:{i % 2}", i, f"m{i}")
        conn.execute("HSET", f"h:{i % 8}", f"f{i}", f"v{i}")


@pytest.mark.parametrize("mode", ["--bigkeys", "--memkeys"])
def test_redis_cli_key_reports_run_clean(keywarden, mode):
    with keywarden.raw() as conn:
        fill(conn)
    out = subprocess.run([REDIS_CLI, "-h", keywarden.host, "-p", str(keywarden.port), mode],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "Sampled 59 keys in the keyspace!" in text, text
    unit = "bytes" if mode == "--memkeys" else None
    for line in ("40 strings with", "4 lists with", "8 hashs with", "5 sets with",
                 "2 zsets with"):
        assert line in text, text
    if unit is None:
        for line in ("4 lists with 80 items", "8 hashs with 40 fields", "5 sets with 40 members",
                     "2 zsets with 40 members", "Biggest string found '\"s:39\"' has 40 bytes"):
            assert line in text, text
    else:
        assert "Biggest   zset found" in text and "bytes" in text
