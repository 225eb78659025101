#!/usr/bin/python3
"""Regenerates docs/commands.md: every command a stock redis-server 7.0 knows, with its status
in keywarden, asked of both servers (COMMAND DOCS of redis-server, COMMAND INFO of keywarden).

Usage: /usr/bin/python3 scripts/gen_commands_doc.py [path/to/keywarden-server]
Known differences are kept in NOTES below and printed beside the command.
"""

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis

REPO = Path(__file__).resolve().parent.parent

# Commands whose behaviour differs from Redis 7.0 in a way a user could notice.
NOTES = {
    "acl": "Users, rules, selectors, checks and the log as Redis 7.0 (docs/security.md). aclfile "
           "with ACL LOAD/SAVE and acl-pubsub-default as Redis 7.0. The single commands ACL LIST "
           "shows after its categories come in name order (Redis: hash order).",
    "hset": "Drops the deadline of a field it overwrites, as Redis 8 (HSETEX … KEEPTTL keeps it).",
    "hincrby": "Keeps the field's deadline, as Redis 8.",
    "hincrbyfloat": "Keeps the field's deadline, as Redis 8; propagated as HSETEX … KEEPTTL when "
                    "the field has one, else as HSET.",
    "hlen": "Never counts a field whose deadline passed (the access reclaims it first); Redis 8 "
            "may count expired fields not yet reclaimed.",
    "wait": "Counts replicas that acknowledged the client's last write offset, as Redis 7.0.",
    "psync": "PSYNC2 (current or previous replication ID within the backlog); full syncs "
             "diskless (EOF-mark framing, for replicas with capa eof) or from the RDB file. "
             "PSYNC … FAILOVER promotes a replica whose replication ID matches (FAILOVER's "
             "hand-over).",
    "sync": "The pre-PSYNC full sync: the image as a plain bulk from the RDB file.",
    "replconf": "rdb-only and rdb-filter-only are accepted but the whole image and stream are "
                "sent.",
    "client": "CLIENT SETINFO and CLIENT NO-TOUCH answered as Redis 7.2 does (7.0 lacks them).",
    "client|tracking": "Default, BCAST, OPTIN/OPTOUT, NOLOOP and REDIRECT modes, compared with "
                       "Redis 7.0 in tests/compat/test_tracking.py (docs/client-side-caching.md).",
    "pfadd": "Redis 7.0's bytes, sparse and dense (tests/compat/test_hyperloglog.py). One "
             "corner of corrupt values differs: on a sparse value ending in a truncated XZERO, "
             "Redis keeps the byte an edit writes past the string's end and reads it again on "
             "a later command's edit; keywarden keeps it only within the command.",
    "pfdebug": "TODENSE and GETREG of a sparse value tell WATCH that the key changed (its "
               "bytes do); Redis 7.0 counts and propagates the conversion without signalling "
               "the key.",
    "script|debug": "NO is accepted; the Lua debugger (YES, SYNC) is not built.",
    "function|dump": "Library code is written uncompressed (Redis LZF-compresses long code), "
                     "in payloads as in RDB files; both servers load either.",
    "function|list": "Libraries in name order and functions in registration order (Redis: hash "
                     "table order).",
    "unsubscribe": "Without arguments, channels are left in subscription order (Redis: hash "
                   "table order); likewise PUNSUBSCRIBE and SUNSUBSCRIBE.",
    "publish": "Propagated to the AOF path like any write (no replica-only target yet).",
    "config|rewrite": "client-output-buffer-limit is written as one line for all classes; "
                      "string values are written unquoted.",
    "info": "used_memory is jemalloc's exact count of live bytes (Lua's heap included, which "
            "Redis leaves out); overhead and dataset split keywarden's own structures.",
    "shutdown": "Saves the RDB file as Redis does; an AOF is not flushed by it yet.",
    "dump": "Payloads are Redis's byte for byte except LZF-compressed strings (our own "
            "compressor) and lists (cut into 8 KiB listpack nodes); both servers load either.",
    "restore": "Loads every encoding Redis 7.0 writes or reads; module, stream and RDB 11 "
               "payloads (7.2's listpack sets) are refused with Bad data format, as 7.0 "
               "refuses the last. `sanitize-dump-payload no|yes|clients` as in 7.0 "
               "(docs/architecture.md, \"Hostile payloads\"); repeated members or fields and NaN "
               "scores are refused whatever the setting (7.0 under `no` loads them).",
    "bgsave": "rdb_last_cow_size and current_cow_* are not measured (reported as 0).",
    "sadd": "Small sets of strings are kept in one flat buffer (Redis 7.2's listpack layout, "
            "tuned by 7.2's set-max-listpack-entries/-value), but OBJECT ENCODING reports "
            "7.0's hashtable for them, and they count as hashtables for lazy freeing, as in "
            "7.0.",
    "memory|usage": "Counts what the key costs keywarden (its allocation, payload and index "
                    "shares), exactly, so SAMPLES changes nothing.",
    "memory|malloc-stats": "jemalloc's malloc_stats_print report, as Redis; a libc build "
                           "answers as Redis built without jemalloc does.",
    "memory|stats": "allocator.* and fragmentation from jemalloc, as Redis; db.N overhead is "
                    "keywarden's bucket array and expiry index, not Redis's dict sizes.",
    "memory|purge": "Flushes the thread cache and purges every jemalloc arena; a libc build "
                    "calls malloc_trim(0).",
    "memory|doctor": "Redis's checks and thresholds on the same figures, in keywarden's words.",
    "lpush": "list-compress-depth is accepted but nodes are never compressed.",
    "debug": "Redis 7.0's HELP text; implemented: DIGEST (Redis's algorithm: equal digests for "
             "equal data), DIGEST-VALUE, RELOAD with MERGE, NOFLUSH, NOSAVE, LOADAOF, "
             "POPULATE, OBJECT, SLEEP, LOG, PROTOCOL, HTSTATS, HTSTATS-KEY, LISTPACK, "
             "QUICKLIST, MALLCTL, MALLCTL-STR, CHANGE-REPL-ID, PAUSE-CRON, REPLYBUFFER, "
             "SET-ACTIVE-EXPIRE, SET-DISABLE-DENY-SCRIPTS, AOF-FLUSH-SLEEP, "
             "QUICKLIST-PACKED-THRESHOLD (checked, no plain nodes here), "
             "CONFIG-REWRITE-FORCE-ALL (an ordinary rewrite), STRINGMATCH-TEST. HTSTATS "
             "figures describe keywarden's tables (the expiry heap stands for the expires "
             "dict). Not implemented: the crash, restart and leak entries, cluster ones, "
             "ERROR, REPLICATE, SDSLEN, STRUCTSIZE, CLIENT-EVICTION, "
             "SET-SKIP-CHECKSUM-VALIDATION.",
    "migrate": "Synchronous on the command thread as in Redis 7.0, each wait bounded by the "
               "timeout; plain TCP only (no TLS to the target), RESTORE rather than "
               "RESTORE-ASKING (no cluster mode).",
    "spop": "With a count, propagated as SREMs in MULTI/EXEC or a DEL, as 7.0; other commands "
            "with several effects are not wrapped yet.",
    "command": "INFO and DOCS answer with Redis 7.0's metadata (key specifications, tips, "
               "argument trees) byte for byte, except ZRANK/ZREVRANK's arity (-3, Redis 7.2's "
               "WITHSCORE); tests/compat/test_command_parity.py compares every shared command.",
    "command|getkeys": "Driven by the key specifications, falling back to the command's own "
                       "key finder as Redis does.",
    "object|encoding": "Redis 7.0's names and conversion rules for every type, whatever the "
                       "layout kept here (tests/compat/test_object_encoding.py).",
    "failover": "Redis 7.0's coordinated hand-over (writes held, PSYNC … FAILOVER to the "
                "target), with keywarden or Redis on either side.",
    "replicaof": "Redis 7.0's replica side (PSYNC2, disk and diskless load). Diskless load "
                 "(swapdb, on-empty-db) holds the received image in memory and loads it once "
                 "whole; swapdb cannot restore the old data if that load fails. No fallback to "
                 "SYNC for primaries older than PSYNC. Refused from the primary's own stream.",
    "slaveof": "As `REPLICAOF`.",
    "geoadd": "Propagated as the ZADD it amounts to, as Redis 7.0.",
    "set": "IFEQ, IFNE, IFDEQ and IFDNE as Redis 8.4 (a SET whose condition held propagates "
           "without it; COMMAND DOCS still shows 7.0's argument tree).",
    "restore": "Loads every encoding Redis 7.0 writes or reads, streams (types 15 and 19) "
               "included; module and RDB 11 payloads (7.2's listpack sets, streams 3) are refused "
               "with Bad data format, as 7.0 refuses the last. `sanitize-dump-payload "
               "no|yes|clients` as in 7.0 (docs/architecture.md, \"Hostile payloads\"); repeated "
               "members or fields and NaN scores are refused whatever the setting (7.0 under `no` "
               "loads them).",
    "xadd": "`*`, `<ms>-*`, NOMKSTREAM, MAXLEN/MINID with `=`/`~` and LIMIT; nodes are cut where "
            "Redis cuts them, so `~` trims the same entries. Propagates the generated ID and, "
            "after `~`, the exact threshold reached.",
    "xinfo|stream": "`radix-tree-nodes` is an estimate (keywarden keeps its nodes in an ordered "
                    "map, not a radix tree); every other field as in 7.0.",
    "xread": "BLOCK through the blocking registry; `$` is fixed to the ID it stood for when the "
             "client blocked, and only an XADD since then serves a parked reader, as in Redis "
             "(docs/streams.md has the one corner where a re-parked reader differs).",
    "xreadgroup": "Blocked readers get `-UNBLOCKED` when the key is deleted or overwritten and "
                  "`-NOGROUP` when the group is destroyed, as in 7.0, and are otherwise served "
                  "only after an XADD. Propagates XCLAIM … FORCE JUSTID per delivered entry, "
                  "XGROUP SETID after NOACK reads.",
}

