// Process administration: SHUTDOWN and TIME (DEBUG is in debug_commands.cc; MONITOR, SLOWLOG
// and LATENCY belong to the diagnostics service, diagnostics_commands.cc).
//
// SHUTDOWN saves the RDB file when save points are configured or SAVE is given (a failed save
// refuses to exit unless FORCE), through the persistence layer's RdbService.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "commands/context.h"
#include "commands/errors.h"
#include "common/ascii.h"
#include "common/log.h"
#include "server/server.h"
#include "server/server_families.h"

namespace keywarden {

void reply_subcommand_syntax_error(CommandContext& ctx) {
  ctx.error(errors::subcommand_syntax(ctx.args[0], ctx.args[1]));
}

namespace {

// --- SHUTDOWN ----------------------------------------------------------------------------------

void shutdown_command(CommandContext& ctx) {
  bool nosave = false, save = false, now = false, force = false, abort = false;
  for (size_t i = 1; i < ctx.args.size(); ++i) {
    std::string_view option = ctx.args[i];
    if (equals_ignore_case(option, "nosave")) {
      nosave = true;
    } else if (equals_ignore_case(option, "save")) {
      save = true;
    } else if (equals_ignore_case(option, "now")) {
      now = true;
    } else if (equals_ignore_case(option, "force")) {
      force = true;
    } else if (equals_ignore_case(option, "abort")) {
      abort = true;
    } else {
      return ctx.error(errors::kSyntax);
    }
  }
  if ((abort && (nosave || save || now || force)) || (nosave && save)) {
    return ctx.error(errors::kSyntax);
  }
  // A shutdown never waits (no replicas to catch up, nothing to save), so none is in progress.
  if (abort) return ctx.error(errors::kNoShutdownInProgress);
  // While a script is busy only SHUTDOWN NOSAVE goes through.
  if (!nosave && !ctx.server.busy_reply().empty()) return ctx.error(ctx.server.busy_reply());

  Server& server = Server::from(ctx);
  log_message(LogLevel::kWarning, "User requested shutdown...");
  RdbService& rdb = server.rdb();
  const bool save_points = !rdb.settings().save_points.empty();
  // A background save would race the final one: it is stopped first, as Redis does.
  rdb.kill_background_save();
  if (save || (save_points && !nosave)) {
    log_message(LogLevel::kNotice, "Saving the final RDB snapshot before exiting.");
    if (!rdb.save().empty()) {
      if (!force) {
        log_message(LogLevel::kWarning, "Error trying to save the DB, can't exit.");
        return ctx.error(errors::kShutdownFailed);
      }
      log_message(LogLevel::kWarning, "Error trying to save the DB. Exit anyway.");
    }
  }
  // The client gets no reply: its connection closes when the server stops, as in Redis, and
  // nothing it pipelined after SHUTDOWN runs.
  ctx.session.close_after_reply = true;
  server.request_shutdown();
}

// --- TIME ----------------------------------------------------------------------------

void time_command(CommandContext& ctx) {
  const int64_t now_us = ctx.server.clock().wall_us();
  ctx.reply.array_header(2);
  ctx.reply.bulk_integer(now_us / 1'000'000);
  ctx.reply.bulk_integer(now_us % 1'000'000);
}


// --- Table -------------------------------------------------------------------------------------

constexpr uint32_t kAdminFlags = kAdmin | kNoScript | kLoading | kStale;

constexpr CommandSpec kAdminCommands[] = {
    {"shutdown", -1, kAdminFlags | kNoMulti | kAllowBusy, 0, 0, 0, 0, shutdown_command, "server",
     "1.0.0", "Synchronously save the dataset to disk and then shut down the server",
     "O(N) when saving, where N is the total number of keys in all databases when saving data, "
     "otherwise O(1)"},
    {"time", 1, kLoading | kStale | kFast, 0, 0, 0, 0, time_command, "server", "2.6.0",
     "Return the current server time", "O(1)"},
};

}  // namespace

void register_admin_commands(CommandTable& table) { table.add(kAdminCommands); }

}  // namespace keywarden
