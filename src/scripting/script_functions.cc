// Redis 7 functions (FUNCTION LOAD/LIST/DELETE/FLUSH/STATS/KILL, FCALL, FCALL_RO) on the
// ScriptEngine's second Lua state. A library is code that, when loaded, calls
// redis.register_function for each function it offers; loading sees only a small API (the
// load-time globals), calling sees the full sandbox. Functions receive their keys and
// arguments as two table parameters rather than KEYS/ARGV globals.
#include <algorithm>
#include <ctime>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

#include "commands/arg_parser.h"
#include "commands/context.h"
#include "commands/errors.h"
#include "common/glob.h"
#include "common/number.h"
#include "scripting/lua_sandbox.h"
#include "resp/split_arguments.h"
#include "scripting/script_engine.h"

namespace keywarden {
namespace {

constexpr const char* kLoadApiKey = "__keywarden_load_api";
constexpr const char* kErrorHandler = "__redis__err__handler";
constexpr int64_t kLoadTimeoutUs = 500'000;
constexpr std::string_view kBadName =
    "Library names can only contain letters, numbers, or underscores(_) and must be at least "
    "one character long";

bool valid_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
  });
}

// The library name from the `#!lua name=<name>` first line; false with `error` set.
bool parse_library_metadata(std::string_view code, std::string* name, size_t* shebang_length,
                            std::string* error) {
  if (!code.starts_with("#!")) {
    *error = "ERR Missing library metadata";
    return false;
  }
  size_t end = code.find('\n');
  std::vector<std::string> parts;
  if (end == std::string_view::npos || !split_arguments(code.substr(0, end), parts) ||
      parts.empty()) {
    *error = "ERR Invalid library metadata";
    return false;
  }
  bool named = false;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (!parts[i].starts_with("name=")) {
      *error = "ERR Invalid metadata value given: " + parts[i];
      return false;
    }
    if (named) {
      *error = "ERR Invalid metadata value, name argument was given multiple times";
      return false;
    }
    named = true;
    *name = parts[i].substr(5);
  }
  if (!named) {
    *error = "ERR Library name was not given";
    return false;
  }
  std::string_view engine = std::string_view(parts[0]).substr(2);
  if (!equals_ignore_case(engine, "lua")) {
    *error = "ERR Engine '" + std::string(engine) + "' not found";
    return false;
  }
  if (!valid_name(*name)) {
    *error = "ERR " + std::string(kBadName);
    return false;
  }
  *shebang_length = end;
  return true;
}

// The hook while a library loads: loading may not take longer than half a second.
void load_hook(lua_State* lua, lua_Debug*);

}  // namespace

void ScriptEngine::push_load_api(lua_State* lua) {
  // The table a loading library sees as its globals: `redis` with register_function, log and
  // the version and log-level constants, taken from the full `redis` table on the stack.
  const int full = lua_gettop(lua);
  lua_newtable(lua);  // load-time globals
  lua_newtable(lua);  // its `redis`
  lua_pushlightuserdata(lua, this);
  lua_pushcclosure(lua, &ScriptEngine::lua_register_function, 1);
  lua_setfield(lua, -2, "register_function");
  for (const char* name : {"log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING",
                           "REDIS_VERSION", "REDIS_VERSION_NUM"}) {
    lua_getfield(lua, full, name);
    lua_setfield(lua, -2, name);
  }
  make_read_only(lua, true);
  lua_setfield(lua, -2, "redis");
  lua_setfield(lua, LUA_REGISTRYINDEX, kLoadApiKey);
}

void ScriptEngine::close_functions() {
  if (functions_lua_ != nullptr) lua_close(functions_lua_);
  functions_lua_ = nullptr;
  libraries_.clear();
  functions_.clear();
}

void ScriptEngine::function_flush() {
  close_functions();
  functions_lua_ = create_state(true);
}

size_t ScriptEngine::functions_bytes() const {
  size_t bytes = 0;
  for (const auto& [name, library] : libraries_) bytes += name.size() + library.code.size();
  for (const auto& [name, function] : functions_) bytes += name.size() + sizeof(Function);
  return bytes;
}

