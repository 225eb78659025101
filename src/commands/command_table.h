// The command table: one typed row per command, declared at the end of its family file and
// registered through one explicit call per family. The same rows drive the dispatcher's
// generic checks (arity, authentication, write refusal), COMMAND INFO/DOCS/LIST/GETKEYS and the
// per-command statistics of INFO commandstats.
//
// Names are stored lowercase; lookup is case-insensitive. A container command (CONFIG, CLIENT,
// OBJECT…) has no handler of its own and holds its subcommands, which are looked up by the
// second argument exactly as Redis 7 does.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <unordered_map>
#include <string>
#include <string_view>
#include <vector>

#include "commands/command_metadata.h"

namespace keywarden {

class CommandContext;
using CommandHandler = void (*)(CommandContext&);

// Command flags, as COMMAND INFO names them (flag_names gives them in Redis's order), then the
// dispatcher's internal ones.
enum CommandFlag : uint32_t {
  kWrite = 1u << 0,
  kReadonly = 1u << 1,
  kDenyOom = 1u << 2,
  kAdmin = 1u << 3,
  kPubSub = 1u << 4,
  kNoScript = 1u << 5,
  kBlocking = 1u << 6,
  kLoading = 1u << 7,
  kStale = 1u << 8,
  kSkipMonitor = 1u << 9,
  kSkipSlowlog = 1u << 10,
  kFast = 1u << 11,
  kNoAuth = 1u << 12,
  kMayReplicate = 1u << 13,
  kNoMandatoryKeys = 1u << 14,
  kNoMulti = 1u << 15,
  kMovableKeys = 1u << 16,
  kAllowBusy = 1u << 17,
  kSentinel = 1u << 18,

