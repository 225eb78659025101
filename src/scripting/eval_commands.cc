// EVAL, EVALSHA, their _RO forms and SCRIPT: the commands of the script cache. The work is the
// ScriptEngine's; these handlers only find it and parse what is theirs to parse.
#include <string_view>

#include "commands/arg_parser.h"
#include "commands/context.h"
#include "commands/errors.h"
#include "scripting/eval_commands.h"
#include "scripting/script_engine.h"

namespace keywarden {
namespace {

ScriptEngine& engine(CommandContext& ctx) { return *ctx.server.scripting(); }

void eval_command(CommandContext& ctx) { engine(ctx).eval(ctx, false, false); }
void evalsha_command(CommandContext& ctx) { engine(ctx).eval(ctx, true, false); }
void eval_ro_command(CommandContext& ctx) { engine(ctx).eval(ctx, false, true); }
void evalsha_ro_command(CommandContext& ctx) { engine(ctx).eval(ctx, true, true); }

void script_load_command(CommandContext& ctx) { engine(ctx).script_load(ctx, ctx.args[2]); }

void script_exists_command(CommandContext& ctx) {
  ctx.reply.array_header(ctx.args.size() - 2);
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    ctx.reply.integer(engine(ctx).script_exists(ctx.args[i]) ? 1 : 0);
  }
}

void script_flush_command(CommandContext& ctx) {
  // ASYNC and SYNC are accepted; the cache is small enough to drop at once either way.
  if (ctx.args.size() > 3 ||
      (ctx.args.size() == 3 && !equals_ignore_case(ctx.args[2], "sync") &&
       !equals_ignore_case(ctx.args[2], "async"))) {
    ctx.error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    return;
  }
  engine(ctx).flush();
  ctx.reply.simple_string("OK");
}

void script_kill_command(CommandContext& ctx) { engine(ctx).script_kill(ctx); }

void script_debug_command(CommandContext& ctx) {
  std::string_view mode = ctx.args[2];
  if (equals_ignore_case(mode, "no")) {
    ctx.reply.simple_string("OK");
  } else if (equals_ignore_case(mode, "yes") || equals_ignore_case(mode, "sync")) {
    // The Lua debugger (LDB) is not built; say so rather than pretend.
    ctx.error("ERR SCRIPT DEBUG is not supported by this server");
  } else {
    ctx.error("ERR Use SCRIPT DEBUG YES/SYNC/NO");
  }
}

void script_help_command(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DEBUG (YES|SYNC|NO)",
      "    Set the debug mode for subsequent scripts executed.",
      "EXISTS <sha1> [<sha1> ...]",
      "    Return information about the existence of the scripts in the script cache.",
      "FLUSH [ASYNC|SYNC]",
      "    Flush the Lua scripts cache. Very dangerous on replicas.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the scripts cache.",
      "    * SYNC: Synchronously flush the scripts cache.",
      "KILL",
      "    Kill the currently executing Lua script.",
      "LOAD <script>",
      "    Load a script into the scripts cache without executing it.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply_status_lines(kLines);
}

constexpr uint32_t kEvalFlags = kNoScript | kStale | kSkipMonitor | kNoMandatoryKeys | kMovableKeys;
constexpr std::string_view kEvalComplexity = "Depends on the script that is executed.";

constexpr CommandSpec kScriptSubcommands[] = {
    {"debug", 3, kNoScript, 0, 0, 0, kAclScripting, script_debug_command, "scripting", "3.2.0",
     "Set the debug mode for executed scripts.", "O(1)"},
    {"exists", -3, kNoScript, 0, 0, 0, kAclScripting, script_exists_command, "scripting",
     "2.6.0", "Check existence of scripts in the script cache.",
     "O(N) with N being the number of scripts to check (so checking a single script is an O(1) "
     "operation)."},
    {"flush", -2, kNoScript, 0, 0, 0, kAclScripting, script_flush_command, "scripting", "2.6.0",
     "Remove all the scripts from the script cache.",
     "O(N) with N being the number of scripts in cache"},
    {"help", 2, kLoading | kStale, 0, 0, 0, kAclScripting, script_help_command, "scripting",
     "5.0.0", "Show helpful text about the different subcommands", "O(1)"},
    {"kill", 2, kNoScript | kAllowBusy, 0, 0, 0, kAclScripting, script_kill_command,
     "scripting", "2.6.0", "Kill the script currently in execution.", "O(1)"},
    {"load", 3, kNoScript | kStale, 0, 0, 0, kAclScripting, script_load_command, "scripting",
     "2.6.0", "Load the specified Lua script into the script cache.",
     "O(N) with N being the length in bytes of the script body."},
};

constexpr CommandSpec kEvalCommands[] = {
    {"eval", -3, kEvalFlags, 0, 0, 0, kAclScripting, eval_command, "scripting", "2.6.0",
     "Execute a Lua script server side", kEvalComplexity, {}, numkeys_keys<2>},
    {"evalsha", -3, kEvalFlags, 0, 0, 0, kAclScripting, evalsha_command, "scripting", "2.6.0",
     "Execute a Lua script server side", kEvalComplexity, {}, numkeys_keys<2>},
    {"eval_ro", -3, kEvalFlags | kReadonly, 0, 0, 0, kAclScripting, eval_ro_command,
     "scripting", "7.0.0", "Execute a read-only Lua script server side", kEvalComplexity, {},
     numkeys_keys<2>},
    {"evalsha_ro", -3, kEvalFlags | kReadonly, 0, 0, 0, kAclScripting, evalsha_ro_command,
     "scripting", "7.0.0", "Execute a read-only Lua script server side", kEvalComplexity, {},
     numkeys_keys<2>},
    {"script", -2, 0, 0, 0, 0, kAclScripting, nullptr, "scripting", "2.6.0",
     "A container for Lua scripts management commands", "Depends on subcommand.",
     kScriptSubcommands},
};

}  // namespace

void register_eval_commands(CommandTable& table) { table.add(kEvalCommands); }

}  // namespace keywarden
