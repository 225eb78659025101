"""Hostile Lua: scripts that try to crash the server, escape the sandbox or outlive SCRIPT KILL.

Every case runs on keywarden and on a stock redis-server 7.0, replies compared byte for byte in
RESP2 and RESP3, and keywarden must still answer afterwards. The few scripts that crash Redis
7.0.15 itself (an error object whose fields raise, an empty error table) are checked on
keywarden alone: a clear error and a live server.
"""

from __future__ import annotations

import sys
import threading
import time

import pytest

from conftest import ReplyError

NESTED_JSON = "[" * 300 + "]" * 300

# Each script runs as EVAL <script> 0.
HOSTILE = [
    # The reply conversion reads tables raw: no metamethod of the script's runs from C++.
    "return _G",
    "return string",
    "return setmetatable({}, {__index=function() error('x') end})",
    "return setmetatable({}, {__index=function() return redis.call('set','a','b') end})",
    "return setmetatable({}, {__len=function() error('x') end, __eq=function() error('y') end})",
    "local t = setmetatable({}, {__index=function(t,k) error('boom') end}); return {1, t, 3}",
    "return setmetatable({1,2,3}, {__index=function(t,k) error('boom') end})",
    "return {err=setmetatable({}, {__index=function() error('q') end})}",
    "return setmetatable({}, {__index={err='FAKE from metatable'}})",
    "return {map=setmetatable({}, {__index=function() error('m') end})}",
    "return {ok={}}",
    "local t = {}; t[1] = t; return t",
    "local t = {}; local c = t; for i=1,100000 do c[1] = {}; c = c[1] end; return t",
    "return coroutine.create(function() end)",
    "return function() end",
    "return print",
    # Precompiled bytecode never loads; loaded text runs in the protected globals.
    "return loadstring(string.dump(function() return 1 end))()",
    "return loadstring(string.dump(function() return 1 end))",
    "return {loadstring(string.dump(function() return 1 end))}",
    "return select(2, loadstring(string.dump(function() end)))",
    "return select(2, loadstring('\\027abc'))",
    "return {pcall(loadstring, string.dump(function() end))}",
    "local n=0 return select(2, load(function() n=n+1 if n==1 then "
    "return string.dump(function() return 1 end) end return nil end))",
    "return {load(function() return nil end)}",
    "return select(2, loadstring('x x', 'chunk'))",
    "local f = loadstring('return 7'); return f()",
    "local f = loadstring('x = 5'); f(); return x",
    "local f = loadstring('x = 5'); return pcall(f)",
    "local f = loadstring('return KEYS'); return type(f())",
    # The globals, the libraries and the string metatable cannot be changed or bypassed.
    "x = 1",
    "_G.x = 1",
    "rawset(_G, 'x', 1)",
    "return setmetatable(_G, nil)",
    "return setmetatable(string, {})",
    "return setmetatable(getmetatable(''), {})",
    "return rawset(getmetatable(''), '__index', {})",
    "return rawset(string, 'x', {})",
    "getmetatable('').__index = {}",
    "getmetatable('').__index.upper = nil",
    "local mt = getmetatable(''); mt.__index = function() return 1 end; return ('x').y",
    "return getmetatable('').__metatable",
    "return rawequal(getmetatable('').__index, string)",
    "return ('x'):upper()",
    "return getmetatable(_G)",
    "return rawget(_G, 'redis') ~= nil",
    "return {next(_G)}",
    "return type(next(string))",
    "string.upper = nil",
    "redis.call = nil",
    "local r = redis; r.call = function() end",
    "KEYS[1] = 'x'; return KEYS[1]",
    # Errors of every shape.
    "error({err='MYERR hello'})",
    "error()",
    "error(12)",
    "return redis.error_reply(setmetatable({}, {__tostring=function() return 'x' end}))",
    "return redis.call('get', setmetatable({}, {__tostring=function() error('ts') end}))",
    "return pcall(function() local t = setmetatable({}, {__index = function() error('q') end}); "
    "return t.x end)",
    "return string.gsub('abc', '.', setmetatable({}, {__index=function() error('g') end}))",
    f"return cjson.decode('{NESTED_JSON}')",
    "return cmsgpack.unpack(string.rep(string.char(0x91), 100000))",
    "return unpack({1,2,3}, 1, 1e8)",
    # Blocking commands and commands that cannot run from scripts.
    "return redis.call('blpop', 'nolist', 0)",
    "return redis.call('brpop', 'nolist', 0)",
    "return redis.call('blmove', 'a', 'b', 'left', 'left', 0)",
    "return redis.call('bzpopmin', 'z', 0)",
    "return redis.call('eval', 'return 1', 0)",
    "return redis.call('multi')",
    "return coroutine.wrap(function() return redis.call('ping') end)()",
]