  // Internal flags: not COMMAND flags (flag_names leaves them out). They tell the dispatcher's
  // generic checks what Redis recognises by command procedure, so that no check goes by name.
  // Gated by enable-debug-command (Redis's CMD_PROTECTED).
  kProtected = 1u << 19,
  // Refused while a replica loads its primary's data asynchronously; keywarden never loads so,
  // but COMMAND shows the flag as Redis does.
  kNoAsyncLoading = 1u << 20,
  // Runs at once inside MULTI instead of being queued: EXEC, DISCARD, MULTI, WATCH, QUIT, RESET.
  kRunsInMulti = 1u << 21,
  // Ends or leaves a transaction (EXEC, DISCARD, QUIT, RESET): inside MULTI, over maxmemory,
  // everything else is refused (queueing takes memory without bound), these are not.
  kEndsMulti = 1u << 22,
  // EXEC: runs the transaction's queue, so the checks also judge it by the flags of what it
  // queued (CLIENT PAUSE WRITE, -MISCONF, -LOADING, -OOM), and refusing it ends the
  // transaction (-EXECABORT).
  kExecutesQueue = 1u << 23,
  // What a RESP2 client may run while subscribed: (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PING,
  // QUIT, RESET.
  kSubscribedContext = 1u << 24,
  // Runs scripts (EVAL*, FCALL*, and EXEC, whose queue may hold some): the maxmemory state at
  // its start is what a script's first write is judged by, not the memory its Lua stack has
  // used since.
  kRunsScripts = 1u << 25,
  // Refused like a write while the server cannot persist (-MISCONF): PING, so that health
  // checks notice.
  kRefusedOnDiskError = 1u << 26,
};
// The internal flags above, which COMMAND never shows.
inline constexpr uint32_t kInternalFlags = kProtected | kRunsInMulti | kEndsMulti | kExecutesQueue |
                                           kSubscribedContext | kRunsScripts | kRefusedOnDiskError;

// ACL categories. Those implied by flags (@write, @read, @admin, @dangerous, @fast, @slow,
// @blocking, @pubsub) are added at registration, as Redis does.
enum AclCategory : uint32_t {
  kAclKeyspace = 1u << 0,
  kAclRead = 1u << 1,
  kAclWrite = 1u << 2,
  kAclSet = 1u << 3,
  kAclSortedSet = 1u << 4,
  kAclList = 1u << 5,
  kAclHash = 1u << 6,
  kAclString = 1u << 7,
  kAclBitmap = 1u << 8,
  kAclHyperLogLog = 1u << 9,
  kAclGeo = 1u << 10,
  kAclStream = 1u << 11,
  kAclPubSub = 1u << 12,
  kAclAdmin = 1u << 13,
  kAclFast = 1u << 14,
  kAclSlow = 1u << 15,
  kAclBlocking = 1u << 16,
  kAclDangerous = 1u << 17,
  kAclConnection = 1u << 18,
  kAclTransaction = 1u << 19,
  kAclScripting = 1u << 20,
};

// The key positions of a command whose keys its key specifications cannot always find (Redis's
// getkeys procedures: ZUNION's numkeys, SORT's STORE, MIGRATE's KEYS…). COMMAND GETKEYS falls
// back to it when the key specifications fail, as Redis does (a command without Redis metadata
// and with a finder is MOVABLEKEYS). Empty when the arguments name no valid keys.
using KeyFinder = std::vector<int> (*)(std::span<const std::string_view> args);

// Redis's generic numkeys finder: the keys counted by the argument at kNumkeysAt (read as C's
// atoi reads it) and listed right after it, then, when kLeading is 1, the destination at
// position 1 (ZUNIONSTORE's), last as in Redis. ZUNION, SINTERCARD, LMPOP, EVAL…
template <int kNumkeysAt, int kLeading = 0>
std::vector<int> numkeys_keys(std::span<const std::string_view> args);

// A key found in a command's arguments, with the key specification flags that apply to it.
struct KeyReference {
  int position;
  uint32_t flags;  // KeySpecFlag bits
};

struct CommandSpec {
  std::string_view name;  // lowercase
  int arity;              // > 0: exactly; < 0: at least -arity (the name counts)
  uint32_t flags;
  int first_key;  // 0 when the command takes no keys
  int last_key;   // -1: the last argument, -2: the one before it…
  int key_step;
  uint32_t acl_categories;
  CommandHandler handler;  // null for a container command
  std::string_view group;  // COMMAND DOCS group: "string", "generic", "server"…
  std::string_view since;
  std::string_view summary;
  std::string_view complexity;
  std::span<const CommandSpec> subcommands = {};
  KeyFinder find_keys = nullptr;  // MOVABLEKEYS commands; null: the range above
};

// C's atoi: leading blanks, a sign, digits up to the first other byte; 0 when there are none.
int64_t atoi_prefix(std::string_view text);

template <int kNumkeysAt, int kLeading>
std::vector<int> numkeys_keys(std::span<const std::string_view> args) {
  static_assert(kLeading == 0 || kLeading == 1, "Redis's finders have at most one destination");
  std::vector<int> positions;
  if (args.size() <= kNumkeysAt) return positions;
  const int64_t count = atoi_prefix(args[kNumkeysAt]);
  if (count < 1 || count > static_cast<int64_t>(args.size()) - (kNumkeysAt + 1)) return positions;
  for (int64_t i = 0; i < count; ++i) positions.push_back(kNumkeysAt + 1 + static_cast<int>(i));
  if (kLeading == 1) positions.push_back(1);
  return positions;
}

struct CommandStats {
  uint64_t calls = 0;
  uint64_t usec = 0;
  uint64_t rejected_calls = 0;
  uint64_t failed_calls = 0;
};

struct Command;
// ASCII case-insensitive hashing and equality, so that lookups by a client's spelling of a
// name ("get", "GET", "Get") need neither a copy nor a lowercase pass.
struct CaseInsensitiveHash {
  size_t operator()(std::string_view text) const;
};
struct CaseInsensitiveEqual {
  bool operator()(std::string_view a, std::string_view b) const;
};
using CommandIndex =
    std::unordered_map<std::string_view, Command*, CaseInsensitiveHash, CaseInsensitiveEqual>;

// The lookup every command makes: open addressing over a power-of-two array at most a quarter
// full, so that finding a name is one hash of a few bytes, usually one probe and one compare
// (the unordered_map costs a division by a prime and a node walk, about 5% of the server's CPU
// on pipelined GETs). A copy of a CommandIndex, rebuilt whenever that changes (registration,
// rename-command), never on the command path; the names are views into the index's keys.
class FlatCommandIndex {
 public:
  void rebuild(const CommandIndex& index);
  Command* find(std::string_view name) const;

