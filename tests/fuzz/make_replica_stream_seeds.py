#!/usr/bin/env python3
"""Writes the seed corpus of the replica_stream fuzz target (tests/fuzz/replica_stream_fuzz.cc).

Each seed is a settings byte, a split byte (and with settings bit 3 the first write's length),
then what a primary sends its replica: the
handshake replies, a PSYNC answer, an RDB payload and the command stream. Run from anywhere:
  tests/fuzz/make_replica_stream_seeds.py
"""
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "corpus" / "replica_stream"
REPLID = b"0123456789abcdef0123456789abcdef01234567"
OTHER_ID = b"fedcba9876543210fedcba9876543210fedcba98"
MARK = b"m" * 40
REPLICA_ID = b"feedfacefeedfacefeedfacefeedfacefeedface"  # kReplicaId in the target


def command(*args):
    out = b"*%d\r\n" % len(args)
    for arg in args:
        out += b"$%d\r\n%s\r\n" % (len(arg), arg)
    return out


def rdb_string(value):
    assert len(value) < 64
    return bytes([len(value)]) + value


def aux(name, value):
    return b"\xfa" + rdb_string(name) + rdb_string(value)


# A small image: two keys in db 0, one in db 2, saved without a checksum (eight zero bytes).
IMAGE = (b"REDIS0010" + aux(b"redis-ver", b"7.0.15") + b"\xfe\x00\xfb\x02\x00"
         + b"\x00" + rdb_string(b"k1") + rdb_string(b"v1")
         + b"\x00" + rdb_string(b"k2") + rdb_string(b"12345")
         + b"\xfe\x02\xfb\x01\x00" + b"\x00" + rdb_string(b"k3") + rdb_string(b"v3")
         + b"\xff" + b"\x00" * 8)
# The same with the replication AUX fields: the stream starts in db 3.
IMAGE_REPL = (b"REDIS0010" + aux(b"repl-stream-db", b"3") + aux(b"repl-id", REPLID)
              + aux(b"repl-offset", b"100") + b"\xfe\x00\xfb\x01\x00" + b"\x00"
              + rdb_string(b"k1") + rdb_string(b"v1") + b"\xff" + b"\x00" * 8)

HANDSHAKE = b"+PONG\r\n+OK\r\n+OK\r\n"          # PING, listening-port, capa
HANDSHAKE_AUTH = b"-NOAUTH Authentication required.\r\n+OK\r\n+OK\r\n+OK\r\n"
HANDSHAKE_IP = b"+PONG\r\n+OK\r\n+OK\r\n+OK\r\n"  # PING, listening-port, ip-address, capa
FULLRESYNC = b"+FULLRESYNC " + REPLID + b" 0\r\n"

STREAM = (command(b"SELECT", b"0") + command(b"SET", b"a", b"1")
          + command(b"PING") + command(b"MULTI") + command(b"INCR", b"a")
          + command(b"SET", b"b", b"2") + command(b"EXEC")
          + command(b"REPLCONF", b"GETACK", b"*") + command(b"SELECT", b"5")
          + command(b"LPUSH", b"l", b"x", b"y") + command(b"EXPIRE", b"l", b"100")
          + command(b"DEL", b"a") + command(b"REPLCONF", b"GETACK", b"*"))

EOF_SYNC = HANDSHAKE + FULLRESYNC + b"$EOF:" + MARK + b"\r\n" + IMAGE + MARK

SEEDS = {
    # settings, split, stream
    "full-sync-bulk": (0, 0, HANDSHAKE + FULLRESYNC + b"$%d\r\n" % len(IMAGE) + IMAGE + STREAM),
    "full-sync-bulk-split": (0, 7, HANDSHAKE + FULLRESYNC + b"\n\n$%d\r\n" % len(IMAGE) + IMAGE
                             + STREAM),
    "full-sync-eof": (4, 0, HANDSHAKE + FULLRESYNC + b"$EOF:" + MARK + b"\r\n" + IMAGE + MARK),
    "full-sync-eof-split": (4, 3, HANDSHAKE + FULLRESYNC + b"$EOF:" + MARK + b"\r\n" + IMAGE
                            + MARK),
    # The stream in a write of its own after the mark (settings bit 3: the first write's length).
    "full-sync-eof-then-stream": (12, 0, EOF_SYNC + STREAM),
    # The stream in the same read as the mark: the payload never ends (the link times out).
    "full-sync-eof-stream-same-read": (4, 0, EOF_SYNC + STREAM),
    "full-sync-stream-db": (0, 0, HANDSHAKE + FULLRESYNC + b"$%d\r\n" % len(IMAGE_REPL)
                            + IMAGE_REPL + command(b"SET", b"in-db-3", b"x")
                            + command(b"REPLCONF", b"GETACK", b"*")),
    "auth-ip-full-sync": (3, 0, HANDSHAKE_AUTH[:-len(b"+OK\r\n")] + b"+OK\r\n+OK\r\n"
                          + FULLRESYNC + b"$%d\r\n" % len(IMAGE) + IMAGE + STREAM),
    "continue": (0, 0, HANDSHAKE + b"+CONTINUE\r\n" + STREAM),
    "continue-new-id": (0, 5, HANDSHAKE + b"+CONTINUE " + OTHER_ID + b"\r\n" + STREAM),
    "continue-split-multi": (0, 2, HANDSHAKE + b"+CONTINUE\r\n" + command(b"MULTI")
                             + command(b"SET", b"x", b"1")),
    # Broken ones: the replica drops the link, nothing else.
    "ping-error": (0, 0, b"-ERR nope\r\n"),
    "fullresync-bad-syntax": (0, 0, HANDSHAKE + b"+FULLRESYNC abc 12\r\n"),
    "bad-bulk-length": (0, 0, HANDSHAKE + FULLRESYNC + b"$-5\r\n"),
    "payload-not-rdb": (0, 0, HANDSHAKE + FULLRESYNC + b"$10\r\nNOTANRDB!!" + STREAM),
    "payload-truncated": (0, 0, HANDSHAKE + FULLRESYNC + b"$%d\r\n" % (len(IMAGE) + 5) + IMAGE),
    "psync-loading": (0, 0, HANDSHAKE + b"-LOADING Redis is loading the dataset\r\n"),
    "stream-protocol-error": (0, 0, HANDSHAKE + b"+CONTINUE\r\n" + b"*2\r\n$3\r\nGET\r\n$x\r\n"),
    "stream-unknown-and-replicaof": (0, 0, HANDSHAKE + b"+CONTINUE\r\n"
                                     + command(b"NOSUCHCOMMAND") + command(b"REPLICAOF", b"NO", b"ONE")
                                     + command(b"PSYNC", b"?", b"-1")
                                     + command(b"REPLCONF", b"listening-port", b"1")
                                     + command(b"WAIT", b"1", b"0")),
    # The replica's own history ID is fixed by the target: the primary asks it to take over.
    "stream-psync-failover": (0, 0, HANDSHAKE + b"+CONTINUE\r\n" + command(b"SET", b"a", b"1")
                              + command(b"PSYNC", REPLICA_ID, b"0", b"FAILOVER")
                              + command(b"SET", b"b", b"2")),
}

OUT.mkdir(parents=True, exist_ok=True)
for name, (settings, split, stream) in SEEDS.items():
    header = bytes([settings, split])
    if settings & 8:
        header += len(EOF_SYNC).to_bytes(2, "big")
    (OUT / name).write_bytes(header + stream)
print(f"wrote {len(SEEDS)} seeds to {OUT}")
