"""CLIENT SETINFO and CLIENT NO-TOUCH, which keywarden answers as Redis 7.2 does (a stock 7.0
answers "unknown subcommand"), so these run against keywarden only."""

import pytest
import redis


def test_setinfo_accepts_library_name_and_version(keywarden):
    client = keywarden.client()
    assert client.execute_command("CLIENT", "SETINFO", "LIB-NAME", "redis-py") == b"OK"
    assert client.execute_command("CLIENT", "SETINFO", "lib-ver", "4.3.4") == b"OK"


def test_setinfo_errors(keywarden):
    client = keywarden.client()
    with pytest.raises(redis.ResponseError, match=r"^Unrecognized option 'foo'$"):
        client.execute_command("CLIENT", "SETINFO", "foo", "x")
    with pytest.raises(redis.ResponseError,
                       match=r"^lib-name cannot contain spaces, newlines or special characters\.$"):
        client.execute_command("CLIENT", "SETINFO", "LIB-NAME", "two words")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'client|setinfo'"):
        client.execute_command("CLIENT", "SETINFO", "LIB-NAME")


def test_no_touch_sets_the_client_flag(keywarden):
    client = keywarden.client()
    assert client.execute_command("CLIENT", "NO-TOUCH", "ON") == b"OK"
    assert b"flags=T" in client.execute_command("CLIENT", "INFO")
    assert client.execute_command("CLIENT", "NO-TOUCH", "OFF") == b"OK"
    assert b"flags=N" in client.execute_command("CLIENT", "INFO")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        client.execute_command("CLIENT", "NO-TOUCH", "maybe")


def test_no_touch_leaves_idle_time_alone(keywarden):
    """A read under NO-TOUCH must not refresh the key's access time; TOUCH still does."""
    client = keywarden.client()
    client.set("k", "v")
    client.execute_command("DEBUG", "SLEEP", "1.1")
    client.execute_command("CLIENT", "NO-TOUCH", "ON")
    client.get("k")
    assert client.object("idletime", "k") >= 1
    client.touch("k")
    assert client.object("idletime", "k") == 0
