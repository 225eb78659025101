// CONFIG GET | SET | RESETSTAT | REWRITE | HELP.
#include <vector>

#include "commands/context.h"
#include "replication/primary.h"
#include "commands/errors.h"
#include "server/server.h"
#include "server/server_families.h"

namespace keywarden {
namespace {

void config_get_command(CommandContext& ctx) {
  Server& server = Server::from(ctx);
  auto pairs = server.config().get(ctx.args.subspan(2));
  ctx.reply.map_header(pairs.size());
  for (const auto& [name, value] : pairs) {
    ctx.reply.bulk(name);
    ctx.reply.bulk(value);
  }
}

void config_set_command(CommandContext& ctx) {
  // Name-value pairs; an odd count is a syntax error in Redis 7.0 (the arity is -4).
  if (ctx.args.size() % 2 != 0) return ctx.error(errors::kSyntax);
  std::string problem = Server::from(ctx).config().set(ctx.args.subspan(2));
  if (!problem.empty()) return ctx.error(problem);
  ctx.reply.simple_string("OK");
}

void config_resetstat_command(CommandContext& ctx) {
  Server& server = Server::from(ctx);
  server.state().stats().reset();
  server.state().commands().reset_stats();
  server.state().keyspace().expiry_stats() = {};
  server.state().eviction().reset_stats();
  server.state().keyspace().lazy_free().reset_stats();
  server.network_stats() = {};
  server.clients().stats() = {};
  server.replication().primary().stats() = {};
  server.diagnostics().reset_stats();
  ctx.reply.simple_string("OK");
}

void config_rewrite_command(CommandContext& ctx) {
  Server& server = Server::from(ctx);
  std::string problem = server.config().rewrite(server.config_file());
  if (!problem.empty()) return ctx.error(problem);
  ctx.reply.simple_string("OK");
}

void config_help_command(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET <pattern>",
      "    Return parameters matching the glob-like <pattern> and their values.",
      "SET <directive> <value>",
      "    Set the configuration <directive> to <value>.",
      "RESETSTAT",
      "    Reset statistics reported by the INFO command.",
      "REWRITE",
      "    Rewrite the configuration file.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply_status_lines(kLines);
}

constexpr uint32_t kConfigFlags = kAdmin | kNoScript | kLoading | kStale;

constexpr CommandSpec kConfigSubcommands[] = {
    {"get", -3, kConfigFlags, 0, 0, 0, 0, config_get_command, "server", "2.0.0",
     "Get the values of configuration parameters",
     "O(N) when N is the number of configuration parameters provided"},
    {"set", -4, kConfigFlags, 0, 0, 0, 0, config_set_command, "server", "2.0.0",
     "Set configuration parameters to the given values",
     "O(N) when N is the number of configuration parameters provided"},
    {"resetstat", 2, kConfigFlags, 0, 0, 0, 0, config_resetstat_command, "server", "2.0.0",
     "Reset the stats returned by INFO", "O(1)"},
    {"rewrite", 2, kConfigFlags, 0, 0, 0, 0, config_rewrite_command, "server", "2.8.0",
     "Rewrite the configuration file with the in memory configuration", "O(1)"},
    {"help", 2, kLoading | kStale, 0, 0, 0, 0, config_help_command, "server", "5.0.0",
     "Show helpful text about the different subcommands", "O(1)"},
};

constexpr CommandSpec kConfigCommands[] = {
    {"config", -2, 0, 0, 0, 0, 0, nullptr, "server", "2.0.0",
     "A container for server configuration commands", "Depends on subcommand.",
     kConfigSubcommands},
};

}  // namespace

void register_config_commands(CommandTable& table) { table.add(kConfigCommands); }

}  // namespace keywarden
