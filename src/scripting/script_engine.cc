#include "scripting/script_engine.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
}

#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "commands/config_registry.h"
#include "commands/context.h"
#include "commands/dispatcher.h"
#include "commands/errors.h"
#include "common/log.h"
#include "common/number.h"
#include "common/sha1.h"
#include "common/version.h"
#include "scripting/eval_commands.h"
#include "scripting/lua_sandbox.h"

namespace keywarden {
namespace {

constexpr const char* kEngineKey = "__keywarden_engine";
constexpr const char* kErrorHandler = "__redis__err__handler";
// Marks an error table whose error was already counted in errorstats.
constexpr const char* kIgnoreErrorStats = "ignore_error_stats_update";
constexpr std::string_view kBusyEval =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
constexpr std::string_view kBusyFunction =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
// Instructions between two hook calls: about a millisecond of Lua.
constexpr int kHookInstructions = 100000;

// redis.set_repl flags.
constexpr int kReplNone = 0;
constexpr int kReplAof = 1;
constexpr int kReplReplica = 2;
constexpr int kReplAll = kReplAof | kReplReplica;

// redis.log levels, as Redis numbers them.
constexpr int kLogDebug = 0;
constexpr int kLogVerbose = 1;
constexpr int kLogNotice = 2;
constexpr int kLogWarning = 3;

void log_script_message(int level, std::string_view message) {
  log_message(static_cast<LogLevel>(level), message);
}

// Redis converts a Lua number to an integer reply with a C cast; out-of-range values and NaN
// come out as INT64_MIN on x86, which clients observe.
int64_t lua_number_to_integer(lua_Number number) {
  if (!(number >= -9223372036854775808.0 && number < 9223372036854775808.0)) return INT64_MIN;
  return static_cast<int64_t>(number);
}

// The same for the arguments Redis reads with an (int) cast (redis.log's level,
// redis.setresp, redis.set_repl): out of int's range or NaN gives INT_MIN, as on x86-64, so
// such a script gets Redis's error rather than undefined behaviour.
int lua_number_to_int(lua_Number number) {
  constexpr double kBelow = static_cast<double>(INT_MIN) - 1.0;
  constexpr double kAbove = static_cast<double>(INT_MAX) + 1.0;
  if (!(number > kBelow && number < kAbove)) return INT_MIN;
  return static_cast<int>(number);
}

std::string lowercase(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

// Replaces CR and LF with spaces: status and error lines cannot carry them.
std::string single_line(std::string_view text) {
  std::string line(text);
  for (char& c : line) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return line;
}

}  // namespace

ScriptEngine::ScriptEngine(ServerState& server) : server_(server) {
  server_.services().provide<ScriptEngine>(this);
  server_.services().provide<FunctionStore>(this);
  script_session_.authenticated = true;
  script_session_.script_client = true;
  open_state();
  server_.eviction().set_script_oom_rule(
      [this](const Command& command, std::span<const std::string_view> args) {
        return script_denies_oom(command, args);
      });
  server_.set_command_flags_rule(
      [this](const Command& command, std::span<const std::string_view> args) {
        return script_command_flags(command, args);
      });
}

std::optional<uint32_t> ScriptEngine::declared_script_flags(
    const Command& command, std::span<const std::string_view> args) {
  if (command.parent != nullptr || args.size() < 2) return std::nullopt;
  const std::string_view name = command.spec->name;
  if (name == "fcall" || name == "fcall_ro") {
    auto found = functions_.find(std::string(args[1]));
    if (found == functions_.end()) return std::nullopt;
    return found->second.flags;
  }
  if (name == "eval" || name == "eval_ro" || name == "evalsha" || name == "evalsha_ro") {
    const bool by_sha = name.starts_with("evalsha");
    auto found = scripts_.find(by_sha ? lowercase(args[1]) : sha1_hex(args[1]));
    if (found != scripts_.end()) return found->second.flags;
    // Not compiled yet: the shebang alone says, as Redis reads it before running.
    ScriptShebang shebang;
    std::string error;
    if (by_sha || !parse_script_shebang(args[1], &shebang, &error)) return std::nullopt;
    return shebang.flags;
  }
  return std::nullopt;
}

uint32_t ScriptEngine::script_command_flags(const Command& command,
                                            std::span<const std::string_view> args) {
  uint32_t flags = command.spec->flags;
  const std::optional<uint32_t> declared = declared_script_flags(command, args);
  if (!declared || (*declared & kScriptEvalCompatMode) != 0) return flags;
  // A script that declares flags is judged by them alone: it may replicate only what it
  // writes, so may-replicate goes, and write, denyoom and stale follow the declaration.
  flags &= ~(kStale | kDenyOom | kWrite | kMayReplicate);
  if ((*declared & (kScriptAllowOom | kScriptNoWrites)) == 0) flags |= kDenyOom;
  if ((*declared & kScriptNoWrites) == 0) flags |= kWrite;
  if ((*declared & kScriptAllowStale) != 0) flags |= kStale;
  return flags;
}

int ScriptEngine::script_denies_oom(const Command& command,
                                    std::span<const std::string_view> args) {
  const std::optional<uint32_t> declared = declared_script_flags(command, args);
  if (!declared) return -1;
  const uint32_t flags = *declared;
  if (flags & kScriptEvalCompatMode) return -1;
  // no-writes implies allow-oom.
  return (flags & (kScriptAllowOom | kScriptNoWrites)) == 0 ? 1 : 0;
}

bool ScriptEngine::oom_allows_start(CommandContext& ctx, uint32_t flags) {
  run_flags_ = flags;
  if ((flags & (kScriptEvalCompatMode | kScriptAllowOom | kScriptNoWrites)) != 0) return true;
  const Evictor& evictor = server_.eviction();
  if (!evictor.enabled() || !evictor.script_oom()) return true;
  ctx.error(
      "OOM allow-oom flag is not set on the script, can not run it when used memory > "
      "'maxmemory'");
  return false;
}

ScriptEngine::~ScriptEngine() {
  server_.set_command_flags_rule(nullptr);
  close_state();
  if (server_.services().find<ScriptEngine>() == this) {
    server_.services().provide<ScriptEngine>(nullptr);
    server_.services().provide<FunctionStore>(nullptr);
  }
}

void ScriptEngine::install(ServiceSetup& setup) {
  register_eval_commands(setup.commands);
  setup.config.add_integer("busy-reply-threshold", &busy_reply_threshold_ms, 0, INT64_MAX);
  setup.config.add_alias("busy-reply-threshold", "lua-time-limit");
}

ScriptEngine& ScriptEngine::self(lua_State* lua) {
  return *static_cast<ScriptEngine*>(lua_touserdata(lua, lua_upvalueindex(1)));
}

void ScriptEngine::open_state() {
  lua_ = create_state(false);
  functions_lua_ = create_state(true);
}

lua_State* ScriptEngine::create_state(bool for_functions) {
  lua_State* lua_ = luaL_newstate();
  lua_pushlightuserdata(lua_, this);
  lua_setfield(lua_, LUA_REGISTRYINDEX, kEngineKey);
  open_sandboxed_libraries(lua_);

  // The `redis` table; each function finds the engine in its first upvalue.
  lua_newtable(lua_);
  const struct {
    const char* name;
    lua_CFunction function;
  } functions[] = {
      {"call", &ScriptEngine::lua_redis_call},
      {"pcall", &ScriptEngine::lua_redis_pcall},
      {"sha1hex", &ScriptEngine::lua_sha1hex},
      {"error_reply", &ScriptEngine::lua_error_reply},
      {"status_reply", &ScriptEngine::lua_status_reply},
      {"log", &ScriptEngine::lua_log},
      {"setresp", &ScriptEngine::lua_setresp},
      {"set_repl", &ScriptEngine::lua_set_repl},
      {"replicate_commands", &ScriptEngine::lua_replicate_commands},
      {"breakpoint", &ScriptEngine::lua_noop},
      {"debug", &ScriptEngine::lua_noop},
      {"acl_check_cmd", &ScriptEngine::lua_acl_check_cmd},
  };
  for (const auto& entry : functions) {
    lua_pushlightuserdata(lua_, this);
    lua_pushcclosure(lua_, entry.function, 1);
    lua_setfield(lua_, -2, entry.name);
  }
  const struct {
    const char* name;
    int value;
  } constants[] = {
      {"REPL_NONE", kReplNone},       {"REPL_AOF", kReplAof},
      {"REPL_SLAVE", kReplReplica},   {"REPL_REPLICA", kReplReplica},
      {"REPL_ALL", kReplAll},         {"LOG_DEBUG", kLogDebug},
      {"LOG_VERBOSE", kLogVerbose},   {"LOG_NOTICE", kLogNotice},
      {"LOG_WARNING", kLogWarning},   {"REDIS_VERSION_NUM", kRedisCompatibleVersionNumber},
  };
  for (const auto& constant : constants) {
    lua_pushinteger(lua_, constant.value);
    lua_setfield(lua_, -2, constant.name);
  }
  lua_pushlstring(lua_, kRedisCompatibleVersion.data(), kRedisCompatibleVersion.size());
  lua_setfield(lua_, -2, "REDIS_VERSION");
  if (for_functions) push_load_api(lua_);
  lua_setglobal(lua_, "redis");

  install_error_handler(lua_, kErrorHandler);
  protect_globals(lua_);
  return lua_;
}

void ScriptEngine::close_state() {
  if (lua_ != nullptr) lua_close(lua_);
  lua_ = nullptr;
  close_functions();
  scripts_.clear();
  cache_bytes_ = 0;
}

void ScriptEngine::flush() {
  if (lua_ != nullptr) lua_close(lua_);
  lua_ = create_state(false);
  scripts_.clear();
  cache_bytes_ = 0;
}

size_t ScriptEngine::lua_memory_bytes(lua_State* lua) {
  return static_cast<size_t>(lua_gc(lua, LUA_GCCOUNT, 0)) * 1024 +
         static_cast<size_t>(lua_gc(lua, LUA_GCCOUNTB, 0));
}

const ClientSession* ScriptEngine::running_caller() const {
  return run_ == nullptr ? nullptr : &run_->ctx->session;
}

const ScriptEngine::CachedScript* ScriptEngine::compile(std::string_view sha,
                                                        std::string_view body,
                                                        std::string* error) {
  auto found = scripts_.find(std::string(sha));
  if (found != scripts_.end()) return &found->second;
  ScriptShebang shebang;
  std::string shebang_error;
  if (!parse_script_shebang(body, &shebang, &shebang_error)) {
    *error = "ERR " + shebang_error;
    return nullptr;
  }
  // The shebang line is left out but its newline kept, so that line numbers stay true.
  std::string_view code = body.substr(shebang.length);
  if (luaL_loadbuffer(lua_, code.data(), code.size(), "@user_script") != 0) {
    size_t length;
    const char* message = lua_tolstring(lua_, -1, &length);
    *error = "ERR Error compiling script (new function): ";
    error->append(message, length);
    lua_pop(lua_, 1);
    return nullptr;
  }
  set_script_environment(lua_, -1);
  int ref = luaL_ref(lua_, LUA_REGISTRYINDEX);
  cache_bytes_ += body.size() + sha.size();
  auto [at, inserted] =
      scripts_.emplace(std::string(sha), CachedScript{std::string(body), ref, shebang.flags});
  return &at->second;
}

void ScriptEngine::script_load(CommandContext& ctx, std::string_view body) {
  std::string sha = sha1_hex(body);
  std::string error;
  if (compile(sha, body, &error) == nullptr) {
    ctx.error(error);
    return;
  }
  ctx.reply.bulk(sha);
}

bool ScriptEngine::script_exists(std::string_view sha) const {
  if (sha.size() != 40) return false;
  return scripts_.contains(lowercase(sha));
}

void ScriptEngine::script_kill(CommandContext& ctx, bool function_kill) {
  if (run_ == nullptr) {
    ctx.error("NOTBUSY No scripts in execution right now.");
    return;
  }
  if (run_->wrote) {
    ctx.error(
        "UNKILLABLE Sorry the script already executed write commands against the dataset. You "
        "can either wait the script termination or kill the server in a hard way using the "
        "SHUTDOWN NOSAVE command.");
    return;
  }
  // SCRIPT KILL stops EVAL scripts, FUNCTION KILL functions.
  if (function_kill != run_->is_function) {
    ctx.error(function_kill ? kBusyEval : kBusyFunction);
    return;
  }
  run_->kill_requested = true;
  ctx.reply.simple_string("OK");
}

bool ScriptEngine::parse_key_count(CommandContext& ctx, std::string_view not_integer,
                                   size_t* count) {
  int64_t value;
  if (!parse_int64(ctx.args[2], &value)) {
    ctx.error(not_integer);
    return false;
  }
  if (value > static_cast<int64_t>(ctx.args.size()) - 3) {
    ctx.error("ERR Number of keys can't be greater than number of args");
    return false;
  }
  if (value < 0) {
    ctx.error("ERR Number of keys can't be negative");
    return false;
  }
  *count = static_cast<size_t>(value);
  return true;
}

void ScriptEngine::eval(CommandContext& ctx, bool by_sha, bool read_only) {
  if (monitor_feed_) monitor_feed_(ctx.session, ctx.args);
  std::string_view source = ctx.args[1];
  if (by_sha && source.size() != 40) {
    ctx.error(errors::kNoScript);
    return;
  }
  size_t key_count;
  if (!parse_key_count(ctx, errors::kNotInteger, &key_count)) return;
  // EVALSHA accepts the digits in either case.
  const std::string sha = by_sha ? lowercase(source) : sha1_hex(source);
  const CachedScript* script;
  if (by_sha) {
    auto found = scripts_.find(sha);
    if (found == scripts_.end()) {
      ctx.error(errors::kNoScript);
      return;
    }
    script = &found->second;
  } else {
    std::string error;
    script = compile(sha, source, &error);
    if (script == nullptr) {
      ctx.error(error);
      return;
    }
  }
  if (!oom_allows_start(ctx, script->flags)) return;
  if (read_only && (script->flags & kScriptEvalCompatMode) == 0 &&
      (script->flags & kScriptNoWrites) == 0) {
    ctx.error("ERR Can not execute a script with write flag using *_ro command.");
    return;
  }
  run_script(ctx, *script, sha, key_count,
             read_only || (script->flags & kScriptNoWrites) != 0);
}

void ScriptEngine::run_script(CommandContext& ctx, const CachedScript& script,
                              std::string_view sha, size_t key_count, bool read_only) {
  // KEYS and ARGV, fresh for every run, in the real globals table.
  const bool set = run_protected(lua_, 0, 0, [&](lua_State* lua) {
    set_global_array(lua, "KEYS", ctx.args.subspan(3, key_count));
    set_global_array(lua, "ARGV", ctx.args.subspan(3 + key_count));
  });
  if (!set) {
    ctx.error(kOutOfMemoryReply);
    return;
  }
  lua_rawgeti(lua_, LUA_REGISTRYINDEX, script.function_ref);
  run_function(ctx, lua_, sha, read_only, false, 0);
}

void ScriptEngine::run_function(CommandContext& ctx, lua_State* lua, std::string_view name,
                                bool read_only, bool is_function, int argc) {
  Run run{&ctx, name, read_only, is_function, server_.clock().monotonic_us()};
  run_ = &run;
  script_session_.db = ctx.session.db;
  script_session_.resp = 2;
  // redis.call runs with the caller's permissions (none restrict the server's own callers).
  script_session_.user = ctx.session.user;
  lua_sethook(lua, &ScriptEngine::lua_hook, LUA_MASKCOUNT, kHookInstructions);

  // The function and its arguments are on the stack; the error handler goes below them.
  lua_getglobal(lua, kErrorHandler);
  lua_insert(lua, -(argc + 2));
  const int handler_index = lua_gettop(lua) - argc - 1;
  const int status = lua_pcall(lua, argc, 1, handler_index);

  lua_sethook(lua, nullptr, 0, 0);
  run_ = nullptr;
  script_session_.user = nullptr;
  server_.set_busy_reply({});
  if (run.kill_requested) {
    // Whatever the script's pcalls and error handler made of it, a killed script ends with
    // the kill's error at the place it was stopped.
    ctx.error("ERR Script killed by user with SCRIPT KILL... script: " + std::string(name) +
              ", on " + run.killed_at + ".");
  } else if (status != 0) {
    reply_script_error(lua, ctx, name);
  } else {
    // Only raw reads convert the reply, so no script code runs here; the protection is for
    // what remains (memory), and a reply cut short is taken back whole.
    std::string* out = ctx.reply.output();
    const size_t before = out->size();
    lua_pushvalue(lua, -1);
    const bool written = run_protected(lua, 1, 0, [&](lua_State* state) {
      // The value sits above one other slot, as in Redis (its error handler): the nesting at
      // which "reached lua stack limit" cuts a reply counts stack slots, and so matches.
      lua_pushnil(state);
      lua_insert(state, 1);
      write_reply(state, ctx);
    });
    if (!written) {
      out->resize(before);
      ctx.error(kOutOfMemoryReply);
    }
  }
  lua_settop(lua, handler_index - 1);
  // The collector runs on after every script, whatever the script did to it
  // (collectgarbage('stop') would otherwise hold every later script's garbage), and, as Redis
  // does, it gets a step of its own every kGcPeriod runs so that garbage does not pile up
  // between Lua's own cycles.
  lua_gc(lua, LUA_GCRESTART, 0);
  if (++runs_since_gc_ >= kGcPeriod) {
    runs_since_gc_ = 0;
    lua_gc(lua, LUA_GCSTEP, kGcPeriod);
  }
  // A script's writes reach the AOF and replicas as one transaction (inside EXEC, the EXEC's).
  if (!ctx.session.transaction.in_multi()) server_.propagator().wrap_pending_in_transaction();
}

void ScriptEngine::reply_script_error(lua_State* lua, CommandContext& ctx, std::string_view name) {
  // The error handler turned every error into {err=…, source=…, line=…}; an error raised
  // inside the handler itself (out of memory) may still be a bare value.
  std::string text;
  if (lua_istable(lua, -1)) {
    push_raw_field(lua, -1, "err");
    push_raw_field(lua, -2, "source");
    push_raw_field(lua, -3, "line");
    size_t length = 0;
    const char* message = lua_tolstring(lua, -3, &length);
    text.assign(message != nullptr ? message : "ERR unknown error", message != nullptr ? length : 17);
    text += " script: ";
    text += name;
    if (lua_isstring(lua, -2) && lua_isstring(lua, -1)) {
      text += ", on ";
      text += lua_tostring(lua, -2);
      text += ':';
      text += lua_tostring(lua, -1);
      text += '.';
    }
    lua_pop(lua, 3);
    reply_error(lua, ctx, single_line(text));
    return;
  }
  const char* message = lua_tostring(lua, -1);
  text = "ERR Error running script: ";
  text += message != nullptr ? message : "(unknown)";
  ctx.error(single_line(text));
}

void ScriptEngine::reply_error(lua_State* lua, CommandContext& ctx, std::string_view text) {
  // An error a command replied was counted (errorstats) when the command ran; passing it on
  // fails the script's command without counting it again, as Redis does.
  push_raw_field(lua, -1, kIgnoreErrorStats);
  const bool counted = lua_toboolean(lua, -1) != 0;
  lua_pop(lua, 1);
  if (counted) {
    ctx.error_counted_elsewhere(text);
  } else {
    ctx.error(text);
  }
}

// ---- the C functions of the `redis` table ----

int ScriptEngine::lua_redis_call(lua_State* lua) {
  if (!self(lua).call_command(lua)) return lua_error(lua);
  return 1;
}

int ScriptEngine::lua_redis_pcall(lua_State* lua) {
  self(lua).call_command(lua);
  return 1;
}

std::string_view ScriptEngine::refuse_reason(const Command* command, size_t argc) {
  if (command == nullptr) return "Unknown Redis command called from script";
  const int arity = command->spec->arity;
  const int count = static_cast<int>(argc);
  if ((arity > 0 && arity != count) || count < -arity) {
    return "Wrong number of args calling Redis command from script";
  }
  if (command->has(kNoScript) && !server_.settings().script_disable_deny_script) return "This Redis command is not allowed from script";
  // ACL, with the caller's user, logged with the caller's client (Redis's scriptVerifyACL).
  if (script_session_.user != nullptr && !script_session_.user->unrestricted()) {
    AclStore& acl = server_.acl();
    const AclVerdict verdict = acl.check(*script_session_.user, *command, call_args_);
    if (!verdict.allowed()) {
      const std::string_view object =
          verdict.denial == AclDenial::kCommand
              ? std::string_view(command->full_name)
              : call_args_[static_cast<size_t>(verdict.position)];
      acl.log(run_->ctx->session, &run_->ctx->command, verdict.denial, "lua", object,
              script_session_.user->name, run_->ctx->now_ms);
      if (verdict.denial == AclDenial::kKey) return errors::kScriptNoPermKeys;
      if (verdict.denial == AclDenial::kChannel) return errors::kScriptNoPermChannels;
      return errors::kScriptNoPermCommand;
    }
  }
  // May-replicate commands (PUBLISH…) count as writes here, as in Redis 7.0: a read-only
  // script is one CLIENT PAUSE WRITE lets run, so it must not replicate anything.
  if ((command->has(kWrite) || command->has(kMayReplicate)) && run_->read_only) {
    return "Write commands are not allowed from read-only scripts.";
  }
  return {};
}

bool ScriptEngine::call_command(lua_State* lua) {
  const int argc = lua_gettop(lua);
  if (run_ == nullptr) {
    push_error_table(lua, "redis.call/pcall can only be called inside a script invocation");
    return false;
  }
  if (argc == 0) {
    push_error_table(lua, "Please specify at least one argument for this redis lib call");
    return false;
  }
  call_args_.clear();
  for (int i = 1; i <= argc; ++i) {
    const int type = lua_type(lua, i);
    if (type == LUA_TNUMBER) {
      // Numbers become text as Redis prints them ("%.17g"), not as Lua's tostring does. An
      // integral value below 1e15 prints as its digits either way, without printf's cost.
      const lua_Number number = lua_tonumber(lua, i);
      char text[64];
      size_t length;
      if (number == std::floor(number) && std::fabs(number) < 1e15 &&
          !(number == 0 && std::signbit(number))) {
        length = static_cast<size_t>(
            std::to_chars(text, text + sizeof(text), static_cast<int64_t>(number)).ptr - text);
      } else {
        length = static_cast<size_t>(std::snprintf(text, sizeof(text), "%.17g", number));
      }
      lua_pushlstring(lua, text, length);
      lua_replace(lua, i);
    } else if (type != LUA_TSTRING) {
      push_error_table(lua, "Lua redis lib command arguments must be strings or integers");
      return false;
    }
    size_t length;
    const char* bytes = lua_tolstring(lua, i, &length);
    call_args_.emplace_back(bytes, length);
  }
  Command* command = server_.commands().find_for_args(call_args_);
  std::string_view refused = refuse_reason(command, call_args_.size());
  if (!refused.empty()) {
    // Counted now, as Redis counts a refused command, and not again when passed on.
    server_.count_error("ERR");
    push_error_table(lua, refused);
    lua_pushboolean(lua, 1);
    lua_setfield(lua, -2, kIgnoreErrorStats);
    return false;
  }
  // A failed save under stop-writes-on-bgsave-error (-MISCONF) refuses the script's first
  // write; once it has written it cannot stop half-way, as in Redis 7.0.
  if (command->has(kWrite) && !run_->wrote && !server_.write_refusal().empty()) {
    const std::string refusal(server_.write_refusal());
    server_.count_error(refusal);
    push_error_table(lua, "-" + refusal);
    lua_pushboolean(lua, 1);
    lua_setfield(lua, -2, kIgnoreErrorStats);
    return false;
  }
  // Over maxmemory when the script started, its first write that may grow memory is refused
  // (after one write it cannot stop half-way), unless the script declared allow-oom.
  const Evictor& evictor = server_.eviction();
  if (command->has(kDenyOom) && !run_->wrote && (run_flags_ & kScriptAllowOom) == 0 &&
      evictor.enabled() && evictor.script_oom()) {
    server_.count_error(errors::kOom);
    push_error_table(lua, "-" + std::string(errors::kOom));
    lua_pushboolean(lua, 1);
    lua_setfield(lua, -2, kIgnoreErrorStats);
    return false;
  }
  if (command->has(kWrite)) run_->wrote = true;

  call_output_.clear();
  ReplyWriter writer(&call_output_, script_session_.resp);
  Propagator& propagator = server_.propagator();
  const size_t effects_before = propagator.pending_count();
  Dispatcher& dispatcher = server_.services().get<Dispatcher>();
  const int64_t elapsed_us =
      dispatcher.execute_nested(script_session_, call_args_, writer, *command, run_->ctx->now_ms);
  // Slow log and MONITOR ("lua" client), after the command, as Redis's call() shows it.
  dispatcher.report_nested(script_session_, call_args_, *command, elapsed_us);
  if (run_->repl == kReplNone) propagator.drop_pending_from(effects_before);

  call_parser_.reset();
  if (call_parser_.parse(call_output_) != ReplyParseStatus::kValue) {
    push_error_table(lua, "the command's reply could not be read");
    return false;
  }
  const RespValue& value = call_parser_.value();
  if (value.is_error()) {
    push_command_error(lua, value.str);
    return false;
  }
  push_reply(lua, value);
  return true;
}

void ScriptEngine::push_error_table(lua_State* lua, std::string_view text) {
  // "-CODE message" keeps its code ("-message" without a space gets ERR); any other text is a
  // message under the generic ERR code. A trailing CRLF is not part of the message.
  std::string_view code = "ERR";
  if (text.starts_with('-')) {
    text.remove_prefix(1);
    size_t space = text.find(' ');
    if (space != std::string_view::npos) {
      code = text.substr(0, space);
      text.remove_prefix(space + 1);
    }
  }
  while (!text.empty() && (text.back() == '\r' || text.back() == '\n')) text.remove_suffix(1);
  lua_newtable(lua);
  lua_pushlstring(lua, code.data(), code.size());
  lua_pushliteral(lua, " ");
  lua_pushlstring(lua, text.data(), text.size());
  lua_concat(lua, 3);
  lua_setfield(lua, -2, "err");
}

void ScriptEngine::push_command_error(lua_State* lua, std::string_view reply_text) {
  // A command's error reply carries its code as its first word; it was counted already.
  std::string text = "-";
  text += reply_text;
  push_error_table(lua, text);
  lua_pushboolean(lua, 1);
  lua_setfield(lua, -2, kIgnoreErrorStats);
}

int ScriptEngine::raise_error(lua_State* lua, std::string_view text) {
  push_error_table(lua, text);
  return lua_error(lua);
}

void ScriptEngine::push_reply(lua_State* lua, const RespValue& value) {
  lua_checkstack(lua, 4);
  const bool resp3 = script_session_.resp == 3;
  switch (value.type) {
    case RespType::kInteger:
      lua_pushnumber(lua, static_cast<lua_Number>(value.integer));
      return;
    case RespType::kBulkString:
      lua_pushlstring(lua, value.str.data(), value.str.size());
      return;
    case RespType::kSimpleString:
      lua_newtable(lua);
      lua_pushlstring(lua, value.str.data(), value.str.size());
      lua_setfield(lua, -2, "ok");
      return;
    case RespType::kError:
    case RespType::kBlobError:
      push_command_error(lua, value.str);
      return;
    case RespType::kNull:
      if (resp3) {
        lua_pushnil(lua);
      } else {
        lua_pushboolean(lua, 0);
      }
      return;
    case RespType::kArray:
    case RespType::kPush:
      lua_createtable(lua, static_cast<int>(value.elements.size()), 0);
      for (size_t i = 0; i < value.elements.size(); ++i) {
        push_reply(lua, value.elements[i]);
        lua_rawseti(lua, -2, static_cast<int>(i + 1));
      }
      return;
    case RespType::kSet:
      // {set = {member = true, …}}
      lua_createtable(lua, 0, 1);
      lua_createtable(lua, 0, static_cast<int>(value.elements.size()));
      for (const RespValue& member : value.elements) {
        push_reply(lua, member);
        lua_pushboolean(lua, 1);
        lua_settable(lua, -3);
      }
      lua_setfield(lua, -2, "set");
      return;
    case RespType::kMap:
      // {map = {key = value, …}}
      lua_createtable(lua, 0, 1);
      lua_createtable(lua, 0, static_cast<int>(value.elements.size() / 2));
      for (size_t i = 0; i + 1 < value.elements.size(); i += 2) {
        push_reply(lua, value.elements[i]);
        push_reply(lua, value.elements[i + 1]);
        lua_settable(lua, -3);
      }
      lua_setfield(lua, -2, "map");
      return;
    case RespType::kDouble:
      lua_createtable(lua, 0, 1);
      lua_pushnumber(lua, value.dbl);
      lua_setfield(lua, -2, "double");
      return;
    case RespType::kBoolean:
      lua_pushboolean(lua, value.integer != 0);
      return;
    case RespType::kBigNumber:
      lua_createtable(lua, 0, 1);
      lua_pushlstring(lua, value.str.data(), value.str.size());
      lua_setfield(lua, -2, "big_number");
      return;
    case RespType::kVerbatim:
      lua_createtable(lua, 0, 1);
      lua_createtable(lua, 0, 2);
      lua_pushlstring(lua, value.format.data(), value.format.size());
      lua_setfield(lua, -2, "format");
      lua_pushlstring(lua, value.str.data(), value.str.size());
      lua_setfield(lua, -2, "string");
      lua_setfield(lua, -2, "verbatim_string");
      return;
  }
}

void ScriptEngine::write_reply(lua_State* lua, CommandContext& ctx) {
  ReplyWriter& reply = ctx.reply;
  if (!lua_checkstack(lua, 4)) {
    ctx.error("ERR reached lua stack limit");
    return;
  }
  switch (lua_type(lua, -1)) {
    case LUA_TSTRING: {
      size_t length;
      const char* bytes = lua_tolstring(lua, -1, &length);
      reply.bulk({bytes, length});
      return;
    }
    case LUA_TBOOLEAN:
      // Booleans follow the protocol the script chose with redis.setresp, not the caller's.
      if (script_session_.resp == 3) {
        reply.boolean(lua_toboolean(lua, -1) != 0);
      } else if (lua_toboolean(lua, -1)) {
        reply.integer(1);
      } else {
        reply.null();
      }
      return;
    case LUA_TNUMBER:
      reply.integer(lua_number_to_integer(lua_tonumber(lua, -1)));
      return;
    case LUA_TTABLE:
      write_table_reply(lua, ctx);
      return;
    default:
      reply.null();
      return;
  }
}

void ScriptEngine::write_table_reply(lua_State* lua, CommandContext& ctx) {
  ReplyWriter& reply = ctx.reply;
  // The special shapes, checked in Redis's order: err, ok, double, big_number,
  // verbatim_string, map, set; any other table is an array up to its first nil.
  push_raw_field(lua, -1, "err");
  if (lua_type(lua, -1) == LUA_TSTRING) {
    std::string text = single_line(lua_tostring(lua, -1));
    lua_pop(lua, 1);
    if (text.starts_with('-')) text.erase(0, 1);
    reply_error(lua, ctx, text);
    return;
  }
  lua_pop(lua, 1);
  push_raw_field(lua, -1, "ok");
  if (lua_type(lua, -1) == LUA_TSTRING) {
    reply.simple_string(single_line(lua_tostring(lua, -1)));
    lua_pop(lua, 1);
    return;
  }
  lua_pop(lua, 1);
  push_raw_field(lua, -1, "double");
  if (lua_type(lua, -1) == LUA_TNUMBER) {
    reply.double_value(lua_tonumber(lua, -1));
    lua_pop(lua, 1);
    return;
  }
  lua_pop(lua, 1);
  push_raw_field(lua, -1, "big_number");
  if (lua_type(lua, -1) == LUA_TSTRING) {
    reply.big_number(single_line(lua_tostring(lua, -1)));
    lua_pop(lua, 1);
    return;
  }
  lua_pop(lua, 1);
  push_raw_field(lua, -1, "verbatim_string");
  if (lua_type(lua, -1) == LUA_TTABLE) {
    push_raw_field(lua, -1, "format");
    push_raw_field(lua, -2, "string");
    if (lua_type(lua, -2) == LUA_TSTRING && lua_type(lua, -1) == LUA_TSTRING) {
      size_t format_length, length;
      const char* format = lua_tolstring(lua, -2, &format_length);
      const char* bytes = lua_tolstring(lua, -1, &length);
      reply.verbatim({bytes, length}, {format, format_length});
      lua_pop(lua, 3);
      return;
    }
    lua_pop(lua, 2);
  }
  lua_pop(lua, 1);
  push_raw_field(lua, -1, "map");
  if (lua_type(lua, -1) == LUA_TTABLE) {
    size_t pairs = 0;
    for (lua_pushnil(lua); lua_next(lua, -2) != 0; lua_pop(lua, 1)) ++pairs;
    reply.map_header(pairs);
    for (lua_pushnil(lua); lua_next(lua, -2) != 0; lua_pop(lua, 1)) {
      lua_pushvalue(lua, -2);
      write_reply(lua, ctx);  // the key
      lua_pop(lua, 1);
      write_reply(lua, ctx);  // the value
    }
    lua_pop(lua, 1);
    return;
  }
  lua_pop(lua, 1);
  push_raw_field(lua, -1, "set");
  if (lua_type(lua, -1) == LUA_TTABLE) {
    size_t members = 0;
    for (lua_pushnil(lua); lua_next(lua, -2) != 0; lua_pop(lua, 1)) ++members;
    reply.set_header(members);
    for (lua_pushnil(lua); lua_next(lua, -2) != 0; lua_pop(lua, 1)) {
      lua_pushvalue(lua, -2);
      write_reply(lua, ctx);
      lua_pop(lua, 1);
    }
    lua_pop(lua, 1);
    return;
  }
  lua_pop(lua, 1);
  // An array: elements 1, 2, … up to the first nil, counted first.
  size_t count = 0;
  for (;;) {
    lua_rawgeti(lua, -1, static_cast<int>(count + 1));
    const bool present = !lua_isnil(lua, -1);
    lua_pop(lua, 1);
    if (!present) break;
    ++count;
  }
  reply.array_header(count);
  for (size_t i = 1; i <= count; ++i) {
    lua_rawgeti(lua, -1, static_cast<int>(i));
    write_reply(lua, ctx);
    lua_pop(lua, 1);
  }
}

int ScriptEngine::lua_sha1hex(lua_State* lua) {
  if (lua_gettop(lua) != 1) return raise_error(lua, "wrong number of arguments");
  size_t length;
  const char* bytes = lua_tolstring(lua, 1, &length);
  char hex[40];  // no std::string: a Lua error may longjmp past this frame
  sha1_hex({bytes != nullptr ? bytes : "", bytes != nullptr ? length : 0}, hex);
  lua_pushlstring(lua, hex, sizeof(hex));
  return 1;
}

int ScriptEngine::lua_error_reply(lua_State* lua) {
  if (lua_gettop(lua) != 1 || lua_type(lua, -1) != LUA_TSTRING) {
    // Returned, not raised, as Redis does.
    push_error_table(lua, "wrong number or type of arguments");
    return 1;
  }
  // The text always names its code: a leading '-' is optional.
  size_t length;
  const char* text = lua_tolstring(lua, 1, &length);
  if (length > 0 && text[0] == '-') {
    push_error_table(lua, {text, length});
  } else {
    lua_pushliteral(lua, "-");
    lua_pushvalue(lua, 1);
    lua_concat(lua, 2);
    text = lua_tolstring(lua, -1, &length);
    push_error_table(lua, {text, length});
  }
  return 1;
}

int ScriptEngine::lua_status_reply(lua_State* lua) {
  if (lua_gettop(lua) != 1 || lua_type(lua, -1) != LUA_TSTRING) {
    // Returned, not raised, as Redis does.
    push_error_table(lua, "wrong number or type of arguments");
    return 1;
  }
  lua_newtable(lua);
  lua_pushvalue(lua, 1);
  lua_setfield(lua, -2, "ok");
  return 1;
}

int ScriptEngine::lua_log(lua_State* lua) {
  const int argc = lua_gettop(lua);
  if (argc < 2) return raise_error(lua, "redis.log() requires two arguments or more.");
  if (!lua_isnumber(lua, 1)) return raise_error(lua, "First argument must be a number (log level).");
  const int level = lua_number_to_int(lua_tonumber(lua, 1));
  if (level < kLogDebug || level > kLogWarning) return raise_error(lua, "Invalid debug level.");
  // The message is the remaining arguments joined by spaces, built in Lua's own buffer.
  luaL_Buffer buffer;
  luaL_buffinit(lua, &buffer);
  for (int i = 2; i <= argc; ++i) {
    size_t length;
    const char* text = lua_tolstring(lua, i, &length);
    if (text == nullptr) continue;
    if (i > 2) luaL_addchar(&buffer, ' ');
    luaL_addlstring(&buffer, text, length);
  }
  luaL_pushresult(&buffer);
  size_t length;
  const char* message = lua_tolstring(lua, -1, &length);
  log_script_message(level, {message, length});
  return 0;
}

int ScriptEngine::lua_setresp(lua_State* lua) {
  if (lua_gettop(lua) != 1) return raise_error(lua, "redis.setresp() requires one argument.");
  const int version = lua_number_to_int(lua_tonumber(lua, 1));
  if (version != 2 && version != 3) return raise_error(lua, "RESP version must be 2 or 3.");
  self(lua).script_session_.resp = version;
  return 0;
}

int ScriptEngine::lua_set_repl(lua_State* lua) {
  ScriptEngine& engine = self(lua);
  if (engine.run_ == nullptr) return raise_error(lua, "redis.set_repl can only be called inside a script invocation");
  if (lua_gettop(lua) != 1) return raise_error(lua, "redis.set_repl() requires two arguments.");
  const int flags = lua_number_to_int(lua_tonumber(lua, 1));
  if ((flags & ~kReplAll) != 0) {
    return raise_error(
        lua, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
  }
  engine.run_->repl = flags;
  return 0;
}

int ScriptEngine::lua_replicate_commands(lua_State* lua) {
  // Scripts always replicate their effects since Redis 7; kept for old scripts.
  lua_pushboolean(lua, 1);
  return 1;
}

int ScriptEngine::lua_noop(lua_State* lua) { return 0; }

int ScriptEngine::lua_acl_check_cmd(lua_State* lua) {
  // Whether the caller's user may run the command with these arguments (keys and channels
  // included), without running it. raise_error unwinds by longjmp, past C++ destructors: the
  // check runs in a scope of its own, and an error is raised only once that scope is gone.
  ScriptEngine& engine = self(lua);
  const char* error = nullptr;
  bool allowed = false;
  [&] {
    const int argc = lua_gettop(lua);
    if (argc == 0) {
      error = "Please specify at least one argument for this redis lib call";
      return;
    }
    std::vector<std::string_view> args;
    for (int i = 1; i <= argc; ++i) {
      size_t length;
      const char* bytes = lua_tolstring(lua, i, &length);
      if (bytes == nullptr) {
        error = "Lua redis lib command arguments must be strings or integers";
        return;
      }
      args.emplace_back(bytes, length);
    }
    const Command* command = engine.server_.commands().find_for_args(args);
    if (command == nullptr) {
      error = "Invalid command passed to redis.acl_check_cmd()";
      return;
    }
    const std::shared_ptr<AclUser>& user = engine.script_session_.user;
    allowed = user == nullptr || engine.server_.acl().check(*user, *command, args).allowed();
  }();
  if (error != nullptr) return raise_error(lua, error);
  lua_pushboolean(lua, allowed);
  return 1;
}

void ScriptEngine::lua_hook(lua_State* lua, lua_Debug* debug) {
  lua_getfield(lua, LUA_REGISTRYINDEX, kEngineKey);
  auto* engine = static_cast<ScriptEngine*>(lua_touserdata(lua, -1));
  lua_pop(lua, 1);
  if (engine != nullptr && engine->on_hook()) {
    engine->note_kill_position(lua, debug);
    // From now on the hook fires at every instruction of every thread it reaches, so a pcall
    // (or coroutine.resume) that catches the kill cannot keep the script running: its very
    // next instruction raises again, until nothing is left to catch it.
    lua_sethook(lua, &ScriptEngine::lua_hook, LUA_MASKCOUNT, 1);
    raise_error(lua, "Script killed by user with SCRIPT KILL...");
  }
}

void ScriptEngine::note_kill_position(lua_State* lua, lua_Debug* debug) {
  if (run_ == nullptr || !run_->killed_at.empty()) return;
  if (lua_getinfo(lua, "Sl", debug) != 0) {
    run_->killed_at = std::string(debug->source) + ":" + std::to_string(debug->currentline);
  } else {
    run_->killed_at = "?";
  }
}

bool ScriptEngine::on_hook() {
  if (run_ == nullptr) return false;
  const int64_t now_us = server_.clock().monotonic_us();
  if (!run_->busy && now_us - run_->start_us >= busy_reply_threshold_ms * 1000) {
    run_->busy = true;
    server_.set_busy_reply(run_->is_function ? kBusyFunction : kBusyEval);
    log_message(LogLevel::kWarning,
                "Slow script detected: still in execution after " +
                    std::to_string((now_us - run_->start_us) / 1000) +
                    " milliseconds. You can try killing the script using the SCRIPT KILL "
                    "command. Script name is: " +
                    std::string(run_->name) + ".");
  }
  if (run_->busy && busy_handler_) busy_handler_();
  return run_->kill_requested;
}

}  // namespace keywarden