# Commands keywarden takes from releases newer than Redis 7.0 (which the reference server lacks):
# the release whose documentation and command definitions (src/commands/*.json) they follow,
# and notes. Every such command must be listed here.
NEWER = {
    "digest": ("Redis 8.4", "XXH3-64 as 16 lowercase hex digits, leading zeros kept (8.4.x)."),
    "delex": ("Redis 8.4", "IFDEQ/IFDNE take exactly 16 hex digits, compared ignoring case; "
                           "propagated as DEL."),
    "msetex": ("Redis 8.4", "Propagated as one SET … PXAT (or KEEPTTL) per key in MULTI/EXEC, so "
                            "Redis 7.0 replicas apply it; the texts of its numkeys errors are our "
                            "own (the 8.4 source was not at hand)."),
    "delifeq": ("Valkey 9.0", "Propagated as DEL."),
    "lock.acquire": ("keywarden", "keywarden's own (issue 19, docs/locks.md): a Redisson lock "
                                  "hash with a server-side FIFO queue; propagated as HINCRBY + "
                                  "PEXPIREAT; FENCE adds a fencing token from the per-slot "
                                  "counter."),
    "lock.fenced": ("keywarden", "keywarden's own (docs/locks.md): runs a write command only if "
                                 "the fencing token is not older than the resource's highest, "
                                 "else `-FENCED`; propagated as HSET of the marks hash + the "
                                 "inner command in MULTI/EXEC."),
    "lock.release": ("keywarden", "keywarden's own (docs/locks.md); propagated as HINCRBY, HDEL "
                                  "or DEL."),
    "lock.info": ("keywarden", "keywarden's own (docs/locks.md)."),
    # Hash-field expiration. Deadlines are propagated as HPEXPIREAT and expired fields as HDEL.
    "hexpire": ("Redis 7.4", "Propagated as HPEXPIREAT (HDEL for fields a past deadline "
                             "deletes)."),
    "hpexpire": ("Redis 7.4", "As HEXPIRE."),
    "hexpireat": ("Redis 7.4", "As HEXPIRE."),
    "hpexpireat": ("Redis 7.4", "As HEXPIRE."),
    "httl": ("Redis 7.4", ""),
    "hpttl": ("Redis 7.4", ""),
    "hexpiretime": ("Redis 7.4", ""),
    "hpexpiretime": ("Redis 7.4", ""),
    "hpersist": ("Redis 7.4", ""),
    "hgetex": ("Redis 8.0", "Propagated as HPEXPIREAT, HPERSIST or HDEL, as 8.0."),
    "hsetex": ("Redis 8.0", "Relative TTLs propagated as PXAT."),
    "hgetdel": ("Redis 8.0", "Propagated as HDEL."),
}

