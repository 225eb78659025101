#include "commands/command_table.h"

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

std::unique_ptr<Command> make_command(const CommandSpec& spec, Command* parent) {
  auto command = std::make_unique<Command>();
  command->spec = &spec;
  command->parent = parent;
  command->full_name = parent ? parent->full_name + "|" + std::string(spec.name)
                              : std::string(spec.name);
  command->acl_categories = implied_categories(spec);
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

void CommandTable::add(std::span<const CommandSpec> rows) {
  for (const CommandSpec& spec : rows) {
    auto& slot = commands_[std::string(spec.name)];
    slot = make_command(spec, nullptr);
    index_[commands_.find(spec.name)->first] = slot.get();
    original_index_[commands_.find(spec.name)->first] = slot.get();
  }
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
    return "";
  }
  new_names_.push_back(std::make_unique<std::string>(new_name));
  index_[*new_names_.back()] = command;
  return "";
}

Command* CommandTable::find(std::string_view name) const { return find_in(index_, name); }

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
  // Redis 7.0 keeps may_replicate to itself: COMMAND does not list it, nor our internal flags.
  flags &= ~(uint32_t{kMayReplicate} | kInternalFlags);
  static constexpr std::string_view kNames[] = {
      "write",       "readonly",     "denyoom",  "admin",      "pubsub",
      "noscript",    "blocking",     "loading",  "stale",      "skip_monitor",
      "skip_slowlog", "fast",        "no_auth",  "may_replicate", "no_mandatory_keys",
      "no_multi",    "movablekeys",  "allow_busy", "sentinel"};
  std::vector<std::string_view> names;
  for (size_t bit = 0; bit < std::size(kNames); ++bit) {
    if (flags & (1u << bit)) names.push_back(kNames[bit]);
  }
  return names;
}

bool parse_numkeys(std::string_view text, size_t available, size_t* count) {
  int64_t value;
  if (!parse_int64(text, &value) || value < 1 || static_cast<uint64_t>(value) > available) {
    return false;
  }
  *count = static_cast<size_t>(value);
  return true;
}

std::vector<int> CommandTable::key_positions(const Command& command,
                                             std::span<const std::string_view> args) {
  const CommandSpec& spec = *command.spec;
  if (spec.find_keys != nullptr) return spec.find_keys(args);
  std::vector<int> positions;
  if (spec.first_key <= 0) return positions;
  int argc = static_cast<int>(args.size());
  int last = spec.last_key >= 0 ? spec.last_key : argc + spec.last_key;
  int step = spec.key_step > 0 ? spec.key_step : 1;
  for (int i = spec.first_key; i <= last && i < argc; i += step) positions.push_back(i);
  return positions;
}

}  // namespace keywarden
