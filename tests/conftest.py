"""Shared fixtures for the end-to-end (tests/e2e) and differential (tests/compat) suites.

Everything here starts real server processes on ephemeral loopback ports and talks to them
over sockets:

* ``ServerProcess`` / ``start_server()``: run ``keywarden-server`` or ``redis-server`` with
  redis-server style command-line directives, wait until it answers PING, stop it for sure.
* ``RawConnection``: a socket speaking raw bytes, with a small RESP2/RESP3 reply reader, for
  tests that assert the exact bytes on the wire.
* fixtures: ``keywarden`` and ``reference_redis`` (one server per test module, flushed before
  each test), ``server_factory`` (a fresh server with extra directives, stopped after the test).

Environment:
  KEYWARDEN_SERVER   the server under test (default: <repo>/build/src/server/keywarden-server)
  REDIS_SERVER       the reference server (default: redis-server from PATH, /usr/bin/redis-server)
  KW_START_TIMEOUT   seconds to wait for a server to answer PING (default 10)

While the C++ server does not exist yet, run everything with KEYWARDEN_SERVER=/usr/bin/redis-server:
Redis against Redis must show no difference at all.

Helpers are imported by the test modules with ``from conftest import ...`` (pytest puts this
directory on sys.path because tests/ is not a package).
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterable, Sequence

import pytest
import redis

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_KEYWARDEN = REPO_ROOT / "build" / "src" / "server" / "keywarden-server"
HOST = "127.0.0.1"
START_TIMEOUT = float(os.environ.get("KW_START_TIMEOUT", "10"))
STOP_TIMEOUT = 5.0
IO_TIMEOUT = 10.0  # no single socket read in a test may block longer than this
# What a server built with AddressSanitizer/UndefinedBehaviorSanitizer (scripts/test.sh
# --sanitize) prints to stderr when it finds a bug. Leaks are reported only at exit, so every
# server's output is checked when it is cleaned up, and a report fails the test.
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


def keywarden_binary() -> str:
    return os.environ.get("KEYWARDEN_SERVER") or str(DEFAULT_KEYWARDEN)


def redis_binary() -> str:
    return (os.environ.get("REDIS_SERVER") or shutil.which("redis-server")
            or "/usr/bin/redis-server")


# Directives every test server gets. Only directives that keywarden must accept at start-up.
BASE_DIRECTIVES: tuple[tuple[str, str], ...] = (
    ("bind", HOST),
    ("save", ""),
    ("appendonly", "no"),
    ("enable-debug-command", "yes"),
)


# --------------------------------------------------------------------------------------------
# RESP reply reader
# --------------------------------------------------------------------------------------------

class SimpleString(bytes):
    """A `+...` status reply. Compares equal to the plain bytes."""

    def __repr__(self) -> str:
        return f"SimpleString({bytes(self)!r})"


class ReplyError(bytes):
    """A `-...` (or RESP3 `!` blob) error reply; the bytes are the message without the dash."""

    def __repr__(self) -> str:
        return f"ReplyError({bytes(self)!r})"


class Double(float):
    """A RESP3 `,` double; `.raw` keeps the text exactly as the server sent it."""

    raw: bytes = b""

    def __repr__(self) -> str:
        return f"Double({self.raw!r})"


class BigNumber(int):
    """A RESP3 `(` big number."""


class Verbatim(bytes):
    """A RESP3 `=` verbatim string; `.format` is the three-letter format (b'txt', b'mkd')."""

    format: bytes = b""


class Map(dict):
    """A RESP3 `%` map (keys that are lists are stored as tuples so that they hash)."""


class RespSet(list):
    """A RESP3 `~` set, kept in the order the server sent it."""


class Push(list):
    """A RESP3 `>` push message."""


class ConnectionClosed(Exception):
    """The peer closed the connection before a whole reply arrived."""


class ProtocolViolation(Exception):
    """The server sent bytes that are not valid RESP."""


def encode_command(*args) -> bytes:
    """Encode arguments (bytes, str or int) as a RESP multibulk request."""
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        if isinstance(arg, str):
            arg = arg.encode()
        elif isinstance(arg, (int, float)) and not isinstance(arg, bool):
            arg = str(arg).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(parts)


class RespReader:
    """Incremental RESP2/RESP3 parser over a byte source.

    ``feed`` is a callable returning the next chunk of bytes (b'' at end of stream). One call
    to ``read()`` consumes exactly one top-level reply and returns (value, raw bytes).
    """

    def __init__(self, feed):
        self._feed = feed
        self._buf = bytearray()
        self._pos = 0
        self.last_attributes: Map | None = None

    # -- buffer -----------------------------------------------------------------------------
    def buffered(self) -> bytes:
        return bytes(self._buf[self._pos:])

    def take_buffered(self) -> bytes:
        data = self.buffered()
        self._buf.clear()
        self._pos = 0
        return data

    def unread(self, data: bytes) -> None:
        self._buf += data

    def _fill(self) -> None:
        chunk = self._feed()
        if not chunk:
            raise ConnectionClosed(
                f"connection closed by peer; {len(self._buf) - self._pos} unparsed bytes: "
                f"{self.buffered()[:200]!r}")
        self._buf += chunk

    def _line(self) -> bytes:
        while True:
            end = self._buf.find(b"\r\n", self._pos)
            if end >= 0:
                line = bytes(self._buf[self._pos:end])
                self._pos = end + 2
                return line
            self._fill()

    def _exact(self, n: int) -> bytes:
        while len(self._buf) - self._pos < n + 2:
            self._fill()
        data = bytes(self._buf[self._pos:self._pos + n])
        if self._buf[self._pos + n:self._pos + n + 2] != b"\r\n":
            raise ProtocolViolation(f"bulk of {n} bytes not followed by CRLF: "
                                    f"{bytes(self._buf[self._pos:self._pos + n + 2])!r}")
        self._pos += n + 2
        return data

    # -- parsing ----------------------------------------------------------------------------
    def read(self):
        start = self._pos
        value = self._value()
        raw = bytes(self._buf[start:self._pos])
        del self._buf[:self._pos]
        self._pos = 0
        return value, raw

    def _int(self, text: bytes) -> int:
        try:
            return int(text)
        except ValueError:
            raise ProtocolViolation(f"not an integer: {text!r}") from None

    def _value(self):
        line = self._line()
        if not line:
            raise ProtocolViolation("empty reply line")
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return SimpleString(rest)
        if kind == b"-":
            return ReplyError(rest)
        if kind == b":":
            return self._int(rest)
        if kind == b"$":
            n = self._int(rest)
            return None if n < 0 else self._exact(n)
        if kind in (b"*", b"~", b">"):
            n = self._int(rest)
            if n < 0:
                return None
            items = [self._value() for _ in range(n)]
            return {b"*": list, b"~": RespSet, b">": Push}[kind](items)
        if kind in (b"%", b"|"):
            n = self._int(rest)
            result = Map()
            for _ in range(n):
                key = self._value()
                if isinstance(key, list):
                    key = tuple(key)
                result[key] = self._value()
            if kind == b"|":  # attributes precede the real reply
                self.last_attributes = result
                return self._value()
            return result
        if kind == b"_":
            if rest:
                raise ProtocolViolation(f"null with payload: {line!r}")
            return None
        if kind == b",":
            text = rest.decode()
            number = float({"inf": "inf", "-inf": "-inf"}.get(text, text))
            d = Double(number)
            d.raw = rest
            return d
        if kind == b"#":
            if rest not in (b"t", b"f"):
                raise ProtocolViolation(f"bad boolean {line!r}")
            return rest == b"t"
        if kind == b"(":
            return BigNumber(self._int(rest))
        if kind == b"!":
            return ReplyError(self._exact(self._int(rest)))
        if kind == b"=":
            data = self._exact(self._int(rest))
            if data[3:4] != b":":
                raise ProtocolViolation(f"verbatim string without format: {data[:10]!r}")
            v = Verbatim(data[4:])
            v.format = data[:3]
            return v
        raise ProtocolViolation(f"unknown reply type byte in {line[:100]!r}")


def parse_replies(data: bytes) -> list:
    """Parse every reply in a complete byte string (for tests of the reader itself)."""
    chunks = [data]
    reader = RespReader(lambda: chunks.pop() if chunks else b"")
    out = []
    while True:
        if not reader.buffered() and not chunks:
            return out
        out.append(reader.read()[0])


# --------------------------------------------------------------------------------------------
# Raw connection
# --------------------------------------------------------------------------------------------

class RawConnection:
    """A plain socket to a server: send exact bytes, read exact replies.

    Every blocking read gives up after ``timeout`` seconds with socket.timeout, so a test can
    never hang on a server that does not answer.
    """

    def __init__(self, host: str = HOST, port: int | None = None, *, unix_path: str | None = None,
                 timeout: float = IO_TIMEOUT):
        if unix_path:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(timeout)
            self.sock.connect(unix_path)
        else:
            self.sock = socket.create_connection((host, port), timeout=timeout)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.timeout = timeout
        self.reader = RespReader(self._recv)

    def _recv(self) -> bytes:
        try:
            return self.sock.recv(65536)
        except ConnectionResetError:
            return b""

    # -- sending ----------------------------------------------------------------------------
    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send_command(self, *args) -> None:
        self.send(encode_command(*args))

    def send_inline(self, line: bytes | str) -> None:
        if isinstance(line, str):
            line = line.encode()
        self.send(line + b"\r\n")

    # -- reading ----------------------------------------------------------------------------
    def read_reply(self):
        """Read and parse exactly one reply."""
        return self.reader.read()[0]

    def read_reply_bytes(self) -> bytes:
        """Read exactly one reply and return its raw bytes."""
        return self.reader.read()[1]

    def read_reply_with_raw(self):
        return self.reader.read()

    def read_replies(self, n: int) -> list:
        return [self.read_reply() for _ in range(n)]

    def read_bytes_of_replies(self, n: int) -> bytes:
        return b"".join(self.read_reply_bytes() for _ in range(n))

    def execute(self, *args):
        """Send one command and return its parsed reply."""
        self.send_command(*args)
        return self.read_reply()

    def execute_raw(self, *args) -> bytes:
        """Send one command and return its reply's exact bytes."""
        self.send_command(*args)
        return self.read_reply_bytes()

    def read_until_close(self, timeout: float | None = None) -> bytes:
        """Return every byte (unparsed ones included) until the peer closes.

        Raises socket.timeout if the peer keeps the connection open longer than ``timeout``.
        A reset (RST) counts as a close.
        """
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        data = bytearray(self.reader.take_buffered())
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise socket.timeout(f"connection still open; received so far: {bytes(data)[:300]!r}")
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                chunk = b""
            finally:
                self.sock.settimeout(self.timeout)
            if not chunk:
                return bytes(data)
            data += chunk

    def is_closed(self, timeout: float = 0.2) -> bool:
        """True if the peer has closed (EOF or reset) within ``timeout`` seconds.

        Bytes that arrive meanwhile stay buffered for the next read; a connection that is open
        and silent returns False after the timeout.
        """
        if self.reader.buffered():
            return False
        self.sock.settimeout(timeout)
        try:
            chunk = self.sock.recv(65536)
        except socket.timeout:
            return False
        except ConnectionResetError:
            return True
        finally:
            self.sock.settimeout(self.timeout)
        if not chunk:
            return True
        self.reader.unread(chunk)
        return False

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# --------------------------------------------------------------------------------------------
# Multi-client scripts (transactions, blocking commands), compared between two servers
# --------------------------------------------------------------------------------------------

