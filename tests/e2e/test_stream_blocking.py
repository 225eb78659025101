"""Blocking XREAD and XREADGROUP with several clients, keywarden against a stock redis-server.

The scripts use conftest.run_client_script's language (clients A–D); every reply is compared
byte for byte. IDs are explicit so that both servers produce the same ones.
"""

from __future__ import annotations

import pytest

from conftest import assert_same_script_replies

SCENARIOS: dict[str, str] = {
    "xread-woken-by-xadd": """
        A> XREAD BLOCK 0 STREAMS s $
        A?
        B XADD s 1-1 a 1
        A<
        B XLEN s
        """,
    "xread-dollar-means-new-only": """
        B XADD s 1-1 a 1
        A> XREAD BLOCK 0 STREAMS s $
        A?
        B XADD s 2-1 b 2
        A<
        """,
    "xread-served-at-once": """
        B XADD s 1-1 a 1
        A XREAD BLOCK 0 STREAMS s 0
        A XREAD BLOCK 20 STREAMS s 1-1
        A XREAD BLOCK 20 STREAMS s $
        """,
    "xread-fifo": """
        A> XREAD BLOCK 0 STREAMS s $
        B> XREAD BLOCK 0 COUNT 1 STREAMS s $
        C> XREAD BLOCK 0 STREAMS s 0
        D XADD s 1-1 a 1
        A<
        B<
        C<
        """,
    "xread-several-keys": """
        A> XREAD BLOCK 0 STREAMS s1 s2 s3 $ $ $
        B XADD s2 1-1 b 1
        A<
        B XADD s3 5-1 c 1
        A XREAD BLOCK 0 STREAMS s1 s2 s3 0 0 0
        """,
    "xread-type-change-keeps-waiting": """
        A> XREAD BLOCK 0 STREAMS s $
        B SET s x
        A?
        B DEL s
        A?
        B XADD s 1-1 a 1
        A<
        """,
    "xread-multi-xadd-then-xdel": """
        A> XREAD BLOCK 0 STREAMS s $
        B MULTI
        B XADD s 1-1 a 1
        B XDEL s 1-1
        B EXEC
        A?
        B XADD s 2-1 a 2
        A<
        """,
    "xreadgroup-woken": """
        B XGROUP CREATE s g $ MKSTREAM
        A> XREADGROUP GROUP g alice BLOCK 0 STREAMS s >
        C> XREADGROUP GROUP g bob BLOCK 0 STREAMS s >
        A?
        B XADD s 1-1 a 1
        A<
        C?
        B XADD s 2-1 a 2
        C<
        B XPENDING s g
        B XINFO GROUPS s
        """,
    "xreadgroup-noack-and-count": """
        B XGROUP CREATE s g $ MKSTREAM
        A> XREADGROUP GROUP g alice COUNT 1 NOACK BLOCK 0 STREAMS s >
        B MULTI
        B XADD s 1-1 a 1
        B XADD s 2-1 a 2
        B EXEC
        A<
        B XPENDING s g
        """,
    "xreadgroup-key-deleted": """
        B XGROUP CREATE s g $ MKSTREAM
        A> XREADGROUP GROUP g alice BLOCK 0 STREAMS s >
        B DEL s
        A<
        """,
    "xreadgroup-key-overwritten": """
        B XGROUP CREATE s g $ MKSTREAM
        A> XREADGROUP GROUP g alice BLOCK 0 STREAMS s >
        B SET s x
        A<
        """,
    "xreadgroup-group-destroyed": """
        B XGROUP CREATE s g $ MKSTREAM
        A> XREADGROUP GROUP g alice BLOCK 0 STREAMS s >
        B XGROUP DESTROY s g
        A<
        """,
    "xreadgroup-setid-backwards-waits-for-xadd": """
        B XADD s 1-1 a 1
        B XGROUP CREATE s g $
        A> XREADGROUP GROUP g alice BLOCK 0 STREAMS s >
        B XGROUP SETID s g 0
        A?
        B XADD s 2-1 b 2
        A<
        """,
    "xread-xsetid-waits-for-xadd": """
        B XADD s 1-1 a 1
        A> XREAD BLOCK 0 STREAMS s $
        B XSETID s 5-0
        A?
        B XADD s 6-1 b 2
        A<
        """,
    "xreadgroup-other-consumer-takes-it": """
        B XGROUP CREATE s g $ MKSTREAM
        A> XREADGROUP GROUP g alice BLOCK 0 STREAMS s >
        C> XREADGROUP GROUP g bob BLOCK 0 STREAMS s >
        B XADD s 1-1 a 1
        A<
        C?
        B XADD s 2-1 b 2
        C<
        """,
    "timeouts": """
        A XREAD BLOCK 20 STREAMS s $
        A XREAD BLOCK 20 STREAMS s 0
        B XGROUP CREATE s g $ MKSTREAM
        A XREADGROUP GROUP g c BLOCK 20 STREAMS s >
        """,
    "inside-multi": """
        A MULTI
        A XREAD BLOCK 0 STREAMS s $
        A XREADGROUP GROUP g c BLOCK 0 STREAMS s >
        A EXEC
        B XGROUP CREATE s g $ MKSTREAM
        A MULTI
        A XREADGROUP GROUP g c BLOCK 0 STREAMS s >
        A EXEC
        """,
}


@pytest.mark.parametrize("protocol", [2, 3])
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario(keywarden, reference_redis, name, protocol):
    assert_same_script_replies(keywarden, reference_redis, name, SCENARIOS[name], protocol)
