// COMMAND and its subcommands (COUNT, INFO, DOCS, LIST, GETKEYS, GETKEYSANDFLAGS, HELP),
// answered from the command table alone, in Redis 7.0's reply shapes.
//
// The table holds the legacy first/last/step key positions, not Redis's key specifications, so
// every command with keys is presented with one range spec built from them (which is exactly how
// Redis presents a command whose keys form one simple range), and its key flags are inferred
// from the command flags: RO+access for read-only commands, RW+update for writes.
#include <cctype>
#include <string>
#include <vector>

#include "commands/arg_parser.h"
#include "commands/context.h"
#include "commands/errors.h"
#include "commands/families.h"
#include "common/glob.h"

namespace keywarden {
namespace {

using CommandMap = std::map<std::string, std::unique_ptr<Command>, std::less<>>;

// Key access flags as COMMAND INFO's key specs and GETKEYSANDFLAGS name them.
std::vector<std::string_view> key_flag_names(const Command& command) {
  // Shard channels (SPUBLISH, SSUBSCRIBE…) sit in key positions only for cluster routing.
  if (command.has(kPubSub)) return {"not_key"};
  if (command.has(kWrite)) return {"RW", "update"};
  return {"RO", "access"};
}

void reply_flag_set(ReplyWriter& reply, const std::vector<std::string_view>& names,
                    std::string_view prefix = {}) {
  reply.set_header(names.size());
  for (std::string_view name : names) {
    if (prefix.empty()) {
      reply.simple_string(name);
    } else {
      reply.simple_string(std::string(prefix) + std::string(name));
    }
  }
}

bool has_keys(const Command& command) {
  return command.spec->first_key > 0 || command.spec->find_keys != nullptr;
}

// The one range key spec derived from first/last/step. Redis counts a non-negative last key
// from the first key, and a negative one from the end of the arguments.
void reply_key_specs(ReplyWriter& reply, const Command& command) {
  const CommandSpec& spec = *command.spec;
  // Commands with a key finder have no range to describe (their specs are not modelled).
  if (spec.first_key <= 0) {
    reply.set_header(0);
    return;
  }
  reply.set_header(1);
  reply.map_header(3);
  reply.bulk("flags");
  reply_flag_set(reply, key_flag_names(command));
  reply.bulk("begin_search");
  reply.map_header(2);
  reply.bulk("type");
  reply.bulk("index");
  reply.bulk("spec");
  reply.map_header(1);
  reply.bulk("index");
  reply.integer(spec.first_key);
  reply.bulk("find_keys");
  reply.map_header(2);
  reply.bulk("type");
  reply.bulk("range");
  reply.bulk("spec");
  reply.map_header(3);
  reply.bulk("lastkey");
  reply.integer(spec.last_key >= 0 ? spec.last_key - spec.first_key : spec.last_key);
  reply.bulk("keystep");
  reply.integer(spec.key_step);
  reply.bulk("limit");
  reply.integer(0);
}

void reply_command_info(ReplyWriter& reply, const Command& command) {
  const CommandSpec& spec = *command.spec;
  reply.array_header(10);
  reply.bulk(command.full_name);
  reply.integer(spec.arity);
  reply_flag_set(reply, CommandTable::flag_names(spec.flags));
  reply.integer(spec.first_key);
  reply.integer(spec.last_key);
  reply.integer(spec.key_step);
  reply_flag_set(reply, CommandTable::acl_category_names(command.acl_categories), "@");
  reply.set_header(0);  // tips: the table has none
  reply_key_specs(reply, command);
  if (!command.is_container()) {
    reply.set_header(0);
    return;
  }
  reply.array_header(command.subcommands.size());
  for (const auto& [name, sub] : command.subcommands) reply_command_info(reply, *sub);
}

void reply_command_docs(ReplyWriter& reply, const Command& command) {
  const CommandSpec& spec = *command.spec;
  const bool has_complexity = !spec.complexity.empty();
  reply.map_header(3 + (has_complexity ? 1 : 0) + (command.is_container() ? 1 : 0));
  reply.bulk("summary");
  reply.bulk(spec.summary);
  reply.bulk("since");
  reply.bulk(spec.since);
  reply.bulk("group");
  reply.bulk(spec.group);
  if (has_complexity) {
    reply.bulk("complexity");
    reply.bulk(spec.complexity);
  }
  if (command.is_container()) {
    reply.bulk("subcommands");
    reply.map_header(command.subcommands.size());
    for (const auto& [name, sub] : command.subcommands) {
      reply.bulk(sub->full_name);
      reply_command_docs(reply, *sub);
    }
  }
}

// A name as COMMAND INFO and DOCS take it: "get", or "config|get" for a subcommand. Only one
// level of subcommands exists; a subcommand of a plain command is no command at all.
const Command* find_by_full_name(const CommandTable& table, std::string_view name) {
  size_t bar = name.find('|');
  if (bar == std::string_view::npos) return table.find(name);
  std::string_view sub_name = name.substr(bar + 1);
  if (sub_name.find('|') != std::string_view::npos) return nullptr;
  const Command* base = table.find(name.substr(0, bar));
  if (base == nullptr || !base->is_container()) return nullptr;
  std::string lower(sub_name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto it = base->subcommands.find(lower);
  return it == base->subcommands.end() ? nullptr : it->second.get();
}

void reply_all_infos(CommandContext& ctx) {
  const CommandMap& commands = ctx.server.commands().commands();
  ctx.reply.array_header(commands.size());
  for (const auto& [name, command] : commands) reply_command_info(ctx.reply, *command);
}

void command_command(CommandContext& ctx) { reply_all_infos(ctx); }

void command_count_command(CommandContext& ctx) {
  ctx.reply.integer(static_cast<int64_t>(ctx.server.commands().size()));
}

void command_info_command(CommandContext& ctx) {
  if (ctx.args.size() == 2) return reply_all_infos(ctx);
  ctx.reply.array_header(ctx.args.size() - 2);
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    const Command* command = find_by_full_name(ctx.server.commands(), ctx.args[i]);
    if (command == nullptr) {
      ctx.reply.null();
    } else {
      reply_command_info(ctx.reply, *command);
    }
  }
}

void command_docs_command(CommandContext& ctx) {
  const CommandTable& table = ctx.server.commands();
  if (ctx.args.size() == 2) {
    ctx.reply.map_header(table.size());
    for (const auto& [name, command] : table.commands()) {
      ctx.reply.bulk(command->full_name);
      reply_command_docs(ctx.reply, *command);
    }
    return;
  }
  // Unknown names are left out, so the count is known only at the end.
  std::vector<const Command*> found;
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    if (const Command* command = find_by_full_name(table, ctx.args[i])) found.push_back(command);
  }
  ctx.reply.map_header(found.size());
  for (const Command* command : found) {
    ctx.reply.bulk(command->full_name);
    reply_command_docs(ctx.reply, *command);
  }
}

enum class ListFilter { kNone, kModule, kAclCategory, kPattern };

struct ListRequest {
  ListFilter filter = ListFilter::kNone;
  std::string_view argument;
  uint32_t category = 0;  // for kAclCategory; 0 when the name is unknown
};

bool passes(const ListRequest& request, const Command& command) {
  switch (request.filter) {
    case ListFilter::kNone:
      return true;
    case ListFilter::kModule:
      return false;  // no modules are loaded, so no command belongs to one
    case ListFilter::kAclCategory:
      return (command.acl_categories & request.category) != 0;
    case ListFilter::kPattern:
      return glob_match(request.argument, command.full_name, /*nocase=*/true);
  }
  return false;
}

void collect_names(const ListRequest& request, const CommandMap& commands,
                   std::vector<const std::string*>& names) {
  for (const auto& [name, command] : commands) {
    if (passes(request, *command)) names.push_back(&command->full_name);
    collect_names(request, command->subcommands, names);
  }
}

uint32_t category_bit(std::string_view name) {
  std::vector<std::string_view> all = CommandTable::acl_category_names(~0u);
  for (size_t bit = 0; bit < all.size(); ++bit) {
    if (equals_ignore_case(all[bit], name)) return 1u << bit;
  }
  return 0;
}

void command_list_command(CommandContext& ctx) {
  ListRequest request;
  // Only "FILTERBY <type> <value>" as the last three arguments is accepted, as Redis does.
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    const size_t more = ctx.args.size() - 1 - i;
    if (!equals_ignore_case(ctx.args[i], "filterby") || more != 2) {
      return ctx.error(errors::kSyntax);
    }
    std::string_view type = ctx.args[i + 1];
    if (equals_ignore_case(type, "module")) {
      request.filter = ListFilter::kModule;
    } else if (equals_ignore_case(type, "aclcat")) {
      request.filter = ListFilter::kAclCategory;
    } else if (equals_ignore_case(type, "pattern")) {
      request.filter = ListFilter::kPattern;
    } else {
      return ctx.error(errors::kSyntax);
    }
    request.argument = ctx.args[i + 2];
    i += 2;
  }
  if (request.filter == ListFilter::kAclCategory) {
    request.category = category_bit(request.argument);
    if (request.category == 0) request.filter = ListFilter::kModule;  // matches nothing
  }
  std::vector<const std::string*> names;
  collect_names(request, ctx.server.commands().commands(), names);
  ctx.reply.array_header(names.size());
  for (const std::string* name : names) ctx.reply.bulk(*name);
}

