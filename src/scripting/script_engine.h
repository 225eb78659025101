// The Lua engine behind EVAL, EVALSHA, SCRIPT and (sharing it) FUNCTION: one Lua 5.1 state
// with the libraries Redis scripts expect, a sandbox worded as Redis 7's, the script cache,
// and the `redis` table through which scripts run commands.
//
// A script's redis.call goes through the dispatcher with a session of the script's own (the
// caller's database, RESP2 unless the script asks for RESP3), at the time snapshot of the
// EVAL, and its reply is parsed back into Lua values exactly as Redis converts it. Effects
// stay pending during the script and leave as one MULTI … EXEC when there are several.
//
// Lua raises errors with longjmp, which skips C++ destructors: the C functions the engine
// registers do their C++ work in helpers that return before any Lua error is raised.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "commands/client_session.h"
#include "commands/command_table.h"
#include "commands/function_store.h"
#include "commands/service.h"
#include "resp/reply_parser.h"
#include "resp/reply_writer.h"
#include "scripting/script_flags.h"

struct lua_State;
struct lua_Debug;

namespace keywarden {

class CommandContext;
class ServerState;
struct Command;

class ScriptEngine final : public FunctionStore, public Service {
 public:
  explicit ScriptEngine(ServerState& server);
  ~ScriptEngine() override;

  // EVAL…, FCALL…, SCRIPT and FUNCTION, and busy-reply-threshold (alias lua-time-limit).
  void install(ServiceSetup& setup) override;
  ScriptEngine(const ScriptEngine&) = delete;
  ScriptEngine& operator=(const ScriptEngine&) = delete;

  // EVAL / EVAL_RO (by_sha false) and EVALSHA / EVALSHA_RO (true), on ctx's arguments.
  void eval(CommandContext& ctx, bool by_sha, bool read_only);
  // SCRIPT LOAD: compiles and caches; replies the SHA or the compile error.
  void script_load(CommandContext& ctx, std::string_view body);
  bool script_exists(std::string_view sha) const;
  // SCRIPT FLUSH: forgets every cached script and starts a fresh Lua state.
  void flush();
  // SCRIPT KILL: replies as Redis does (NOTBUSY, UNKILLABLE, or OK and the script stops at
  // its next hook).
  void script_kill(CommandContext& ctx, bool function_kill = false);
  // Stops the running script at its next hook whatever it wrote (SHUTDOWN NOSAVE).
  void abort() {
    if (run_ != nullptr) run_->kill_requested = true;
  }

  // While a script runs longer than busy-reply-threshold, `while_busy` is called from the
  // script's instruction hook (at most every few milliseconds) so that the server can answer
  // other clients with -BUSY; SCRIPT KILL arrives through it.
  void set_busy_handler(std::function<void()> handler) { busy_handler_ = std::move(handler); }
  // MONITOR: called with every EVAL/FCALL before it runs, so that its commands follow it, as
  // in Redis (the commands a script runs reach MONITOR through Dispatcher::report_nested, for
  // the script's session).
  using MonitorFeed = std::function<void(const ClientSession& client,
                                         std::span<const std::string_view> args)>;
  void set_monitor_feed(MonitorFeed feed) { monitor_feed_ = std::move(feed); }
  int64_t busy_reply_threshold_ms = 5000;
  bool running() const { return run_ != nullptr; }
  // The running script has been running for longer than busy-reply-threshold.
  bool busy() const { return run_ != nullptr && run_->busy; }
  // The client whose script is running (null when none).
  const ClientSession* running_caller() const;

  size_t cached_scripts() const { return scripts_.size(); }
  // Bytes of script bodies held by the cache (INFO used_memory_scripts_eval).
  size_t cache_bytes() const { return cache_bytes_; }
  // Bytes the EVAL Lua state uses (INFO used_memory_lua).
  size_t lua_memory_bytes() const { return lua_memory_bytes(lua_); }