NO_REPLY = b"(no reply)"


def _no_reply_within(conn: RawConnection, seconds: float) -> bool:
    """True when nothing arrives on `conn` for `seconds` (what arrives stays buffered)."""
    if conn.reader.buffered():
        return False
    conn.sock.settimeout(seconds)
    try:
        chunk = conn.sock.recv(65536)
    except socket.timeout:
        return True
    finally:
        conn.sock.settimeout(conn.timeout)
    if chunk:
        conn.reader.unread(chunk)
    return False


def run_client_script(server, script: str, protocol: int = 2) -> list[tuple[str, bytes]]:
    """Runs a script for named clients (A, B, …) of `server`; returns (line, raw reply) pairs.

        A cmd …     send and read the reply (QUIT: everything until the close)
        A> cmd …    send without reading (the command may block)
        A<          read one reply (it must come)
        A?          expect no reply for a moment (NO_REPLY is recorded)
        A!          close the connection
        ~ 0.2       sleep (client side)

    ``$A`` in a command stands for client A's id (CLIENT UNBLOCK). Under protocol 3 every
    client says HELLO 3 first.
    """
    clients, ids, out = {}, {}, []
    try:
        for line in script.strip().splitlines():
            line = line.strip()
            if line.startswith("~"):
                time.sleep(float(line[1:]))
                continue
            head, *args = line.split()
            who, op = head[0], head[1:]
            if who not in clients:
                clients[who] = server.raw()
                if protocol == 3:
                    assert isinstance(clients[who].execute("HELLO", "3"), Map)
                ids[who] = clients[who].execute("CLIENT", "ID")
            conn = clients[who]
            args = [str(ids[a[1:]]) if a.startswith("$") and a[1:] in ids else a for a in args]
            if op == "":
                conn.send(encode_command(*args))
                if args[0].upper() == "QUIT":
                    out.append((line, conn.read_until_close()))
                else:
                    out.append((line, conn.read_reply_with_raw()[1]))
            elif op == ">":
                conn.send(encode_command(*args))
                # Clients block in the order the server reads them: let it read this one
                # before another client sends.
                time.sleep(0.03)
            elif op == "<":
                out.append((line, conn.read_reply_with_raw()[1]))
            elif op == "?":
                out.append((line, NO_REPLY if _no_reply_within(conn, 0.15) else b"(a reply)"))
            elif op == "!":
                conn.close()
                # Both servers notice the close before the next client's command arrives.
                time.sleep(0.05)
            else:
                raise ValueError(f"bad script line {line!r}")
    finally:
        for conn in clients.values():
            conn.close()
    return out


