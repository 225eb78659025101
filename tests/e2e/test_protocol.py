"""RESP protocol behaviour over raw sockets, byte for byte as Redis 7.0 answers.

Every expected byte string here was first checked against a stock redis-server 7.0.
"""

import socket
import threading
import time

import pytest

from conftest import (ConnectionClosed, Map, RawConnection, ReplyError, RespSet, Verbatim,
                      encode_command, parse_replies)


def assert_serving(server):
    """Another, fresh connection still gets answers."""
    with server.raw() as other:
        assert other.execute_raw("PING") == b"+PONG\r\n"


# --------------------------------------------------------------------------------------------
# the reply reader itself (no server)
# --------------------------------------------------------------------------------------------

def test_resp_reader_parses_every_reply_type():
    data = (b"+OK\r\n-ERR bad\r\n:-42\r\n$3\r\na\r\n\r\n$-1\r\n*-1\r\n*2\r\n:1\r\n$0\r\n\r\n"
            b"_\r\n,3.25\r\n,inf\r\n#t\r\n#f\r\n(12345678901234567890\r\n!5\r\nERR x\r\n"
            b"=8\r\ntxt:abcd\r\n%1\r\n$1\r\nk\r\n*1\r\n:1\r\n~2\r\n:2\r\n:1\r\n>2\r\n$1\r\np\r\n:0\r\n"
            b"|1\r\n+a\r\n+b\r\n:7\r\n")
    replies = parse_replies(data)
    assert replies[:6] == [b"OK", b"ERR bad", -42, b"a\r\n", None, None]
    assert isinstance(replies[1], ReplyError)
    assert replies[6] == [1, b""]
    assert replies[7] is None
    assert replies[8] == 3.25 and replies[8].raw == b"3.25"
    assert replies[9] == float("inf")
    assert replies[10] is True and replies[11] is False
    assert replies[12] == 12345678901234567890
    assert replies[13] == b"ERR x" and isinstance(replies[13], ReplyError)
    assert replies[14] == b"abcd" and isinstance(replies[14], Verbatim)
    assert replies[14].format == b"txt"
    assert replies[15] == {b"k": [1]} and isinstance(replies[15], Map)
    assert replies[16] == [2, 1] and isinstance(replies[16], RespSet)
    assert replies[17] == [b"p", 0]
    assert replies[18] == 7  # the attribute map is skipped


# --------------------------------------------------------------------------------------------
# basics and pipelining
# --------------------------------------------------------------------------------------------

def test_ping_and_echo_exact_bytes(keywarden):
    conn = keywarden.raw()
    conn.send(b"*1\r\n$4\r\nPING\r\n")
    assert conn.read_reply_bytes() == b"+PONG\r\n"
    conn.send(b"*2\r\n$4\r\nPING\r\n$5\r\nhello\r\n")
    assert conn.read_reply_bytes() == b"$5\r\nhello\r\n"
    conn.send(b"*2\r\n$4\r\nECHO\r\n$4\r\na\r\nb\r\n")  # CRLF inside a bulk is just data
    assert conn.read_reply_bytes() == b"$4\r\na\r\nb\r\n"
    conn.send(b"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n")
    assert conn.read_reply_bytes() == b"$0\r\n\r\n"


def test_pipeline_of_many_commands_in_one_write(keywarden):
    n = 2000
    request = b"".join(encode_command("SET", f"key:{i}", f"value:{i}") for i in range(n))
    request += b"".join(encode_command("GET", f"key:{i}") for i in range(n))
    request += encode_command("DBSIZE")
    conn = keywarden.raw()
    conn.send(request)
    expected = b"+OK\r\n" * n
    expected += b"".join(b"$%d\r\nvalue:%d\r\n" % (len(f"value:{i}"), i) for i in range(n))
    expected += b":%d\r\n" % n
    assert conn.read_bytes_of_replies(2 * n + 1) == expected


