"""scripts/ha-demo.sh, the one-machine HA demo of docs/replication.md, works as documented:
`start` brings up a primary, two replicas and three sentinels that agree on the primary,
redis-py's Sentinel client finds them, `kill 0` leads to a promotion, `stop` ends every process
the script started and removes its directory. Run with keywarden and with redis-server."""

from __future__ import annotations

import os
import subprocess

import pytest
import redis
import redis.sentinel

from conftest import REPO_ROOT, private_ports
from replication_cluster import (KINDS, MASTER_NAME, SENTINEL_BINARY, binary_for,
                                 replication_unsupported, wait_until)

SCRIPT = REPO_ROOT / "scripts" / "ha-demo.sh"


def run(env, *args, check=True) -> str:
    proc = subprocess.run([str(SCRIPT), *args], env=env, capture_output=True, text=True,
                          timeout=120)
    if check:
        assert proc.returncode == 0, f"ha-demo.sh {' '.join(args)}: exit {proc.returncode}\n" \
                                     f"{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def pids(directory: str) -> list[int]:
    return [int(open(os.path.join(directory, f)).read())
            for f in os.listdir(directory) if f.endswith(".pid")]


@pytest.mark.parametrize("kind", KINDS)
def test_ha_demo_start_failover_stop(kind, tmp_path):
    reason = replication_unsupported(kind)
    if reason:
        pytest.skip(reason)
    directory = str(tmp_path / "ha")
    env = dict(os.environ, HA_SERVER=binary_for(kind), HA_SENTINEL=SENTINEL_BINARY,
               HA_DIR=directory)
    # The script takes three consecutive ports for each group (private ones: it kills and
    # restarts a node on its port); retry if one was taken meanwhile.
    for _ in range(5):
        env["HA_PORT"], env["HA_SENTINEL_PORT"] = str(private_ports(3)), str(private_ports(3))
        out = subprocess.run([str(SCRIPT), "start"], env=env, capture_output=True, text=True,
                             timeout=120)
        if out.returncode == 0:
            break
        assert "in use" in out.stderr or "nothing answers" in out.stderr, out.stderr
        assert not os.path.exists(directory), "a failed start must clean up after itself"
    else:
        pytest.skip("no free consecutive ports")
    started = pids(directory)
    try:
        assert "mymaster" in out.stdout
        port, sentinel_port = int(env["HA_PORT"]), int(env["HA_SENTINEL_PORT"])
        api = redis.sentinel.Sentinel([("127.0.0.1", sentinel_port + i) for i in range(3)],
                                      socket_timeout=5)
        wait_until(lambda: len(api.discover_slaves(MASTER_NAME)) == 2,
                   "the sentinels listing both replicas")
        assert api.discover_master(MASTER_NAME) == ("127.0.0.1", port)
        status = run(env, "status")
        assert status.count(f"primary: 127.0.0.1 {port}") == 3, status

        run(env, "kill", "0")
        new = wait_until(lambda: api.discover_master(MASTER_NAME) != ("127.0.0.1", port) and
                         api.discover_master(MASTER_NAME), "a promotion after kill 0")
        assert new[1] in (port + 1, port + 2)
        c = redis.Redis(host="127.0.0.1", port=new[1], socket_timeout=5)
        assert c.set("written-after-failover", 1)
        c.close()
    finally:
        run(env, "stop", check=False)
    assert not os.path.exists(directory)
    for pid in started:
        wait_until(lambda: not os.path.exists(f"/proc/{pid}") or
                   open(f"/proc/{pid}/stat").read().split()[2] == "Z",
                   f"process {pid} gone after stop", timeout=15)
