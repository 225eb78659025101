"""Replication and Sentinel test harness: data nodes of either kind, sentinels, wait-for helpers.

The replication tests (tests/compat/test_replication_interop.py, tests/e2e/test_sentinel.py,
tests/e2e/test_replication_faults.py) run the same scenarios against keywarden-server and a
stock redis-server, mixed in every combination, so everything here is written once for both:

* ``DataNode``: one server of a kind ("keywarden" = $KEYWARDEN_SERVER, "redis" =
  $REDIS_SERVER or /usr/bin/redis-server) in its own directory with its own config file. Its
  port is chosen once (below the ephemeral range: conftest.private_ports) and kept across
  restarts, because replicas and sentinels know a node by its address. The config file matters: Sentinel reconfigures a node with ``SLAVEOF`` +
  ``CONFIG REWRITE``, and a restarted node must come back as what Sentinel made it.
* ``SentinelNode``: a stock ``redis-sentinel`` with a generated sentinel.conf monitoring
  ``mymaster`` with short timeouts.
* ``Cluster``: owns every process a test starts and kills them all at teardown (the
  ``cluster`` fixture of the test modules), so no test leaves a server behind.
* wait-for helpers that poll with generous deadlines and fail with the state they last saw:
  link up, offsets equal, sentinels agreeing on the primary and on the replica count.

Everything listens on 127.0.0.1 only. Imported by the test modules as ``replication_cluster``
(tests/ is on sys.path, as for ``conftest``).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Iterable, Sequence

import pytest
import redis

from conftest import (HOST, SANITIZER_MARKERS, RawConnection, _die_with_parent, private_ports,
                      keywarden_binary, redis_binary)

SENTINEL_BINARY = os.environ.get("REDIS_SENTINEL") or shutil.which("redis-sentinel") or \
    "/usr/bin/redis-sentinel"
MASTER_NAME = "mymaster"
KINDS = ("keywarden", "redis")
# Generous: a loaded 2-core machine running sanitizer builds must not fail a test by time.
DEFAULT_DEADLINE = float(os.environ.get("KW_REPL_DEADLINE", "60"))
START_TIMEOUT = float(os.environ.get("KW_START_TIMEOUT", "10"))

# Directives every data node gets (written to its config file). repl-diskless-sync-delay 0
# keeps full syncs quick; the test decides disk or diskless with repl-diskless-sync itself.
NODE_BASE_DIRECTIVES: tuple[tuple[str, str], ...] = (
    ("bind", HOST),
    ("save", '""'),
    ("appendonly", "no"),
    ("enable-debug-command", "yes"),
    ("dbfilename", "dump.rdb"),
    ("repl-diskless-sync-delay", "0"),
)


def binary_for(kind: str) -> str:
    if kind == "keywarden":
        return keywarden_binary()
    if kind == "redis":
        return redis_binary()
    raise ValueError(f"unknown server kind {kind!r}")


class WaitTimeout(AssertionError):
    pass


def wait_until(predicate: Callable[[], object], what: str, timeout: float = DEFAULT_DEADLINE,
               interval: float = 0.05, state: Callable[[], object] | None = None):
    """Polls `predicate` until it returns something truthy and returns that. After `timeout`
    seconds fails with `what` and, if given, what `state()` shows then. Exceptions raised by
    the predicate (a node restarting, a connection refused) count as "not yet"."""
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    while True:
        try:
            result = predicate()
            if result:
                return result
        except (redis.RedisError, OSError) as e:
            last_error = e
        if time.monotonic() >= deadline:
            detail = ""
            if state is not None:
                try:
                    detail = f"; state: {state()!r}"
                except Exception as e:  # the state is a diagnostic, never a second failure
                    detail = f"; state unavailable: {e!r}"
            if last_error is not None:
                detail += f"; last error: {last_error!r}"
            raise WaitTimeout(f"timed out after {timeout:.0f} s waiting for {what}{detail}")
        time.sleep(interval)


def parse_info(text: str) -> dict[str, str]:
    """INFO's text as a flat field -> value dict (section headers dropped)."""
    fields = {}
    for line in text.splitlines():
        if line and not line.startswith("#") and ":" in line:
            name, _, value = line.partition(":")
            fields[name] = value
    return fields


# --------------------------------------------------------------------------------------------
# Processes
# --------------------------------------------------------------------------------------------

