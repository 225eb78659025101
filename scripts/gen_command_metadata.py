#!/usr/bin/env python3
"""Writes src/commands/command_metadata.cc from a running redis-server 7.0.

COMMAND DOCS, the command tips and the key specifications of COMMAND INFO are Redis's metadata,
and keywarden must answer them byte for byte as Redis 7.0 does. Rather than typing them by hand,
this script asks a reference server for them once, at development time, and writes them out as
C++ data tables keyed by the command's full name ("get", "config|get"). The generated file is
committed; nothing runs at build time. Run it again only when the reference version changes:

    redis-server --port 7777 --save '' --appendonly no &
    scripts/gen_command_metadata.py --port 7777          # writes src/commands/command_metadata.cc

Every command of the reference is written, including those keywarden does not implement yet, so
that a new family finds its metadata already there. The behavioural part of a command (arity,
flags, first/last/step, ACL categories) stays in the family's row and is not generated.
"""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = REPO / "src" / "commands" / "command_metadata.cc"


# --------------------------------------------------------------------------------------------
# A small RESP3 reader: maps stay ordered lists of pairs, sets and arrays stay lists.
# --------------------------------------------------------------------------------------------

class RespMap(list):
    """Ordered (key, value) pairs of a `%` map."""


class RespSet(list):
    """Elements of a `~` set."""