int ScriptEngine::lua_register_function(lua_State* lua) {
  std::string_view error = self(lua).register_function(lua);
  if (!error.empty()) return raise_error(lua, error);
  return 0;
}

std::string_view ScriptEngine::register_function(lua_State* lua) {
  if (loading_ == nullptr) {
    return "redis.register_function can only be called on FUNCTION LOAD command";
  }
  const int argc = lua_gettop(lua);
  int name_index = 0;
  int callback_index = 0;
  int description_index = 0;
  uint32_t flags = 0;
  if (argc == 1) {
    if (!lua_istable(lua, 1)) {
      return "calling redis.register_function with a single argument is only applicable to Lua "
             "table (representing named arguments).";
    }
    // Named arguments: each value is copied to the stack so that it has an index of its own.
    for (lua_pushnil(lua); lua_next(lua, 1) != 0;) {
      const char* key = lua_type(lua, -2) == LUA_TSTRING ? lua_tostring(lua, -2) : "";
      const std::string_view field = key;
      if (field == "function_name") {
        if (lua_type(lua, -1) != LUA_TSTRING) {
          return "function_name argument given to redis.register_function must be a string";
        }
        name_index = lua_gettop(lua);
      } else if (field == "callback") {
        if (!lua_isfunction(lua, -1)) {
          return "callback argument given to redis.register_function must be a function";
        }
        callback_index = lua_gettop(lua);
      } else if (field == "description") {
        if (lua_type(lua, -1) != LUA_TSTRING) {
          return "description argument given to redis.register_function must be a string";
        }
        description_index = lua_gettop(lua);
      } else if (field == "flags") {
        if (!lua_istable(lua, -1)) {
          return "flags argument to redis.register_function must be a table representing "
                 "function flags";
        }
        for (int i = 1;; ++i) {
          lua_rawgeti(lua, -1, i);
          if (lua_isnil(lua, -1)) {
            lua_pop(lua, 1);
            break;
          }
          uint32_t flag = lua_type(lua, -1) == LUA_TSTRING
                              ? script_flag_by_name(lua_tostring(lua, -1))
                              : 0;
          lua_pop(lua, 1);
          if (flag == 0) return "unknown flag given";
          flags |= flag;
        }
      } else {
        return "unknown argument given to redis.register_function";
      }
      // Keep the value (its index is remembered) and a copy of the key for lua_next.
      lua_pushvalue(lua, -2);
    }
    if (name_index == 0) return "redis.register_function must get a function name argument";
    if (callback_index == 0) return "redis.register_function must get a callback argument";
  } else if (argc == 2) {
    if (lua_type(lua, 1) != LUA_TSTRING) {
      return "first argument to redis.register_function must be a string";
    }
    if (!lua_isfunction(lua, 2)) {
      return "second argument to redis.register_function must be a function";
    }
    name_index = 1;
    callback_index = 2;
  } else {
    return "wrong number of arguments to redis.register_function";
  }
  size_t length;
  const char* text = lua_tolstring(lua, name_index, &length);
  const std::string_view name(text, length);
  if (!valid_name(name)) return kBadName;
  for (const Function& registered : *loading_) {
    if (registered.name == name) return "Function already exists in the library";
  }
  Function function{std::string(name), {}, 0, flags, description_index != 0, {}};
  if (description_index != 0) function.description = lua_tostring(lua, description_index);
  lua_pushvalue(lua, callback_index);
  function.ref = luaL_ref(lua, LUA_REGISTRYINDEX);
  loading_->push_back(std::move(function));
  return {};
}

namespace {

void load_hook(lua_State* lua, lua_Debug*) {
  lua_getfield(lua, LUA_REGISTRYINDEX, "__keywarden_load_deadline");
  const auto deadline = static_cast<int64_t>(lua_tonumber(lua, -1));
  lua_pop(lua, 1);
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (now.tv_sec * 1'000'000 + now.tv_nsec / 1000 > deadline) {
    lua_newtable(lua);
    lua_pushliteral(lua, "ERR FUNCTION LOAD timeout");
    lua_setfield(lua, -2, "err");
    lua_error(lua);
  }
}

}  // namespace