def test_command_split_at_every_byte(keywarden):
    request = encode_command("SET", "split", "x" * 20) + encode_command("GET", "split")
    conn = keywarden.raw()
    for i in range(len(request)):
        conn.send(request[i:i + 1])  # TCP_NODELAY: one tiny segment per byte
    assert conn.read_bytes_of_replies(2) == b"+OK\r\n$20\r\n" + b"x" * 20 + b"\r\n"


def test_empty_and_negative_multibulk_are_ignored(keywarden):
    conn = keywarden.raw()
    conn.send(b"*0\r\n*-1\r\n*1\r\n$4\r\nPING\r\n")
    assert conn.read_reply_bytes() == b"+PONG\r\n"


def test_large_values_round_trip(keywarden):
    value = bytes(range(256)) * 4096  # 1 MiB, every byte value
    conn = keywarden.raw()
    assert conn.execute_raw("SET", "big", value) == b"+OK\r\n"
    assert conn.execute("GET", "big") == value
    assert conn.execute("STRLEN", "big") == len(value)


def test_command_with_many_arguments(keywarden):
    args = []
    for i in range(5000):
        args += [f"k{i}", f"v{i}"]
    conn = keywarden.raw()
    assert conn.execute_raw("MSET", *args) == b"+OK\r\n"
    assert conn.execute("MGET", "k0", "k4999", "nope") == [b"v0", b"v4999", None]


# --------------------------------------------------------------------------------------------
# inline (telnet) commands
# --------------------------------------------------------------------------------------------

def test_inline_commands(keywarden):
    conn = keywarden.raw()
    conn.send(b"PING\r\n")
    assert conn.read_reply_bytes() == b"+PONG\r\n"
    conn.send(b"set greeting hello\nget greeting\n")  # bare LF works too
    assert conn.read_bytes_of_replies(2) == b"+OK\r\n$5\r\nhello\r\n"
    conn.send(b"   ECHO    spaced    \r\n")
    assert conn.read_reply_bytes() == b"$6\r\nspaced\r\n"


def test_inline_empty_lines_are_ignored(keywarden):
    conn = keywarden.raw()
    conn.send(b"\r\n\n\r\nPING\r\n")
    assert conn.read_reply_bytes() == b"+PONG\r\n"


def test_inline_quoting(keywarden):
    conn = keywarden.raw()
    conn.send(b'SET q "hello world"\r\nGET q\r\n')
    assert conn.read_bytes_of_replies(2) == b"+OK\r\n$11\r\nhello world\r\n"
    # double quotes: \n \r \t \b \a \\ \" and \xHH escapes
    conn.send(b'ECHO "a\\x41\\n\\t\\"\\\\z"\r\n')
    assert conn.read_reply_bytes() == b'$7\r\naA\n\t"\\z\r\n'
    # an invalid \x escape is taken literally (without the backslash)
    conn.send(b'ECHO "\\x4g"\r\n')
    assert conn.read_reply_bytes() == b"$3\r\nx4g\r\n"
    # single quotes: only \' is an escape
    conn.send(b"ECHO 'it\\'s \\t'\r\n")
    assert conn.read_reply_bytes() == b"$7\r\nit's \\t\r\n"
    conn.send(b'ECHO ""\r\n')
    assert conn.read_reply_bytes() == b"$0\r\n\r\n"
    conn.send(b'ECHO "a" "b"\r\n')
    assert conn.read_reply_bytes() == b"-ERR wrong number of arguments for 'echo' command\r\n"


def test_inline_and_multibulk_mixed_in_one_write(keywarden):
    conn = keywarden.raw()
    conn.send(b"SET m 1\r\n" + encode_command("INCR", "m") + b"GET m\r\n")
    assert conn.read_bytes_of_replies(3) == b"+OK\r\n:2\r\n$1\r\n2\r\n"


# --------------------------------------------------------------------------------------------
# protocol errors: reply, then close; nobody else is affected
# --------------------------------------------------------------------------------------------

