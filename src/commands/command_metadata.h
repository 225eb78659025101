// Redis's metadata about its commands, as data: what COMMAND DOCS answers (summary, since,
// group, complexity, doc flags, deprecation, history, the argument tree), the command tips and
// the key specifications of COMMAND INFO. The key specifications also drive COMMAND GETKEYS and
// GETKEYSANDFLAGS.
//
// The tables (command_metadata.cc) are generated once from a reference redis-server by
// scripts/gen_command_metadata.py and committed; they hold every command of the reference,
// implemented here or not, keyed by full lowercase name ("config|get"). The behavioural part of a
// command (arity, flags, first/last/step, ACL categories, handler) is not here: it stays in the
// family's CommandSpec row. A command that the reference lacks (one keywarden takes from a newer
// Redis or Valkey) has no entry, and COMMAND answers for it from its row alone.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace keywarden {

// Key specification flags, in the order COMMAND names them.
enum KeySpecFlag : uint32_t {
  kKeyRO = 1u << 0,
  kKeyRW = 1u << 1,
  kKeyOW = 1u << 2,
  kKeyRM = 1u << 3,
  kKeyAccess = 1u << 4,
  kKeyUpdate = 1u << 5,
  kKeyInsert = 1u << 6,
  kKeyDelete = 1u << 7,
  kKeyNotKey = 1u << 8,
  kKeyIncomplete = 1u << 9,
  kKeyVariableFlags = 1u << 10,
};

// Where a command's keys are, in Redis's two steps: find where the search begins (a fixed
// index, or the argument after a keyword), then find the keys from there (a range, or a count
// read from an argument). Either step may be unknown, when the keys depend on values.
struct KeySpec {
  enum class Begin : uint8_t { kUnknown, kIndex, kKeyword };
  enum class Find : uint8_t { kUnknown, kRange, kKeynum };

  std::string_view notes;
  uint32_t flags;  // KeySpecFlag bits
  Begin begin;
  int index;                 // kIndex: the argument the search begins at
  std::string_view keyword;  // kKeyword: the keyword searched for, case-insensitively…
  int startfrom;             // …from this argument (negative: from the end, backwards)
  Find find;
  int lastkey;  // kRange: the last key relative to the first (negative: from the end)
  int keystep;  // kRange and kKeynum: the distance between keys
  int limit;    // kRange with lastkey -1: only 1/limit of the remaining arguments are keys
  int keynumidx;  // kKeynum: the argument holding the count, relative to the begin
  int firstkey;   // kKeynum: the first key, relative to the begin
};

enum class ArgumentType : uint8_t {
  kString,
  kInteger,
  kDouble,
  kKey,
  kPattern,
  kUnixTime,
  kPureToken,
  kOneOf,
  kBlock,
};

enum ArgumentFlag : uint8_t {
  kArgOptional = 1u << 0,
  kArgMultiple = 1u << 1,
  kArgMultipleToken = 1u << 2,
};

enum DocFlag : uint8_t {
  kDocDeprecated = 1u << 0,
  kDocSyscmd = 1u << 1,
};

// One argument of COMMAND DOCS. Null strings (data() == nullptr) are fields Redis leaves out;
// a present field may be empty (MIGRATE's "" token).
struct CommandArgument {
  std::string_view name;
  ArgumentType type;
  int key_spec_index;  // -1: none
  std::string_view token;
  std::string_view summary;
  std::string_view since;
  std::string_view deprecated_since;
  uint8_t flags;                             // ArgumentFlag bits
  std::span<const CommandArgument> arguments;  // kOneOf and kBlock
};

struct CommandHistoryEntry {
  std::string_view version;
  std::string_view change;
};

struct CommandMetadata {
  std::string_view full_name;  // "get", "config|get"
  std::string_view summary;
  std::string_view since;
  std::string_view group;
  std::string_view complexity;
  uint8_t doc_flags;  // DocFlag bits
  std::string_view deprecated_since;
  std::string_view replaced_by;
  std::span<const CommandHistoryEntry> history;
  std::span<const CommandArgument> arguments;
  std::span<const std::string_view> tips;
  std::span<const KeySpec> key_specs;
};

// The entry of a command by its lowercase full name, or null when the reference lacks it.
const CommandMetadata* find_command_metadata(std::string_view full_name);
// Every entry, sorted by full name.
std::span<const CommandMetadata> all_command_metadata();
// The reference server's version the tables were generated from.
std::string_view command_metadata_version();

}  // namespace keywarden
