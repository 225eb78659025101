// The ACL command: SETUSER, GETUSER, DELUSER, LIST, USERS, WHOAMI, CAT, GENPASS, DRYRUN, LOG,
// LOAD, SAVE, HELP, as Redis 7.0.15 answers them. The users, rules and checks are the
// AclStore's (acl.h); this file only parses arguments and shapes replies.
#include <openssl/rand.h>

#include <string>
#include <vector>

#include "commands/acl.h"
#include "commands/context.h"
#include "commands/errors.h"
#include "commands/families.h"
#include "common/ascii.h"
#include "common/log.h"
#include "common/number.h"

namespace keywarden {
namespace {

void acl_setuser_command(CommandContext& ctx) {
  std::string error = ctx.server.acl().set_user(ctx.args[2], ctx.args.subspan(3));
  if (!error.empty()) return ctx.error(error);
  ctx.reply.simple_string("OK");
}

void acl_deluser_command(CommandContext& ctx) {
  for (std::string_view name : ctx.args.subspan(2)) {
    if (name == "default") return ctx.error("ERR The 'default' user cannot be removed");
  }
  int64_t deleted = 0;
  for (std::string_view name : ctx.args.subspan(2)) {
    if (ctx.server.acl().delete_user(name)) ++deleted;
  }
  ctx.reply.integer(deleted);
}

// commands, keys and channels of one selector: GETUSER's fields.
void reply_selector(CommandContext& ctx, const AclSelector& selector) {
  ctx.reply.bulk("commands");
  ctx.reply.bulk(ctx.server.acl().describe_commands(selector));
  ctx.reply.bulk("keys");
  ctx.reply.bulk(AclStore::describe_keys(selector));
  ctx.reply.bulk("channels");
  ctx.reply.bulk(AclStore::describe_channels(selector));
}

void acl_getuser_command(CommandContext& ctx) {
  std::shared_ptr<AclUser> user = ctx.server.acl().find(ctx.args[2]);
  if (user == nullptr) return ctx.reply.null();
  ReplyWriter& reply = ctx.reply;
  reply.map_header(6);
  reply.bulk("flags");
  static constexpr std::string_view kFlagNames[] = {"on", "off", "nopass",
                                                    "skip-sanitize-payload", "sanitize-payload"};
  std::vector<std::string_view> flags;
  for (size_t i = 0; i < std::size(kFlagNames); ++i) {
    if (user->flags & (1u << i)) flags.push_back(kFlagNames[i]);
  }
  reply.set_header(flags.size());
  for (std::string_view flag : flags) reply.bulk(flag);
  reply.bulk("passwords");
  reply.array_header(user->passwords.size());
  for (const std::string& hash : user->passwords) reply.bulk(hash);
  reply_selector(ctx, user->selectors.front());
  reply.bulk("selectors");
  reply.array_header(user->selectors.size() - 1);
  for (size_t i = 1; i < user->selectors.size(); ++i) {
    reply.map_header(3);
    reply_selector(ctx, user->selectors[i]);
  }
}

void acl_list_command(CommandContext& ctx) {
  const AclStore& acl = ctx.server.acl();
  ctx.reply.array_header(acl.users().size());
  for (const auto& [name, user] : acl.users()) {
    ctx.reply.bulk("user " + name + " " + acl.describe_user(*user));
  }
}

void acl_users_command(CommandContext& ctx) {
  const AclStore& acl = ctx.server.acl();
  ctx.reply.array_header(acl.users().size());
  for (const auto& [name, user] : acl.users()) ctx.reply.bulk(name);
}

void acl_whoami_command(CommandContext& ctx) {
  if (ctx.session.user == nullptr) return ctx.reply.null();
  ctx.reply.bulk(ctx.session.user->name);
}

void acl_cat_command(CommandContext& ctx) {
  if (ctx.args.size() > 3) return ctx.error(errors::subcommand_syntax(ctx.args[0], ctx.args[1]));
  if (ctx.args.size() == 2) {
    std::span<const std::string_view> names = acl_category_names();
    ctx.reply.array_header(names.size());
    for (std::string_view name : names) ctx.reply.bulk(name);
    return;
  }
  const uint32_t category = acl_category_by_name(ctx.args[2]);
  if (category == 0) {
    return ctx.error("ERR Unknown category '" + std::string(ctx.args[2].substr(0, 128)) + "'");
  }
  std::vector<std::string_view> names;
  ctx.server.commands().for_each([&](const Command& command) {
    if (command.acl_categories & category) names.push_back(command.full_name);
  });
  ctx.reply.array_header(names.size());
  for (std::string_view name : names) ctx.reply.bulk(name);
}

void acl_genpass_command(CommandContext& ctx) {
  if (ctx.args.size() > 3) return ctx.error(errors::subcommand_syntax(ctx.args[0], ctx.args[1]));
  constexpr int64_t kMaxBits = 4096;
  int64_t bits = 256;
  if (ctx.args.size() == 3 && !parse_int64(ctx.args[2], &bits)) {
    return ctx.error(errors::kNotInteger);
  }
  if (bits <= 0 || bits > kMaxBits) {
    return ctx.error(
        "ERR ACL GENPASS argument must be the number of bits for the output password, a "
        "positive number up to 4096");
  }
  const size_t chars = static_cast<size_t>((bits + 3) / 4);
  std::vector<unsigned char> random((chars + 1) / 2);
  if (RAND_bytes(random.data(), static_cast<int>(random.size())) != 1) {
    return ctx.error("ERR Failed to generate random bytes");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string password;
  for (unsigned char byte : random) {
    password += kHex[byte >> 4];
    password += kHex[byte & 0xf];
  }
  password.resize(chars);
  ctx.reply.bulk(password);
}

std::string_view reason_name(AclDenial reason) {
  switch (reason) {
    case AclDenial::kCommand: return "command";
    case AclDenial::kKey: return "key";
    case AclDenial::kChannel: return "channel";
    case AclDenial::kAuth: return "auth";
    case AclDenial::kNone: break;
  }
  return "unknown";
}

void acl_log_command(CommandContext& ctx) {
  if (ctx.args.size() > 3) return ctx.error(errors::subcommand_syntax(ctx.args[0], ctx.args[1]));
  AclStore& acl = ctx.server.acl();
  int64_t count = 10;
  if (ctx.args.size() == 3) {
    if (equals_ignore_case(ctx.args[2], "reset")) {
      acl.reset_log();
      return ctx.reply.simple_string("OK");
    }
    if (!parse_int64(ctx.args[2], &count)) return ctx.error(errors::kNotInteger);
    if (count < 0) count = 0;
  }
  const auto& entries = acl.log_entries();
  count = std::min<int64_t>(count, static_cast<int64_t>(entries.size()));
  ctx.reply.array_header(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const AclLogEntry& entry = entries[static_cast<size_t>(i)];
    ctx.reply.map_header(7);
    ctx.reply.bulk("count");
    ctx.reply.integer(static_cast<int64_t>(entry.count));
    ctx.reply.bulk("reason");
    ctx.reply.bulk(reason_name(entry.reason));
    ctx.reply.bulk("context");
    ctx.reply.bulk(entry.context);
    ctx.reply.bulk("object");
    ctx.reply.bulk(entry.object);
    ctx.reply.bulk("username");
    ctx.reply.bulk(entry.username);
    ctx.reply.bulk("age-seconds");
    ctx.reply.double_value(static_cast<double>(ctx.now_ms - entry.created_ms) / 1000);
    ctx.reply.bulk("client-info");
    ctx.reply.bulk(entry.client_info);
  }
}

void acl_dryrun_command(CommandContext& ctx) {
  const AclStore& acl = ctx.server.acl();
  std::shared_ptr<AclUser> user = acl.find(ctx.args[2]);
  if (user == nullptr) {
    return ctx.error("ERR User '" + std::string(ctx.args[2]) + "' not found");
  }
  std::span<const std::string_view> args = ctx.args.subspan(3);
  Command* command = ctx.server.commands().find_for_args(args);
  if (command == nullptr) {
    return ctx.error("ERR Command '" + std::string(args[0]) + "' not found");
  }
  const int arity = command->spec->arity;
  const int argc = static_cast<int>(args.size());
  if ((arity > 0 && arity != argc) || argc < -arity) {
    return ctx.error(errors::wrong_arity(command->full_name));
  }
  const AclVerdict verdict = acl.check(*user, *command, args);
  switch (verdict.denial) {
    case AclDenial::kNone:
      return ctx.reply.simple_string("OK");
    case AclDenial::kCommand:
      return ctx.reply.bulk("This user has no permissions to run the '" + command->full_name +
                            "' command");
    case AclDenial::kKey:
      return ctx.reply.bulk("This user has no permissions to access the '" +
                            std::string(args[static_cast<size_t>(verdict.position)]) + "' key");
    default:
      return ctx.reply.bulk("This user has no permissions to access the '" +
                            std::string(args[static_cast<size_t>(verdict.position)]) +
                            "' channel");
  }
}

void acl_load_save_command(CommandContext& ctx) {
  AclStore& acl = ctx.server.acl();
  if (acl.acl_file.empty()) {
    return ctx.error(
        "ERR This Redis instance is not configured to use an ACL file. You may want to specify "
        "users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a "
        "Redis configuration file set) in order to store users in the Redis configuration.");
  }
  if (equals_ignore_case(ctx.args[1], "load")) {
    std::string errors = acl.load_file();
    if (!errors.empty()) return ctx.error("ERR " + errors);
    return ctx.reply.simple_string("OK");
  }
  if (std::string problem = acl.save_file(); !problem.empty()) {
    log_message(LogLevel::kWarning, problem);
    return ctx.error(
        "ERR There was an error trying to save the ACLs. Please check the server logs for more "
        "information");
  }
  ctx.reply.simple_string("OK");
}

void acl_help_command(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CAT [<category>]",
      "    List all commands that belong to <category>, or all command categories",
      "    when no category is specified.",
      "DELUSER <username> [<username> ...]",
      "    Delete a list of users.",
      "DRYRUN <username> <command> [<arg> ...]",
      "    Returns whether the user can execute the given command without executing the "
      "command.",
      "GETUSER <username>",
      "    Get the user's details.",
      "GENPASS [<bits>]",
      "    Generate a secure 256-bit user password. The optional `bits` argument can",
      "    be used to specify a different size.",
      "LIST",
      "    Show users details in config file format.",
      "LOAD",
      "    Reload users from the ACL file.",
      "LOG [<count> | RESET]",
      "    Show the ACL log entries.",
      "SAVE",
      "    Save the current config to the ACL file.",
      "SETUSER <username> <attribute> [<attribute> ...]",
      "    Create or modify a user with the specified attributes.",
      "USERS",
      "    List all the registered usernames.",
      "WHOAMI",
      "    Return the current connection username.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply_status_lines(kLines);
}

constexpr uint32_t kAclFlags = kNoScript | kLoading | kStale;
constexpr uint32_t kAclAdminFlags = kAdmin | kNoScript | kLoading | kStale;

constexpr CommandSpec kAclSubcommands[] = {
    {"cat", -2, kAclFlags, 0, 0, 0, 0, acl_cat_command, "server", "6.0.0",
     "List the ACL categories or the commands inside a category",
     "O(1) since the categories and commands are a fixed set."},
    {"deluser", -3, kAclAdminFlags, 0, 0, 0, 0, acl_deluser_command, "server", "6.0.0",
     "Remove the specified ACL users and the associated rules",
     "O(1) amortized time considering the typical user."},
    {"dryrun", -4, kAclAdminFlags, 0, 0, 0, 0, acl_dryrun_command, "server", "7.0.0",
     "Returns whether the user can execute the given command without executing the command.",
     "O(1)."},
    {"genpass", -2, kAclFlags, 0, 0, 0, 0, acl_genpass_command, "server", "6.0.0",
     "Generate a pseudorandom secure password to use for ACL users", "O(1)"},
    {"getuser", 3, kAclAdminFlags, 0, 0, 0, 0, acl_getuser_command, "server", "6.0.0",
     "Get the rules for a specific ACL user",
     "O(N). Where N is the number of password, command and pattern rules that the user has."},
    {"help", 2, kLoading | kStale, 0, 0, 0, 0, acl_help_command, "server", "6.0.0",
     "Show helpful text about the different subcommands", "O(1)"},
    {"list", 2, kAclAdminFlags, 0, 0, 0, 0, acl_list_command, "server", "6.0.0",
     "List the current ACL rules in ACL config file format",
     "O(N). Where N is the number of configured users."},
    {"load", 2, kAclAdminFlags, 0, 0, 0, 0, acl_load_save_command, "server", "6.0.0",
     "Reload the ACLs from the configured ACL file",
     "O(N). Where N is the number of configured users."},
    {"log", -2, kAclAdminFlags, 0, 0, 0, 0, acl_log_command, "server", "6.0.0",
     "List latest events denied because of ACLs in place",
     "O(N) with N being the number of entries shown."},
    {"save", 2, kAclAdminFlags, 0, 0, 0, 0, acl_load_save_command, "server", "6.0.0",
     "Save the current ACL rules in the configured ACL file",
     "O(N). Where N is the number of configured users."},
    {"setuser", -3, kAclAdminFlags, 0, 0, 0, 0, acl_setuser_command, "server", "6.0.0",
     "Modify or create the rules for a specific ACL user",
     "O(N). Where N is the number of rules provided."},
    {"users", 2, kAclAdminFlags, 0, 0, 0, 0, acl_users_command, "server", "6.0.0",
     "List the username of all the configured ACL rules",
     "O(N). Where N is the number of configured users."},
    {"whoami", 2, kAclFlags, 0, 0, 0, 0, acl_whoami_command, "server", "6.0.0",
     "Return the name of the user associated to the current connection", "O(1)"},
};

constexpr CommandSpec kAclCommands[] = {
    {"acl", -2, 0, 0, 0, 0, 0, nullptr, "server", "6.0.0",
     "A container for Access List Control commands ", "Depends on subcommand.", kAclSubcommands},
};

}  // namespace

void register_acl_commands(CommandTable& table) { table.add(kAclCommands); }

}  // namespace keywarden
