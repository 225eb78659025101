"""COMMAND's metadata against a stock redis-server 7.0: cluster-aware clients and proxies route
by it, so for every command and subcommand both servers have, COMMAND INFO (name, arity,
flags, first/last/step, ACL categories, tips, key specifications) and COMMAND DOCS (summary,
since, group, complexity, doc flags, deprecation, history, argument tree) must be the same
bytes, in RESP2 and in RESP3.

The parametrised rows are every command and subcommand of Redis's metadata tables
(src/commands/command_metadata.cc, generated from redis-server 7.0 by
scripts/gen_command_metadata.py); a row keywarden lacks is skipped, so the skip count is the
number of Redis commands and subcommands not implemented yet. Each server gets one connection
for the whole module, and a summary line (rows compared, rows identical) is printed at the end.

A container's subcommands come back in the order of Redis's hash table, which is seeded at
random on every start: for containers the subcommand lists are compared as sets, restricted to
the subcommands both servers have (each of those is a row of its own, compared byte for byte).
COMMAND, COMMAND LIST and COMMAND DOCS without names are in hash order too and are compared as
sets.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import Map, RawConnection, parse_replies

METADATA = Path(__file__).resolve().parents[2] / "src" / "commands" / "command_metadata.cc"

# Rows where keywarden deliberately answers differently from Redis 7.0, with the reason.
ALLOWED_DIFFERENCES: dict[str, str] = {
    # ZRANK and ZREVRANK take Redis 7.2's optional WITHSCORE, so their arity is 7.2's -3 where
    # 7.0 has 3. Their documentation stays 7.0's (the metadata tables are 7.0's throughout).
    "zrank": "arity -3, Redis 7.2's WITHSCORE",
    "zrevrank": "arity -3, Redis 7.2's WITHSCORE",
}


def redis_command_names() -> list[str]:
    """Full names of the reference's commands and subcommands, as the generated tables list them."""
    text = METADATA.read_text()
    table = text[text.index("constexpr CommandMetadata kCommandMetadata[]"):]
    return re.findall(r'^    \{"([^"]+)", ', table, flags=re.MULTILINE)


NAMES = redis_command_names()
SUMMARY = {"compared": 0, "identical": 0, "differences": []}


class Pair:
    """One connection to each server, kept for the module."""

    def __init__(self, keywarden, reference):
        self.keywarden = RawConnection(keywarden.host, keywarden.port)
        self.reference = RawConnection(reference.host, reference.port)
        self.keywarden_names = set(self._names(self.keywarden))
        self.reference_names = set(self._names(self.reference))

    @staticmethod
    def _names(conn: RawConnection) -> list[str]:
        names = []
        for info in conn.execute("COMMAND", "INFO"):
            names.append(info[0].decode())
            names.extend(sub[0].decode() for sub in info[9])
        return names

    def both(self, *args) -> tuple[bytes, bytes]:
        return self.keywarden.execute_raw(*args), self.reference.execute_raw(*args)

    def close(self) -> None:
        self.keywarden.close()
        self.reference.close()


@pytest.fixture(scope="module")
def pair(_keywarden_module, _reference_module, request):
    servers = Pair(_keywarden_module.get(), _reference_module.get())
    yield servers
    servers.close()
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None or not SUMMARY["compared"]:
        return
    # Output capture is on during fixture teardown: lift it for the summary line.
    with capture.global_and_fixture_disabled():
        reporter.write_line("")
        reporter.write_line(
            f"COMMAND parity: {SUMMARY['compared']} rows compared, {SUMMARY['identical']} "
            f"identical, {len(SUMMARY['differences'])} allowed differences "
            f"({', '.join(SUMMARY['differences']) or 'none'}); "
            f"{len(set(NAMES) - servers.keywarden_names)} Redis commands and subcommands "
            f"not in keywarden; keywarden only: "
            f"{', '.join(sorted(servers.keywarden_names - servers.reference_names)) or 'none'}")


def parse(raw: bytes):
    (value,) = parse_replies(raw)
    return value


def _subcommand_pairs(value):
    """(name, entry) pairs of a DOCS "subcommands" value, RESP2 flat list or RESP3 map."""
    if isinstance(value, Map):
        return list(value.items())
    return [(value[i], value[i + 1]) for i in range(0, len(value), 2)]