PROTOCOL_ERRORS = [
    ("multibulk-not-a-number", b"*abc\r\n", b"invalid multibulk length"),
    ("multibulk-over-int-max", b"*3000000000\r\n", b"invalid multibulk length"),
    ("bulk-not-a-number", b"*1\r\n$abc\r\n", b"invalid bulk length"),
    ("bulk-negative", b"*1\r\n$-1\r\n", b"invalid bulk length"),
    ("bulk-over-proto-max-bulk-len", b"*2\r\n$3\r\nSET\r\n$536870913\r\n",
     b"invalid bulk length"),
    ("expected-dollar", b"*1\r\nx\r\n", b"expected '$', got 'x'"),
    ("expected-dollar-after-arg", b"*2\r\n$4\r\nECHO\r\n:5\r\n", b"expected '$', got ':'"),
    ("too-big-inline", b"a" * (64 * 1024 + 1), b"too big inline request"),
    ("too-big-mbulk-count", b"*" + b"1" * (64 * 1024 + 1), b"too big mbulk count string"),
    ("too-big-bulk-count", b"*1\r\n$" + b"1" * (64 * 1024 + 1), b"too big bulk count string"),
    ("unbalanced-double-quote", b'SET a "foo\r\n', b"unbalanced quotes in request"),
    ("unbalanced-single-quote", b"SET a 'foo\r\n", b"unbalanced quotes in request"),
    ("quote-not-followed-by-space", b'SET a "foo"bar\r\n', b"unbalanced quotes in request"),
]


@pytest.mark.parametrize("payload,message", [p[1:] for p in PROTOCOL_ERRORS],
                         ids=[p[0] for p in PROTOCOL_ERRORS])
def test_protocol_error_replies_then_closes(keywarden, payload, message):
    bystander = keywarden.raw()
    assert bystander.execute_raw("SET", "bystander", "1") == b"+OK\r\n"
    conn = keywarden.raw()
    conn.send(payload)
    assert conn.read_until_close() == b"-ERR Protocol error: " + message + b"\r\n"
    assert bystander.execute_raw("GET", "bystander") == b"$1\r\n1\r\n"
    assert_serving(keywarden)


def test_protocol_error_after_valid_commands_in_same_write(keywarden):
    conn = keywarden.raw()
    conn.send(b"*1\r\n$4\r\nPING\r\n" * 3 + b"SET before 1\r\n" + b"*1\r\nx\r\n"
              + encode_command("SET", "after", "1"))
    assert conn.read_until_close() == (b"+PONG\r\n" * 3 + b"+OK\r\n"
                                       b"-ERR Protocol error: expected '$', got 'x'\r\n")
    with keywarden.raw() as other:
        assert other.execute("EXISTS", "before", "after") == 1


def test_bulk_length_limit_follows_proto_max_bulk_len(server_factory):
    server = server_factory(("proto-max-bulk-len", "1mb"))
    limit = 1024 * 1024
    conn = server.raw()
    assert conn.execute_raw("SET", "k", b"v" * limit) == b"+OK\r\n"
    assert conn.execute("STRLEN", "k") == limit
    conn.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % (limit + 1))
    assert conn.read_until_close() == b"-ERR Protocol error: invalid bulk length\r\n"
    assert_serving(server)


def test_half_command_then_disconnect_hurts_nobody(keywarden):
    conn = keywarden.raw()
    conn.send(b"*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$10\r\nabc")
    assert not conn.is_closed(0.05)
    conn.close()
    with keywarden.raw() as other:
        assert other.execute("EXISTS", "half") == 0
        assert other.execute_raw("SET", "half", "ok") == b"+OK\r\n"
    # a half-sent multibulk header and a half inline line, too
    for partial in (b"*3\r\n$3\r\nSE", b"*2", b"SET half inli"):
        c = keywarden.raw()
        c.send(partial)
        c.close()
    with keywarden.raw() as other:
        assert other.execute("GET", "half") == b"ok"


# --------------------------------------------------------------------------------------------
# error texts
# --------------------------------------------------------------------------------------------