# Where single commands that are not here yet are planned.
PLANNED_COMMANDS = {
    "bgrewriteaof": "issue 7",
}

# Where the families that are not here yet are planned.
PLANNED = {
    "hash": "issue 3", "list": "issue 3", "set": "issue 3", "sorted-set": "issue 3",
    "transactions": "issue 3", "scripting": "issue 4", "pubsub": "issue 4",
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(binary):
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="kw-doc-")
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                "--appendonly", "no"], cwd=workdir,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(port=port, decode_responses=True)
    # redis-py parses COMMAND replies in its own way; the raw reply is wanted here.
    client.set_response_callback("COMMAND", lambda response, **options: response)
    for _ in range(100):
        try:
            client.ping()
            return process, client
        except redis.ConnectionError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit(f"{binary} did not start")


def decode(value):
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def pairs(flat):
    return dict(zip(flat[0::2], flat[1::2]))


def main():
    keywarden_path = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else str(
        REPO / "build" / "src" / "server" / "keywarden-server")
    processes = []
    try:
        redis_process, reference = start("/usr/bin/redis-server")
        processes.append(redis_process)
        keywarden_process, keywarden = start(keywarden_path)
        processes.append(keywarden_process)
        docs = pairs(decode(reference.execute_command("COMMAND", "DOCS")))
        rows = []  # (group, name, summary)
        for name, doc in docs.items():
            doc = pairs(doc)
            rows.append((doc.get("group", "?"), name, doc.get("summary", "")))
            for sub_name, sub_doc in pairs(doc.get("subcommands", [])).items():
                sub_doc = pairs(sub_doc)
                rows.append((sub_doc.get("group", "?"), sub_name, sub_doc.get("summary", "")))
        implemented = set()
        for group, name, _ in rows:
            reply = keywarden.execute_command("COMMAND", "INFO", name)
            if reply and reply[0]:
                implemented.add(name)
        newer = []  # (group, name, summary) of keywarden's commands that 7.0 lacks
        for name, doc in pairs(decode(keywarden.execute_command("COMMAND", "DOCS"))).items():
            if name not in docs:
                doc = pairs(doc)
                newer.append((doc.get("group", "?"), name, doc.get("summary", "")))
    finally:
        # Whatever failed, stop every server this script started.
        for process in processes:
            process.terminate()
            process.wait()

    rows.sort()
    done = sum(1 for _, name, _ in rows if name in implemented)
    out = ["# Commands", "",
           "Every command of Redis 7.0 (as a stock `redis-server` 7.0 lists them in `COMMAND DOCS`)",
           "and its status in keywarden. Generated by `scripts/gen_commands_doc.py`, which asks both",
           "servers; notes on known differences come from that script.", "",
           f"**{done} of {len(rows)}** commands and subcommands implemented.", ""]
    current = None
    for group, name, summary in rows:
        if group != current:
            current = group
            out += ["", f"## {group}", "", "| command | status | notes |", "| --- | --- | --- |"]
        if name in implemented:
            status = "implemented"
        else:
            plan = PLANNED_COMMANDS.get(name) or PLANNED.get(group)
            status = f"not yet ({plan})" if plan else "not yet"
        note = NOTES.get(name, "").replace("|", "\\|")  # a bar would end the table cell
        out.append(f"| `{name.upper().replace('|', ' ')}` | {status} | {note} |")
    missing = [name for _, name, _ in newer if name not in NEWER]
    if missing:
        raise SystemExit(f"add {', '.join(missing)} to NEWER in scripts/gen_commands_doc.py")
    out += ["", "## newer than Redis 7.0", "",
            f"**{len(newer)}** commands the reference server lacks: from later Redis or Valkey "
            "releases, whose replies follow that release's documentation and command "
            "definitions, or keywarden's own (\"follows: keywarden\", documented in docs/). "
            "The tests hold the expected replies.", "",
            "| command | group | follows | notes |", "| --- | --- | --- | --- |"]
    for group, name, _ in sorted(newer, key=lambda row: (row[0], row[1])):
        follows, note = NEWER[name]
        out.append(f"| `{name.upper().replace('|', ' ')}` | {group} | {follows} | {note} |")
    (REPO / "docs" / "commands.md").write_text("\n".join(out) + "\n")
    print(f"docs/commands.md: {done} of {len(rows)} implemented")


if __name__ == "__main__":
    main()