def normalise(kind: str, value, shared: set[str]):
    """A container's reply with its subcommands sorted and limited to `shared`."""
    if kind == "INFO":
        (info,) = value
        info = list(info)
        subs = [sub for sub in info[9] if sub[0].decode() in shared]
        info[9] = sorted(subs, key=lambda sub: sub[0])
        return info
    ((name, docs),) = _subcommand_pairs(value)
    if isinstance(docs, Map):
        docs = dict(docs)
        pairs = _subcommand_pairs(docs.pop(b"subcommands"))
    else:
        docs = list(docs)
        index = docs.index(b"subcommands")
        pairs = _subcommand_pairs(docs[index + 1])
        docs[index + 1] = None
    filtered = sorted((k, v) for k, v in pairs if k.decode() in shared)
    return name, docs, filtered


@pytest.mark.parametrize("name", NAMES)
def test_command_info_and_docs_match_redis(pair, name):
    if name not in pair.keywarden_names:
        pytest.skip(f"keywarden lacks {name}")
    prefix = name + "|"
    shared = {n for n in pair.keywarden_names & pair.reference_names if n.startswith(prefix)}
    is_container = any(n.startswith(prefix) for n in pair.reference_names)
    differences = []
    for protocol in (2, 3):
        pair.both("HELLO", str(protocol))
        for kind in ("INFO", "DOCS"):
            mine, theirs = pair.both("COMMAND", kind, name)
            if is_container:
                mine = normalise(kind, parse(mine), shared)
                theirs = normalise(kind, parse(theirs), shared)
            if mine != theirs:
                differences.append((protocol, kind, mine, theirs))
    pair.both("HELLO", "2")
    SUMMARY["compared"] += 1
    if not differences:
        SUMMARY["identical"] += 1
        return
    if name in ALLOWED_DIFFERENCES:
        SUMMARY["differences"].append(name)
        return
    protocol, kind, mine, theirs = differences[0]
    assert mine == theirs, f"COMMAND {kind} {name} in RESP{protocol} differs"


def test_allowed_differences_are_still_differences(pair):
    # An entry of the allow-list that has become identical must leave it.
    for name in ALLOWED_DIFFERENCES:
        mine, theirs = pair.both("COMMAND", "INFO", name)
        docs_mine, docs_theirs = pair.both("COMMAND", "DOCS", name)
        assert (mine, docs_mine) != (theirs, docs_theirs), f"{name} is identical now"


# --------------------------------------------------------------------------------------------
# COMMAND, COUNT, LIST, INFO and DOCS over many commands
# --------------------------------------------------------------------------------------------

def top_level(names: set[str]) -> set[str]:
    return {name for name in names if "|" not in name}


def test_command_count_info_and_docs_list_every_command(pair):
    for conn, names in ((pair.keywarden, pair.keywarden_names),
                        (pair.reference, pair.reference_names)):
        everything = conn.execute("COMMAND")
        assert conn.execute("COMMAND", "INFO") == everything
        assert conn.execute("COMMAND", "COUNT") == len(everything) == len(top_level(names))
        assert {info[0].decode() for info in everything} == top_level(names)
        assert set(n.decode() for n in conn.execute("COMMAND", "LIST")) == names
        docs = conn.execute("COMMAND", "DOCS")
        assert {docs[i].decode() for i in range(0, len(docs), 2)} == top_level(names)


@pytest.mark.parametrize("protocol", [2, 3])
def test_command_and_docs_without_names_match_redis_entry_by_entry(pair, protocol):
    # COMMAND and COMMAND DOCS list every command in Redis's hash order: compare them entry by
    # entry, on the commands both servers have (containers with their shared subcommands).
    shared = pair.keywarden_names & pair.reference_names
    pair.both("HELLO", str(protocol))
    try:
        infos = [parse(raw) for raw in pair.both("COMMAND")]
        docs = [parse(raw) for raw in pair.both("COMMAND", "DOCS")]
    finally:
        pair.both("HELLO", "2")
    mine_info, theirs_info = ({info[0].decode(): info for info in reply} for reply in infos)
    mine_docs, theirs_docs = ({k.decode(): v for k, v in _subcommand_pairs(reply)}
                              for reply in docs)
    compared = 0
    for name in sorted(top_level(shared)):
        if name in ALLOWED_DIFFERENCES:
            continue
        prefix = name + "|"
        subs = {n for n in shared if n.startswith(prefix)}
        assert (normalise("INFO", [mine_info[name]], subs)
                == normalise("INFO", [theirs_info[name]], subs)), name
        doc_pair = [Map({name.encode(): entry}) if protocol == 3 else [name.encode(), entry]
                    for entry in (mine_docs[name], theirs_docs[name])]
        if any(n.startswith(prefix) for n in pair.reference_names):
            assert normalise("DOCS", doc_pair[0], subs) == normalise("DOCS", doc_pair[1], subs)
        else:
            assert doc_pair[0] == doc_pair[1], name
        compared += 1
    assert compared > 150