def test_unknown_command_error_text(keywarden):
    conn = keywarden.raw()
    conn.send(b"foo a b\r\n")
    assert conn.read_reply_bytes() == (
        b"-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n")
    conn.send_command("foo", "a")
    assert conn.read_reply_bytes() == (
        b"-ERR unknown command 'foo', with args beginning with: 'a' \r\n")
    conn.send_command("nosuchcommand")
    assert conn.read_reply_bytes() == (
        b"-ERR unknown command 'nosuchcommand', with args beginning with: \r\n")
    conn.send_command("foo", "")
    assert conn.read_reply_bytes() == (
        b"-ERR unknown command 'foo', with args beginning with: '' \r\n")
    # the connection stays usable
    assert conn.execute_raw("PING") == b"+PONG\r\n"


def test_unknown_command_error_text_is_truncated_and_sanitized(keywarden):
    conn = keywarden.raw()
    conn.send_command("foo", "x" * 200, "y")
    assert conn.read_reply_bytes() == (
        b"-ERR unknown command 'foo', with args beginning with: '" + b"x" * 128 + b"' \r\n")
    conn.send_command("x" * 200)
    assert conn.read_reply_bytes() == (
        b"-ERR unknown command '" + b"x" * 128 + b"', with args beginning with: \r\n")
    conn.send_command("foo", *["ab"] * 100)
    assert conn.read_reply_bytes() == (
        b"-ERR unknown command 'foo', with args beginning with: " + b"'ab' " * 26 + b"\r\n")
    conn.send_command("fo\r\no", "a\nb")  # CR and LF never leak into an error line
    assert conn.read_reply_bytes() == (
        b"-ERR unknown command 'fo  o', with args beginning with: 'a b' \r\n")


def test_wrong_arity_error_text(keywarden):
    conn = keywarden.raw()
    for args, name in ((["GET"], b"get"), (["GeT"], b"get"), (["SET", "k"], b"set"),
                       (["GET", "a", "b"], b"get"), (["CONFIG", "GET"], b"config|get"),
                       (["MSET", "a", "1", "b"], b"mset")):
        conn.send_command(*args)
        assert conn.read_reply_bytes() == (
            b"-ERR wrong number of arguments for '" + name + b"' command\r\n"), args


def test_unknown_subcommand_error_text(keywarden):
    conn = keywarden.raw()
    assert conn.execute_raw("CONFIG", "FOO") == (
        b"-ERR unknown subcommand 'FOO'. Try CONFIG HELP.\r\n")
    assert conn.execute_raw("OBJECT", "foo", "x") == (
        b"-ERR unknown subcommand 'foo'. Try OBJECT HELP.\r\n")


# --------------------------------------------------------------------------------------------
# QUIT
# --------------------------------------------------------------------------------------------

def test_quit_replies_ok_and_closes(keywarden):
    conn = keywarden.raw()
    conn.send(encode_command("QUIT") + encode_command("SET", "after-quit", "1"))
    assert conn.read_until_close() == b"+OK\r\n"
    with keywarden.raw() as other:
        assert other.execute("EXISTS", "after-quit") == 0


def test_inline_quit(keywarden):
    conn = keywarden.raw()
    conn.send(b"quit\r\nping\r\n")
    assert conn.read_until_close() == b"+OK\r\n"


# --------------------------------------------------------------------------------------------
# RESP3 through HELLO
# --------------------------------------------------------------------------------------------

HELLO_FIELDS = [b"server", b"version", b"proto", b"id", b"mode", b"role", b"modules"]