// The command named by args[2..] and the positions of its keys among those arguments, or an
// error reply already sent (null).
const Command* resolve_key_command(CommandContext& ctx, std::vector<int>* positions) {
  std::span<const std::string_view> target = ctx.args.subspan(2);
  const Command* command = ctx.server.commands().find_for_args(target);
  if (command == nullptr) {
    ctx.error(errors::kInvalidCommandSpecified);
    return nullptr;
  }
  // GETKEYS leaves out not_key positions, so the shard channel commands have none.
  if (!has_keys(*command) || command->has(kPubSub)) {
    ctx.error(errors::kCommandHasNoKeys);
    return nullptr;
  }
  const int arity = command->spec->arity;
  const int argc = static_cast<int>(target.size());
  if ((arity > 0 && arity != argc) || argc < -arity) {
    ctx.error(errors::kInvalidCommandArgumentCount);
    return nullptr;
  }
  *positions = CommandTable::key_positions(*command, target);
  if (positions->empty() && !command->has(kNoMandatoryKeys)) {
    ctx.error(errors::kInvalidCommandArguments);
    return nullptr;
  }
  return command;
}

void command_getkeys_command(CommandContext& ctx) {
  std::vector<int> positions;
  if (resolve_key_command(ctx, &positions) == nullptr) return;
  ctx.reply.array_header(positions.size());
  for (int position : positions) ctx.reply.bulk(ctx.args[2 + position]);
}