@pytest.mark.parametrize("args", [
    ("COMMAND", "INFO", "nosuch"),
    ("COMMAND", "INFO", "get", "nosuch", "config|get", "config|nosuch", "get|x", "config|get|x",
     "CONFIG|GET", "Get"),
    ("COMMAND", "INFO", ""),
    ("COMMAND", "INFO", "|"),
    ("COMMAND", "DOCS", "nosuch"),
    ("COMMAND", "DOCS", "get", "nosuch", "config|get", "get|x", "SET"),
    ("COMMAND", "DOCS", "config|nosuch"),
    ("COMMAND", "COUNT", "x"),
    ("COMMAND", "LIST", "x"),
    ("COMMAND", "LIST", "FILTERBY"),
    ("COMMAND", "LIST", "FILTERBY", "PATTERN"),
    ("COMMAND", "LIST", "FILTERBY", "foo", "bar"),
    ("COMMAND", "LIST", "FILTERBY", "MODULE", "x"),
    ("COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuch"),
    ("COMMAND", "LIST", "FILTERBY", "PATTERN", "x", "extra"),
    ("COMMAND", "LIST", "FILTERBY", "PATTERN", "get"),
    ("COMMAND", "LIST", "FILTERBY", "PATTERN", "config|get"),
    ("COMMAND", "LIST", "filterby", "pattern", "CONFIG|GET"),
    ("COMMAND", "NOSUCH"),
    ("COMMAND", "HELP"),
])
@pytest.mark.parametrize("protocol", [2, 3])
def test_command_edge_cases_match_redis(pair, args, protocol):
    pair.both("HELLO", str(protocol))
    try:
        mine, theirs = pair.both(*args)
    finally:
        pair.both("HELLO", "2")
    assert mine == theirs


ACL_CATEGORIES = ["keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
                  "bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
                  "blocking", "dangerous", "connection", "transaction", "scripting", "Read",
                  "nosuch", ""]


@pytest.mark.parametrize("filterby", [("ACLCAT", category) for category in ACL_CATEGORIES] + [
    ("PATTERN", pattern) for pattern in
    ["*", "c*", "config|*", "*|get", "[a-c]*", "x*", "*e?", "CLIENT*", "z*store", "nosuch"]
] + [("MODULE", "x"), ("MODULE", "")])
def test_command_list_filterby_matches_redis_on_shared_commands(pair, filterby):
    # Redis lists in hash order; compare as sets, on the commands both servers have.
    mine = [n.decode() for n in pair.keywarden.execute("COMMAND", "LIST", "FILTERBY", *filterby)]
    theirs = [n.decode() for n in pair.reference.execute("COMMAND", "LIST", "FILTERBY", *filterby)]
    assert len(mine) == len(set(mine))
    shared = pair.keywarden_names & pair.reference_names
    assert set(mine) & shared == set(theirs) & shared
    assert set(mine) - shared <= pair.keywarden_names - pair.reference_names


# --------------------------------------------------------------------------------------------
# GETKEYS and GETKEYSANDFLAGS
# --------------------------------------------------------------------------------------------