# Scripts that take redis-server 7.0.15 down: keywarden answers them with an error.
CRASH_REDIS = [
    "error({})",
    "error(setmetatable({}, {__index=function() error('in err') end}))",
    "error(setmetatable({}, {__tostring=function() error('ts') end}))",
]


def run_scripts(server, scripts, protocol: int) -> list[bytes]:
    # A table that contains itself comes back nested to Redis's depth limit (7000 levels).
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 40000))
    conn = server.raw()
    if protocol == 3:
        conn.send_command("HELLO", "3")
        conn.read_reply()
    replies = []
    for script in scripts:
        conn.send_command("EVAL", script, "0")
        replies.append(conn.read_reply_bytes())
    conn.send_command("PING")
    replies.append(conn.read_reply_bytes())
    return replies


@pytest.mark.parametrize("protocol", [2, 3])
def test_hostile_scripts_match_redis(keywarden, reference_redis, protocol):
    ours = run_scripts(keywarden, HOSTILE, protocol)
    theirs = run_scripts(reference_redis, HOSTILE, protocol)
    for script, mine, reference in zip(HOSTILE + ["PING"], ours, theirs):
        assert mine == reference, f"{script!r}: keywarden {mine!r}, redis {reference!r}"
    assert keywarden.client().ping()


def test_scripts_that_crash_redis_get_an_error(keywarden):
    conn = keywarden.raw()
    for script in CRASH_REDIS:
        conn.send_command("EVAL", script, "0")
        reply = conn.read_reply()
        assert isinstance(reply, ReplyError), (script, reply)
        assert reply.startswith(b"ERR "), (script, reply)
    assert keywarden.client().ping()


def test_failed_escapes_leave_nothing_behind(keywarden):
    """What the hostile scripts tried to change is unchanged for the next script."""
    client = keywarden.client()
    run_scripts(keywarden, HOSTILE, 2)
    assert client.eval("return type(rawget(_G, 'x'))", 0) == b"nil"
    assert client.eval("return ('abc'):upper()", 0) == b"ABC"
    assert client.eval("return type(string.upper)", 0) == b"function"
    assert client.eval("return type(redis.call)", 0) == b"function"
    assert client.eval("return getmetatable('').__index == string", 0) == 1


def test_function_results_and_errors_are_converted_safely(keywarden):
    client = keywarden.client()
    library = """#!lua name=hostile
redis.register_function('globals', function() return _G end)
redis.register_function('trap', function()
  return setmetatable({}, {__index=function() error('trap') end})
end)
redis.register_function('raise', function()
  error(setmetatable({}, {__index=function() error('inner') end}))
end)
"""
    assert client.execute_command("FUNCTION", "LOAD", "REPLACE", library) == b"hostile"
    assert client.execute_command("FCALL", "globals", 0) == []
    assert client.execute_command("FCALL", "trap", 0) == []
    with pytest.raises(Exception):
        client.execute_command("FCALL", "raise", 0)
    bad_load = "#!lua name=bad\nerror(setmetatable({}, {__index=function() error('x') end}))"
    with pytest.raises(Exception):
        client.execute_command("FUNCTION", "LOAD", bad_load)
    assert client.ping()
    client.execute_command("FUNCTION", "DELETE", "hostile")