def test_hello_3_switches_to_resp3(keywarden):
    conn = keywarden.raw()
    conn.send_command("HELLO", "3")
    raw = conn.read_reply_bytes()
    assert raw.startswith(b"%7\r\n$6\r\nserver\r\n")
    hello = parse_replies(raw)[0]
    assert isinstance(hello, Map)
    assert list(hello) == HELLO_FIELDS
    assert hello[b"proto"] == 3
    assert isinstance(hello[b"id"], int)
    assert hello[b"mode"] == b"standalone" and hello[b"role"] == b"master"
    assert hello[b"modules"] == []
    # RESP3 null, map, verbatim
    assert conn.execute_raw("GET", "missing") == b"_\r\n"
    assert conn.execute_raw("SET", "k", "v") == b"+OK\r\n"
    assert conn.execute_raw("CONFIG", "GET", "port") == (
        b"%%1\r\n$4\r\nport\r\n$%d\r\n%d\r\n" % (len(str(keywarden.port)), keywarden.port))
    assert conn.execute_raw("MGET", "k", "missing") == b"*2\r\n$1\r\nv\r\n_\r\n"
    info = conn.execute_raw("INFO", "server")
    assert info.startswith(b"=") and b"\r\ntxt:# Server\r\n" in info
    # HELLO 2 goes back to RESP2
    hello2 = conn.execute("HELLO", "2")
    assert isinstance(hello2, list) and hello2[0:6:2] == HELLO_FIELDS[:3] and hello2[5] == 2
    assert conn.execute_raw("GET", "missing") == b"$-1\r\n"


def test_hello_errors_and_options(keywarden):
    conn = keywarden.raw()
    assert conn.execute_raw("HELLO", "4") == b"-NOPROTO unsupported protocol version\r\n"
    assert conn.execute_raw("HELLO", "abc") == (
        b"-ERR Protocol version is not an integer or out of range\r\n")
    assert conn.execute_raw("HELLO", "3", "SETNAME", "a b") == (
        b"-ERR Client names cannot contain spaces, newlines or special characters.\r\n")
    hello = conn.execute("HELLO", "2", "SETNAME", "alice")
    assert hello[4:6] == [b"proto", 2]
    assert conn.execute_raw("CLIENT", "GETNAME") == b"$5\r\nalice\r\n"
    # HELLO without a version answers with the current protocol
    assert conn.execute("HELLO")[4:6] == [b"proto", 2]


# --------------------------------------------------------------------------------------------
# slow and greedy clients
# --------------------------------------------------------------------------------------------

def test_client_pipelining_without_reading_does_not_stall_others(keywarden):
    """A client writes megabytes of commands and never reads; another client keeps working.

    Whether the server keeps reading the greedy client (buffering its replies, as Redis does)
    or stops reading it for a while (back-pressure) is its choice; the others must not wait.
    """
    greedy = keywarden.raw()
    chunk = encode_command("SET", "greedy", "x" * 64) * 1000 + encode_command("GET", "greedy") * 1000
    total_chunks = 60  # ~8 MB of requests, ~4 MB of replies nobody reads

    def flood():
        try:
            for _ in range(total_chunks):
                greedy.sock.sendall(chunk)
        except OSError:
            pass  # the test shut the socket down

    thread = threading.Thread(target=flood, daemon=True)
    thread.start()
    other = keywarden.raw()
    for i in range(200):
        assert other.execute_raw("SET", f"other:{i}", i) == b"+OK\r\n"
        assert other.execute("GET", f"other:{i}") == str(i).encode()
    greedy.sock.shutdown(socket.SHUT_RDWR)  # wakes a sendall blocked on a full socket buffer
    thread.join(10)
    assert not thread.is_alive()
    greedy.close()
    assert len(other.execute("KEYS", "other:*")) == 200
    assert_serving(keywarden)


def test_client_that_never_reads_can_disconnect_any_time(keywarden):
    for _ in range(3):
        greedy = keywarden.raw()
        greedy.send(encode_command("GET", "x") * 20000)
        greedy.close()
    assert_serving(keywarden)


# --------------------------------------------------------------------------------------------
# requirepass, maxclients, unix socket
# --------------------------------------------------------------------------------------------

NOAUTH = b"-NOAUTH Authentication required.\r\n"
WRONGPASS = b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"


@pytest.fixture(scope="module")
def protected(request):
    from conftest import start_server
    server = start_server(directives=[("requirepass", "s3cret")])
    request.addfinalizer(server.cleanup)
    return server


