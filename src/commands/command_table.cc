#include "commands/command_table.h"

#include <cctype>

namespace keywarden {
namespace {

constexpr size_t kMaxCommandNameLength = 64;

// Fills `out` with the lowercase form of `name`; false when too long to be a command.
bool lowercase_name(std::string_view name, char (&out)[kMaxCommandNameLength], size_t* length) {
  if (name.size() > kMaxCommandNameLength) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    out[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(name[i])));
  }
  *length = name.size();
  return true;
}

uint32_t implied_categories(const CommandSpec& spec) {
  uint32_t categories = spec.acl_categories;
  if (spec.flags & kWrite) categories |= kAclWrite;
  if (spec.flags & kReadonly) categories |= kAclRead;
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
    command->subcommands.emplace(std::string(sub.name), make_command(sub, command.get()));
  }
  return command;
}

Command* find_in(const std::map<std::string, std::unique_ptr<Command>, std::less<>>& map,
                 std::string_view name) {
  char lower[kMaxCommandNameLength];
  size_t length;
  if (!lowercase_name(name, lower, &length)) return nullptr;
  auto it = map.find(std::string_view(lower, length));
  return it == map.end() ? nullptr : it->second.get();
}

void reset(Command& command) {
  command.stats = {};
  for (auto& [name, sub] : command.subcommands) reset(*sub);
}

}  // namespace

void CommandTable::add(std::span<const CommandSpec> rows) {
  for (const CommandSpec& spec : rows) {
    commands_[std::string(spec.name)] = make_command(spec, nullptr);
  }
}

Command* CommandTable::find(std::string_view name) const { return find_in(commands_, name); }

Command* CommandTable::find_for_args(std::span<const std::string_view> args) const {
  Command* base = find(args[0]);
  if (base == nullptr || !base->is_container() || args.size() < 2) return base;
  return find_in(base->subcommands, args[1]);
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

std::vector<int> CommandTable::key_positions(const Command& command,
                                             std::span<const std::string_view> args) {
  std::vector<int> positions;
  const CommandSpec& spec = *command.spec;
  if (spec.first_key <= 0) return positions;
  int argc = static_cast<int>(args.size());
  int last = spec.last_key >= 0 ? spec.last_key : argc + spec.last_key;
  int step = spec.key_step > 0 ? spec.key_step : 1;
  for (int i = spec.first_key; i <= last && i < argc; i += step) positions.push_back(i);
  return positions;
}

}  // namespace keywarden