  // ---- functions (script_functions.cc) ----
  // FUNCTION LOAD [REPLACE] code.
  void function_load(CommandContext& ctx, std::string_view code, bool replace);
  // FCALL / FCALL_RO.
  void fcall(CommandContext& ctx, bool read_only);
  void function_list(CommandContext& ctx);
  void function_delete(CommandContext& ctx, std::string_view library);
  void function_flush();
  // FUNCTION DUMP: the libraries as Redis 7.0 serializes them (RDB function opcodes, RDB
  // version, CRC64). FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE].
  void function_dump(CommandContext& ctx);
  void function_restore(CommandContext& ctx);
  void function_stats(CommandContext& ctx);
  size_t library_count() const { return libraries_.size(); }
  // FunctionStore, for persistence.
  std::vector<std::string> library_codes() const override;
  std::string load_library(std::string_view code) override;
  void clear_libraries() override { function_flush(); }
  size_t function_count() const { return functions_.size(); }
  // Bytes of library code and names (INFO used_memory_functions).
  size_t functions_bytes() const;
  // Bytes the functions' Lua state uses (INFO used_memory_vm_functions).
  size_t functions_lua_memory_bytes() const { return lua_memory_bytes(functions_lua_); }

 private:
  // maxmemory rules for scripts (Redis 7.0's): whether EVAL…/FCALL… with `args` is denyoom by
  // its script's declared flags (1, 0, or -1 when it has none or is unknown), and whether a
  // script with `flags` may start while memory was over the limit (replies -OOM when not).
  int script_denies_oom(const Command& command, std::span<const std::string_view> args);
  // The flags a script declares for EVAL…/FCALL… with `args` (kScriptEvalCompatMode when it
  // declares none); nullopt when `command` runs no script or the script is unknown.
  std::optional<uint32_t> declared_script_flags(const Command& command,
                                                std::span<const std::string_view> args);
  // ServerState::command_flags for scripts: the command's flags as the script's declaration
  // turns them (Redis's scriptFlagsToCmdFlags).
  uint32_t script_command_flags(const Command& command, std::span<const std::string_view> args);
  bool oom_allows_start(CommandContext& ctx, uint32_t flags);
  // The reply when the Lua state ran out of memory outside the script's own code (setting up
  // its arguments, converting its reply).
  static constexpr std::string_view kOutOfMemoryReply =
      "ERR Error running script: not enough memory";
  struct CachedScript {
    std::string body;
    int function_ref;  // in the Lua registry
    uint32_t flags;
  };
  // What one running script needs from the C functions it calls.
  struct Run {
    CommandContext* ctx;
    std::string_view name;  // the SHA or function name, for error texts
    bool read_only;         // EVAL_RO / FCALL_RO, or flags=no-writes
    bool is_function;       // FCALL (FUNCTION KILL stops it) rather than EVAL
    int64_t start_us;
    bool busy = false;
    bool wrote = false;
    bool kill_requested = false;
    std::string killed_at;  // "<source>:<line>" where the kill stopped the script
    int repl = 3;  // redis.set_repl flags: REPL_AOF | REPL_REPLICA
  };

  struct Library {
    std::string name;
    std::string code;
    std::vector<std::string> functions;  // names, in registration order
  };
  struct Function {
    std::string name;
    std::string library;
    int ref;  // the callback, in the functions state's registry
    uint32_t flags;
    bool has_description;
    std::string description;
  };
  using FunctionMap = std::unordered_map<std::string, Function, CaseInsensitiveHash,
                                         CaseInsensitiveEqual>;
  // A library compiled and run (its functions registered in the Lua state) but not yet
  // installed.
  struct PreparedLibrary {
    std::string name;
    std::string code;
    std::vector<Function> functions;
  };
  bool prepare_library(std::string_view code, PreparedLibrary* prepared, std::string* error);
  // Installs prepared libraries, replacing same-named ones when `replace`; all or nothing.
  bool install_libraries(std::vector<PreparedLibrary>& prepared, bool replace,
                         std::string* error);
  void release(PreparedLibrary& prepared);
  void remove_library(std::string_view name);

