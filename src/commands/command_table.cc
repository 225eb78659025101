#include "commands/command_table.h"

#include <algorithm>
#include <cassert>
#include <cctype>

#include "common/number.h"

namespace keywarden {
namespace {

uint32_t implied_categories(const CommandSpec& spec) {
  uint32_t categories = spec.acl_categories;
  if (spec.flags & kWrite) categories |= kAclWrite;
  // Read-only scripting commands (EVAL_RO, FCALL_RO) stay out of @read, as in Redis.
  if ((spec.flags & kReadonly) && !(categories & kAclScripting)) categories |= kAclRead;
  if (spec.flags & kAdmin) categories |= kAclAdmin | kAclDangerous;
  if (spec.flags & kPubSub) categories |= kAclPubSub;
  if (spec.flags & kFast) categories |= kAclFast;
  if (spec.flags & kBlocking) categories |= kAclBlocking;
  if (!(categories & kAclFast)) categories |= kAclSlow;
  return categories;
}

// The one range key specification a row's first/last/step describe, for a command without
// Redis metadata. Its flags are inferred from the command flags, as Redis's commands of those
// shapes have them: shard channels are not keys, writes update, reads access.
KeySpec legacy_range_spec(const CommandSpec& spec) {
  uint32_t flags = kKeyRO | kKeyAccess;
  if (spec.flags & kPubSub) {
    flags = kKeyNotKey;
  } else if (spec.flags & kWrite) {
    flags = kKeyRW | kKeyUpdate;
  }
  // Redis counts a non-negative last key from the first key, a negative one from the end.
  const int lastkey = spec.last_key >= 0 ? spec.last_key - spec.first_key : spec.last_key;
  return KeySpec{{}, flags, KeySpec::Begin::kIndex, spec.first_key, {}, 0,
                 KeySpec::Find::kRange, lastkey, spec.key_step, 0, 0, 0};
}

void attach_key_specs(Command& command) {
  const CommandSpec& spec = *command.spec;
  command.metadata = find_command_metadata(command.full_name);
  if (command.metadata != nullptr) {
    command.key_specs = command.metadata->key_specs;
  } else if (spec.first_key > 0) {
    command.derived_key_specs.push_back(legacy_range_spec(spec));
    command.key_specs = command.derived_key_specs;
  }
  // Redis 7.0's rule for its own commands: any key specification that is not a fixed index
  // with a range after it makes the keys movable (SET has a key finder of its own, for its
  // variable flags, and is not movable). A command without metadata has no such
  // specification, and is movable when it has a key finder.
  command.movable_keys = command.metadata == nullptr && spec.find_keys != nullptr;
  for (const KeySpec& key_spec : command.key_specs) {
    if (key_spec.begin != KeySpec::Begin::kIndex || key_spec.find != KeySpec::Find::kRange) {
      command.movable_keys = true;
    }
  }
}

std::unique_ptr<Command> make_command(const CommandSpec& spec, Command* parent) {
  auto command = std::make_unique<Command>();
  command->spec = &spec;
  command->parent = parent;
  command->full_name = parent ? parent->full_name + "|" + std::string(spec.name)
                              : std::string(spec.name);
  command->acl_categories = implied_categories(spec);
  attach_key_specs(*command);
  for (const CommandSpec& sub : spec.subcommands) {
    auto [it, inserted] =
        command->subcommands.emplace(std::string(sub.name), make_command(sub, command.get()));
    command->subcommand_index[it->first] = it->second.get();
  }
  return command;
}

Command* find_in(const CommandIndex& index, std::string_view name) {
  auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

void reset(Command& command) {
  command.stats = {};
  for (auto& [name, sub] : command.subcommands) reset(*sub);
}

// ASCII only, inline: command names are ASCII, and libc's tolower is a call per byte.
unsigned char lower(char c) {
  unsigned char byte = static_cast<unsigned char>(c);
  return byte >= 'A' && byte <= 'Z' ? byte + ('a' - 'A') : byte;
}

}  // namespace

size_t CaseInsensitiveHash::operator()(std::string_view text) const {
  // FNV-1a over the lowercased bytes: command names are short and few.
  uint64_t hash = 14695981039346656037ull;
  for (char c : text) hash = (hash ^ lower(c)) * 1099511628211ull;
  return static_cast<size_t>(hash);
}

bool CaseInsensitiveEqual::operator()(std::string_view a, std::string_view b) const {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

void FlatCommandIndex::rebuild(const CommandIndex& index) {
  size_t capacity = 16;
  while (capacity < index.size() * 4) capacity *= 2;
  slots_.assign(capacity, Slot{});
  mask_ = capacity - 1;
  for (const auto& [name, command] : index) {
    size_t at = CaseInsensitiveHash{}(name) & mask_;
    while (slots_[at].command != nullptr) at = (at + 1) & mask_;
    slots_[at] = Slot{name, command};
  }
}

Command* FlatCommandIndex::find(std::string_view name) const {
  if (slots_.empty()) return nullptr;
  for (size_t at = CaseInsensitiveHash{}(name) & mask_;; at = (at + 1) & mask_) {
    const Slot& slot = slots_[at];
    if (slot.command == nullptr) return nullptr;
    if (slot.name.size() == name.size() && CaseInsensitiveEqual{}(slot.name, name)) {
      return slot.command;
    }
  }
}

void CommandTable::add(std::span<const CommandSpec> rows) {
  for (const CommandSpec& spec : rows) {
    auto& slot = commands_[std::string(spec.name)];
    slot = make_command(spec, nullptr);
    // ACL bitmaps index commands by these ids; the last bit of a bitmap is reserved.
    slot->acl_id = next_acl_id_++;
    for (auto& [name, sub] : slot->subcommands) sub->acl_id = next_acl_id_++;
    assert(next_acl_id_ < 1023);
    index_[commands_.find(spec.name)->first] = slot.get();
    original_index_[commands_.find(spec.name)->first] = slot.get();
  }
  fast_index_.rebuild(index_);
}

Command* CommandTable::find_original_for_args(std::span<const std::string_view> args) const {
  Command* base = find_in(original_index_, args[0]);
  if (base == nullptr || !base->is_container() || args.size() < 2) return base;
  return find_in(base->subcommand_index, args[1]);
}

std::string CommandTable::rename(std::string_view name, std::string_view new_name) {
  auto current = index_.find(name);
  if (current == index_.end()) return "No such command in rename-command";
  Command* command = current->second;
  if (!new_name.empty() && index_.contains(new_name) &&
      !CaseInsensitiveEqual{}(new_name, name)) {
    return "Target command name already exists";
  }
  index_.erase(current);
  if (new_name.empty()) {
    auto owned = commands_.find(command->full_name);
    removed_.push_back(std::move(owned->second));
    commands_.erase(owned);
  } else {
    new_names_.push_back(std::make_unique<std::string>(new_name));
    index_[*new_names_.back()] = command;
  }
  fast_index_.rebuild(index_);
  return "";
}

Command* CommandTable::find(std::string_view name) const { return fast_index_.find(name); }

Command* CommandTable::find_for_args(std::span<const std::string_view> args) const {
  Command* base = find(args[0]);
  if (base == nullptr || !base->is_container() || args.size() < 2) return base;
  return find_in(base->subcommand_index, args[1]);
}

void CommandTable::reset_stats() {
  for (auto& [name, command] : commands_) reset(*command);
}

std::vector<std::string_view> CommandTable::acl_category_names(uint32_t categories) {
  static constexpr std::string_view kNames[] = {
      "keyspace", "read",      "write",     "set",      "sortedset", "list",   "hash",
      "string",   "bitmap",    "hyperloglog", "geo",    "stream",    "pubsub", "admin",
      "fast",     "slow",      "blocking",  "dangerous", "connection", "transaction",
      "scripting"};
  std::vector<std::string_view> names;
  for (size_t bit = 0; bit < std::size(kNames); ++bit) {
    if (categories & (1u << bit)) names.push_back(kNames[bit]);
  }
  return names;
}

std::vector<std::string_view> CommandTable::flag_names(uint32_t flags) {
  // Redis 7.0's order. It keeps may_replicate, sentinel and protected to itself: COMMAND does
  // not list them.
  static constexpr std::pair<uint32_t, std::string_view> kNames[] = {
      {kWrite, "write"},
      {kReadonly, "readonly"},
      {kDenyOom, "denyoom"},
      {kAdmin, "admin"},
      {kPubSub, "pubsub"},
      {kNoScript, "noscript"},
      {kBlocking, "blocking"},
      {kLoading, "loading"},
      {kStale, "stale"},
      {kSkipMonitor, "skip_monitor"},
      {kSkipSlowlog, "skip_slowlog"},
      {kFast, "fast"},
      {kNoAuth, "no_auth"},
      {kNoMandatoryKeys, "no_mandatory_keys"},
      {kNoAsyncLoading, "no_async_loading"},
      {kNoMulti, "no_multi"},
      {kMovableKeys, "movablekeys"},
      {kAllowBusy, "allow_busy"},
  };
  std::vector<std::string_view> names;
  for (const auto& [flag, name] : kNames) {
    if (flags & flag) names.push_back(name);
  }
  return names;
}

int64_t atoi_prefix(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && (text[i] == ' ' || (text[i] >= '\t' && text[i] <= '\r'))) ++i;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  int64_t value = 0;
  // Saturates instead of overflowing: any count this large is refused by the caller anyway.
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (value < (int64_t{1} << 40)) value = value * 10 + (text[i] - '0');
  }
  return negative ? -value : value;
}

namespace {

// Redis's getKeysUsingKeySpecs: every key specification that is not NOT_KEY, in order. False
// when one of them cannot tell (an unknown step, an incomplete spec, a count or a range out of
// the arguments): the caller then falls back to the key finder.
bool keys_from_specs(const Command& command, std::span<const std::string_view> args,
                     std::vector<KeyReference>* keys) {
  const int argc = static_cast<int>(args.size());
  for (const KeySpec& spec : command.key_specs) {
    if (spec.flags & kKeyNotKey) continue;
    int first = 0;
    if (spec.begin == KeySpec::Begin::kIndex) {
      first = spec.index;
    } else if (spec.begin == KeySpec::Begin::kKeyword) {
      // Forwards from a positive start up to the last argument, or backwards from a negative
      // one down to the second argument.
      const int start = spec.startfrom > 0 ? spec.startfrom : argc + spec.startfrom;
      const int end = spec.startfrom > 0 ? argc - 1 : 1;
      for (int i = start; i != end; i = start <= end ? i + 1 : i - 1) {
        if (i >= argc || i < 1) break;
        if (CaseInsensitiveEqual{}(args[i], spec.keyword)) {
          first = i + 1;
          break;
        }
      }
      if (first == 0) continue;  // the keyword is absent: this spec names no keys
    } else {
      return false;
    }

    int last = 0;
    int step = 1;
    if (spec.find == KeySpec::Find::kRange) {
      step = spec.keystep;
      if (spec.lastkey >= 0) {
        last = first + spec.lastkey;
      } else if (spec.limit == 0) {
        last = argc + spec.lastkey;
      } else {
        last = first + ((argc - first) / spec.limit + spec.lastkey);
      }
    } else if (spec.find == KeySpec::Find::kKeynum) {
      step = spec.keystep;
      if (first + spec.keynumidx >= argc) return false;
      int64_t count;
      if (!parse_int64(args[first + spec.keynumidx], &count) || count < 0 || count > argc) {
        return false;
      }
      first += spec.firstkey;
      last = first + static_cast<int>(count) - 1;
    } else {
      return false;
    }
    if (last >= argc || last < first || first >= argc) return false;
    step = std::max(step, 1);  // a row's key step of 0 must not loop forever
    for (int i = first; i <= last; i += step) keys->push_back({i, spec.flags});
    if (spec.flags & kKeyIncomplete) return false;
  }
  return true;
}

// The flags Redis's own key finders give their keys: only SORT's, SORT_RO's and MIGRATE's name
// any; the numkeys finders leave them empty.
uint32_t finder_key_flags(const Command& command, size_t index) {
  if (command.full_name == "sort") return index == 0 ? kKeyRO | kKeyAccess : kKeyOW | kKeyUpdate;
  if (command.full_name == "sort_ro") return kKeyRO | kKeyAccess;
  if (command.full_name == "migrate") return kKeyRW | kKeyAccess | kKeyDelete;
  return 0;
}

// The flags of a key whose specification says VARIABLE_FLAGS, as Redis's own finder for the
// command gives them. SET is the only such command keywarden has: its key is read too when GET
// is among the options.
uint32_t variable_key_flags(const Command& command, std::span<const std::string_view> args,
                            uint32_t spec_flags) {
  if (command.full_name == "set") {
    for (size_t i = 3; i < args.size(); ++i) {
      if (CaseInsensitiveEqual{}(args[i], "get")) return kKeyRW | kKeyAccess | kKeyUpdate;
    }
    return kKeyOW | kKeyUpdate;
  }
  return spec_flags & ~uint32_t{kKeyVariableFlags};
}

}  // namespace

bool CommandTable::has_keys(const Command& command) {
  if (command.spec->find_keys != nullptr) return true;
  for (const KeySpec& spec : command.key_specs) {
    if (!(spec.flags & kKeyNotKey)) return true;
  }
  return false;
}

std::vector<KeyReference> CommandTable::keys(const Command& command,
                                             std::span<const std::string_view> args) {
  std::vector<KeyReference> keys;
  // Specifications with variable flags cannot be trusted for flags: Redis asks the finder.
  bool has_key_spec = false;
  bool variable_flags = false;
  for (const KeySpec& spec : command.key_specs) {
    if (!(spec.flags & kKeyNotKey)) has_key_spec = true;
    if (spec.flags & kKeyVariableFlags) variable_flags = true;
  }
  if (has_key_spec && !variable_flags && keys_from_specs(command, args, &keys)) return keys;
  keys.clear();
  if (command.spec->find_keys == nullptr) {
    // Redis's own finder for a command with variable flags finds the keys where its
    // specifications say, and says how each is used this time.
    if (has_key_spec && variable_flags && keys_from_specs(command, args, &keys)) {
      for (KeyReference& key : keys) key.flags = variable_key_flags(command, args, key.flags);
      return keys;
    }
    keys.clear();
    return keys;
  }
  const std::vector<int> positions = command.spec->find_keys(args);
  for (size_t i = 0; i < positions.size(); ++i) {
    keys.push_back({positions[i], finder_key_flags(command, i)});
  }
  return keys;
}

}  // namespace keywarden