void ScriptEngine::function_load(CommandContext& ctx, std::string_view code, bool replace) {
  std::string name;
  size_t shebang_length = 0;
  std::string error;
  if (!parse_library_metadata(code, &name, &shebang_length, &error)) {
    ctx.error(error);
    return;
  }
  if (!replace && libraries_.contains(name)) {
    ctx.error("ERR Library '" + name + "' already exists");
    return;
  }
  lua_State* lua = functions_lua_;
  std::string_view body = code.substr(shebang_length);
  if (luaL_loadbuffer(lua, body.data(), body.size(), "@user_function") != 0) {
    ctx.error("ERR Error compiling function: " + std::string(lua_tostring(lua, -1)));
    lua_pop(lua, 1);
    return;
  }
  set_script_environment(lua, -1);

  // Run the library's code with the load-time API, bounded in time.
  std::vector<Function> registered;
  loading_ = &registered;
  lua_getfield(lua, LUA_REGISTRYINDEX, kLoadApiKey);
  set_load_globals(lua, lua_gettop(lua));
  lua_pop(lua, 1);
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  lua_pushnumber(lua, static_cast<lua_Number>(now.tv_sec * 1'000'000 + now.tv_nsec / 1000 +
                                              kLoadTimeoutUs));
  lua_setfield(lua, LUA_REGISTRYINDEX, "__keywarden_load_deadline");
  lua_sethook(lua, load_hook, LUA_MASKCOUNT, 100000);
  lua_getglobal(lua, kErrorHandler);
  lua_insert(lua, -2);
  const int status = ::lua_pcall(lua, 0, 0, -2);
  lua_sethook(lua, nullptr, 0, 0);
  set_load_globals(lua, 0);
  loading_ = nullptr;

  auto release = [&] {
    for (const Function& function : registered) luaL_unref(lua, LUA_REGISTRYINDEX, function.ref);
  };
  if (status != 0) {
    std::string message = "unknown error";
    if (lua_istable(lua, -1)) {
      lua_getfield(lua, -1, "err");
      if (lua_isstring(lua, -1)) message = lua_tostring(lua, -1);
      lua_pop(lua, 1);
    } else if (lua_isstring(lua, -1)) {
      message = lua_tostring(lua, -1);
    }
    lua_pop(lua, 2);  // the error and the handler
    release();
    ctx.error("ERR Error registering functions: " + message);
    return;
  }
  lua_pop(lua, 1);  // the handler
  if (registered.empty()) {
    ctx.error("ERR No functions registered");
    return;
  }
  for (const Function& function : registered) {
    auto found = functions_.find(function.name);
    if (found != functions_.end() && found->second.library != name) {
      release();
      ctx.error("ERR Function " + function.name + " already exists");
      return;
    }
  }
  // REPLACE: the old library's functions go; the new ones take their place.
  if (auto old = libraries_.find(name); old != libraries_.end()) {
    for (const std::string& function : old->second.functions) {
      auto found = functions_.find(function);
      luaL_unref(lua, LUA_REGISTRYINDEX, found->second.ref);
      functions_.erase(found);
    }
    libraries_.erase(old);
  }
  Library& library = libraries_[name];
  library.name = name;
  library.code.assign(code);
  for (Function& function : registered) {
    function.library = name;
    library.functions.push_back(function.name);
    std::string key = function.name;
    functions_.emplace(std::move(key), std::move(function));
  }
  ctx.reply.bulk(name);
}

void ScriptEngine::fcall(CommandContext& ctx, bool read_only) {
  auto found = functions_.find(std::string(ctx.args[1]));
  if (found == functions_.end()) {
    ctx.error("ERR Function not found");
    return;
  }
  int64_t key_count;
  if (!parse_int64(ctx.args[2], &key_count)) {
    ctx.error("ERR Bad number of keys provided");
    return;
  }
  if (key_count > static_cast<int64_t>(ctx.args.size()) - 3) {
    ctx.error("ERR Number of keys can't be greater than number of args");
    return;
  }
  if (key_count < 0) {
    ctx.error("ERR Number of keys can't be negative");
    return;
  }
  const Function& function = found->second;
  const bool no_writes = (function.flags & kScriptNoWrites) != 0;
  if (read_only && !no_writes) {
    ctx.error("ERR Can not execute a script with write flag using *_ro command.");
    return;
  }
  lua_State* lua = functions_lua_;
  lua_rawgeti(lua, LUA_REGISTRYINDEX, function.ref);
  const auto keys = ctx.args.subspan(3, static_cast<size_t>(key_count));
  const auto arguments = ctx.args.subspan(3 + static_cast<size_t>(key_count));
  for (auto values : {keys, arguments}) {
    lua_createtable(lua, static_cast<int>(values.size()), 0);
    for (size_t i = 0; i < values.size(); ++i) {
      lua_pushlstring(lua, values[i].data(), values[i].size());
      lua_rawseti(lua, -2, static_cast<int>(i + 1));
    }
  }
  run_function(ctx, lua, function.name, read_only || no_writes, true, 2);
}

