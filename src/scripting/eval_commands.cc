// EVAL, EVALSHA, their _RO forms and SCRIPT (the script cache), FCALL, FCALL_RO and FUNCTION
// (libraries). The work is the ScriptEngine's; these handlers only find it and parse what is
// theirs to parse.
#include <string_view>

#include "commands/context.h"
#include "commands/errors.h"
#include "common/ascii.h"
#include "scripting/eval_commands.h"
#include "scripting/script_engine.h"

namespace keywarden {
namespace {

ScriptEngine& engine(CommandContext& ctx) { return ctx.service<ScriptEngine>(); }

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

void fcall_command(CommandContext& ctx) { engine(ctx).fcall(ctx, false); }
void fcall_ro_command(CommandContext& ctx) { engine(ctx).fcall(ctx, true); }

// FUNCTION FLUSH/LOAD/DELETE change what replicas and the AOF must hold: they propagate as
// received.
void function_load_command(CommandContext& ctx) {
  bool replace = false;
  size_t at = 2;
  if (ctx.args.size() > 3) {
    if (!equals_ignore_case(ctx.args[2], "replace") || ctx.args.size() > 4) {
      ctx.error("ERR Unknown option given: " + std::string(ctx.args[2]));
      return;
    }
    replace = true;
    at = 3;
  }
  engine(ctx).function_load(ctx, ctx.args[at], replace);
  if (ctx.failed()) return;
  ctx.changed_without_key();
}

void function_delete_command(CommandContext& ctx) {
  engine(ctx).function_delete(ctx, ctx.args[2]);
  if (ctx.failed()) return;
  ctx.changed_without_key();
}

void function_flush_command(CommandContext& ctx) {
  if (ctx.args.size() > 3) {
    ctx.error(errors::subcommand_syntax(ctx.args[0], ctx.args[1]));
    return;
  }
  if (ctx.args.size() == 3 && !equals_ignore_case(ctx.args[2], "sync") &&
      !equals_ignore_case(ctx.args[2], "async")) {
    ctx.error(errors::kFunctionFlushMode);
    return;
  }
  engine(ctx).function_flush();
  ctx.changed_without_key();
  ctx.reply.simple_string("OK");
}

void function_list_command(CommandContext& ctx) { engine(ctx).function_list(ctx); }
void function_dump_command(CommandContext& ctx) { engine(ctx).function_dump(ctx); }

void function_restore_command(CommandContext& ctx) {
  engine(ctx).function_restore(ctx);
  if (ctx.failed()) return;
  ctx.changed_without_key();
}
void function_stats_command(CommandContext& ctx) { engine(ctx).function_stats(ctx); }
void function_kill_command(CommandContext& ctx) { engine(ctx).script_kill(ctx, true); }

void function_help_command(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "LOAD [REPLACE] <FUNCTION CODE>",
      "    Create a new library with the given library name and code.",
      "DELETE <LIBRARY NAME>",
      "    Delete the given library.",
      "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
      "    Return general information on all the libraries:",
      "    * Library name",
      "    * The engine used to run the Library",
      "    * Library description",
      "    * Functions list",
      "    * Library code (if WITHCODE is given)",
      "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
      "STATS",
      "    Return information about the current function running:",
      "    * Function name",
      "    * Command used to run the function",
      "    * Duration in MS that the function is running",
      "    If no function is running, return nil",
      "    In addition, returns a list of available engines.",
      "KILL",
      "    Kill the current running function.",
      "FLUSH [ASYNC|SYNC]",
      "    Delete all the libraries.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the libraries.",
      "    * SYNC: Synchronously flush the libraries.",
      "DUMP",
      "    Return a serialized payload representing the current libraries, can be restored using "
      "FUNCTION RESTORE command",
      "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
      "    Restore the libraries represented by the given payload, it is possible to give a "
      "restore policy to",
      "    control how to handle existing libraries (default APPEND):",
      "    * FLUSH: delete all existing libraries.",
      "    * APPEND: appends the restored libraries to the existing libraries. On collision, "
      "abort.",
      "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
      "replace the old",
      "      libraries with the new libraries (notice that even on this option there is a "
      "chance of failure",
      "      in case of functions name collision with another library).",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply_status_lines(kLines);
}

constexpr uint32_t kEvalFlags = kNoScript | kStale | kSkipMonitor | kNoMandatoryKeys | kMovableKeys;
// EVAL, EVALSHA and FCALL may replicate (CLIENT PAUSE WRITE holds them back) unless their script
// declares flags (ServerState::command_flags); the _RO variants never do.
constexpr uint32_t kEvalWriteFlags = kEvalFlags | kMayReplicate;
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

constexpr std::string_view kFunctionDeletedComplexity = "O(1)";

constexpr CommandSpec kFunctionSubcommands[] = {
    {"delete", 3, kWrite | kNoScript, 0, 0, 0, kAclScripting, function_delete_command,
     "scripting", "7.0.0", "Delete a function by name", kFunctionDeletedComplexity},
    {"dump", 2, kNoScript, 0, 0, 0, kAclScripting, function_dump_command, "scripting",
     "7.0.0", "Dump all functions into a serialized binary payload",
     "O(N) where N is the number of functions"},
    {"flush", -2, kWrite | kNoScript, 0, 0, 0, kAclScripting, function_flush_command,
     "scripting", "7.0.0", "Deleting all functions",
     "O(N) where N is the number of functions deleted"},
    {"help", 2, kLoading | kStale, 0, 0, 0, kAclScripting, function_help_command, "scripting",
     "7.0.0", "Show helpful text about the different subcommands", "O(1)"},
    {"kill", 2, kNoScript | kAllowBusy, 0, 0, 0, kAclScripting, function_kill_command,
     "scripting", "7.0.0", "Kill the function currently in execution.", "O(1)"},
    {"list", -2, kNoScript, 0, 0, 0, kAclScripting, function_list_command, "scripting", "7.0.0",
     "List information about all the functions", "O(N) where N is the number of functions"},
    {"load", -3, kWrite | kDenyOom | kNoScript, 0, 0, 0, kAclScripting, function_load_command,
     "scripting", "7.0.0", "Create a function with the given arguments (name, code, description)",
     "O(1) (considering compilation time is redundant)"},
    {"restore", -3, kWrite | kDenyOom | kNoScript, 0, 0, 0, kAclScripting,
     function_restore_command, "scripting", "7.0.0",
     "Restore all the functions on the given payload", "O(N) where N is the number of functions on the payload"},
    {"stats", 2, kNoScript | kAllowBusy, 0, 0, 0, kAclScripting, function_stats_command,
     "scripting", "7.0.0",
     "Return information about the function currently running (name, description, duration)",
     "O(1)"},
};

constexpr CommandSpec kEvalCommands[] = {
    {"fcall", -3, kEvalWriteFlags | kRunsScripts, 0, 0, 0, kAclScripting, fcall_command,
     "scripting", "7.0.0", "Invoke a function", "Depends on the function that is executed.", {},
     numkeys_keys<2>},
    {"fcall_ro", -3, kEvalFlags | kReadonly | kRunsScripts, 0, 0, 0, kAclScripting,
     fcall_ro_command, "scripting", "7.0.0", "Invoke a read-only function",
     "Depends on the function that is executed.", {}, numkeys_keys<2>},
    {"function", -2, 0, 0, 0, 0, 0, nullptr, "scripting", "7.0.0",
     "A container for function commands", "Depends on subcommand.", kFunctionSubcommands},
    {"eval", -3, kEvalWriteFlags | kRunsScripts, 0, 0, 0, kAclScripting, eval_command, "scripting",
     "2.6.0", "Execute a Lua script server side", kEvalComplexity, {}, numkeys_keys<2>},
    {"evalsha", -3, kEvalWriteFlags | kRunsScripts, 0, 0, 0, kAclScripting, evalsha_command,
     "scripting", "2.6.0", "Execute a Lua script server side", kEvalComplexity, {},
     numkeys_keys<2>},
    {"eval_ro", -3, kEvalFlags | kReadonly | kRunsScripts, 0, 0, 0, kAclScripting, eval_ro_command,
     "scripting", "7.0.0", "Execute a read-only Lua script server side", kEvalComplexity, {},
     numkeys_keys<2>},
    {"evalsha_ro", -3, kEvalFlags | kReadonly | kRunsScripts, 0, 0, 0, kAclScripting,
     evalsha_ro_command, "scripting", "7.0.0", "Execute a read-only Lua script server side",
     kEvalComplexity, {}, numkeys_keys<2>},
    {"script", -2, 0, 0, 0, 0, 0, nullptr, "scripting", "2.6.0",
     "A container for Lua scripts management commands", "Depends on subcommand.",
     kScriptSubcommands},
};

}  // namespace

void register_eval_commands(CommandTable& table) { table.add(kEvalCommands); }

}  // namespace keywarden