def test_requirepass_noauth(protected):
    conn = protected.raw()
    assert conn.execute_raw("PING") == NOAUTH
    assert conn.execute_raw("GET", "a") == NOAUTH
    conn.send(b"SET a b\r\n")
    assert conn.read_reply_bytes() == NOAUTH
    assert conn.execute_raw("HELLO", "3") == (
        b"-NOAUTH HELLO must be called with the client already authenticated, otherwise the "
        b"HELLO AUTH <user> <pass> option can be used to authenticate the client and select "
        b"the RESP protocol version at the same time\r\n")


def test_requirepass_auth(protected):
    conn = protected.raw()
    assert conn.execute_raw("AUTH") == b"-ERR wrong number of arguments for 'auth' command\r\n"
    assert conn.execute_raw("AUTH", "wrong") == WRONGPASS
    assert conn.execute_raw("AUTH", "default", "wrong") == WRONGPASS
    assert conn.execute_raw("AUTH", "nobody", "s3cret") == WRONGPASS
    assert conn.execute_raw("AUTH", "a", "b", "c") == b"-ERR syntax error\r\n"
    assert conn.execute_raw("GET", "a") == NOAUTH
    assert conn.execute_raw("AUTH", "s3cret") == b"+OK\r\n"
    assert conn.execute_raw("PING") == b"+PONG\r\n"
    other = protected.raw()
    assert other.execute_raw("AUTH", "default", "s3cret") == b"+OK\r\n"
    assert other.execute_raw("PING") == b"+PONG\r\n"


def test_requirepass_hello_auth(protected):
    conn = protected.raw()
    assert conn.execute_raw("HELLO", "3", "AUTH", "default", "wrong") == WRONGPASS
    hello = conn.execute("HELLO", "3", "AUTH", "default", "s3cret")
    assert isinstance(hello, Map) and hello[b"proto"] == 3
    assert conn.execute_raw("GET", "missing") == b"_\r\n"


def test_requirepass_limits_unauthenticated_requests(protected):
    conn = protected.raw()
    conn.send(b"*11\r\n")
    assert conn.read_until_close() == b"-ERR Protocol error: unauthenticated multibulk length\r\n"
    conn = protected.raw()
    conn.send(b"*1\r\n$16385\r\n")
    assert conn.read_until_close() == b"-ERR Protocol error: unauthenticated bulk length\r\n"
    assert protected.raw().execute_raw("PING") == NOAUTH


def test_requirepass_redis_py_client(protected):
    client = protected.client()  # the fixture knows the password
    assert client.set("a", "1") is True
    assert client.get("a") == b"1"


def test_maxclients_reached(server_factory):
    server = server_factory(("maxclients", "3"))
    first = server.raw()
    # wait until the start-up probe connection has gone, so exactly one client is connected
    deadline = time.monotonic() + 5
    while b"connected_clients:1\r\n" not in first.execute("INFO", "clients"):
        assert time.monotonic() < deadline, "the start-up probe connection never went away"
        time.sleep(0.01)
    others = [server.raw() for _ in range(2)]
    for conn in others:
        assert conn.execute_raw("PING") == b"+PONG\r\n"
    refused = server.raw()
    assert refused.read_until_close() == b"-ERR max number of clients reached\r\n"
    assert first.execute_raw("PING") == b"+PONG\r\n"
    # a slot frees up when someone leaves
    others[0].close()
    deadline = time.monotonic() + 5
    while True:
        conn = server.raw()
        try:
            if conn.execute_raw("PING") == b"+PONG\r\n":
                break
        except ConnectionClosed:
            pass
        conn.close()
        assert time.monotonic() < deadline, "a freed client slot was never reused"
        time.sleep(0.01)


def test_unix_socket(server_factory, tmp_path):
    path = str(tmp_path / "kw.sock")
    server = server_factory(("unixsocket", path), ("unixsocketperm", "700"))
    with RawConnection(unix_path=path) as conn:
        assert conn.execute_raw("SET", "via-unix", "1") == b"+OK\r\n"
    with server.raw() as tcp:
        assert tcp.execute_raw("GET", "via-unix") == b"$1\r\n1\r\n"