void command_getkeysandflags_command(CommandContext& ctx) {
  std::vector<int> positions;
  const Command* command = resolve_key_command(ctx, &positions);
  if (command == nullptr) return;
  const std::vector<std::string_view> flags = key_flag_names(*command);
  ctx.reply.array_header(positions.size());
  for (int position : positions) {
    ctx.reply.array_header(2);
    ctx.reply.bulk(ctx.args[2 + position]);
    reply_flag_set(ctx.reply, flags);
  }
}

void command_help_command(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "(no subcommand)",
      "    Return details about all Redis commands.",
      "COUNT",
      "    Return the total number of commands in this Redis server.",
      "LIST",
      "    Return a list of all commands in this Redis server.",
      "INFO [<command-name> ...]",
      "    Return details about multiple Redis commands.",
      "    If no command names are given, documentation details for all",
      "    commands are returned.",
      "DOCS [<command-name> ...]",
      "    Return documentation details about multiple Redis commands.",
      "    If no command names are given, documentation details for all",
      "    commands are returned.",
      "GETKEYS <full-command>",
      "    Return the keys from a full Redis command.",
      "GETKEYSANDFLAGS <full-command>",
      "    Return the keys and the access flags from a full Redis command.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply_status_lines(kLines);
}

constexpr uint32_t kIntrospectionFlags = kLoading | kStale;

constexpr CommandSpec kCommandSubcommands[] = {
    {"count", 2, kIntrospectionFlags, 0, 0, 0, kAclConnection, command_count_command, "server",
     "2.8.13", "Get total number of Redis commands", "O(1)"},
    {"docs", -2, kIntrospectionFlags, 0, 0, 0, kAclConnection, command_docs_command, "server",
     "7.0.0", "Get array of specific Redis command documentation",
     "O(N) where N is the number of commands to look up"},
    {"getkeys", -4, kIntrospectionFlags, 0, 0, 0, kAclConnection, command_getkeys_command,
     "server", "2.8.13", "Extract keys given a full Redis command",
     "O(N) where N is the number of arguments to the command"},
    {"getkeysandflags", -4, kIntrospectionFlags, 0, 0, 0, kAclConnection,
     command_getkeysandflags_command, "server", "7.0.0",
     "Extract keys and access flags given a full Redis command",
     "O(N) where N is the number of arguments to the command"},
    {"help", 2, kIntrospectionFlags, 0, 0, 0, kAclConnection, command_help_command, "server",
     "5.0.0", "Show helpful text about the different subcommands", "O(1)"},
    {"info", -2, kIntrospectionFlags, 0, 0, 0, kAclConnection, command_info_command, "server",
     "2.8.13", "Get array of specific Redis command details, or all when no argument is given.",
     "O(N) where N is the number of commands to look up"},
    {"list", -2, kIntrospectionFlags, 0, 0, 0, kAclConnection, command_list_command, "server",
     "7.0.0", "Get an array of Redis command names",
     "O(N) where N is the total number of Redis commands"},
};

// COMMAND is a container that also answers on its own (the full COMMAND INFO listing).
constexpr CommandSpec kIntrospectionCommands[] = {
    {"command", -1, kIntrospectionFlags, 0, 0, 0, kAclConnection, command_command, "server",
     "2.8.13", "Get array of Redis command details",
     "O(N) where N is the total number of Redis commands", kCommandSubcommands},
};

}  // namespace

void register_introspection_commands(CommandTable& table) { table.add(kIntrospectionCommands); }

}  // namespace keywarden