 private:
  struct Slot {
    std::string_view name;
    Command* command = nullptr;
  };
  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

// A registered command: its row, its full name ("config|get") and its counters.
struct Command {
  const CommandSpec* spec;
  std::string full_name;
  uint32_t acl_categories;  // with the flag-implied ones
  Command* parent = nullptr;
  std::map<std::string, std::unique_ptr<Command>, std::less<>> subcommands;
  CommandIndex subcommand_index;  // the same subcommands, for lookup
  mutable CommandStats stats;  // counters, updated through const references too
  // Redis's metadata (docs, tips, key specifications), null for a command Redis 7.0 lacks.
  const CommandMetadata* metadata = nullptr;
  // The key specifications: the metadata's, or for a command without metadata one range built
  // from first/last/step.
  std::span<const KeySpec> key_specs;
  std::vector<KeySpec> derived_key_specs;  // storage of the latter
  // As Redis 7.0 derives it: a key specification other than index + range (for a command
  // without metadata: a key finder).
  bool movable_keys = false;
  // The command's bit in ACL command bitmaps (commands/acl.h): unique, assigned at
  // registration.
  uint32_t acl_id = 0;

  bool has(uint32_t flag) const { return (spec->flags & flag) != 0; }
  // The flags COMMAND shows: the row's, with movablekeys as derived above.
  uint32_t shown_flags() const {
    return (spec->flags & ~uint32_t{kMovableKeys}) | (movable_keys ? uint32_t{kMovableKeys} : 0u);
  }
  bool is_container() const { return !subcommands.empty(); }
};

class CommandTable {
 public:
  void add(std::span<const CommandSpec> rows);
  // Case-insensitive lookup of a top-level command.
  Command* find(std::string_view name) const;
  // Looks up argv the way Redis 7 does: a container with a second argument resolves to the
  // subcommand (null if unknown); a container alone resolves to itself (arity fails later).
  Command* find_for_args(std::span<const std::string_view> args) const;

  // Looks args up by the commands' original names, whatever rename-command did (internal
  // calls, as Redis's lookupCommandOrOriginal).
  Command* find_original_for_args(std::span<const std::string_view> args) const;

  // rename-command (config file only): from now on `name` answers to `new_name`, or to nothing
  // when `new_name` is empty. As in Redis 7.0 the command keeps its own name in replies
  // (COMMAND, COMMAND LIST, error messages, INFO commandstats), and a removed command is gone
  // from COMMAND and COMMAND COUNT. Returns "" or Redis's reason for refusing the line.
  std::string rename(std::string_view name, std::string_view new_name);

  // The registered commands under their own names, removed ones left out.
  const std::map<std::string, std::unique_ptr<Command>, std::less<>>& commands() const {
    return commands_;
  }
  size_t size() const { return commands_.size(); }
  // Calls `visit` for every listed command, each followed by its subcommands, by name.
  template <typename Visit>
  void for_each(const Visit& visit) const {
    for_each_in(commands_, visit);
  }
  void reset_stats();

  // Names of the ACL categories set in `categories`, in Redis's order.
  static std::vector<std::string_view> acl_category_names(uint32_t categories);
  // Names of the COMMAND flags set in `flags`.
  static std::vector<std::string_view> flag_names(uint32_t flags);

  // The keys of `args` and their flags, as Redis's COMMAND GETKEYSANDFLAGS finds them: by the
  // key specifications, falling back to the command's key finder when one of them cannot tell
  // (unknown, incomplete, a bad count). Empty when the arguments name no valid keys.
  static std::vector<KeyReference> keys(const Command& command,
                                        std::span<const std::string_view> args);
  // Whether COMMAND GETKEYS has anything to look for: a key finder, or a key specification
  // that is not NOT_KEY.
  static bool has_keys(const Command& command);

 private:
  template <typename Visit>
  static void for_each_in(const std::map<std::string, std::unique_ptr<Command>, std::less<>>& map,
                          const Visit& visit) {
    for (const auto& [name, command] : map) {
      visit(*command);
      for_each_in(command->subcommands, visit);
    }
  }

  std::map<std::string, std::unique_ptr<Command>, std::less<>> commands_;  // ordered, owning
  CommandIndex index_;                                                       // for lookup
  FlatCommandIndex fast_index_;  // index_'s copy for the lookups of the command path
  CommandIndex original_index_;  // by original name, renamed and removed commands included
  std::vector<std::unique_ptr<Command>> removed_;  // renamed to "": kept alive, never listed
  std::vector<std::unique_ptr<std::string>> new_names_;  // storage of the index's new keys
  uint32_t next_acl_id_ = 0;
};

}  // namespace keywarden
