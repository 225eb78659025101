// COMMAND and its subcommands (COUNT, INFO, DOCS, LIST, GETKEYS, GETKEYSANDFLAGS, HELP),
// answered from the command table, in Redis 7.0's reply shapes.
//
// The behavioural fields (name, arity, flags, first/last/step, ACL categories) come from the
// family rows; the documentation, the tips and the key specifications from Redis's metadata
// (command_metadata.h) when Redis 7.0 has the command. A command it lacks is documented by its
// row and presented with one range key specification built from first/last/step.
#include <cctype>
#include <string>
#include <vector>

#include "commands/command_metadata.h"
#include "commands/context.h"
#include "commands/errors.h"
#include "commands/families.h"
#include "common/ascii.h"
#include "common/glob.h"

namespace keywarden {
namespace {

using CommandMap = std::map<std::string, std::unique_ptr<Command>, std::less<>>;

// Whether the metadata has the field: absent fields are null, a present one may be empty.
bool present(std::string_view field) { return field.data() != nullptr; }

// Names of the set bits of `flags`, bit 0 first.
template <size_t N>
void reply_flag_names(ReplyWriter& reply, uint32_t flags, const std::string_view (&names)[N]) {
  size_t count = 0;
  for (size_t bit = 0; bit < N; ++bit) count += (flags >> bit) & 1u;
  reply.set_header(count);
  for (size_t bit = 0; bit < N; ++bit) {
    if (flags & (1u << bit)) reply.simple_string(names[bit]);
  }
}

void reply_key_flags(ReplyWriter& reply, uint32_t flags) {
  static constexpr std::string_view kNames[] = {
      "RO",     "RW",     "OW",      "RM",         "access",         "update",
      "insert", "delete", "not_key", "incomplete", "variable_flags"};
  reply_flag_names(reply, flags, kNames);
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

void reply_key_spec(ReplyWriter& reply, const KeySpec& spec) {
  reply.map_header(present(spec.notes) ? 4 : 3);
  if (present(spec.notes)) {
    reply.bulk("notes");
    reply.bulk(spec.notes);
  }
  reply.bulk("flags");
  reply_key_flags(reply, spec.flags);
  reply.bulk("begin_search");
  reply.map_header(2);
  reply.bulk("type");
  switch (spec.begin) {
    case KeySpec::Begin::kIndex:
      reply.bulk("index");
      reply.bulk("spec");
      reply.map_header(1);
      reply.bulk("index");
      reply.integer(spec.index);
      break;
    case KeySpec::Begin::kKeyword:
      reply.bulk("keyword");
      reply.bulk("spec");
      reply.map_header(2);
      reply.bulk("keyword");
      reply.bulk(spec.keyword);
      reply.bulk("startfrom");
      reply.integer(spec.startfrom);
      break;
    case KeySpec::Begin::kUnknown:
      reply.bulk("unknown");
      reply.bulk("spec");
      reply.map_header(0);
      break;
  }
  reply.bulk("find_keys");
  reply.map_header(2);
  reply.bulk("type");
  switch (spec.find) {
    case KeySpec::Find::kRange:
      reply.bulk("range");
      reply.bulk("spec");
      reply.map_header(3);
      reply.bulk("lastkey");
      reply.integer(spec.lastkey);
      reply.bulk("keystep");
      reply.integer(spec.keystep);
      reply.bulk("limit");
      reply.integer(spec.limit);
      break;
    case KeySpec::Find::kKeynum:
      reply.bulk("keynum");
      reply.bulk("spec");
      reply.map_header(3);
      reply.bulk("keynumidx");
      reply.integer(spec.keynumidx);
      reply.bulk("firstkey");
      reply.integer(spec.firstkey);
      reply.bulk("keystep");
      reply.integer(spec.keystep);
      break;
    case KeySpec::Find::kUnknown:
      reply.bulk("unknown");
      reply.bulk("spec");
      reply.map_header(0);
      break;
  }
}

void reply_command_info(ReplyWriter& reply, const Command& command) {
  const CommandSpec& spec = *command.spec;
  reply.array_header(10);
  reply.bulk(command.full_name);
  reply.integer(spec.arity);
  reply_flag_set(reply, CommandTable::flag_names(command.shown_flags()));
  reply.integer(spec.first_key);
  reply.integer(spec.last_key);
  reply.integer(spec.key_step);
  reply_flag_set(reply, CommandTable::acl_category_names(command.acl_categories), "@");
  std::span<const std::string_view> tips;
  if (command.metadata != nullptr) tips = command.metadata->tips;
  reply.set_header(tips.size());
  for (std::string_view tip : tips) reply.bulk(tip);
  reply.set_header(command.key_specs.size());
  for (const KeySpec& key_spec : command.key_specs) reply_key_spec(reply, key_spec);
  if (!command.is_container()) {
    reply.set_header(0);
    return;
  }
  reply.array_header(command.subcommands.size());
  for (const auto& [name, sub] : command.subcommands) reply_command_info(reply, *sub);
}

void reply_arguments(ReplyWriter& reply, std::span<const CommandArgument> arguments) {
  static constexpr std::string_view kTypes[] = {"string",    "integer",    "double",
                                                "key",       "pattern",    "unix-time",
                                                "pure-token", "oneof",     "block"};
  static constexpr std::string_view kFlags[] = {"optional", "multiple", "multiple_token"};
  reply.array_header(arguments.size());
  for (const CommandArgument& argument : arguments) {
    const bool nested =
        argument.type == ArgumentType::kOneOf || argument.type == ArgumentType::kBlock;
    reply.map_header(2 + (argument.key_spec_index >= 0) + present(argument.token) +
                     present(argument.summary) + present(argument.since) +
                     present(argument.deprecated_since) + (argument.flags != 0) + nested);
    reply.bulk("name");
    reply.bulk(argument.name);
    reply.bulk("type");
    reply.bulk(kTypes[static_cast<size_t>(argument.type)]);
    if (argument.key_spec_index >= 0) {
      reply.bulk("key_spec_index");
      reply.integer(argument.key_spec_index);
    }
    if (present(argument.token)) {
      reply.bulk("token");
      reply.bulk(argument.token);
    }
    if (present(argument.summary)) {
      reply.bulk("summary");
      reply.bulk(argument.summary);
    }
    if (present(argument.since)) {
      reply.bulk("since");
      reply.bulk(argument.since);
    }
    if (present(argument.deprecated_since)) {
      reply.bulk("deprecated_since");
      reply.bulk(argument.deprecated_since);
    }
    if (argument.flags != 0) {
      reply.bulk("flags");
      reply_flag_names(reply, argument.flags, kFlags);
    }
    if (nested) {
      reply.bulk("arguments");
      reply_arguments(reply, argument.arguments);
    }
  }
}

void reply_command_docs(ReplyWriter& reply, const Command& command);

void reply_subcommand_docs(ReplyWriter& reply, const Command& command) {
  reply.bulk("subcommands");
  reply.map_header(command.subcommands.size());
  for (const auto& [name, sub] : command.subcommands) {
    reply.bulk(sub->full_name);
    reply_command_docs(reply, *sub);
  }
}

// Redis's documentation of the command, in its field order; absent fields are left out.
void reply_metadata_docs(ReplyWriter& reply, const Command& command,
                         const CommandMetadata& docs) {
  static constexpr std::string_view kDocFlags[] = {"deprecated", "syscmd"};
  reply.map_header(1 + present(docs.summary) + present(docs.since) + present(docs.complexity) +
                   (docs.doc_flags != 0) + present(docs.deprecated_since) +
                   present(docs.replaced_by) + !docs.history.empty() + !docs.arguments.empty() +
                   command.is_container());
  if (present(docs.summary)) {
    reply.bulk("summary");
    reply.bulk(docs.summary);
  }
  if (present(docs.since)) {
    reply.bulk("since");
    reply.bulk(docs.since);
  }
  reply.bulk("group");
  reply.bulk(docs.group);
  if (present(docs.complexity)) {
    reply.bulk("complexity");
    reply.bulk(docs.complexity);
  }
  if (docs.doc_flags != 0) {
    reply.bulk("doc_flags");
    reply_flag_names(reply, docs.doc_flags, kDocFlags);
  }
  if (present(docs.deprecated_since)) {
    reply.bulk("deprecated_since");
    reply.bulk(docs.deprecated_since);
  }
  if (present(docs.replaced_by)) {
    reply.bulk("replaced_by");
    reply.bulk(docs.replaced_by);
  }
  if (!docs.history.empty()) {
    reply.bulk("history");
    reply.set_header(docs.history.size());
    for (const CommandHistoryEntry& entry : docs.history) {
      reply.array_header(2);
      reply.bulk(entry.version);
      reply.bulk(entry.change);
    }
  }
  if (!docs.arguments.empty()) {
    reply.bulk("arguments");
    reply_arguments(reply, docs.arguments);
  }
  if (command.is_container()) reply_subcommand_docs(reply, command);
}

void reply_command_docs(ReplyWriter& reply, const Command& command) {
  if (command.metadata != nullptr) return reply_metadata_docs(reply, command, *command.metadata);
  // A command Redis 7.0 lacks: what its row says.
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
  if (command.is_container()) reply_subcommand_docs(reply, command);
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

// The command named by args[2..] and its keys among those arguments, or an error reply already
// sent (null), with Redis's checks in Redis's order.
const Command* resolve_key_command(CommandContext& ctx, std::vector<KeyReference>* keys) {
  std::span<const std::string_view> target = ctx.args.subspan(2);
  const Command* command = ctx.server.commands().find_for_args(target);
  if (command == nullptr) {
    ctx.error(errors::kInvalidCommandSpecified);
    return nullptr;
  }
  if (!CommandTable::has_keys(*command)) {
    ctx.error(errors::kCommandHasNoKeys);
    return nullptr;
  }
  const int arity = command->spec->arity;
  const int argc = static_cast<int>(target.size());
  if ((arity > 0 && arity != argc) || argc < -arity) {
    ctx.error(errors::kInvalidCommandArgumentCount);
    return nullptr;
  }
  *keys = CommandTable::keys(*command, target);
  if (keys->empty() && !command->has(kNoMandatoryKeys)) {
    ctx.error(errors::kInvalidCommandArguments);
    return nullptr;
  }
  return command;
}

void command_getkeys_command(CommandContext& ctx) {
  std::vector<KeyReference> keys;
  if (resolve_key_command(ctx, &keys) == nullptr) return;
  ctx.reply.array_header(keys.size());
  for (const KeyReference& key : keys) ctx.reply.bulk(ctx.args[2 + key.position]);
}

void command_getkeysandflags_command(CommandContext& ctx) {
  std::vector<KeyReference> keys;
  if (resolve_key_command(ctx, &keys) == nullptr) return;
  ctx.reply.array_header(keys.size());
  for (const KeyReference& key : keys) {
    ctx.reply.array_header(2);
    ctx.reply.bulk(ctx.args[2 + key.position]);
    reply_key_flags(ctx.reply, key.flags);
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