class Reader:
    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buffer = b""

    def _fill(self) -> None:
        data = self.sock.recv(1 << 16)
        if not data:
            raise ConnectionError("the server closed the connection")
        self.buffer += data

    def _line(self) -> bytes:
        while b"\r\n" not in self.buffer:
            self._fill()
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def _exact(self, n: int) -> bytes:
        while len(self.buffer) < n + 2:
            self._fill()
        data, self.buffer = self.buffer[:n], self.buffer[n + 2:]
        return data

    def read(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind in (b"+",):
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            return None if int(rest) < 0 else self._exact(int(rest)).decode()
        if kind == b"_":
            return None
        if kind in (b"*", b"~"):
            items = [self.read() for _ in range(int(rest))]
            return RespSet(items) if kind == b"~" else items
        if kind == b"%":
            return RespMap((self.read(), self.read()) for _ in range(int(rest)))
        raise RuntimeError(f"unexpected RESP type {line!r}")


def request(sock: socket.socket, reader: Reader, *args: str):
    out = b"*%d\r\n" % len(args)
    for arg in args:
        data = arg.encode()
        out += b"$%d\r\n%s\r\n" % (len(data), data)
    sock.sendall(out)
    return reader.read()


# --------------------------------------------------------------------------------------------
# C++ emission
# --------------------------------------------------------------------------------------------

KEY_FLAGS = ["RO", "RW", "OW", "RM", "access", "update", "insert", "delete", "not_key",
             "incomplete", "variable_flags"]
KEY_FLAG_ENUM = ["kKeyRO", "kKeyRW", "kKeyOW", "kKeyRM", "kKeyAccess", "kKeyUpdate", "kKeyInsert",
                 "kKeyDelete", "kKeyNotKey", "kKeyIncomplete", "kKeyVariableFlags"]
ARG_TYPES = {"string": "kString", "integer": "kInteger", "double": "kDouble", "key": "kKey",
             "pattern": "kPattern", "unix-time": "kUnixTime", "pure-token": "kPureToken",
             "oneof": "kOneOf", "block": "kBlock"}
ARG_FLAGS = {"optional": "kArgOptional", "multiple": "kArgMultiple",
             "multiple_token": "kArgMultipleToken"}
DOC_FLAGS = {"deprecated": "kDocDeprecated", "syscmd": "kDocSyscmd"}
DOC_KEYS = ["summary", "since", "group", "complexity", "doc_flags", "deprecated_since",
            "replaced_by", "history", "arguments", "subcommands"]
ARG_KEYS = ["name", "type", "key_spec_index", "token", "summary", "since", "deprecated_since",
            "flags", "arguments"]


def cpp_string(text: str | None) -> str:
    # An absent field is a null string_view; a present but empty one (MIGRATE's empty-string
    # token) is "".
    if text is None:
        return "{}"
    out = []
    for byte in text.encode():
        char = chr(byte)
        if char in '"\\':
            out.append("\\" + char)
        elif 32 <= byte < 127:
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")  # octal escapes stop after three digits, unlike hex
    return '"' + "".join(out) + '"'


def flag_expression(names, table: dict[str, str] | list[str], enum: list[str] | None = None) -> str:
    parts = []
    for name in names:
        if isinstance(table, dict):
            parts.append(table[name])
        else:
            parts.append(enum[table.index(name)])
    return " | ".join(parts) if parts else "0"


class Emitter:
    def __init__(self):
        self.arrays: list[str] = []  # definitions of the nested tables, in dependency order
        self.counter = 0

    def _name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def arguments(self, args) -> str:
        if not args:
            return "{}"
        rows = []
        for arg in args:
            fields = dict(arg)
            unknown = set(fields) - set(ARG_KEYS)
            if unknown:
                raise RuntimeError(f"argument field(s) this script does not know: {unknown}")
            order = [key for key, _ in arg]
            if order != [key for key in ARG_KEYS if key in fields]:
                raise RuntimeError(f"argument fields in an unexpected order: {order}")
            nested = self.arguments(fields.get("arguments"))
            rows.append(
                f"    {{{cpp_string(fields['name'])}, ArgumentType::{ARG_TYPES[fields['type']]}, "
                f"{fields.get('key_spec_index', -1)}, {cpp_string(fields.get('token'))}, "
                f"{cpp_string(fields.get('summary'))}, {cpp_string(fields.get('since'))}, "
                f"{cpp_string(fields.get('deprecated_since'))}, "
                f"{flag_expression(fields.get('flags', []), ARG_FLAGS)}, {nested}}},")
        name = self._name("kArgs")
        self.arrays.append(f"constexpr CommandArgument {name}[] = {{\n" + "\n".join(rows) + "\n};")
        return name

    def history(self, entries) -> str:
        if not entries:
            return "{}"
        name = self._name("kHistory")
        rows = [f"    {{{cpp_string(version)}, {cpp_string(change)}}}," for version, change in entries]
        self.arrays.append(f"constexpr CommandHistoryEntry {name}[] = {{\n" + "\n".join(rows)
                           + "\n};")
        return name

    def tips(self, tips) -> str:
        if not tips:
            return "{}"
        name = self._name("kTips")
        self.arrays.append(f"constexpr std::string_view {name}[] = {{"
                           + ", ".join(cpp_string(tip) for tip in tips) + "};")
        return name

    def key_specs(self, specs) -> str:
        if not specs:
            return "{}"
        rows = []
        for spec in specs:
            fields = dict(spec)
            begin, find = dict(fields["begin_search"]), dict(fields["find_keys"])
            begin_spec, find_spec = dict(begin["spec"]), dict(find["spec"])
            flags = flag_expression(fields["flags"], KEY_FLAGS, KEY_FLAG_ENUM)
            if begin["type"] == "index":
                begin_text = f"KeySpec::Begin::kIndex, {begin_spec['index']}, {{}}, 0"
            elif begin["type"] == "keyword":
                begin_text = (f"KeySpec::Begin::kKeyword, 0, {cpp_string(begin_spec['keyword'])}, "
                              f"{begin_spec['startfrom']}")
            elif begin["type"] == "unknown":
                begin_text = "KeySpec::Begin::kUnknown, 0, {}, 0"
            else:
                raise RuntimeError(f"unknown begin_search type {begin['type']}")
            if find["type"] == "range":
                find_text = (f"KeySpec::Find::kRange, {find_spec['lastkey']}, "
                             f"{find_spec['keystep']}, {find_spec['limit']}, 0, 0")
            elif find["type"] == "keynum":
                find_text = (f"KeySpec::Find::kKeynum, 0, {find_spec['keystep']}, 0, "
                             f"{find_spec['keynumidx']}, {find_spec['firstkey']}")
            elif find["type"] == "unknown":
                find_text = "KeySpec::Find::kUnknown, 0, 0, 0, 0, 0"
            else:
                raise RuntimeError(f"unknown find_keys type {find['type']}")
            rows.append(f"    {{{cpp_string(fields.get('notes'))}, {flags}, {begin_text}, "
                        f"{find_text}}},")
        name = self._name("kKeySpecs")
        self.arrays.append(f"constexpr KeySpec {name}[] = {{\n" + "\n".join(rows) + "\n};")
        return name


def collect(infos, docs) -> list[tuple[str, list, list]]:
    """(full name, info reply, docs map) for every command and subcommand."""
    by_name: dict[str, list] = {}

    def add_info(info):
        by_name[info[0]] = info
        for sub in info[9]:
            add_info(sub)

    for info in infos:
        add_info(info)
    entries = []

    def add_docs(name, doc):
        entries.append((name, by_name[name], doc))
        for sub_name, sub_doc in dict(doc).get("subcommands", []):
            add_docs(sub_name, sub_doc)

    for name, doc in docs:
        add_docs(name, doc)
    if len(entries) != len(by_name):
        raise RuntimeError("COMMAND INFO and COMMAND DOCS name different commands")
    return sorted(entries, key=lambda entry: entry[0])


def generate(host: str, port: int) -> str:
    sock = socket.create_connection((host, port))
    reader = Reader(sock)
    hello = dict(request(sock, reader, "HELLO", "3"))
    version = hello["version"]
    infos = request(sock, reader, "COMMAND", "INFO")
    docs = request(sock, reader, "COMMAND", "DOCS")
    sock.close()

    emitter = Emitter()
    rows = []
    for name, info, doc in collect(infos, docs):
        fields = dict(doc)
        order = [key for key, _ in doc]
        if order != [key for key in DOC_KEYS if key in fields]:
            raise RuntimeError(f"{name}: docs fields in an unexpected order: {order}")
        rows.append(
            f"    {{{cpp_string(name)}, {cpp_string(fields.get('summary'))}, "
            f"{cpp_string(fields.get('since'))}, {cpp_string(fields['group'])}, "
            f"{cpp_string(fields.get('complexity'))}, "
            f"{flag_expression(fields.get('doc_flags', []), DOC_FLAGS)}, "
            f"{cpp_string(fields.get('deprecated_since'))}, "
            f"{cpp_string(fields.get('replaced_by'))}, {emitter.history(fields.get('history'))}, "
            f"{emitter.arguments(fields.get('arguments'))}, {emitter.tips(info[7])}, "
            f"{emitter.key_specs(info[8])}}},")

    header = f"""// GENERATED by scripts/gen_command_metadata.py from redis-server {version}: do not edit.
//
// Redis's metadata for every command and subcommand of the reference server, keyed by full
// name and sorted by it: COMMAND DOCS (summary, since, group, complexity, doc flags,
// deprecation, history, the argument tree), the command tips and the key specifications of
// COMMAND INFO. Regenerate with the script rather than editing a row.
#include "commands/command_metadata.h"

#include <algorithm>

namespace keywarden {{
namespace {{
"""
    footer = f"""
constexpr CommandMetadata kCommandMetadata[] = {{
{chr(10).join(rows)}
}};

}}  // namespace

std::string_view command_metadata_version() {{ return "{version}"; }}

std::span<const CommandMetadata> all_command_metadata() {{ return kCommandMetadata; }}

const CommandMetadata* find_command_metadata(std::string_view full_name) {{
  const auto* end = std::end(kCommandMetadata);
  const auto* it = std::lower_bound(
      std::begin(kCommandMetadata), end, full_name,
      [](const CommandMetadata& row, std::string_view name) {{ return row.full_name < name; }});
  return it != end && it->full_name == full_name ? it : nullptr;
}}

}}  // namespace keywarden
"""
    return header + "\n" + "\n\n".join(emitter.arrays) + "\n" + footer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=6379)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    options = parser.parse_args()
    options.output.write_text(generate(options.host, options.port))
    print(f"wrote {options.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