def wait_until(predicate, timeout: float = 10.0, interval: float = 0.05):
    """Polls `predicate` until it returns something true or `timeout` seconds have passed;
    returns its last result (falsy on time-out), so that tests wait for behaviour, not for a
    fixed time."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result or time.monotonic() >= deadline:
            return result
        time.sleep(interval)


def assert_same_script_replies(keywarden, reference, name: str, script: str,
                               protocol: int) -> None:
    """Runs `script` on both servers and compares every reply byte for byte."""
    kw = run_client_script(keywarden, script, protocol)
    ref = run_client_script(reference, script, protocol)
    assert [line for line, _ in kw] == [line for line, _ in ref]
    for (line, k), (_, r) in zip(kw, ref):
        assert k == r, f"{name} RESP{protocol}: {line!r}: keywarden {k!r}, redis {r!r}"


# --------------------------------------------------------------------------------------------
# Server processes
# --------------------------------------------------------------------------------------------

def run_quick_benchmark(argv: Sequence[str], time_limit: float, env=None,
                        skip_if_stderr_has: str | None = None) -> str:
    """Runs a bench driver's --quick mode (argv after the interpreter) from the repository root
    and returns its stdout, after checking it exited 0 and printed its table header. A run that
    does not finish within `time_limit` seconds (a loaded machine) is stopped with SIGTERM, which
    the drivers turn into stopping their servers, and the test is skipped, not failed; so is a
    run that failed with `skip_if_stderr_has` in its stderr (the driver's own "the machine was
    too slow for this" message)."""
    proc = subprocess.Popen([sys.executable, *map(str, argv)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT, env=env)
    try:
        out, err = proc.communicate(timeout=time_limit)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        pytest.skip(f"--quick did not finish within {time_limit:.0f} s (machine too busy)")
    if proc.returncode != 0 and skip_if_stderr_has and skip_if_stderr_has in err:
        pytest.skip(f"the driver gave up waiting on a busy machine: {err.strip().splitlines()[-1]}")
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{out}\nstderr:\n{err}"
    assert "keywarden vs redis-server" in out
    return out


def free_port() -> int:
    """An ephemeral loopback port that was free a moment ago (callers retry on collision)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


# Private ports: a server that a test kills and restarts on its port under Sentinel must not
# have an ephemeral port. While it is down, bind(0) in another test could hand that port to a
# server of its own, which our sentinels would then reconfigure (or the other test's sentinels
# ours: it happened, twice, with the Sentinel tests and the HA demo running side by side).
# Ports below the kernel's ephemeral range (32768 and up) are never handed out by bind(0); each
# xdist worker takes them in turn from a window of its own, so two workers never reuse each
# other's, and a port comes round again in the same worker only after 1,900 others. 20000 and up
# belong to bench/lock_failover_benchmark.py.
_PRIVATE_WINDOW = 2000
_PRIVATE_BASE = 10000 + _PRIVATE_WINDOW * (
    int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").lstrip("gw") or 0) % 5)
_private_next = _PRIVATE_BASE + (os.getpid() % _PRIVATE_WINDOW)


def private_ports(count: int = 1) -> int:
    """The first of `count` consecutive free loopback ports below the ephemeral range (see
    above); they are free now, but callers still retry on a collision with another program."""
    global _private_next
    for _ in range(_PRIVATE_WINDOW):
        if _private_next + count > _PRIVATE_BASE + _PRIVATE_WINDOW:
            _private_next = _PRIVATE_BASE
        first = _private_next
        _private_next += count
        if all(_port_free(port) for port in range(first, first + count)):
            return first
    raise RuntimeError(f"no {count} free ports in {_PRIVATE_BASE}..{_PRIVATE_BASE + _PRIVATE_WINDOW}")


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


def _die_with_parent() -> None:
    """preexec_fn: SIGKILL the server if the test runner dies, so no server outlives it."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _directive_args(directives: Iterable[tuple[str, str]]) -> list[str]:
    args = []
    for name, value in directives:
        args.append(f"--{name}")
        if isinstance(value, (list, tuple)):
            args.extend(str(v) for v in value)
        else:
            args.append(str(value))
    return args


class ServerStartError(RuntimeError):
    pass


class ServerProcess:
    """One server process (keywarden-server or redis-server) on 127.0.0.1:<ephemeral port>."""

    def __init__(self, binary: str, directives: Sequence[tuple[str, object]] = (), *,
                 config_file: str | None = None, name: str | None = None,
                 password: str | None = None, base_directives=BASE_DIRECTIVES):
        self.binary = binary
        self.name = name or Path(binary).name
        self.extra = list(directives)
        self.config_file = config_file
        self.base_directives = base_directives
        self.password = password
        self.host = HOST
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self.workdir = tempfile.mkdtemp(prefix="kw-test-")
        self.log_path = os.path.join(self.workdir, "server.log")
        self._clients: list = []

    # -- lifecycle --------------------------------------------------------------------------
    def start(self, attempts: int = 5) -> "ServerProcess":
        if not os.path.exists(self.binary):
            raise ServerStartError(
                f"server binary {self.binary} does not exist; build it or set KEYWARDEN_SERVER "
                f"(e.g. KEYWARDEN_SERVER=/usr/bin/redis-server to validate the tests on Redis)")
        last_error = ""
        for _ in range(attempts):
            self.port = free_port()
            argv = [self.binary]
            if self.config_file:
                argv.append(self.config_file)
            argv += _directive_args([("port", self.port), *self.base_directives, *self.extra])
            self.argv = argv
            log = open(self.log_path, "wb")
            try:
                self.proc = subprocess.Popen(argv, cwd=self.workdir, stdin=subprocess.DEVNULL,
                                             stdout=log, stderr=subprocess.STDOUT,
                                             preexec_fn=_die_with_parent)
            finally:
                log.close()
            error = self._wait_ready()
            if error is None:
                return self
            last_error = error
            self.stop()
            if "in use" not in error.lower():  # only a port collision is worth a retry
                break
        raise ServerStartError(last_error)

    def _wait_ready(self) -> str | None:
        """Poll until the server answers PING with any RESP reply; None on success."""
        deadline = time.monotonic() + START_TIMEOUT
        why = "no connection yet"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return (f"{self.name} exited with status {self.proc.returncode} during start-up\n"
                        f"command: {' '.join(map(repr, self.argv))}\noutput:\n{self.log()}")
            try:
                with RawConnection(self.host, self.port, timeout=1.0) as conn:
                    conn.send(b"*1\r\n$4\r\nPING\r\n")
                    conn.read_reply()  # +PONG, or -NOAUTH when requirepass is set: both mean up
                    return None
            except (OSError, ConnectionClosed, ProtocolViolation) as e:
                why = repr(e)
                time.sleep(0.01)
        self.kill()
        return (f"{self.name} did not answer PING on {self.host}:{self.port} within "
                f"{START_TIMEOUT}s (last error: {why})\ncommand: {' '.join(map(repr, self.argv))}"
                f"\noutput:\n{self.log()}")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log(self, limit: int = 20000) -> str:
        try:
            with open(self.log_path, "rb") as f:
                data = f.read()
        except OSError:
            return "(no log)"
        text = data.decode(errors="replace")
        return text if len(text) <= limit else "...\n" + text[-limit:]

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL after a grace period. Returns the exit status."""
        for c in self._clients:
            try:
                c.close()
            except Exception:
                pass
        self._clients.clear()
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.kill()
            except ProcessLookupError:
                pass
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                pass

    def sanitizer_report(self) -> str | None:
        """The sanitizer report in the server's output, if there is one."""
        try:
            with open(self.log_path, "rb") as f:
                text = f.read().decode(errors="replace")
        except OSError:
            return None
        found = [text.find(marker) for marker in SANITIZER_MARKERS]
        found = [at for at in found if at >= 0]
        if not found:
            return None
        start = min(found)
        return text[max(0, start - 2000):start + 30000]

    def cleanup(self) -> None:
        self.stop()
        report = self.sanitizer_report()
        shutil.rmtree(self.workdir, ignore_errors=True)
        if report is not None:
            status = self.proc.returncode if self.proc else None
            pytest.fail(f"{self.name} reported a sanitizer error (exit status {status}):\n"
                        f"{report}", pytrace=False)

    # -- clients ----------------------------------------------------------------------------
    def client(self, **kwargs) -> redis.Redis:
        """A redis-py client (bytes replies); closed when the server is stopped."""
        kwargs.setdefault("decode_responses", False)
        kwargs.setdefault("socket_timeout", IO_TIMEOUT)
        if self.password is not None:
            kwargs.setdefault("password", self.password)
        c = redis.Redis(host=self.host, port=self.port, **kwargs)
        self._clients.append(c)
        return c

    def raw(self, timeout: float = IO_TIMEOUT) -> RawConnection:
        conn = RawConnection(self.host, self.port, timeout=timeout)
        self._clients.append(conn)
        return conn

    def admin(self) -> RawConnection:
        """A raw connection already authenticated (when the server has a password)."""
        conn = self.raw()
        if self.password is not None:
            assert conn.execute("AUTH", self.password) == b"OK"
        return conn

    def flushall(self) -> None:
        with RawConnection(self.host, self.port) as conn:
            if self.password is not None:
                conn.execute("AUTH", self.password)
            reply = conn.execute("FLUSHALL")
            assert reply == b"OK", f"FLUSHALL on {self.name}: {reply!r}"

    def __repr__(self) -> str:
        return f"<{self.name} pid={self.proc.pid if self.proc else None} {self.host}:{self.port}>"


def start_server(binary: str | None = None, directives: Sequence[tuple[str, object]] = (),
                 **kwargs) -> ServerProcess:
    """Start a server (keywarden by default) with extra directives, e.g.
    ``start_server(directives=[("requirepass", "s3cret"), ("maxclients", 3)])``.
    The caller must ``.cleanup()`` it; inside tests prefer the ``server_factory`` fixture."""
    directives = list(directives)
    password = kwargs.pop("password", None)
    for name, value in directives:
        if name == "requirepass" and password is None:
            password = str(value)
    server = ServerProcess(binary or keywarden_binary(), directives, password=password, **kwargs)
    try:
        return server.start()
    except BaseException:
        server.cleanup()
        raise


# --------------------------------------------------------------------------------------------
# DUMP payloads
# --------------------------------------------------------------------------------------------

def _crc64_table() -> list[int]:
    poly = 0x95AC9329AC4BC9B5
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC64_TABLE = _crc64_table()


def crc64_jones(data: bytes) -> int:
    """CRC-64/Jones as Redis computes it (reflected, init 0, no final xor)."""
    crc = 0
    for byte in data:
        crc = _CRC64_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc


def with_footer(body: bytes, version: int = 10) -> bytes:
    """A DUMP payload: `body` (type byte and object), the RDB version, the CRC64 of both."""
    body = body + version.to_bytes(2, "little")
    return body + crc64_jones(body).to_bytes(8, "little")


# --------------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------------

class _ModuleServer:
    """A server shared by one test module; restarted if a test killed it."""

    def __init__(self, binary: str, name: str):
        self.binary = binary
        self.name = name
        self.server: ServerProcess | None = None

    def get(self) -> ServerProcess:
        if self.server is None or not self.server.alive():
            if self.server is not None:
                self.server.cleanup()
            self.server = start_server(self.binary, name=self.name)
        return self.server

    def close(self) -> None:
        if self.server is not None:
            self.server.cleanup()


@pytest.fixture(scope="module")
def _keywarden_module():
    holder = _ModuleServer(keywarden_binary(), "keywarden-server")
    yield holder
    holder.close()


@pytest.fixture(scope="module")
def _reference_module():
    holder = _ModuleServer(redis_binary(), "redis-server (reference)")
    yield holder
    holder.close()


def _shared(holder: _ModuleServer):
    server = holder.get()
    server.flushall()
    yield server
    for c in server._clients:
        try:
            c.close()
        except Exception:
            pass
    server._clients.clear()
    if not server.alive():
        pytest.fail(f"{server.name} died during the test (status {server.proc.returncode}); "
                    f"output:\n{server.log()}")


@pytest.fixture
def keywarden(_keywarden_module):
    """The keywarden-server of this test module, flushed (FLUSHALL) before the test."""
    yield from _shared(_keywarden_module)


@pytest.fixture
def reference_redis(_reference_module):
    """A stock redis-server of this test module, flushed before the test."""
    yield from _shared(_reference_module)


@pytest.fixture
def server_factory():
    """Start dedicated servers with extra directives; all are stopped after the test.

    ``server_factory(("requirepass", "x"), ("maxclients", 4))`` starts keywarden;
    ``server_factory(..., binary=redis_binary())`` starts the reference instead.
    """
    started: list[ServerProcess] = []

    def make(*directives, binary: str | None = None, **kwargs) -> ServerProcess:
        server = start_server(binary, directives, **kwargs)
        started.append(server)
        return server

    yield make
    for server in started:
        server.cleanup()


@pytest.fixture(params=["keywarden", "redis"])
def make_server(request, server_factory):
    """Starts a dedicated server of the parametrised kind with extra directives."""
    binary = None if request.param == "keywarden" else redis_binary()

    def make(*directives):
        return server_factory(*directives, binary=binary)

    return make


# --------------------------------------------------------------------------------------------
# Result summaries printed at the end of the run
# --------------------------------------------------------------------------------------------

# Tables that tests fill while they run (e.g. the replication interoperation matrix) and that
# the terminal summary prints as one line each, so that a run's outcome can be pasted as is.
# table name -> row name -> result text; insertion order is kept.
RUN_SUMMARY: dict[str, dict[str, str]] = {}


def summary_set(table: str, row: str, result: str) -> None:
    RUN_SUMMARY.setdefault(table, {})[row] = result


def _reference_only(item) -> bool:
    """Whether a parametrised test runs stock Redis alone: every server kind among its
    parameters (a "redis"/"keywarden" string, or a tuple of them) is "redis"."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return False
    kinds = []
    for value in callspec.params.values():
        values = value if isinstance(value, tuple) else (value,)
        kinds += [v for v in values if v in ("redis", "keywarden", "mixed")]
    return bool(kinds) and all(kind == "redis" for kind in kinds)


def _bench_smoke(item) -> bool:
    """Whether a test is a benchmark driver's smoke test (tests/e2e/test_bench_*_smoke.py): the
    driver starts its own servers and never reads their output for a sanitizer report."""
    name = Path(str(item.fspath)).name
    return name.startswith("test_bench_") and name.endswith("_smoke.py")


def pytest_collection_modifyitems(config, items):
    # scripts/test.sh --sanitize (docs/fuzzing.md, "The sanitizer suite") leaves to the release
    # pass the tests that add time and no sanitizer coverage: the rows that start no keywarden,
    # and the benchmark smoke tests, which check the drivers' Python (the server paths they
    # drive are driven by fixture-started tests, whose output is checked for reports).
    if not os.environ.get("KEYWARDEN_SANITIZER_PASS"):
        return
    reference_only = pytest.mark.skip(reason="stock Redis alone: run in the release pass")
    bench_smoke = pytest.mark.skip(reason="benchmark driver smoke test: run in the release pass")
    for item in items:
        if _reference_only(item):
            item.add_marker(reference_only)
        elif _bench_smoke(item):
            item.add_marker(bench_smoke)


def pytest_sessionfinish(session):
    # Under pytest-xdist (scripts/test.sh runs two workers) each worker fills its own tables:
    # it hands them to the controlling process, which prints them.
    worker_output = getattr(session.config, "workeroutput", None)
    if worker_output is not None:
        worker_output["keywarden_run_summary"] = json.dumps(RUN_SUMMARY)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    tables = json.loads(getattr(node, "workeroutput", {}).get("keywarden_run_summary", "{}"))
    for table, rows in tables.items():
        for row, result in rows.items():
            summary_set(table, row, result)


def pytest_terminal_summary(terminalreporter):
    if not RUN_SUMMARY:
        return
    terminalreporter.section("keywarden run summary")
    for table, rows in RUN_SUMMARY.items():
        cells = "  ".join(f"{row}={result}" for row, result in rows.items())
        terminalreporter.write_line(f"{table}: {cells}")