GETKEYS_CASES = [
    ("get", "k"),
    ("get", "a", "b"),
    ("get",),
    ("set", "k", "v", "EX", "10"),
    ("set", "k", "v", "GET"),
    ("set", "k", "v", "get", "EX", "10"),
    ("set", "k", "v", "GETX"),
    ("mset", "a", "1", "b", "2"),
    ("mset", "a", "1", "b"),
    ("msetnx", "a", "1", "b", "2"),
    ("del", "a", "b", "c"),
    ("unlink", "a"),
    ("exists", "a", "b"),
    ("touch", "a", "b"),
    ("rename", "a", "b"),
    ("copy", "a", "b", "REPLACE"),
    ("smove", "a", "b", "m"),
    ("lmove", "a", "b", "LEFT", "RIGHT"),
    ("blmove", "a", "b", "LEFT", "RIGHT", "0"),
    ("brpoplpush", "a", "b", "0"),
    ("blpop", "a", "b", "0"),
    ("bzpopmin", "a", "b", "0"),
    ("sinterstore", "d", "a", "b"),
    ("zrangestore", "d", "s", "0", "1"),
    ("getex", "k", "PERSIST"),
    ("getdel", "k"),
    ("hset", "h", "f", "v"),
    ("expire", "k", "10"),
    ("object", "encoding", "k"),
    ("memory", "usage", "k"),
    ("object", "help"),
    ("config", "get", "x"),
    ("restore", "k", "0", "payload"),
    ("watch", "a", "b"),
    ("zunionstore", "d", "2", "a", "b"),
    ("zunionstore", "d", "2", "a", "b", "WEIGHTS", "1", "2"),
    ("zunionstore", "d", "2abc", "a", "b"),
    ("zunionstore", "d", "02", "a", "b"),
    ("zunionstore", "d", "3", "a", "b"),
    ("zunionstore", "d", "0", "a"),
    ("zunionstore", "d", "-1", "a"),
    ("zinterstore", "d", "1", "a"),
    ("zdiffstore", "d", "2", "a", "b"),
    ("zunion", "2", "a", "b", "WITHSCORES"),
    ("zunion", "0", "a"),
    ("zinter", "1", "a"),
    ("zdiff", "2", "a", "b"),
    ("zintercard", "2", "a", "b", "LIMIT", "1"),
    ("sintercard", "2", "a", "b", "LIMIT", "1"),
    ("sintercard", "x", "a"),
    ("lmpop", "2", "a", "b", "LEFT"),
    ("lmpop", "3", "a", "b", "LEFT"),
    ("blmpop", "0", "2", "a", "b", "LEFT", "COUNT", "2"),
    ("zmpop", "1", "a", "MIN"),
    ("bzmpop", "0", "1", "a", "MIN"),
    ("eval", "return 1", "0"),
    ("eval", "return 1", "2", "a", "b", "c"),
    ("eval", "return 1", "3", "a", "b"),
    ("eval", "return 1", "x"),
    ("evalsha", "abc", "1", "a"),
    ("eval_ro", "return 1", "1", "a"),
    ("evalsha_ro", "abc", "0"),
    ("fcall", "f", "1", "a", "arg"),
    ("fcall_ro", "f", "0"),
    ("sort", "k"),
    ("sort", "k", "STORE", "d"),
    ("sort", "k", "STORE", "d", "GET", "x", "STORE", "e"),
    ("sort", "k", "BY", "store", "STORE"),
    ("sort", "k", "LIMIT", "0", "1", "STORE", "d"),
    ("sort_ro", "k", "BY", "x", "GET", "y"),
    ("migrate", "h", "1", "k", "0", "5000"),
    ("migrate", "h", "1", "", "0", "5000", "KEYS", "a", "b"),
    ("migrate", "h", "1", "k", "0", "5000", "KEYS", "a", "b"),
    # The values of AUTH (one) and AUTH2 (two) are stepped over, even when spelt "keys", and
    # an option missing its values at the end leaves the key argument as the key.
    ("migrate", "h", "1", "", "0", "5000", "AUTH", "keys", "KEYS", "a"),
    ("migrate", "h", "1", "", "0", "5000", "AUTH2", "keys", "p", "KEYS", "a"),
    ("migrate", "h", "1", "", "0", "5000", "AUTH2", "u", "keys", "KEYS", "a"),
    ("migrate", "h", "1", "", "0", "5000", "AUTH", "p", "KEYS", "a"),
    ("migrate", "h", "1", "", "0", "5000", "AUTH2", "u", "p", "KEYS", "a", "b"),
    ("migrate", "h", "1", "", "0", "5000", "COPY", "REPLACE", "KEYS", "a"),
    ("migrate", "h", "1", "", "0", "5000", "AUTH"),
    ("migrate", "h", "1", "", "0", "5000", "AUTH2", "KEYS"),
    ("migrate", "h", "1", "k", "0", "5000", "AUTH", "keys"),
    ("migrate", "h", "1", "k", "0", "5000", "AUTH", "p", "KEYS", "a"),
    ("migrate", "h", "1", "", "0", "5000", "KEYS"),
    ("migrate", "h", "1", "", "0", "5000", "bogus", "KEYS", "a"),
    ("migrate", "h", "1", "keys", "0", "5000"),
    ("spublish", "c", "m"),
    ("ssubscribe", "c"),
    ("publish", "c", "m"),
    ("ping",),
    ("ping", "x"),
    ("keys", "*"),
    ("nosuch", "a"),
    ("command", "getkeys", "get", "k"),
    ("GET", "k"),
    ("Config", "GET", "x"),
]


@pytest.mark.parametrize("subcommand", ["GETKEYS", "GETKEYSANDFLAGS"])
@pytest.mark.parametrize("case", GETKEYS_CASES, ids=lambda case: " ".join(case) or "-")
def test_getkeys_matches_redis(pair, subcommand, case):
    for protocol in (2, 3):
        pair.both("HELLO", str(protocol))
        try:
            mine, theirs = pair.both("COMMAND", subcommand, *case)
        finally:
            pair.both("HELLO", "2")
        assert mine == theirs, f"RESP{protocol}"


def test_getkeys_needs_a_command(pair):
    for args in (("COMMAND", "GETKEYS"), ("COMMAND", "GETKEYSANDFLAGS", "get")):
        mine, theirs = pair.both(*args)
        assert mine == theirs