class _Process:
    """A server-like process with a fixed loopback port, a directory and a config file."""

    role_name = "process"

    def __init__(self, binary: str, name: str, port: int | None = None):
        self.binary = binary
        self.name = name
        self.host = HOST
        self.port = port or private_ports()
        self.dir = tempfile.mkdtemp(prefix=f"kw-{name}-")
        self.config_path = os.path.join(self.dir, f"{self.role_name}.conf")
        self.log_path = os.path.join(self.dir, f"{self.role_name}.log")
        self.proc: subprocess.Popen | None = None
        self.paused = False
        self._clients: list[redis.Redis] = []

    @property
    def addr(self) -> tuple[str, int]:
        return (self.host, self.port)

    def _config_lines(self) -> list[str]:
        raise NotImplementedError

    def _argv(self) -> list[str]:
        return [self.binary, self.config_path]

    def start(self) -> "_Process":
        """Starts the process. The config file is written on the first start only: later
        starts read back what CONFIG REWRITE (or Sentinel) left in it."""
        if not os.path.exists(self.binary):
            raise FileNotFoundError(f"{self.binary} does not exist (build it or set "
                                    f"KEYWARDEN_SERVER / REDIS_SERVER)")
        if not os.path.exists(self.config_path):
            with open(self.config_path, "w") as f:
                f.write("\n".join(self._config_lines()) + "\n")
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(self._argv(), cwd=self.dir, stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=subprocess.STDOUT,
                                         preexec_fn=_die_with_parent)
        finally:
            log.close()
        self.paused = False
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with status {self.proc.returncode} "
                                   f"during start-up; log:\n{self.log()}")
            try:
                with socket.create_connection(self.addr, timeout=1.0) as s:
                    s.sendall(b"*1\r\n$4\r\nPING\r\n")
                    if s.recv(64):
                        return self
            except OSError:
                pass
            if time.monotonic() >= deadline:
                self.kill()
                raise RuntimeError(f"{self.name} did not answer PING on port {self.port} "
                                   f"within {START_TIMEOUT} s; log:\n{self.log()}")
            time.sleep(0.02)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _close_clients(self) -> None:
        for c in self._clients:
            try:
                c.close()
            except Exception:
                pass
        self._clients.clear()

    def kill(self) -> None:
        """SIGKILL (kill -9): no shutdown work at all."""
        self._close_clients()
        if self.alive():
            self.proc.kill()
            self.proc.wait(10)
        self.paused = False

    def stop(self) -> None:
        """SIGTERM, SIGKILL if it is still there after 10 s."""
        self._close_clients()
        if self.alive():
            if self.paused:
                self.resume()
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def pause(self) -> None:
        """SIGSTOP: the process keeps its sockets but answers nothing."""
        self.proc.send_signal(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        self.proc.send_signal(signal.SIGCONT)
        self.paused = False

    def restart(self) -> "_Process":
        self.stop()
        return self.start()

    def log(self, limit: int = 8000) -> str:
        try:
            text = Path(self.log_path).read_bytes().decode(errors="replace")
        except OSError:
            return "(no log)"
        return text if len(text) <= limit else "...\n" + text[-limit:]

    def client(self, **kwargs) -> redis.Redis:
        kwargs.setdefault("socket_timeout", 10)
        kwargs.setdefault("decode_responses", True)
        c = redis.Redis(host=self.host, port=self.port, **kwargs)
        self._clients.append(c)
        return c

    def cleanup(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __repr__(self) -> str:
        return f"<{self.name} :{self.port}{' dead' if not self.alive() else ''}>"


class DataNode(_Process):
    """One keywarden-server or redis-server, primary or replica."""

    role_name = "node"

    def __init__(self, kind: str, directives: Sequence[tuple[str, object]] = (),
                 name: str | None = None):
        super().__init__(binary_for(kind), name or kind)
        self.kind = kind
        self.directives = list(directives)
        self._admin: redis.Redis | None = None

    def _config_lines(self) -> list[str]:
        lines = [f"port {self.port}", f'dir "{self.dir}"']
        for name, value in (*NODE_BASE_DIRECTIVES, *self.directives):
            lines.append(f"{name} {value}")
        return lines

    @property
    def admin(self) -> redis.Redis:
        """A client for the test's own inspection (not closed by kill: reconnects by itself)."""
        if self._admin is None:
            self._admin = redis.Redis(host=self.host, port=self.port, decode_responses=True,
                                      socket_timeout=10)
            # INFO as the text a server sends (parse_info below), not redis-py's typed dict.
            self._admin.response_callbacks.pop("INFO", None)
        return self._admin

    def info(self, section: str = "replication") -> dict[str, str]:
        return parse_info(self.admin.execute_command("INFO", section))

    def replicaof(self, primary) -> None:
        """REPLICAOF `primary` (anything with .host and .port: a node, a TcpProxy) or NO ONE."""
        if primary is None:
            self.admin.execute_command("REPLICAOF", "NO", "ONE")
        else:
            self.admin.execute_command("REPLICAOF", primary.host, primary.port)

    def role(self) -> list:
        return self.admin.execute_command("ROLE")

    def config_set(self, name: str, value) -> None:
        self.admin.execute_command("CONFIG", "SET", name, value)

    def cleanup(self) -> None:
        if self._admin is not None:
            self._admin.close()
        super().cleanup()


class SentinelNode(_Process):
    """A stock redis-sentinel monitoring one primary as ``mymaster`` with a quorum of 2."""

    role_name = "sentinel"

    def __init__(self, primary: DataNode, quorum: int = 2, down_after_ms: int = 1000,
                 failover_timeout_ms: int = 6000, name: str = "sentinel"):
        super().__init__(SENTINEL_BINARY, name)
        self.primary_addr = primary.addr
        self.quorum = quorum
        self.down_after_ms = down_after_ms
        self.failover_timeout_ms = failover_timeout_ms

    def _config_lines(self) -> list[str]:
        host, port = self.primary_addr
        return [
            f"port {self.port}",
            f"bind {HOST}",
            f'dir "{self.dir}"',
            "sentinel resolve-hostnames no",
            f"sentinel monitor {MASTER_NAME} {host} {port} {self.quorum}",
            f"sentinel down-after-milliseconds {MASTER_NAME} {self.down_after_ms}",
            f"sentinel failover-timeout {MASTER_NAME} {self.failover_timeout_ms}",
            f"sentinel parallel-syncs {MASTER_NAME} 1",
        ]

    def master_addr(self) -> tuple[str, int] | None:
        reply = self.client().execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME",
                                              MASTER_NAME)
        return (reply[0], int(reply[1])) if reply else None

    def _table(self, *args) -> list[dict[str, str]]:
        rows = self.client().execute_command("SENTINEL", *args)
        out = []
        for row in rows:
            if isinstance(row, dict):
                out.append({str(k): str(v) for k, v in row.items()})
            else:
                out.append({str(row[i]): str(row[i + 1]) for i in range(0, len(row), 2)})
        return out

    def replicas(self) -> list[dict[str, str]]:
        return self._table("REPLICAS", MASTER_NAME)

    def sentinels(self) -> list[dict[str, str]]:
        return self._table("SENTINELS", MASTER_NAME)

    def client(self, **kwargs) -> redis.Redis:
        # One cached connection per sentinel is enough and keeps polling cheap.
        if not self._clients:
            super().client(**kwargs)
        return self._clients[0]


# --------------------------------------------------------------------------------------------
# Cluster and wait-for helpers
# --------------------------------------------------------------------------------------------

class Cluster:
    """Every node and sentinel one test started; ``close()`` kills them all."""

    def __init__(self):
        self.nodes: list[DataNode] = []
        self.sentinels: list[SentinelNode] = []
        self.proxies: list[TcpProxy] = []

    def proxy(self, target) -> "TcpProxy":
        """A cuttable TCP proxy to `target` (a node); point a replica at it with replicaof."""
        p = TcpProxy(target.addr)
        self.proxies.append(p)
        return p

    def node(self, kind: str, *directives: tuple[str, object], replica_of: DataNode | None = None,
             name: str | None = None, start: bool = True) -> DataNode:
        """A data node of `kind`; with `replica_of` it is started as that node's replica
        (REPLICAOF after start, so that its config file has no replicaof line of its own)."""
        index = sum(1 for n in self.nodes if n.kind == kind)
        node = DataNode(kind, directives, name=name or f"{kind}{index}")
        self.nodes.append(node)
        if start:
            node.start()
            if replica_of is not None:
                node.replicaof(replica_of)
        return node

    def sentinel_group(self, primary: DataNode, count: int = 3, **kwargs) -> list[SentinelNode]:
        group = []
        for i in range(count):
            s = SentinelNode(primary, name=f"sentinel{len(self.sentinels)}", **kwargs)
            self.sentinels.append(s)
            s.start()
            group.append(s)
        return group

    def node_at(self, addr: tuple[str, int]) -> DataNode:
        for n in self.nodes:
            if n.addr == (addr[0], int(addr[1])):
                return n
        raise KeyError(f"no node at {addr}")

    def close(self) -> None:
        """Stops everything (SIGTERM, so that a sanitizer build prints its leak report), then
        fails the test if any data node's log holds a sanitizer report."""
        for proxy in self.proxies:
            proxy.close()
        reports = []
        for p in [*self.sentinels, *self.nodes]:
            try:
                if p.paused and p.alive():
                    p.resume()
                p.stop()
            except OSError:
                pass
            text = p.log(limit=10**9)
            found = [text.find(m) for m in SANITIZER_MARKERS if m in text]
            if found:
                reports.append(f"{p.name}:\n{text[max(0, min(found) - 2000):min(found) + 20000]}")
            p.cleanup()
        if reports:
            pytest.fail("sanitizer report(s) in the servers' output:\n" + "\n".join(reports),
                        pytrace=False)

    def logs(self) -> str:
        return "\n".join(f"==== {p.name} :{p.port}\n{p.log(3000)}"
                         for p in [*self.nodes, *self.sentinels])


def link_up(replica: DataNode, primary: DataNode | None = None) -> bool:
    info = replica.info()
    if info.get("role") != "slave" or info.get("master_link_status") != "up":
        return False
    if info.get("master_sync_in_progress", "0") != "0":
        return False
    return primary is None or int(info.get("master_port", -1)) == primary.port


def wait_link_up(replica: DataNode, primary: DataNode | None = None,
                 timeout: float = DEFAULT_DEADLINE) -> None:
    wait_until(lambda: link_up(replica, primary),
               f"{replica.name}'s link to {primary.name if primary else 'its primary'} up",
               timeout, state=lambda: replica.info())


def wait_offsets_equal(primary: DataNode, replicas: Iterable[DataNode],
                       timeout: float = DEFAULT_DEADLINE) -> int:
    """Waits until every replica has processed the primary's whole stream; returns the offset.
    (The primary's PINGs to its replicas move the offset too, so this polls both sides.)"""
    replicas = list(replicas)

    def same():
        offset = int(primary.info()["master_repl_offset"])
        for r in replicas:
            info = r.info()
            if info.get("master_link_status") != "up" or \
                    int(info.get("slave_repl_offset", -1)) != offset:
                return None
        return offset or True

    return wait_until(same, f"offsets of {[r.name for r in replicas]} equal to "
                      f"{primary.name}'s", timeout,
                      state=lambda: (primary.info().get("master_repl_offset"),
                                     [r.info().get("slave_repl_offset") for r in replicas]))


def wait_sentinels_agree(sentinels: Sequence[SentinelNode], primary: DataNode,
                         replicas: int | None = None, peers: bool = True,
                         timeout: float = DEFAULT_DEADLINE) -> None:
    """Waits until every sentinel names `primary` as mymaster, (with `replicas`) lists that
    many replicas that are not down, and (with `peers`) knows the other sentinels."""

    def agreed():
        for s in sentinels:
            if s.master_addr() != primary.addr:
                return False
            if replicas is not None:
                up = [r for r in s.replicas()
                      if "s_down" not in r.get("flags", "")
                      and "disconnected" not in r.get("flags", "")]
                if len(up) != replicas:
                    return False
            if peers and len(s.sentinels()) != len(sentinels) - 1:
                return False
        return True

    wait_until(agreed, f"sentinels agreeing on {primary.name} with {replicas} replicas",
               timeout, interval=0.2,
               state=lambda: [(s.master_addr(), [(r["port"], r["flags"]) for r in s.replicas()],
                               len(s.sentinels())) for s in sentinels])


def wait_new_primary(sentinels: Sequence[SentinelNode], old: tuple[str, int],
                     timeout: float = DEFAULT_DEADLINE) -> tuple[str, int]:
    """Waits until every sentinel names the same primary, other than `old`; returns it."""

    def elected():
        addrs = {s.master_addr() for s in sentinels}
        if len(addrs) == 1:
            (addr,) = addrs
            if addr != old:
                return addr
        return None

    return wait_until(elected, f"a primary other than {old}", timeout, interval=0.1,
                      state=lambda: [s.master_addr() for s in sentinels])


# --------------------------------------------------------------------------------------------
# Comparing two keyspaces
# --------------------------------------------------------------------------------------------

TTL_TOLERANCE_MS = 3000


def value_of(c, key: str):
    kind = c.type(key)
    kind = kind.decode() if isinstance(kind, bytes) else kind
    if kind == "string":
        return kind, c.get(key)
    if kind == "hash":
        return kind, c.hgetall(key)
    if kind == "list":
        return kind, c.lrange(key, 0, -1)
    if kind == "set":
        return kind, sorted(c.smembers(key))
    if kind == "zset":
        return kind, c.zrange(key, 0, -1, withscores=True)
    if kind == "none":
        return kind, None
    raise AssertionError(f"unexpected type {kind} of {key}")


def differences(primary: DataNode, replica: DataNode, databases=(0,)) -> list[str]:
    """What differs between the two nodes' keyspaces (values compared by type, TTLs within a
    tolerance); empty when they hold the same data."""
    diffs = []
    for db in databases:
        # Binary values: compare undecoded bytes.
        pc = primary.client(db=db, decode_responses=False)
        rc = replica.client(db=db, decode_responses=False)
        pkeys = set(pc.scan_iter(count=1000))
        rkeys = set(rc.scan_iter(count=1000))
        if pkeys != rkeys:
            diffs.append(f"db{db} keys: only on primary {sorted(pkeys - rkeys)[:10]}, "
                         f"only on replica {sorted(rkeys - pkeys)[:10]}")
        for key in sorted(pkeys & rkeys):
            k = key.decode(errors="replace")
            pv, rv = value_of(pc, key), value_of(rc, key)
            if pv != rv:
                diffs.append(f"db{db} {k}: primary {str(pv)[:120]} replica {str(rv)[:120]}")
            pt, rt = pc.pttl(key), rc.pttl(key)
            if (pt < 0 or rt < 0) and pt != rt or abs(pt - rt) > TTL_TOLERANCE_MS:
                diffs.append(f"db{db} {k}: pttl primary {pt} replica {rt}")
    return diffs


# --------------------------------------------------------------------------------------------
# Support probe
# --------------------------------------------------------------------------------------------

# The commands whose presence says a server can act as a primary / as a replica. Only the
# essentials: a server that has them runs every row, and whatever else is missing fails there.
ROLE_COMMANDS = {
    "primary": ("PSYNC", "REPLCONF"),
    "replica": ("REPLICAOF", "ROLE"),
}
_MISSING: dict[str, list[str]] = {}


def replication_unsupported(kind: str, roles: Sequence[str] = ("primary", "replica")) -> str | None:
    """None when servers of `kind` can take every one of `roles`; otherwise why not (a skip
    reason).

    A keywarden without the replication commands (main before issue 17's primary and replica
    halves were merged; or one half alone) is reported, not failed. The probe asks COMMAND INFO
    on a throw-away server, once per kind and run; a binary that does not start is an error.
    """
    if kind not in _MISSING:
        node = DataNode(kind, name=f"probe-{kind}")
        try:
            node.start()
            with RawConnection(node.host, node.port) as conn:
                _MISSING[kind] = [name for names in ROLE_COMMANDS.values() for name in names
                                  if conn.execute("COMMAND", "INFO", name) == [None]]
        finally:
            node.cleanup()
    missing = [name for role in roles for name in ROLE_COMMANDS[role]
               if name in _MISSING[kind]]
    if not missing:
        return None
    return (f"{kind} at {binary_for(kind)} lacks {', '.join(missing)} needed as "
            f"{' and '.join(roles)} (issue 17's replication halves not merged yet)")


# --------------------------------------------------------------------------------------------
# A TCP proxy whose link can be cut
# --------------------------------------------------------------------------------------------

class TcpProxy:
    """Forwards 127.0.0.1:<port> to a target address, so that a test can cut a replication
    link and hold it down (``cut()``: every connection closed, new ones closed at once) and
    then ``restore()`` it. A replica pointed at the proxy sees its primary vanish and come
    back; the primary sees a replica that disconnected."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((HOST, 0))
        self._listener.listen(16)
        self.port = self._listener.getsockname()[1]
        self.host = HOST
        self.name = f"proxy:{self.port}->{target[1]}"
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._down = False
        self._closed = False
        threading.Thread(target=self._accept_loop, daemon=True).start()

    @property
    def addr(self) -> tuple[str, int]:
        return (self.host, self.port)

    def _accept_loop(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                down = self._down
            if down:
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, upstream]
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self) -> None:
        with self._lock:
            self._down = True
            sockets, self._sockets = self._sockets, []
        for s in sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
                s.close()
            except OSError:
                pass

    def restore(self) -> None:
        with self._lock:
            self._down = False

    def close(self) -> None:
        self._closed = True
        self.cut()
        self._listener.close()