  void open_state();
  void close_state();
  // The numkeys argument of EVAL and FCALL (ctx.args[2]); false after replying the error.
  bool parse_key_count(CommandContext& ctx, std::string_view not_integer, size_t* count);
  lua_State* create_state(bool for_functions);
  static size_t lua_memory_bytes(lua_State* lua);
  // Runs the function on top of the stack with its `argc` arguments above it and replies.
  void run_function(CommandContext& ctx, lua_State* lua, std::string_view name, bool read_only,
                    bool is_function, int argc);
  // The functions' load-time API table (register_function, log, version) in the registry.
  void push_load_api(lua_State* lua);
  void close_functions();
  static int lua_register_function(lua_State* lua);
  // register_function's checks and bookkeeping; an error text (raised by the caller) or empty.
  std::string_view register_function(lua_State* lua);
  // Compiles `body` as a script function; caches it under its SHA. Null with *error set
  // (the full reply text) when it does not compile or its shebang is wrong.
  const CachedScript* compile(std::string_view sha, std::string_view body, std::string* error);
  void run_script(CommandContext& ctx, const CachedScript& script, std::string_view sha,
                  size_t key_count, bool read_only);

  // The C side of the `redis` table (static trampolines find the engine in an upvalue).
  static int lua_redis_call(lua_State* lua);
  static int lua_redis_pcall(lua_State* lua);
  static int lua_sha1hex(lua_State* lua);
  static int lua_error_reply(lua_State* lua);
  static int lua_status_reply(lua_State* lua);
  static int lua_log(lua_State* lua);
  static int lua_setresp(lua_State* lua);
  static int lua_set_repl(lua_State* lua);
  static int lua_replicate_commands(lua_State* lua);
  static int lua_noop(lua_State* lua);
  static int lua_acl_check_cmd(lua_State* lua);
  static void lua_hook(lua_State* lua, lua_Debug* debug);
  // Remembers where the script was when it was first stopped by a kill.
  void note_kill_position(lua_State* lua, lua_Debug* debug);
  static ScriptEngine& self(lua_State* lua);

  // redis.call / redis.pcall: runs the command on the Lua stack and leaves its converted
  // reply on it. Returns false when the call failed before running (the error table is on
  // the stack then) or the command replied an error (likewise); `raise` decides whether the
  // trampoline raises it.
  bool call_command(lua_State* lua);
  // Checks the script's right to run `command`; empty when allowed, else the error text.
  std::string_view refuse_reason(const Command* command, size_t argc);
  // Pushes the parsed command reply as Redis converts it for Lua.
  void push_reply(lua_State* lua, const RespValue& value);
  // Writes the Lua value at the top of the stack as the script's reply to its caller.
  void write_reply(lua_State* lua, CommandContext& ctx);
  void write_table_reply(lua_State* lua, CommandContext& ctx);
  // Replies the error text of the error table on top of the stack, counting it in errorstats
  // unless a command already did.
  void reply_error(lua_State* lua, CommandContext& ctx, std::string_view text);
  // Replies the error a failed script left on the stack, with the script's name and line.
  void reply_script_error(lua_State* lua, CommandContext& ctx, std::string_view name);
  // Pushes {err = "<CODE> <message>"}: "-CODE message" keeps its code, any other text gets
  // ERR (Redis's normalisation of script errors).
  static void push_error_table(lua_State* lua, std::string_view text);
  // The same for a command's error reply (its text without the leading '-').
  void push_command_error(lua_State* lua, std::string_view reply_text);
  // Raises push_error_table(text) as a Lua error.
  static int raise_error(lua_State* lua, std::string_view text);
  // The hook's work: busy handling and SCRIPT KILL; true when the script must stop.
  bool on_hook();

  ServerState& server_;
  lua_State* lua_ = nullptr;
  std::unordered_map<std::string, CachedScript> scripts_;
  size_t cache_bytes_ = 0;
  std::function<void()> busy_handler_;
  MonitorFeed monitor_feed_;
  Run* run_ = nullptr;
  // The flags of the script about to run or running (allow-oom decides its first write).
  uint32_t run_flags_ = 0;
  // The script's own client and what redis.call reuses between calls.
  ClientSession script_session_;
  std::vector<std::string_view> call_args_;
  // Functions: a Lua state of their own, the libraries and their functions.
  lua_State* functions_lua_ = nullptr;
  std::map<std::string, Library> libraries_;
  FunctionMap functions_;
  // What the library being loaded registered so far (FUNCTION LOAD).
  std::vector<Function>* loading_ = nullptr;
  int64_t load_start_us_ = 0;
  std::string call_output_;
  ReplyParser call_parser_;
  // Script runs since the last collector step (see run_function).
  static constexpr int kGcPeriod = 50;
  int runs_since_gc_ = 0;
};

}  // namespace keywarden