void ScriptEngine::function_list(CommandContext& ctx) {
  bool with_code = false;
  bool has_pattern = false;
  std::string_view pattern;
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    std::string_view arg = ctx.args[i];
    if (equals_ignore_case(arg, "withcode") && !with_code) {
      with_code = true;
    } else if (equals_ignore_case(arg, "libraryname") && !has_pattern) {
      if (i + 1 >= ctx.args.size()) {
        ctx.error("ERR library name argument was not given");
        return;
      }
      has_pattern = true;
      pattern = ctx.args[++i];
    } else {
      ctx.error("ERR Unknown argument " + std::string(arg));
      return;
    }
  }
  std::vector<const Library*> listed;
  for (const auto& [name, library] : libraries_) {
    if (has_pattern && !glob_match(pattern, name)) continue;
    listed.push_back(&library);
  }
  ReplyWriter& reply = ctx.reply;
  reply.array_header(listed.size());
  for (const Library* library : listed) {
    reply.map_header(with_code ? 4 : 3);
    reply.bulk("library_name");
    reply.bulk(library->name);
    reply.bulk("engine");
    reply.bulk("LUA");
    reply.bulk("functions");
    reply.array_header(library->functions.size());
    for (const std::string& name : library->functions) {
      const Function& function = functions_.at(name);
      reply.map_header(3);
      reply.bulk("name");
      reply.bulk(function.name);
      reply.bulk("description");
      if (function.has_description) {
        reply.bulk(function.description);
      } else {
        reply.null();
      }
      reply.bulk("flags");
      std::vector<std::string_view> flags;
      for (std::string_view flag_name :
           {"no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys"}) {
        if (function.flags & script_flag_by_name(flag_name)) flags.push_back(flag_name);
      }
      reply.set_header(flags.size());
      for (std::string_view flag : flags) reply.simple_string(flag);
    }
    if (with_code) {
      reply.bulk("library_code");
      reply.bulk(library->code);
    }
  }
}

void ScriptEngine::function_delete(CommandContext& ctx, std::string_view name) {
  auto found = libraries_.find(std::string(name));
  if (found == libraries_.end()) {
    ctx.error("ERR Library not found");
    return;
  }
  for (const std::string& function : found->second.functions) {
    auto entry = functions_.find(function);
    luaL_unref(functions_lua_, LUA_REGISTRYINDEX, entry->second.ref);
    functions_.erase(entry);
  }
  libraries_.erase(found);
  ctx.reply.simple_string("OK");
}

void ScriptEngine::function_stats(CommandContext& ctx) {
  ReplyWriter& reply = ctx.reply;
  reply.map_header(2);
  reply.bulk("running_script");
  if (run_ != nullptr && run_->is_function) {
    reply.map_header(3);
    reply.bulk("name");
    reply.bulk(run_->name);
    reply.bulk("command");
    reply.array_header(run_->ctx->args.size());
    for (std::string_view arg : run_->ctx->args) reply.bulk(arg);
    reply.bulk("duration_ms");
    reply.integer((server_.clock().monotonic_us() - run_->start_us) / 1000);
  } else {
    reply.null();
  }
  reply.bulk("engines");
  reply.map_header(1);
  reply.bulk("LUA");
  reply.map_header(2);
  reply.bulk("libraries_count");
  reply.integer(static_cast<int64_t>(libraries_.size()));
  reply.bulk("functions_count");
  reply.integer(static_cast<int64_t>(functions_.size()));
}

}  // namespace keywarden
