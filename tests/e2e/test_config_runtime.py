"""CONFIG SET of port and bind at run time, as Redis 7 allows: the new sockets open before the
old ones close, and a failure leaves the server listening where it was."""

import socket

import pytest
import redis

from conftest import HOST, free_port


def connectable(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(2)
        return probe.connect_ex((HOST, port)) == 0


@pytest.mark.parametrize("binary", ["keywarden", "redis"])
def test_config_set_port_moves_the_listener(server_factory, binary):
    from conftest import redis_binary
    server = server_factory(binary=None if binary == "keywarden" else redis_binary())
    old_port, new_port = server.port, free_port()
    assert server.client().config_set("port", new_port)
    moved = redis.Redis(host=HOST, port=new_port)
    assert moved.ping()
    assert moved.config_get("port") == {"port": str(new_port)}
    assert not connectable(old_port)


@pytest.mark.parametrize("binary", ["keywarden", "redis"])
def test_config_set_port_in_use_keeps_the_old_listener(server_factory, binary):
    from conftest import redis_binary
    server = server_factory(binary=None if binary == "keywarden" else redis_binary())
    with socket.socket() as occupier:
        occupier.bind((HOST, 0))
        occupier.listen(1)
        busy = occupier.getsockname()[1]
        with pytest.raises(redis.ResponseError,
                           match=r"^CONFIG SET failed \(possibly related to argument 'port'\) - "
                                 r"Unable to listen on this port\. Check server logs\.$"):
            server.client().config_set("port", busy)
    assert server.client().ping()
    assert server.client().config_get("port") == {"port": str(server.port)}


def test_config_set_bind_unavailable_address_keeps_the_old_listener(server_factory):
    server = server_factory()
    # An address no interface here has: binding fails before any packet could be sent.
    with pytest.raises(redis.ResponseError, match="Failed to bind to specified addresses"):
        server.client().config_set("bind", "192.0.2.1")
    assert server.client().ping()
    assert server.client().config_set("bind", "127.0.0.1")
    assert server.client().ping()