# Scripts that catch the kill: with pcall, with error() in a loop, in a coroutine.
UNCATCHABLE_KILLS = [
    "while true do pcall(function() while true do end end) end",
    "local i = 0 while true do i = i + 1 pcall(error, 'x') end",
    "while true do coroutine.resume(coroutine.create(function() while true do end end)) end",
    "local co = coroutine.wrap(function() while true do pcall(function() end) end end) co()",
    "while true do xpcall(function() while true do end end, function() return 1 end) end",
]


def kill_scenario(server, script: str) -> list:
    # The runner waits long for its reply: Redis checks for a kill once per 100000 Lua
    # instructions of the main coroutine, and the coroutine case spends billions of instructions
    # in short-lived coroutines first (9 s on a quiet machine, over 10 s on a loaded one).
    runner, other = server.raw(timeout=90), server.raw()
    other.send_command("CONFIG", "SET", "busy-reply-threshold", "50")
    out = [other.read_reply_bytes()]
    runner.send_command("EVAL", script, "0")
    deadline = time.time() + 10
    while True:
        other.send_command("SCRIPT", "KILL")
        reply = other.read_reply_bytes()
        if not reply.startswith(b"-NOTBUSY") or time.time() > deadline:
            break
        time.sleep(0.05)
    out.append(reply)
    out.append(runner.read_reply_bytes())
    runner.send_command("PING")
    out.append(runner.read_reply_bytes())
    other.send_command("CONFIG", "SET", "busy-reply-threshold", "5000")
    out.append(other.read_reply_bytes())
    return out


@pytest.mark.parametrize("script", UNCATCHABLE_KILLS)
def test_killed_script_dies_even_when_it_catches_errors(keywarden, reference_redis, script):
    assert kill_scenario(keywarden, script) == kill_scenario(reference_redis, script)


def test_client_gone_while_its_script_is_busy(keywarden):
    """The script's client disconnects while busy: the script finishes, the server serves."""
    client = keywarden.client()
    client.config_set("busy-reply-threshold", 50)
    runner = keywarden.raw()
    runner.send_command("CLIENT", "ID")
    runner_id = runner.read_reply()
    runner.send_command(
        "EVAL",
        "local t = redis.call('time') local start = t[1] * 1000000 + t[2] "
        "while true do t = redis.call('time') "
        "if t[1] * 1000000 + t[2] - start > 300000 then break end end return 1", "0")
    time.sleep(0.1)
    runner.close()
    deadline = time.time() + 10
    while True:
        try:
            assert client.ping()
            break
        except Exception as error:  # -BUSY while the script runs
            assert "BUSY" in str(error)
            assert time.time() < deadline
            time.sleep(0.05)
    listing = client.execute_command("CLIENT", "LIST").decode()
    assert f"id={runner_id} " not in listing
    client.config_set("busy-reply-threshold", 5000)


def test_many_kills_in_parallel_clients_keep_being_served(keywarden):
    """Other clients get -BUSY (never a hang) while a hostile script loops, then normal replies."""
    client = keywarden.client()
    client.config_set("busy-reply-threshold", 50)
    runner = keywarden.raw()
    runner.send_command("EVAL", UNCATCHABLE_KILLS[0], "0")
    seen_busy = threading.Event()

    def probe():
        probe_client = keywarden.client()
        for _ in range(200):
            try:
                probe_client.get("k")
            except Exception as error:
                if "BUSY" in str(error):
                    seen_busy.set()
                    return
            time.sleep(0.01)

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join(10)
    assert seen_busy.is_set()
    assert client.execute_command("SCRIPT", "KILL") == b"OK"
    reply = runner.read_reply()
    assert isinstance(reply, ReplyError) and b"Script killed by user" in reply
    assert client.set("k", "v") and client.get("k") == b"v"
    client.config_set("busy-reply-threshold", 5000)
